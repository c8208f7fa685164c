"""How long a notebook's first code cell takes, in fresh interpreters: the median of N runs.

The first cell is mostly imports, so this is the time a student waits before the lesson opens (issue 27:
notebook 01's first cell within 0.4 s). The whole cell runs, imports and all, as the kernel runs it.

Each run is a new Python process, so nothing imported by an earlier run hides a cost. Before it times
the cell, the process imports what a Jupyter kernel has already loaded when a student runs the first
cell (``ipykernel.ipkernel``, which brings IPython, zmq and tornado): that cost is the kernel's start,
not the cell's. ``--cold`` skips it, for the cost in a bare interpreter. Each run also says which of the
heavy modules the cell left loaded (pandas, matplotlib, ipywidgets, faiss, the memory, the loop).

    python tools/import_time.py                                   # notebook 01, 7 runs
    python tools/import_time.py notebooks/05_vector_retrieval.ipynb --runs 11
    python tools/import_time.py --root /tmp/before27              # another checkout's package and notebook

Timings are wall clock: on a shared machine read the median, and compare trees side by side.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

import nbformat

from ralph_mini.measure import at_least_one

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("pandas", "matplotlib", "ipywidgets", "faiss", "ralph_mini.memory", "ralph_mini.loop")
KERNEL = "import ipykernel.ipkernel"  # what the kernel has imported before the first cell runs

# Runs inside the fresh interpreter: argv[1] is the cell's Python (IPython syntax already translated).
PROBE = """
import json, sys, time
source = sys.argv[1]
start = time.perf_counter()
exec(compile(source, "<first cell>", "exec"), {"__name__": "__main__"})
seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "loaded": [m for m in HEAVY if m in sys.modules]}))
"""


def first_cell(path: Path) -> str:
    """The notebook's first code cell, as plain Python (IPython's magics translated)."""
    from IPython.core.inputtransformer2 import TransformerManager

    notebook = nbformat.read(path, as_version=4)
    source = next(cell.source for cell in notebook.cells if cell.cell_type == "code")
    return TransformerManager().transform_cell(source)


def one_run(source: str, root: Path, cold: bool, folder: Path) -> dict:
    """Time the cell once in a new interpreter whose ``ralph_mini`` is ``root``'s."""
    preload = "" if cold else KERNEL + "\n"
    code = preload + f"HEAVY = {HEAVY!r}\n" + PROBE
    env = {**os.environ, "PYTHONPATH": str(root), "RALPH_MODEL": "offline"}
    done = subprocess.run(
        [sys.executable, "-c", code, source], capture_output=True, text=True, env=env, cwd=folder, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"the cell failed:\n{done.stderr.strip()}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebook", nargs="?", type=Path, help="default: notebooks/01_bare_react.ipynb")
    parser.add_argument(
        "--runs", type=at_least_one, default=7, help="fresh interpreters to time (the median is shown)"
    )
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout whose package and notebook run")
    parser.add_argument("--cold", action="store_true", help="do not preload what a kernel has loaded")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    path = args.notebook or root / "notebooks" / "01_bare_react.ipynb"
    source = first_cell(path)
    runs = [one_run(source, root, args.cold, path.parent) for _ in range(args.runs)]
    seconds = sorted(run["seconds"] for run in runs)
    where = "a bare interpreter" if args.cold else "an interpreter that has what a kernel loads"
    print(f"{path.name}, first code cell, in {where} ({root}):")
    print(
        f"  median {statistics.median(seconds):.3f} s of {len(seconds)} runs (min {seconds[0]:.3f}, "
        f"max {seconds[-1]:.3f})"
    )
    print(f"  heavy modules it leaves loaded: {', '.join(runs[0]['loaded']) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
