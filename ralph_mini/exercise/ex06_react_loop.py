"""Exercise 6 (exercises/build_your_own/ex06_react_loop.ipynb): write the ReAct loop.

``react(task, model, tools, lessons=(), max_steps=8) -> (answer, steps)``: think, act, observe, over a
``ChatModel`` in OpenAI shape, until a reply gives 'Final answer: {...}' or ``max_steps`` model turns
are used. It is judged two ways. A scripted model (``Scripted``) plays fixed replies, and checks every
request it is sent as the OpenAI API would (the system prompt, the tool schemas, each tool call answered
by a ``role: tool`` message with its ``tool_call_id``), and refuses to be asked past the end of its
script or past ``max_steps``. On one case the offline model runs, and the answer and steps must be the
kit's own ``run_react``'s.
"""

import copy
import json
from typing import Any

from ralph_mini.exercise.build_track import BUILD_SOLUTIONS
from ralph_mini.exercise.checker import Case, Exercise, Judge, short_repr
from ralph_mini.exercise.messages import Hints, say
from ralph_mini.model import ModelReply, ToolCall
from ralph_mini.offline import OfflineModel
from ralph_mini.react import Step, build_system_prompt, run_react
from ralph_mini.tools import compress_observation
from ralph_mini.world import Task
from ralph_mini.worlds import orders
from ralph_mini.worlds.orders import words

TEXT = "text"  # a script line with no tool call: ("text", content)


class ScriptError(Exception):
    """The student's loop sent the scripted model something a real API would refuse, or asked it a turn
    too many; the message says what to fix."""


class Scripted:
    """A fake model: replies from a script (a list of tool calls as (name, arguments) pairs, or (TEXT,
    content)), and every request checked. ``forever``: the last line repeats (a model that never answers)."""

    def __init__(self, task: Task, tools: list, script: list, lessons=(), max_steps=8, forever=False):
        self.script, self.forever, self.max_steps = script, forever, max_steps
        self.system = build_system_prompt(task.system_prompt, lessons)
        self.task, self.lessons, self.schemas = task, list(lessons), [t.schema() for t in tools]
        self.requests: list[list[dict]] = []
        self.calls_made = 0

    def complete(self, messages: list[dict], tools: list[dict]) -> ModelReply:
        self.requests.append(copy.deepcopy(messages))
        turn = len(self.requests)
        problem = self.problem(messages, tools, turn)
        if problem:
            raise ScriptError(say("ex6.request", turn=turn, problem=problem))
        if turn > self.max_steps:
            raise ScriptError(say("ex6.turn_too_many", turn=turn, max_steps=self.max_steps))
        if turn > len(self.script) and not self.forever:
            raise ScriptError(say("ex6.asked_after_final"))
        line = self.script[min(turn, len(self.script)) - 1]
        if line[0] == TEXT:
            return ModelReply(content=line[1])
        calls = []
        for name, arguments in line:
            self.calls_made += 1
            calls.append(ToolCall(f"call_{self.calls_made}", name, json.dumps(arguments)))
        return ModelReply(content="Let me look.", tool_calls=tuple(calls))

    def problem(self, messages: Any, tools: Any, turn: int) -> str | None:
        """What a real API would say about this request, as a fix to make; None when it is fine."""
        if not isinstance(messages, list) or not all(isinstance(m, dict) and "role" in m for m in messages):
            return say("ex6.not_messages")
        if tools != self.schemas:
            return say("ex6.wrong_tools")
        if len(messages) < 2 or messages[0].get("role") != "system":
            return say("ex6.no_system_prompt")
        if messages[0].get("content") != self.system:
            missing = [lesson for lesson in self.lessons if lesson not in str(messages[0].get("content"))]
            if missing:
                return say("ex6.lesson_missing", lesson=missing[0])
            return say("ex6.other_system_prompt")
        if messages[1] != {"role": "user", "content": self.task.question}:
            return say("ex6.no_question")
        replies = sum(1 for m in messages if m["role"] == "assistant")
        if replies < turn - 1:
            return say("ex6.replies_missing", replies=replies, earlier=turn - 1)
        return answered_problem(messages)


def answered_problem(messages: list[dict]) -> str | None:
    """The OpenAI rule: every tool call of an assistant message is answered by a tool message with its
    id before the next assistant message; a tool message answers a call made just before it."""
    waiting: list[str] = []
    for message in messages:
        if message["role"] == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in waiting:
                return say("ex6.unknown_call_id", call_id=call_id)
            waiting.remove(call_id)
            continue
        if waiting:
            sent = say("ex6.sent_role", role=message["role"]) if message["role"] != "assistant" else ""
            return say("ex6.unanswered", call=waiting[0], sent=sent)
        if message["role"] == "assistant":
            waiting = [call["id"] for call in message.get("tool_calls") or []]
    if waiting:
        return say("ex6.unanswered_at_end", call=waiting[0])
    return None


def _expected_steps(task: Task, tools: list, script: list) -> list[tuple[str, str, str]]:
    """(tool, status, observation prefix) of each call of a script, as the spec says."""
    by_name = {t.name: t for t in tools}
    expected = []
    for line in script:
        for name, arguments in [] if line[0] == TEXT else line:
            tool = by_name.get(name)
            if tool is None:
                expected.append((name, "wrong_tool", "error: "))
                continue
            try:
                found = "ok: " + compress_observation(tool(**arguments))
                expected.append((name, "ok", found))
            except LookupError:
                expected.append((name, "not_found", "not_found: "))
            except Exception:
                expected.append((name, "error", "error: "))
    return expected


