"""Settings every test module shares.

Hypothesis's default deadline (200 ms an example) is a timing assertion, and tests here assert values,
not speed (speed is what ``benchmarks/`` and ``python -m ralph_mini bench`` report). On a loaded
2-core machine a first example that pays for a lazy import (pandas' rolling windows: 0.3 s in one CI
run, 1 ms after) failed ``test_rolling_mean_matches_pandas`` as "flaky". So no deadline, anywhere.
"""

from hypothesis import settings

settings.register_profile("values, not speed", deadline=None)
settings.load_profile("values, not speed")
