"""Every arm on every scenario, by window and task type, and pass^k (notebook 09).

Arms: bare ReAct; the Ralph Loop (full) and one ablation per mechanism (no reflection, no write
threshold, no decay/expiry, keyword retrieval only, no second retrieval, no budget); and two controls:
**long-context** injects every lesson ever learned (any status), **placebo** injects active lessons
learned on *other* task types, shuffled (does the agent use its lessons at all?).

Per window (before and after each change) and task type: correct, calls/task against the oracle's,
wrong calls, tokens/task (retries and reflections included), virtual s/task, and *settled after*: how
many of the window's tasks came before the first one from which every task is correct within 1.2x the
oracle's calls ("never" if the window's last task is not). The rephrased scenario asks the same 15
requests in three wordings: ``paired_rows`` compares them (target: held-out within 5%, same correctness).
pass^k (tau-bench): per task C(c, k) / C(n, k) for c correct of n = k model seeds, averaged over tasks:
the chance that all k succeed. Left out on purpose: confidence intervals (pass^k over seeds is the spread).
"""

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from math import comb

from ralph_mini.adherence import adherence_of_runs, follow_rate
from ralph_mini.clock import FakeClock
from ralph_mini.loop import LoopConfig, TaskResult, run_task
from ralph_mini.measure import RunRecord, at_least_one, format_table, record, summarize
from ralph_mini.memory import NO_DECAY, Experience, Memory, MemoryConfig
from ralph_mini.offline import OfflineModel
from ralph_mini.planner import PastTasks
from ralph_mini.react import run_react
from ralph_mini.workers import in_workers
from ralph_mini.world import TIME_FORMAT, Task
from ralph_mini.worlds.shop.scenarios import SCENARIOS, WORDINGS, Scenario, build, seed_memory

PLANNERS = ("vector", "keyword", "tags", "all", "placebo")


@dataclass(frozen=True)
class Arm:
    """One column of a benchmark table (this one, and notebook 06's ``bench.Agent``): how the Ralph Loop
    is configured, or bare ReAct. ``planner``, the loop's first retrieval (``arm_planner``):

    - ``vector``: the hybrid (faiss + keyword) retriever, within the loop's token budget and top-k;
    - ``keyword``: the keyword retriever alone, within the same budget;
    - ``tags``: no retriever; the loop's own tag lookup (``retrieve_plan=None``);
    - ``all``: every lesson ever learned, of any status (the long-context control);
    - ``placebo``: active lessons learned on other task types, shuffled.
    """

    name: str
    ralph: bool = True
    loop: LoopConfig = LoopConfig()
    memory: MemoryConfig = MemoryConfig()
    planner: str = "vector"

    def __post_init__(self):
        if self.planner not in PLANNERS:
            raise ValueError(f"Arm {self.name!r}: planner={self.planner!r}; use one of {', '.join(PLANNERS)}")


BARE = Arm("bare ReAct", ralph=False)
FULL = Arm("Ralph Loop (full)")
ARMS = (
    BARE,
    Arm("no reflection", loop=LoopConfig(reflect=False)),
    Arm("no write threshold", memory=MemoryConfig(confirm_threshold=1, calls_saved_threshold=1)),
    Arm("no decay/expiry", memory=replace(MemoryConfig(), **NO_DECAY)),
    Arm("keyword retrieval only", planner="keyword"),
    Arm("no second retrieval", loop=LoopConfig(second_retrieval=False)),
    Arm("no budget", loop=LoopConfig(top_k=100, injection_budget=1.0)),
    FULL,
    # The controls bypass what they test: every lesson ever learned, of any type, past the budget; or
    # lessons of another type, which the per-type planner would otherwise filter out.
    Arm("long-context", planner="all", loop=LoopConfig(per_task_type=False, top_k=100, injection_budget=1.0)),
    Arm("placebo", planner="placebo", loop=LoopConfig(per_task_type=False)),
)


@dataclass
class ArmRun:
    """One arm on one scenario with one model seed: a record per task, the memory, the loop's results."""

    scenario: Scenario
    arm: Arm
    records: list[RunRecord]
    memory: Memory | None
    results: list[TaskResult]


def arm_planner(arm: Arm, memory: Memory) -> Callable | None:
    """The arm's first retrieval, as a ``retrieve_plan`` for ``loop.run_task`` (None: tag lookup)."""
    loop = arm.loop
    if arm.planner == "tags":
        return None
    if arm.planner in ("vector", "keyword"):
        from ralph_mini.retrieval import Retriever, make_planner  # numpy and faiss: only for these arms

        retriever = Retriever(memory, mode="hybrid" if arm.planner == "vector" else "keyword")
        return make_planner(retriever, loop.context_tokens, loop.injection_budget, loop.top_k)
    if arm.planner == "all":
        return every_lesson

    def placebo(task: Task, memory: Memory) -> list[Experience]:
        other = sorted((e for e in memory.live() if e.task_type != task.task_type), key=lambda e: e.rule)
        random.Random(task.task_id).shuffle(other)
        return other[: loop.top_k]

    return placebo


