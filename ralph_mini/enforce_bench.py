"""Soft lessons against hard ones: prompt vs guard vs both, on every scenario (notebook 12).

``LoopConfig.enforce`` chooses how the loop's lessons reach the agent: as text in the prompt (the
default), as checks at the tool boundary (``guards.py``: the model never reads them), or both. This
bench runs each mode, and bare ReAct, through every scenario of notebook 09 and reports per mode:
correct answers, calls/task, wrong calls, *refusals* (calls and answers a guard turned back: each costs
the model a turn, not a tool call), the *follow rate* of the lessons whose trigger held
(``adherence.py``), and *tasks to recover* after each change of the world (``settled after`` of the
window from the change to the next one; "never" if its last task is not good).

What to look for: a guard enforces a stale rule as firmly as a good one, so after a change it refuses
the call the run needs until the rule is invalidated; the recovery columns show what that costs.

Left out on purpose: the clinic world and model seeds beyond 0 (``bench --scenario`` has pass^k).
"""

from collections.abc import Callable, Sequence
from dataclasses import replace

from ralph_mini.hardening import REFUSED
from ralph_mini.measure import format_table, summarize
from ralph_mini.scenario_bench import (
    BARE,
    FULL,
    Arm,
    ArmRun,
    run_follow_rate,
    run_job,
    settled_after,
)
from ralph_mini.workers import in_workers
from ralph_mini.worlds.shop.scenarios import SCENARIOS

MODES = ("prompt", "guard", "both")


def mode_arms() -> list[Arm]:
    """Bare ReAct, then the full Ralph Loop in each enforcement mode."""
    return [
        BARE,
        *(replace(FULL, name=f"Ralph Loop, {m}", loop=replace(FULL.loop, enforce=m)) for m in MODES),
    ]


def refusals(run: ArmRun) -> int:
    """Steps a guard refused, in every run of every task (the fast loop's retries too)."""
    traces = [t for r in run.results for t in (*r.discarded, r.trace)]
    return sum(step.status == REFUSED for trace in traces for step in trace.steps)


def recovery(run: ArmRun) -> list[str]:
    """Per change of the world: tasks after it before every task is good again (``settled_after``)."""
    starts = sorted({c.at for c in run.scenario.changes if c.fields})
    ends = [s - 1 for s in starts[1:]] + [len(run.records)] * bool(starts)
    return [settled_after(run.records[s - 1 : e]) for s, e in zip(starts, ends, strict=True)]


def mode_row(run: ArmRun) -> dict:
    """One row of the cost table: a scenario in one mode."""
    n = len(run.records)
    summary = summarize(run.records, run.arm.name)
    return {
        "scenario": run.scenario.name,
        "agent": run.arm.name,
        "correct": f"{sum(r.correct for r in run.records)}/{n}",
        "calls/task": summary["calls/task"],
        "wrong calls": summary["wrong calls"],
        "refusals": refusals(run),
        "lessons followed": run_follow_rate(run),
        "tasks to recover": ", ".join(recovery(run)) or "-",
    }


def run_modes(scenarios: Sequence[str] = tuple(SCENARIOS), seed: int = 7, jobs: int = 2,
              progress: Callable | None = None) -> dict[tuple[str, str], ArmRun]:  # fmt: skip
    """Every mode on every scenario (model seed 0), in ``jobs`` worker processes that share the cores;
    ``progress`` wraps the runs as they finish (a bar). Returns {(scenario, agent): ArmRun}."""
    grid = [(name, arm, 0, seed) for name in scenarios for arm in mode_arms()]
    done = in_workers(run_job, grid, jobs, progress)
    return {(name, arm.name): run for (name, arm, _, _), run in zip(grid, done, strict=True)}


def cost_table(runs: dict[tuple[str, str], ArmRun] | None = None) -> list[dict]:
    """The rows ``bench --enforce`` prints: one per scenario and mode, of ``runs`` (default: all)."""
    return [mode_row(run) for run in (runs or run_modes()).values()]


def main(scenarios: str) -> int:
    """``python -m ralph_mini bench --enforce all|NAME[,NAME]``: the cost table of enforcing."""
    import time

    names = list(SCENARIOS) if scenarios == "all" else scenarios.split(",")
    unknown = [n for n in names if n not in SCENARIOS]
    if unknown:
        raise SystemExit(f"unknown scenario {', '.join(unknown)}: use all or one of {', '.join(SCENARIOS)}")
    started = time.perf_counter()
    print("== lessons in the prompt, as guards, or both (model seed 0)\n")
    print(format_table(cost_table(run_modes(names))))
    print(f"\ntook {time.perf_counter() - started:.1f} s")
    return 0
