"""The execution log: one compact record per step, written as JSON Lines (notebook 02).

Why a log and not the transcript: the seed article found that a reflector fed the whole chat gives
vague advice, while one fed a compact step log (tool, arguments, status, latency, what came back)
gives specific, reusable rules. The log is also what you query to find wasted calls.

A session writes one append-only file: a ``{"type": "step", ...}`` line per step and a
``{"type": "run", ...}`` line per run. ``load_log`` reads it back into the same records.

Left out on purpose: log rotation, compression, and any database: a JSONL file opens in any editor.
"""

import json
from dataclasses import asdict, dataclass, fields
from datetime import timedelta
from pathlib import Path

from ralph_mini.react import Step, Trace
from ralph_mini.tools import read_fields
from ralph_mini.world import Words, parse_time


@dataclass(frozen=True)
class LogRecord:
    """One step of one run, small enough to read at a glance."""

    run_id: str
    step: int
    tool: str
    args: str  # 'order_id=A123'
    status: str  # ok / not_found / error / wrong_tool / bad_args / bad_reply
    latency_s: float
    tokens_in: int
    tokens_out: int
    observation: str  # the observation without its status prefix, at most OBSERVATION_CHARS


@dataclass(frozen=True)
class RunSummary:
    """One run: what it cost and whether the grader accepted the answer."""

    run_id: str
    task_id: str
    question: str
    now: str  # the task's current time, so a reader can compute a record's age
    calls: int
    wrong_calls: int
    latency_s: float
    tokens: int
    answer: dict | None
    correct: bool | None  # the grader's verdict; None: not graded (the fast loop reflects before it)
    stop_reason: str


OBSERVATION_CHARS = 120
MINUTE = timedelta(minutes=1)


def summarize_args(arguments: str) -> str:
    """'{"order_id": "A123"}' -> 'order_id=A123'; unparseable text is kept, shortened."""
    try:
        parsed = json.loads(arguments or "{}")
        if not isinstance(parsed, dict):
            return str(parsed)[:40]
        return ", ".join(f"{k}={v}" for k, v in parsed.items())[:60]
    except (ValueError, RecursionError):  # bad JSON, a 4,300+ digit number, nesting ~1000 deep
        return arguments[:40]


def compact_observation(observation: str) -> str:
    """'ok: 3 fields: status=paid, ...' -> 'status=paid, ...' (the status has its own column)."""
    _, _, detail = observation.partition(": ")
    detail = detail.split(" fields: ", 1)[-1] if " fields: " in detail else detail
    return detail[:OBSERVATION_CHARS]


def log_run(trace: Trace, run_id: str, correct: bool | None) -> tuple[list[LogRecord], RunSummary]:
    """Turn a trace into log records and a run summary. ``correct`` is the grader's verdict, computed
    once by whoever ran the task: the log records it, it does not judge."""
    records = [
        LogRecord(
            run_id=run_id,
            step=step.index,
            tool=step.tool,
            args=summarize_args(step.arguments),
            status=step.status,
            latency_s=round(step.tool_latency_s + step.model_latency_s, 3),
            tokens_in=step.tokens_in,
            tokens_out=step.tokens_out,
            observation=compact_observation(step.observation),
        )
        for step in trace.steps
    ]
    summary = RunSummary(
        run_id=run_id,
        task_id=trace.task.task_id,
        question=trace.task.question,
        now=trace.task.now,
        calls=trace.tool_calls,
        wrong_calls=trace.wrong_calls,
        latency_s=round(trace.latency_s, 3),
        tokens=trace.tokens_in + trace.tokens_out,
        answer=trace.answer,
        correct=correct,
        stop_reason=trace.stop_reason,
    )
    return records, summary


def append_run(path: Path, records: list[LogRecord], summary: RunSummary) -> None:
    """Append one run to the session's log file (created if needed). Append-only: nothing is rewritten."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as file:
        for record in records:
            file.write(json.dumps({"type": "step", **asdict(record)}, ensure_ascii=False) + "\n")
        file.write(json.dumps({"type": "run", **asdict(summary)}, ensure_ascii=False) + "\n")


def load_log(path: Path) -> tuple[list[LogRecord], list[RunSummary]]:
    """Read a session log back. A bad line raises ValueError naming the file and line number."""
    records, summaries = [], []
    step_keys = {f.name for f in fields(LogRecord)}
    run_keys = {f.name for f in fields(RunSummary)}
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            kind = row.pop("type")
            if kind == "step" and set(row) == step_keys:
                records.append(LogRecord(**row))
            elif kind == "run" and set(row) == run_keys:
                summaries.append(RunSummary(**row))
            else:
                raise ValueError(f"unknown record type {kind!r} or fields {sorted(row)}")
        except (json.JSONDecodeError, KeyError, ValueError, TypeError) as err:
            raise ValueError(f"{path}:{number}: not a log line ({err}); fix or delete that line") from err
    return records, summaries


def format_for_reflection(records: list[LogRecord], summary: RunSummary) -> str:
    """The compact text a reflector reads: one line per step, then the result. No transcript.

    1 query_local_cache(order_id=A123) ok 0.9s: status=paid, amount=99.5
    result: answered {"status": "paid", ...}; 2 calls, 0 wrong, 8.1 s, 2900 tokens
    """
    lines = [f"run {summary.run_id} at {summary.now}: {summary.question}"]
    for r in records:
        lines.append(f"{r.step} {r.tool}({r.args}) {r.status} {r.latency_s:.2f}s: {r.observation}")
    answer = json.dumps(summary.answer) if summary.answer is not None else "none"
    lines.append(
        f"result: {summary.stop_reason}, answer {answer}; {summary.calls} calls, "
        f"{summary.wrong_calls} wrong, {summary.latency_s:.1f} s, {summary.tokens} tokens"
    )
    return "\n".join(lines)


def step_rows(records: list[LogRecord]) -> list[dict]:
    """Records as dicts, ready for ``pandas.DataFrame``."""
    return [asdict(r) for r in records]


def step_tags(step: Step, words: Words, now: str | None = None) -> set[str]:
    """What a step revealed, as tags a trigger can match: {'query_local_cache:found', 'status:pending'}.

    The record's status is its field ``words.status_field``. Given the task's current time ``now``
    ('2025-03-10 12:00'), a record with a status and a creation time (``words.created_field``) also
    gives its age in whole minutes: 'age:pending:12'. Memory credits a lesson only when its whole
    trigger, age included, held in the tags its run revealed (``votes.trigger_held``).
    """
    if step.status == "not_found":
        return {f"{step.tool}:nothing"}
    if step.status != "ok":
        return set()
    fields = read_fields(step.observation)
    status, created = fields.get(words.status_field), fields.get(words.created_field)
    tags = {f"{step.tool}:found"} | ({f"status:{status}"} if status else set())
    if status and created and now:
        try:
            minutes = (parse_time(now) - parse_time(created)) / MINUTE
        except ValueError:  # a time in another format: no age, so no age condition can hold
            return tags
        tags.add(f"age:{status}:{int(minutes)}")
    return tags


def run_tags(steps: list[Step], words: Words, now: str | None = None) -> set[str]:
    """Everything a run revealed: the union of its steps' tags, plus 'any' (every run is 'any task')."""
    return {"any"}.union(*(step_tags(step, words, now) for step in steps))
