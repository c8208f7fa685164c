"""Does every mechanism earn its keep? The full loop against each ablation, cell by cell (notebook 06).

One scenario table is one draw of tasks and one student model. This grid runs the static suite for
several suite seeds and model seeds and splits tasks 21-50 (after the learning) by the kind of record
asked about, so that a mechanism that helps on average but costs in one corner shows there:

    python -m ralph_mini bench --ablation-grid 6x4     # suite seeds 7-12 x model seeds 0-3: 24 pairs

A cell is (suite seed, model seed, kind). The full loop keeps its place in a cell when it is at least
as correct as every ablation there, and within 3% of the cheapest arm's calls (among the arms at least
as correct as it: an arm cheaper because it answers wrong is not a model to follow). Every cell where
it does not is listed, with the arm that beat it.

Left out on purpose: the controls (long-context and placebo test the agent, not a mechanism) and the
changing scenarios (their windows are what ``bench --scenario`` reads).
"""

from collections.abc import Sequence

from ralph_mini.measure import RunRecord
from ralph_mini.scenario_bench import ARMS, BARE, FULL, Arm, run_arm
from ralph_mini.workers import in_workers

TOLERANCE = 1.03  # within 3% of the cheapest arm's calls
MECHANISMS = tuple(arm for arm in ARMS if arm is not BARE and arm.name not in ("long-context", "placebo"))


def _run(job: tuple) -> tuple[tuple, list[RunRecord]]:
    suite_seed, model_seed, arm = job
    return (suite_seed, model_seed, arm.name), run_arm("static", arm, model_seed, suite_seed).records


def run_grid(suite_seeds: Sequence[int], model_seeds: Sequence[int], arms: Sequence[Arm] = MECHANISMS,
             jobs: int = 2) -> dict[tuple, list[RunRecord]]:  # fmt: skip
    """{(suite seed, model seed, arm name): the 50 records} for every pair and arm."""
    work = [(s, m, arm) for s in suite_seeds for m in model_seeds for arm in arms]
    return dict(in_workers(_run, work, jobs, chunksize=4))


def cells(runs: dict[tuple, list[RunRecord]], first: int = 21) -> list[dict]:
    """One row per (suite seed, model seed, kind, arm) of tasks ``first``-50: tasks, correct, calls."""
    rows = []
    for (suite_seed, model_seed, arm), records in runs.items():
        late = records[first - 1 :]
        for kind in sorted({r.kind for r in late}):
            mine = [r for r in late if r.kind == kind]
            rows.append({"suite seed": suite_seed, "model seed": model_seed, "kind": kind, "arm": arm,
                         "tasks": len(mine), "correct": sum(r.correct for r in mine),
                         "calls": sum(r.calls for r in mine)})  # fmt: skip
    return rows


def verdicts(rows: list[dict], full: str = FULL.name) -> list[dict]:
    """Per cell: is the full loop at least as correct as every arm and within 3% of the cheapest arm's
    calls among those as correct as it? The failing cells name the arm that beat it."""
    by_cell: dict[tuple, dict[str, dict]] = {}
    for row in rows:
        by_cell.setdefault((row["suite seed"], row["model seed"], row["kind"]), {})[row["arm"]] = row
    out = []
    for (suite_seed, model_seed, kind), arms in sorted(by_cell.items()):
        mine = arms[full]
        more_correct = [a for a, r in arms.items() if r["correct"] > mine["correct"]]
        peers = {a: r for a, r in arms.items() if r["correct"] >= mine["correct"]}
        cheapest = min(peers, key=lambda a: (peers[a]["calls"], a != full))
        cheaper = mine["calls"] > TOLERANCE * peers[cheapest]["calls"]
        beaten_by = more_correct or ([cheapest] if cheaper else [])
        out.append(
            {
                "suite seed": suite_seed,
                "model seed": model_seed,
                "kind": kind,
                "tasks": mine["tasks"],
                "full: correct": mine["correct"],
                "full: calls": mine["calls"],
                "best calls": peers[cheapest]["calls"],
                "beaten by": ", ".join(beaten_by) or "-",
            }
        )
    return out


def main(seeds: tuple[range, range], jobs: int = 2) -> int:
    """``python -m ralph_mini bench --ablation-grid SxM``: print the cells the full loop loses, and totals.
    ``seeds``: the suite and model seeds (``measure.seed_ranges`` of 'SxM')."""
    import time

    from ralph_mini.measure import format_table

    started = time.perf_counter()
    runs = run_grid(*seeds, jobs=jobs)
    judged = verdicts(cells(runs))
    lost = [row for row in judged if row["beaten by"] != "-"]
    pairs = len(seeds[0]) * len(seeds[1])
    print(
        f"{pairs} seed pairs, {len(judged)} (seed pair, kind) cells of tasks 21-50; "
        f"the full loop loses {len(lost)}"
    )
    if lost:
        print(format_table(lost))
    totals = {
        arm.name: (
            sum(sum(r.correct for r in recs[20:]) for (_, _, a), recs in runs.items() if a == arm.name),
            sum(sum(r.calls for r in recs[20:]) for (_, _, a), recs in runs.items() if a == arm.name),
        )
        for arm in MECHANISMS
    }
    print(
        format_table(
            [
                {"arm": name, "correct, tasks 21-50": c, "calls, tasks 21-50": k}
                for name, (c, k) in totals.items()
            ]
        )
    )
    print(f"took {time.perf_counter() - started:.1f} s with {jobs} worker processes")
    return 0
