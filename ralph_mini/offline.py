"""The offline model: a deterministic stand-in for an LLM, and ``model_from_env`` (notebook 01).

Why simulate: every notebook must run with no key, no network and no cost, and print the same thing
every time. Why *honestly*: the model sees only what a real model would see, the messages and the tool
schemas. It has no access to the world's data except through tool observations, and keeps no state
between calls: the same messages always give the same reply. So lessons in memory can help it only by
being written into the prompt, exactly as with a real model.

It knows the order domain the way a pretrained model "knows" it: it recognises the three lookup tools
by name, reads the order id from the question, the current time from the system prompt, fields from
``key=value`` observations, and rules written in the micro-prompt grammar (``rules.py``).

Its naive habits (``Habits``) copy what the seed article saw in real models:

1. after a cache hit it double-checks the database "to confirm accuracy";
2. it asks the slow payment provider about *every* pending order, without looking at its age;
3. when the database has no such order, it asks the payment provider anyway;
4. it sometimes starts with a wrong tool that merely sounds right (``get_shipping_status``,
   ``search_docs``…), more often the longer the tool list: each non-core tool listed adds
   ``confusion_per_extra_tool`` to the chance. With only the core tools shown it never does.

Randomness is a hash of (seed, question): the same task with the same tool list always makes the same
choice, and a different ``seed`` gives another, equally plausible student model.

Sent no tools, it acts as a *reflector* instead: see ``offline_reflect.py``.

Left out on purpose: free-text understanding beyond the order domain, and learning of any kind.
"""

import hashlib
import json
import re
from dataclasses import dataclass, field
from datetime import datetime

from ralph_mini import order_words as words
from ralph_mini import shop_words
from ralph_mini.model import (
    ModelReply,
    ToolCall,
    Usage,
    count_prompt_tokens,
    count_tokens,
)
from ralph_mini.offline_reflect import write_reflection
from ralph_mini.offline_shop import decide_request
from ralph_mini.rules import Rule, Trigger, find_rules
from ralph_mini.tools import read_fields

CACHE, DATABASE, PAYMENT = words.CACHE, words.DATABASE, words.PAYMENT
LOOKUP_TOOLS = words.LOOKUP_TOOLS
ORDER_ID_RE = re.compile(shop_words.ORDER_ID_IN_TEXT)  # also "d012" and "订单D012的"
REFUND_DAYS_RE = re.compile(shop_words.REFUND_DAYS_RE)
NOW_RE = re.compile(r"Current time:\s*(\d{4}-\d\d-\d\d \d\d:\d\d)")


@dataclass(frozen=True)
class Habits:
    """The naive habits, each one switchable so a notebook can show what it costs."""

    double_check_database: bool = True  # habit 1: cache hit -> query_database anyway
    ask_provider_when_missing: bool = True  # habit 3: database has nothing -> payment API anyway
    confusion_per_extra_tool: float = 0.045  # habit 4: P(wrong first tool) per non-core tool listed
    # Simulated latency of one model call: fixed overhead + reading + writing speed.
    base_latency_s: float = 1.0
    prompt_tokens_per_s: float = 2000.0
    completion_tokens_per_s: float = 40.0


@dataclass
class Observed:
    """What the conversation so far says about the order, as the model reads it."""

    order_id: str | None
    now: datetime | None
    rules: list[Rule]
    offered: list[str]
    results: dict[str, tuple[str, dict]] = field(default_factory=dict)  # tool -> (status, fields)
    attempts: dict[str, int] = field(default_factory=dict)
    calls_made: int = 0
    refund_days: int | None = None  # the refund policy's window, when the prompt states one

    @property
    def status(self) -> str | None:
        for tool in (DATABASE, CACHE):
            if self.results.get(tool, ("", {}))[0] == "ok":
                return self.results[tool][1].get("status")
        return None

    def age_minutes(self) -> float | None:
        for tool in (DATABASE, CACHE):
            created = self.results.get(tool, ("", {}))[1].get("created_at")
            if created and self.now:
                return (self.now - datetime.strptime(created, "%Y-%m-%d %H:%M")).total_seconds() / 60
        return None

    def done(self, tool: str) -> bool:
        """A tool counts as done once it answered ok or not_found, or failed twice."""
        return tool in self.results or self.attempts.get(tool, 0) >= 2


