"""The order world: the seed article's order-status lookup, its data and its tools (notebook 01).

Three data sources, fast to slow, as in the article:

- a local cache (0.05 s): a few hot orders with status, amount and times;
- the database (0.8 s): every order, with payment method and update times;
- a third-party payment API (6 s): transactions. The provider registers a payment about
  ``SETTLEMENT_LAG_MIN`` minutes after the order is created, so asking about a fresh pending order is
  wasted time, while a *stale* pending order must be confirmed there (it may have been captured or
  declined since the shop's own records were written).

Demo data from the article: A123 paid 99.5 and B456 pending 215.0 (both cached), C789 refunded 66.0
(database only). The task suite is ``tasks.py``; the words (tool names, statuses, prompt) are
``words.py``. Latencies are *virtual*: runs are instant but report realistic times. Each tool declares
its role for the agent (``@tool``): the database holds every order, the provider lags 30 minutes.

Left out on purpose: writes that change the world (``refund_order`` only records the request), more
than one order per question, and concurrency.
"""

from dataclasses import dataclass, field, fields
from datetime import datetime, timedelta
from functools import lru_cache

from ralph_mini.tools import NotFound, Tool, tool
from ralph_mini.world import TIME_FORMAT, Words
from ralph_mini.worlds.orders.words import STATUSES, WORDS

NOW = datetime(2025, 3, 10, 12, 0)
SETTLEMENT_LAG_MIN = 30


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
    """All orders by id, plus a record of side effects (emails, refund requests) for later lessons.
    A ``world.World``: its ``words`` and its ``tools()``."""

    orders: dict[str, Order]
    now: datetime = NOW
    side_effects: list[str] = field(default_factory=list)
    words: Words = WORDS
    _tools: list[Tool] = field(default_factory=list, init=False, repr=False, compare=False)

    def tools(self, core_only: bool = False) -> list[Tool]:
        """The tools bound to this world: the three core ones first, then the extended ones. Built once:
        they read the world when called, so a schema never needs building again."""
        if not self._tools:
            self._tools = make_tools(self)
        return [t for t in self._tools if t.core] if core_only else list(self._tools)

    def __getstate__(self) -> dict:
        """Pickled without its built tools (closures cannot be pickled): a worker process returns worlds."""
        return {k: v for k, v in self.__dict__.items() if not k.startswith("_")}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        for cache in fields(self):
            if cache.name.startswith("_"):
                setattr(self, cache.name, cache.default_factory())


@lru_cache(maxsize=4096)  # every look-up writes its record's times again
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

    @tool(latency_s=0.05, statuses=STATUSES)
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

    @tool(latency_s=0.8, statuses=STATUSES, holds_every=True)
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

    @tool(latency_s=6.0, lag_min=SETTLEMENT_LAG_MIN)
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

    @tool(latency_s=0.3, core=False, writes=True)
    def send_email(to: str, subject: str, body: str) -> dict:
        """Send an email to a customer.

        Args:
            to: Recipient address.
            subject: Subject line.
            body: Message text.
        """
        world.side_effects.append(f"email to {to}: {subject}")
        return {"sent": True}

    @tool(latency_s=1.0, core=False, writes=True)
    def refund_order(order_id: str) -> dict:
        """Request a refund for an order. This changes money: never use it to look something up.

        Args:
            order_id: The order id to refund.
        """
        world.side_effects.append(f"refund requested for {order_id}")
        return {"refund_requested": True}

    return [query_local_cache, query_database, query_payment_api, get_shipping_status,
            get_order_history, search_docs, calculator, send_email, refund_order]  # fmt: skip
