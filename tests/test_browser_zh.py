"""The Chinese edition in a real browser: every Chinese character on the page has a glyph (issue 28).

A missing glyph shows as a box ("tofu"), and every missing character draws the *same* box. So the page
draws each distinct Chinese character of the notebook, in the font its element uses, on a canvas and
compares the pixels with those of a character no font has (U+E000, private use): equal pixels mean a
box. The check is shown to catch boxes: the private-use characters must come out as boxes too.
The plot is a PNG: its glyphs are matplotlib's, which warns in the cell's output for each one its fonts
lack (tests/test_editions.py fails on such a warning in any Chinese notebook; checked here too).

The notebook is the committed ``notebooks/zh/04_memory.ipynb`` (markdown, tables, the memory widget's
saved table and the decay plot, drawn by matplotlib with the kit's CJK font), opened in JupyterLab as a
student opens it. Chromium finds fonts through fontconfig; a machine without a Chinese system font (this
one, CI) is given the kit's own font file (the PyPI package noto-cjk-sans-otc) through FONTCONFIG_FILE,
as a student's system font would be. A screenshot lands in tmp_path, copied to /tmp/ralph_browser_zh.png.
"""

import shutil
import time
from pathlib import Path

import pytest
from browser_helpers import LAB_SETTINGS, open_chromium, playwright_or_skip, running_lab

from ralph_mini import lang

pytestmark = pytest.mark.browser

LESSON = Path(__file__).resolve().parents[1] / "notebooks" / "zh" / "04_memory.ipynb"
SCREENSHOT_COPY = Path("/tmp/ralph_browser_zh.png")
WAIT_MS = 60_000
# Render every cell, not only those in view (JupyterLab 4 renders lazily), so every character is checked.
ALL_CELLS = ("@jupyterlab/notebook-extension/tracker.jupyterlab-settings", {"windowingMode": "none"})

GLYPHS = r"""() => {
    const panel = window.jupyterapp.shell.currentWidget.node;
    const fonts = new Map();  // each Chinese character -> the CSS font of the first element showing it
    const walker = document.createTreeWalker(panel, NodeFilter.SHOW_TEXT);
    while (walker.nextNode()) {
        const style = getComputedStyle(walker.currentNode.parentElement);
        for (const ch of walker.currentNode.textContent) {
            if (/[\u4e00-\u9fff]/.test(ch) && !fonts.has(ch)) {
                fonts.set(ch, `${style.fontStyle} ${style.fontWeight} 40px ${style.fontFamily}`);
            }
        }
    }
    const canvas = document.createElement('canvas');
    canvas.width = canvas.height = 56;
    const ctx = canvas.getContext('2d', {willReadFrequently: true});
    const pixels = (ch, font) => {
        ctx.clearRect(0, 0, 56, 56);
        ctx.font = font;
        ctx.textBaseline = 'top';
        ctx.fillText(ch, 4, 4);
        return ctx.getImageData(0, 0, 56, 56).data.join(',');
    };
    const isBox = (ch, font) => pixels(ch, font) === pixels('\uE000', font);
    const boxes = [...fonts].filter(([ch, font]) => isBox(ch, font)).map(([ch]) => ch);
    const someFont = fonts.values().next().value || '40px sans-serif';
    const images = [...panel.querySelectorAll('.jp-OutputArea-output img')];
    return {
        characters: fonts.size,
        boxes: boxes,
        control: isBox('\uE001', someFont) && isBox('\uE002', someFont),
        images: images.filter(img => img.complete && img.naturalWidth > 0).length,
    };
}"""


def fontconfig_with_kit_font(folder: Path) -> Path:
    """A fontconfig file: the system's fonts plus the folder of the kit's CJK font."""
    conf = folder / "fonts.conf"
    conf.write_text(
        '<?xml version="1.0"?><!DOCTYPE fontconfig SYSTEM "fonts.dtd"><fontconfig>'
        '<include ignore_missing="yes">/etc/fonts/fonts.conf</include>'
        f"<dir>{lang.cjk_font_path().parent}</dir><cachedir>{folder / 'fc-cache'}</cachedir></fontconfig>"
    )
    return conf


@pytest.fixture
def playwright_api():
    return playwright_or_skip()


@pytest.fixture
def lab(tmp_path):
    """JupyterLab rendering every cell (not only those in view)."""
    with running_lab(tmp_path, LAB_SETTINGS | {ALL_CELLS[0]: ALL_CELLS[1]}) as server:
        yield server


def test_the_chinese_lesson_shows_no_missing_glyph_boxes(playwright_api, lab, tmp_path):
    shutil.copyfile(LESSON, tmp_path / "root" / LESSON.name)
    base_url, token = lab
    started = time.monotonic()
    with playwright_api.sync_playwright() as pw:
        fonts = fontconfig_with_kit_font(tmp_path)
        browser = open_chromium(pw, tmp_path / "chromium-profile", env={"FONTCONFIG_FILE": str(fonts)})
        try:
            page = browser.new_page()
            page.set_default_timeout(WAIT_MS)
            page.goto(f"{base_url}/lab/tree/{LESSON.name}?token={token}")
            page.wait_for_function("() => window.jupyterapp?.shell.currentWidget?.context !== undefined")
            page.locator(".jp-OutputArea-output img").first.wait_for()
            page.wait_for_function("() => document.fonts.status === 'loaded'")
            found = page.evaluate(GLYPHS)
            page.locator(".jp-OutputArea-output img").first.scroll_into_view_if_needed()
            shot = tmp_path / "zh.png"
            page.screenshot(path=str(shot))
            shutil.copyfile(shot, SCREENSHOT_COPY)
        finally:
            browser.close()
    assert found["control"], "the check cannot tell a box from a glyph: it would prove nothing"
    assert found["characters"] >= 100, f"only {found['characters']} Chinese characters rendered"
    assert found["boxes"] == [], f"drawn as boxes: {''.join(found['boxes'])}"
    assert found["images"] >= 1, "the plot did not render"
    assert "missing from font" not in LESSON.read_text(encoding="utf-8"), "the plot lacks a glyph"
    assert time.monotonic() - started < 3 * WAIT_MS / 1000
