"""Tool calls for a model that has none: tools in the prompt, one JSON object back (notebook 08).

A 270M base model was never taught to call tools, and llama-cpp-python's ``gemma`` chat format drops
the system prompt, the ``tools`` list and every ``role: tool`` message. ``JsonToolsModel`` is the
classic workaround, written out so you can read it: describe the tools in the prompt, fold the
observations into the conversation as text, play in a worked example, ask for one JSON object per turn
(the server can *enforce* a JSON schema with ``response_format``), and turn that object back into a
``ToolCall``. ``run_react`` cannot tell the difference.

    actor = JsonToolsModel(OpenAIModel(..., extra_body={"response_format": response_format(tools, schema)}),
                           example)

A world gives the worked example (a conversation in OpenAI shape, e.g. ``worlds/orders/example.py``)
and its final answer's schema (``Words.answer_schema``); nothing here knows a world.

``SystemInUserModel`` does the same folding for plain text turns (the reflector), with no JSON.

Left out on purpose: several tool calls per turn, and any repair of a reply beyond finding the first
JSON object in it (what the model wrote is what gets measured).
"""

import json

from ralph_mini.model import ChatModel, ModelReply, ToolCall

TOOLS_PROMPT = """You can use these tools:
{tool_lines}

Reply with one JSON object and nothing else.
To call a tool: {{"tool": "<tool name>", "arguments": {{<the tool's arguments>}}}}
To give the final answer: {{"final_answer": {{<the answer's fields>}}}}"""

OBSERVATION = "Result of {tool}: {content}"
ARGUMENT_MAX_CHARS = 40  # a constrained string must end: a looping model otherwise fills max_tokens


def tool_lines(tools: list[dict]) -> str:
    """'- ticket_db(ticket_id: string): Every ticket...' one line per tool."""
    lines = []
    for schema in tools:
        function = schema["function"]
        params = ", ".join(
            f"{name}: {spec.get('type', 'any')}"
            for name, spec in function["parameters"].get("properties", {}).items()
        )
        lines.append(f"- {function['name']}({params}): {function['description']}")
    return "\n".join(lines)


def json_action_schema(tools: list[dict], answer_schema: dict | None = None) -> dict:
    """A JSON schema allowing exactly one known tool with its own arguments, or a final answer.

    Give it to the server as ``response_format={"type": "json_object", "schema": ...}`` and
    llama.cpp compiles it to a grammar: the model then *cannot* write an unknown tool name or a
    missing argument. It can still choose the wrong tool or copy the wrong id.
    """
    calls = [
        {"type": "object",
         "properties": {"tool": {"const": t["function"]["name"]},
                        "arguments": bounded_arguments(t["function"]["parameters"])},
         "required": ["tool", "arguments"], "additionalProperties": False}
        for t in tools
    ]  # fmt: skip
    answer = {"type": "object", "properties": {"final_answer": answer_schema or {"type": "object"}},
              "required": ["final_answer"], "additionalProperties": False}  # fmt: skip
    return {"anyOf": [*calls, answer]}


def bounded_arguments(parameters: dict) -> dict:
    """A tool's parameter schema with no extra keys and every string capped in length."""
    properties = {
        name: {"maxLength": ARGUMENT_MAX_CHARS, **spec} if spec.get("type") == "string" else spec
        for name, spec in parameters.get("properties", {}).items()
    }
    return {**parameters, "properties": properties, "additionalProperties": False}


def fold_messages(messages: list[dict], tools: list[dict], example: list[dict] = ()) -> list[dict]:
    """Rewrite an OpenAI tool conversation as plain user/assistant turns a chat template keeps.

    The system prompt and the tool list go in front of the first user message; ``example``, a
    worked conversation in the same OpenAI shape, is played in as earlier turns (few-shot); each
    tool call is written as the JSON the model is asked for; each observation becomes user text.
    Consecutive turns of one role are merged: Gemma's template alternates user and model.
    """
    system = "\n\n".join(m["content"] for m in messages if m["role"] == "system" and m["content"])
    preamble = "\n\n".join(p for p in (system, TOOLS_PROMPT.format(tool_lines=tool_lines(tools))) if p)
    names, turns = {}, []
    for message in [*example, *(m for m in messages if m["role"] != "system")]:
        role, content = message["role"], message.get("content") or ""
        if role == "assistant" and message.get("tool_calls"):
            for call in message["tool_calls"]:
                names[call["id"]] = call["function"]["name"]
            content = "\n".join(action_json(call) for call in message["tool_calls"])
        if role == "tool":
            role = "user"
            content = OBSERVATION.format(tool=names.get(message.get("tool_call_id"), "tool"), content=content)
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"] += "\n" + content
        else:
            turns.append({"role": role, "content": content})
    if turns and turns[0]["role"] == "user":
        turns[0]["content"] = preamble + "\n\n" + turns[0]["content"]
    else:
        turns.insert(0, {"role": "user", "content": preamble})
    return turns


