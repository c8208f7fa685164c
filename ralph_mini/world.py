"""The order world: the seed article's order-status lookup, its tools, a task suite and a grader
(notebook 01).

Three data sources, fast to slow, as in the article:

- a local cache (0.05 s): a few hot orders with status, amount and times;
- the database (0.8 s): every order, with payment method and update times;
- a third-party payment API (6 s): transactions. The provider registers a payment about
  ``SETTLEMENT_LAG_MIN`` minutes after the order is created, so asking about a fresh pending order is
  wasted time, while a *stale* pending order must be confirmed there (it may have been captured or
  declined since the shop's own records were written).

Demo data from the article: A123 paid 99.5 and B456 pending 215.0 (both cached), C789 refunded 66.0
(database only). ``make_suite`` adds seeded orders of every kind and one question per task, with the
ground truth and the oracle's minimum number of tool calls. Latencies are *virtual*: runs are instant
but report realistic times.

Left out on purpose: writes that change the world (``refund_order`` only records the request), more
than one order per question, and concurrency.
"""

import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from ralph_mini.tools import NotFound, Tool, tool

NOW = datetime(2025, 3, 10, 12, 0)
TIME_FORMAT = "%Y-%m-%d %H:%M"
SETTLEMENT_LAG_MIN = 30
CORE_TOOLS = ("query_local_cache", "query_database", "query_payment_api")

# Share of each order kind in a generated suite (sums to 1).
KIND_MIX = {
    "paid_cached": 0.30,  # in the cache: one call answers it
    "paid_uncached": 0.14,  # cache miss, then the database
    "refunded": 0.10,  # database only
    "pending_fresh": 0.16,  # cached, created minutes ago: the provider has nothing yet
    "pending_stale": 0.16,  # cached as pending long ago: the provider knows the truth
    "missing": 0.14,  # no such order anywhere
}

QUESTIONS = (
    "What is the status of order {id}?",
    "Has order {id} been paid? Please give the status and the amount.",
    "A customer asks about order {id}: what is its payment status?",
    "Check order {id} and report its status and amount.",
    "Where does payment for order {id} stand?",
)


@dataclass(frozen=True)
class Order:
    """One order as the shop and its payment provider know it."""

    order_id: str
    kind: str
    status: str  # what the shop's own records say
    amount: float
    created_at: datetime
    cached: bool
    paid_at: datetime | None = None
    payment_method: str = "card"
    provider_status: str | None = None  # captured / declined / refunded, or None: no transaction
    txn_id: str | None = None
    settled_at: datetime | None = None


@dataclass
class OrderWorld:
    """All orders by id, plus a record of side effects (emails, refund requests) for later lessons."""

    orders: dict[str, Order]
    now: datetime = NOW
    side_effects: list[str] = field(default_factory=list)

    def tools(self, core_only: bool = False) -> list[Tool]:
        """The tools bound to this world: the three core ones first, then the extended ones."""
        tools = make_tools(self)
        return [t for t in tools if t.core] if core_only else tools


def stamp(moment: datetime | None) -> str | None:
    return moment.strftime(TIME_FORMAT) if moment else None


def demo_orders() -> list[Order]:
    """The seed article's demo data, plus one stale pending order."""
    return [
        Order("A123", "paid_cached", "paid", 99.5, NOW - timedelta(hours=2, minutes=48), True,
              paid_at=NOW - timedelta(hours=2, minutes=47), provider_status="captured",
              txn_id="TXN-88231", settled_at=NOW - timedelta(hours=2, minutes=47)),
        Order("B456", "pending_fresh", "pending", 215.0, NOW - timedelta(minutes=12), True),
        Order("C789", "refunded", "refunded", 66.0, NOW - timedelta(days=1, hours=21), False,
              paid_at=NOW - timedelta(days=1, hours=20), payment_method="paypal",
              provider_status="refunded", txn_id="TXN-77102",
              settled_at=NOW - timedelta(days=1, hours=20)),
        Order("D012", "pending_stale", "pending", 42.0, NOW - timedelta(hours=3, minutes=30), True,
              provider_status="captured", txn_id="TXN-90417",
              settled_at=NOW - timedelta(hours=3, minutes=28)),
    ]  # fmt: skip


