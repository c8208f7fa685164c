"""How the offline model handles the wider shop's refunds, charges, parcels and cancellations (notebook 09).

Same contract as ``offline.py``: it decides from the messages alone (the question's words, the prompt's
policy, the observations so far and the lessons in the prompt), never from the world. It follows lessons
literally, whatever request they were learned on: a "start with" rule sets its first call, a "call" rule
whose trigger holds comes before its own plan, a "skip" rule removes a tool from it, and an "answer" rule
makes it answer with what it has. So a lesson learned on order-status questions can help a cancellation
(ask the provider about an old pending order) or hurt a delivery question (answer after the cache hit,
before asking the carrier).

Its naive habits, one per request type, as a plausible untrained assistant would act:

- refund: it refunds at once, without checking the policy (eligibility, window, never twice);
- charges: it asks the slow payment provider first, then lists the transactions;
- delivery: it checks that the order exists in the database before asking the carrier;
- cancel: it cancels whatever the shop's own record calls pending, without asking the provider whether
  an old pending order was captured since.

Left out on purpose: the order-status request, which is ``offline.py``'s own ``decide``.
"""

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Protocol

from ralph_mini import order_words as ow
from ralph_mini import shop_words as sw
from ralph_mini.rules import Rule

CACHE, DATABASE, PAYMENT = ow.CACHE, ow.DATABASE, ow.PAYMENT


class Seen(Protocol):
    """What ``offline.Observed`` offers: the conversation as the model reads it."""

    order_id: str | None
    now: datetime | None
    offered: list[str]
    results: dict[str, tuple[str, dict]]
    calls_made: int
    refund_days: int | None

    @property
    def status(self) -> str | None: ...

    def done(self, tool: str) -> bool: ...


def decide_request(task_type: str, seen: Seen, active: Sequence[Rule], skip: set[str]) -> tuple:
    """(thought, (tool, arguments) or None, answer or None) for a request that is not about status."""
    for rule in active:
        for action in rule.actions:
            if action.verb == "call" and action.tool in seen.offered and not seen.done(action.tool):
                return f"Lesson: '{rule}'.", (action.tool, {"order_id": seen.order_id}), None
    starts = [a.tool for r in active for a in r.actions if a.verb == "start" and a.tool in seen.offered]
    if starts and not seen.calls_made:
        return f"Lesson: start with {starts[0]}.", (starts[0], {"order_id": seen.order_id}), None
    answering = next((r for r in active if any(a.verb == "answer" for a in r.actions)), None)
    if answering and seen.calls_made:
        return f"Lesson: '{answering}'. I can answer now.", None, compose(task_type, seen)
    for tool, why in PLANS[task_type](seen):
        if tool not in skip and tool in seen.offered and not seen.done(tool):
            return why, (tool, {"order_id": seen.order_id}), None
    return "I have what I need.", None, compose(task_type, seen)


def looked_up(seen: Seen) -> str | None:
    """'found', 'missing' (the database has no such order) or None (not known yet)."""
    if any(seen.results.get(t, ("",))[0] == "ok" for t in (CACHE, DATABASE)):
        return "found"
    return "missing" if seen.results.get(DATABASE, ("",))[0] == "not_found" else None


def lookup_step(seen: Seen, why: str) -> list[tuple[str, str]]:
    """The cache first (if offered and not tried), then the database."""
    if CACHE in seen.offered and not seen.done(CACHE):
        return [(CACHE, why)]
    return [(DATABASE, why)]


def refund_plan(seen: Seen) -> list[tuple[str, str]]:
    if seen.done(ow.REFUND):
        return []
    if not seen.calls_made:  # the habit: no eligibility check
        return [(ow.REFUND, "The customer wants a refund; I'll issue it.")]
    if looked_up(seen) is None:
        return lookup_step(seen, "I need the order's status and payment time to apply the policy.")
    if eligible(seen):
        return [(ow.REFUND, "The policy allows this refund; refunding.")]
    return []


def eligible(seen: Seen) -> bool:
    """The written policy, read from the prompt: paid, within the window, not refunded before."""
    found = [seen.results[t][1] for t in (DATABASE, CACHE) if seen.results.get(t, ("",))[0] == "ok"]
    fields = found[0] if found else {}
    if seen.status != "paid" or not fields.get("paid_at") or seen.now is None or seen.refund_days is None:
        return False
    paid_at = datetime.strptime(fields["paid_at"].strip(), "%Y-%m-%d %H:%M")
    return seen.now - paid_at <= timedelta(days=seen.refund_days)


def charges_plan(seen: Seen) -> list[tuple[str, str]]:
    return [
        (PAYMENT, "I'll ask the payment provider what it charged for this order."),
        (ow.TRANSACTIONS, "Let me list every charge to be sure."),
    ]


def delivery_plan(seen: Seen) -> list[tuple[str, str]]:
    found = looked_up(seen)
    if found is None:
        return [(DATABASE, "First I'll check that the order exists.")]
    return [] if found == "missing" else [(ow.SHIPPING, "The order exists; I'll ask the carrier.")]


def cancel_plan(seen: Seen) -> list[tuple[str, str]]:
    found = looked_up(seen)
    if found is None:
        return lookup_step(seen, "I'll look the order up to see whether it can be cancelled.")
    provider = seen.results.get(PAYMENT, ("", {}))
    captured = provider[0] == "ok" and provider[1].get("payment_status") == "captured"
    if seen.status == "pending" and not captured:  # the habit: the shop's record is enough
        return [(ow.CANCEL, "The order is still pending; cancelling it.")]
    return []


PLANS = {sw.REFUND: refund_plan, sw.CHARGES: charges_plan, sw.DELIVERY: delivery_plan, sw.CANCEL: cancel_plan}


def compose(task_type: str, seen: Seen) -> dict:
    """The final answer for a request, from what the tools said."""
    answer: dict = {"order_id": seen.order_id}
    if task_type == sw.REFUND:
        return answer | {"refund": sw.DONE if ok(seen, ow.REFUND) else sw.REFUSED}
    if task_type == sw.CANCEL:
        return answer | {"cancel": sw.DONE if ok(seen, ow.CANCEL) else sw.REFUSED}
    if task_type == sw.CHARGES:
        listed = seen.results.get(ow.TRANSACTIONS)
        if listed is None:  # never listed: the provider's one transaction is all it knows
            charges = 1 if ok(seen, PAYMENT) else 0
        else:
            charges = int(listed[1].get("charges", 0)) if listed[0] == "ok" else 0
        return answer | {"charged_twice": sw.YES if charges > 1 else sw.NO, "charges": charges}
    parcel = seen.results.get(ow.SHIPPING)
    if parcel and parcel[0] == "ok":
        return answer | {k: v for k, v in parcel[1].items() if k in ("shipping_status", "carrier")}
    if (parcel and parcel[0] == "not_found") or looked_up(seen) == "missing":
        return answer | {"shipping_status": "not_found"}
    return answer


def ok(seen: Seen, tool: str) -> bool:
    return seen.results.get(tool, ("",))[0] == "ok"