def action_json(call: dict) -> str:
    """A past tool call, written back the way the model was asked to write it."""
    try:
        arguments = json.loads(call["function"]["arguments"] or "{}")
    except json.JSONDecodeError:
        arguments = call["function"]["arguments"]
    return json.dumps({"tool": call["function"]["name"], "arguments": arguments})


def parse_json_action(text: str, call_id: str) -> tuple[str | None, ToolCall | None]:
    """(content, tool call) from the first action object in the text; other text passes through.

    '{"tool": "lookup", "arguments": {"id": "A1"}}' -> (None, ToolCall(call_id, 'lookup', '{"id": "A1"}'))
    'x {"final_answer": {"state": "done"}}' -> ('Final answer: {"state": "done"}', None)
    """
    action = next((o for o in json_objects(text) if "tool" in o or "final_answer" in o), None)
    if action is None:
        return text, None  # run_react decides: an answer line in plain text, or a bad reply
    thought = action.get("thought")  # optional: the protocol does not ask for one
    if "tool" in action:
        arguments = action.get("arguments", {})
        return thought, ToolCall(call_id, str(action["tool"]), json.dumps(arguments))
    answer = f"Final answer: {json.dumps(action['final_answer'])}"
    return f"{thought}\n{answer}" if thought else answer, None


def json_objects(text: str) -> list[dict]:
    """Every JSON object that starts somewhere in the text, in order (nested ones too)."""
    decoder, found = json.JSONDecoder(), []
    for start, char in enumerate(text):
        if char == "{":
            try:
                value, _ = decoder.raw_decode(text, start)
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict):
                found.append(value)
    return found


class JsonToolsModel:
    """Tool calling through the prompt, for models without it: wraps any ChatModel.

    The inner model sees ``fold_messages(...)`` and no ``tools``; its JSON reply becomes a real
    ``ToolCall``, so ``run_react`` cannot tell the difference. Constraining the reply to
    ``json_action_schema`` is the inner model's job (e.g. ``OpenAIModel`` with a
    ``response_format``); without it the model may write anything, and that is measured too.
    """

    def __init__(self, inner: ChatModel, example: list[dict] = (), *, pass_tools: bool = False):
        self.inner = inner
        self.example = list(example)  # a worked conversation: small models copy patterns
        # pass_tools: the inner model also gets this turn's tools, to hold its reply to them (an
        # ``OpenAIModel(tools_in_body=...)`` turns them into the schema): a guard that offers one tool
        # on the first turn (guards.py) then binds at the server, not only in the prompt
        self.pass_tools = pass_tools

    def __repr__(self) -> str:
        return f"JsonToolsModel({self.inner!r})"

    def complete(self, messages: list[dict], tools: list[dict]) -> ModelReply:
        folded = fold_messages(messages, tools, self.example)
        reply = self.inner.complete(folded, tools if self.pass_tools else [])
        calls_so_far = sum(len(m.get("tool_calls") or []) for m in messages)
        content, call = parse_json_action(reply.content or "", call_id=f"call_{calls_so_far + 1}")
        return ModelReply(content=content, tool_calls=(call,) if call else (), usage=reply.usage,
                          latency_s=reply.latency_s)  # fmt: skip


class SystemInUserModel:
    """For a chat template with no system role: the system prompt goes in front of the first user turn.

    The reflector's template is a system prompt; Gemma's chat format would silently drop it, and the
    model would see only the log. Replies pass through unchanged.
    """

    def __init__(self, inner: ChatModel):
        self.inner = inner

    def __repr__(self) -> str:
        return f"SystemInUserModel({self.inner!r})"

    def complete(self, messages: list[dict], tools: list[dict]) -> ModelReply:
        return self.inner.complete(fold_system(messages), tools)


def fold_system(messages: list[dict]) -> list[dict]:
    """[system S, user U, ...] -> [user "S\n\nU", ...]; other turns unchanged."""
    system = "\n\n".join(m["content"] for m in messages if m["role"] == "system" and m["content"])
    rest = [dict(m) for m in messages if m["role"] != "system"]
    if not system:
        return rest
    if rest and rest[0]["role"] == "user":
        rest[0]["content"] = system + "\n\n" + (rest[0].get("content") or "")
        return rest
    return [{"role": "user", "content": system}, *rest]


def response_format(tools: list[dict], answer_schema: dict | None = None) -> dict:
    """The request field that makes llama.cpp enforce ``json_action_schema`` (``answer_schema``: the
    world's final answer, ``Words.answer_schema``).

    This is llama-cpp-python's form; OpenAI and vLLM call it ``{"type": "json_schema", ...}``.
    """
    return {"type": "json_object", "schema": json_action_schema(tools, answer_schema)}
