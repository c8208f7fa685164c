"""The wider shop's tasks: a seeded order per request, its truth under the world's state (notebook 09).

``make_task`` draws an order of a sub-kind for one task type at the task's own time, adds it to the
world, and writes down what a correct reply must say *under the state the world will be in when the
task runs* (a scenario knows its schedule of changes in advance). So the grader follows the new truth:
after the refund window shrinks from 30 to 14 days, refunding a payment 20 days old is wrong.
``ask_again`` asks the same request again, later and in other words, about a twin of the order (its
own id, every time moved with the clock), so two wordings can be compared on the same draw.

Each type's oracle is a policy that knows the rules (and the current state) but not the data:

- status: the cache (the database when the cache is gone or stale), the database on a miss, the provider for
  a pending order older than the settlement lag (the notebook 01 oracle);
- refund: the database, then ``refund_order`` if the policy allows it;
- charges: ``list_transactions``; delivery: ``get_shipping_status``;
- cancel: the cache (database on a miss), the provider for a pending order older than the lag, then
  ``cancel_order`` if the order is pending and its payment was not captured.

A failing provider costs the oracle one more call each time it asks.

Left out on purpose: questions about two orders, and orders asked about twice.
"""

import random
from dataclasses import replace
from datetime import datetime, timedelta

from ralph_mini.world import Task, expected_writes, parse_time
from ralph_mini.worlds.orders import words as ow
from ralph_mini.worlds.orders.world import Order, stamp
from ralph_mini.worlds.shop import words as sw
from ralph_mini.worlds.shop.world import Parcel, ShopState, ShopWorld

SUB_KINDS = {  # per type: sub-kind -> share
    sw.STATUS: {"paid_cached": 0.3, "paid_uncached": 0.15, "refunded": 0.1, "pending_fresh": 0.15,
                "pending_stale": 0.2, "missing": 0.1},
    sw.REFUND: {"eligible": 0.35, "edge": 0.2, "late": 0.15, "refunded": 0.15, "pending": 0.1,
                "missing": 0.05},
    sw.CHARGES: {"once": 0.55, "twice": 0.3, "none": 0.15},
    sw.DELIVERY: {"delivered": 0.4, "in_transit": 0.35, "not_shipped": 0.15, "missing": 0.1},
    sw.CANCEL: {"pending_fresh": 0.3, "pending_stale": 0.35, "paid": 0.25, "missing": 0.1},
}  # fmt: skip
RELEVANT_TOOLS = {
    sw.STATUS: ow.LOOKUP_TOOLS,
    sw.REFUND: (ow.CACHE, ow.DATABASE, ow.REFUND),
    sw.CHARGES: (ow.PAYMENT, sw.TRANSACTIONS),
    sw.DELIVERY: (ow.CACHE, ow.DATABASE, ow.SHIPPING),
    sw.CANCEL: (ow.CACHE, ow.DATABASE, ow.PAYMENT, sw.CANCEL_ORDER),
}


def held_out(task: Task) -> bool:
    """Was the task asked in a phrasing the loop never learns from (``words.HELD_OUT``)?"""
    return task.phrasing in sw.HELD_OUT


def random_order(rng: random.Random, order_id: str, task_type: str, kind: str, now: datetime) -> Order:
    """An order of one sub-kind, with times relative to the task's ``now``."""
    amount = round(rng.uniform(5, 400) * 2) / 2
    txn = f"TXN-{rng.randint(10000, 99999)}"

    def minutes_ago(low: int, high: int) -> datetime:
        return now - timedelta(minutes=rng.randint(low, high))

    if kind == "missing":
        return Order(order_id, kind, "missing", 0.0, minutes_ago(40, 600), False)
    if kind in ("pending_fresh", "pending", "not_shipped") or kind == "none":
        created = minutes_ago(2, 25)
        return Order(order_id, kind, "pending", amount, created, True)
    if kind == "pending_stale":
        created = minutes_ago(45, 600)
        provider = "captured" if rng.random() < 0.6 else "declined"
        settled = created + timedelta(minutes=rng.randint(1, 10))
        return Order(order_id, kind, "pending", amount, created, True, None, "card", provider, txn, settled)
    days = {"eligible": (1, 12), "edge": (16, 27), "late": (35, 80), "refunded": (2, 20)}.get(kind, (0, 3))
    created = now - timedelta(days=rng.randint(*days), minutes=rng.randint(60, 600))
    paid = created + timedelta(minutes=rng.randint(1, 5))
    refunded = kind == "refunded"
    cached = kind == "paid_cached" or (task_type == sw.CANCEL and kind == "paid")
    return Order(order_id, kind, "refunded" if refunded else "paid", amount, created, cached, paid, "card",
                 "refunded" if refunded else "captured", txn, paid)  # fmt: skip


