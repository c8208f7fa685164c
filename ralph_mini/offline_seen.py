"""What the offline model reads from the messages it is sent, and nothing else (notebook 01).

``read_conversation`` turns the messages and tool schemas into an ``Observed``: the record's id (by
the world's pattern), the current time (the prompt's "Current time:" line), the rules in the prompt,
the tools offered and every observation so far as (status, fields). ``applies`` says whether a rule's
trigger holds on it. This is the model's whole view of the world: it has no other access to it.

Left out on purpose: deciding what to do; that is ``offline.py``.
"""

import re
from dataclasses import dataclass, field
from datetime import datetime

from ralph_mini.offline_habits import Habits
from ralph_mini.rules import Rule, Trigger, find_rules
from ralph_mini.tools import read_fields
from ralph_mini.world import parse_time, time_since

NOW_RE = re.compile(r"Current time:\s*(\d{4}-\d\d-\d\d \d\d:\d\d)")


@dataclass
class Observed:
    """What the conversation so far says about the record, as the model reads it."""

    record_id: str | None
    now: datetime | None
    rules: list[Rule]
    offered: list[str]
    system: str = ""  # the system prompt: a request's policy reads it
    results: dict[str, tuple[str, dict]] = field(default_factory=dict)  # tool -> (status, fields)
    attempts: dict[str, int] = field(default_factory=dict)
    refused: set[str] = field(default_factory=set)  # tools a lesson's guard refused: not asked again
    calls_made: int = 0
    functions: list[dict] = field(default_factory=list)  # the offered tools' schemas ("function" objects)
    sources: tuple[str, ...] = ()  # the look-ups whose records carry a status, the fuller first
    status_field: str = "status"
    created_field: str = ""  # the field with the record's creation time (the world's word)

    @property
    def status(self) -> str | None:
        for tool in self.sources:
            if self.results.get(tool, ("", {}))[0] == "ok":
                return self.results[tool][1].get(self.status_field)
        return None

    def age_minutes(self) -> float | None:
        for tool in self.sources:
            created = self.results.get(tool, ("", {}))[1].get(self.created_field)
            if created and self.now:
                elapsed = time_since(created, self.now)
                return None if elapsed is None else elapsed.total_seconds() / 60
        return None

    def found_fields(self) -> dict[str, str]:
        """Every field the look-ups found, the fuller source's word last (it wins)."""
        found: dict[str, str] = {}
        for tool in reversed(self.sources):
            status, fields = self.results.get(tool, ("", {}))
            if status == "ok":
                found |= fields
        return found

    def record(self) -> str | None:
        """'found' (a look-up found it), 'missing' (the fullest source has no such record) or None."""
        if any(self.results.get(t, ("",))[0] == "ok" for t in self.sources):
            return "found"
        fullest = self.sources[0] if self.sources else None
        return "missing" if fullest and self.results.get(fullest, ("",))[0] == "not_found" else None

    def parameters(self, tool: str) -> list[str]:
        """A tool's parameter names, as its schema lists them (read only when a habit needs them)."""
        function = next((f for f in self.functions if f.get("name") == tool), {})
        return list(function.get("parameters", {}).get("properties", {}))

    def done(self, tool: str) -> bool:
        """A tool counts as done once it answered ok or not_found, failed twice, or was refused."""
        return tool in self.results or self.attempts.get(tool, 0) >= 2 or tool in self.refused


def read_conversation(messages: list[dict], tools: list[dict], habits: Habits) -> Observed:
    """Everything the offline model reads, and nothing else: prompt text, tool names, observations."""
    system = system_text(messages)
    question = first_user_text(messages)
    now_match = NOW_RE.search(system)
    id_match = re.search(habits.id_pattern, question)
    functions = [t.get("function", {}) for t in tools]
    seen = Observed(
        record_id=(id_match[1] if id_match.groups() else id_match[0]).upper() if id_match else None,
        now=parse_time(now_match[1]) if now_match else None,
        rules=find_rules(system),
        offered=[f.get("name", "") for f in functions],
        system=system,
        functions=functions,
        sources=habits.sources(),
        status_field=habits.status_field,
        created_field=habits.created_field,
    )
    call_names: dict[str, str] = {}
    for message in messages:
        for call in message.get("tool_calls") or []:
            call_names[call["id"]] = call["function"]["name"]
            seen.calls_made += 1
        if message.get("role") == "tool":
            name = call_names.get(message.get("tool_call_id", ""), "")
            status, _, detail = (message.get("content") or "").partition(":")
            seen.attempts[name] = seen.attempts.get(name, 0) + 1
            if status in ("ok", "not_found"):
                seen.results[name] = (status, read_fields(detail))
            elif status == "refused":
                seen.refused.add(name)
    return seen


def applies(trigger: Trigger, seen: Observed) -> bool:
    """Does a rule's trigger hold for what has been observed so far?"""
    if trigger.kind == "any":
        return True
    if trigger.kind in ("finds", "nothing"):
        wanted = "ok" if trigger.kind == "finds" else "not_found"
        return seen.results.get(trigger.tool or "", ("", {}))[0] == wanted
    if seen.status != trigger.status:
        return False
    if trigger.age_op is None:
        return True
    age = seen.age_minutes()
    if age is None or trigger.minutes is None:
        return False
    return age < trigger.minutes if trigger.age_op == "under" else age > trigger.minutes


def system_text(messages: list[dict]) -> str:
    """Every system message, joined: the prompt, and any lessons added mid-run."""
    return "\n".join(m.get("content") or "" for m in messages if m.get("role") == "system")


def first_user_text(messages: list[dict]) -> str:
    return next((m.get("content") or "" for m in messages if m.get("role") == "user"), "")
