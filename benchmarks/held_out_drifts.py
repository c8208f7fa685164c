"""Does the learning hold on drifts nobody tuned it on? Bare ReAct against the Ralph Loop on held-out
schedules of change in the wider shop.

    python benchmarks/held_out_drifts.py                  # six drifts x suite seeds 7-26, 2 workers
    python benchmarks/held_out_drifts.py --seeds 5 --jobs 1

Notebook 09's scenarios (``worlds/shop/scenarios.py``) are the kit's evaluation set, and the mechanisms
were worked on while watching them. The drifts here (``scenarios.HELD_OUT_DRIFTS``) were written after,
apart from them (2026-12-05), and nothing was changed to make them pass: other change times, other
magnitudes, a lag that shrinks, a cache that comes back, a source that goes stale and then vanishes, two
or three changes in one run. Each is 60 tasks of the drift scenario's five request types
(``scenarios.generate``), on one clock, from an empty memory, on every suite seed; the full loop
(``scenario_bench.FULL``) and bare ReAct run the same tasks.

Per drift it prints, summed over the seeds: correct answers and calls of each, and on how many seeds the
loop answered fewer tasks right than bare ReAct did.
"""

import argparse
import sys

from ralph_mini.measure import at_least_one, format_table
from ralph_mini.scenario_bench import BARE, FULL, run_arm
from ralph_mini.workers import in_workers
from ralph_mini.worlds.shop.scenarios import HELD_OUT_DRIFTS, held_out

TASKS = 60


def score(job: tuple[str, str, int]) -> tuple[int, int]:
    """(correct, calls) of one arm on one drift and seed (a worker's job: names in, two numbers out)."""
    name, arm, seed = job
    run = run_arm(held_out(name, seed, TASKS), FULL if arm == FULL.name else BARE)
    return sum(r.correct for r in run.records), sum(r.calls for r in run.records)


def rows(seeds: range, jobs: int = 2) -> list[dict]:
    """One row per drift: both arms' correct answers and calls over ``seeds``, and the seeds the loop lost."""
    work = [(name, arm.name, seed) for name in HELD_OUT_DRIFTS for seed in seeds for arm in (BARE, FULL)]
    done = dict(zip(work, in_workers(score, work, jobs), strict=True))
    table = []
    for name in HELD_OUT_DRIFTS:
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
    drifts = f"{len(HELD_OUT_DRIFTS)} held-out drifts x {args.seeds} suite seeds"
    print(f"{drifts}, {TASKS} tasks each, from an empty memory")
    print(format_table(rows(seeds, args.jobs)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
