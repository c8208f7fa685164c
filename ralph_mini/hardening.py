"""Hardening: what keeps the ReAct loop alive when the model or a tool misbehaves (notebook 07).

``react.py`` is the loop a reader of notebook 01 needs: think, act, observe. Everything that makes that
loop survive real models lives here, so it can be read on its own in notebook 07:

- ``run_call``: one tool call whose every failure (an unknown tool, arguments that are not a JSON
  object or are nested 1,000 deep, wrong argument types, a tool that raises, hangs, or returns a
  non-dict) becomes a *status* and an observation the model can act on, never an exception;
- ``parse_final_answer``: the JSON object after "Final answer:", read from a bounded slice;
- caps on everything written back to the model (``MAX_OBSERVATION_CHARS`` …), since it re-reads the
  whole conversation on every later turn;
- ``safe_repr`` / ``describe``: printing a value or an error that itself raises.

Statuses: ``ok`` and ``not_found`` are normal outcomes; ``WRONG_STATUSES`` are wrong calls, which count
toward the max pitfall depth, a call repeated after it answered (``repeated``, a loop) among them.

Left out on purpose: retrying a failed tool (the model decides that) and sandboxing a tool's code.
"""

import json
from collections.abc import Collection

from ralph_mini.model import ModelReply, ToolCall
from ralph_mini.tools import (
    BadArguments,
    NotFound,
    Tool,
    ToolTimeout,
    call_with_timeout,
    compress_observation,
)

OK, NOT_FOUND = "ok", "not_found"
REPEATED = "repeated"  # the same call again after it answered: a loop (react.repeats)
REFUSED = "refused"  # a call or an answer a lesson's guard refused: not run, not wrong (guards.py)
WRONG_STATUSES = ("error", "bad_args", "wrong_tool", "bad_reply", REPEATED)

# Caps on what the loop writes back to the model, which it then re-reads on every later turn.
MAX_OBSERVATION_CHARS = 2_000  # one observation (a tool output, an error quoting the model's arguments)
MAX_NAME_CHARS = 100  # a tool name the model made up (OpenAI's own limit is 64)
MAX_REPLY_CHARS = 4_000  # the model's own text and arguments, as kept in the conversation
ANSWER_SCAN_CHARS = 10_000  # a final answer is a few hundred characters; reading more only costs time
MAX_JSON_DEPTH = 100  # tool arguments are a flat object; anything deeper is refused before parsing

TOO_DEEP = "arguments are nested too deeply to read; send a flat object"


def run_call(
    call: ToolCall, tools: dict[str, Tool], relevant_tools: Collection[str], timeout_s: float | None
) -> tuple[str, str, float]:
    """(status, observation, virtual latency) of one tool call; never raises.

    A tool outside ``relevant_tools`` (when that is not empty) that ran fine is a ``wrong_tool``: it
    answered, but not the question asked.
    """
    tool = tools.get(call.name) if isinstance(call.name, str) else None
    if tool is None:
        known = ", ".join(tools) or "none"
        observation = f"error: unknown tool {clip(repr(call.name), MAX_NAME_CHARS)}; known tools are {known}"
        return "wrong_tool", clip(observation, MAX_OBSERVATION_CHARS), 0.0
    outcome, detail, latency_s = _run_tool(tool, call.arguments, timeout_s)
    relevant = not relevant_tools or call.name in relevant_tools
    status = outcome if relevant or outcome == "bad_args" else "wrong_tool"
    return status, clip(f"{outcome}: {detail}", MAX_OBSERVATION_CHARS), latency_s


def _run_tool(tool: Tool, arguments: object, timeout_s: float | None) -> tuple[str, str, float]:
    """(outcome, detail, virtual latency) of one call. Arguments are checked first, in this thread, so
    a wrong argument is the model's ``bad_args`` and only what the tool itself raises is an ``error``.

    A normal call costs the tool's declared ``latency_s``; a timed-out one costs the time waited.
    """
    try:
        kwargs = tool.validate(as_kwargs(arguments))
    except BadArguments as err:
        return "bad_args", message(err), tool.latency_s
    except RecursionError:  # repr() of a value nested ~1000 deep, inside an error message
        return "bad_args", TOO_DEEP, tool.latency_s
    try:
        result = call_with_timeout(lambda: tool.function(**kwargs), timeout_s)
    except ToolTimeout as err:  # err.seconds: our wait, or that of a timeout inside the tool
        return "error", f"{tool.name} timed out after {err.seconds:g} s; it may still be running", err.seconds
    except BadArguments as err:
        return "bad_args", message(err), tool.latency_s
    except NotFound as err:
        return NOT_FOUND, message(err), tool.latency_s
    except Exception as err:  # a tool bug must not kill the run: show it to the model
        return "error", f"{tool.name} failed: {describe(err)}", tool.latency_s
    if not isinstance(result, dict):
        what = f"{type(result).__name__} {clip(safe_repr(result), 60)}"
        return "error", f"{tool.name} returned {what}, not a dict of fields: fix the tool", tool.latency_s
    try:
        return OK, compress_observation(result), tool.latency_s
    except Exception as err:  # a field whose str() raises
        return "error", f"{tool.name} returned fields that cannot be shown: {describe(err)}", tool.latency_s


