"""The offline model: a deterministic stand-in for an LLM, for any world (notebook 01).

Why simulate: every notebook must run with no key, no network and no cost, and print the same thing
every time. Why *honestly*: the model sees only what a real model would see, the messages and the tool
schemas. It has no access to the world's data except through tool observations, and keeps no state
between calls: the same messages always give the same reply. So lessons in memory can help it only by
being written into the prompt, exactly as with a real model.

It knows a world the way a pretrained model knows a domain: from a ``Habits`` record the world gives it
(``offline_habits.py``): how an id looks, which tool plays which role, how each request is handled by a
plausible untrained assistant. It reads the id from the question, the request type from its words, the
current time from the system prompt, fields from ``key=value`` observations, and rules written in the
micro-prompt grammar (``rules.py``), which it follows literally:

- a "call T" rule whose trigger holds comes first; a "start with T" rule sets its first call;
- a "skip T" rule takes T out of its plan; an "answer" rule makes it answer with what it has.

Its naive habits (``offline_habits.py``: double-checking, asking the slow third party about every
waiting record and about missing ones, look-alike tools) are defined on the roles a world's tools
declare. Randomness is a hash of (seed, question): the same task with the same tool list always makes
the same choice, and another ``seed`` gives another, equally plausible student model. A question a world
declares as the translation of another (``Habits.twins``) draws as that one: the model's luck follows
what is asked, not the language it is asked in, so both editions of a lesson tell the same story.

Sent no tools, it acts as a *reflector* instead: see ``offline_reflect.py`` (it needs no habits).

Left out on purpose: free-text understanding beyond a world's habits, and learning of any kind.
"""

import hashlib
import json

from ralph_mini.model import ModelReply, ToolCall, Usage
from ralph_mini.offline_habits import ALLOWED, ALWAYS, FIRST, FOUND, Habits, LookUp, Move, RequestHabit
from ralph_mini.offline_reflect import write_reflection
from ralph_mini.offline_seen import Observed, applies, first_user_text, read_conversation, system_text
from ralph_mini.tokens import count_prompt_tokens, count_tokens