def make_tools(world: OrderWorld) -> list[Tool]:
    """Build the tools as closures over ``world``: three core lookups and six extended tools."""

    @tool(latency_s=0.05)
    def query_local_cache(order_id: str) -> dict:
        """Fast local cache of recent orders: status, amount and times. May miss older orders.

        Args:
            order_id: The order id, for example "A123".
        """
        order = world.orders.get(order_id)
        if order is None or not order.cached:
            raise NotFound(f"order {order_id} is not in the local cache")
        record = {"status": order.status, "amount": order.amount,
                  "created_at": stamp(order.created_at)}  # fmt: skip
        if order.paid_at:
            record["paid_at"] = stamp(order.paid_at)
        return record

    @tool(latency_s=0.8)
    def query_database(order_id: str) -> dict:
        """The shop's order database: every order, with payment method and update time. Slower.

        Args:
            order_id: The order id, for example "A123".
        """
        order = world.orders.get(order_id)
        if order is None or order.kind == "missing":
            raise NotFound(f"order {order_id} does not exist in the database")
        record = {"status": order.status, "amount": order.amount,
                  "created_at": stamp(order.created_at), "payment_method": order.payment_method}  # fmt: skip
        if order.paid_at:
            record["paid_at"] = stamp(order.paid_at)
        return record

    @tool(latency_s=6.0)
    def query_payment_api(order_id: str) -> dict:
        """Third-party payment provider (slow). Transactions appear here about 30 minutes after
        the order is created; use it to confirm pending orders that are older than that.

        Args:
            order_id: The order id, for example "A123".
        """
        order = world.orders.get(order_id)
        if order is None or order.provider_status is None:
            raise NotFound(f"the payment provider has no transaction for order {order_id}")
        return {"payment_status": order.provider_status, "txn_id": order.txn_id,
                "settled_at": stamp(order.settled_at)}  # fmt: skip

    @tool(latency_s=0.6, core=False)
    def get_shipping_status(order_id: str) -> dict:
        """Shipping carrier and delivery state of an order (not its payment).

        Args:
            order_id: The order id, for example "A123".
        """
        order = world.orders.get(order_id)
        if order is None or order.kind == "missing":
            raise NotFound(f"no shipment for order {order_id}")
        shipped = order.status in ("paid", "refunded")
        return {"carrier": "DHL", "shipping_status": "delivered" if shipped else "not_shipped"}

    @tool(latency_s=0.9, core=False)
    def get_order_history(customer_id: str) -> dict:
        """All orders of one customer, newest first.

        Args:
            customer_id: The customer id, for example "CUST-0042".
        """
        raise NotFound(f"no customer {customer_id}")

    @tool(latency_s=0.4, core=False)
    def search_docs(query: str) -> dict:
        """Search the shop's policy documents (refunds, shipping, payment terms).

        Args:
            query: Words to search for.
        """
        return {"best_match": "Payment terms: orders are paid by card or PayPal at checkout."}

    @tool(latency_s=0.01, core=False)
    def calculator(expression: str) -> dict:
        """Evaluate simple arithmetic such as "99.5 * 2".

        Args:
            expression: Digits, + - * / and parentheses only.
        """
        if not set(expression) <= set("0123456789.+-*/() ") or "**" in expression:
            # no '**': 9**9**9 is one C call that holds the GIL, and no timeout could stop it
            raise ValueError(f"calculator accepts digits and + - * / ( ) only, got {expression[:60]!r}")
        return {"result": eval(expression, {"__builtins__": {}})}  # charset checked above

    @tool(latency_s=0.3, core=False)
    def send_email(to: str, subject: str, body: str) -> dict:
        """Send an email to a customer.

        Args:
            to: Recipient address.
            subject: Subject line.
            body: Message text.
        """
        world.side_effects.append(f"email to {to}: {subject}")
        return {"sent": True}

    @tool(latency_s=1.0, core=False)
    def refund_order(order_id: str) -> dict:
        """Request a refund for an order. This changes money: never use it to look something up.

        Args:
            order_id: The order id to refund.
        """
        world.side_effects.append(f"refund requested for {order_id}")
        return {"refund_requested": True}

    return [query_local_cache, query_database, query_payment_api, get_shipping_status,
            get_order_history, search_docs, calculator, send_email, refund_order]  # fmt: skip


@dataclass(frozen=True)
class Task:
    """One question for the agent, with what a correct answer must say and the oracle's call count."""

    task_id: str
    question: str
    order_id: str
    kind: str
    expected: dict
    oracle_calls: int
    now: str = stamp(NOW)
    relevant_tools: tuple[str, ...] = CORE_TOOLS


@dataclass
class Suite:
    world: OrderWorld
    tasks: list[Task]


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


def make_suite(n: int = 50, seed: int = 7, demo_first: bool = True) -> Suite:
    """A world and ``n`` seeded tasks of mixed kinds (the demo orders first when ``demo_first``).

    Same ``seed`` -> the same tasks on every machine; a longer suite only appends tasks.
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
    tasks = [make_task(i, orders[order_id], seed) for i, order_id in enumerate(order_ids[:n], 1)]
    return Suite(world=OrderWorld(orders=orders), tasks=tasks)


def make_task(number: int, order: Order, seed: int) -> Task:
    # The wording depends only on (seed, order), so task T007 is the same in a suite of 10 or of 50.
    wording = random.Random(f"{seed}:{order.order_id}").choice(QUESTIONS)
    return Task(
        task_id=f"T{number:03d}",
        question=wording.format(id=order.order_id),
        order_id=order.order_id,
        kind=order.kind,
        expected=expected_answer(order),
        oracle_calls=oracle_calls(order),
    )


@dataclass(frozen=True)
class Grade:
    correct: bool
    wrong_fields: dict  # field -> (expected, got)

    def explain(self) -> str:
        if self.correct:
            return "correct"
        return "; ".join(f"{k}: expected {e!r}, got {g!r}" for k, (e, g) in self.wrong_fields.items())


def grade(task: Task, answer: dict | None) -> Grade:
    """Check the answer field by field; amounts within a cent. Extra fields are ignored."""
    answer = answer or {}
    wrong = {}
    for key, expected in task.expected.items():
        got = answer.get(key)
        if not _same(key, expected, got):
            wrong[key] = (expected, got)
    return Grade(correct=not wrong, wrong_fields=wrong)


def _same(key: str, expected: object, got: object) -> bool:
    """Equal for grading: amounts within a cent (numbers or numeric strings), text case-insensitive."""
    if got is None or isinstance(got, bool):
        return False
    if key == "amount":
        try:
            return abs(float(got) - float(expected)) < 0.01
        except (TypeError, ValueError):
            return False
    return str(got).strip().lower() == str(expected).lower()
