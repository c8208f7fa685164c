"""When two lessons are one, and when they cannot both hold (notebook 04).

Memory stores each lesson once and never keeps two that say opposite things. Both need a test on rules
rather than on their text, because a reflector (or a person) writes the same lesson many ways:

- **wording**: ``normalize_wording`` turns a few common free forms into the grammar before parsing:
  "if T finds the order, answer and skip D" -> "when T finds the order: answer; skip D";
  "start with T" or "always call T first" -> "when any task: start with T"; "never call T" -> "skip T";
  "every task" / "all tasks" -> "any task". A line already in the grammar is left as it is;
- **canonical form**: ``canonical`` keeps each action once, in the grammar's verb order (answer, skip,
  call, start) and then by tool, so "skip D; answer" and "answer; skip D" are one rule;
- **near duplicate** (``near_duplicate``), the similarity test: the same trigger kind, tool, status and
  age direction, age thresholds within ``AGE_TOLERANCE`` (20%) of the larger one, and the same
  canonical actions. "age under 30 min" and "age under 25 min" are one lesson; 30 and 90 are not;
- **contradiction** (``contradiction``): the same trigger (age included) and opposite actions: skip T
  against call T or start with T; answer (stop now) against any call; start with T against start
  with another tool. Memory invalidates the older rule (``memory.py``), Zep-style;
- **another threshold** (``renumbered``): the same rule with an age threshold further off than the
  near-duplicate tolerance; the new one replaces the old (a lag that moved);
- **outdated** (``outdated``): a rule the world's tools now contradict: a tool it sends the agent to is
  gone, or a lag it has a threshold about moved (memory then writes the rule with the new number);
- **where to look** (``Shelves``): a duplicate or a rival of a rule has its task type and its trigger's
  family (kind, tool, status: ``family``), or a rival the family of 'any task'; memory files its lessons
  so, and a new rule is compared with those few, not with every lesson (the same cost at 100 or 100k);
- **counterexample**: a new rule whose trigger is *narrower* than an old one's ("status is pending and
  age over 30 min" inside "status is pending"; anything inside "any task") and whose action opposes it
  (skip T against call T, answer against call T) shows a case where the old, wider rule is wrong: "when
  status is pending: answer" cannot hold if old pending orders need the provider. Start-with actions
  are left out here: they act before any trigger but "any task" can be seen.

Left out on purpose: a new *wider* rule against an old narrower one (the narrower one may be its
exception; memory keeps both and lets the votes decide), triggers that only overlap without one
containing the other, and any paraphrase beyond the forms above (that is the reflector's job: it must
write the grammar).
"""

import re
from collections.abc import Collection, Iterator, Mapping
from dataclasses import replace
from heapq import merge
from typing import Protocol

from ralph_mini.lesson_dict import LessonDict
from ralph_mini.rules import ACTION_VERBS, Action, Rule, Trigger, rule_in

AGE_TOLERANCE = 0.2  # near duplicates: age thresholds within 20% of the larger one

_TOOL = r"[a-z_][a-z0-9_]*"
_FREE_FORMS = (  # (pattern, replacement), applied in order to a line that is not in the grammar
    (re.compile(r"^\s*(?:[-*]|\d+[.)])\s*"), ""),  # a bullet
    (re.compile(r"^\s*if\s+", re.I), "when "),
    (re.compile(r"\b(?:every|each) task\b|\ball tasks\b", re.I), "any task"),
    (re.compile(rf"\b(?:always\s+)?call ({_TOOL}) first\b", re.I), r"start with \1"),
    (re.compile(r"\balways\s+start with\b", re.I), "start with"),
    (re.compile(rf"\b(?:never|do not|don't) (?:call|query|use) ({_TOOL})\b", re.I), r"skip \1"),
)
_WHEN_RE = re.compile(r"^\s*when\s+(?P<trigger>.+?)\s*[:,]\s*(?P<actions>.+)$", re.I)
_ACTION_SEPARATORS = re.compile(r"\s*(?:;|,|\band then\b|\bthen\b|\band\b)\s*", re.I)


def normalize_wording(text: str) -> str:
    """A free-form lesson in the grammar's words, or ``text`` unchanged if it parses already.

    >>> normalize_wording("If query_local_cache finds the order, skip query_database and answer.")
    'when query_local_cache finds the order: skip query_database; answer'
    >>> normalize_wording("Always call query_local_cache first")
    'when any task: start with query_local_cache'
    """
    if rule_in(text) is not None:
        return text
    line = text.strip().rstrip(".")
    for pattern, replacement in _FREE_FORMS:
        line = pattern.sub(replacement, line)
    match = _WHEN_RE.match(line)
    if match is None:  # no trigger: an action for every task ("start with T")
        trigger, actions = "any task", line
    else:
        trigger, actions = match["trigger"], match["actions"]
    parts = [part for part in _ACTION_SEPARATORS.split(actions) if part]
    return f"when {trigger}: " + "; ".join(parts)


