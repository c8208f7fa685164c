"""The stepper in a real JupyterLab, driven by headless Chromium: does a student see and click it?

Unit tests click the buttons from Python; only a browser shows that the widget renders at all (no
"Error displaying widget"), that the front end talks to the kernel, and that Next really moves.
Needs Debian's ``chromium`` and the ``playwright`` package (never its own browser download); the
test is skipped, saying which is missing, without them. Screenshots of steps 1 and 2 land in
tmp_path; step 2 is copied to /tmp/ralph_browser.png.
"""

import secrets
import shutil
import time
from pathlib import Path

import pytest
from browser_helpers import (
    CHROMIUM_FLAGS,
    chromium_path,
    free_port,
    start_lab,
    stop,
    wait_until_up,
    write_notebook,
)

from ralph_mini import OfflineModel, make_suite, run_react

pytestmark = pytest.mark.browser

SCREENSHOT_COPY = Path("/tmp/ralph_browser.png")
WAIT_MS = 60_000  # any single wait in the page: loading lab, starting the kernel, running cells

CELLS = [
    "from ralph_mini import OfflineModel, make_suite, run_react\nfrom ralph_mini.widgets import show_trace",
    "suite = make_suite(10)\n"
    "trace = run_react(suite.tasks[3], OfflineModel(), suite.world.tools())\n"
    "[step.tool for step in trace.steps]",
    "show_trace(trace)",
]

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
    if chromium_path() is None:
        pytest.skip("needs Debian's chromium on PATH: apt-get install -y chromium")
    return pytest.importorskip("playwright.sync_api", reason="needs the playwright package")


@pytest.fixture
def lab(tmp_path):
    """A JupyterLab server on a free 127.0.0.1 port, rooted in tmp_path/root; always stopped."""
    port, token = free_port(), secrets.token_hex(16)
    (tmp_path / "root").mkdir()
    log = tmp_path / "lab.log"
    proc = start_lab(tmp_path / "root", port, token, log)
    try:
        wait_until_up(proc, f"http://127.0.0.1:{port}", token, log)
        yield f"http://127.0.0.1:{port}", token
    finally:
        stop(proc)


def expected_tools() -> list[str]:
    """The same run the notebook makes: the offline model is deterministic."""
    suite = make_suite(10)
    return [s.tool for s in run_react(suite.tasks[3], OfflineModel(), suite.world.tools()).steps]


def test_stepper_renders_and_next_moves_in_jupyterlab(playwright_api, lab, tmp_path):
    tools = expected_tools()
    assert tools[0] != tools[1]  # otherwise "the tool changed" would prove nothing
    write_notebook(tmp_path / "root" / "stepper.ipynb", CELLS)
    base_url, token = lab
    started = time.monotonic()
    with playwright_api.sync_playwright() as pw:
        browser = pw.chromium.launch_persistent_context(
            str(tmp_path / "chromium-profile"),  # a fresh, empty user-data-dir
            executable_path=chromium_path(),
            headless=True,
            args=CHROMIUM_FLAGS,
            viewport={"width": 1280, "height": 900},
        )
        try:
            page = browser.new_page()
            page.set_default_timeout(WAIT_MS)
            page.goto(f"{base_url}/lab/tree/stepper.ipynb?token={token}")
            page.wait_for_function(
                "() => window.jupyterapp?.shell.currentWidget?.sessionContext !== undefined"
            )
            assert page.evaluate(RUN_ALL) == "python3"

            position = page.locator(".ralph-position")
            expect = playwright_api.expect
            expect(position).to_have_text(f"step 1 of {len(tools)}", timeout=WAIT_MS)
            step = page.locator(".ralph-step")
            expect(step.locator(".ralph-tool")).to_have_text(tools[0])
            expect(step).to_contain_text("wrong call")  # step 1 is the look-alike tool
            rows = page.locator(".ralph-trace tr")  # the static table, shown above the stepper
            expect(rows).to_have_count(1 + len(tools))
            expect(page.locator("button.ralph-previous")).to_be_disabled()
            step.scroll_into_view_if_needed()
            page.screenshot(path=str(tmp_path / "stepper-1.png"))

            page.locator("button.ralph-next").click()
            expect(position).to_have_text(f"step 2 of {len(tools)}")
            expect(step.locator(".ralph-tool")).to_have_text(tools[1])
            expect(step).not_to_contain_text("wrong call")
            expect(page.locator("button.ralph-previous")).to_be_enabled()

            assert page.get_by_text("Error displaying widget").count() == 0
            shot = tmp_path / "stepper-2.png"
            page.screenshot(path=str(shot))
            shutil.copyfile(shot, SCREENSHOT_COPY)
        finally:
            browser.close()
    assert time.monotonic() - started < 5 * WAIT_MS / 1000