class OfflineModel:
    """Deterministic, offline, stateless: ``complete`` is a pure function of its arguments."""

    def __init__(self, seed: int = 0, habits: Habits | None = None):
        self.seed = seed
        self.habits = habits or Habits()

    def __repr__(self) -> str:
        return f"OfflineModel(seed={self.seed})"

    def complete(self, messages: list[dict], tools: list[dict]) -> ModelReply:
        if not tools:  # no tools offered: this is a request to reflect on a log (offline_reflect.py)
            system = _system_text(messages)
            rejected = any(m.get("role") == "assistant" for m in messages)
            text = write_reflection(system, _first_user_text(messages), rejected)
            return self._reply(messages, tools, text, ())
        seen = read_conversation(messages, tools)
        thought, call, answer = self.decide(seen, question=_first_user_text(messages))
        if call is not None:
            name, arguments = call
            tool_call = ToolCall(id=f"call_{seen.calls_made + 1}", name=name,
                                 arguments=json.dumps(arguments))  # fmt: skip
            return self._reply(messages, tools, thought, (tool_call,))
        content = f"{thought}\nFinal answer: {json.dumps(answer)}"
        return self._reply(messages, tools, content, ())

    def decide(self, seen: Observed, question: str) -> tuple[str, tuple | None, dict | None]:
        """Return (thought, (tool, arguments) or None, answer or None). The heart of the model."""
        if seen.order_id is None:
            return "The question names no order id I can look up.", None, {"status": "unknown"}
        active = [rule for rule in seen.rules if applies(rule.trigger, seen)]
        skip = {a.tool for r in active for a in r.actions if a.verb == "skip"}
        task_type = shop_words.task_type_of(question)
        if task_type != shop_words.STATUS:  # the wider shop's requests (notebook 09, offline_shop.py)
            return decide_request(task_type, seen, active, skip)
        for rule in active:
            for action in rule.actions:
                if action.verb == "call" and action.tool in seen.offered and not seen.done(action.tool):
                    return f"Lesson: '{rule}'.", (action.tool, {"order_id": seen.order_id}), None
        if not any(tool in seen.results for tool in LOOKUP_TOOLS):
            return self.first_move(seen, question, active, skip)
        answering = next((r for r in active if any(a.verb == "answer" for a in r.actions)), None)
        if answering:
            return f"Lesson: '{answering}'. I can answer now.", None, compose_answer(seen)
        for tool, why in self.naive_plan(seen):
            if tool in skip:
                continue
            if tool in seen.offered and not seen.done(tool):
                return why, (tool, {"order_id": seen.order_id}), None
        return "I have what I need.", None, compose_answer(seen)

    def first_move(self, seen: Observed, question: str, active: list[Rule], skip: set[str]) -> tuple:
        """Start with the cache, unless a lesson says otherwise or a look-alike tool tempts us."""
        starts = [a.tool for r in active for a in r.actions if a.verb == "start" and a.tool]
        if starts and starts[0] in seen.offered:
            return f"Lesson: start with {starts[0]}.", (starts[0], {"order_id": seen.order_id}), None
        extras = [name for name in seen.offered if name not in LOOKUP_TOOLS]
        lookalikes = [n for n in extras if n.startswith(("get_", "search_")) and n not in skip]
        tried_one = any(name in seen.attempts for name in extras)  # one look-alike is enough
        chance = self.habits.confusion_per_extra_tool * len(extras)
        if lookalikes and not tried_one and _draw(self.seed, question, "first-tool") < chance:
            name = lookalikes[int(_draw(self.seed, question, "which") * len(lookalikes))]
            return (f"{name} sounds like it could tell me about this order; let me try it.",
                    (name, self.lookalike_arguments(name, seen)), None)  # fmt: skip
        if CACHE in seen.offered and not seen.done(CACHE):
            return "I'll check the fast local cache first.", (CACHE, {"order_id": seen.order_id}), None
        return "I'll look the order up in the database.", (DATABASE, {"order_id": seen.order_id}), None

    def lookalike_arguments(self, name: str, seen: Observed) -> dict:
        # A naive model stuffs the order id into whatever the first parameter is.
        return (
            {"query": f"payment status of order {seen.order_id}"}
            if name == words.DOCS
            else {"order_id" if "order" in name or "shipping" in name else "customer_id": seen.order_id}
        )

    def naive_plan(self, seen: Observed) -> list[tuple[str, str]]:
        """The habits, in the order the model would act on them."""
        cache = seen.results.get(CACHE, ("", {}))[0]
        database = seen.results.get(DATABASE, ("", {}))[0]
        plan = []
        if cache == "ok" and self.habits.double_check_database:
            plan.append(
                (DATABASE, "The cache has it, but I'll double-check the database to confirm accuracy.")
            )  # noqa: E501
        if cache != "ok":
            plan.append((DATABASE, "Not in the cache; the database should have it."))
        if seen.status == "pending":
            plan.append((PAYMENT, "The order is pending; I'll ask the payment provider to be sure."))
        if database == "not_found" and self.habits.ask_provider_when_missing:
            plan.append((PAYMENT, "The database has no such order; maybe the payment provider knows it."))  # noqa: E501
        return plan

    def _reply(self, messages, tools, content: str, calls: tuple[ToolCall, ...]) -> ModelReply:
        prompt = count_prompt_tokens(messages, tools)
        completion = count_tokens(content) + sum(count_tokens(c.arguments) + 8 for c in calls)
        h = self.habits
        latency = h.base_latency_s + prompt / h.prompt_tokens_per_s + completion / h.completion_tokens_per_s
        return ModelReply(content=content, tool_calls=calls, usage=Usage(prompt, completion),
                          latency_s=round(latency, 3))  # fmt: skip


