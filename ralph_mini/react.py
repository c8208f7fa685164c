"""Bare ReAct: think, act, observe, until a final answer (notebook 01).

The seed article's framing: a *Reasoner* (the model) and an *Actor* (this loop) take turns. The model
writes a thought and asks for a tool; the loop runs the tool and writes what came back as an
observation; repeat. ``run_react`` is one top-to-bottom function with no hidden state: everything it
knows is in ``messages``, and everything that happened is in the returned ``Trace``.

Bad model output never crashes the loop: malformed JSON arguments, an unknown tool, wrong arguments, a
tool that raises, or a reply with neither a tool call nor an answer all become observations the model
sees, and each counts as a *wrong call*. More than ``max_pitfall_depth`` wrong calls stop the run with
that reason (the seed's "max pitfall depth"); ``max_steps`` bounds every run.

Left out on purpose: parallel tool execution, streaming, planning (that comes with the Ralph Loop).
"""

import json
from collections.abc import Sequence
from dataclasses import dataclass, field

from ralph_mini.model import ChatModel, ModelReply, ToolCall
from ralph_mini.tools import BadArguments, NotFound, Tool, compress_observation
from ralph_mini.world import Task

SYSTEM_PROMPT = """You are an order-status assistant for an online shop.
Current time: {now}.

Answer the user's question about one order. Use the tools, one call at a time, and read each result.
Statuses are: paid, pending, refunded, payment_failed, not_found. If the payment provider reports
payment_status=captured, the order is paid; declined means payment_failed.
When you know the answer, reply without a tool call and end with one line:
Final answer: {{"order_id": "...", "status": "...", "amount": 0.0, "paid_at": "...", "txn_id": "..."}}
Leave out the fields you do not know."""

LESSONS_HEADER = "Lessons from earlier runs (follow them):"

# Step statuses. The first two are normal outcomes; the rest are wrong calls.
OK, NOT_FOUND = "ok", "not_found"
WRONG_STATUSES = ("error", "bad_args", "wrong_tool", "bad_reply")


@dataclass(frozen=True)
class Step:
    """One action and its observation. ``status`` is what the log and the grader see."""

    index: int
    thought: str | None
    tool: str
    arguments: str
    status: str
    observation: str
    tool_latency_s: float = 0.0
    model_latency_s: float = 0.0
    tokens_in: int = 0
    tokens_out: int = 0
    call_id: str = ""

    @property
    def wrong(self) -> bool:
        return self.status in WRONG_STATUSES

    def to_message(self) -> dict:
        """The observation as the model sees it next turn."""
        if self.status == "bad_reply":
            return {"role": "user", "content": self.observation}
        return {"role": "tool", "tool_call_id": self.call_id, "content": self.observation}

    def log_line(self) -> str:
        """'2 query_database({"order_id": "A123"}) -> ok (0.80 s)'."""
        return f"{self.index} {self.tool}({self.arguments}) -> {self.status} ({self.tool_latency_s:.2f} s)"


@dataclass
class Trace:
    """Everything one run did: steps, the final answer, why it stopped, and what it cost."""

    task: Task
    messages: list[dict]
    steps: list[Step] = field(default_factory=list)
    answer: dict | None = None
    final_text: str | None = None
    stop_reason: str = "running"
    model_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    model_latency_s: float = 0.0

    @property
    def tool_calls(self) -> int:
        return sum(1 for s in self.steps if s.status != "bad_reply")

    @property
    def wrong_calls(self) -> int:
        return sum(1 for s in self.steps if s.wrong)

    @property
    def latency_s(self) -> float:
        """Virtual wall time: every model call plus every tool call."""
        return self.model_latency_s + sum(s.tool_latency_s for s in self.steps)

    def add_reply(self, reply: ModelReply) -> None:
        self.model_calls += 1
        self.tokens_in += reply.usage.prompt_tokens
        self.tokens_out += reply.usage.completion_tokens
        self.model_latency_s += reply.latency_s


def build_system_prompt(now: str, lessons: Sequence[str] = (), template: str = SYSTEM_PROMPT) -> str:
    """The system prompt, with lessons (micro-prompts) appended as a bulleted list if there are any."""
    prompt = template.format(now=now)
    if lessons:
        prompt += "\n\n" + LESSONS_HEADER + "\n" + "\n".join(f"- {lesson}" for lesson in lessons)
    return prompt