def every_lesson(task: Task, memory: Memory) -> list[Experience]:
    """The long-context control's plan: every lesson ever learned, any status and type, each text once."""
    return list({e.rule: e for e in sorted(memory.experiences.values(), key=lambda e: e.rule)}.values())


def run_arm(scenario_name: str | Scenario, arm: Arm, model_seed: int = 0, seed: int = 7) -> ArmRun:
    """Run one arm through a fresh copy of the scenario (or a fresh ``Scenario`` of one's own), applying
    its changes on schedule."""
    scenario = build(scenario_name, seed) if isinstance(scenario_name, str) else scenario_name
    model = OfflineModel(seed=model_seed, habits=scenario.habits)
    clock = FakeClock(scenario.start)
    memory = Memory(clock, arm.memory) if arm.ralph else None
    if memory is not None:
        seed_memory(memory, scenario.seed_lessons)
    planner = arm_planner(arm, memory) if memory is not None else None
    records, results, past = [], [], PastTasks()  # past: the history summed up task by task, as run_loop does
    for number, task in enumerate(scenario.tasks, 1):
        scenario.apply_changes(number)
        if scenario.one_clock:
            if task.now != clock().strftime(TIME_FORMAT):
                raise RuntimeError(f"{task.task_id}: prompt time {task.now} is not the clock's {clock()}")
            scenario.world.now = clock()
        tools = scenario.world.tools()
        if memory is None:
            records.append(record(run_react(task, model, tools)))
        else:
            config = replace(arm.loop, reflect=False) if task.task_id in scenario.frozen else arm.loop
            result = run_task(task, model, tools, memory, results, words=scenario.world.words, config=config,
                              run_id=f"R{number:03d}", retrieve_plan=planner, past=past)  # fmt: skip
            results.append(result)
            past = past.then(task, result.trace)
            records.append(result.record)
        clock.advance(hours=scenario.hours_between_tasks)
    return ArmRun(scenario, arm, records, memory, results)


def settled_after(records: Sequence[RunRecord]) -> str:
    """Tasks before the first from which every task is correct within 1.2x the oracle's calls."""
    good = [r.correct and r.calls <= 1.2 * r.oracle_calls for r in records]
    if not good or not good[-1]:
        return "never"
    first = len(good)
    while first > 0 and good[first - 1]:
        first -= 1
    return str(first)


def window_rows(run: ArmRun) -> list[dict]:
    """One row per window and task type (and 'all'), with the settling count."""
    rows = []
    for label, first, last in run.scenario.windows:
        chunk = run.records[first - 1 : last]
        types = sorted({t.task_type for t in run.scenario.tasks[first - 1 : last]})
        for kind in [*types, "all"]:
            subset = [r for r, t in zip(chunk, run.scenario.tasks[first - 1 : last], strict=True)
                      if kind == "all" or t.task_type == kind]  # fmt: skip
            row = {**summarize(subset, run.arm.name), "window": f"{first}-{last} {label}", "type": kind}
            row = {k: row[k] for k in ("agent", "window", "type", *row) if k != "tasks with a wrong call"}
            rows.append(row | {"settled after": settled_after(subset)})
    return rows


def paired_rows(run: ArmRun) -> list[dict]:
    """The rephrased scenario's frozen part, one row per wording of ``scenarios.WORDINGS``.

    Every wording asks the same draws (copy j of each is the same request about a twin order), so
    calls/task compare directly, and so do verdicts, pair by pair. The target: held-out wordings
    within 5% of the trained phrasings' calls/task ("calls vs trained" at most 1.05), same correctness."""
    where = {label: (first, last) for label, first, last in run.scenario.windows}
    chunks = {label: run.records[where[label][0] - 1 : where[label][1]] for label, _ in WORDINGS}
    trained = chunks[WORDINGS[-1][0]]
    trained_calls = sum(r.calls for r in trained)
    rows = []
    for label, chunk in chunks.items():
        n, calls = len(chunk), sum(r.calls for r in chunk)
        same = sum(a.correct == b.correct for a, b in zip(chunk, trained, strict=True))
        rows.append({
            "agent": run.arm.name,
            "wording": label,
            "tasks": n,
            "correct": f"{sum(r.correct for r in chunk)}/{n}",
            "same verdict as trained": f"{same}/{n}",
            "calls/task": round(calls / n, 2),
            "oracle calls/task": round(sum(r.oracle_calls for r in chunk) / n, 2),
            "calls vs trained": round(calls / trained_calls, 3) if trained_calls else "-",
        })  # fmt: skip
    return rows


def arm_row(run: ArmRun) -> dict:
    """The scenario x arm table's row: the whole run."""
    row = summarize(run.records, run.arm.name)
    n, correct = len(run.records), sum(r.correct for r in run.records)
    row["correct"] = f"{correct}/{n} ({100 * correct / n:.0f}%)"
    del row["tasks"], row["tasks with a wrong call"]
    return {"scenario": run.scenario.name, **row, "lessons followed": run_follow_rate(run)}


