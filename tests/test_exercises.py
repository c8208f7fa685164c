"""Exercise checkers (ralph_mini/exercise/) and the rules they judge by.

A checker is trusted when it accepts the reference solution, says "Not attempted yet" to the starter,
and rejects typical wrong answers with a message that names the mistake (tests/wrong_answers.py).
The notebooks, and what a student meets in a kernel, are tested in tests/test_exercise_notebooks.py.
"""

import functools
import importlib.util
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import given
from hypothesis import strategies as st
from wrong_answers import STARTERS, WRONG, assert_rejected
from wrong_lessons import validate_correct_copy

import ralph_mini.exercise as exercise
from ralph_mini.exercise import (
    CACHE_HIT,
    DB_MISS,
    FRESH_PENDING,
    CheckResult,
    Exercise,
    budgeted_selection,
    count_words,
    ex1a,
    ex1b,
    ex2,
    ex3,
    ex4,
    ex5,
    is_attempted,
    weight_closed_form,
)
from ralph_mini.tools import Tool, tool

SOLUTIONS = Path(__file__).resolve().parent.parent / "exercises" / "solutions"


def load(name: str) -> ModuleType:
    """Import a solution module by path: exercises/solutions is not a package on purpose."""
    spec = importlib.util.spec_from_file_location(f"solution_{name}", SOLUTIONS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


REFERENCE = [
    (ex1a, "ex01_tool", "query_loyalty_points"),
    (ex1b, "ex01_tool", "compress"),
    (ex2, "ex02_pitfall_depth", "should_stop"),
    (ex3, "ex03_template_validator", "validate_reflection"),
    (ex4, "ex04_decay", "experience_weight"),
    (ex5, "ex05_budget", "select_lessons"),
]


# --- the checkers ---------------------------------------------------------------------------------


@pytest.mark.parametrize("ex, module, name", REFERENCE, ids=[r[0].name for r in REFERENCE])
def test_checker_accepts_the_reference_solution(ex, module, name):
    result = ex.check(getattr(load(module), name))
    assert result.passed and result.attempted, result.message
    assert str(result).startswith("Correct: ")


@pytest.mark.parametrize("name, starter", STARTERS, ids=[s[0] for s in STARTERS])
def test_checker_says_not_attempted_to_the_starter(name, starter, monkeypatch):
    monkeypatch.delattr(sys, "last_value", raising=False)  # no failed cell in this session
    result = getattr(exercise, name).check(starter)
    assert not result.passed and not result.attempted
    assert str(result).startswith("Not attempted yet: ")


def label(answer) -> str:
    """'stop_at_the_limit', or for a tool the factory that built it: 'key_error_on_unknown'."""
    function = answer.function if isinstance(answer, Tool) else answer
    return function.__qualname__.split(".")[0]


@pytest.mark.parametrize("name, answer, words", WRONG, ids=[f"{w[0]}-{label(w[1])}" for w in WRONG])
def test_checker_rejects_a_wrong_answer_and_names_the_problem(name, answer, words):
    assert_rejected(getattr(exercise, name).check(answer), words)


def test_every_exercise_rejects_at_least_three_wrong_answers():
    counts = Counter(name for name, _, _ in WRONG)
    assert {name: n >= 3 for name, n in counts.items()} == dict.fromkeys(
        ["ex1a", "ex1b", "ex2", "ex3", "ex4", "ex5"], True
    )


def test_a_second_implementation_of_the_validator_spec_passes():
    """tests/wrong_answers.py has its own correct validator: the spec is clear enough to match twice."""
    assert ex3.check(validate_correct_copy).passed


def test_an_exception_is_reported_with_its_type_and_message():
    def should_stop(statuses, max_pitfall_depth):
        return statuses[99]

    result = ex2.check(should_stop)
    assert not result.passed and result.attempted
    assert result.message == (
        "for statuses=['ok', 'ok'] and max_pitfall_depth=3, your function raised IndexError: "
        "list index out of range"
    )


def test_a_value_instead_of_a_function_is_explained():
    result = ex1b.check("3 fields: status=paid")
    assert not result.passed
    assert "pass the function itself, as in ex1b.check(compress)" in result.message


def test_not_attempted_is_detected_through_wrappers_and_tools():
    def decorate(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            return func(*args, **kwargs)

        return wrapper

    @decorate
    def stub(x):
        """Only a docstring and a comment."""
        # YOUR CODE HERE

    @tool
    def stub_tool(customer_id: str) -> dict:
        """A stub.

        Args:
            customer_id: The id.
        """
        raise NotImplementedError("later")

    @tool
    def real_tool(customer_id: str) -> dict:
        """Real.

        Args:
            customer_id: The id.
        """
        return {"id": customer_id}

    assert not is_attempted(stub) and not is_attempted(stub_tool)
    assert is_attempted(real_tool) and is_attempted(lambda x: x) and is_attempted(len)


def test_results_show_as_text_and_coloured_html():
    correct, wrong = CheckResult(True, "all good"), CheckResult(False, "for x=1, you returned 2")
    waiting = CheckResult(False, "write it", attempted=False)
    assert [str(r) for r in (correct, wrong, waiting)] == [
        "Correct: all good",
        "Incorrect: for x=1, you returned 2",
        "Not attempted yet: write it",
    ]
    assert "#1a7f37" in correct._repr_html_() and "<b style='color:#1a7f37'>Correct:</b>" in (
        correct._repr_html_()
    )
    assert "#cf222e" in wrong._repr_html_() and "#9a6700" in waiting._repr_html_()
    assert "&lt;b&gt;" in CheckResult(False, "<b>")._repr_html_()  # student text is escaped


def test_hints_are_tiered_and_clamped():
    assert str(ex4.hint()).startswith("Hint 1/3: ")
    assert ex4.hint(3).text == ex4.hints[2] != ex4.hints[0]
    assert str(ex4.hint(9)).startswith("Hint 3/3: ") and str(ex4.hint(0)).startswith("Hint 1/3: ")
    for ex, _, _ in REFERENCE:
        assert 2 <= len(ex.hints) <= 3


def test_solution_shows_the_reference_source_or_says_it_is_absent(tmp_path):
    shown = ex1a.solution()
    assert shown.code and shown.text.startswith("@tool(latency_s=0.3, core=False)\ndef query_loyalty_points(")
    assert "def compress" not in shown.text  # one function, not the whole file
    assert ex5.solution().text.startswith("def select_lessons(")
    missing = Exercise("ex9", "f", "nope.py", cases=list, hints=("h",), solutions_dir=tmp_path)
    assert "solutions ship with the instructor version" in missing.solution().text


# --- the rules the checkers judge by, against hand-computed values ---------------------------------


def test_weight_closed_form_worked_examples():
    assert weight_closed_form(0.8, 0) == 0.8
    assert weight_closed_form(0.8, 7) == pytest.approx(0.4)
    assert weight_closed_form(0.8, 14) == pytest.approx(0.2)  # exactly 14 days: not stale yet
    assert weight_closed_form(0.8, 21) == pytest.approx(0.05)  # 0.8 * 0.125 * 0.5
    assert weight_closed_form(0.8, 30) == pytest.approx(0.8 * 0.5 ** (30 / 7) * 0.5)  # not expired
    assert weight_closed_form(0.8, 30.001) == 0.0


def test_budgeted_selection_worked_example():
    candidates = [(CACHE_HIT, 0.9), (FRESH_PENDING, 0.8), (DB_MISS, 0.7)]  # 8, 12 and 5 words
    assert budgeted_selection(candidates, 15, 3, count_words) == [CACHE_HIT, DB_MISS]
    assert budgeted_selection(candidates, 25, 3, count_words) == [CACHE_HIT, FRESH_PENDING, DB_MISS]
    assert budgeted_selection(candidates, 25, 2, count_words) == [CACHE_HIT, FRESH_PENDING]


SELECT_LESSONS = load("ex05_budget").select_lessons
EXPERIENCE_WEIGHT = load("ex04_decay").experience_weight
lessons = st.lists(
    st.tuples(st.text("ab ", min_size=1, max_size=12), st.sampled_from([0.1, 0.5, 0.9])),
    max_size=8,
    unique_by=lambda pair: pair[0],
)


@given(lessons, st.integers(0, 20), st.integers(0, 4))
def test_reference_selection_respects_budget_and_order(candidates, budget, max_items):
    chosen = SELECT_LESSONS(candidates, budget, max_items, count_words)
    assert chosen == budgeted_selection(candidates, budget, max_items, count_words)
    assert sum(count_words(x) for x in chosen) <= budget and len(chosen) <= max_items
    scores = [next(s for text, s in candidates if text == x) for x in chosen]
    assert scores == sorted(scores, reverse=True)


@given(st.floats(0, 1), st.floats(0, 60), st.floats(1, 20))
def test_reference_weight_matches_the_closed_form(confidence, days, half_life):
    weight = EXPERIENCE_WEIGHT(confidence, days, half_life_days=half_life)
    assert weight == pytest.approx(weight_closed_form(confidence, days, half_life), abs=1e-12)


PUBLIC = """
CACHE_HIT DB_MISS FRESH_PENDING GOOD_REFLECTION LOYALTY_POINTS PROBLEM_KINDS SOLUTIONS_DIR STALE_PENDING
START_CACHE Case CheckResult Exercise Note budgeted_selection count_words definition_error ex1a ex1b ex2
ex3 ex4 ex5 function_source is_attempted run_case weight_closed_form
""".split()


def test_the_package_api_is_pinned():
    """Notebooks import from ralph_mini.exercise; a change to what it offers is a decision made here."""
    assert exercise.__all__ == PUBLIC
    assert all(getattr(exercise, name) is not None for name in PUBLIC)
    assert exercise.SOLUTIONS_DIR == SOLUTIONS and SOLUTIONS.is_dir()
