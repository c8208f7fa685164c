"""Measure the README's installs: size on disk, wall time and package count of a fresh virtual environment.

What it measures, for each requirements file (default: ``requirements.txt``, the student install, and
``requirements-dev.txt``, the test install): it creates a new venv in a temporary folder (never in the
repository), times ``pip install -q -r FILE`` run from the repository root (the files install the kit
editable with ``-e .``), then reports the venv's size as ``du`` counts it (bytes allocated, including
pip itself and any ``__pycache__``), how much of that is ``__pycache__``, and how many distributions are
installed. The venv is deleted afterwards.

``--no-compile`` is passed on to pip, as the README's student command does: pip then skips compiling
every module of every package (pandas' and numpy's own test suites included) to bytecode; Python
compiles the modules a student actually imports, once, on first use. So for those rows the script also
reports the size *after first use*: it runs the setup check (``python -m ralph_mini demo --tasks 2``)
and imports JupyterLab's server, the kernel and every module the lesson sources import, with bytecode
writing on, and measures again.

The times are for a *warm* pip cache (wheels already downloaded and built): run the script twice and
quote the second run. A cold cache adds the downloads (125 MB of wheels for the student install).

    python tools/measure_install.py                     # the README's two installs, python3.11
    python tools/measure_install.py --python python3.13
    python tools/measure_install.py requirements.txt    # one file, pip's default (compile at install)

It prints one markdown table row per file, ready for the README.
"""

import argparse
import ast
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MB = 1024 * 1024
README_INSTALLS = [("requirements.txt", True), ("requirements-dev.txt", False)]  # (file, --no-compile)


@dataclass(frozen=True)
class Install:
    """One measured install."""

    requirements: str
    python: str
    venv_s: float  # python -m venv
    pip_s: float  # pip install -r
    size_mb: float  # du of the whole venv
    pycache_mb: float  # of which __pycache__ folders
    packages: int  # installed distributions, pip and the kit included
    no_compile: bool = False
    used_mb: float | None = None  # after first use (only with --no-compile)


def disk_mb(path: Path, only_pycache: bool = False) -> float:
    """Allocated size like ``du`` (st_blocks), of every file, or only those inside ``__pycache__``."""
    total = 0
    for folder, _dirs, files in os.walk(path):
        if only_pycache and "__pycache__" not in Path(folder).parts:
            continue
        for name in files:
            stat = os.lstat(os.path.join(folder, name))
            total += getattr(stat, "st_blocks", 0) * 512 or stat.st_size
    return total / MB


def lesson_imports() -> list[str]:
    """The top-level modules the lesson sources and the kit import (what a student's first hour loads)."""
    names = {"jupyterlab.labapp", "ipykernel.kernelapp", "matplotlib.pyplot", "ralph_mini.widgets"}
    for path in sorted((ROOT / "notebooks" / "src").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module)
    return sorted(names)


def first_use(venv_python: Path) -> None:
    """Run the setup check and import what the lessons import, writing bytecode as a student's would."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    quiet = {"cwd": tempfile.gettempdir(), "env": env, "check": True, "stdout": subprocess.DEVNULL}
    subprocess.run([str(venv_python), "-m", "ralph_mini", "demo", "--tasks", "2"], **quiet)
    code = (  # optional extras a lesson imports only when installed (llama_cpp) are skipped
        f"import importlib\nfor name in {lesson_imports()!r}:\n    try:\n"
        "        importlib.import_module(name)\n    except ModuleNotFoundError:\n        pass"
    )
    subprocess.run([str(venv_python), "-c", code], **quiet)


def measure(requirements: str, python: str, no_compile: bool = False) -> Install:
    """Create a venv in a temporary folder, install ``requirements`` into it, measure it, delete it."""
    with tempfile.TemporaryDirectory(prefix="ralph-install-") as tmp:
        venv = Path(tmp) / "venv"
        start = time.perf_counter()
        subprocess.run([python, "-m", "venv", str(venv)], check=True)
        venv_s = time.perf_counter() - start
        venv_python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
        flags = ["--no-compile"] if no_compile else []
        start = time.perf_counter()
        subprocess.run(
            [str(venv_python), "-m", "pip", "install", "-q", *flags, "-r", requirements],
            cwd=ROOT,
            check=True,
            stderr=subprocess.DEVNULL,  # pip's warnings about this machine's extra index paths
        )
        pip_s = time.perf_counter() - start
        listed = subprocess.run(
            [str(venv_python), "-m", "pip", "list", "--format=freeze"],
            cwd=ROOT,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        size_mb, pycache_mb = disk_mb(venv), disk_mb(venv, only_pycache=True)
        used_mb = None
        if no_compile:
            first_use(venv_python)
            used_mb = disk_mb(venv)
        return Install(
            requirements=requirements,
            python=subprocess.run(
                [str(venv_python), "-c", "import platform; print(platform.python_version())"],
                check=True,
                capture_output=True,
                text=True,
            ).stdout.strip(),
            venv_s=venv_s,
            pip_s=pip_s,
            size_mb=size_mb,
            pycache_mb=pycache_mb,
            packages=len([line for line in listed.splitlines() if line.strip()]),
            no_compile=no_compile,
            used_mb=used_mb,
        )


def table(rows: list[Install]) -> str:
    lines = [
        "| install | Python | venv size | of which `__pycache__` | after first use | packages | time |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        flag = " --no-compile" if r.no_compile else ""
        used = f"{r.used_mb:.0f} MB" if r.used_mb is not None else "(compiled at install)"
        lines.append(
            f"| `pip install{flag} -r {r.requirements}` | {r.python} | {r.size_mb:.0f} MB | "
            f"{r.pycache_mb:.0f} MB | {used} | {r.packages} | {r.pip_s:.0f} s + {r.venv_s:.0f} s (venv) |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("requirements", nargs="*", help="default: the README's two")
    parser.add_argument("--python", default="python3.11", help="interpreter for the venvs")
    parser.add_argument("--no-compile", action="store_true", help="pass it to pip; measure first use")
    args = parser.parse_args(argv)
    # the README's commands: the student install with --no-compile, the test install as pip does by default
    installs = [(name, args.no_compile) for name in args.requirements] or README_INSTALLS
    if shutil.which(args.python) is None and not Path(args.python).exists():
        parser.error(f"--python {args.python!r} not found: give a path or a name on PATH, e.g. python3.12")
    rows = []
    for requirements, no_compile in installs:
        if not (ROOT / requirements).exists():
            parser.error(f"{requirements!r} not found in {ROOT}: give a path relative to the repository root")
        rows.append(measure(requirements, args.python, no_compile))
        print(f"measured {requirements}", file=sys.stderr)
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
