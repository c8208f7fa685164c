"""The wider shop: notebook 01's orders plus charges, parcels, writes, and changes (notebook 09).

The order desk (``worlds/orders``) never changes. This shop has a ``ShopState`` that a scenario changes at
scheduled tasks (``scenarios.py``), and every tool reads it at call time:

- ``cache_online``: when False, the local cache is gone from the tool list (a tool disappears);
- ``settlement_lag_min``: the provider registers a payment this long after the order is created;
  before that it has nothing (a step that was needed for a 60-minute-old order becomes unnecessary
  when the lag grows to 90 minutes). The provider's tool description says the current lag;
- ``refund_days``: the written refund policy's window (the prompt quotes it; the grader follows it);
- ``provider_failing``: the provider is slow, and every order's first call to it fails;
- ``cache_stale``: the cache stops receiving updates: it still answers, but shows an order refunded
  since as paid (a source that goes stale, rather than vanishing).

Writes (refunds, cancellations) are recorded in ``writes`` as (tool, order id): write tasks are graded
on what was written, and nothing more (``shop_tasks.ShopTask.world_problems``).

Left out on purpose: partial refunds, and writes that change what later reads return (each order is
asked about in one task only).
"""

from dataclasses import dataclass, field, replace
from datetime import datetime

from ralph_mini.tools import NotFound, Tool, tool
from ralph_mini.world import Words
from ralph_mini.worlds.orders import words as ow
from ralph_mini.worlds.orders.world import NOW, SETTLEMENT_LAG_MIN, OrderWorld, make_tools, stamp
from ralph_mini.worlds.shop import words


@dataclass(frozen=True)
class ShopState:
    """What a drift can change, with the static world's values as defaults."""

    cache_online: bool = True
    settlement_lag_min: int = SETTLEMENT_LAG_MIN
    refund_days: int = 30
    provider_failing: bool = False
    cache_stale: bool = False  # the cache stops receiving updates: it shows orders refunded since as paid

    def changed(self, **fields: object) -> "ShopState":
        return replace(self, **fields)


@dataclass(frozen=True)
class Parcel:
    carrier: str
    state: str  # one of words.SHIPPING_STATES


@dataclass
class ShopWorld(OrderWorld):
    """Orders as in ``world.py``, plus each order's charges and parcel, the state, and the writes."""

    charges: dict[str, list[str]] = field(default_factory=dict)  # order id -> transaction ids
    parcels: dict[str, Parcel] = field(default_factory=dict)
    state: ShopState = ShopState()
    writes: list[tuple[str, str]] = field(default_factory=list)  # (tool, order id), in call order
    provider_calls: dict[str, int] = field(default_factory=dict)  # order id -> calls to the provider
    words: Words = words.WORDS
    _by_state: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def tools(self, core_only: bool = False) -> list[Tool]:
        """The tools as the world is now: notebook 01's, with the shop's versions of the ones that read
        the state or write, and the two new ones; the cache only while it is online. Built once per
        state (a change of the lag rewrites the provider's description), not once per task."""
        if self.state not in self._by_state:
            mine = {t.name: t for t in shop_tools(self)}
            tools = [mine.get(t.name, t) for t in make_tools(self)] + [mine[n] for n in words.SHOP_TOOLS]
            self._by_state[self.state] = [t for t in tools if self.state.cache_online or t.name != ow.CACHE]
        tools = self._by_state[self.state]
        return [t for t in tools if t.core] if core_only else list(tools)

    def provider_knows(self, order_id: str) -> bool:
        """Has the provider registered this order's payment yet (the lag has passed since creation)?"""
        order = self.orders.get(order_id)
        if order is None or order.provider_status is None:
            return False
        return (self.now - order.created_at).total_seconds() / 60 >= self.state.settlement_lag_min

    def writes_for(self, order_id: str) -> list[tuple[str, str]]:
        return [w for w in self.writes if w[1] == order_id]


def shop_tools(world: ShopWorld) -> list[Tool]:
    """The tools that read the shop's state or write to it, as closures over ``world`` (the cache only
    once it has gone stale: until then it is the order desk's)."""
    lag = world.state.settlement_lag_min
    provider_latency = 15.0 if world.state.provider_failing else 6.0

    @tool(latency_s=0.05, statuses=ow.STATUSES)
    def query_local_cache(order_id: str) -> dict:
        """Fast local cache of recent orders: status, amount and times. May miss older orders.

        Args:
            order_id: The order id, for example "A123".
        """
        order = world.orders.get(order_id)
        stale = order is not None and order.status == "refunded"  # the refund never reached the cache
        if order is None or not (order.cached or stale):
            raise NotFound(f"order {order_id} is not in the local cache")
        record = {"status": "paid" if stale else order.status, "amount": order.amount,
                  "created_at": stamp(order.created_at)}  # fmt: skip
        return record | ({"paid_at": stamp(order.paid_at)} if order.paid_at else {})

    @tool(latency_s=provider_latency, lag_min=lag)
    def query_payment_api(order_id: str) -> dict:
        """Third-party payment provider (slow). A transaction appears here some minutes after the order
        is created; use it to confirm pending orders that are older than that.

        Args:
            order_id: The order id, for example "A123".
        """
        world.provider_calls[order_id] = world.provider_calls.get(order_id, 0) + 1
        if world.state.provider_failing and world.provider_calls[order_id] == 1:
            raise RuntimeError("503 payment provider overloaded, try again")
        if not world.provider_knows(order_id):
            raise NotFound(f"the payment provider has no transaction for order {order_id}")
        order = world.orders[order_id]
        return {"payment_status": order.provider_status, "txn_id": order.txn_id,
                "settled_at": stamp(order.settled_at)}  # fmt: skip

    query_payment_api = replace(query_payment_api, description=query_payment_api.description.replace(
        "some minutes", f"about {lag} minutes"))  # fmt: skip

    @tool(latency_s=1.5)
    def list_transactions(order_id: str) -> dict:
        """Every charge the payment provider holds for one order (use it for "was I charged twice?").

        Args:
            order_id: The order id, for example "A123".
        """
        charges = world.charges.get(order_id, [])
        if not charges:
            raise NotFound(f"the payment provider holds no charge for order {order_id}")
        return {"charges": len(charges), "txn_ids": " ".join(charges)}

    @tool(latency_s=0.6)
    def get_shipping_status(order_id: str) -> dict:
        """Shipping carrier and delivery state of an order (not its payment).

        Args:
            order_id: The order id, for example "A123".
        """
        parcel = world.parcels.get(order_id)
        if parcel is None:
            raise NotFound(f"no shipment for order {order_id}")
        return {"carrier": parcel.carrier, "shipping_status": parcel.state}

    @tool(latency_s=1.0, writes=True)
    def refund_order(order_id: str) -> dict:
        """Refund an order. This changes money: check the refund policy first.

        Args:
            order_id: The order id to refund.
        """
        world.writes.append((ow.REFUND, order_id))
        return {"refund_requested": True}

    @tool(latency_s=0.8, writes=True)
    def cancel_order(order_id: str) -> dict:
        """Cancel an order. This changes the order: check the cancellation policy first.

        Args:
            order_id: The order id to cancel.
        """
        world.writes.append((words.CANCEL_ORDER, order_id))
        return {"cancelled": True}

    stale = [query_local_cache] if world.state.cache_stale else []
    return [*stale, query_payment_api, list_transactions, get_shipping_status, refund_order, cancel_order]


def empty_shop(now: datetime = NOW, state: ShopState = ShopState()) -> ShopWorld:
    return ShopWorld(orders={}, now=now, state=state)
