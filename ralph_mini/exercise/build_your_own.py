"""The build-your-own track, in one import (exercises/build_your_own/ex06-ex11).

    from ralph_mini.exercise.build_your_own import ex6, Lesson, review_run

The exercises (``ex6`` the ReAct loop, ``ex7a``/``ex7b`` the memory's write-and-vote step, ``ex8``
hybrid retrieval, ``ex9`` the loop's assembly, ``ex11`` a lesson's guard), the records they pass each
other and the pieces they are given (``build_track``), what the checkers compare against
(``kit_propose``, ``kit_vote``, ``hybrid_retrieval``, ``STAND_INS``), and ``guard_with`` (a student's
guard in ``run_react``). The core five exercises import from ``ralph_mini.exercise``.
"""

from ralph_mini.exercise.build_track import (
    ALPHA,
    ANY_TASK,
    BUDGET_TOKENS,
    BUILD_SOLUTIONS,
    CONFIRM_TASKS,
    DOWN_DECAY,
    INSTANCE_RE,
    RECENT_DOWNS,
    RECENT_WINDOW,
    TOP_K,
    Lesson,
    Metered,
    Outcome,
    Pieces,
    RunReview,
    by_weight,
    kit_react,
    metered_pieces,
    outcome_records,
    reflect_on,
    review_run,
)
from ralph_mini.exercise.ex06_react_loop import ex6
from ralph_mini.exercise.ex07_memory_vote import ex7a, ex7b, kit_propose, kit_vote
from ralph_mini.exercise.ex08_hybrid_retrieval import ex8, hybrid_retrieval
from ralph_mini.exercise.ex09_assembly import STAND_INS, ex9
from ralph_mini.exercise.ex11_guard import ex11, guard_with

__all__ = [
    "ALPHA",
    "ANY_TASK",
    "BUDGET_TOKENS",
    "BUILD_SOLUTIONS",
    "CONFIRM_TASKS",
    "DOWN_DECAY",
    "INSTANCE_RE",
    "RECENT_DOWNS",
    "RECENT_WINDOW",
    "STAND_INS",
    "TOP_K",
    "Lesson",
    "Metered",
    "Outcome",
    "Pieces",
    "RunReview",
    "by_weight",
    "ex11",
    "ex6",
    "ex7a",
    "ex7b",
    "ex8",
    "ex9",
    "guard_with",
    "hybrid_retrieval",
    "kit_propose",
    "kit_react",
    "kit_vote",
    "metered_pieces",
    "outcome_records",
    "reflect_on",
    "review_run",
]