def canonical(rule: Rule) -> Rule:
    """Each action once, ordered by verb (answer, skip, call, start) then tool: one text per lesson."""
    actions = sorted(set(rule.actions), key=lambda a: (ACTION_VERBS.index(a.verb), a.tool or ""))
    return Rule(rule.trigger, tuple(actions))


def same_lesson(text: str, rule: Rule) -> bool:
    """Is the stored rule ``text`` the canonical ``rule``, in its own order or as a near duplicate?"""
    parsed = rule_in(text)
    return parsed is not None and same_rule(parsed, rule)


def same_rule(other: Rule, rule: Rule) -> bool:
    """``same_lesson`` for a rule parsed already (memory parses each stored rule once)."""
    other = canonical(other)
    return other == rule or near_duplicate(other, rule)


def near_duplicate(a: Rule, b: Rule) -> bool:
    """The same lesson in other numbers: see the module docstring for the test."""
    ta, tb = a.trigger, b.trigger
    if (ta.kind, ta.tool, ta.status, ta.age_op) != (tb.kind, tb.tool, tb.status, tb.age_op):
        return False
    if set(a.actions) != set(b.actions):
        return False
    if ta.minutes is None or tb.minutes is None:
        return ta.minutes == tb.minutes
    return abs(ta.minutes - tb.minutes) <= AGE_TOLERANCE * max(ta.minutes, tb.minutes)


def contradiction(new: Rule, old: Rule) -> str:
    """Why ``new`` and ``old`` cannot both hold ('' if they can): the same trigger and opposite actions,
    or ``new`` a counterexample to ``old`` (a narrower trigger, an opposite action once it is seen).

    'when any task: skip T' against 'when any task: call T' -> 'skip T against call T';
    'when status is pending and age over 30 min: call T' against 'when status is pending: answer' ->
    'call T against answer'.
    """
    if renumbered(new, old):
        return f"the threshold is {new.trigger.minutes} min now, not {old.trigger.minutes}"
    if new.trigger == old.trigger:
        opposite = _opposite
    elif narrower(new.trigger, old.trigger):
        seen = new.trigger.tool  # 'when T finds the order: answer' was called T already

        def opposite(a: Action, b: Action) -> bool:
            return _opposite_later(a, b) and b.tool != seen
    else:
        return ""
    for mine in new.actions:
        for theirs in old.actions:
            if opposite(mine, theirs) or opposite(theirs, mine):
                return f"{mine} against {theirs}"
    return ""


def renumbered(new: Rule, old: Rule) -> bool:
    """The same rule with another age threshold, beyond a near duplicate's tolerance: 'age over 120 min:
    call T' against 'age over 30 min: call T'. The new one replaces the old (the world's lag moved)."""
    tn, to = new.trigger, old.trigger
    same_shape = (tn.kind, tn.tool, tn.status, tn.age_op) == (to.kind, to.tool, to.status, to.age_op)
    if not same_shape or tn.minutes is None or to.minutes is None or set(new.actions) != set(old.actions):
        return False
    return not near_duplicate(new, old)


def narrower(inner: Trigger, outer: Trigger) -> bool:
    """Does ``inner`` hold only where ``outer`` holds too, and is it a different trigger?

    'status is pending and age over 30 min' in 'status is pending' -> True; 'age over 90 min' in 'age
    over 30 min' -> True; anything in 'any task' -> True; 'status is paid' in 'status is pending' -> False.
    """
    if inner == outer:
        return False
    if outer.kind == "any":
        return True
    if (inner.kind, inner.tool, inner.status) != (outer.kind, outer.tool, outer.status):
        return False
    if outer.age_op is None or outer.minutes is None:
        return True
    if inner.age_op != outer.age_op or inner.minutes is None:
        return False
    return inner.minutes >= outer.minutes if outer.age_op == "over" else inner.minutes <= outer.minutes


def _opposite(a: Action, b: Action) -> bool:
    calls = b.verb in ("call", "start")
    if a.verb == "skip" and calls and a.tool == b.tool:
        return True
    if a.verb == "answer" and calls:
        return True
    return a.verb == b.verb == "start" and a.tool != b.tool


