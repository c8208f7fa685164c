"""Does the learning hold on drifts nobody tuned it on? Bare ReAct against the full loop on the held-out
drifts of the wider shop (notebook 09, ``benchmarks/held_out_drifts.py``).

The seven scenarios are the kit's evaluation set, and the mechanisms were worked on while watching them.
``scenarios.HELD_OUT_DRIFTS`` were written after, apart from them, and nothing was changed to make them
pass. Each is ``TASKS`` tasks of drift's mix from an empty memory; both arms run the same tasks on every
suite seed, and a row sums them: correct answers and calls of each, and the seeds on which the loop
answered fewer tasks right than bare ReAct did.

Left out on purpose: windows and pass^k (``scenario_bench`` reads those for the seven scenarios).
"""

from ralph_mini.scenario_bench import BARE, FULL, run_arm
from ralph_mini.workers import in_workers
from ralph_mini.worlds.shop.scenarios import HELD_OUT_DRIFTS, held_out

TASKS = 60


def score(job: tuple[str, str, int]) -> tuple[int, int]:
    """(correct, calls) of one arm on one drift and seed (a worker's job: names in, two numbers out)."""
    name, arm, seed = job
    run = run_arm(held_out(name, seed, TASKS), FULL if arm == FULL.name else BARE)
    return sum(r.correct for r in run.records), sum(r.calls for r in run.records)


def held_out_rows(seeds: range, jobs: int = 2) -> list[dict]:
    """One row per held-out drift: both arms' correct answers and calls over ``seeds``, and the seeds the
    loop lost, the runs in ``jobs`` worker processes."""
    work = [(name, arm.name, seed) for name in HELD_OUT_DRIFTS for seed in seeds for arm in (BARE, FULL)]
    done = dict(zip(work, in_workers(score, work, jobs), strict=True))
    table = []
    for name in HELD_OUT_DRIFTS:
        bare = [done[(name, BARE.name, seed)] for seed in seeds]
        full = [done[(name, FULL.name, seed)] for seed in seeds]
        n = TASKS * len(seeds)
        table.append({
            "held-out drift": name,
            "correct, bare": f"{sum(c for c, _ in bare)}/{n}",
            "correct, Ralph": f"{sum(c for c, _ in full)}/{n}",
            "calls, bare": sum(k for _, k in bare),
            "calls, Ralph": sum(k for _, k in full),
            "seeds the loop lost": sum(f[0] < b[0] for b, f in zip(bare, full, strict=True)),
        })  # fmt: skip
    return table
