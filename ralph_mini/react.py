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

Lessons can also bind: with a ``guard`` (``guards.py``, notebook 12) a call a lesson forbids is refused
at the tool boundary, a status ``refused`` that costs the model a turn and no tool call.

Left out on purpose: parallel tool execution, streaming, planning (that comes with the Ralph Loop).
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from ralph_mini.hardening import (
    MAX_NAME_CHARS,
    MAX_OBSERVATION_CHARS,
    REFUSED,
    REPEATED,
    WRONG_STATUSES,
    bad_reply_observation,
    canonical_arguments,
    clip,
    parse_final_answer,
    run_call,
    transcript_message,
)
from ralph_mini.model import ChatModel, ModelReply, ToolCall
from ralph_mini.prompt_lessons import LessonBudget, build_system_prompt, lesson_tokens  # noqa: F401 (re-exported)
from ralph_mini.rules import MORE_LESSONS_HEADER, bullets
from ralph_mini.tools import Tool


class Assignment(Protocol):
    """What the loop needs from a task: the question, the world's prompt, and the tools it is about."""

    question: str
    relevant_tools: tuple[str, ...]  # a call to any other tool is a wrong call; () accepts every tool

    @property
    def system_prompt(self) -> str: ...  # the world's prompt, with its current time filled in


class CallGuard(Protocol):
    """Checks at the tool boundary, from the lessons a run carries (``guards.Guard``)."""

    def first_tools(self, offered: Sequence[str]) -> list[str]: ...  # the first turn's tools

    def check_call(self, tool: str, steps: Sequence["Step"]) -> str | None: ...  # a refusal, or None

    def check_answer(self, steps: Sequence["Step"]) -> str | None: ...  # a refusal, or None


