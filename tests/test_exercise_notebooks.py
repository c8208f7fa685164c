"""The exercise notebooks, the core five and the build-your-own track: one source for both versions,
and what a student meets in a kernel.

Instructors edit exercises/solutions/ (and exercises/build_your_own/solutions/); exercises/make_student_version.py writes the student notebooks,
in English (exercises/) and in Chinese (exercises/zh/). These tests keep them honest (the script
reproduces the committed notebooks of both editions cell for cell, the two editions run the same code,
a markdown cell without its Chinese stops the script, the solution cells match the .py modules, every
check is green in the solved notebooks), and check the feedback a student sees when the cell that
defines their function raises.
"""

import ast
import copy
import importlib.util
import sys
from dataclasses import replace
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from wrong_answers import starter_ellipsis, starter_tool

from ralph_mini.exercise import ex1a, ex1b, ex2
from ralph_mini.exercise.checker import COLORS
from ralph_mini.tools import tool

EXERCISES = Path(__file__).resolve().parent.parent / "exercises"
SOLUTIONS = EXERCISES / "solutions"
ZH = EXERCISES / "zh"


def load_script():
    """exercises/make_student_version.py, imported by path: exercises/ is not a package on purpose."""
    spec = importlib.util.spec_from_file_location(
        "make_student_version", EXERCISES / "make_student_version.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


make_student_version = load_script()
sys.path.insert(0, str(EXERCISES.parent / "tools"))
import lesson_sizes  # noqa: E402

# --- a student's cell that raises while defining the function ------------------------------------

BAD_TOOL_CELL = '''@tool
def query_loyalty_points(customer_id) -> dict:
    """Loyalty points and tier of one customer.

    Args:
        customer_id: The customer id, for example "CUST-0042".
    """
    return {}
'''


def run_cell(source: str, path: Path, namespace: dict) -> Exception:
    """Run ``source`` as a notebook cell would (top-level code in a file of its own); return its error."""
    path.write_text(source)
    try:
        exec(compile(source, str(path), "exec"), namespace)
    except Exception as err:
        return err
    raise AssertionError("the cell was expected to raise")


def test_an_error_in_the_cell_that_defines_the_function_is_shown(tmp_path, monkeypatch):
    """@tool refused the student's function, so the name still holds the starter: show that error."""
    error = run_cell(BAD_TOOL_CELL, tmp_path / "cell_3.py", {"tool": tool})
    monkeypatch.setattr(sys, "last_value", error, raising=False)  # what IPython does with an uncaught error
    result = ex1a.check(starter_tool)
    assert not result.passed and result.attempted
    assert result.message == (
        "running the cell that defines query_loyalty_points raised ToolDefinitionError: parameter "
        "'customer_id' of tool 'query_loyalty_points' has no type hint: add one of str, int, float, bool. "
        "So query_loyalty_points is still the starter: fix that error, run the cell without errors, then "
        "run this cell again"
    )
    assert not ex1b.check(starter_tool).attempted  # the error is about another function


def test_a_syntax_error_in_the_defining_cell_is_shown(tmp_path, monkeypatch):
    cell = tmp_path / "cell_5.py"
    error = run_cell("def should_stop(statuses, max_pitfall_depth)\n    return None\n", cell, {})
    monkeypatch.setattr(sys, "last_value", error, raising=False)
    result = ex2.check(starter_ellipsis)
    assert str(result).startswith("Incorrect: running the cell that defines should_stop raised SyntaxError")


def test_an_unrelated_last_error_leaves_not_attempted(tmp_path, monkeypatch):
    error = run_cell("total = 1 / 0\n", tmp_path / "cell_7.py", {})
    monkeypatch.setattr(sys, "last_value", error, raising=False)
    assert not ex1a.check(starter_tool).attempted
    monkeypatch.setattr(sys, "last_value", None)
    assert not ex1a.check(starter_tool).attempted


def test_a_failed_tool_cell_in_a_kernel_shows_its_error_in_the_check_cell():
    """End to end, as a student meets it: the starter ran, then the edited cell raised, then the check."""
    student = nbformat.read(EXERCISES / "ex01_tool.ipynb", as_version=4)
    cells = {cell.id: cell for cell in student.cells}
    bad = nbformat.v4.new_code_cell(BAD_TOOL_CELL)
    student.cells = [cells["cell-01"], cells["cell-03"], bad, cells["cell-04"]]
    NotebookClient(
        student, timeout=120, allow_errors=True, resources={"metadata": {"path": str(EXERCISES)}}
    ).execute()
    assert bad.outputs[0]["ename"] == "ToolDefinitionError"
    assert text_of(student.cells[-1]).startswith(
        "Incorrect: running the cell that defines query_loyalty_points raised ToolDefinitionError: "
        "parameter 'customer_id' of tool 'query_loyalty_points' has no type hint"
    )


# --- one source: instructor notebooks, solution modules and student notebooks ----------------------


def test_strip_solutions_keeps_indentation_and_uncomments_starters():
    source = "def f(x):\n    '''Doc.'''\n    ### BEGIN SOLUTION\n    return x\n    ### END SOLUTION\n"
    assert make_student_version.strip_solutions(source) == (
        "def f(x):\n    '''Doc.'''\n    # YOUR CODE HERE\n    raise NotImplementedError()"
    )
    whole = "### BEGIN SOLUTION\n@tool\ndef g(): ...\n### STARTER\n# def g():\n#     pass\n### END SOLUTION"
    assert make_student_version.strip_solutions(whole) == "def g():\n    pass"
    unclosed, stray_end = "### BEGIN SOLUTION\nx = 1", "### END SOLUTION"
    code_as_starter = "### BEGIN SOLUTION\n### STARTER\nx = 1\n### END SOLUTION"
    for broken in (unclosed, stray_end, code_as_starter):
        with pytest.raises(make_student_version.MarkerError):
            make_student_version.strip_solutions(broken)


def instructor_paths() -> list[Path]:
    return make_student_version.instructor_notebooks(SOLUTIONS)


def test_there_are_five_exercise_notebooks_in_both_versions():
    names = [p.name for p in instructor_paths()]
    stems = ["ex01_tool", "ex02_pitfall_depth", "ex03_template_validator", "ex04_decay", "ex05_budget"]
    assert names == [f"{stem}.ipynb" for stem in stems]
    assert sorted(p.name for p in EXERCISES.glob("ex*.ipynb")) == names
    assert sorted(p.name for p in ZH.glob("ex*.ipynb")) == names  # and the Chinese edition of each
    assert (ZH / ".ralph_lang").read_text(encoding="utf-8").strip() == "zh"


# Every exercise notebook, the core five and the build-your-own track: the script treats them alike.
EVERY = make_student_version.instructor_notebooks()
EDITIONS = [(path, language) for path in EVERY for language in make_student_version.LANGUAGES]


def edition_id(case) -> str:
    return f"{case[0].stem}-{case[1]}"


@pytest.mark.parametrize("path, language", EDITIONS, ids=[edition_id(e) for e in EDITIONS])
def test_the_script_reproduces_the_committed_student_notebook(path, language):
    """Not stale: each edition's committed cells are what the script makes from the instructor notebook."""
    made = make_student_version.student_notebook(nbformat.read(path, as_version=4), language)
    committed = nbformat.read(make_student_version.student_path(path, language=language), as_version=4)
    assert [(c.cell_type, c.source) for c in made.cells] == [(c.cell_type, c.source) for c in committed.cells]
    sources = "\n".join(c.source for c in committed.cells)
    assert "### BEGIN SOLUTION" not in sources and "# YOUR CODE HERE" in sources
    assert "<!-- zh -->" not in sources


@pytest.mark.parametrize("path", EVERY, ids=lambda p: p.stem)
def test_the_two_editions_run_the_same_code_and_differ_in_prose(path):
    english = nbformat.read(make_student_version.student_path(path), as_version=4).cells
    chinese = nbformat.read(make_student_version.student_path(path, language="zh"), as_version=4).cells
    assert [(c.cell_type, c.get("id")) for c in english] == [(c.cell_type, c.get("id")) for c in chinese]
    assert [c.source for c in english if c.cell_type == "code"] == [
        c.source for c in chinese if c.cell_type == "code"
    ]
    prose = [(e.source, z.source) for e, z in zip(english, chinese, strict=True) if e.cell_type == "markdown"]
    assert all(e != z and is_chinese(z) and not is_chinese(e) for e, z in prose)


@pytest.mark.parametrize("path, language", EDITIONS, ids=[edition_id(e) for e in EDITIONS])
def test_committed_student_notebook_shows_not_attempted(path, language):
    committed = nbformat.read(make_student_version.student_path(path, language=language), as_version=4)
    checks = [c for c in committed.cells if c.cell_type == "code" and ".check(" in c.source]
    assert checks and all(COLORS["not attempted"] in html_of(c) for c in checks)  # the colour, any language
    if language == "en":
        assert all(text_of(c).startswith("Not attempted yet: ") for c in checks)


# --- a markdown cell must carry both languages ------------------------------------------------------


def with_markdown(source: str) -> nbformat.NotebookNode:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell("x = 1"), nbformat.v4.new_markdown_cell(source)]
    notebook.cells[1].id = "cell-01"
    return notebook


