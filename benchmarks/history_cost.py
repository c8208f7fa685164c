"""Does a task cost more as the history grows? Per-task time of the first and last 10% of a long run.

    python benchmarks/history_cost.py                       # 1,000 and 10,000 tasks, the tag lookup
    python benchmarks/history_cost.py --tasks 1000 --retriever
    python benchmarks/history_cost.py --tasks 2000 --profile  # where the last 10% spend their time

Each run is the Ralph Loop (``loop.run_loop``) on the offline model, from an empty memory, over the
orders world's seeded suite (``worlds.orders.make_suite(n, seed)``), the clock 6 hours on between tasks,
as ``bench`` runs it. Every task is timed (wall clock, between two tasks handed to the loop), and the
script prints the median milliseconds per task of the first and of the last 10% of the run, and their
ratio: the target is last <= 1.2 x first. A cost that grows with the history (a scan of every past task,
per task) shows as a ratio growing with the run's length; a flat loop keeps it near 1 at any length.

Medians, not means: a garbage collection or another process's burst lands on a few tasks, not on the
median. The figures vary from run to run on a loaded machine; compare ratios, not milliseconds.
"""

import argparse
import cProfile
import pstats
import time
from collections.abc import Iterable, Iterator
from statistics import median

from ralph_mini.clock import FakeClock
from ralph_mini.loop import run_loop
from ralph_mini.measure import at_least_one
from ralph_mini.memory import Memory
from ralph_mini.offline import OfflineModel
from ralph_mini.retrieval import Retriever, make_planner
from ralph_mini.worlds.orders import HABITS, WORDS, make_suite


def task_times(n: int, seed: int = 7, retriever: bool = False, profile: cProfile.Profile | None = None
               ) -> list[float]:  # fmt: skip
    """Seconds per task of one run of ``n`` tasks (the profile, if given, on the last 10% only)."""
    suite = make_suite(n=n, seed=seed)
    clock = FakeClock()
    memory = Memory(clock)
    plan = make_planner(Retriever(memory)) if retriever else None
    stamps: list[float] = []

    def timed(tasks: Iterable) -> Iterator:  # run_loop asks for each task when the previous one is done
        for number, task in enumerate(tasks):
            if profile is not None and number == n - n // 10:
                profile.enable()
            stamps.append(time.perf_counter())
            yield task
        stamps.append(time.perf_counter())
        if profile is not None:
            profile.disable()

    model = OfflineModel(seed=0, habits=HABITS)
    run_loop(suite.tasks, model, suite.world.tools(), memory, words=WORDS, progress=timed, retrieve_plan=plan,
             between_tasks=lambda _: clock.advance(hours=6))  # fmt: skip
    return [later - earlier for earlier, later in zip(stamps, stamps[1:], strict=False)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=at_least_one, nargs="+", default=[1_000, 10_000], help="run lengths")
    parser.add_argument("--seed", type=int, default=7, help="suite seed")
    parser.add_argument("--retriever", action="store_true", help="plan with the hybrid retriever (faiss)")
    parser.add_argument("--profile", action="store_true", help="profile another run (last 10%%)")
    args = parser.parse_args()
    planner = "hybrid retriever" if args.retriever else "tag lookup"
    print(f"Ralph Loop, offline model, orders suite seed {args.seed}, {planner}; ms per task (median)")
    print(f"{'tasks':>7} {'first 10%':>10} {'last 10%':>9} {'last / first':>13} {'run s':>7}")
    for n in args.tasks:
        times = task_times(n, args.seed, args.retriever)
        tenth = max(1, n // 10)
        first, last = 1000 * median(times[:tenth]), 1000 * median(times[-tenth:])
        print(f"{n:>7} {first:>10.2f} {last:>9.2f} {last / first:>12.2f}x {sum(times):>7.1f}")
    if args.profile:  # a run of its own: the profiler's overhead would distort the table's last 10%
        profile = cProfile.Profile()
        task_times(args.tasks[-1], args.seed, args.retriever, profile)
        pstats.Stats(profile).sort_stats("cumulative").print_stats(25)


if __name__ == "__main__":
    main()
