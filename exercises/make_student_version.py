"""Write the student notebooks (exercises/ex0N_*.ipynb) from the instructor ones (exercises/solutions/).

One source: instructors edit only the notebooks in ``exercises/solutions/`` (and, for the build-your-own
track, ``exercises/build_your_own/solutions/``: its student notebooks go to ``exercises/build_your_own/``),
then run::

    python exercises/make_student_version.py               # strip, clear, execute, write
    python exercises/make_student_version.py --no-execute  # strip and clear only (outputs empty)
    python exercises/make_student_version.py --instructor  # first re-run the instructor notebooks too
    python exercises/make_student_version.py --handout ../ralph-student.zip  # the repository for students

``--handout DIR`` (or ``FILE.zip``) writes the repository as students get it: every file git tracks,
minus ``exercises/solutions/`` and ``exercises/build_your_own/solutions/`` (the reference notebooks and
modules) and minus ``tests/`` and ``.ci/``
(the tests read the solutions). No ``.git``, so no history to recover them from. It then checks its
own output: no solutions folder and no ``### BEGIN SOLUTION`` line (but in this script), or it fails.

Executing gives the committed student notebooks their outputs ("Not attempted yet" under each check),
which ``pytest --nbval`` then compares in strict mode.

Two editions from one source. Each markdown cell of an instructor notebook holds the English text, a
line ``<!-- zh -->``, then the Chinese text (as the lessons' sources do, see tools/nbbuild.py). The
English student notebooks get the first part, the Chinese ones (``exercises/zh/ex0N_*.ipynb`` and
``exercises/zh/build_your_own/``) the second; code cells are the same in both. A Chinese notebook is
executed in ``exercises/zh/...`` with ``RALPH_LANG=zh``, so ``check()`` and the cells' ``lang.tr`` print
Chinese. A markdown cell without exactly one ``<!-- zh -->`` line, or with an empty part, stops the
script before anything is written, naming the notebook and the cell.

Markers, nbgrader style, in code cells::

    def should_stop(statuses: list[str], max_pitfall_depth: int) -> str | None:
        ### BEGIN SOLUTION
        ...reference code...
        ### END SOLUTION

The block becomes ``# YOUR CODE HERE`` and ``raise NotImplementedError()`` at the marker's indentation.
When the student must write the whole function (signature, decorator, docstring), the block ends with a
starter written as comments after ``### STARTER``; the student version gets those lines uncommented::

    ### BEGIN SOLUTION
    @tool
    def lookup(order_id: str) -> dict: ...
    ### STARTER
    # def lookup(order_id):
    #     # YOUR CODE HERE
    #     raise NotImplementedError()
    ### END SOLUTION

Left out on purpose: nbgrader's grading, cell locking and hidden tests; ``ralph_mini.exercise`` checks.
"""

import argparse
import copy
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import nbformat
from nbclient import NotebookClient

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tools"))
from nbbuild import LANGUAGES, EditionError, in_edition, split_languages  # noqa: E402  (one rule per edition)
from nbrun import patched_environ  # noqa: E402

SOLUTION_DIRS = (HERE / "solutions", HERE / "build_your_own" / "solutions")  # the core five, the build track
# not in the students' handout (see --handout)
LEFT_OUT = ("exercises/solutions/", "exercises/build_your_own/solutions/", "tests/", ".ci/")
BEGIN, STARTER, END = "### BEGIN SOLUTION", "### STARTER", "### END SOLUTION"


class MarkerError(ValueError):
    """Unbalanced or misplaced solution markers; the message names the line."""


def strip_solutions(source: str) -> str:
    """Replace every solution block in one cell's source by its starter (see the module docstring)."""
    out: list[str] = []
    block: list[str] | None = None  # lines after ### STARTER, while inside a block
    indent, in_starter = "", False
    for number, line in enumerate(source.splitlines(), 1):
        marker = line.strip()
        if marker == BEGIN:
            if block is not None:
                raise MarkerError(f"line {number}: {BEGIN} inside another solution block")
            block, indent, in_starter = [], line[: len(line) - len(line.lstrip())], False
        elif block is None:
            if marker in (STARTER, END):
                raise MarkerError(f"line {number}: {marker} without {BEGIN}")
            out.append(line)
        elif marker == STARTER:
            in_starter = True
        elif marker == END:
            out += block or [f"{indent}# YOUR CODE HERE", f"{indent}raise NotImplementedError()"]
            block = None
        elif in_starter:
            block.append(uncomment(line, indent, number))
    if block is not None:
        raise MarkerError(f"{BEGIN} without {END}")
    return "\n".join(out)


def uncomment(line: str, indent: str, number: int) -> str:
    """'    #     raise X' at indent '    ' -> '        raise X'; a starter line must be a comment."""
    body = line[len(indent) :] if line.startswith(indent) else line.lstrip()
    if not body.startswith("#"):
        raise MarkerError(f"line {number}: starter lines must be comments ('# ...'), got {line!r}")
    body = body[2:] if body.startswith("# ") else body[1:]
    return indent + body if body else ""


def student_notebook(
    instructor: nbformat.NotebookNode, language: str = "en", name: str = "the notebook"
) -> nbformat.NotebookNode:
    """A copy in one language with every solution stripped and every output cleared; cell ids are kept
    (clean diffs). A markdown cell without both languages raises EditionError naming ``name`` and it."""
    notebook = copy.deepcopy(instructor)
    for number, cell in enumerate(notebook.cells):
        if cell.cell_type == "markdown":
            cell.source = split_languages(cell.source, f"{name}, cell {number} ({cell.get('id')})")[language]
            continue
        if cell.cell_type != "code":
            continue
        cell.source = strip_solutions(cell.source)
        cell.outputs = []
        cell.execution_count = None
        cell.metadata.pop("execution", None)
    return notebook