@pytest.mark.parametrize(
    "source, says",
    [
        ("## Your turn\n\nWrite it.", "has no '<!-- zh -->' line"),
        ("## Your turn\n\n<!-- zh -->\n\n## 轮到你了\n\n<!-- zh -->\n\n## 再来", "has 2 '<!-- zh -->' line"),
        ("## Your turn\n\n<!-- zh -->\n\n", "has no zh text"),
        ("<!-- zh -->\n\n## 轮到你了", "has no en text"),
    ],
    ids=["no marker", "two markers", "no chinese", "no english"],
)
def test_a_markdown_cell_without_both_languages_stops_the_build(source, says):
    with pytest.raises(make_student_version.EditionError, match=says) as raised:
        make_student_version.student_notebook(with_markdown(source), "en", "exercises/solutions/ex99_x.ipynb")
    assert "exercises/solutions/ex99_x.ipynb, cell 1 (cell-01)" in str(raised.value)


def test_the_script_fails_before_writing_anything_and_names_the_cell(tmp_path, monkeypatch):
    """End to end: one English-only cell in one instructor notebook, and no notebook is written."""
    solutions = tmp_path / "solutions"
    solutions.mkdir()
    good = nbformat.read(SOLUTIONS / "ex02_pitfall_depth.ipynb", as_version=4)
    nbformat.write(good, solutions / "ex02_pitfall_depth.ipynb")
    bad = nbformat.read(SOLUTIONS / "ex04_decay.ipynb", as_version=4)
    bad.cells[2].source = bad.cells[2].source.split("<!-- zh -->")[0].strip()
    nbformat.write(bad, solutions / "ex04_decay.ipynb")
    monkeypatch.setattr(make_student_version, "SOLUTION_DIRS", (solutions,))
    monkeypatch.setattr(make_student_version, "HERE", tmp_path)
    with pytest.raises(SystemExit, match=r"ex04_decay.ipynb, cell 2 \(cell-02\) has no '<!-- zh -->' line"):
        make_student_version.main(["--no-execute", "--out", str(tmp_path / "out")])
    assert not (tmp_path / "out").exists()
    bad.cells[2].source = good.cells[0].source  # both languages again: the same run writes both editions
    nbformat.write(bad, solutions / "ex04_decay.ipynb")
    make_student_version.main(["--no-execute", "--out", str(tmp_path / "out")])
    assert sorted(p.relative_to(tmp_path / "out").as_posix() for p in (tmp_path / "out").rglob("*.ipynb")) == [
        "ex02_pitfall_depth.ipynb", "ex04_decay.ipynb", "zh/ex02_pitfall_depth.ipynb", "zh/ex04_decay.ipynb"
    ]  # fmt: skip


