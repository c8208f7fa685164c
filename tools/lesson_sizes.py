"""How long each lesson and exercise takes in a workshop, derived from its size at stated rates.

What it measures, per notebook (the eight lessons, then the five student exercise notebooks):

- ``code cells`` and ``prose words`` (words in markdown cells, split on white space);
- ``run s``: wall seconds to execute the notebook top to bottom with nbclient, in a temporary copy of
  its folder (the committed files are never touched), offline model, on this machine;
- for exercises, ``solution lines``: non-blank, non-comment lines between ``### BEGIN SOLUTION`` and
  ``### STARTER`` / ``### END SOLUTION`` in ``exercises/solutions/`` (what the student has to write).

Minutes are then derived at these rates, which are assumptions, stated so that they can be argued with:

- ``WORDS_PER_MIN``: the prose is read aloud or read along at 150 words a minute (a lecturer's pace;
  slower than silent reading, since the text is technical and read next to code);
- ``SECONDS_PER_CELL``: 30 s per code cell to run it, look at its output and say one sentence;
- ``MINUTES_PER_SOLUTION_LINE``: a first attempt at an exercise takes 0.75 minutes per line of
  reference code, spec reading and fixing what the checker rejects included, on top of reading its
  prose and running its cells. Calibrated on one observation: a first attempt at exercise 3 (31 lines)
  takes 25-35 minutes; 0.75 puts it at 31.

    python tools/lesson_sizes.py               # execute each notebook once (about 2 minutes on 2 cores)
    python tools/lesson_sizes.py --no-execute  # sizes only, the run column left out
    python tools/lesson_sizes.py --sections notebooks/04_memory.ipynb  # minutes per ## section, no run

It prints a markdown table.
"""

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbrun import ROOT, lesson_notebooks, run_copy

WORDS_PER_MIN = 150
SECONDS_PER_CELL = 30
MINUTES_PER_SOLUTION_LINE = 0.75
BEGIN, STARTER, END = "### BEGIN SOLUTION", "### STARTER", "### END SOLUTION"


@dataclass(frozen=True)
class Size:
    """One notebook's size and the minutes derived from it."""

    name: str
    code_cells: int
    words: int
    solution_lines: int
    run_s: float | None

    @property
    def minutes(self) -> float:
        seconds = self.words / WORDS_PER_MIN * 60 + self.code_cells * SECONDS_PER_CELL + (self.run_s or 0)
        return seconds / 60 + self.solution_lines * MINUTES_PER_SOLUTION_LINE


def solution_lines(source: str) -> int:
    """Lines of reference code a student writes: inside a solution block, before its starter."""
    count, inside = 0, False
    for line in source.splitlines():
        text = line.strip()
        if text == BEGIN:
            inside = True
        elif text in (STARTER, END):
            inside = False
        elif inside and text and not text.startswith("#"):
            count += 1
    return count


def measure(path: Path, execute: bool) -> Size:
    notebook = nbformat.read(path, as_version=4)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    prose = [cell.source for cell in notebook.cells if cell.cell_type == "markdown"]
    words = sum(len(re.findall(r"\S+", text)) for text in prose)
    reference = ROOT / "exercises" / "solutions" / path.name
    lines = 0
    if path.parent.name == "exercises" and reference.exists():
        lines = sum(solution_lines(cell.source) for cell in nbformat.read(reference, as_version=4).cells)
    run_s = run_copy(path, env={"RALPH_MODEL": "offline"})[0] if execute else None
    return Size(path.name, len(code), words, lines, run_s)


def table(sizes: list[Size]) -> str:
    lines = [
        "| notebook | code cells | prose words | solution lines | run s | minutes |",
        "|---|---|---|---|---|---|",
    ]
    for s in sizes:
        run = f"{s.run_s:.0f}" if s.run_s is not None else "-"
        lines.append(
            f"| `{s.name}` | {s.code_cells} | {s.words} | {s.solution_lines or '-'} | {run} "
            f"| {s.minutes:.0f} |"
        )
    return "\n".join(lines)


def sections(path: Path) -> list[Size]:
    """The notebook cut at its ``##`` headings (what comes before the first is the opening), each part
    sized at the same rates, without run time: what a shortened walk-through keeps or leaves out."""
    parts: list[list] = [["opening", 0, 0]]
    for cell in nbformat.read(path, as_version=4).cells:
        heading = re.search(r"^## (.+)$", cell.source, re.M) if cell.cell_type == "markdown" else None
        if heading:
            parts.append([heading[1].strip(), 0, 0])
        if cell.cell_type == "code":
            parts[-1][1] += 1
        else:
            parts[-1][2] += len(re.findall(r"\S+", cell.source))
    return [Size(name, cells, words, 0, None) for name, cells, words in parts]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-execute", action="store_true", help="sizes only, no run time")
    parser.add_argument("--sections", type=Path, help="one notebook's minutes per ## section")
    args = parser.parse_args(argv)
    if args.sections:
        print(table(sections(args.sections)).replace("| notebook |", "| section |"))
        return 0
    sizes = []
    for path in lesson_notebooks():
        sizes.append(measure(path, execute=not args.no_execute))
        print(f"measured {path.name}", file=sys.stderr)
    print(table(sizes))
    print(
        f"\nrates: {WORDS_PER_MIN} words/min, {SECONDS_PER_CELL} s per code cell, "
        f"{MINUTES_PER_SOLUTION_LINE:g} min per solution line, plus the run time"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
