"""Lessons that bind: each lesson a check at the tool boundary, not only words in a prompt (notebook 12).

A lesson in the prompt is advice: a strong model follows it, a small one often does not (notebook 08
measures it: ``adherence.py``). Users of agent memory ask for the other kind: a check the agent cannot
talk its way past. Every rule of the micro-prompt grammar whose action can be checked from the run
alone becomes one (``Guard.of``), built per run from the lessons the run carries, so a rule voted out or
invalidated lifts its guard at once:

- ``skip T``: once the trigger held, a call to T is *refused*: the model gets an observation quoting the
  lesson, which costs it a turn but no tool call (status ``refused``);
- ``start with T``: the first step offers only T, and a first call to another tool is refused, once
  (a model may call a tool it was not offered); the other tools come back from the second step on;
- ``answer`` (stop now): once the trigger held, a further look-up is refused;
- ``call T``: once the trigger held, an answer before T was called is refused, once;
- and, for every run: an answer given before any look-up is refused, once, with a message.

When two held lessons disagree (one skips T, another asks to call T), the guard does not refuse T: a
guard that refused the call and then the answer without it would leave the model no way out.

What a guard refused is in the trace and the log like any step, so the reflector and the votes see it:
a stale rule that refuses the call the run needed is blamed for the wrong answer that follows.

Left out on purpose: guards that cannot be read off the run (a rule about a field's value), and forcing
a call (a guard can refuse, not act: a model that never calls T is not made to).
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ralph_mini.hardening import REFUSED
from ralph_mini.log import run_tags
from ralph_mini.react import ANSWER, Step
from ralph_mini.rules import Rule, rule_in
from ralph_mini.tools import Tool, lookup_tools
from ralph_mini.votes import trigger_held
from ralph_mini.world import Words

ENFORCE = ("prompt", "guard", "both")  # LoopConfig.enforce: lessons as text, as checks, or as both

BLIND = "refused: an answer before any look-up; look the {noun} up first, then answer"


@dataclass(frozen=True)
class Guard:
    """The checks one run's lessons make enforceable, for ``react.run_react(guard=...)``."""

    rules: tuple[Rule, ...]
    words: Words
    now: str | None = None  # the task's current time: an age condition is checked at it
    lookups: tuple[str, ...] = ()  # the tools that look something up (not the writes)
    offered: tuple[str, ...] = ()  # every tool the run may call: a 'start with' names one of them

    @classmethod
    def of(cls, lessons: Sequence[str], words: Words, now: str | None, tools: Sequence[Tool]) -> "Guard":
        """The guard of these lessons over these tools; a lesson that does not parse guards nothing."""
        rules = tuple(rule for lesson in lessons if (rule := rule_in(lesson)) is not None)
        return cls(rules, words, now, lookup_tools(tools), tuple(t.name for t in tools))

    def held(self, steps: Sequence[Step]) -> list[Rule]:
        """The rules whose whole trigger held in the steps so far (a refused step showed nothing)."""
        revealed = run_tags([s for s in steps if s.status != REFUSED], self.words, self.now)
        return [rule for rule in self.rules if trigger_held(rule, revealed)]

    def looked(self, steps: Sequence[Step]) -> bool:
        """Has a look-up answered (ok or not_found) in the steps so far?"""
        return any(s.tool in self.lookups and s.status in ("ok", "not_found") for s in steps)

    def start(self, offered: Sequence[str]) -> tuple[Rule, str] | None:
        """The first 'start with' lesson for every task whose tool is offered, and its tool."""
        for rule in self.rules:
            tool = next((a.tool for a in rule.actions if a.verb == "start" and a.tool in offered), None)
            if tool and rule.trigger.kind == "any":
                return rule, tool
        return None

    def first_tools(self, offered: Sequence[str]) -> list[str]:
        """The tools the first step may use: the one a 'start with' lesson names, else all offered."""
        start = self.start(offered)
        return [start[1]] if start else list(offered)

    def check_call(self, tool: str, steps: Sequence[Step]) -> str | None:
        """A refusal for a call to ``tool`` after ``steps``, quoting the lesson that forbids it, or None."""
        start = self.start(self.offered)
        if start and tool != start[1] and all(s.status == "bad_reply" for s in steps):
            return f"refused: the lesson '{start[0]}' says start with {start[1]}"  # once, as answers are
        held = self.held(steps)
        if any(a.verb == "call" and a.tool == tool for rule in held for a in rule.actions):
            return None  # two held lessons disagree: never refuse the call one of them asks for (no deadlock)
        for rule in held:
            if any(a.verb == "skip" and a.tool == tool for a in rule.actions):
                return f"refused: the lesson '{rule}' says skip {tool}; use what you have or another tool"
            if tool in self.lookups and any(a.verb == "answer" for a in rule.actions) and self.looked(steps):
                return f"refused: the lesson '{rule}' says answer now; give the final answer"
        return None

    def check_answer(self, steps: Sequence[Step]) -> str | None:
        """A refusal for an answer after ``steps``, or None: an answer with no look-up, or before the
        tool a held 'call T' lesson names. Each is refused once: a model that insists answers."""
        refused = [s.observation for s in steps if s.status == REFUSED and s.tool == ANSWER]
        blind = BLIND.format(noun=self.words.noun)
        if not self.looked(steps) and self.lookups and blind not in refused:
            return blind
        called = {s.tool for s in steps if s.status in ("ok", "not_found")}
        for rule in self.held(steps):
            missing = [a.tool for a in rule.actions if a.verb == "call" and a.tool not in called]
            message = f"refused: the lesson '{rule}' says call {missing[0]} first" if missing else ""
            if missing and message not in refused:
                return message
        return None


def binding(enforce: str, words: Words, now: str | None, tools: Sequence[Tool]) -> dict:
    """``run_react``'s arguments for ``LoopConfig.enforce``: 'prompt' (lessons as text, the default),
    'guard' (lessons only as checks: the model never reads them) or 'both'."""
    if enforce not in ENFORCE:
        raise ValueError(f"enforce={enforce!r}: use one of {', '.join(ENFORCE)}")
    if enforce == "prompt":
        return {}
    guard: Callable[[Sequence[str]], Guard] = lambda lessons: Guard.of(lessons, words, now, tools)  # noqa: E731
    return {"guard": guard, "lessons_in_prompt": enforce == "both"}