def execute(notebook: nbformat.NotebookNode, workdir: Path, language: str = "en", timeout: int = 120) -> None:
    """Run every cell in a fresh kernel, in ``workdir``, so the saved outputs are real.

    The kernel gets ``RALPH_LANG=language`` (as a student's learns it from ``exercises/zh/.ralph_lang``),
    so a shell that set another language cannot change an edition. No timing metadata: a re-run changes
    only what the code prints, which keeps diffs readable.
    """
    resources = {"metadata": {"path": str(workdir)}}
    with patched_environ({"RALPH_LANG": language}):  # the kernel inherits this process's environment
        NotebookClient(notebook, timeout=timeout, record_timing=False, resources=resources).execute()


def instructor_notebooks(solutions: Path | None = None) -> list[Path]:
    """The instructor notebooks in ``solutions``; by default those of every folder in SOLUTION_DIRS."""
    folders = [solutions] if solutions is not None else SOLUTION_DIRS
    return [path for folder in folders for path in sorted(folder.glob("ex*.ipynb"))]


def student_path(instructor: Path, out: Path = HERE, language: str = "en") -> Path:
    """Where the student version of an instructor notebook goes: the folder above its solutions folder,
    under ``out`` (the Chinese edition under ``out/zh``). solutions/ex01_tool.ipynb -> ex01_tool.ipynb or
    zh/ex01_tool.ipynb; build_your_own/solutions/ex06_... -> build_your_own/ex06_... or
    zh/build_your_own/ex06_..."""
    folder = instructor.resolve().parent.parent
    return in_edition(out / folder.relative_to(HERE) / instructor.name, out, language)


def student_editions(path: Path, instructor: nbformat.NotebookNode) -> dict[str, nbformat.NotebookNode]:
    """Both editions of one instructor notebook, {language: student notebook}."""
    name = str(path.resolve().relative_to(ROOT)) if path.resolve().is_relative_to(ROOT) else str(path)
    return {language: student_notebook(instructor, language, name) for language in LANGUAGES}


def handout_files(root: Path = ROOT) -> list[str]:
    """The committed files students get: ``git ls-files`` minus ``LEFT_OUT`` (needs a git checkout)."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, text=True)
    if listed.returncode != 0:
        raise SystemExit(f"--handout needs a git checkout of the kit at {root}: {listed.stderr.strip()}")
    return [name for name in listed.stdout.split("\0") if name and not name.startswith(LEFT_OUT)]


def solution_leaks(folder: Path) -> list[str]:
    """Every path in ``folder`` that is a solutions folder, or has a ``### BEGIN SOLUTION`` marker line.

    Only this script itself may hold the marker (its docstring explains it); a notebook counts when one
    of its cells has the marker on a line of its own.
    """
    leaks = []
    for path in sorted(folder.rglob("*")):
        if path.is_dir() and path.name == "solutions":
            leaks.append(str(path.relative_to(folder)))
        if not path.is_file() or path.name == Path(__file__).name:
            continue
        if path.suffix == ".ipynb":
            sources = [cell.source for cell in nbformat.read(path, as_version=4).cells]
        else:
            sources = [path.read_text(encoding="utf-8", errors="replace")]
        if any(line.strip() == BEGIN for source in sources for line in source.splitlines()):
            leaks.append(str(path.relative_to(folder)))
    return leaks


def write_handout(target: Path, root: Path = ROOT) -> int:
    """Copy the students' files into ``target`` (a new folder, or a .zip); return how many files."""
    with tempfile.TemporaryDirectory(prefix="ralph-handout-") as tmp:
        staging = Path(tmp) / "ralph_mini"
        names = handout_files(root)
        for name in names:
            (staging / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(root / name, staging / name)
        leaks = solution_leaks(staging)
        if leaks:
            raise SystemExit(f"solutions would leak into the handout, not written: {leaks}")
        if target.suffix == ".zip":
            with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
                for name in names:
                    archive.write(staging / name, f"ralph_mini/{name}")
        elif target.exists():
            raise SystemExit(f"{target} exists: give a new folder (or a .zip) for the handout")
        else:
            shutil.copytree(staging, target)
    return len(names)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-execute", action="store_true", help="leave outputs empty")
    parser.add_argument("--instructor", action="store_true", help="re-execute the instructor notebooks")
    parser.add_argument("--out", type=Path, default=HERE, help="where to write (default: exercises/)")
    parser.add_argument("--handout", type=Path, help="write the students' repository (no solutions) here")
    args = parser.parse_args(argv)
    if args.handout:
        count = write_handout(args.handout)
        print(f"wrote {args.handout}: {count} files, no exercises/solutions/, no tests/, no .git")
        return 0
    sources = {path: nbformat.read(path, as_version=4) for path in instructor_notebooks()}
    try:  # every notebook's both editions first: a cell without its Chinese stops the script here
        editions = {path: student_editions(path, instructor) for path, instructor in sources.items()}
    except (EditionError, MarkerError) as err:
        raise SystemExit(f"not written: {err}") from err
    for path, instructor in sources.items():
        if args.instructor:
            execute(instructor, path.parent)
            nbformat.write(instructor, path)
            print(f"ran   {path}")
        for language, notebook in editions[path].items():
            target = student_path(path, args.out, language)
            target.parent.mkdir(parents=True, exist_ok=True)
            if not args.no_execute:
                execute(notebook, target.parent, language)
            nbformat.write(notebook, target)
            print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
