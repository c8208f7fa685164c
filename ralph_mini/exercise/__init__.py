"""Exercises with instant feedback: ``check``, tiered ``hint`` and ``solution`` (exercises/ex0N_*.ipynb).

A notebook cell calls ``ex2.check(should_stop)`` and sees Correct, Incorrect with the first failing case,
or Not attempted yet (``checker.py`` says how). One module per exercise, named after its notebook:

    ex01_tool                ex1a (a @tool) and ex1b (the observation compressor)
    ex02_pitfall_depth       ex2: stop a run after too many wrong calls
    ex03_template_validator  ex3: the reflector's template validator
    ex04_decay               ex4: decay and expiry of an experience's weight
    ex05_budget              ex5: lessons that fit a token budget

The build-your-own track (exercises/build_your_own/ex06-ex11: the student writes the ReAct loop, the
memory's write-and-vote step, hybrid retrieval and the loop's assembly, and after notebook 12 a lesson's
guard) has its own modules, ex06 to ex09 on the records of ``build_track`` and ex11_guard, and imports
from ``ralph_mini.exercise.build_your_own``.

What a student reads (the labels, every message, the hints) comes from ``messages.py``: one table per
language, picked when the message is made, so the same checkers speak Chinese in ``exercises/zh/``.

Each checker judges answers against the rule it teaches (a closed form, a worked example, the kit's own
``compress_observation``), never against the file in ``exercises/solutions/``: that file is what
``solution()`` shows, and tests/test_exercises.py runs every checker on it, on the starter, and on
typical wrong answers (tests/wrong_answers.py).
"""

from ralph_mini.exercise.checker import (
    SOLUTIONS_DIR,
    Case,
    CheckResult,
    Exercise,
    Note,
    definition_error,
    function_source,
    is_attempted,
    run_case,
)
from ralph_mini.exercise.ex01_tool import LOYALTY_POINTS, ex1a, ex1b
from ralph_mini.exercise.ex02_pitfall_depth import ex2
from ralph_mini.exercise.ex03_template_validator import GOOD_REFLECTION, PROBLEM_KINDS, ex3
from ralph_mini.exercise.ex04_decay import ex4, weight_closed_form
from ralph_mini.exercise.ex05_budget import (
    CACHE_HIT,
    DB_MISS,
    FRESH_PENDING,
    STALE_PENDING,
    START_CACHE,
    budgeted_selection,
    count_words,
    ex5,
)

__all__ = [
    "CACHE_HIT",
    "DB_MISS",
    "FRESH_PENDING",
    "GOOD_REFLECTION",
    "LOYALTY_POINTS",
    "PROBLEM_KINDS",
    "SOLUTIONS_DIR",
    "STALE_PENDING",
    "START_CACHE",
    "Case",
    "CheckResult",
    "Exercise",
    "Note",
    "budgeted_selection",
    "count_words",
    "definition_error",
    "ex1a",
    "ex1b",
    "ex2",
    "ex3",
    "ex4",
    "ex5",
    "function_source",
    "is_attempted",
    "run_case",
    "weight_closed_form",
]
