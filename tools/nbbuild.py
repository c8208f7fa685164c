"""Build a notebook from its percent-format source and execute it, so committed outputs are real.

Maintainers edit ``notebooks/src/NN_name.py`` (diffable text) and run::

    python tools/nbbuild.py notebooks/src/01_bare_react.py notebooks/01_bare_react.ipynb

Format: ``# %% [markdown]`` starts a markdown cell (its lines start with ``# ``), ``# %%`` a code cell.
Students never need this: they open the .ipynb files.
"""

import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient


def read_cells(source: str) -> list:
    cells, kind, lines = [], None, []

    def flush() -> None:
        if kind is None:
            return
        text = "\n".join(lines).strip("\n")
        if kind == "markdown":
            text = "\n".join(
                line[2:] if line.startswith("# ") else line.lstrip("#") for line in text.splitlines()
            )
            cells.append(nbformat.v4.new_markdown_cell(text))
        elif text.strip():
            cells.append(nbformat.v4.new_code_cell(text))

    for line in source.splitlines():
        if line.startswith("# %%"):
            flush()
            kind, lines = ("markdown" if "[markdown]" in line else "code"), []
        else:
            lines.append(line)
    flush()
    return cells


def build(source_path: Path, notebook_path: Path, timeout: int = 600) -> None:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = read_cells(source_path.read_text())
    for i, cell in enumerate(notebook.cells):
        cell.id = f"cell-{i:02d}"  # stable ids: clean diffs when a notebook is rebuilt
    notebook.metadata = {
        "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    }
    NotebookClient(
        notebook, timeout=timeout, resources={"metadata": {"path": str(notebook_path.parent)}}
    ).execute()
    nbformat.write(notebook, notebook_path)


if __name__ == "__main__":
    build(Path(sys.argv[1]), Path(sys.argv[2]))
