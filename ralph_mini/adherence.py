"""Did the run do what its lessons said? A lesson's follow rate, measured (notebooks 08 and 12).

A lesson in the prompt reaches a model as text; whether the model acts on it is a question of fact.
For every lesson a run carried whose trigger held, this module checks the run against what the lesson
says, action by action, from the steps alone:

- ``skip T``: T was not called after the trigger held;
- ``start with T``: the first call was T;
- ``call T``: T was called once the trigger held (or in the same step that showed it);
- ``answer``: no further look-up after the trigger held.

A lesson is *followed* in a run when every one of its actions was. ``follow_rates`` sums runs by rule
form (its verbs, 'skip', 'start', 'answer+skip' ...); ``outcome_by_following`` says how often the
runs that followed all their held lessons were correct, against those that broke one. The offline
model's follow rate is 100% by construction when it reads the lessons (it obeys the grammar
literally); a real model's is what notebook 08 measures.

Left out on purpose: counterfactuals (what the model would have done without the lesson is not in the
trace), and lessons whose trigger never held in the run (they say nothing about following).
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ralph_mini.log import step_tags
from ralph_mini.react import Trace
from ralph_mini.rules import Rule, rule_in
from ralph_mini.tools import Tool, lookup_tools
from ralph_mini.votes import trigger_held
from ralph_mini.world import Words


@dataclass(frozen=True)
class Adherence:
    """One lesson in one run: its form, whether its trigger held, whether the run followed it."""

    lesson: str
    form: str  # its verbs: 'skip', 'start', 'answer+skip', ...
    held: bool
    followed: bool


def held_from(rule: Rule, trace: Trace, words: Words) -> int | None:
    """The number of steps after which the rule's trigger held (0: from the start), else None."""
    tags = {"any"}
    for count in range(len(trace.steps) + 1):
        if trigger_held(rule, tags):
            return count
        if count < len(trace.steps):
            tags |= step_tags(trace.steps[count], words, trace.task.now)
    return None


def followed(rule: Rule, trace: Trace, after: int, lookups: Sequence[str]) -> bool:
    """Did the run do what each action of the rule says, once its trigger held after ``after`` steps?"""
    calls = [s for s in trace.steps if s.status not in ("bad_reply", "refused")]
    later = [s.tool for s in trace.steps[after:] if s.status not in ("bad_reply", "refused")]
    for action in rule.actions:
        if action.verb == "skip" and action.tool in later:
            return False
        if action.verb == "start" and (not calls or calls[0].tool != action.tool):
            return False
        if action.verb == "call" and action.tool not in [s.tool for s in calls[max(after - 1, 0) :]]:
            return False
        if action.verb == "answer" and any(t in lookups for t in later):
            return False
    return True


def adherence(trace: Trace, lessons: Iterable[str], words: Words, lookups: Sequence[str]) -> list[Adherence]:
    """Every lesson the run carried: did its trigger hold, and did the run follow it?"""
    found = []
    for lesson in lessons:
        rule = rule_in(lesson)
        if rule is None:
            continue
        form = "+".join(sorted({a.verb for a in rule.actions}))
        after = held_from(rule, trace, words)
        found.append(
            Adherence(
                lesson, form, after is not None, after is not None and followed(rule, trace, after, lookups)
            )
        )
    return found


def adherence_of_runs(
    runs: Iterable[tuple[Trace, Sequence[str]]], words: Words, tools: Sequence[Tool]
) -> list[list[Adherence]]:
    """``adherence`` of every (trace, lessons it carried) pair, the look-ups read off the world's tools:
    what ``follow_rates`` and ``follow_rate`` sum (a loop's results: ``(r.trace, r.injected)``)."""
    lookups = lookup_tools(tools)
    return [adherence(trace, lessons, words, lookups) for trace, lessons in runs]


def follow_rates(runs: Iterable[list[Adherence]]) -> list[dict]:
    """Per rule form, and in all: lessons whose trigger held, how many the run followed, the rate."""
    by_form: dict[str, list[bool]] = {}
    for found in runs:
        for a in found:
            if a.held:
                by_form.setdefault(a.form, []).append(a.followed)
    by_form["all"] = [f for v in by_form.values() for f in v]
    return [
        {"rule form": form, "trigger held": len(v), "followed": sum(v), "follow rate": rate(sum(v), len(v))}
        for form, v in sorted(by_form.items(), key=lambda item: (item[0] == "all", item[0]))
    ]


def outcome_by_following(runs: Iterable[tuple[list[Adherence], bool]]) -> list[dict]:
    """Runs that followed every lesson whose trigger held, against runs that broke one: how many, and
    how many of each were correct. A comparison of runs, not a counterfactual: the trace does not say
    what the model would have done without the lesson."""
    outcome = {True: [0, 0], False: [0, 0]}  # followed all held lessons -> [runs, correct]
    for found, correct in runs:
        held = [a for a in found if a.held]
        if held:
            followed_all = all(a.followed for a in held)
            outcome[followed_all][0] += 1
            outcome[followed_all][1] += correct
    return [
        {"runs": label, "count": n, "correct": f"{c}/{n}", "share correct": rate(c, n)}
        for label, (n, c) in (("followed every lesson", outcome[True]), ("broke one", outcome[False]))
    ]


def follow_rate(runs: Iterable[list[Adherence]]) -> str:
    """The share of held lessons followed, over all forms: '100%', or '-' when none held."""
    return follow_rates(runs)[-1]["follow rate"]


def rate(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "-"
