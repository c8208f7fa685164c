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
from ralph_mini.model import ModelReply, ToolCall
from ralph_mini.offline import OfflineModel
from ralph_mini.react import Step, build_system_prompt, run_react
from ralph_mini.tools import compress_observation
from ralph_mini.world import Task
from ralph_mini.worlds import orders
from ralph_mini.worlds.orders import words

TEXT = "text"  # a script line with no tool call: ("text", content)
NEVER_CRASH = (
    "a bad call is the model's mistake, not your loop's: turn it into a step with status 'wrong_tool' or "
    "'error' and an observation starting 'error:', and go on"
)


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
            raise ScriptError(f"request {turn} {problem}")
        if turn > self.max_steps:
            raise ScriptError(
                f"the model was asked a turn too many: {turn} turns with max_steps={self.max_steps}; stop "
                "after max_steps model turns and return (None, steps)"
            )
        if turn > len(self.script) and not self.forever:
            raise ScriptError(
                "the model was asked again after it replied 'Final answer: {...}' with no tool call: "
                "return (answer, steps) as soon as a reply has no tool call and a final answer"
            )
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
            return "is not a list of {'role': ..., 'content': ...} messages"
        if tools != self.schemas:
            return "has the wrong tools: pass the tools' schemas, [t.schema() for t in tools]"
        if len(messages) < 2 or messages[0].get("role") != "system":
            return "does not start with the system prompt: build_system_prompt(task.system_prompt, lessons)"
        if messages[0].get("content") != self.system:
            missing = [lesson for lesson in self.lessons if lesson not in str(messages[0].get("content"))]
            if missing:
                return (
                    f"has a system prompt without the lesson {missing[0]!r}: build it with "
                    "build_system_prompt(task.system_prompt, lessons)"
                )
            return "has another system prompt: build it with build_system_prompt(task.system_prompt, lessons)"
        if messages[1] != {"role": "user", "content": self.task.question}:
            return "does not ask the task's question: the second message is {'role': 'user', ...}"
        replies = sum(1 for m in messages if m["role"] == "assistant")
        if replies < turn - 1:
            return (
                f"holds {replies} of the model's {turn - 1} earlier replies: append each reply to the "
                "messages (reply.to_message()) before its observations"
            )
        return answered_problem(messages)


def answered_problem(messages: list[dict]) -> str | None:
    """The OpenAI rule: every tool call of an assistant message is answered by a tool message with its
    id before the next assistant message; a tool message answers a call made just before it."""
    waiting: list[str] = []
    for message in messages:
        if message["role"] == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in waiting:
                return (
                    f"has a tool message with tool_call_id {call_id!r}, which answers no tool call of the "
                    "assistant message before it: use call.id, and append the reply before its observations"
                )
            waiting.remove(call_id)
            continue
        if waiting:
            sent = f" (you sent role {message['role']!r})" if message["role"] != "assistant" else ""
            return (
                f"leaves tool call {waiting[0]} unanswered{sent}: after each call append "
                f"{{'role': 'tool', 'tool_call_id': '{waiting[0]}', 'content': observation}}"
            )
        if message["role"] == "assistant":
            waiting = [call["id"] for call in message.get("tool_calls") or []]
    if waiting:
        return (
            f"leaves tool call {waiting[0]} unanswered: every call of a reply gets its observation, "
            f"{{'role': 'tool', 'tool_call_id': '{waiting[0]}', 'content': observation}}"
        )
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
        return (
            f"your steps are {short_repr(steps)}; return a list of Step records, one per tool call: "
            "Step(index, thought, tool, arguments, status, observation, call_id=call.id)"
        )
    if len(steps) != len(expected):
        return f"you returned {len(steps)} steps, expected {len(expected)}: one Step per tool call"
    indexes = [s.index for s in steps]
    if indexes != list(range(1, len(steps) + 1)):
        return f"your steps are numbered {indexes}; number them 1, 2, ... in the order the calls were made"
    for step, (tool, status, prefix) in zip(steps, expected, strict=True):
        where = f"step {step.index} ({tool})"
        if step.tool != tool:
            return f"{where} has tool {step.tool!r}: record the name the model called"
        if step.status != status:
            why = {
                "not_found": "the tool raised NotFound: 'no such order' is a normal outcome, 'not_found'",
                "wrong_tool": "no tool has that name: the model's mistake, status 'wrong_tool'",
                "error": "the call raised: status 'error'",
                "ok": "the tool answered: status 'ok'",
            }[status]
            return f"{where} has status {step.status!r}, expected {status!r}: {why}"
        if not str(step.observation).startswith(prefix):
            return f"{where} has the observation {step.observation!r}; it must start {prefix!r}"
        if status == "wrong_tool" and not all(name in step.observation for name in known):
            return f"{where}: the observation should list the known tools, so the model can correct itself"
        if step.call_id != f"call_{step.index}":
            return f"{where} has call_id {step.call_id!r}; keep the id of the call it answers (call.id)"
    return None


