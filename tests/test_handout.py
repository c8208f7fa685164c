"""The students' handout (``make_student_version.py --handout``) carries no solution code.

Why a test: the repository ships ``exercises/solutions/``; the handout is how an instructor gives
students the kit without them. Checked three ways: no solutions folder, no solution marker line, and
no line of solution code (an instructor notebook's solution block) in any handed-out file. The Chinese
student notebooks (``exercises/zh/``) go out with the English ones, their solutions stay in.
"""

import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "exercises"))
import make_student_version  # noqa: E402

in_git = subprocess.run(["git", "rev-parse"], cwd=ROOT, capture_output=True).returncode == 0
pytestmark = pytest.mark.skipif(not in_git, reason="--handout lists files with git: needs a git checkout")


def reference_lines() -> set[str]:
    """Lines only the solutions have: inside a solution block of an instructor notebook, before any
    starter, longer than 20 characters, not comments, and not also in the code students are given
    (the exercises' given cells, the kit's package and the lesson sources, which the solutions reuse
    idioms from, such as ``@tool(latency_s=0.3, core=False)``)."""
    solution, given, inside = set(), set(), False
    for path in make_student_version.instructor_notebooks():
        for cell in nbformat.read(path, as_version=4).cells:
            for line in cell.source.splitlines():
                text = line.strip()
                if text == make_student_version.BEGIN:
                    inside = True
                elif text in (make_student_version.STARTER, make_student_version.END):
                    inside = False
                elif len(text) > 20 and not text.startswith("#"):
                    (solution if inside else given).add(text)
    for path in [*ROOT.glob("ralph_mini/*.py"), *ROOT.glob("notebooks/src/*.py")]:
        for line in path.read_text(encoding="utf-8").splitlines():
            given.update(
                (line.strip(), line.split("  # ")[0].strip())
            )  # a taught line, with its comment or not
    return solution - given


def readable_text(path: Path) -> str:
    """A file's text; for a notebook its cells' sources (the JSON escapes quotes)."""
    if path.suffix == ".ipynb":
        return "\n".join(cell.source for cell in nbformat.read(path, as_version=4).cells)
    return path.read_text(encoding="utf-8", errors="replace")


def test_the_leak_check_finds_solution_code_where_it_is():
    reference = reference_lines()
    for path in make_student_version.instructor_notebooks():
        assert [line for line in reference if line in readable_text(path)], path.name


def test_the_handout_folder_has_no_solution_code(tmp_path):
    target = tmp_path / "handout"
    count = make_student_version.write_handout(target)
    files = [p for p in target.rglob("*") if p.is_file()]
    assert len(files) == count > 20
    assert (target / "exercises" / "ex03_template_validator.ipynb").exists()
    assert (target / "notebooks" / "01_bare_react.ipynb").exists()
    assert not (target / "exercises" / "solutions").exists()
    assert not (target / ".git").exists() and not (target / "tests").exists()
    assert make_student_version.solution_leaks(target) == []
    reference = reference_lines()
    assert len(reference) > 20  # the check below has something to find
    # not ralph_mini/: its hints are near-answers on purpose (hint(3) shows ex1's signature), and its own
    # functions are what the checkers compare against; the marker check above covers it
    for path in (p for p in files if p.relative_to(target).parts[0] != "ralph_mini"):
        text = readable_text(path)
        found = [line for line in reference if line in text]
        assert not found, f"{path.relative_to(target)} contains reference code: {found[:3]}"


def committed() -> set[str]:
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True)
    return set(listed.stdout.split("\0"))


def chinese_student_notebooks() -> list[str]:
    """exercises/zh/ex01_tool.ipynb, ..., exercises/zh/build_your_own/ex06_react_loop.ipynb, ..."""
    return [
        make_student_version.student_path(path, language="zh").relative_to(ROOT).as_posix()
        for path in make_student_version.instructor_notebooks()
    ]


def test_the_handout_has_the_chinese_student_notebooks():
    """Every committed Chinese student notebook is handed out (a new one counts once it is committed)."""
    names = chinese_student_notebooks()
    assert len(names) == 11 and all(name.startswith("exercises/zh/") for name in names)
    assert not [name for name in names if name.startswith(make_student_version.LEFT_OUT)]
    handed_out = set(make_student_version.handout_files())
    assert [name for name in names if name in committed()] == [name for name in names if name in handed_out]


def test_the_handout_zip_has_the_same_files_and_no_solutions(tmp_path):
    count = make_student_version.write_handout(tmp_path / "kit.zip")
    names = zipfile.ZipFile(tmp_path / "kit.zip").namelist()
    assert len(names) == count
    assert all(name.startswith("ralph_mini/") for name in names)
    assert not [name for name in names if "/solutions/" in name or "/tests/" in name]


def test_a_solution_marker_is_found_and_stops_the_handout(tmp_path):
    (tmp_path / "ex.py").write_text("def f():\n    ### BEGIN SOLUTION\n    return 1\n")
    (tmp_path / "solutions").mkdir()
    assert make_student_version.solution_leaks(tmp_path) == ["ex.py", "solutions"]