def _opposite_later(a: Action, b: Action) -> bool:
    """Opposite once a narrower trigger is seen mid-run: skip T against call T, answer against call T."""
    return b.verb == "call" and (a.verb == "answer" or (a.verb == "skip" and a.tool == b.tool))


def replace_minutes(rule: Rule, minutes: int) -> Rule:
    """The same rule with another age threshold."""
    return Rule(replace(rule.trigger, minutes=minutes), rule.actions)


def outdated(rule: Rule, offered: Collection[str], lags: Mapping[str, int | None]) -> str:
    """Why the world now says ``rule`` is false ('' if it does not): a tool it sends the agent to is gone,
    or the tool its age threshold is about declares a lag that makes the rule wrong for some ages ('under
    120 min: skip T' once T knows a record at 30 min; 'over 30 min: call T' once T needs 120 min)."""
    missing = sorted({a.tool for a in rule.actions if a.verb in ("call", "start") and a.tool} - set(offered))
    if missing:
        return f"{', '.join(missing)} no longer offered"
    minutes, op = rule.trigger.minutes, rule.trigger.age_op
    for action in rule.actions:
        lag = lags.get(action.tool or "") if minutes is not None else None
        if lag is None or abs(lag - minutes) <= AGE_TOLERANCE * max(lag, minutes):
            continue
        # 'under N: skip T' skips what T now knows if N > lag; 'over N: call T' asks T too soon if N < lag
        if (op, action.verb) in (("under", "skip"), ("over", "call")) and (minutes > lag) == (op == "under"):
            return f"{action.tool} learns of a record after {lag} min now, not {minutes}"
    return ""


def family(trigger: Trigger) -> tuple:
    """What a trigger is filed under: its kind, tool and status, not its age ('status is pending and age
    over 30 min' -> ('status', None, 'pending')). Rules of one lesson share it, and so do rivals unless
    the older one is about 'any task' (``near_duplicate``, ``contradiction``)."""
    return trigger.kind, trigger.tool, trigger.status


class Lesson(Protocol):
    """What ``Shelves`` reads of a lesson (``experience.Experience`` has it)."""

    id: str
    rule: str
    task_type: str

    @property
    def parsed(self) -> Rule | None: ...


Filed = tuple[int, Lesson, str, Rule]  # (its place in memory, the lesson, its rule text, its canonical rule)


class Shelves:
    """A memory's lessons filed by (task type, trigger family), each with its canonical rule computed once.
    Memory compares a new rule with one or two shelves instead of every lesson, so propose, dedup and
    contradiction cost the same at 100 lessons as at 100k. Filed again from scratch if the lessons' dict
    was replaced, grew or was rewritten behind memory's back (``lesson_dict``), or a lesson on a shelf
    read had its rule text changed (memory never edits a rule; one edited by hand is refiled once its
    old shelf is read)."""

    def __init__(self) -> None:
        self.filed: dict[tuple, list[Filed]] = {}
        self.source: LessonDict | None = None  # the dict filed ...
        self.count, self.rewrites = 0, 0  # ... how many of its lessons, and its rewrites when filed

    def of(self, lessons: LessonDict, task_type: str, *triggers: Trigger) -> Iterator[Filed]:
        """The parsed lessons of ``task_type`` filed under the families of ``triggers``, in ``lessons``'
        order (the order a scan of every lesson would meet them)."""
        if self.source is not lessons or self.count != len(lessons) or self.rewrites != lessons.rewrites:
            self.refile(lessons)
        keys = dict.fromkeys((task_type, family(t)) for t in triggers)
        if any(
            lessons.get(e.id) is not e or e.rule != text
            for k in keys
            for _, e, text, _ in self.filed.get(k, [])
        ):
            self.refile(lessons)
        return merge(*[self.filed.get(key, []) for key in keys])

    def add(self, lessons: LessonDict, lesson: Lesson) -> None:
        """File a lesson just added to ``lessons`` (if the shelves were up to date before it)."""
        if self.source is lessons and self.count == len(lessons) - 1 and self.rewrites == lessons.rewrites:
            self._file(lesson)

    def refile(self, lessons: LessonDict) -> None:
        self.filed, self.source, self.count, self.rewrites = {}, lessons, 0, lessons.rewrites
        for lesson in lessons.values():
            self._file(lesson)

    def _file(self, lesson: Lesson) -> None:
        if lesson.parsed is not None:
            shelf = self.filed.setdefault((lesson.task_type, family(lesson.parsed.trigger)), [])
            shelf.append((self.count, lesson, lesson.rule, canonical(lesson.parsed)))
        self.count += 1