def _react_judge(
    model: Scripted | None, answer: dict | None, expected: list, tools: list, turns: int
) -> Judge:
    known = [t.name for t in tools]

    def judge(returned: Any) -> str | None:
        if not isinstance(returned, tuple) or len(returned) != 2:
            return f"you returned {short_repr(returned)}; return the pair (answer, steps)"
        got, steps = returned
        if isinstance(got, str):
            return (
                f"your answer is the text {got[:60]!r}; return the JSON object after 'Final answer:' "
                "as a dict (parse_final_answer)"
            )
        asked = len(model.requests) if model else turns
        if asked < turns and model.forever:
            return (
                f"you asked the model {asked} times with max_steps={model.max_steps}: a run gets max_steps "
                "model turns, then returns (None, steps)"
            )
        if asked < turns:
            return (
                f"you stopped after {asked} model turns, before the final answer: a reply with neither a "
                "tool call nor 'Final answer:' is not the end; tell the model and go on"
            )
        if got != answer:
            then = ": after max_steps turns with no final answer, return None" if answer is None else ""
            return f"your answer is {short_repr(got)}, expected {answer!r}{then}"
        return _steps_problem(steps, expected, known)

    return judge


def _scripted_case(label: str, task: Task, tools: list, script: list, answer, **kwargs) -> Case:
    forever, why = kwargs.pop("forever", False), kwargs.pop("why", "")
    lessons, max_steps = kwargs.get("lessons", ()), kwargs.get("max_steps", 8)
    model = Scripted(task, tools, script, lessons, max_steps, forever)
    expected = _expected_steps(task, tools, (script * max_steps if forever else script)[:max_steps])
    judge = _react_judge(model, answer, expected, tools, max_steps if forever else len(script))
    return Case(f"for {label}", args=(task, model, tools), kwargs=kwargs, judge=judge, why=why)


def _offline_case(task: Task, tools: list, lessons: tuple = ()) -> Case:
    """The offline model, and the kit's run_react as the reference."""
    model = OfflineModel(habits=orders.HABITS)
    trace = run_react(task, model, tools, lessons=lessons)
    expected = [(s.tool, s.status, s.observation) for s in trace.steps]
    shown = f"for the offline model on {task.task_id}" + (f" with lessons {list(lessons)}" if lessons else "")
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
    scripted = [  # (what the case is, the script, the answer it ends with, settings)
        ("one cache look-up, then a final answer", [cache, final], paid, {}),
        ("an order that does not exist", [[(words.DATABASE, {"order_id": "Z999"})], no_order], gone, {}),
        ("a tool name the model made up", [[("query_databse", {"order_id": "A123"})], cache, final], paid,
         {"why": NEVER_CRASH}),
        ("arguments the tool does not take", [[(words.CACHE, {"order": "A123"})], cache, final], paid,
         {"why": NEVER_CRASH}),
        ("two tool calls in one reply", [[*cache, (words.DATABASE, {"order_id": "A123"})], final], paid, {}),
        ("a reply with neither a tool call nor a final answer",
         [(TEXT, "Let me think about which tool to use."), cache, final], paid, {}),
        ("a model that never answers, max_steps=3", [cache], None, {"max_steps": 3, "forever": True}),
        ("lessons to follow", [cache, final], paid, {"lessons": [start]}),
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
    hints=(
        "Start the conversation with two messages: the system prompt "
        "(build_system_prompt(task.system_prompt, lessons)) and the user's question. Then, at most "
        "max_steps times: ask the model, append its reply (reply.to_message()), and either finish (no tool "
        "call) or run each tool call and append what it gave.",
        "No tool call: answer = parse_final_answer(reply.content or ''); a dict means you are done, "
        "return (answer, steps); None means the reply was no answer: tell the model with a user message "
        "and go on. Each tool call: look the tool up by call.name (it may not exist), run "
        "tool(**json.loads(call.arguments or '{}')) in a try, and catch NotFound before Exception.",
        "For each call: status and observation are ('ok', 'ok: ' + compress_observation(result)), "
        "('not_found', f'not_found: {err}'), ('error', f'error: {err}') or, for an unknown name, "
        "('wrong_tool', f\"error: unknown tool {call.name!r}; known tools are {', '.join(by_name)}\"). "
        "Then steps.append(Step(len(steps) + 1, reply.content, call.name, call.arguments, status, "
        "observation, call_id=call.id)) and messages.append({'role': 'tool', 'tool_call_id': call.id, "
        "'content': observation}). After the loop: return None, steps.",
    ),
)
