"""Helpers for test_browser.py: a throwaway JupyterLab server and headless Debian Chromium.

Everything is bounded: the server gets ``STARTUP_S`` to answer and ``STOP_S`` to stop before its
whole process group (server and kernels) is killed. Nothing here touches the user's Jupyter
settings: runtime, settings and workspace folders all live under the test's tmp_path.
"""

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import nbformat
import pytest

STARTUP_S = 60.0
STOP_S = 15.0

# This closed network refuses Chromium's background connections (updates, sync, safe browsing);
# without these flags it keeps retrying them. The profile (a fresh user-data-dir) is passed apart.
CHROMIUM_FLAGS = [
    "--headless=new",
    "--no-sandbox",  # we run as root
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

# JupyterLab asks whether to fetch news and check for updates; say no before it asks.
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    }
}


def chromium_path() -> str | None:
    """Debian's Chromium (package ``chromium``), or None when it is not installed."""
    return shutil.which("chromium")


def free_port() -> int:
    """A port nothing listens on right now (the OS picks it)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def write_settings(settings_dir: Path, settings: dict = LAB_SETTINGS) -> None:
    for name, values in settings.items():
        path = settings_dir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))


def start_lab(
    root: Path, port: int, token: str, log: Path, settings: dict = LAB_SETTINGS
) -> subprocess.Popen:
    """Start ``jupyter lab`` on 127.0.0.1 in its own process group, with the app exposed to JS.

    ``expose_app_in_browser`` sets ``window.jupyterapp``, so the test can run JupyterLab commands
    ("run all cells") instead of hunting for menu items.
    """
    state = root / ".lab"
    write_settings(state / "settings", settings)
    # The lessons' saved outputs come from the offline model with seed 0: run them on that, whatever
    # the developer's shell has set for a real model.
    env = {k: v for k, v in os.environ.items() if k not in ("RALPH_MODEL", "RALPH_SEED")}
    env |= {"JUPYTER_RUNTIME_DIR": str(state / "runtime"), "RALPH_MODEL": "offline"}
    command = [
        sys.executable, "-m", "jupyter", "lab", "--no-browser",
        "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
        "--LabApp.expose_app_in_browser=True",
        f"--LabApp.user_settings_dir={state / 'settings'}",
        f"--LabApp.workspaces_dir={state / 'workspaces'}",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.extension_manager=readonly",  # no package index look-ups from the test
        "--allow-root",  # CI runs as root
    ]  # fmt: skip
    with open(log, "wb") as out:
        return subprocess.Popen(command, cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)  # fmt: skip


def wait_until_up(proc: subprocess.Popen, base_url: str, token: str, log: Path) -> None:
    """Poll /api/status until it answers, the server dies, or ``STARTUP_S`` passes."""
    deadline = time.monotonic() + STARTUP_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"jupyter lab exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{base_url}/api/status?token={token}", timeout=2) as reply:
                if reply.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise TimeoutError(f"jupyter lab did not answer in {STARTUP_S} s:\n{log.read_text()[-3000:]}")


def stop(proc: subprocess.Popen) -> None:
    """SIGTERM (the server shuts its kernels down), then SIGKILL the group if it lingers."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=STOP_S)
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # our own group: the server and any kernel it left
    except ProcessLookupError:
        pass
    proc.wait(timeout=STOP_S)


def saved_text(notebook: Path, prefix: str) -> str:
    """The first saved ``text/plain`` output of ``notebook`` that starts with ``prefix``.

    Why: the test checks the live run against what the committed lesson shows, not against numbers
    of its own. ``saved_text(lesson, "TraceStepper(")`` -> ``"TraceStepper(task=T002, steps=4, position=1)\\n..."``
    """
    for cell in nbformat.read(notebook, as_version=4).cells:
        for output in cell.get("outputs", []):
            text = output.get("data", {}).get("text/plain", "")
            if text.startswith(prefix):
                return text
    raise LookupError(f"{notebook} has no saved output starting with {prefix!r}: rebuild it")


def playwright_or_skip():
    """playwright's sync API, or the test skipped, saying what is missing (a fixture's body)."""
    if chromium_path() is None:
        pytest.skip("needs Debian's chromium on PATH: apt-get install -y chromium")
    return pytest.importorskip("playwright.sync_api", reason="needs the playwright package")


@contextmanager
def running_lab(tmp_path: Path, settings: dict = LAB_SETTINGS) -> Iterator[tuple[str, str]]:
    """A JupyterLab server on a free 127.0.0.1 port, rooted in tmp_path/root: (base url, token); always
    stopped."""
    port, token = free_port(), secrets.token_hex(16)
    (tmp_path / "root").mkdir()
    log = tmp_path / "lab.log"
    proc = start_lab(tmp_path / "root", port, token, log, settings)
    try:
        wait_until_up(proc, f"http://127.0.0.1:{port}", token, log)
        yield f"http://127.0.0.1:{port}", token
    finally:
        stop(proc)


def open_chromium(pw, profile: Path, **options):
    """Debian's Chromium, headless, with a fresh empty profile (user-data-dir) and the kit's flags."""
    return pw.chromium.launch_persistent_context(
        str(profile), executable_path=chromium_path(), headless=True, args=CHROMIUM_FLAGS,
        viewport={"width": 1280, "height": 900}, **options,
    )  # fmt: skip