ANSWER = "(answer)"  # the tool name of a refused answer's step


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
        if self.status == "bad_reply" or self.tool == ANSWER:
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
        """Calls that reached a tool: a bad reply or a call a guard refused reached none."""
        return sum(1 for s in self.steps if s.status not in ("bad_reply", REFUSED))

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
    guard: Callable[[Sequence[str]], CallGuard] | None = None,
    lessons_in_prompt: bool = True,
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

    ``guard`` builds the checks of the lessons the run carries (planned, then with the added ones); with
    ``lessons_in_prompt=False`` the lessons bind only through it (``LoopConfig.enforce``).
    """
    lessons = budget.fit(lessons)
    shown = lessons if lessons_in_prompt else []
    messages = [
        {"role": "system", "content": build_system_prompt(task.system_prompt, shown)},
        {"role": "user", "content": task.question},
    ]
    schemas = [t.schema() for t in tools]
    by_name = {t.name: t for t in tools}
    trace = Trace(task=task, messages=messages)
    checks = guard(lessons) if guard else None
    for turn in range(max_steps):
        reply = model.complete(messages, first_turn(schemas, checks) if turn == 0 else schemas)
        trace.add_reply(reply)
        messages.append(transcript_message(reply))
        if not reply.tool_calls:
            trace.final_text = reply.content
            trace.answer = parse_final_answer(reply.content or "")
            refusal = checks.check_answer(trace.steps) if checks and trace.answer is not None else None
            if refusal:
                trace.answer = None
                trace.steps.append(step_of(len(trace.steps) + 1, reply, None, REFUSED, refusal))
                messages.append(trace.steps[-1].to_message())
                continue
            if trace.answer is not None:
                trace.stop_reason = "answered"
                return trace
        for step in new_steps(reply, by_name, task, trace, max_pitfall_depth, tool_timeout_s, checks):
            trace.steps.append(step)
            messages.append(step.to_message())
        if (
            more_lessons
            and reply.tool_calls
            and not trace.added_lessons
            and len(lessons) < budget.max_lessons
        ):
            trace.added_lessons = budget.fit(more_lessons(trace.steps[-1]), carried=lessons)
            checks = guard([*lessons, *trace.added_lessons]) if guard else None
            if trace.added_lessons and lessons_in_prompt:
                more = MORE_LESSONS_HEADER + "\n" + bullets(trace.added_lessons)
                messages.append({"role": "system", "content": more})
        if too_deep(trace.steps, trace.wrong_calls, max_pitfall_depth):
            trace.stop_reason = f"max_pitfall_depth: {trace.wrong_calls} wrong calls"
            return trace
    trace.stop_reason = f"max_steps: no final answer after {max_steps} model turns"
    return trace


def first_turn(schemas: list[dict], checks: CallGuard | None) -> list[dict]:
    """The tools of the first model turn: all of them, or the one a guarded 'start with' lesson names."""
    if checks is None:
        return schemas
    allowed = checks.first_tools([s["function"]["name"] for s in schemas])
    return [s for s in schemas if s["function"]["name"] in allowed]


def new_steps(reply, by_name, task, trace: Trace, max_pitfall_depth: int, tool_timeout_s,
              checks: CallGuard | None = None) -> list[Step]:  # fmt: skip
    """The steps of one reply: one per tool call, run one at a time, stopping mid-reply once too many
    went wrong; or one ``bad_reply`` step for a reply with neither a call nor a readable answer. A call
    the guard refuses is not run: its step says why."""
    if not reply.tool_calls:
        return [step_of(len(trace.steps) + 1, reply, None, "bad_reply", bad_reply_observation(reply.content))]
    steps: list[Step] = []
    for call in reply.tool_calls:
        index = len(trace.steps) + len(steps) + 1
        refusal = checks.check_call(str(call.name), [*trace.steps, *steps]) if checks else None
        if refusal:
            steps.append(step_of(index, reply, call, REFUSED, refusal))
        elif repeats(call, [*trace.steps, *steps]):
            # not run again: a wrong call (toward the pitfall depth); its answer is already above
            seen = f"error: {call.name} was already called with these arguments; see its result"
            steps.append(step_of(index, reply, call, REPEATED, seen))
        else:
            steps.append(execute_call(call, by_name, task, index, reply, tool_timeout_s))
        if too_deep(
            [*trace.steps, *steps], trace.wrong_calls + sum(s.wrong for s in steps), max_pitfall_depth
        ):
            break
    return steps


def too_deep(steps: Sequence[Step], wrong_calls: int, max_pitfall_depth: int) -> bool:
    """More wrong calls than the max pitfall depth; or a loop: the call just made repeats one that
    answered, with the wrong calls at the depth, so a call repeated forever stops at max_pitfall_depth
    + 1 calls (the first and its repeats)."""
    looping = bool(steps) and steps[-1].status == REPEATED and wrong_calls >= max_pitfall_depth
    return wrong_calls > max_pitfall_depth or looping


def execute_call(call: ToolCall, tools: dict[str, Tool], task: Assignment, index: int, reply: ModelReply,
                 tool_timeout_s: float | None = None) -> Step:  # fmt: skip
    """Run one tool call (``hardening.run_call``) and record it as a step."""
    status, observation, latency_s = run_call(call, tools, task.relevant_tools, tool_timeout_s)
    return step_of(index, reply, call, status, observation, latency_s)


def repeats(call: ToolCall, earlier: Sequence[Step]) -> bool:
    """Loop detection: the same tool with the same arguments by their meaning (parsed: spacing, key order
    and number spelling aside), after such a call already answered (ok or not_found). Asking again
    after an error is a fair retry, and so is asking after a refusal (that call never ran); asking
    again after an answer is a loop."""
    meaning = canonical_arguments(clip(str(call.arguments or ""), MAX_OBSERVATION_CHARS))
    return any(
        s.tool == call.name
        and not s.wrong
        and s.status != REFUSED
        and canonical_arguments(s.arguments) == meaning
        for s in earlier
    )


def step_of(index: int, reply: ModelReply, call: ToolCall | None, status: str, observation: str,
            tool_latency_s: float = 0.0) -> Step:  # fmt: skip
    """One step of ``reply``: for one of its calls, or (call None) for the reply itself: a bad reply, or
    an answer a guard refused. The reply's thought, latency and tokens go on its first step."""
    first = call is None or call is reply.tool_calls[0]
    tool = str(call.name) if call else (ANSWER if status == REFUSED else "(none)")
    return Step(index, thought=reply.content if first else None, tool=clip(tool, MAX_NAME_CHARS),
                arguments=clip(str(call.arguments or "") if call else "", MAX_OBSERVATION_CHARS),
                status=status, observation=observation, tool_latency_s=tool_latency_s,
                model_latency_s=reply.latency_s if first else 0.0,
                tokens_in=reply.usage.prompt_tokens if first else 0,
                tokens_out=reply.usage.completion_tokens if first else 0,
                call_id=call.id if call else "")  # fmt: skip