def _steps_problem(steps: Any, expected: list[tuple[str, str, str]], known: list[str]) -> str | None:
    if not isinstance(steps, list) or not all(isinstance(s, Step) for s in steps):
        return say("ex6.steps_not_a_list", steps=short_repr(steps))
    if len(steps) != len(expected):
        return say("ex6.step_count", count=len(steps), expected=len(expected))
    indexes = [s.index for s in steps]
    if indexes != list(range(1, len(steps) + 1)):
        return say("ex6.numbering", indexes=indexes)
    for step, (tool, status, prefix) in zip(steps, expected, strict=True):
        where = say("ex6.where", index=step.index, tool=tool)
        if step.tool != tool:
            return say("ex6.step_tool", where=where, got=step.tool)
        if step.status != status:
            why = say(f"ex6.why_{status}")  # why_ok, why_not_found, why_wrong_tool, why_error
            return say("ex6.step_status", where=where, got=step.status, status=status, why=why)
        if not str(step.observation).startswith(prefix):
            return say("ex6.step_observation", where=where, observation=step.observation, prefix=prefix)
        if status == "wrong_tool" and not all(name in step.observation for name in known):
            return say("ex6.list_tools", where=where)
        if step.call_id != f"call_{step.index}":
            return say("ex6.call_id", where=where, call_id=step.call_id)
    return None


def _react_judge(
    model: Scripted | None, answer: dict | None, expected: list, tools: list, turns: int
) -> Judge:
    known = [t.name for t in tools]

    def judge(returned: Any) -> str | None:
        if not isinstance(returned, tuple) or len(returned) != 2:
            return say("ex6.not_a_pair", returned=short_repr(returned))
        got, steps = returned
        if isinstance(got, str):
            return say("ex6.answer_is_text", text=got[:60])
        asked = len(model.requests) if model else turns
        if asked < turns and model.forever:
            return say("ex6.past_max_steps", asked=asked, max_steps=model.max_steps)
        if asked < turns:
            return say("ex6.stopped_early", asked=asked)
        if got != answer:
            then = say("ex6.return_none") if answer is None else ""
            return say("ex6.wrong_answer", got=short_repr(got), answer=answer, then=then)
        return _steps_problem(steps, expected, known)

    return judge


def _scripted_case(label: str, task: Task, tools: list, script: list, answer, **kwargs) -> Case:
    forever, why = kwargs.pop("forever", False), kwargs.pop("why", "")
    lessons, max_steps = kwargs.get("lessons", ()), kwargs.get("max_steps", 8)
    model = Scripted(task, tools, script, lessons, max_steps, forever)
    expected = _expected_steps(task, tools, (script * max_steps if forever else script)[:max_steps])
    judge = _react_judge(model, answer, expected, tools, max_steps if forever else len(script))
    shown = say("ex6.case", label=say(f"ex6.{label}"))
    return Case(shown, args=(task, model, tools), kwargs=kwargs, judge=judge, why=why and say(why))


def _offline_case(task: Task, tools: list, lessons: tuple = ()) -> Case:
    """The offline model, and the kit's run_react as the reference."""
    model = OfflineModel(habits=orders.HABITS)
    trace = run_react(task, model, tools, lessons=lessons)
    expected = [(s.tool, s.status, s.observation) for s in trace.steps]
    shown = say(
        "ex6.case_offline_lessons" if lessons else "ex6.case_offline",
        task=task.task_id,
        lessons=list(lessons),
    )
    judge = _react_judge(None, trace.answer, expected, tools, trace.model_calls)
    return Case(shown, args=(task, model, tools), kwargs={"lessons": lessons}, judge=judge)


def _react_cases() -> list[Case]:
    suite = orders.make_suite(n=4, seed=7)
    tools, core = suite.world.tools(), suite.world.tools(core_only=True)
    a123, b456 = suite.tasks[0], suite.tasks[1]
    cache = [(words.CACHE, {"order_id": "A123"})]
    paid = {"order_id": "A123", "status": "paid", "amount": 99.5}
    final = (TEXT, f"The cache has it.\nFinal answer: {json.dumps(paid)}")
    gone = {"order_id": "Z999", "status": "not_found"}
    no_order = (TEXT, f"No such order.\nFinal answer: {json.dumps(gone)}")
    start = f"when any task: start with {words.CACHE}"
    scripted = [  # (what the case is, as a key of the message tables, the script, its answer, settings)
        ("one_lookup", [cache, final], paid, {}),
        ("no_such_order", [[(words.DATABASE, {"order_id": "Z999"})], no_order], gone, {}),
        ("made_up_tool", [[("query_databse", {"order_id": "A123"})], cache, final], paid,
         {"why": "ex6.never_crash"}),
        ("bad_arguments", [[(words.CACHE, {"order": "A123"})], cache, final], paid,
         {"why": "ex6.never_crash"}),
        ("two_calls", [[*cache, (words.DATABASE, {"order_id": "A123"})], final], paid, {}),
        ("no_call_no_answer",
         [(TEXT, "Let me think about which tool to use."), cache, final], paid, {}),
        ("never_answers", [cache], None, {"max_steps": 3, "forever": True}),
        ("with_lessons", [cache, final], paid, {"lessons": [start]}),
    ]  # fmt: skip
    cases = [
        _scripted_case(label, a123, tools, script, answer, **more) for label, script, answer, more in scripted
    ]
    return [*cases, _offline_case(b456, core), _offline_case(a123, tools, lessons=(start,))]


ex6 = Exercise(
    name="ex6",
    function_name="react",
    solution_file="ex06_react_loop.py",
    solutions_dir=BUILD_SOLUTIONS,
    cases=_react_cases,
    hints=Hints("ex6"),
)
