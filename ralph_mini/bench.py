"""Measuring agents: run a suite, one record per task, summaries, and the benchmark (notebooks 01-06).

Every notebook ends with a measured result, and every result comes from here, so the numbers in
notebook 01 and notebook 06 are computed the same way: tool calls per task (the seed article's main
metric), wrong calls, tasks with a wrong call, correct answers, virtual seconds and tokens per task,
against the oracle's minimum.

``python -m ralph_mini bench`` runs bare ReAct and the Ralph Loop side by side on the same seeded
suite, by window (tasks 1-20 and 21-50), with the ablations: no reflector, no memory threshold, no
decay, no vector retrieval, no second retrieval.

Left out on purpose: statistics beyond means (the suite is deterministic, so there is no noise to test).
"""

from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace

from ralph_mini.log import RunRecord, record  # noqa: F401  (re-exported: notebooks import them from here)
from ralph_mini.loop import LoopConfig, TaskResult, run_loop
from ralph_mini.memory import FakeClock, Memory, MemoryConfig
from ralph_mini.model import ChatModel
from ralph_mini.react import Trace, run_react
from ralph_mini.retrieval import Retriever, make_planner
from ralph_mini.tools import Tool
from ralph_mini.world import Task


def run_suite(
    tasks: Sequence[Task],
    model: ChatModel,
    tools: Sequence[Tool],
    *,
    lessons: Sequence[str] = (),
    progress: Callable[[Iterable], Iterable] | None = None,
) -> list[Trace]:
    """Bare ReAct on every task, independently (nothing carries over from one task to the next)."""
    wrap = progress or (lambda items: items)
    return [run_react(task, model, tools, lessons=lessons) for task in wrap(tasks)]


def summarize(records: Sequence[RunRecord], agent: str) -> dict:
    """One table row: means per task, counts over the whole window."""
    n = len(records) or 1
    return {
        "agent": agent,
        "tasks": len(records),
        "calls/task": round(sum(r.calls for r in records) / n, 2),
        "oracle calls/task": round(sum(r.oracle_calls for r in records) / n, 2),
        "wrong calls": sum(r.wrong_calls for r in records),
        "tasks with a wrong call": sum(1 for r in records if r.wrong_calls),
        "correct": f"{sum(r.correct for r in records)}/{len(records)}",
        "virtual s/task": round(sum(r.latency_s for r in records) / n, 1),
        "tokens/task": round(sum(r.tokens for r in records) / n),
    }


def by_kind(records: Sequence[RunRecord]) -> list[dict]:
    """Calls per task for each kind of order: where the wasted calls are."""
    kinds = sorted({r.kind for r in records})
    rows = []
    for kind in kinds:
        subset = [r for r in records if r.kind == kind]
        rows.append(
            {
                "kind": kind,
                "tasks": len(subset),
                "calls/task": round(sum(r.calls for r in subset) / len(subset), 2),
                "oracle calls/task": round(sum(r.oracle_calls for r in subset) / len(subset), 2),
            }
        )
    return rows


def as_rows(records: Sequence[RunRecord]) -> list[dict]:
    return [asdict(r) for r in records]


