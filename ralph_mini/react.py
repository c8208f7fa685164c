"""Bare ReAct: think, act, observe, until a final answer (notebook 01).

The seed article's framing: a *Reasoner* (the model) and an *Actor* (this loop) take turns. The model
writes a thought and asks for a tool; the loop runs the tool and writes what came back as an
observation; repeat. ``run_react`` is one top-to-bottom function with no hidden state: everything it
knows is in ``messages``, and everything that happened is in the returned ``Trace``.

Bad model output never crashes the loop: malformed JSON arguments, an unknown tool, wrong arguments, a
tool that raises or hangs (the loop stops waiting after ``tool_timeout_s``), or a reply with neither a
tool call nor an answer all become observations the model sees, and each counts as a *wrong call*.
More than ``max_pitfall_depth`` wrong calls stop the run with that reason (the seed's "max pitfall
depth"), even partway through a reply; ``max_steps`` bounds every run. Everything the loop writes back
to the model is capped at ``MAX_OBSERVATION_CHARS``.

Left out on purpose: parallel tool execution, streaming, planning (that comes with the Ralph Loop).
"""

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ralph_mini.model import ChatModel, ModelReply, ToolCall
from ralph_mini.tools import (
    BadArguments,
    NotFound,
    Tool,
    ToolTimeout,
    call_with_timeout,
    compress_observation,
)
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
MORE_LESSONS_HEADER = "More lessons for what you just observed (follow them):"

# Step statuses. The first two are normal outcomes; the rest are wrong calls.
OK, NOT_FOUND = "ok", "not_found"
WRONG_STATUSES = ("error", "bad_args", "wrong_tool", "bad_reply")

# Caps on what the loop writes back to the model, which it then re-reads on every later turn.
MAX_OBSERVATION_CHARS = 2_000  # one observation (a tool output, an error quoting the model's arguments)
MAX_NAME_CHARS = 100  # a tool name the model made up (OpenAI's own limit is 64)
MAX_REPLY_CHARS = 4_000  # the model's own text and arguments, as kept in the conversation
ANSWER_SCAN_CHARS = 10_000  # a final answer is a few hundred characters; reading more only costs time


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
        prompt += "\n\n" + LESSONS_HEADER + "\n" + bullets(lessons)
    return prompt


def bullets(lessons: Sequence[str]) -> str:
    return "\n".join(f"- {lesson}" for lesson in lessons)


def run_react(
    task: Task,
    model: ChatModel,
    tools: Sequence[Tool],
    *,
    lessons: Sequence[str] = (),
    max_steps: int = 8,
    max_pitfall_depth: int = 3,
    more_lessons: Callable[[list[Step]], Sequence[str]] | None = None,
    tool_timeout_s: float | None = 10.0,
) -> Trace:
    """Run one task to a final answer, ``max_steps`` model turns, or too many wrong calls.

    ``more_lessons`` (used by the Ralph Loop) is asked after each tool call for lessons about what was
    just observed; any it returns are added to the conversation as a system message.
    """
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
        messages.append(transcript_message(reply))
        if reply.tool_calls:
            new_steps = []
            for call in reply.tool_calls:  # one at a time: stop mid-reply once too many went wrong
                index = len(trace.steps) + len(new_steps) + 1
                new_steps.append(
                    execute_call(call, by_name, task, index, reply, tool_timeout_s=tool_timeout_s)
                )
                if trace.wrong_calls + sum(step.wrong for step in new_steps) > max_pitfall_depth:
                    break
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
        extra = more_lessons(trace.steps) if more_lessons and reply.tool_calls else ()
        if extra:
            messages.append({"role": "system", "content": MORE_LESSONS_HEADER + "\n" + bullets(extra)})
        if trace.wrong_calls > max_pitfall_depth:
            trace.stop_reason = f"max_pitfall_depth: {trace.wrong_calls} wrong calls"
            return trace
    trace.stop_reason = f"max_steps: no final answer after {max_steps} model turns"
    return trace


