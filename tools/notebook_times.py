"""Where the notebooks spend their time: seconds per cell, per notebook and in all, and the kernel's peak
memory (issue 27: the lessons and exercises within 45 s of cells on 2 cores, notebook 05 under 1 GB).

Each notebook runs as ``tools/lesson_sizes.py`` runs it (``nbrun.run_copy``: a throw-away copy of its
folder, the offline model), but in a fresh Python process of its own, for two reasons: the kernel's
peak resident memory is then that process's ``RUSAGE_CHILDREN`` maximum (the kernel is its only child),
and one notebook's imports never warm the next one's. Cell seconds come from the timestamps nbclient
records in each cell's metadata (``iopub.execute_input`` to ``shell.execute_reply``), so kernel start and
shutdown are left out; ``run s`` is the whole execution, kernel start included.

A cell over ``SLOW_CELL_S`` seconds must show a progress bar: its saved output then holds tqdm's bar
(``|██████████|``); the table marks a slow cell without one ``NO BAR``.

    python tools/notebook_times.py                    # every lesson and exercise; the 10 slowest cells
    python tools/notebook_times.py --only 05 09       # notebooks whose name starts with 05 or 09
    python tools/notebook_times.py --slowest 20 --json times.json
    python tools/notebook_times.py --vs /tmp/before --rounds 3   # this tree against another, paired

Timings are wall clock on a shared machine, whose speed drifts by more than most changes (the same code
took 54.9-68.7 s for the whole set within an hour). So a before and after is measured paired: with
``--vs OTHER`` each notebook runs in both trees back to back, in turns (this tree first in odd rounds,
the other first in even ones), and the table gives each tree's median over the rounds, per notebook and
in all. ``OTHER`` is a checkout of another commit (``git worktree add /tmp/before <commit>``); each
tree's notebooks import that tree's package (``PYTHONPATH``).
"""

import argparse
import json
import os
import resource
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from statistics import median

from ralph_mini.measure import at_least_one

SLOW_CELL_S = 10.0  # a cell slower than this must show a progress bar (issue 27)
BAR = "|██████████|"  # a finished tqdm bar, as the saved output of ralph_mini.widgets.progress reads


def cell_seconds(cell: dict) -> float:
    """One executed cell's seconds, from the timestamps nbclient saves in its metadata."""
    stamps = cell.get("metadata", {}).get("execution", {})
    start = stamps.get("iopub.execute_input") or stamps.get("iopub.status.busy")
    end = stamps.get("shell.execute_reply") or stamps.get("iopub.status.idle")
    if not (start and end):
        return 0.0
    elapsed = datetime.fromisoformat(end.rstrip("Z")) - datetime.fromisoformat(start.rstrip("Z"))
    return elapsed.total_seconds()


def has_bar(cell: dict) -> bool:
    """Whether a cell's saved output shows a finished progress bar."""
    return BAR in json.dumps(cell.get("outputs", []), ensure_ascii=False)


def run_one(path: Path, root: Path) -> dict:
    """Execute one notebook in this process and describe it: cells, run seconds, the kernel's peak RSS."""
    sys.path.insert(0, str(root / "tools"))
    from nbrun import run_copy  # the tree's own runner, so a copy of another tree measures itself

    paths = [str(root), os.environ.get("PYTHONPATH")]  # the kernel imports root's package
    kernel_env = {"RALPH_MODEL": "offline", "PYTHONPATH": os.pathsep.join(filter(None, paths))}
    seconds, notebook = run_copy(path, env=kernel_env)
    code = [c for c in notebook.cells if c.cell_type == "code"]
    cells = [
        {
            "index": i,
            "seconds": cell_seconds(c),
            "bar": has_bar(c),
            "first_line": c.source.splitlines()[0][:60],
        }
        for i, c in enumerate(code, start=1)
        if c.source.strip()
    ]
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # Linux: kilobytes
    return {"name": path.name, "run_s": seconds, "cells": cells, "peak_mb": peak_kb / 1024}


def measure(path: Path, root: Path) -> dict:
    """Run one notebook in a fresh Python process (see the module docstring) and read its description.
    That process is this script with this checkout's package; only its kernel imports root's."""
    command = [sys.executable, __file__, "--one", str(path), "--root", str(root)]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-3:]
        return {"name": path.name, "error": " / ".join(tail)}
    return json.loads(done.stdout.strip().splitlines()[-1])


