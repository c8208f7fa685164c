"""The task suite and the grader: seeded questions about the order world, with the truth (notebook 01).

``make_suite`` adds seeded orders of every kind to the article's demo orders and asks one question per
order, worded from ``words.QUESTIONS``. Each ``world.Task`` carries what a correct answer must say
and the oracle's minimum number of tool calls (a policy that knows the rules but not the data), so
every notebook measures waste the same way. ``world.grade`` checks an answer field by field.

Left out on purpose: questions about more than one order, and tasks that change the world.
"""

import random
from datetime import timedelta

from ralph_mini.lang import in_language
from ralph_mini.world import Suite, Task
from ralph_mini.worlds.orders import words
from ralph_mini.worlds.orders.world import NOW, SETTLEMENT_LAG_MIN, Order, OrderWorld, demo_orders, stamp

# Share of each order kind in a generated suite (sums to 1).
KIND_MIX = {
    "paid_cached": 0.30,  # in the cache: one call answers it
    "paid_uncached": 0.14,  # cache miss, then the database
    "refunded": 0.10,  # database only
    "pending_fresh": 0.16,  # cached, created minutes ago: the provider has nothing yet
    "pending_stale": 0.16,  # cached as pending long ago: the provider knows the truth
    "missing": 0.14,  # no such order anywhere
}


def expected_answer(order: Order) -> dict:
    """The fields a correct answer must contain, after the provider's word where it is needed."""
    if order.kind == "missing":
        return {"status": "not_found"}
    if order.kind == "pending_stale":
        if order.provider_status == "captured":
            return {"status": "paid", "amount": order.amount,
                    "paid_at": stamp(order.settled_at), "txn_id": order.txn_id}  # fmt: skip
        return {"status": "payment_failed", "amount": order.amount}
    answer = {"status": order.status, "amount": order.amount}
    if order.status == "paid":
        answer["paid_at"] = stamp(order.paid_at)
    return answer


def oracle_calls(order: Order) -> int:
    """Fewest calls a policy that knows the rules (but not the data) needs: cache, then what's missing."""
    return {"paid_cached": 1, "pending_fresh": 1, "pending_stale": 2}.get(order.kind, 2)


def random_order(rng: random.Random, order_id: str, kind: str) -> Order:
    """A seeded order of the given kind; times are relative to NOW."""
    amount = round(rng.uniform(5, 400) * 2) / 2
    method = rng.choice(["card", "card", "paypal", "bank_transfer"])
    created = NOW - timedelta(minutes=rng.randint(40, 3 * 24 * 60))
    paid = created + timedelta(minutes=rng.randint(1, 5))
    txn = f"TXN-{rng.randint(10000, 99999)}"
    if kind in ("paid_cached", "paid_uncached"):
        return Order(order_id, kind, "paid", amount, created, kind == "paid_cached", paid, method,
                     "captured", txn, paid)  # fmt: skip
    if kind == "refunded":
        return Order(order_id, kind, "refunded", amount, created, False, paid, method,
                     "refunded", txn, paid)  # fmt: skip
    if kind == "pending_fresh":
        created = NOW - timedelta(minutes=rng.randint(2, SETTLEMENT_LAG_MIN - 5))
        return Order(order_id, kind, "pending", amount, created, True, payment_method=method)
    if kind == "pending_stale":
        captured = rng.random() < 0.7
        created = NOW - timedelta(minutes=rng.randint(SETTLEMENT_LAG_MIN + 15, 600))
        settled = created + timedelta(minutes=rng.randint(1, 10))
        return Order(order_id, kind, "pending", amount, created, True, None, method,
                     "captured" if captured else "declined", txn, settled)  # fmt: skip
    return Order(order_id, "missing", "missing", 0.0, created, False)


def make_suite(n: int = 50, seed: int = 7, demo_first: bool = True, language: str = "en") -> Suite:
    """A world and ``n`` seeded tasks of mixed kinds (the demo orders first when ``demo_first``).

    Same ``seed`` -> the same tasks on every machine; a longer suite only appends tasks. ``language``
    ("en" or "zh") picks the phrasings the questions are asked in; the orders and truths are the same.
    """
    rng = random.Random(seed)
    orders = {o.order_id: o for o in demo_orders()}
    order_ids = list(orders) if demo_first else []
    kinds = list(KIND_MIX)
    while len(order_ids) < n:
        order_id = f"{rng.choice('EFGHJKLMNPRSTUVWXYZ')}{rng.randint(100, 999)}"
        if order_id in orders:
            continue
        kind = rng.choices(kinds, weights=list(KIND_MIX.values()))[0]
        orders[order_id] = random_order(rng, order_id, kind)
        order_ids.append(order_id)
    tasks = [make_task(i, orders[order_id], seed, language) for i, order_id in enumerate(order_ids[:n], 1)]
    return Suite(world=OrderWorld(orders=orders), tasks=tasks)


def make_task(number: int, order: Order, seed: int, language: str = "en") -> Task:
    # The wording depends only on (seed, order), so task T007 is the same in a suite of 10 or of 50,
    # and the n-th phrasing of one language is the n-th of the other: the same draw in both editions.
    asked_in = in_language(words.QUESTIONS, language)
    phrasing = asked_in[random.Random(f"{seed}:{order.order_id}").randrange(len(asked_in))]
    return Task(
        task_id=f"T{number:03d}",
        question=words.QUESTIONS[phrasing].format(id=order.order_id),
        task_type=words.STATUS,
        expected=expected_answer(order),
        oracle_calls=oracle_calls(order),
        prompt=words.SYSTEM_PROMPT.format(now=stamp(NOW)),
        now=stamp(NOW),
        relevant_tools=words.LOOKUP_TOOLS,
        kind=order.kind,
        record_id=order.order_id,
        phrasing=phrasing,
    )
