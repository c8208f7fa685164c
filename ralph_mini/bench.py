"""Measuring agents: run a suite, turn each run into one record, and summarise (notebook 01 on).

Every notebook ends with a measured result, and every result comes from here, so the numbers in
notebook 01 and notebook 06 are computed the same way: tool calls per task (the seed article's main
metric), wrong calls, tasks with a wrong call, correct answers, virtual seconds and tokens per task,
against the oracle's minimum.

Left out on purpose: statistics beyond means (the suite is deterministic, so there is no noise to test).
"""

from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass

from ralph_mini.model import ChatModel
from ralph_mini.react import Trace, run_react
from ralph_mini.tools import Tool
from ralph_mini.world import Task, grade


@dataclass(frozen=True)
class RunRecord:
    """One task's outcome: the row behind every table and curve."""

    task_id: str
    kind: str
    calls: int
    wrong_calls: int
    correct: bool
    latency_s: float
    tokens: int
    oracle_calls: int


def record(trace: Trace, extra_tokens: int = 0, extra_latency_s: float = 0.0) -> RunRecord:
    """Grade a trace and keep only the numbers. ``extra_*`` adds costs spent outside the run (reflection)."""
    task = trace.task
    return RunRecord(
        task_id=task.task_id,
        kind=task.kind,
        calls=trace.tool_calls,
        wrong_calls=trace.wrong_calls,
        correct=grade(task, trace.answer).correct,
        latency_s=round(trace.latency_s + extra_latency_s, 3),
        tokens=trace.tokens_in + trace.tokens_out + extra_tokens,
        oracle_calls=task.oracle_calls,
    )


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