def read_conversation(messages: list[dict], tools: list[dict]) -> Observed:
    """Everything the offline model reads, and nothing else: prompt text, tool names, observations."""
    system = _system_text(messages)
    question = _first_user_text(messages)
    now_match = NOW_RE.search(system)
    id_match = ORDER_ID_RE.search(question)
    days = REFUND_DAYS_RE.search(system)
    seen = Observed(
        order_id=id_match[1].upper() if id_match else None,
        now=datetime.strptime(now_match[1], "%Y-%m-%d %H:%M") if now_match else None,
        rules=find_rules(system),
        offered=[t.get("function", {}).get("name", "") for t in tools],
        refund_days=int(days[1]) if days else None,
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
            if status in ("ok", "not_found"):  # any tool's reply: the shop's requests use more than 3
                seen.results[name] = (status, read_fields(detail))
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


def compose_answer(seen: Observed) -> dict:
    """Merge what the tools said into the final answer; the provider's word wins on status."""
    answer: dict = {"order_id": seen.order_id}
    for tool in (CACHE, DATABASE):
        status, fields = seen.results.get(tool, ("", {}))
        if status == "ok":
            answer.update({k: v for k, v in fields.items() if k in ("status", "amount", "paid_at")})
    if "status" not in answer:
        answer["status"] = "not_found"
    if "amount" in answer:
        answer["amount"] = float(answer["amount"])
    status, fields = seen.results.get(PAYMENT, ("", {}))
    if status == "ok" and answer["status"] == "pending":
        provider = fields.get("payment_status")
        if provider == "captured":
            answer.update(status="paid", paid_at=fields.get("settled_at"), txn_id=fields.get("txn_id"))
        elif provider == "declined":
            answer["status"] = "payment_failed"
    return answer


def _system_text(messages: list[dict]) -> str:
    """Every system message, joined: the prompt, and any lessons added mid-run."""
    return "\n".join(m.get("content") or "" for m in messages if m.get("role") == "system")


def _first_user_text(messages: list[dict]) -> str:
    return next((m.get("content") or "" for m in messages if m.get("role") == "user"), "")


def _draw(seed: int, *parts: str) -> float:
    """A reproducible number in [0, 1) from the seed and the given text."""
    digest = hashlib.sha256("|".join([str(seed), *parts]).encode()).hexdigest()
    return int(digest[:8], 16) / 2**32
