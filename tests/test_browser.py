"""Lesson 01 in a real JupyterLab, driven by headless Chromium: does a student see and click the stepper?

Unit tests click the buttons from Python; only a browser shows that the widget renders at all (no
"Error displaying widget"), that the front end talks to the kernel, and that Next really moves. The
notebook is the committed ``notebooks/01_bare_react.ipynb``, copied as it is: what a student opens.
Needs Debian's ``chromium`` and the ``playwright`` package (never its own browser download); the test
is skipped, saying which is missing, without them. Screenshots (as opened, step 1, step 2) land in
tmp_path; step 2 is copied to /tmp/ralph_browser.png.
"""

import re
import shutil
import time
from pathlib import Path

import pytest
from browser_helpers import open_chromium, playwright_or_skip, running_lab, saved_text

from ralph_mini.widgets import WRONG_STYLE

pytestmark = pytest.mark.browser

LESSON = Path(__file__).resolve().parents[1] / "notebooks" / "01_bare_react.ipynb"
SCREENSHOT_COPY = Path("/tmp/ralph_browser.png")
WAIT_MS = 60_000  # any single wait in the page: loading lab, starting the kernel, running cells

RUN_ALL = """async () => {
    const app = window.jupyterapp;
    const panel = app.shell.currentWidget;
    await panel.context.ready;
    await panel.sessionContext.ready;
    await app.commands.execute('notebook:run-all-cells');
    return panel.sessionContext.session.kernel.name;
}"""


@pytest.fixture
def playwright_api():
    return playwright_or_skip()


@pytest.fixture
def lab(tmp_path):
    with running_lab(tmp_path) as server:
        yield server


def test_lesson_01_stepper_renders_and_next_moves_in_jupyterlab(playwright_api, lab, tmp_path):
    shutil.copyfile(LESSON, tmp_path / "root" / LESSON.name)
    saved = saved_text(LESSON, "TraceStepper(")  # "TraceStepper(task=T002, steps=4, position=1)\n..."
    steps = int(re.search(r"steps=(\d+)", saved)[1])
    assert steps >= 2  # otherwise Next could not move
    base_url, token = lab
    expect = playwright_api.expect
    started = time.monotonic()
    with playwright_api.sync_playwright() as pw:
        browser = open_chromium(pw, tmp_path / "chromium-profile")
        try:
            page = browser.new_page()
            page.set_default_timeout(WAIT_MS)
            page.goto(f"{base_url}/lab/tree/{LESSON.name}?token={token}")
            page.wait_for_function(
                "() => window.jupyterapp?.shell.currentWidget?.sessionContext !== undefined"
            )
            position = page.locator(".ralph-position")

            # As opened, before running anything: a fresh copy is untrusted, so Lab renders no widget
            # view but each widget's saved static twin (sanitized HTML): the stepper's first step card.
            saved_stepper = page.locator(".ralph-saved-stepper")
            expect(saved_stepper).to_have_count(1, timeout=WAIT_MS)
            expect(saved_stepper).to_contain_text(f"step 1 of {steps}")
            expect(saved_stepper.locator("code.ralph-tool")).to_have_count(1)
            saved_stepper.scroll_into_view_if_needed()
            page.screenshot(path=str(tmp_path / "opened.png"))
            assert page.get_by_text("Error displaying widget").count() == 0

            assert page.evaluate(RUN_ALL) == "python3"  # resolves once every cell has run

            # The live run: the static table above the stepper is the reference.
            tools = page.locator(".ralph-trace code.ralph-tool").all_inner_texts()
            assert len(tools) == steps and tools[0] != tools[1]  # else "the tool changed" proves nothing
            first_row_wrong = WRONG_STYLE in (
                page.locator(".ralph-trace tr").nth(1).get_attribute("style") or ""
            )
            step = page.locator(".ralph-step")
            expect(position).to_have_text(f"step 1 of {steps}", timeout=WAIT_MS)
            expect(saved_stepper).to_have_count(0)  # replaced by the live widget
            expect(step.locator(".ralph-tool")).to_have_text(tools[0])
            if first_row_wrong:
                expect(step).to_contain_text("wrong call")
            expect(page.locator("button.ralph-previous")).to_be_disabled()
            step.scroll_into_view_if_needed()
            page.screenshot(path=str(tmp_path / "stepper-1.png"))

            page.locator("button.ralph-next").click()
            expect(position).to_have_text(f"step 2 of {steps}")
            expect(step.locator(".ralph-tool")).to_have_text(tools[1])
            expect(page.locator("button.ralph-previous")).to_be_enabled()

            assert page.get_by_text("Error displaying widget").count() == 0
            shot = tmp_path / "stepper-2.png"
            page.screenshot(path=str(shot))
            shutil.copyfile(shot, SCREENSHOT_COPY)
        finally:
            browser.close()
    assert time.monotonic() - started < 5 * WAIT_MS / 1000