# --- the Chinese guide's minutes (tools/lesson_sizes.py --lang zh) -----------------------------------


def test_the_chinese_guide_and_exercises_agree_with_their_sizes():
    """exercises/zh/README.md and each Chinese exercise's "约 N 分钟。", as tests/test_guide_timings.py
    checks the English ones. The fix: python tools/lesson_sizes.py --lang zh --write --no-execute."""
    text = lesson_sizes.GUIDES["zh"].read_text(encoding="utf-8")
    problems = lesson_sizes.drift(text, lesson_sizes.sizes_from_guide(text, "zh"), "zh")
    assert problems == [], "\n".join(problems)


def test_chinese_prose_is_read_by_the_character():
    assert lesson_sizes.prose("用 `query_database` 查询 A123，再回答。", "zh") == (2, 6)
    assert lesson_sizes.prose("Use `query_database` for A123.", "en") == (4, 0)
    size = lesson_sizes.Size("x.ipynb", code_cells=0, words=150, solution_lines=0, run_s=None, chars=600)
    assert size.minutes == pytest.approx(600 / lesson_sizes.CHARS_PER_MIN + 1) == 3


def test_a_chinese_exercise_that_grew_is_found_in_its_notebooks():
    text = lesson_sizes.GUIDES["zh"].read_text(encoding="utf-8")
    sizes = lesson_sizes.sizes_from_guide(text, "zh")
    longer = [replace(s, chars=s.chars + 3000) if s.name == "ex04_decay.ipynb" else s for s in sizes]
    problems = "\n".join(lesson_sizes.drift(text, longer, "zh"))
    minutes = lesson_sizes.whole(next(s.minutes for s in longer if s.name == "ex04_decay.ipynb"))
    for path in ("exercises/zh/ex04_decay.ipynb", "exercises/solutions/ex04_decay.ipynb"):
        assert f"{path} says '约 {minutes - 10} 分钟。', not '约 {minutes} 分钟。'" in problems
    assert "minutes table says '| `ex04_decay.ipynb`" in problems