class OfflineModel:
    """Deterministic, offline, stateless: ``complete`` is a pure function of its arguments."""

    def __init__(self, seed: int = 0, habits: Habits | None = None):
        self.seed = seed
        self.habits = habits

    def __repr__(self) -> str:
        return f"OfflineModel(seed={self.seed})"

    def complete(self, messages: list[dict], tools: list[dict]) -> ModelReply:
        if not tools:  # no tools offered: this is a request to reflect on a log (offline_reflect.py)
            system = system_text(messages)
            rejected = any(m.get("role") == "assistant" for m in messages)
            text = write_reflection(system, first_user_text(messages), rejected)
            return self._reply(messages, tools, text, ())
        if self.habits is None:
            raise ValueError(
                "OfflineModel() has no habits to act with: give it a world's, "
                "OfflineModel(habits=world.HABITS) or model_from_env(habits=world.HABITS)"
            )
        seen = read_conversation(messages, tools, self.habits)
        thought, call, answer = self.decide(seen, question=first_user_text(messages))
        if call is not None:
            name, arguments = call
            tool_call = ToolCall(id=f"call_{seen.calls_made + 1}", name=name,
                                 arguments=json.dumps(arguments))  # fmt: skip
            return self._reply(messages, tools, thought, (tool_call,))
        content = f"{thought}\nFinal answer: {json.dumps(answer, ensure_ascii=False)}"
        return self._reply(messages, tools, content, ())

    def decide(self, seen: Observed, question: str) -> tuple[str, tuple | None, dict | None]:
        """Return (thought, (tool, arguments) or None, answer or None). The heart of the model."""
        habits = self.habits
        if seen.record_id is None:
            return f"The question names no {habits.noun} id I can look up.", None, {}
        request = habits.requests[habits.request_of(question)]
        active = [rule for rule in seen.rules if applies(rule.trigger, seen)]
        skip = {a.tool for r in active for a in r.actions if a.verb == "skip"}
        for rule in active:
            for action in rule.actions:
                if action.verb == "call" and action.tool in seen.offered and not seen.done(action.tool):
                    return f"Lesson: '{rule}'.", self.call(action.tool, seen), None
        starts = [a.tool for r in active for a in r.actions if a.verb == "start" and a.tool in seen.offered]
        if starts and not seen.calls_made:
            return f"Lesson: start with {starts[0]}.", self.call(starts[0], seen), None
        tempted = self.temptation(seen, question, request, skip)
        if tempted:
            return tempted
        answering = next((r for r in active if any(a.verb == "answer" for a in r.actions)), None)
        if answering and seen.calls_made:
            return f"Lesson: '{answering}'. I can answer now.", None, request.answer(seen)
        for tool, why in self.plan(seen, request):
            if tool not in skip and tool in seen.offered and not seen.done(tool):
                return why, self.call(tool, seen), None
        return "I have what I need.", None, request.answer(seen)

    def call(self, tool: str, seen: Observed) -> tuple[str, dict]:
        return tool, {self.habits.id_argument: seen.record_id}

    def temptation(
        self, seen: Observed, question: str, request: RequestHabit, skip: set[str]
    ) -> tuple | None:
        """Habit 4: before any look-up, a look-alike tool that sounds right, more often the more tools
        are listed beyond the look-ups; one look-alike per run is enough."""
        lookups = {self.habits.fast, self.habits.full, self.habits.lagging}
        extras = [name for name in seen.offered if name not in lookups]
        lookalikes = [n for n in request.tempted_by if n in seen.offered and n not in skip]
        looked = any(tool in seen.results for tool in lookups if tool)
        if not lookalikes or looked or any(name in seen.attempts for name in extras):
            return None
        meant = self.habits.meaning(question)
        if _draw(self.seed, meant, "first-tool") >= self.habits.confusion_per_extra_tool * len(extras):
            return None
        name = lookalikes[int(_draw(self.seed, meant, "which") * len(lookalikes))]
        return (f"{name} sounds like it could tell me about this {self.habits.noun}; let me try it.",
                (name, lookalike_arguments(name, seen, question, self.habits.id_argument)), None)  # fmt: skip

    def plan(self, seen: Observed, request: RequestHabit) -> list[tuple[str, str]]:
        """The request's moves as (tool, thought) candidates, in order. A write ends the plan: once a
        tool that writes has been tried, the naive model answers."""
        if any(seen.done(tool) for tool in self.habits.writes):
            return []
        candidates: list[tuple[str, str]] = []
        for move in request.moves:
            if isinstance(move, LookUp):
                candidates += self.look_up(move, seen)
            elif self.holds(move, seen, request):
                candidates.append((move.tool, move.why or f"I'll call {move.tool}."))
        return candidates

    def holds(self, move: Move, seen: Observed, request: RequestHabit) -> bool:
        if move.when == FIRST:
            return not seen.calls_made
        if move.when == FOUND:
            return seen.record() == "found"
        if move.when == ALLOWED:
            return request.allowed is not None and request.allowed(seen)
        return move.when == ALWAYS

    def look_up(self, look: LookUp, seen: Observed) -> list[tuple[str, str]]:
        """The look-up's candidates: the fast source first (or the full one), and in a thorough look-up
        habits 1-3 (double-check, ask the lagging source about a waiting or a missing record)."""
        h, noun = self.habits, self.habits.noun
        fast, full, lagging = h.fast, h.full, h.lagging
        fast_first = look.start == "fast" and fast in seen.offered and not seen.done(fast)
        if not look.thorough:
            if seen.record() is not None:
                return []
            if fast_first:
                return [(fast, look.why or f"I'll look the {noun} up in {fast} first.")]
            return [(full, look.why or f"I'll look the {noun} up in {full}.")] if full else []
        if not any(tool in seen.results for tool in (fast, full, lagging) if tool):
            if fast_first:
                return [(fast, f"I'll check {fast} first, it is fast.")]
            return [(full, f"I'll look the {noun} up in {full}.")] if full else []
        plan: list[tuple[str, str]] = []
        fast_status = seen.results.get(fast or "", ("", {}))[0]
        if fast_status == "ok" and h.double_check and full:
            plan.append((full, f"{fast} has it, but I'll double-check {full} to confirm accuracy."))
        if fast_status != "ok" and full:
            plan.append((full, f"Not in {fast}; {full} should have it."))
        if lagging and seen.status in h.waiting:
            plan.append((lagging, f"The {noun} is {seen.status}; I'll ask {lagging} to be sure."))
        missing = full and seen.results.get(full, ("",))[0] == "not_found"
        if lagging and h.ask_lagging_when_missing and missing:
            plan.append((lagging, f"{full} has no such {noun}; maybe {lagging} knows it."))
        return plan

    def _reply(self, messages, tools, content: str, calls: tuple[ToolCall, ...]) -> ModelReply:
        prompt = count_prompt_tokens(messages, tools)
        completion = count_tokens(content) + sum(count_tokens(c.arguments) + 8 for c in calls)
        h = self.habits
        base, read_speed, write_speed = (
            (h.base_latency_s, h.prompt_tokens_per_s, h.completion_tokens_per_s) if h else (1.0, 2000.0, 40.0)
        )
        latency = base + prompt / read_speed + completion / write_speed
        return ModelReply(content=content, tool_calls=calls, usage=Usage(prompt, completion),
                          latency_s=round(latency, 3))  # fmt: skip


def lookalike_arguments(name: str, seen: Observed, question: str, id_argument: str) -> dict:
    """A naive model stuffs the id into the tool's first parameter if it names an id (the world's own
    id argument, or any '..._id'), else asks it the question ('query')."""
    first = next(iter(seen.parameters(name)), None)
    if first is None:
        return {}
    return {first: seen.record_id if first == id_argument or first.endswith("_id") else question}


def _draw(seed: int, *parts: str) -> float:
    """A reproducible number in [0, 1) from the seed and the given text."""
    digest = hashlib.sha256("|".join([str(seed), *parts]).encode()).hexdigest()
    return int(digest[:8], 16) / 2**32