def retrieval_speed(n: int = 100_000, dim: int = 512, k: int = 3, seed: int = 0, queries: int = 5) -> dict:
    """Wall seconds per top-k query over ``n`` synthetic unit vectors: a Python loop, numpy, faiss.

    The three must agree on the top-k ids (asserted), so the comparison is of speed alone.
    """
    import heapq
    import time

    import faiss
    import numpy as np

    faiss.omp_set_num_threads(1)  # one query gains nothing from threads; on 2 busy cores they only contend
    rng = np.random.default_rng(seed)
    matrix = rng.standard_normal((n, dim)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    index = faiss.IndexFlatIP(dim)
    index.add(matrix)
    noise = 0.1 * rng.standard_normal((queries, dim)).astype(np.float32)
    probes = matrix[rng.integers(0, n, queries)] + noise  # near a stored lesson, not on it

    def python_loop(q):
        return [i for _, i in heapq.nlargest(k, ((float(row @ q), i) for i, row in enumerate(matrix)))]

    def numpy_brute(q):
        scores = matrix @ q
        top = np.argpartition(-scores, k)[:k]
        return [int(i) for i in top[np.argsort(-scores[top])]]

    def faiss_search(q):
        return [int(i) for i in index.search(q[None, :], k)[1][0]]

    timings = {}
    for name, search in (("python loop", python_loop), ("numpy", numpy_brute), ("faiss", faiss_search)):
        start = time.perf_counter()
        results = [search(q) for q in probes]
        timings[name] = (time.perf_counter() - start) / queries
        timings[f"{name} ids"] = results
    assert timings["python loop ids"] == timings["numpy ids"] == timings["faiss ids"], "searches disagree"
    return {name: timings[name] for name in ("python loop", "numpy", "faiss")}


NO_DECAY = {"half_life_days": 1e9, "stale_after_days": 1e9, "expire_after_days": 1e9}


@dataclass(frozen=True)
class Agent:
    """One column of the benchmark: how the Ralph Loop is configured (or bare ReAct)."""

    name: str
    ralph: bool = True
    loop: LoopConfig = LoopConfig()
    memory: MemoryConfig = MemoryConfig()
    vector: bool = True  # plan with the hybrid faiss retriever (else tag lookup)
    extra: dict = field(default_factory=dict)


BARE = Agent("bare ReAct", ralph=False)
RALPH = Agent("Ralph Loop")
ABLATIONS = (
    Agent("no reflector", loop=LoopConfig(reflect=False)),
    Agent("no memory threshold", memory=MemoryConfig(confirm_threshold=1, calls_saved_threshold=1)),
    Agent("no decay", memory=replace(MemoryConfig(), **NO_DECAY)),
    Agent("no vector retrieval", vector=False),
    Agent("no second retrieval", loop=LoopConfig(second_retrieval=False)),
)


def run_agent(
    agent: Agent,
    tasks: Sequence[Task],
    model: ChatModel,
    tools: Sequence[Tool],
    *,
    hours_between_tasks: float = 6.0,
    progress: Callable[[Iterable], Iterable] | None = None,
) -> tuple[list[RunRecord], Memory | None, list[TaskResult]]:
    """Run one agent over the suite from an empty memory; returns records, the memory and the results."""
    if not agent.ralph:
        return [record(t) for t in run_suite(tasks, model, tools, progress=progress)], None, []
    clock = FakeClock()
    memory = Memory(clock, agent.memory)
    planner = make_planner(Retriever(memory), top_k=agent.loop.top_k) if agent.vector else None
    results = run_loop(
        tasks,
        model,
        tools,
        memory,
        config=agent.loop,
        between_tasks=lambda _: clock.advance(hours=hours_between_tasks),
        retrieve_plan=planner,
        progress=progress,
    )
    return [r.record for r in results], memory, results


def windows(records: Sequence[RunRecord], agent: str, split: int = 20) -> list[dict]:
    """The summary of tasks 1-split, split+1-end, and all."""
    rows = [summarize(records[:split], agent), summarize(records[split:], agent), summarize(records, agent)]
    for row, label in zip(rows, (f"1-{split}", f"{split + 1}-{len(records)}", "all"), strict=True):
        row["tasks"] = label
    return rows


SEED_ARTICLE = {  # what the seed article reports for its 50 real tasks (tasks 21-50 for the Ralph Loop)
    "bare ReAct": {"calls/task": 5.1, "s/task": 80, "tasks with a wrong call": "12 of 50"},
    "Ralph Loop, tasks 21-50": {"calls/task": 3.4, "s/task": 55, "tasks with a wrong call": "3 of 30"},
}


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m ralph_mini bench [--tasks 50] [--seed 7] [--model offline|env] [--ablations]``."""
    import argparse
    import time

    from ralph_mini.offline import OfflineModel, model_from_env
    from ralph_mini.world import make_suite

    parser = argparse.ArgumentParser(prog="python -m ralph_mini bench", description=main.__doc__)
    parser.add_argument("--tasks", type=int, default=50, help="suite size (default 50)")
    parser.add_argument("--seed", type=int, default=7, help="suite seed (default 7)")
    env_help = "offline model (default) or model_from_env() (RALPH_MODEL, OPENAI_BASE_URL)"
    parser.add_argument("--model", choices=["offline", "env"], default="offline", help=env_help)
    parser.add_argument("--model-seed", type=int, default=0, help="offline model seed (default 0)")
    parser.add_argument("--ablations", action="store_true", help="also run each ablation of the Ralph Loop")
    parser.add_argument("--plot", default="runs/learning_curve.png", help="where to write the learning curve")
    args = parser.parse_args(argv)

    started = time.perf_counter()
    suite = make_suite(n=args.tasks, seed=args.seed)
    model = OfflineModel(seed=args.model_seed) if args.model == "offline" else model_from_env()
    tools = suite.world.tools()
    split = min(20, args.tasks // 2)
    agents = [BARE, RALPH, *(ABLATIONS if args.ablations else ())]
    records = {agent.name: run_agent(agent, suite.tasks, model, tools)[0] for agent in agents}
    print(f"model {model!r}, {args.tasks} tasks (suite seed {args.seed}), {len(tools)} tools\n")
    print(format_table([row for name, recs in records.items() for row in windows(recs, name, split)]))
    print("\nthe seed article, for comparison (real model, real latencies):")
    print(format_table([{"agent": name, **numbers} for name, numbers in SEED_ARTICLE.items()]))
    curves = {name: records[name] for name in (BARE.name, RALPH.name)}
    write_learning_curve(curves, [t.oracle_calls for t in suite.tasks], args.plot)
    print(f"learning curve written to {args.plot}; took {time.perf_counter() - started:.1f} s")
    return 0


def format_table(rows: Sequence[dict]) -> str:
    """Rows of equal keys as aligned text (no pandas needed in a terminal)."""
    keys = list(rows[0])
    widths = [max(len(str(k)), *(len(str(r[k])) for r in rows)) for k in keys]
    lines = ["  ".join(str(k).rjust(w) for k, w in zip(keys, widths, strict=True))]
    lines += ["  ".join(str(r[k]).rjust(w) for k, w in zip(keys, widths, strict=True)) for r in rows]
    return "\n".join(lines)


def write_learning_curve(records: dict[str, list[RunRecord]], oracle: list[int], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")  # a file, no display
    from pathlib import Path

    from ralph_mini.widgets import plot_learning_curve

    figure = plot_learning_curve(
        {name: [r.calls for r in recs] for name, recs in records.items()}, oracle=oracle
    )
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=100)
