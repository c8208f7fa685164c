"""What the loop reads from the world and the task: lesson types, the rule vocabulary, answer fields (09).

Why a module: the loop is generic, but three of its decisions depend on the world it runs in, and each
must come from the world, never from a constant the world may outgrow:

- **which lessons a task may carry** (``plan``): only lessons learned on the task's own type, and every
  live lesson of that type whose trigger already holds ("any task") comes first, so a similar-sounding
  lesson of another type can neither be injected nor push the one that applies out of the top 3;
- **which words a learned rule may use** (``rule_vocabulary``): the read-only tools the agent was given
  *now* (the cache gone, a rule naming it is refused; a new lookup, it may be named) and the statuses
  those tools declare;
- **what a complete answer has** (``answer_fields``) and **which tools write** (``writing_tools``, as
  the world marks them): the fast loop's check (``review``) and "never retry a run that wrote"; and
  what a rule would have saved (``estimate_calls_saved``), which memory's write threshold weighs.

Left out on purpose: ranking (``retrieval.py`` ranks; this module only filters and orders what it gets).
The budget is ``react.LessonBudget``, the one place a prompt's lessons are cut; ``fit`` only applies it.
"""

import re
from collections.abc import Collection, Iterable, Mapping, Sequence

from ralph_mini import shop_words as sw
from ralph_mini.memory import Experience, Memory
from ralph_mini.react import LessonBudget, Trace
from ralph_mini.reflect import Review, quick_review
from ralph_mini.rules import RuleSyntaxError, parse_rule
from ralph_mini.tools import Tool
from ralph_mini.votes import trigger_held

ORDER_STATUS = "order_status"  # memory's name for notebook 01's one task type (``Memory.propose``)
# The field a complete reply of each request type has (the shop prompt's "Final answer" lines).
ANSWER_FIELDS = {
    ORDER_STATUS: ("status",),
    sw.REFUND: ("refund",),
    sw.CHARGES: ("charged_twice",),
    sw.DELIVERY: ("shipping_status",),
    sw.CANCEL: ("cancel",),
}
COMPLETE_RE = re.compile(r"\bevery\b|\bsource of truth\b", re.I)  # a tool that holds every record


def task_type_of(task) -> str:
    """The task's type as memory files it: a shop task's own type; notebook 01's tasks are order status."""
    kind = getattr(task, "task_type", None) or (task.kind.split(":")[0] if ":" in task.kind else sw.STATUS)
    return ORDER_STATUS if kind == sw.STATUS else kind


def answer_fields(task) -> tuple[str, ...]:
    return ANSWER_FIELDS.get(task_type_of(task), ("status",))


def writing_tools(tools: Sequence[Tool]) -> tuple[str, ...]:
    """The tools that change the world, as the world marks them (``@tool(writes=True)``)."""
    return tuple(t.name for t in tools if t.writes)


