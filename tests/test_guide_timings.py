"""The workshop still fits: one source for every minute the guide and the exercises state (issue 25).

``tools/lesson_sizes.py`` derives each notebook's minutes from its size at stated rates, and writes the
instructor guide's minutes table (which keeps the run times measured last), its plans, the minutes
columns of its exercise tables and each exercise's "About N minutes" line. These tests fail when any of
them drifts from the notebooks as they are now (the fix: ``python tools/lesson_sizes.py --write``), when a
plan outgrows its time or leaves out a section that is gone, and check that the check can fail.
"""

import sys
from dataclasses import replace
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import lesson_sizes  # noqa: E402

GUIDE_TEXT = lesson_sizes.GUIDE.read_text(encoding="utf-8")
SIZES = lesson_sizes.sizes_from_guide(GUIDE_TEXT)
FIX = "run: python tools/lesson_sizes.py --write (or --write --no-execute to keep the run times)"


def test_the_guide_and_the_exercises_agree_with_the_sizes():
    problems = lesson_sizes.drift(GUIDE_TEXT, SIZES)
    assert problems == [], "\n".join(problems) + "\n" + FIX


def test_the_guide_keeps_a_row_for_every_notebook():
    """Its run s column is where the run times live; a notebook that did not run when measured shows '-'."""
    runs = lesson_sizes.guide_run_seconds(GUIDE_TEXT)
    assert [p.name for p in lesson_sizes.notebooks()] == list(runs), FIX
    assert all(seconds is None or seconds >= 0 for seconds in runs.values())


def test_the_plans_cover_what_they_promise():
    """The 3-hour plan: lessons 01-06 and the five core exercises; the build track's session: ex06-ex10."""
    names = {plan: {part.notebook for part in parts} for plan, (_, parts) in lesson_sizes.PLANS.items()}
    lessons = {p.name for p in lesson_sizes.notebooks() if p.name[:2] in ("01", "02", "03", "04", "05", "06")}
    core = {p.name for p in (ROOT / "exercises").glob("ex0[1-5]_*.ipynb")}
    track = {p.name for p in lesson_sizes.TRACK.glob("ex*.ipynb")} - set(lesson_sizes.OPTIONAL)
    assert len(lessons) == 6 and len(core) == 5 and len(track) == 5
    assert lessons | core <= names["3-hour plan"]
    assert track <= names["build-track plan"]
    for plan, (limit, parts) in lesson_sizes.PLANS.items():
        total = lesson_sizes.plan_table(parts, {s.name: s for s in SIZES})[1]
        assert total <= limit, f"the {plan} takes {total} minutes of {limit}"


def test_minutes_follow_the_stated_rates():
    size = lesson_sizes.Size("x.ipynb", code_cells=10, words=300, solution_lines=4, run_s=60)
    assert size.minutes == pytest.approx(300 / 150 + 10 * 0.5 + 60 / 60 + 4 * 0.75)  # 11
    assert [lesson_sizes.whole(m) for m in (10.49, 10.5, 11.2)] == [10, 11, 11]


def test_the_capstone_counts_no_solution_lines_it_only_pastes():
    capstone = next(s for s in SIZES if s.name == "ex10_capstone.ipynb")
    instructor = nbformat.read(lesson_sizes.TRACK / "solutions" / "ex10_capstone.ipynb", as_version=4)
    assert capstone.solution_lines == 0
    assert sum(lesson_sizes.solution_lines(c.source) for c in instructor.cells) > 50


def test_a_lesson_that_grew_is_found_everywhere_it_counts():
    """Lesson 01 is in the 3-hour plan at full length: 1500 more words are 10 more minutes there too."""
    grown = [replace(s, words=s.words + 1500) if s.name == "01_bare_react.ipynb" else s for s in SIZES]
    problems = lesson_sizes.drift(GUIDE_TEXT, grown)
    assert any("minutes table says '| `01_bare_react.ipynb`" in p for p in problems), problems
    assert any("3-hour plan says" in p and "**01 bare ReAct**" in p for p in problems), problems


def test_an_exercise_that_grew_is_found_in_its_tables_and_its_notebooks():
    longer = [replace(s, solution_lines=s.solution_lines + 8) if s.name == "ex03_template_validator.ipynb" else s
              for s in SIZES]  # fmt: skip
    rows = lesson_sizes.minutes_cells(GUIDE_TEXT, longer)
    assert sum("`ex03_template_validator.ipynb`" in line for line, _ in rows) == 2  # both tables
    minutes = lesson_sizes.whole(next(s.minutes for s in longer if s.name == "ex03_template_validator.ipynb"))
    problems = "\n".join(lesson_sizes.drift(GUIDE_TEXT, longer))
    for path in (
        "exercises/ex03_template_validator.ipynb",
        "exercises/solutions/ex03_template_validator.ipynb",
    ):
        assert f"{path} says 'About {minutes - 6} minutes.', not 'About {minutes} minutes.'" in problems
    fixed = lesson_sizes.minutes_cells(GUIDE_TEXT, longer, fix=True)
    assert lesson_sizes.minutes_cells(fixed, longer) == []


def test_a_plan_naming_a_section_that_is_gone_says_so():
    part = lesson_sizes.Part("**04 memory**", "04_memory.ipynb", drop=("A section nobody wrote",))
    with pytest.raises(ValueError, match="04_memory.ipynb has no section starting 'A section nobody wrote'"):
        lesson_sizes.part_size(part, {s.name: s for s in SIZES})


def test_a_guide_without_a_block_is_told_where():
    text = GUIDE_TEXT.replace("<!-- lesson_sizes.py: 90-minute plan -->", "")
    assert "the guide has no block '<!-- lesson_sizes.py: 90-minute plan -->'" in lesson_sizes.drift(
        text, SIZES
    )