def execute_call(
    call: ToolCall,
    tools: dict[str, Tool],
    task: Task,
    index: int,
    reply: ModelReply,
    *,
    tool_timeout_s: float | None = 10.0,
) -> Step:
    """Run one tool call; every failure becomes a status and an observation, never an exception.

    The observation is capped at ``MAX_OBSERVATION_CHARS`` because it is sent back with every later
    prompt: one huge tool output must not eat the context window. A tool that does not answer within
    ``tool_timeout_s`` seconds is abandoned (see ``call_with_timeout``) and the run goes on.
    """
    first = call is reply.tool_calls[0]
    record = {
        "tool": _clip(str(call.name), MAX_NAME_CHARS),
        "arguments": _clip(str(call.arguments or ""), MAX_OBSERVATION_CHARS),
        "call_id": call.id,
        "thought": reply.content if first else None,
        "model_latency_s": reply.latency_s if first else 0.0,
        "tokens_in": reply.usage.prompt_tokens if first else 0,
        "tokens_out": reply.usage.completion_tokens if first else 0,
    }
    tool = tools.get(call.name) if isinstance(call.name, str) else None
    if tool is None:
        known = ", ".join(tools) or "none"
        observation = f"error: unknown tool {_clip(repr(call.name), MAX_NAME_CHARS)}; known tools are {known}"
        return Step(
            index, status="wrong_tool", observation=_clip(observation, MAX_OBSERVATION_CHARS), **record
        )
    outcome, detail, latency_s = _run_tool(tool, call.arguments, tool_timeout_s)
    relevant = not task.relevant_tools or call.name in task.relevant_tools
    status = outcome if relevant or outcome == "bad_args" else "wrong_tool"
    observation = _clip(f"{outcome}: {detail}", MAX_OBSERVATION_CHARS)
    return Step(index, status=status, observation=observation, tool_latency_s=latency_s, **record)


def _run_tool(tool: Tool, arguments: object, timeout_s: float | None) -> tuple[str, str, float]:
    """(outcome, detail, virtual latency) of one call. Arguments are checked first, in this thread, so
    a wrong argument is the model's ``bad_args`` and only what the tool itself raises is an ``error``.

    A normal call costs the tool's declared ``latency_s``; a timed-out one costs the time waited.
    """
    try:
        kwargs = tool.validate(_as_kwargs(arguments))
    except BadArguments as err:
        return "bad_args", _message(err), tool.latency_s
    except RecursionError:  # repr() of a value nested ~1000 deep, inside an error message
        return "bad_args", "arguments are nested too deeply to read; send a flat object", tool.latency_s
    try:
        result = call_with_timeout(lambda: tool.function(**kwargs), timeout_s)
    except ToolTimeout as err:  # err.seconds: our wait, or that of a timeout inside the tool
        return "error", f"{tool.name} timed out after {err.seconds:g} s; it may still be running", err.seconds
    except BadArguments as err:
        return "bad_args", _message(err), tool.latency_s
    except NotFound as err:
        return NOT_FOUND, _message(err), tool.latency_s
    except Exception as err:  # a tool bug must not kill the run: show it to the model
        return "error", f"{tool.name} failed: {_describe(err)}", tool.latency_s
    if not isinstance(result, dict):
        what = f"{type(result).__name__} {_clip(_safe_repr(result), 60)}"
        return "error", f"{tool.name} returned {what}, not a dict of fields: fix the tool", tool.latency_s
    try:
        return OK, compress_observation(result), tool.latency_s
    except Exception as err:  # a field whose str() raises
        return "error", f"{tool.name} returned fields that cannot be shown: {_describe(err)}", tool.latency_s


def bad_reply_step(index: int, reply: ModelReply) -> Step:
    """A reply with no tool call and no readable final answer: a wrong call, and the model is told why."""
    return Step(index, thought=reply.content, tool="(none)", arguments="", status="bad_reply",
                observation=_bad_reply_observation(reply.content),
                model_latency_s=reply.latency_s, tokens_in=reply.usage.prompt_tokens,
                tokens_out=reply.usage.completion_tokens)  # fmt: skip


