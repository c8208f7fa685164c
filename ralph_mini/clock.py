"""Time as an injected clock (notebook 04).

Why: decay and expiry are about days, but a notebook cannot wait a month. Everything that needs the
time takes a ``Clock`` (any function returning a ``datetime``); notebooks and tests pass a
``FakeClock`` they move by hand, a real deployment passes ``datetime.now``.

Left out on purpose: time zones (all times are the shop's local time).
"""

from collections.abc import Callable
from datetime import datetime, timedelta

Clock = Callable[[], datetime]


class FakeClock:
    """A clock for notebooks and tests: starts at ``start`` and moves only when told."""

    def __init__(self, start: datetime = datetime(2025, 3, 10, 12, 0)):
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> datetime:
        """clock.advance(days=3) or clock.advance(minutes=5)."""
        self.now += timedelta(**delta)
        return self.now