def run_follow_rate(run: ArmRun) -> str:
    """The share of held lessons the final runs followed (``adherence.py``; '-': bare ReAct carries none).
    The offline model obeys what it reads, unless it never reads them (guards) or two disagree."""
    world = run.scenario.world
    return follow_rate(
        adherence_of_runs(((r.trace, r.injected) for r in run.results), world.words, world.tools())
    )


def pass_k(runs: Sequence[ArmRun], k: int) -> float:
    """tau-bench's pass^k over n >= k runs of the same tasks (different model seeds)."""
    n = len(runs)
    per_task = [sum(run.records[i].correct for run in runs) for i in range(len(runs[0].records))]
    return round(sum(comb(c, k) / comb(n, k) for c in per_task) / len(per_task), 3)


def run_job(args: tuple) -> ArmRun:
    return run_arm(*args)  # (scenario, arm, model seed[, suite seed]), picklable for a worker process


@dataclass(frozen=True)
class ArmSummary:
    """What ``main`` prints of one arm run, made in its worker: a whole ``ArmRun`` (its scenario, memory
    and every trace) would be pickled back and read by the parent on the cores the workers need."""

    records: list[RunRecord]  # pass^k reads their verdicts
    windows: list[dict]  # window_rows
    paired: list[dict]  # paired_rows, for the rephrased scenario
    row: dict  # arm_row


def summary_job(args: tuple) -> ArmSummary:
    run = run_arm(*args)
    paired = paired_rows(run) if run.scenario.name == "rephrased" else []
    return ArmSummary(run.records, window_rows(run), paired, arm_row(run))


def run_grid(scenarios: Sequence[str], arms: Sequence[Arm] = ARMS, k: int = 4, jobs: int = 1,
             progress: Callable | None = None, job: Callable = run_job) -> tuple[dict, dict]:  # fmt: skip
    """Every arm on every scenario (model seed 0), plus seeds 1..k-1 for bare ReAct and the full loop, in
    ``jobs`` processes. Returns ({(scenario, arm): ArmRun}, {(scenario, arm): [ArmRun per seed]}), or
    what ``job`` makes of each run instead of the ``ArmRun`` (``summary_job``)."""
    grid = [(s, arm, 0) for s in scenarios for arm in arms]
    extra = [(s, arm, seed) for s in scenarios for arm in (BARE, FULL) for seed in range(1, k)]
    done = in_workers(job, grid + extra, jobs, progress)
    runs = {(s, arm.name): run for (s, arm, _), run in zip(grid, done, strict=False)}
    seeds: dict = {}
    for (s, arm, _), run in zip(grid + extra, done, strict=True):
        if arm.name in (BARE.name, FULL.name):
            seeds.setdefault((s, arm.name), []).append(run)
    return runs, seeds


def pass_k_rows(seeds: dict, k: int) -> list[dict]:
    return [
        {"scenario": s, "agent": name, "pass^1": pass_k(runs, 1), f"pass^{k}": pass_k(runs, k)}
        for (s, name), runs in seeds.items()
    ]


def main(scenario: str, argv: Sequence[str] = ()) -> int:
    """``python -m ralph_mini bench --scenario NAME|all [--k 4] [--jobs 2] [--windows]``."""
    import argparse
    import time

    prog = "python -m ralph_mini bench --scenario NAME"
    parser = argparse.ArgumentParser(prog=prog, description=main.__doc__)
    parser.add_argument("--k", type=at_least_one, default=4, help="model seeds for pass^k (default 4)")
    parser.add_argument("--jobs", type=at_least_one, default=2, help="worker processes (default 2)")
    parser.add_argument("--windows", action="store_true", help="also print every arm's window rows")
    args = parser.parse_args(list(argv))
    names = list(SCENARIOS) if scenario == "all" else [scenario]
    if scenario != "all":  # (every name in SCENARIOS is known)
        try:
            build(scenario)  # an unknown name fails here, before any work, naming the ones to choose
        except ValueError as err:
            parser.error(str(err))
    started = time.perf_counter()
    runs, seeds = run_grid(names, ARMS, args.k, args.jobs, job=summary_job)
    for name in names:
        shown = ARMS if args.windows else (BARE, FULL)
        print(f"== {name}: windows (bare ReAct and the full Ralph Loop)\n")
        print(format_table([row for arm in shown for row in runs[(name, arm.name)].windows]) + "\n")
        if name == "rephrased":
            print("== rephrased: the same 15 tasks in three wordings (learning frozen)\n")
            print(format_table([row for arm in (BARE, FULL) for row in runs[(name, arm.name)].paired]))
            print()
    print("== scenario x arm\n")
    print(format_table([runs[(s, arm.name)].row for s in names for arm in ARMS]))
    print(f"\n== pass^k, k = {args.k} model seeds\n")
    print(format_table(pass_k_rows(seeds, args.k)))
    print(f"\ntook {time.perf_counter() - started:.1f} s with {args.jobs} worker processes")
    return 0
