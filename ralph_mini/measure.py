"""The ruler: run a suite, keep one record per task, and summarise (notebook 01, used by every lesson).

Every notebook ends with a measured result, and every result is computed here, so notebook 01's
baseline and notebook 06's benchmark use the same ruler: tool calls per task (the seed article's main
metric), wrong calls, tasks with a wrong call, correct answers, virtual seconds and tokens per task,
against the oracle's minimum.

This module sits low in the stack on purpose: it imports the agent loop and the task suite, nothing
of memory or retrieval, so notebook 01 loads neither faiss nor the Ralph Loop.

Left out on purpose: statistics beyond means (the suite is deterministic, so there is no noise to test).
"""

from argparse import ArgumentTypeError
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


def record(
    trace: Trace,
    correct: bool | None = None,
    extra_tokens: int = 0,
    extra_latency_s: float = 0.0,
    extra_calls: int = 0,
    extra_wrong_calls: int = 0,
) -> RunRecord:
    """Keep only the numbers of a run. ``correct`` is the grader's verdict when the caller already has it
    (the Ralph Loop grades each task once); otherwise the trace is graded here. ``extra_*`` adds costs
    spent outside the run: the runs the fast loop discarded and retried, and the reflections. Every run
    counts."""
    task = trace.task
    return RunRecord(
        task_id=task.task_id,
        kind=task.kind,
        calls=trace.tool_calls + extra_calls,
        wrong_calls=trace.wrong_calls + extra_wrong_calls,
        correct=grade(task, trace.answer).correct if correct is None else correct,
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
    rows = []
    for kind in sorted({r.kind for r in records}):
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


def windows(records: Sequence[RunRecord], agent: str, split: int = 20) -> list[dict]:
    """The summary of tasks 1-split, split+1-end, and all."""
    rows = [summarize(records[:split], agent), summarize(records[split:], agent), summarize(records, agent)]
    for row, label in zip(rows, (f"1-{split}", f"{split + 1}-{len(records)}", "all"), strict=True):
        row["tasks"] = label
    return rows


def record_rows(records: Sequence[RunRecord]) -> list[dict]:
    """Records as dicts, ready for ``pandas.DataFrame``."""
    return [asdict(r) for r in records]


def format_table(rows: Sequence[dict]) -> str:
    """Rows of equal keys as aligned text (no pandas needed in a terminal)."""
    keys = list(rows[0])
    widths = [max(len(str(k)), *(len(str(r[k])) for r in rows)) for k in keys]
    lines = ["  ".join(str(k).rjust(w) for k, w in zip(keys, widths, strict=True))]
    lines += ["  ".join(str(r[k]).rjust(w) for k, w in zip(keys, widths, strict=True)) for r in rows]
    return "\n".join(lines)


def at_least_one(text: str) -> int:
    """A command's count (tasks, seeds, passes, workers) as ``argparse`` reads it: a whole number of at
    least 1, or a usage error saying so (0 ran nothing; a negative count sliced the suite from its end)."""
    if not text.strip().isdigit() or int(text) < 1:
        raise ArgumentTypeError(f"{text!r}: write a whole number of at least 1")
    return int(text)


def seed_ranges(text: str) -> tuple[range, range]:
    """'4x2' -> suite seeds 7, 8, 9, 10 and model seeds 0, 1, as ``argparse`` reads it (``bench --grid``,
    ``--ablation-grid``, ``benchmarks/bad_lessons.py --seeds``): anything else is a usage error saying
    what to write."""
    suites, _, models = text.partition("x")
    if not (suites.isdigit() and models.isdigit() and int(suites) and int(models)):
        write = "write suite seeds x model seeds, two whole numbers of at least 1, e.g. 4x2"
        raise ArgumentTypeError(f"{text!r}: {write}")
    return range(7, 7 + int(suites)), range(int(models))