def test_a_chinese_edition_goes_under_zh():
    core, track = (
        SOLUTIONS / "ex01_tool.ipynb",
        EXERCISES / "build_your_own" / "solutions" / "ex06_react_loop.ipynb",
    )
    assert make_student_version.student_path(core, language="zh") == ZH / "ex01_tool.ipynb"
    assert (
        make_student_version.student_path(track, language="zh")
        == ZH / "build_your_own" / "ex06_react_loop.ipynb"
    )


def reference_functions(path: Path) -> dict[str, str]:
    """The solution module's functions; the capstone has no module of its own and pastes the track's."""
    own = path.with_suffix(".py")
    modules = [own] if own.exists() else sorted(path.parent.glob("ex*.py"))
    trees = [ast.parse(module.read_text()) for module in modules]
    return {n.name: code_of(n) for tree in trees for n in tree.body if isinstance(n, ast.FunctionDef)}


@pytest.mark.parametrize("path", EVERY, ids=lambda p: p.stem)
def test_solution_cells_match_the_solution_module(path):
    """The reference code lives twice (notebook and .py); this keeps the two the same."""
    notebook = nbformat.read(path, as_version=4)
    in_module, found = reference_functions(path), 0
    for cell in notebook.cells:
        if "### BEGIN SOLUTION" in cell.source:
            for node in ast.parse(cell.source).body:
                if isinstance(node, ast.FunctionDef):
                    assert code_of(node) == in_module[node.name], node.name
                    found += 1
    assert found >= 1


@pytest.mark.parametrize("path", EVERY, ids=lambda p: p.stem)
def test_solved_notebook_runs_with_every_check_green(path):
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(notebook, timeout=300, resources={"metadata": {"path": str(path.parent)}}).execute()
    checks = [c for c in notebook.cells if c.cell_type == "code" and ".check(" in c.source]
    assert checks
    for cell in checks:
        assert text_of(cell).startswith("Correct: "), text_of(cell)


def code_of(function: ast.FunctionDef) -> str:
    """Decorators, signature and body, without the docstring (the notebook's is the starter's)."""
    function = copy.deepcopy(function)
    first = function.body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
        function.body = function.body[1:]
    return ast.dump(function)


def text_of(cell) -> str:
    """The text/plain of a cell's result (what ``str(CheckResult)`` gives)."""
    return "".join(o.get("data", {}).get("text/plain", "") for o in cell.outputs)


def html_of(cell) -> str:
    """The text/html of a cell's result (a check's coloured box)."""
    return "".join(o.get("data", {}).get("text/html", "") for o in cell.outputs)


def is_chinese(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)