def rule_vocabulary(tools: Sequence[Tool]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(tools, statuses) a learned rule may name: the read-only tools given, and the statuses those tools
    declare they may return (``@tool(statuses=...)``), both as the world defines them."""
    statuses = dict.fromkeys(status for t in tools for status in t.statuses)
    return tuple(t.name for t in tools if not t.writes), tuple(statuses)


def complete_tools(tools: Sequence[Tool]) -> tuple[str, ...]:
    """Tools whose description says they hold every record: nothing there means nothing anywhere."""
    return tuple(t.name for t in tools if COMPLETE_RE.search(t.description))


def lesson_types(experience: Experience, types: Mapping[str, str]) -> set[str]:
    """The task types a lesson was learned on: the type memory filed it under (its first), and those of
    the tasks that proposed it since (``types``: task id -> type, from the loop's history; a lesson from
    an earlier deployment has sources the history does not know). Memory keeps one row per rule text, so
    a rule first learned on one type and then on another serves both."""
    return {experience.task_type} | {types[t] for t in experience.source_tasks if t in types}


def history_types(history: Iterable) -> dict[str, str]:
    """task id -> task type, for every task in a loop's history (``TaskResult``s)."""
    return {result.task.task_id: task_type_of(result.task) for result in history}


def applicable(experience: Experience, kind: str, types: Mapping[str, str], offered: Collection[str]) -> bool:
    """A lesson of this task type that names only tools the agent has now (the cache gone, a lesson
    about it would only take a slot)."""
    return kind in lesson_types(experience, types) and set(experience.tools) <= set(offered)


def plan(task, memory: Memory, ranked: Sequence[Experience], types: Mapping[str, str],
         offered: Collection[str]) -> list[Experience]:  # fmt: skip
    """The lessons a task may carry, best first, before the budget: live lessons of the task's type whose
    trigger holds for every task, then ``ranked`` (a retriever's order) restricted to that type; only
    lessons naming tools in ``offered``."""
    kind = task_type_of(task)
    always = [e for e in memory.live() if e.trigger == "any" and applicable(e, kind, types, offered)]
    always.sort(key=lambda e: (-memory.weight(e), e.rule))
    mine = [e for e in ranked if applicable(e, kind, types, offered)]
    return list({e.id: e for e in [*always, *mine]}.values())


def fit(task, memory: Memory, ranked: Sequence[Experience], types: Mapping[str, str], budget: LessonBudget,
        offered: Collection[str], reserve: int = 0, per_task_type: bool = True,
        ) -> list[Experience]:  # fmt: skip
    """The planned lessons: ``plan``'s order (or ``ranked`` as it is, without per-type lessons), leaving
    ``reserve`` slots for the second retrieval (beyond the lessons for every task), within ``budget``."""
    candidates = plan(task, memory, ranked, types, offered) if per_task_type else list(ranked)
    if reserve and per_task_type:
        candidates = candidates[
            : max(sum(e.trigger == "any" for e in candidates), budget.max_lessons - reserve)
        ]
    fitted = set(budget.fit([e.rule for e in candidates]))
    return [e for e in candidates if e.rule in fitted]


def review(task, trace: Trace, tools: Sequence[Tool]) -> Review:
    """``reflect.quick_review`` with what the world says: the task's answer fields, the writing tools, and
    the tools that hold every record."""
    return quick_review(trace, answer_fields(task), writing_tools(tools), complete_tools(tools))


def estimate_calls_saved(rule: str, trace: Trace, wasted: Collection[int]) -> int:
    """How many calls of this run the rule would have avoided: for 'start with T', the wasted calls made
    before T; for 'skip T', the wasted calls to T; for 'answer', the wasted calls after its trigger's
    tool answered. ``wasted``: the run's wasted calls as memory's votes count them (``waste.run_waste``),
    computed once per run, not once per rule."""
    parsed = parse_rule(rule)
    starts = {a.tool for a in parsed.actions if a.verb == "start"}
    skips = {a.tool for a in parsed.actions if a.verb == "skip"}
    wasted = set(wasted)
    if starts:
        first = next((s.index for s in trace.steps if s.tool in starts), len(trace.steps) + 1)
        return sum(1 for s in trace.steps if s.index in wasted and s.index < first)
    if any(a.verb == "answer" for a in parsed.actions) and parsed.trigger.tool:
        after = next((s.index for s in trace.steps if s.tool == parsed.trigger.tool), len(trace.steps) + 1)
        return sum(1 for s in trace.steps if s.index in wasted and s.index > after)
    return sum(1 for s in trace.steps if s.index in wasted and s.tool in skips)


def held_first(found: Sequence[Experience], tags: Collection[str]) -> list[Experience]:
    """The mid-run matches whose whole trigger held (age included), the most specific trigger first:
    an age condition, then a status, then a tool's result. A specific trigger says more about the case
    in hand than a general one, so it gets the few slots left; ties keep memory's order (by weight)."""
    held = []
    for experience in found:
        try:
            rule = parse_rule(experience.rule)
        except RuleSyntaxError:
            continue
        if trigger_held(rule, tags):
            held.append((-_specificity(rule), len(held), experience))
    return [experience for *_, experience in sorted(held, key=lambda item: item[:2])]


def _specificity(rule) -> int:
    trigger = rule.trigger
    return 3 if trigger.age_op else 2 if trigger.status else 1 if trigger.tool else 0
