"""Bare ReAct: think, act, observe, until a final answer (notebook 01).

The seed article's framing: a *Reasoner* (the model) and an *Actor* (this loop) take turns. The model
writes a thought and asks for a tool; the loop runs the tool and writes what came back as an
observation; repeat. ``run_react`` is one top-to-bottom function with no hidden state: everything it
knows is in ``messages``, and everything that happened is in the returned ``Trace``.

The loop is generic: it knows no world. The task brings its question, its system prompt (the world's
words, ``world.Task``) and which tools are relevant to it; lessons are plain strings appended to
the prompt. Every wrong call (an unknown tool, bad arguments, a failing tool, a reply with neither a
call nor an answer) becomes an observation the model sees; more than ``max_pitfall_depth`` of them
stop the run (the seed's "max pitfall depth"), and ``max_steps`` bounds every run. How each failure
is caught is ``hardening.py`` (notebook 07).

Left out on purpose: parallel tool execution, streaming, planning (that comes with the Ralph Loop).
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from ralph_mini.hardening import (
    MAX_NAME_CHARS,
    MAX_OBSERVATION_CHARS,
    REPEATED,
    WRONG_STATUSES,
    bad_reply_observation,
    clip,
    parse_final_answer,
    run_call,
    transcript_message,
)
from ralph_mini.model import ChatModel, ModelReply, ToolCall, count_tokens
from ralph_mini.rules import LESSONS_HEADER, MORE_LESSONS_HEADER, bullets
from ralph_mini.tools import Tool


class Assignment(Protocol):
    """What the loop needs from a task: the question, the world's prompt, and the tools it is about."""

    question: str
    relevant_tools: tuple[str, ...]  # a call to any other tool is a wrong call; () accepts every tool

    @property
    def system_prompt(self) -> str: ...  # the world's prompt, with its current time filled in


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

    task: Assignment
    messages: list[dict]
    steps: list[Step] = field(default_factory=list)
    answer: dict | None = None
    final_text: str | None = None
    stop_reason: str = "running"
    model_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    model_latency_s: float = 0.0
    added_lessons: list[str] = field(default_factory=list)  # lessons the run asked for mid-way

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


@dataclass(frozen=True)
class LessonBudget:
    """The one budget for lessons in a prompt (seed: at most 3, at most 15% of the context). Every lesson
    a run carries, planned or added mid-run, passes ``fit`` here: no caller can go over it."""

    max_lessons: int = 3
    share: float = 0.15
    context_tokens: int = 8192

    @property
    def tokens(self) -> int:
        return int(self.share * self.context_tokens)

    def fit(self, lessons: Sequence[str], carried: Sequence[str] = ()) -> list[str]:
        """The first ``lessons`` (in order, no repeats) that fit next to the ``carried`` ones."""
        chosen: list[str] = []
        used = sum(lesson_tokens(lesson) for lesson in carried)
        for lesson in dict.fromkeys(lessons):
            if len(carried) + len(chosen) >= self.max_lessons:
                break
            if lesson in carried:
                continue
            if used + lesson_tokens(lesson) <= self.tokens:
                chosen.append(lesson)
                used += lesson_tokens(lesson)
        return chosen


def lesson_tokens(rule: str) -> int:
    """Tokens one lesson adds to a prompt: its bullet line."""
    return count_tokens(bullets([rule]) + "\n")


def build_system_prompt(base: str, lessons: Sequence[str] = ()) -> str:
    """The world's prompt, with lessons (micro-prompts) appended as a bulleted list if there are any."""
    return base + ("\n\n" + LESSONS_HEADER + "\n" + bullets(lessons) if lessons else "")


