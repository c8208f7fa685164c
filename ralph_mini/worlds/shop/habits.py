"""How the simulated model acts in the wider shop: its naive habits per request, as data (notebook 09).

Same contract as the order desk's habits (``worlds/orders/habits.py``): the offline model decides from
the messages alone (the question's words, the prompt's policy, the observations so far and the lessons
in the prompt), never from the world. It follows lessons literally, whatever request they were learned
on, so a lesson learned on order-status questions can help a cancellation (ask the provider about an
old pending order) or hurt a delivery question (answer after the cache hit, before asking the carrier).

Its naive habits, one per request type, as a plausible untrained assistant would act:

- status: the order desk's (double-check the database, ask the provider about every pending order);
- refund: it refunds at once, without checking the policy (eligibility, window, never twice);
- charges: it asks the slow payment provider first, then lists the transactions;
- delivery: it checks that the order exists in the database before asking the carrier;
- cancel: it cancels whatever the shop's own record calls pending, without asking the provider whether
  an old pending order was captured since.

What it reads off the prompt: the refund window ("within N days of its payment").
"""

import re
from datetime import timedelta

from ralph_mini.offline_habits import (
    ALLOWED,
    ALWAYS,
    FIRST,
    FOUND,
    LookUp,
    Move,
    RequestHabit,
    Seen,
    WroteAnswer,
    fields_of,
    habits_for,
    ok,
)
from ralph_mini.world import parse_time
from ralph_mini.worlds.orders import words as ow
from ralph_mini.worlds.orders.habits import STATUS_HABIT
from ralph_mini.worlds.shop import words as sw
from ralph_mini.worlds.shop.world import empty_shop


def refund_allowed(seen: Seen) -> bool:
    """The written policy, read from the prompt: paid, within the window, not refunded before."""
    days = re.search(sw.REFUND_DAYS_RE, seen.system)
    paid_at = seen.found_fields().get("paid_at")
    if seen.status != "paid" or not paid_at or seen.now is None or days is None:
        return False
    return seen.now - parse_time(paid_at.strip()) <= timedelta(days=int(days[1]))


def cancel_allowed(seen: Seen) -> bool:
    """The habit: the shop's own record saying pending is enough, unless the provider said captured."""
    return seen.status == "pending" and fields_of(seen, ow.PAYMENT).get("payment_status") != "captured"


def wrote(tool: str, field: str) -> WroteAnswer:
    """An answer that says whether the write went through: {'order_id': ..., field: 'done'|'refused'}."""
    return WroteAnswer("order_id", tool, field, sw.DONE, sw.REFUSED)


def charges_answer(seen: Seen) -> dict:
    """Never listed: the provider's one transaction is all it knows."""
    listed = seen.results.get(sw.TRANSACTIONS)
    if listed is None:
        charges = 1 if ok(seen, ow.PAYMENT) else 0
    else:
        charges = int(listed[1].get("charges", 0)) if listed[0] == "ok" else 0
    return {"order_id": seen.record_id, "charged_twice": sw.YES if charges > 1 else sw.NO, "charges": charges}


def delivery_answer(seen: Seen) -> dict:
    answer: dict = {"order_id": seen.record_id}
    parcel = seen.results.get(ow.SHIPPING)
    if parcel and parcel[0] == "ok":
        return answer | {k: v for k, v in parcel[1].items() if k in ("shipping_status", "carrier")}
    if (parcel and parcel[0] == "not_found") or seen.record() == "missing":
        return answer | {"shipping_status": "not_found"}
    return answer


REQUESTS = {
    sw.STATUS: STATUS_HABIT,
    sw.REFUND: RequestHabit(
        moves=(
            Move(ow.REFUND, FIRST, "The customer wants a refund; I'll issue it."),  # the habit
            LookUp(why="I need the order's status and payment time to apply the policy."),
            Move(ow.REFUND, ALLOWED, "The policy allows this refund; refunding."),
        ),
        answer=wrote(ow.REFUND, "refund"),
        allowed=refund_allowed,
    ),
    sw.CHARGES: RequestHabit(
        moves=(
            Move(ow.PAYMENT, ALWAYS, "I'll ask the payment provider what it charged for this order."),
            Move(sw.TRANSACTIONS, ALWAYS, "Let me list every charge to be sure."),
        ),
        answer=charges_answer,
    ),
    sw.DELIVERY: RequestHabit(
        moves=(
            LookUp(start="full", why="First I'll check that the order exists."),
            Move(ow.SHIPPING, FOUND, "The order exists; I'll ask the carrier."),
        ),
        answer=delivery_answer,
    ),
    sw.CANCEL: RequestHabit(
        moves=(
            LookUp(why="I'll look the order up to see whether it can be cancelled."),
            Move(sw.CANCEL_ORDER, ALLOWED, "The order is still pending; cancelling it."),
        ),
        answer=wrote(sw.CANCEL_ORDER, "cancel"),
        allowed=cancel_allowed,
    ),
}
HABITS = habits_for(sw.WORDS, empty_shop().tools(), REQUESTS, waiting=ow.WAITING)
