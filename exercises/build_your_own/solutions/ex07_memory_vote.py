"""Reference solution for exercises/build_your_own/ex07_memory_vote.ipynb (instructor only)."""

from ralph_mini.exercise.build_your_own import (
    CONFIRM_TASKS,
    DOWN_DECAY,
    INSTANCE_RE,
    RECENT_DOWNS,
    RECENT_WINDOW,
    Lesson,
)
from ralph_mini.rules import RuleSyntaxError, parse_rule


def propose(memory: dict[str, Lesson], rule: str, task_id: str) -> str:
    """Offer a rule that task ``task_id`` taught; returns the decision."""
    instance = INSTANCE_RE.search(rule)
    if instance:  # one order's story, not a habit
        return f"rejected: names {instance[0]}"
    try:
        key = str(parse_rule(rule))  # two wordings of one rule are one lesson
    except RuleSyntaxError as err:
        return f"rejected: {err}"
    lesson = memory.setdefault(key, Lesson(key))
    if lesson.status == "invalid":
        return "kept invalid"
    if task_id not in lesson.tasks:
        lesson.tasks.append(task_id)
    if lesson.status == "waiting" and len(lesson.tasks) >= CONFIRM_TASKS:
        lesson.status = "active"
        return f"written: confirmed in {len(lesson.tasks)} tasks"
    return f"{lesson.status}: {len(lesson.tasks)} of {CONFIRM_TASKS} tasks"


def vote(lesson: Lesson, up: bool) -> None:
    """One run's vote on an injected lesson."""
    if lesson.status != "active":  # a waiting lesson was never injected; an invalid one is done
        return
    lesson.votes += "+" if up else "-"
    if not up:
        lesson.weight *= DOWN_DECAY
        if lesson.votes[-RECENT_WINDOW:].count("-") >= RECENT_DOWNS:  # what it does now, not its past
            lesson.status = "invalid"