def expected(task_type: str, order: Order, state: ShopState, now: datetime, charges: int, parcel) -> dict:
    """What a correct reply says under ``state`` at ``now``."""
    age_min = (now - order.created_at).total_seconds() / 60
    provider_knows = order.provider_status is not None and age_min >= state.settlement_lag_min
    if task_type == sw.STATUS:
        if order.kind == "missing":
            return {"status": "not_found"}
        if order.status == "pending" and provider_knows:
            if order.provider_status == "captured":
                return {"status": "paid", "amount": order.amount, "paid_at": stamp(order.settled_at),
                        "txn_id": order.txn_id}  # fmt: skip
            return {"status": "payment_failed", "amount": order.amount}
        answer = {"status": order.status, "amount": order.amount}
        return answer | ({"paid_at": stamp(order.paid_at)} if order.status == "paid" else {})
    if task_type == sw.REFUND:
        return {"refund": sw.DONE if refundable(order, state, now) else sw.REFUSED}
    if task_type == sw.CHARGES:
        return {"charged_twice": sw.YES if charges > 1 else sw.NO, "charges": charges}
    if task_type == sw.DELIVERY:
        if parcel is None:
            return {"shipping_status": "not_found"}
        return {"shipping_status": parcel.state, "carrier": parcel.carrier}
    return {"cancel": sw.DONE if cancellable(order, state, now) else sw.REFUSED}


def refundable(order: Order, state: ShopState, now: datetime) -> bool:
    return (
        order.status == "paid"
        and order.paid_at is not None
        and now - order.paid_at <= timedelta(days=state.refund_days)
    )


def cancellable(order: Order, state: ShopState, now: datetime) -> bool:
    if order.status != "pending":
        return False
    age_min = (now - order.created_at).total_seconds() / 60
    return not (order.provider_status == "captured" and age_min >= state.settlement_lag_min)


def oracle_calls(task_type: str, order: Order, state: ShopState, now: datetime) -> int:
    """The fewest calls of a policy that knows the rules and the state, not the data."""
    age_min = (now - order.created_at).total_seconds() / 60
    provider = 2 if state.provider_failing else 1
    if task_type in (sw.CHARGES, sw.DELIVERY):
        return 1
    if task_type == sw.REFUND:
        return 1 + refundable(order, state, now)
    lookup = (
        2 if state.cache_online and not state.cache_stale and not order.cached else 1
    )  # a stale cache: the database
    asks_provider = order.status == "pending" and age_min >= state.settlement_lag_min
    if task_type == sw.STATUS:
        return lookup + (provider if asks_provider else 0)
    return lookup + (provider if asks_provider else 0) + cancellable(order, state, now)


def make_task(number: int, world: ShopWorld, rng: random.Random, task_type: str, now: datetime,
              state: ShopState, phrasings: tuple[int, ...]) -> Task:  # fmt: skip
    """Add one fresh order of ``task_type`` to ``world`` and return the task about it, asked at ``now``."""
    kinds = SUB_KINDS[task_type]
    kind = rng.choices(list(kinds), weights=list(kinds.values()))[0]
    order_id = fresh_id(rng, world)
    order = random_order(rng, order_id, task_type, kind, now)
    world.orders[order_id] = order
    charges = {"once": 1, "twice": 2}.get(kind, 0) if task_type == sw.CHARGES else int(bool(order.txn_id))
    world.charges[order_id] = [f"TXN-{rng.randint(10000, 99999)}" for _ in range(charges)]
    parcel = make_parcel(rng, order, kind, task_type)
    if parcel:
        world.parcels[order_id] = parcel
    phrasing = rng.choice(phrasings)
    shown_id = order_id.lower() if rng.random() < sw.LOWER_CASE_SHARE else order_id
    return ask(number, world, task_type, order, state, now, phrasing, shown_id)


