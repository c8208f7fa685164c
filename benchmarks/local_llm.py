"""How well does the bundled Gemma 3 270M call tools? Measure it, five ways, and print a table.

    python benchmarks/local_llm.py                 # 4 tasks per setting, ~3-5 min on 2 cores
    python benchmarks/local_llm.py --tasks 6
    python benchmarks/local_llm.py --record notebooks/cassettes/gemma_react.jsonl --record-tasks 10

Settings (all at temperature 0, core tools only, bare ReAct with ``run_react``):

1. ``tools=``, gemma format: the kit as is, ``OpenAIModel`` against ``--chat_format gemma``
   (which drops the system prompt, the tools and the tool results: the model sees the question).
2. server function calling: ``--chat_format chatml-function-calling`` with ``tool_choice="auto"``.
3. JSON in the prompt + example: ``JsonToolsModel`` with a worked example; output unconstrained.
4. JSON + schema, no example: ``response_format`` with ``json_action_schema``, which llama.cpp
   compiles into a grammar, so every reply is a known tool with valid arguments, or an answer.
5. JSON + schema + example: both.

Settings 2, 4 and 5 send extra request fields through ``OpenAIModel(..., extra_body=...)``; every request
carries ``max_tokens`` (a base model may otherwise write until the context is full). Setting 5 is
``local.local_actor``: the one notebook 08 uses.
"""

import argparse
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ralph_mini.cassette import RecordingModel
from ralph_mini.json_tools import JsonToolsModel, response_format
from ralph_mini.local import LocalServer, measure_speed, serve_local
from ralph_mini.local_session import ACT_MAX_TOKENS, local_actor
from ralph_mini.model import OpenAIModel
from ralph_mini.react import Trace, run_react
from ralph_mini.world import Task, grade
from ralph_mini.worlds.orders import make_suite
from ralph_mini.worlds.orders.example import EXAMPLE


def local_model(server: LocalServer, **extra: Any) -> OpenAIModel:
    """The kit's OpenAIModel on the local server, replies capped at ACT_MAX_TOKENS, plus ``extra`` fields."""
    return OpenAIModel(server.model_name, base_url=server.base_url, api_key="not-needed", timeout_s=300,
                       max_retries=0, max_tokens=ACT_MAX_TOKENS, extra_body=extra or None)  # fmt: skip


@dataclass(frozen=True)
class Setting:
    name: str
    chat_format: str
    build: Any  # (server, tool schemas) -> ChatModel


SETTINGS = [
    Setting("tools=, gemma format", "gemma", lambda server, schemas: local_model(server)),
    Setting("server function calling", "chatml-function-calling",
            lambda server, schemas: local_model(server, tool_choice="auto")),
    Setting("JSON in prompt + example", "gemma",
            lambda server, schemas: JsonToolsModel(local_model(server), EXAMPLE)),
    Setting("JSON + schema, no example", "gemma",
            lambda server, schemas: JsonToolsModel(
                local_model(server, response_format=response_format(schemas)))),
    Setting("JSON + schema + example", "gemma",  # = local_actor, the measured best
            lambda server, schemas: JsonToolsModel(local_actor(server.base_url, schemas), EXAMPLE)),
]  # fmt: skip


@dataclass
class Row:
    """One setting's totals over the tasks."""

    setting: str
    tasks: int = 0
    turns: int = 0
    calls: int = 0
    valid: int = 0  # known tool, arguments accepted
    right_id: int = 0  # valid and about the task's own order
    bad_replies: int = 0
    answered: int = 0
    correct: int = 0
    seconds: float = 0.0

    def add(self, task: Task, trace: Trace, known: set[str]) -> None:
        self.tasks += 1
        self.turns += trace.model_calls
        self.seconds += trace.model_latency_s
        self.answered += trace.answer is not None
        self.correct += grade(task, trace.answer).correct
        for step in trace.steps:
            if step.status == "bad_reply":
                self.bad_replies += 1
                continue
            self.calls += 1
            if step.tool in known and step.status in ("ok", "not_found", "error"):
                self.valid += 1
                self.right_id += _order_id(step.arguments) == task.record_id

    def cells(self) -> list[str]:
        pct = f"{self.valid / self.calls:.0%}" if self.calls else "-"
        return [self.setting, f"{self.valid}/{self.calls} ({pct})", f"{self.right_id}",
                f"{self.calls / self.tasks:.1f}", f"{self.bad_replies}", f"{self.answered}",
                f"{self.correct}/{self.tasks}", f"{self.seconds / self.tasks:.1f}"]  # fmt: skip