def run_react(
    task: Assignment,
    model: ChatModel,
    tools: Sequence[Tool],
    *,
    lessons: Sequence[str] = (),
    max_steps: int = 8,
    max_pitfall_depth: int = 3,
    more_lessons: Callable[[Step], Sequence[str]] | None = None,
    tool_timeout_s: float | None = None,
    budget: LessonBudget = LessonBudget(),
) -> Trace:
    """Run one task to a final answer, ``max_steps`` model turns, or too many wrong calls.

    ``tool_timeout_s``: with a number, each tool runs in a worker thread and the loop stops waiting
    after that many seconds (notebook 07); with None, tools are called directly. The world's tools
    answer at once, and a thread per call cost more than the rest of a run; set a timeout for tools
    that do I/O.

    ``more_lessons`` (the Ralph Loop's second retrieval) is asked after each tool call what it knows
    about the last observation, until it once answers; its lessons join the conversation as a system
    message and are kept in ``trace.added_lessons``. Both pass ``budget``: a prompt never carries more
    lessons or lesson tokens than it allows, the added ones included.
    """
    lessons = budget.fit(lessons)
    messages = [
        {"role": "system", "content": build_system_prompt(task.system_prompt, lessons)},
        {"role": "user", "content": task.question},
    ]
    schemas = [t.schema() for t in tools]
    by_name = {t.name: t for t in tools}
    trace = Trace(task=task, messages=messages)
    for _ in range(max_steps):
        reply = model.complete(messages, schemas)
        trace.add_reply(reply)
        messages.append(transcript_message(reply))
        if not reply.tool_calls:
            trace.final_text = reply.content
            trace.answer = parse_final_answer(reply.content or "")
            if trace.answer is not None:
                trace.stop_reason = "answered"
                return trace
        for step in new_steps(reply, by_name, task, trace, max_pitfall_depth, tool_timeout_s):
            trace.steps.append(step)
            messages.append(step.to_message())
        if (
            more_lessons
            and reply.tool_calls
            and not trace.added_lessons
            and len(lessons) < budget.max_lessons
        ):
            trace.added_lessons = budget.fit(more_lessons(trace.steps[-1]), carried=lessons)
            if trace.added_lessons:
                more = MORE_LESSONS_HEADER + "\n" + bullets(trace.added_lessons)
                messages.append({"role": "system", "content": more})
        if trace.wrong_calls > max_pitfall_depth:
            trace.stop_reason = f"max_pitfall_depth: {trace.wrong_calls} wrong calls"
            return trace
    trace.stop_reason = f"max_steps: no final answer after {max_steps} model turns"
    return trace


def new_steps(reply, by_name, task, trace: Trace, max_pitfall_depth: int, tool_timeout_s) -> list[Step]:
    """The steps of one reply: one per tool call, run one at a time, stopping mid-reply once too many
    went wrong; or one ``bad_reply`` step for a reply with neither a call nor a readable answer."""
    if not reply.tool_calls:
        return [bad_reply_step(len(trace.steps) + 1, reply)]
    steps: list[Step] = []
    for call in reply.tool_calls:
        index = len(trace.steps) + len(steps) + 1
        if repeats(call, [*trace.steps, *steps]):
            steps.append(repeated_step(call, index, reply))
        else:
            steps.append(execute_call(call, by_name, task, index, reply, tool_timeout_s))
        if trace.wrong_calls + sum(step.wrong for step in steps) > max_pitfall_depth:
            break
    return steps


def execute_call(
    call: ToolCall, tools: dict[str, Tool], task: Assignment, index: int, reply: ModelReply,
    tool_timeout_s: float | None = None,
) -> Step:  # fmt: skip
    """Run one tool call (``hardening.run_call``) and record it as a step. The reply's thought, latency
    and tokens go on its first call's step."""
    status, observation, latency_s = run_call(call, tools, task.relevant_tools, tool_timeout_s)
    first = call is reply.tool_calls[0]
    return Step(
        index,
        thought=reply.content if first else None,
        tool=clip(str(call.name), MAX_NAME_CHARS),
        arguments=clip(str(call.arguments or ""), MAX_OBSERVATION_CHARS),
        status=status,
        observation=observation,
        tool_latency_s=latency_s,
        model_latency_s=reply.latency_s if first else 0.0,
        tokens_in=reply.usage.prompt_tokens if first else 0,
        tokens_out=reply.usage.completion_tokens if first else 0,
        call_id=call.id,
    )


def repeats(call: ToolCall, earlier: Sequence[Step]) -> bool:
    """Loop detection: the same tool with the same arguments, after such a call already answered (ok or
    not_found). Asking again after an error is a fair retry; asking again after an answer is a loop."""
    arguments = clip(str(call.arguments or ""), MAX_OBSERVATION_CHARS)
    return any(s.tool == call.name and s.arguments == arguments and not s.wrong for s in earlier)


def repeated_step(call: ToolCall, index: int, reply: ModelReply) -> Step:
    """A repeated call is not run again: it is a wrong call (toward the pitfall depth), and the model is
    told its answer is already above."""
    first = call is reply.tool_calls[0]
    return Step(index, thought=reply.content if first else None, tool=clip(str(call.name), MAX_NAME_CHARS),
                arguments=clip(str(call.arguments or ""), MAX_OBSERVATION_CHARS), status=REPEATED,
                observation=f"error: {call.name} was already called with these arguments; see its result",
                model_latency_s=reply.latency_s if first else 0.0,
                tokens_in=reply.usage.prompt_tokens if first else 0,
                tokens_out=reply.usage.completion_tokens if first else 0, call_id=call.id)  # fmt: skip


def bad_reply_step(index: int, reply: ModelReply) -> Step:
    """A reply with no tool call and no readable final answer: a wrong call, and the model is told why."""
    return Step(index, thought=reply.content, tool="(none)", arguments="", status="bad_reply",
                observation=bad_reply_observation(reply.content), model_latency_s=reply.latency_s,
                tokens_in=reply.usage.prompt_tokens, tokens_out=reply.usage.completion_tokens)  # fmt: skip