def fresh_id(rng: random.Random, world: ShopWorld) -> str:
    """An order id the world does not hold yet."""
    order_id = f"{rng.choice('EFGHJKLMNPRSTUVWXYZ')}{rng.randint(100, 999)}"
    while order_id in world.orders:
        order_id = f"{rng.choice('EFGHJKLMNPRSTUVWXYZ')}{rng.randint(100, 999)}"
    return order_id


def ask_again(task: Task, world: ShopWorld, number: int, order_id: str, now: datetime, state: ShopState,
              phrasing: int) -> Task:  # fmt: skip
    """The same request about a twin of ``task``'s order in ``world``, asked at ``now`` in ``phrasing``.

    The twin has its own id (a write to one never touches the other) and the same fields, with every
    time moved by the distance between the two asking times: every age is the same, so the truth and
    the oracle's calls are too (only ``paid_at`` moves with the clock). Its charges and parcel are
    copies. The id keeps the case the customer wrote it in. ``scenarios.rephrased`` asks one draw this
    way in three wordings, so the wordings can be compared task by task."""
    if task.record_id not in world.orders or order_id in world.orders:
        raise ValueError(f"ask_again needs a task of this world and a new order id, not {order_id!r}")
    shift = now - parse_time(task.now)
    order = world.orders[task.record_id]
    world.orders[order_id] = replace(
        order,
        order_id=order_id,
        created_at=order.created_at + shift,
        paid_at=order.paid_at and order.paid_at + shift,
        settled_at=order.settled_at and order.settled_at + shift,
    )
    world.charges[order_id] = list(world.charges[task.record_id])
    if task.record_id in world.parcels:
        world.parcels[order_id] = world.parcels[task.record_id]
    shown_id = order_id.lower() if task.record_id.lower() in task.question else order_id
    return ask(number, world, task.task_type, world.orders[order_id], state, now, phrasing, shown_id)


def ask(number: int, world: ShopWorld, task_type: str, order: Order, state: ShopState, now: datetime,
        phrasing: int, shown_id: str) -> Task:  # fmt: skip
    """The task about an order already in ``world``: its question, its truth under ``state`` at ``now``,
    and the check of what it must write (nothing, or one refund or cancellation of this order)."""
    order_id = order.order_id
    charges = len(world.charges[order_id])
    writes = {sw.REFUND: ow.REFUND, sw.CANCEL: sw.CANCEL_ORDER}
    truth = expected(task_type, order, state, now, charges, world.parcels.get(order_id))
    wrote = truth.get(task_type) == sw.DONE and task_type in writes
    return Task(
        task_id=f"T{number:03d}",
        question=sw.PHRASINGS[task_type][phrasing].format(id=shown_id),
        task_type=task_type,
        expected=truth,
        oracle_calls=oracle_calls(task_type, order, state, now),
        prompt=sw.SHOP_PROMPT.format(now=stamp(now), refund_days=state.refund_days),
        now=stamp(now),
        relevant_tools=RELEVANT_TOOLS[task_type],
        kind=f"{task_type}:{order.kind}",
        record_id=order_id,
        phrasing=phrasing,
        check=expected_writes(world.writes, order_id, ((writes[task_type], order_id),) if wrote else ()),
    )


def make_parcel(rng: random.Random, order: Order, kind: str, task_type: str) -> Parcel | None:
    if order.kind == "missing":
        return None
    carrier = rng.choice(["DHL", "UPS", "SF Express"])
    if task_type == sw.DELIVERY:
        return Parcel(carrier, kind)
    return Parcel(carrier, "delivered" if order.status in ("paid", "refunded") else "not_shipped")