def _bad_reply_observation(content: object) -> str:
    """Say what was wrong with the reply, so the model can fix that one thing."""
    if not isinstance(content, str) or not content.strip():
        return "error: your reply was empty; call a tool or give the final answer"
    if "Final answer:" in content:
        return (
            "error: the text after 'Final answer:' is not a JSON object; end with one line "
            'Final answer: {"order_id": "...", "status": "..."}'
        )
    return (
        "error: your reply had neither a tool call nor a line "
        "Final answer: {...}; call a tool or give the final answer"
    )


def parse_final_answer(text: str) -> dict | None:
    """The JSON object after the last 'Final answer:' (or the last JSON object in the text), else None.

    'I have it.\\nFinal answer: {"status": "paid"}' -> {'status': 'paid'}

    Never raises, and reads at most ``ANSWER_SCAN_CHARS`` (after the marker, or the end of a text
    without one): trying every '{' of a 100 KB reply would make one odd reply cost seconds.
    """
    if not isinstance(text, str):
        return None
    start = text.rfind("Final answer:")
    scan = text[start : start + ANSWER_SCAN_CHARS] if start >= 0 else text[-ANSWER_SCAN_CHARS:]
    decoder = json.JSONDecoder()
    found, position = None, scan.find("{")
    while position >= 0:
        try:
            value, end = decoder.raw_decode(scan, position)
        except (ValueError, RecursionError):  # bad JSON, an integer over 4,300 digits, nesting ~1000 deep
            position = scan.find("{", position + 1)
            continue
        if isinstance(value, dict):
            found = value
            if start >= 0:
                break
        position = scan.find("{", end)
    return found


def _as_kwargs(arguments: object) -> dict:
    """The model's argument text as a dict, or BadArguments saying what to send instead.

    '{"order_id": "A123"}' -> {'order_id': 'A123'}; '' or None -> {} (a call without arguments).
    """
    if arguments is None:
        return {}
    if not isinstance(arguments, str):
        raise BadArguments(f"arguments must be JSON text, got {type(arguments).__name__}")
    try:
        parsed = json.loads(arguments or "{}")
    except json.JSONDecodeError as err:
        raise BadArguments(
            f"arguments are not valid JSON ({err.msg}: character {err.pos}); send an object"
        ) from None
    except ValueError as err:  # Python's guard against integers over 4,300 digits
        raise BadArguments(f"arguments hold a number that cannot be read ({_clip(str(err), 60)})") from None
    except RecursionError:
        raise BadArguments("arguments are nested too deeply to read; send a flat object") from None
    if not isinstance(parsed, dict):
        kind = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
            type(parsed), "a number"
        )
        raise BadArguments(f"arguments must be a JSON object, got {kind}: {_clip(arguments, 60)}")
    return parsed


def transcript_message(reply: ModelReply) -> dict:
    """The assistant turn as kept in the conversation, its text and arguments capped at
    ``MAX_REPLY_CHARS``: one rambling reply must not be re-sent in full on every later call."""
    message = reply.to_message()
    if message["content"]:
        message["content"] = _clip(message["content"], MAX_REPLY_CHARS)
    for call in message.get("tool_calls", []):
        arguments = call["function"]["arguments"]
        if isinstance(arguments, str):
            call["function"]["arguments"] = _clip(arguments, MAX_REPLY_CHARS)
    return message


def _clip(text: str, limit: int) -> str:
    """``text`` if it fits in ``limit`` characters, else its head and a note of how much was cut.

    'x' * 5000, limit 2000 -> 'xxx…x… (truncated from 5000 chars)', exactly 2000 characters long.
    """
    if len(text) <= limit:
        return text
    note = f"… (truncated from {len(text)} chars)"
    return text[: max(limit - len(note), 0)] + note


def _message(err: Exception) -> str:
    """``str(err)``, even for an exception whose ``__str__`` itself raises."""
    try:
        return str(err)
    except Exception:
        return f"<{type(err).__name__} with an unprintable message>"


def _describe(err: Exception) -> str:
    """'TimeoutError: cache did not answer in 2 s'; just 'KeyError' when there is no message."""
    message = _message(err)
    return f"{type(err).__name__}: {message}" if message else type(err).__name__


def _safe_repr(value: object) -> str:
    """``repr(value)`` that cannot raise (a deep list, or a broken ``__repr__``)."""
    try:
        return repr(value)
    except Exception:
        return f"<{type(value).__name__}>"