def run_react(
    task: Task,
    model: ChatModel,
    tools: Sequence[Tool],
    *,
    lessons: Sequence[str] = (),
    max_steps: int = 8,
    max_pitfall_depth: int = 3,
) -> Trace:
    """Run one task to a final answer, ``max_steps`` model turns, or too many wrong calls."""
    messages = [
        {"role": "system", "content": build_system_prompt(task.now, lessons)},
        {"role": "user", "content": task.question},
    ]
    schemas = [t.schema() for t in tools]
    by_name = {t.name: t for t in tools}
    trace = Trace(task=task, messages=messages)
    for _ in range(max_steps):
        reply = model.complete(messages, schemas)
        trace.add_reply(reply)
        messages.append(reply.to_message())
        if reply.tool_calls:
            new_steps = [
                execute_call(call, by_name, task, len(trace.steps) + i + 1, reply)
                for i, call in enumerate(reply.tool_calls)
            ]
        else:
            trace.final_text = reply.content
            trace.answer = parse_final_answer(reply.content or "")
            if trace.answer is not None:
                trace.stop_reason = "answered"
                return trace
            new_steps = [bad_reply_step(len(trace.steps) + 1, reply)]
        for step in new_steps:
            trace.steps.append(step)
            messages.append(step.to_message())
        if trace.wrong_calls > max_pitfall_depth:
            trace.stop_reason = f"max_pitfall_depth: {trace.wrong_calls} wrong calls"
            return trace
    trace.stop_reason = f"max_steps: no final answer after {max_steps} model turns"
    return trace


def execute_call(call: ToolCall, tools: dict[str, Tool], task: Task, index: int, reply: ModelReply) -> Step:
    """Run one tool call; every failure becomes a status and an observation, never an exception."""
    first = call is reply.tool_calls[0]
    cost = {
        "thought": reply.content if first else None,
        "model_latency_s": reply.latency_s if first else 0.0,
        "tokens_in": reply.usage.prompt_tokens if first else 0,
        "tokens_out": reply.usage.completion_tokens if first else 0,
    }
    tool = tools.get(call.name)
    if tool is None:
        known = ", ".join(tools) or "none"
        return Step(index, tool=call.name, arguments=call.arguments, status="wrong_tool",
                    observation=f"error: unknown tool {call.name!r}; known tools are {known}",
                    call_id=call.id, **cost)  # fmt: skip
    try:
        arguments = json.loads(call.arguments or "{}")
        outcome, detail = OK, compress_observation(tool(**_as_kwargs(arguments)))
    except json.JSONDecodeError as err:
        outcome, detail = "bad_args", f"arguments are not valid JSON ({err.msg}); send an object"
    except BadArguments as err:
        outcome, detail = "bad_args", str(err)
    except NotFound as err:
        outcome, detail = NOT_FOUND, str(err)
    except Exception as err:  # a tool bug must not kill the run: show it to the model
        outcome, detail = "error", f"{call.name} failed: {type(err).__name__}: {err}"
    relevant = not task.relevant_tools or call.name in task.relevant_tools
    status = outcome if relevant or outcome == "bad_args" else "wrong_tool"
    return Step(index, tool=call.name, arguments=call.arguments, status=status,
                observation=f"{outcome}: {detail}", tool_latency_s=tool.latency_s,
                call_id=call.id, **cost)  # fmt: skip


def bad_reply_step(index: int, reply: ModelReply) -> Step:
    return Step(index, thought=reply.content, tool="(none)", arguments="", status="bad_reply",
                observation="error: your reply had neither a tool call nor a line "
                'Final answer: {...}; call a tool or give the final answer',
                model_latency_s=reply.latency_s, tokens_in=reply.usage.prompt_tokens,
                tokens_out=reply.usage.completion_tokens)  # fmt: skip


def parse_final_answer(text: str) -> dict | None:
    """The JSON object after 'Final answer:' (or the last JSON object in the text), else None.

    'I have it.\\nFinal answer: {"status": "paid"}' -> {'status': 'paid'}
    """
    start = text.rfind("Final answer:")
    scan = text[start:] if start >= 0 else text
    decoder = json.JSONDecoder()
    found, position = None, scan.find("{")
    while position >= 0:
        try:
            value, end = decoder.raw_decode(scan, position)
        except json.JSONDecodeError:
            position = scan.find("{", position + 1)
            continue
        if isinstance(value, dict):
            found = value
            if start >= 0:
                break
        position = scan.find("{", end)
    return found


def _as_kwargs(arguments: object) -> dict:
    if not isinstance(arguments, dict):
        raise BadArguments(f"arguments must be a JSON object, got {json.dumps(arguments)[:60]}")
    return arguments