HEADER = ["setting", "valid tool calls", "right order id", "calls/task", "bad replies",
          "answered", "correct", "model s/task"]  # fmt: skip


def _order_id(arguments: str) -> str | None:
    try:
        value = json.loads(arguments)
    except json.JSONDecodeError:
        return None
    return value.get("order_id") if isinstance(value, dict) else None


def markdown(rows: list[Row]) -> str:
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join(row.cells()) + " |" for row in rows]
    return "\n".join(lines)


def run_setting(
    setting: Setting, tasks: list[Task], tools: list, port: int, verbose: bool, save: Path | None
) -> Row:
    """Serve the model in the setting's chat format and run bare ReAct on every task."""
    schemas = [t.schema() for t in tools]
    row = Row(setting.name)
    with serve_local(port=port, chat_format=setting.chat_format) as server:
        model = setting.build(server, schemas)
        if save:  # every raw request and reply, to read afterwards (or replay)
            name = setting.name.replace(" ", "_").replace(",", "").replace("=", "").replace("+", "and")
            model = RecordingModel(model, save / f"{name}.jsonl")
        for task in tasks:
            trace = run_react(task, model, tools)
            row.add(task, trace, {t.name for t in tools})
            if verbose:
                print(f"  {setting.name} {task.task_id} {task.record_id}: "
                      + "; ".join(s.log_line() for s in trace.steps)
                      + f" => {trace.answer} [{trace.stop_reason}]", flush=True)  # fmt: skip
    return row


def record(path: str, n: int, port: int) -> None:
    """Record the best setting (JSON in prompt + schema) on the first ``n`` tasks into a cassette."""
    suite = make_suite(n=50, seed=7)
    tools = suite.world.tools(core_only=True)
    best = SETTINGS[-1]
    Path(path).unlink(missing_ok=True)  # a cassette is one recording: RecordingModel appends
    with serve_local(port=port, chat_format=best.chat_format) as server:
        model = RecordingModel(best.build(server, [t.schema() for t in tools]), path)
        for task in suite.tasks[:n]:
            trace = run_react(task, model, tools)
            print(f"{task.task_id} {grade(task, trace.answer).explain()}; "
                  f"{trace.tool_calls} calls, {trace.model_latency_s:.1f} s", flush=True)  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=4, help="tasks per setting (default 4)")
    parser.add_argument("--port", type=int, default=8790)
    parser.add_argument("--only", type=int, nargs="*", help="setting numbers to run (1-5)")
    parser.add_argument("--record", help="record the best setting into this cassette instead")
    parser.add_argument("--record-tasks", type=int, default=10)
    parser.add_argument("--save", type=Path, help="record each setting's replies into this folder")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every run's steps")
    args = parser.parse_args(argv)
    if args.record:
        record(args.record, args.record_tasks, args.port)
        return 0
    suite = make_suite(n=50, seed=7)
    tools = suite.world.tools(core_only=True)
    started = time.perf_counter()
    with serve_local(port=args.port) as server:
        print(f"speed: {measure_speed(server.base_url)}", flush=True)
    rows = []
    for number, setting in enumerate(SETTINGS, 1):
        if args.only and number not in args.only:
            continue
        tasks = suite.tasks[: args.tasks]
        rows.append(run_setting(setting, tasks, tools, args.port, args.verbose, args.save))
    print(f"\nGemma 3 270M (base, Q4_K_M), bare ReAct, core tools, {args.tasks} tasks of "
          f"make_suite(n=50, seed=7), temperature 0, max_tokens {ACT_MAX_TOKENS}:\n")  # fmt: skip
    print(markdown(rows))
    print(f"\ntotal {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
