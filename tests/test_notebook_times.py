"""``tools/notebook_times.py --vs``: two trees measured paired (issue 27's before and after).

The machine's speed drifts by more than most changes, so a before and after is only worth quoting when
each notebook ran in both trees back to back, taking turns at going first. These tests replace the
measurement (a notebook run) with a scripted one and check the order of the runs and the medians.
"""

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import notebook_times  # noqa: E402


def two_trees(tmp_path: Path) -> tuple[Path, Path]:
    trees = tmp_path / "here", tmp_path / "other"
    for tree in trees:
        (tree / "notebooks").mkdir(parents=True)
        for name in ("01_a.ipynb", "02_b.ipynb"):
            (tree / "notebooks" / name).write_text("{}")
    return trees


def scripted(seconds: dict, order: list):
    """A ``measure`` that records what ran and returns one cell of the seconds scripted for its tree."""

    def measure(path: Path, root: Path) -> dict:
        order.append((root.name, path.name))
        left = seconds[root.name]
        if not left:
            return {"name": path.name, "error": "boom"}
        return {"name": path.name, "run_s": 0.0, "cells": [{"seconds": left.pop(0)}], "peak_mb": 0}

    return measure


def test_each_notebook_runs_in_both_trees_back_to_back_taking_turns(tmp_path, monkeypatch):
    here, other = two_trees(tmp_path)
    order: list = []
    seconds = {"here": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], "other": [2.0, 4.0, 6.0, 8.0, 10.0, 12.0]}
    monkeypatch.setattr(notebook_times, "measure", scripted(seconds, order))

    table, ok = notebook_times.paired(here, other, [], rounds=3)

    assert ok
    assert order == [
        ("here", "01_a.ipynb"), ("other", "01_a.ipynb"), ("here", "02_b.ipynb"), ("other", "02_b.ipynb"),
        ("other", "01_a.ipynb"), ("here", "01_a.ipynb"), ("other", "02_b.ipynb"), ("here", "02_b.ipynb"),
        ("here", "01_a.ipynb"), ("other", "01_a.ipynb"), ("here", "02_b.ipynb"), ("other", "02_b.ipynb"),
    ]  # fmt: skip
    rows = {line.split()[0]: line.split()[1:3] for line in table.splitlines()[1:4]}
    # here: 01 ran 1, 3, 5 and 02 ran 2, 4, 6 -> medians 3 and 4; rounds total 3, 7, 11 -> 7
    assert rows == {"01_a.ipynb": ["3.0", "6.0"], "02_b.ipynb": ["4.0", "8.0"], "total": ["7.0", "14.0"]}


def test_a_notebook_that_fails_in_one_tree_is_reported(tmp_path, monkeypatch):
    here, other = two_trees(tmp_path)
    seconds = {"here": [1.0, 1.0], "other": []}
    monkeypatch.setattr(notebook_times, "measure", scripted(seconds, []))

    table, ok = notebook_times.paired(here, other, [], rounds=1)

    assert not ok
    assert "did not run" in table


def test_the_other_tree_is_measured_with_its_own_package_in_the_kernel_only(tmp_path):
    """An older tree's package lacks what this script imports (``measure.at_least_one``); only the
    notebook's kernel may import it, so the script must still start, and the kernel must see that tree."""
    other = tmp_path / "other"
    (other / "ralph_mini").mkdir(parents=True)
    (other / "ralph_mini" / "__init__.py").write_text("")
    (other / "ralph_mini" / "measure.py").write_text("# an older package: no at_least_one\n")
    (other / "ralph_mini" / "only_in_other.py").write_text("TREE = 'other'\n")
    (other / "tools").mkdir()
    (other / "tools" / "nbrun.py").write_text((ROOT / "tools" / "nbrun.py").read_text(encoding="utf-8"))
    (other / "notebooks").mkdir()
    cell = {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
            "source": "from ralph_mini.only_in_other import TREE\nassert TREE == 'other'"}  # fmt: skip
    notebook = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (other / "notebooks" / "01_a.ipynb").write_text(json.dumps(notebook))

    result = notebook_times.measure(other / "notebooks" / "01_a.ipynb", other)

    assert "error" not in result, result
    assert [c["first_line"] for c in result["cells"]] == ["from ralph_mini.only_in_other import TREE"]
