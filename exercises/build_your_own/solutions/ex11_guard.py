"""Reference solution for exercises/build_your_own/ex11_guard.ipynb (instructor only)."""

from collections.abc import Sequence

from ralph_mini.log import step_tags
from ralph_mini.react import Step
from ralph_mini.rules import Rule
from ralph_mini.votes import trigger_held
from ralph_mini.world import Words


def check_call(
    rule: Rule, tool: str, steps: list[Step], words: Words, now: str | None, lookups: Sequence[str]
) -> str | None:
    """A refusal quoting the lesson when ``rule`` forbids calling ``tool`` after ``steps``; else None."""
    seen = {"any"}  # every run is 'any task'
    for step in steps:
        if step.status != "refused":  # a refused call never ran: it showed nothing
            seen |= step_tags(step, words, now)
    if not trigger_held(rule, seen):  # the whole trigger, age included
        return None
    if any(action.verb == "skip" and action.tool == tool for action in rule.actions):
        return f"refused: the lesson '{rule}' says skip {tool}; use what you have or another tool"
    looked = any(s.tool in lookups and s.status in ("ok", "not_found") for s in steps)
    if looked and tool in lookups and any(action.verb == "answer" for action in rule.actions):
        return f"refused: the lesson '{rule}' says answer now; give the final answer"
    return None