def notebooks(root: Path, only: list[str]) -> list[Path]:
    """The lessons, the five core exercises and the build-your-own track, in workshop order."""
    found = (
        sorted((root / "notebooks").glob("[0-9][0-9]_*.ipynb"))
        + sorted((root / "exercises").glob("ex[0-9][0-9]_*.ipynb"))
        + sorted((root / "exercises" / "build_your_own").glob("ex[0-9][0-9]_*.ipynb"))
    )
    return [p for p in found if not only or p.name.startswith(tuple(only))]


def report(results: list[dict], slowest: int) -> str:
    """The per-notebook table, the total of cell seconds, and the slowest cells."""
    lines = [f"{'notebook':<34} {'cells':>5} {'cell s':>7} {'run s':>6} {'peak MB':>8}"]
    total, every = 0.0, []
    for result in results:
        if "error" in result:
            lines.append(f"{result['name']:<34} did not run: {result['error']}")
            continue
        cell_s = sum(c["seconds"] for c in result["cells"])
        total += cell_s
        every += [(c["seconds"], result["name"], c) for c in result["cells"]]
        lines.append(
            f"{result['name']:<34} {len(result['cells']):>5} {cell_s:>7.1f} {result['run_s']:>6.1f} "
            f"{result['peak_mb']:>8.0f}"
        )
    lines.append(f"{'total':<34} {'':>5} {total:>7.1f}")
    lines.append(f"\nthe {slowest} slowest cells (code cell number; over {SLOW_CELL_S:g} s needs a bar):")
    for seconds, name, cell in sorted(every, key=lambda row: -row[0])[:slowest]:
        flag = "" if seconds <= SLOW_CELL_S else (" bar" if cell["bar"] else " NO BAR")
        lines.append(f"{seconds:6.1f} s  {name} cell {cell['index']}: {cell['first_line']}{flag}")
    return "\n".join(lines)


def cell_total(result: dict) -> float:
    return sum(c["seconds"] for c in result.get("cells", []))


def paired(here: Path, other: Path, only: list[str], rounds: int) -> tuple[str, bool]:
    """Each notebook in both trees back to back, ``rounds`` times, taking turns at going first; the
    median cell seconds of each, per notebook and of the whole set (a total per round, then its median).
    Returns the table and whether every run succeeded."""
    names = [p.relative_to(here) for p in notebooks(here, only)]
    seconds: dict[Path, dict[Path, list[float]]] = {root: {n: [] for n in names} for root in (here, other)}
    ok = True
    for number in range(rounds):
        for name in names:
            for root in (here, other) if number % 2 == 0 else (other, here):
                result = measure(root / name, root)
                ok = ok and "error" not in result
                seconds[root][name].append(cell_total(result))
                print(f"round {number + 1}: {root / name} {result.get('error', '')}", file=sys.stderr)
    lines = [f"{'notebook':<34} {'this tree':>9} {'other':>9}   (median cell seconds of {rounds} rounds)"]
    for name in names:
        mine, theirs = median(seconds[here][name]), median(seconds[other][name])
        lines.append(f"{name.name:<34} {mine:>9.1f} {theirs:>9.1f}")
    totals = {root: [sum(seconds[root][n][r] for n in names) for r in range(rounds)] for root in seconds}
    lines.append(f"{'total':<34} {median(totals[here]):>9.1f} {median(totals[other]):>9.1f}")
    for root in (here, other):
        lines.append(f"  {root}: " + ", ".join(f"{t:.1f}" for t in totals[root]) + " s, round by round")
    lines += ["", "a notebook that did not run counts 0 s: see the errors above"] if not ok else []
    return "\n".join(lines), ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent, help="the tree")
    parser.add_argument("--only", nargs="*", default=[], help="name prefixes, e.g. 05 ex01")
    parser.add_argument("--slowest", type=int, default=10, help="how many of the slowest cells to list")
    parser.add_argument("--json", type=Path, help="also write every measurement to this file")
    parser.add_argument("--vs", type=Path, help="another tree, measured paired with this one")
    parser.add_argument(
        "--rounds", type=at_least_one, default=3, help="with --vs: rounds, each notebook in both"
    )
    parser.add_argument("--one", type=Path, help=argparse.SUPPRESS)  # internal: run one notebook here
    args = parser.parse_args(argv)
    root = args.root.resolve()
    if args.one:
        print(json.dumps(run_one(args.one, root)))
        return 0
    if args.vs:
        table, ok = paired(root, args.vs.resolve(), args.only, args.rounds)
        print(table)
        return 0 if ok else 1
    results = []
    for path in notebooks(root, args.only):
        results.append(measure(path, root))
        print(f"ran {path.name}", file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")
    print(report(results, args.slowest))
    return 1 if any("error" in r for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
