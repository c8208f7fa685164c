"""The wider shop of notebook 09: the order desk's orders plus refunds, charges, parcels and
cancellations, in English and Chinese, in a world that changes (``scenarios.py``).

- ``words.py``: five request types, how customers ask, the prompt with its written policies (``WORDS``);
- ``world.py``: ``ShopWorld`` and its ``ShopState`` (what a drift can change), the tools that read it;
- ``tasks.py``: a seeded order per request, its truth under the world's state;
- ``habits.py``: the simulated model's naive habits per request (``HABITS``);
- ``scenarios.py``: static, drift, seasons, noisy memory, rephrased, a threshold that
  moves and a source that goes stale, on one clock.
"""

from ralph_mini.worlds.shop.habits import HABITS
from ralph_mini.worlds.shop.words import WORDS
from ralph_mini.worlds.shop.world import ShopState, ShopWorld, empty_shop

__all__ = ["HABITS", "WORDS", "ShopState", "ShopWorld", "empty_shop"]
