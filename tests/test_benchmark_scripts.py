"""Every kept command a figure comes from still starts: each benchmark and tool script answers ``--help``.

A script is run by hand, seldom, often sessions after its last use; an import it lost (a module that
moved) would otherwise surface only when someone needs its figure. ``--help`` imports the whole script
and builds its parser, without the work (no model served, no fixture built).
"""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(
    path
    for folder in ("benchmarks", "tools", "exercises")
    for path in (ROOT / folder).glob("*.py")
    if 'if __name__ == "__main__":' in path.read_text(encoding="utf-8")  # a script, not a helper module
)


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: f"{path.parent.name}/{path.name}")
def test_each_benchmark_script_answers_help(script: Path):
    done = subprocess.run(
        [sys.executable, str(script), "--help"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, f"python {script.relative_to(ROOT)} --help failed:\n{done.stderr[-2000:]}"
    assert done.stdout.startswith("usage:"), done.stdout[:200]


@pytest.mark.parametrize(
    "command",
    [
        "benchmarks/bad_lessons.py --seeds 2",
        "benchmarks/retrieval.py --speed-lessons 0",
        "benchmarks/store_speed.py --sizes abc",
        "tools/import_time.py --runs 0",
        "tools/notebook_times.py --vs . --rounds 0",
        "tools/lesson_lifetimes.py drfit",
    ],
)
def test_a_count_or_name_a_script_cannot_use_is_a_usage_error_saying_what_to_write(command: str):
    script, *arguments = command.split()
    done = subprocess.run([sys.executable, str(ROOT / script), *arguments], capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert "error: " in done.stderr and ("write" in done.stderr or "unknown" in done.stderr), done.stderr
