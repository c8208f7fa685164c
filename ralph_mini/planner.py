"""What the loop reads from the world and the task: lesson types, the rule vocabulary, answer fields (09).

Why a module: the loop is generic, but three of its decisions depend on the world it runs in, and each
must come from the world (its ``Words`` and the roles its tools declare), never from a constant:

- **which lessons a task may carry** (``plan``): only lessons learned on the task's own type (memory
  keeps one row per task type and rule), and every live lesson of that type whose trigger already holds
  ("any task") comes first, so a similar-sounding lesson of another type can neither be injected nor
  push the one that applies out of the top 3;
- **which words a learned rule may use** (``rule_vocabulary``): the read-only tools the agent was given
  *now* (the cache gone, a rule naming it is refused; a new lookup, it may be named) and the statuses
  those tools declare;
- **what a complete answer has** (``answer_fields``, the task type's in ``Words``) and **which tools
  write** or **hold every record** (as the tools declare): the fast loop's check (``review``) and "never
  retry a run that wrote"; and what a rule would have saved (``estimate_calls_saved``), which memory's
  write threshold weighs.

And **what the slow loop asks of the tasks done so far** (``PastTasks``): did a task about the same tools
come before, and which error statuses did the earlier runs have. Kept as each task finishes, never by a
scan of the history, so the 10,000th task costs what the 10th did (``benchmarks/history_cost.py``).

Left out on purpose: ranking (``retrieval.py`` ranks; this module only filters and orders what it gets).
The budget is ``react.LessonBudget``, the one place a prompt's lessons are cut; ``fit`` only applies it.
"""

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from ralph_mini.memory import Experience, Memory
from ralph_mini.react import LessonBudget, Trace
from ralph_mini.review import Review, quick_review
from ralph_mini.rules import parse_rule, rule_in
from ralph_mini.tools import Tool, lookup_tools
from ralph_mini.votes import trigger_held
from ralph_mini.world import Task, Words


def answer_fields(task: Task, words: Words) -> tuple[str, ...]:
    """What a complete answer to ``task`` has: its request type's fields ('status',)."""
    return words.request(task.task_type).answer_fields


def writing_tools(tools: Sequence[Tool]) -> tuple[str, ...]:
    """The tools that change the world, as the world marks them (``@tool(writes=True)``)."""
    return tuple(t.name for t in tools if t.writes)


def rule_vocabulary(tools: Sequence[Tool]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(tools, statuses) a learned rule may name: the read-only tools given, and the statuses those tools
    declare they may return (``@tool(statuses=...)``), both as the world defines them."""
    statuses = dict.fromkeys(status for t in tools for status in t.statuses)
    return lookup_tools(tools), tuple(statuses)


def complete_tools(tools: Sequence[Tool]) -> tuple[str, ...]:
    """Tools that declare they hold every record: nothing there means nothing anywhere."""
    return tuple(t.name for t in tools if t.holds_every)


def applicable(experience: Experience, kind: str, offered: Collection[str]) -> bool:
    """A lesson of this task type that names only tools the agent has now (the cache gone, a lesson
    about it would only take a slot)."""
    return experience.task_type == kind and set(experience.tools) <= set(offered)


def plan(
    task: Task, memory: Memory, ranked: Sequence[Experience], offered: Collection[str]
) -> list[Experience]:
    """The lessons a task may carry, best first, before the budget: live lessons of the task's type whose
    trigger holds for every task, then ``ranked`` (a retriever's order) restricted to that type; only
    lessons naming tools in ``offered``."""
    kind = task.task_type
    always = [e for e in memory.live(kind, ["any"]) if applicable(e, kind, offered)]
    always.sort(key=lambda e: (-memory.weight(e), e.rule))
    mine = [e for e in ranked if applicable(e, kind, offered)]
    return list({e.id: e for e in [*always, *mine]}.values())


def fit(task: Task, memory: Memory, ranked: Sequence[Experience], budget: LessonBudget,
        offered: Collection[str], reserve: int = 0, per_task_type: bool = True,
        ) -> list[Experience]:  # fmt: skip
    """The planned lessons: ``plan``'s order (or ``ranked`` as it is, without per-type lessons), leaving
    ``reserve`` slots for the second retrieval (beyond the lessons for every task), within ``budget``."""
    candidates = plan(task, memory, ranked, offered) if per_task_type else list(ranked)
    if reserve and per_task_type:
        candidates = candidates[
            : max(sum(e.trigger == "any" for e in candidates), budget.max_lessons - reserve)
        ]
    fitted = set(budget.fit([e.rule for e in candidates]))
    return [e for e in candidates if e.rule in fitted]


def review(task: Task, trace: Trace, tools: Sequence[Tool], words: Words) -> Review:
    """``reflect.quick_review`` with what the world says: the task's answer fields, the writing tools, the
    tools that hold every record, and the answer that says there is no such record."""
    return quick_review(trace, answer_fields(task, words), writing_tools(tools), complete_tools(tools),
                        words.missing)  # fmt: skip


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
        rule = rule_in(experience.rule)
        if rule is not None and trigger_held(rule, tags):
            held.append((-_specificity(rule), len(held), experience))
    return [experience for *_, experience in sorted(held, key=lambda item: item[:2])]


def _specificity(rule) -> int:
    trigger = rule.trigger
    return 3 if trigger.age_op else 2 if trigger.status else 1 if trigger.tool else 0


@dataclass(frozen=True)
class PastTasks:
    """What the slow loop asks of the tasks done so far, summed up as they finish: the tool sets they
    were about (``Task.relevant_tools``) and the error statuses of their final runs' wrong calls. Both
    are bounded by the world's vocabulary, not by the number of tasks, so reading and extending it costs
    the same after 10,000 tasks as after 10.

    ``PastTasks().then(task, trace)`` for a task about ('lookup',) whose run had a 'not_found' wrong call
    -> PastTasks(tools={('lookup',)}, errors={'not_found'}); a later task about ('lookup',) recurs.
    Frozen: ``then`` returns a new summary (or this one, when the task adds nothing new)."""

    tools: frozenset[tuple[str, ...]] = frozenset()
    errors: frozenset[str] = frozenset()

    def then(self, task: Task, trace: Trace) -> "PastTasks":
        """These tasks and one more: one pass over the new run's steps, nothing over the older ones."""
        errors = {step.status for step in trace.steps if step.wrong}
        if task.relevant_tools in self.tools and errors <= self.errors:
            return self  # the usual case once the world's tool sets and errors have all been seen
        return PastTasks(self.tools | {task.relevant_tools}, self.errors | errors)

    def recurrence(self, task: Task) -> tuple[bool, set[str]]:
        """Does a task about the same tools recur, and which error statuses did the past runs have?"""
        return task.relevant_tools in self.tools, set(self.errors)
