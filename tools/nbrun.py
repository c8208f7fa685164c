"""Execute a notebook in a throw-away copy of its folder, for the measuring scripts in tools/.

Why a copy: notebooks write files next to themselves (``runs/``, memory files), and a measurement must
never touch the committed ``.ipynb`` files or leave anything in the repository. The notebook's whole
folder is copied (``notebooks/`` brings ``cassettes/`` along), the notebook is executed there with
nbclient, and the copy is deleted. Nothing is written back.

    from nbrun import run_copy, lesson_notebooks
    seconds, notebook = run_copy(Path("notebooks/01_bare_react.ipynb"), env={"RALPH_MODEL": "offline"})
"""

import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent


def lesson_notebooks() -> list[Path]:
    """The lessons, then the five core student exercise notebooks, as the workshop takes them."""
    return sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")) + sorted(
        (ROOT / "exercises").glob("ex[0-9][0-9]_*.ipynb")
    )


@contextmanager
def patched_environ(env: dict[str, str]) -> Iterator[None]:
    """Set ``env`` in os.environ (the kernel inherits it), restore every variable afterwards."""
    saved = {name: os.environ.get(name) for name in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def run_copy(path: Path, env: dict[str, str] | None = None, timeout: int = 900) -> tuple[float, object]:
    """Execute ``path`` in a temporary copy of its folder; return (wall seconds, executed notebook)."""
    with tempfile.TemporaryDirectory(prefix="ralph-nb-") as tmp:
        folder = Path(tmp) / path.parent.name
        shutil.copytree(path.parent, folder, ignore=shutil.ignore_patterns("runs", ".ipynb_checkpoints"))
        notebook = nbformat.read(folder / path.name, as_version=4)
        client = NotebookClient(notebook, timeout=timeout, resources={"metadata": {"path": str(folder)}})
        with patched_environ(env or {}):
            start = time.perf_counter()
            client.execute()
            seconds = time.perf_counter() - start
    return seconds, notebook