def json_depth(text: str) -> int:
    """How deeply brackets nest in JSON text, ignoring brackets inside strings.

    '{"a": [1, {"b": "[[["}]}' -> 3. Counted before parsing, so the answer does not depend on how
    deep a given Python's JSON parser can go (3.11 raises RecursionError, 3.13 another error).
    """
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if escaped:
            escaped = False
        elif in_string:
            escaped, in_string = char == "\\", char != '"'
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def as_kwargs(arguments: object) -> dict:
    """The model's argument text as a dict, or BadArguments saying what to send instead.

    '{"id": "A123"}' -> {'id': 'A123'}; '' or None -> {} (a call without arguments).
    """
    if arguments is None:
        return {}
    if not isinstance(arguments, str):
        raise BadArguments(f"arguments must be JSON text, got {type(arguments).__name__}")
    brackets = arguments.count("[") + arguments.count("{")  # cheap: most arguments have one or two
    if brackets > MAX_JSON_DEPTH and json_depth(arguments) > MAX_JSON_DEPTH:
        raise BadArguments(TOO_DEEP)
    try:
        parsed = json.loads(arguments or "{}")
    except json.JSONDecodeError as err:
        raise BadArguments(
            f"arguments are not valid JSON ({err.msg}: character {err.pos}); send an object"
        ) from None
    except ValueError as err:  # Python's guard against integers over 4,300 digits
        raise BadArguments(f"arguments hold a number that cannot be read ({clip(str(err), 60)})") from None
    except RecursionError:
        raise BadArguments(TOO_DEEP) from None
    if not isinstance(parsed, dict):
        kind = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
            type(parsed), "a number"
        )
        raise BadArguments(f"arguments must be a JSON object, got {kind}: {clip(arguments, 60)}")
    return parsed


def canonical_arguments(arguments: object) -> str:
    """A call's arguments by their meaning, for loop detection: spacing, key order and number spelling
    do not count. '{"b": 1.0, "a":"x"}' -> '{"a": "x", "b": 1.0}', as '{"a": "x", "b": 1}' does.
    Arguments that do not parse are compared as written."""
    try:
        return json.dumps(_normal(as_kwargs(arguments)), sort_keys=True)
    except (BadArguments, ValueError, RecursionError):
        return str(arguments)


def _normal(value: object) -> object:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value) if abs(value) < 1e300 else str(value)
    if isinstance(value, dict):
        return {str(k): _normal(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_normal(v) for v in value]
    return value


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


def bad_reply_observation(content: object) -> str:
    """Say what was wrong with a reply that had neither a tool call nor an answer, so the model can fix
    that one thing."""
    if not isinstance(content, str) or not content.strip():
        return "error: your reply was empty; call a tool or give the final answer"
    if "Final answer:" in content:
        return (
            "error: the text after 'Final answer:' is not a JSON object; end with one line "
            'Final answer: {"field": "value", ...}'
        )
    return (
        "error: your reply had neither a tool call nor a line "
        "Final answer: {...}; call a tool or give the final answer"
    )


def transcript_message(reply: ModelReply) -> dict:
    """The assistant turn as kept in the conversation, its text and arguments capped at
    ``MAX_REPLY_CHARS``: one rambling reply must not be re-sent in full on every later call."""
    message = reply.to_message()
    if message["content"]:
        message["content"] = clip(message["content"], MAX_REPLY_CHARS)
    for call in message.get("tool_calls", []):
        arguments = call["function"]["arguments"]
        if isinstance(arguments, str):
            call["function"]["arguments"] = clip(arguments, MAX_REPLY_CHARS)
    return message


def clip(text: str, limit: int) -> str:
    """``text`` if it fits in ``limit`` characters, else its head and a note of how much was cut.

    'x' * 5000, limit 2000 -> 'xxx…x… (truncated from 5000 chars)', exactly 2000 characters long.
    """
    if len(text) <= limit:
        return text
    note = f"… (truncated from {len(text)} chars)"
    return text[: max(limit - len(note), 0)] + note


def message(err: Exception) -> str:
    """``str(err)``, even for an exception whose ``__str__`` itself raises."""
    try:
        return str(err)
    except Exception:
        return f"<{type(err).__name__} with an unprintable message>"


def describe(err: Exception) -> str:
    """'TimeoutError: cache did not answer in 2 s'; just 'KeyError' when there is no message."""
    text = message(err)
    return f"{type(err).__name__}: {text}" if text else type(err).__name__


def safe_repr(value: object) -> str:
    """``repr(value)`` that cannot raise (a deep list, or a broken ``__repr__``)."""
    try:
        return repr(value)
    except Exception:
        return f"<{type(value).__name__}>"
