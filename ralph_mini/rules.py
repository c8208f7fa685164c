"""The micro-prompt grammar: short rules in controlled English (notebook 01; written from notebook 03 on).

Why a grammar at all: the reflector *writes* rules, memory *stores* them, the loop *injects* them into the
system prompt, and a model must *follow* them. One small controlled English serves everyone: a real model
reads a rule as a plain sentence, and the offline model parses it with the regular expressions below. So
the same lesson text works with both, and memory can only help the offline model through the prompt,
exactly as with a real one.

Grammar (one rule per line, case-insensitive)::

    rule    := "when " trigger ": " action ("; " action)*
    trigger := "any task"
             | TOOL " finds the " NOUN          (NOUN: the world's record noun; or TOOL " finds it")
             | TOOL " finds nothing"
             | "status is " WORD [" and age under " N " min" | " and age over " N " min"]
    action  := "answer" | "skip " TOOL | "call " TOOL | "start with " TOOL

Worked examples::

    when query_local_cache finds the order: answer; skip query_database
    when status is pending and age under 30 min: skip query_payment_api
    when any task: start with query_local_cache

"status" is the record's status and "age" the minutes since it was created, at the current time given in
the prompt; which fields carry them is the world's word (``world.Words``). The grammar itself names no
world: a tool, a status and the record noun are slots ('when ticket_db finds the ticket: answer').

Left out on purpose: negation, "or", nested conditions, and any way to name one record or person
(rules must generalize; see ``memory.py``).
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

TRIGGER_KINDS = ("any", "finds", "nothing", "status")
ACTION_VERBS = ("answer", "skip", "call", "start")

# How lessons are written into a prompt: a header, then one bullet per rule (react.py, retrieval.py).
LESSONS_HEADER = "Lessons from earlier runs (follow them):"
MORE_LESSONS_HEADER = "More lessons for what you just observed (follow them):"

_TOOL = r"[a-z_][a-z0-9_]*"
_WORD = r"[a-z_][a-z0-9_]*"  # a status or a noun: 'pending', 'tier2', 'waiting_on_vendor'
_RULE_RE = re.compile(r"^\s*when\s+(?P<trigger>.+?)\s*:\s*(?P<actions>.+?)\s*\.?\s*$", re.I)
_TRIGGER_RES = {
    "any": re.compile(r"^any task$", re.I),
    "finds": re.compile(rf"^(?P<tool>{_TOOL}) finds (?:the (?P<noun>{_WORD})|it)$", re.I),
    "nothing": re.compile(rf"^(?P<tool>{_TOOL}) finds nothing$", re.I),
    "status": re.compile(
        rf"^status is (?P<status>{_WORD})(?: and age (?P<op>under|over) (?P<minutes>\d+) min)?$", re.I
    ),
}
_ACTION_RE = re.compile(rf"^(?P<verb>answer|skip|call|start with)(?:\s+(?P<tool>{_TOOL}))?$", re.I)


class RuleSyntaxError(ValueError):
    """A line that is not a rule of the grammar; the message says which part is wrong."""


@dataclass(frozen=True)
class Trigger:
    """When a rule applies. ``kind`` is one of TRIGGER_KINDS; the other fields depend on it."""

    kind: str
    tool: str | None = None
    status: str | None = None
    age_op: str | None = None  # "under" or "over"
    minutes: int | None = None
    noun: str | None = field(default=None, compare=False)  # how a 'finds' rule named the record

    def __str__(self) -> str:
        if self.kind == "any":
            return "any task"
        if self.kind == "finds":
            return f"{self.tool} finds the {self.noun}" if self.noun else f"{self.tool} finds it"
        if self.kind == "nothing":
            return f"{self.tool} finds nothing"
        age = f" and age {self.age_op} {self.minutes} min" if self.age_op else ""
        return f"status is {self.status}{age}"


@dataclass(frozen=True)
class Action:
    """What to do. ``verb`` is one of ACTION_VERBS; all but "answer" name a tool."""

    verb: str
    tool: str | None = None

    def __str__(self) -> str:
        if self.verb == "answer":
            return "answer"
        word = "start with" if self.verb == "start" else self.verb
        return f"{word} {self.tool}"


@dataclass(frozen=True)
class Rule:
    """One micro-prompt: ``str(rule)`` is the exact text that goes into a prompt."""

    trigger: Trigger
    actions: tuple[Action, ...]

    def __str__(self) -> str:
        return f"when {self.trigger}: " + "; ".join(str(a) for a in self.actions)

    def tools(self) -> set[str]:
        """Every tool the rule names (used to tag experiences with a tool combination)."""
        named = {a.tool for a in self.actions if a.tool}
        return named | ({self.trigger.tool} if self.trigger.tool else set())


def parse_trigger(text: str) -> Trigger:
    """'status is pending and age under 30 min' -> Trigger('status', status='pending', ...)."""
    for kind, pattern in _TRIGGER_RES.items():
        match = pattern.match(text.strip())
        if not match:
            continue
        fields = match.groupdict()
        minutes = fields.get("minutes")
        return Trigger(
            kind=kind,
            tool=(fields.get("tool") or None) and fields["tool"].lower(),
            status=(fields.get("status") or None) and fields["status"].lower(),
            age_op=(fields.get("op") or None) and fields["op"].lower(),
            minutes=int(minutes) if minutes else None,
            noun=(fields.get("noun") or None) and fields["noun"].lower(),
        )
    raise RuleSyntaxError(
        f"unknown trigger {text!r}: use 'any task', 'TOOL finds the NOUN' (or 'TOOL finds it'), "
        "'TOOL finds nothing' or 'status is WORD [and age under|over N min]'"
    )


def parse_action(text: str) -> Action:
    """'skip query_database' -> Action('skip', 'query_database')."""
    match = _ACTION_RE.match(text.strip())
    if not match:
        raise RuleSyntaxError(
            f"unknown action {text!r}: use 'answer', 'skip TOOL', 'call TOOL' or 'start with TOOL'"
        )
    verb = match["verb"].lower().split()[0]
    tool = match["tool"].lower() if match["tool"] else None
    if verb == "answer" and tool:
        raise RuleSyntaxError(f"action {text!r}: 'answer' takes no tool name")
    if verb != "answer" and not tool:
        raise RuleSyntaxError(f"action {text!r}: '{verb}' needs a tool name after it")
    return Action(verb=verb, tool=tool)


@lru_cache(maxsize=4096)  # a rule is frozen, and the offline model re-reads the same lesson lines each turn
def parse_rule(text: str) -> Rule:
    """Parse one line of the grammar, or raise RuleSyntaxError saying what to fix.

    >>> str(parse_rule("When query_local_cache finds the order: answer; skip query_database."))
    'when query_local_cache finds the order: answer; skip query_database'
    """
    match = _RULE_RE.match(_strip_bullet(text))
    if not match:
        raise RuleSyntaxError(f"{text!r} is not a rule: write 'when TRIGGER: ACTION[; ACTION]'")
    trigger = parse_trigger(match["trigger"])
    actions = tuple(parse_action(part) for part in match["actions"].split(";") if part.strip())
    if not actions:
        raise RuleSyntaxError(f"{text!r} has no action after the colon")
    return Rule(trigger=trigger, actions=actions)


def find_rules(text: str) -> list[Rule]:
    """Every line of ``text`` that parses as a rule, in order; other lines are ignored.

    This is how the offline model reads a system prompt: prose around the rules is allowed.
    """
    return [rule for line in text.splitlines() if (rule := rule_in(line)) is not None]


@lru_cache(maxsize=8192)  # parse_rule's cache keeps only rules: a line of prose would be re-read each turn
def rule_in(line: str) -> Rule | None:
    """The rule a line states, or None if it is not a rule."""
    try:
        return parse_rule(line)
    except RuleSyntaxError:
        return None


def bullets(lessons: Sequence[str]) -> str:
    """['when any task: answer'] -> '- when any task: answer': lessons as the prompt shows them."""
    return "\n".join(f"- {lesson}" for lesson in lessons)


def _strip_bullet(line: str) -> str:
    """'- when ...' or '1. when ...' -> 'when ...' (prompts list rules as bullets)."""
    return re.sub(r"^\s*(?:[-*]|\d+[.)])\s*", "", line)
