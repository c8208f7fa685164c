"""Exercise 2 (exercises/ex02_pitfall_depth.ipynb): stop a run after too many wrong calls.

``should_stop(statuses, max_pitfall_depth)`` is judged by the rule it teaches: count the statuses in
``react.WRONG_STATUSES`` (in a row or not) and stop only when the count is strictly more than the depth.
"""

import re
from typing import Any

from ralph_mini.exercise.checker import Case, Exercise, Judge, short_repr
from ralph_mini.exercise.messages import Hints, say
from ralph_mini.react import WRONG_STATUSES


def _stop_judge(statuses: list[str], depth: int) -> Judge:
    wrong = [s for s in statuses if s in WRONG_STATUSES]
    listed = say("ex2.listed", count=len(wrong)) + (f" ({', '.join(wrong)})" if wrong else "")

    def judge(returned: Any) -> str | None:
        if len(wrong) <= depth:
            if returned is None:
                return None
            return say("ex2.expected_none", returned=short_repr(returned), listed=listed, depth=depth)
        if returned is None or returned is False:
            return say("ex2.expected_reason", returned=returned, listed=listed, depth=depth)
        if not isinstance(returned, str):
            return say("ex2.reason_not_str", returned=short_repr(returned))
        if "max_pitfall_depth" not in returned or not re.search(rf"\b{len(wrong)}\b", returned):
            return say("ex2.vague_reason", returned=returned)
        return None

    return judge


def _stop_cases() -> list[Case]:
    examples = [  # (statuses, max_pitfall_depth)
        (["ok", "ok"], 3),
        (["error", "bad_args", "wrong_tool", "bad_reply"], 3),
        (["error", "bad_args", "wrong_tool"], 3),  # exactly at the limit: go on
        (["ok", "not_found", "not_found", "ok"], 1),  # not_found is a normal outcome
        (["ok", "error", "ok", "bad_reply"], 1),  # wrong calls need not be consecutive
        (["bad_reply", "bad_reply"], 1),
        (["ok", "ok", "ok", "ok"], 3),
        ([], 0),
        (["wrong_tool"], 0),
        (["ok", "ok", "ok", "ok", "ok", "error", "error"], 1),
    ]
    return [
        Case(
            say("ex2.case", statuses=statuses, depth=depth),
            args=(statuses, depth),
            judge=_stop_judge(statuses, depth),
        )
        for statuses, depth in examples
    ]


ex2 = Exercise(
    name="ex2",
    function_name="should_stop",
    solution_file="ex02_pitfall_depth.py",
    cases=_stop_cases,
    hints=Hints("ex2"),
)
