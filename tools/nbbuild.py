"""Build a notebook's two editions from its percent-format source and execute them, so outputs are real.

Maintainers edit ``notebooks/src/NN_name.py`` (diffable text) and run::

    python tools/nbbuild.py notebooks/src/01_bare_react.py            # both editions
    python tools/nbbuild.py notebooks/src/01_bare_react.py --lang zh  # only notebooks/zh/01_bare_react.ipynb
    python tools/nbbuild.py notebooks/src/01_bare_react.py OUT.ipynb  # the English one, written to OUT

Format: ``# %% [markdown]`` starts a markdown cell (its lines start with ``# ``), ``# %%`` a code cell.
Every markdown cell carries both languages: the English text, then a line ``<!-- zh -->``, then the
Chinese text. The English edition (``notebooks/``) takes the first part, the Chinese edition
(``notebooks/zh/``) the second; code cells are the same in both, so the editions cannot run different
code. A Chinese notebook runs in ``notebooks/zh/``, whose ``.ralph_lang`` tells ``ralph_mini.lang`` to
print, label and ask in Chinese. tests/test_editions.py fails when a cell lacks a language or an edition
is stale against its source. Students never need this: they open the .ipynb files.
"""

import argparse
import re
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbrun import patched_environ

ROOT = Path(__file__).resolve().parents[1]
LANGUAGES = ("en", "zh")
SPLIT = re.compile(r"^<!-- zh -->\s*$", re.MULTILINE)  # the line between a cell's English and Chinese


class EditionError(ValueError):
    """A markdown cell without both languages; the message names the cell."""


def split_languages(text: str, where: str = "a markdown cell") -> dict[str, str]:
    """``{"en": ..., "zh": ...}`` of one bilingual markdown cell's text."""
    parts = SPLIT.split(text)
    if len(parts) != 2:
        found = "no" if len(parts) == 1 else f"{len(parts) - 1}"
        raise EditionError(f"{where} has {found} '<!-- zh -->' line(s): it needs exactly one, between "
                           "the English text and the Chinese text")  # fmt: skip
    en, zh = (part.strip("\n") for part in parts)
    for language, part in (("en", en), ("zh", zh)):
        if not part.strip():
            raise EditionError(f"{where} has no {language} text")
    return {"en": en, "zh": zh}


def source_cells(source: str) -> list[tuple[str, str]]:
    """(kind, text) per cell of a percent-format source, markdown text with its '# ' taken off."""
    cells, kind, lines = [], None, []

    def flush() -> None:
        if kind is None:
            return
        text = "\n".join(lines).strip("\n")
        if kind == "markdown":
            text = "\n".join(
                line[2:] if line.startswith("# ") else line.lstrip("#") for line in text.splitlines()
            )
            cells.append(("markdown", text))
        elif text.strip():
            cells.append(("code", text))

    for line in source.splitlines():
        if line.startswith("# %%"):
            flush()
            kind, lines = ("markdown" if "[markdown]" in line else "code"), []
        else:
            lines.append(line)
    flush()
    return cells


def read_cells(source: str, language: str = "en", name: str = "the source") -> list:
    """The notebook cells of one edition."""
    cells = []
    for number, (kind, text) in enumerate(source_cells(source)):
        if kind == "markdown":
            text = split_languages(text, f"{name}, cell {number}")[language]
            cells.append(nbformat.v4.new_markdown_cell(text))
        else:
            cells.append(nbformat.v4.new_code_cell(text))
    return cells


def edition_path(source_path: Path, language: str) -> Path:
    """notebooks/src/NN.py -> notebooks/NN.ipynb (English) or notebooks/zh/NN.ipynb (Chinese)."""
    folder = source_path.resolve().parent.parent
    return in_edition(folder / f"{source_path.stem}.ipynb", folder, language)


def in_edition(path: Path, base: Path, language: str) -> Path:
    """``path`` (under ``base``, in either edition) in ``language``'s edition. One rule for the lessons,
    the exercises and their tools: a language's folder sits right under ``base``, so
    notebooks/01_x.ipynb <-> notebooks/zh/01_x.ipynb (base: notebooks/), and
    exercises/build_your_own/ex06_x.ipynb <-> exercises/zh/build_your_own/ex06_x.ipynb (base: exercises/)."""
    rest = path.relative_to(base).parts
    rest = rest[1:] if rest[:1] and rest[0] in LANGUAGES else rest
    return base.joinpath(*([language] if language != "en" else []), *rest)


def build(source_path: Path, notebook_path: Path, language: str = "en", timeout: int = 600) -> None:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = read_cells(source_path.read_text(encoding="utf-8"), language, source_path.name)
    for i, cell in enumerate(notebook.cells):
        cell.id = f"cell-{i:02d}"  # stable ids: clean diffs when a notebook is rebuilt
    notebook.metadata = {
        "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    }
    # The kernel learns the edition as a student's would: from the folder it starts in (.ralph_lang);
    # RALPH_LANG is set too, so an English notebook written outside notebooks/ stays English.
    notebook_path.parent.mkdir(parents=True, exist_ok=True)
    with patched_environ({"RALPH_LANG": language}):  # coalesce: a cell's prints saved as one output
        NotebookClient(notebook, timeout=timeout, coalesce_streams=True,
                       resources={"metadata": {"path": str(notebook_path.parent)}}).execute()  # fmt: skip
    nbformat.write(notebook, notebook_path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path, help="notebooks/src/NN_name.py")
    parser.add_argument(
        "out", type=Path, nargs="?", help="where to write (one edition; default: both, in place)"
    )
    parser.add_argument("--lang", choices=LANGUAGES, help="build only this edition")
    args = parser.parse_args()
    languages = [args.lang] if args.lang else (["en"] if args.out else list(LANGUAGES))
    for language in languages:
        build(args.source, args.out or edition_path(args.source, language), language)


if __name__ == "__main__":
    main()
