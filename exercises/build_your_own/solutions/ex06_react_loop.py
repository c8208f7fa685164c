"""Reference solution for exercises/build_your_own/ex06_react_loop.ipynb (instructor only)."""

import json
from collections.abc import Sequence

from ralph_mini.hardening import parse_final_answer
from ralph_mini.model import ChatModel
from ralph_mini.react import Step, build_system_prompt
from ralph_mini.tools import NotFound, Tool, compress_observation
from ralph_mini.world import Task


def react(
    task: Task, model: ChatModel, tools: list[Tool], lessons: Sequence[str] = (), max_steps: int = 8
) -> tuple[dict | None, list[Step]]:
    """Think, act, observe until 'Final answer: {...}' or max_steps model turns; returns (answer, steps)."""
    messages = [
        {"role": "system", "content": build_system_prompt(task.system_prompt, lessons)},
        {"role": "user", "content": task.question},
    ]
    schemas = [tool.schema() for tool in tools]
    by_name = {tool.name: tool for tool in tools}
    steps: list[Step] = []
    for _ in range(max_steps):  # model turns, not tool calls: a reply may ask for several
        reply = model.complete(messages, schemas)
        messages.append(reply.to_message())
        thought = reply.content or ""
        if not reply.tool_calls:
            answer = parse_final_answer(thought)
            if answer is not None:
                return answer, steps
            messages.append({"role": "user", "content": "error: call a tool or end with Final answer: {...}"})
            continue
        for call in reply.tool_calls:
            tool = by_name.get(call.name)
            if tool is None:  # the model's mistake: say so, and name what exists
                status = "wrong_tool"
                observation = f"error: unknown tool {call.name!r}; known tools are {', '.join(by_name)}"
            else:
                try:
                    result = tool(**json.loads(call.arguments or "{}"))
                    status, observation = "ok", "ok: " + compress_observation(result)
                except NotFound as err:  # "no such order" is an answer, not a failure
                    status, observation = "not_found", f"not_found: {err}"
                except Exception as err:  # bad JSON, wrong arguments, a failing tool
                    status, observation = "error", f"error: {err}"
            steps.append(
                Step(len(steps) + 1, thought, call.name, call.arguments, status, observation, call_id=call.id)
            )
            messages.append({"role": "tool", "tool_call_id": call.id, "content": observation})
    return None, steps
