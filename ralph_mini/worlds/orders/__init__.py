"""The order desk: the seed article's order-status lookup (notebook 01), as one world package.

- ``words.py``: its words (tools, statuses, id formats, how customers ask, the prompt) as ``WORDS``;
- ``world.py``: the orders and the nine tools, with the roles they declare;
- ``tasks.py``: the seeded 50-task suite with its truth and the oracle's calls (``make_suite``);
- ``habits.py``: how the simulated model acts here (``HABITS``).

    from ralph_mini.worlds import orders
    suite = orders.make_suite(n=50, seed=7)
    model = OfflineModel(habits=orders.HABITS)
"""

from ralph_mini.worlds.orders.habits import HABITS
from ralph_mini.worlds.orders.tasks import Suite, make_suite
from ralph_mini.worlds.orders.words import WORDS
from ralph_mini.worlds.orders.world import NOW, Order, OrderWorld, demo_orders

__all__ = ["HABITS", "NOW", "WORDS", "Order", "OrderWorld", "Suite", "demo_orders", "make_suite"]
