"""Does the learning hold on drifts nobody tuned it on? Bare ReAct against the Ralph Loop on held-out
schedules of change in the wider shop.

    python benchmarks/held_out_drifts.py                  # six drifts x suite seeds 7-26, 2 workers
    python benchmarks/held_out_drifts.py --seeds 5 --jobs 1

Notebook 09's scenarios (``worlds/shop/scenarios.py``) are the kit's evaluation set, and the mechanisms
were worked on while watching them. The drifts here were written after, apart from them (2026-12-05),
and nothing was changed to make them pass: other change times, other magnitudes, a lag that shrinks,
a cache that comes back, a source that goes stale and then vanishes, two or three changes in one run.
Each is 60 tasks of the drift scenario's five request types (``scenarios.generate``), on one clock,
from an empty memory, on every suite seed; the full loop (``scenario_bench.FULL``) and bare ReAct run the
same tasks.

Per drift it prints, summed over the seeds: correct answers and calls of each, and on how many seeds the
loop answered fewer tasks right than bare ReAct did.
"""

import argparse
import random
import sys

from ralph_mini.measure import at_least_one, format_table
from ralph_mini.scenario_bench import BARE, FULL, run_arm
from ralph_mini.workers import in_workers
from ralph_mini.worlds.shop.scenarios import LEARNABLE, MIX, Change, Scenario, generate

TASKS = 60
DRIFTS = {
    "lag 60, cache off, refunds 7 days": [
        Change(15, "settlement lag 30 -> 60 min", {"settlement_lag_min": 60}),
        Change(30, "cache disappears", {"cache_online": False}),
        Change(45, "refund window 30 -> 7 days", {"refund_days": 7}),
    ],
    "cache stale, then gone": [
        Change(10, "the cache goes stale", {"cache_stale": True}),
        Change(35, "cache disappears", {"cache_online": False}),
    ],
    "lag 30 -> 200 min": [Change(25, "settlement lag 30 -> 200 min", {"settlement_lag_min": 200})],
    "lag 30 -> 10 min": [Change(20, "settlement lag 30 -> 10 min", {"settlement_lag_min": 10})],
    "provider failing early": [
        Change(8, "provider slow and failing", {"provider_failing": True}),
        Change(40, "settlement lag 30 -> 45 min", {"settlement_lag_min": 45}),
    ],
    "cache off, then back": [
        Change(12, "cache disappears", {"cache_online": False}),
        Change(40, "cache back", {"cache_online": True}),
    ],
}


def held_out(name: str, seed: int) -> Scenario:
    """A fresh scenario of ``TASKS`` tasks under the drift ``name``."""
    changes = DRIFTS[name]
    world, tasks = generate(TASKS, random.Random(seed), lambda i: MIX, lambda i: LEARNABLE, changes, 6.0)
    return Scenario(name, world, tasks, [("all", 1, TASKS)], changes=list(changes))


def score(job: tuple[str, str, int]) -> tuple[int, int]:
    """(correct, calls) of one arm on one drift and seed (a worker's job: names in, two numbers out)."""
    name, arm, seed = job
    run = run_arm(held_out(name, seed), FULL if arm == FULL.name else BARE)
    return sum(r.correct for r in run.records), sum(r.calls for r in run.records)


def rows(seeds: range, jobs: int = 2) -> list[dict]:
    """One row per drift: both arms' correct answers and calls over ``seeds``, and the seeds the loop lost."""
    work = [(name, arm.name, seed) for name in DRIFTS for seed in seeds for arm in (BARE, FULL)]
    done = dict(zip(work, in_workers(score, work, jobs), strict=True))
    table = []
    for name in DRIFTS:
        bare = [done[(name, BARE.name, seed)] for seed in seeds]
        full = [done[(name, FULL.name, seed)] for seed in seeds]
        n = TASKS * len(seeds)
        table.append({
            "drift": name,
            "correct, bare": f"{sum(c for c, _ in bare)}/{n}",
            "correct, Ralph": f"{sum(c for c, _ in full)}/{n}",
            "calls, bare": sum(k for _, k in bare),
            "calls, Ralph": sum(k for _, k in full),
            "seeds the loop lost": sum(f[0] < b[0] for b, f in zip(bare, full, strict=True)),
        })  # fmt: skip
    return table


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=at_least_one, default=20, help="suite seeds 7.. (default 20)")
    parser.add_argument("--jobs", type=at_least_one, default=2, help="worker processes (default 2)")
    args = parser.parse_args(argv)
    seeds = range(7, 7 + args.seeds)
    print(
        f"{len(DRIFTS)} held-out drifts x {args.seeds} suite seeds, {TASKS} tasks each, from an empty memory"
    )
    print(format_table(rows(seeds, args.jobs)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
