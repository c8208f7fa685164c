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
(``scenario_bench.FULL``) and bare ReAct run the same tasks (``held_out_bench.held_out_rows``, which
notebook 09 calls on five seeds).

Per drift it prints, summed over the seeds: correct answers and calls of each, and on how many seeds the
loop answered fewer tasks right than bare ReAct did.
"""

import argparse
import sys

from ralph_mini.held_out_bench import TASKS, held_out_rows
from ralph_mini.measure import at_least_one, format_table
from ralph_mini.worlds.shop.scenarios import HELD_OUT_DRIFTS


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=at_least_one, default=20, help="suite seeds 7.. (default 20)")
    parser.add_argument("--jobs", type=at_least_one, default=2, help="worker processes (default 2)")
    args = parser.parse_args(argv)
    drifts = f"{len(HELD_OUT_DRIFTS)} held-out drifts x {args.seeds} suite seeds"
    print(f"{drifts}, {TASKS} tasks each, from an empty memory")
    print(format_table(held_out_rows(range(7, 7 + args.seeds), args.jobs)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
