"""Fuzzing the agent loop: no model reply, however odd, crashes it or escapes its bounds.

hypothesis writes the replies a weak or broken model might send: malformed, huge (up to 100 KB) or
deeply nested JSON arguments, NaN and Infinity, integers too long for Python to read, unknown tool
names (empty, unicode, 100 KB long, None), missing, extra and wrongly typed arguments, empty replies,
text plus tool calls, dozens of calls in one reply, several or nested "Final answer:" objects, and
answers that are not objects. Each run is then checked against a reference: every call's status is
the one its shape calls for, wrong calls add up turn by turn until ``max_pitfall_depth`` stops the run,
``max_steps`` bounds it, and nothing the loop writes back to the model exceeds its cap.

Every fuzz test counts the inputs it fed and asserts a floor, so the suite's coverage is a number.
``derandomize=True`` replays the same examples on every run of this file (hypothesis's mix shifts a
little when other tests run first, so the floors keep a margin). The named cases at the end pin each
odd shape to the exact observation the model gets.
"""

import dataclasses
import json

import pytest
from fakes import ScriptedModel
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ralph_mini.hardening import MAX_NAME_CHARS, MAX_OBSERVATION_CHARS, parse_final_answer
from ralph_mini.model import ModelReply, ToolCall, Usage
from ralph_mini.react import WRONG_STATUSES, execute_call, run_react
from ralph_mini.tools import BadArguments, tool
from ralph_mini.worlds.orders import make_suite
from ralph_mini.worlds.orders.words import LOOKUP_TOOLS

STATUSES = ("ok", "not_found", *WRONG_STATUSES)


def fuzz_settings(max_examples: int) -> settings:
    """Explicit example counts; no deadline (a 100 KB reply takes a few ms); the same examples each run."""
    return settings(
        max_examples=max_examples,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


# --- the world: the order tools plus three that misbehave on purpose -------------------------------


@tool(latency_s=0.1)
def big_output(order_id: str) -> dict:
    """Returns far more than a model should read.

    Args:
        order_id: Any text.
    """
    return {f"field{i}": order_id * 50 + "x" * 500 for i in range(40)}


@tool(latency_s=0.1)
def broken(order_id: str) -> dict:
    """Always fails, with a message quoting its input.

    Args:
        order_id: Any text.
    """
    raise RuntimeError(f"backend down while reading {order_id}")


@tool(latency_s=0.1)
def wrong_shape(order_id: str) -> dict:
    """Returns a list, not a dict.

    Args:
        order_id: Any text.
    """
    return [order_id] * 1000


SUITE = make_suite(n=4, seed=7)
MISBEHAVING = (big_output, broken, wrong_shape)
TOOLS = SUITE.world.tools() + list(MISBEHAVING)
BY_NAME = {t.name: t for t in TOOLS}
TASK = dataclasses.replace(SUITE.tasks[0], relevant_tools=LOOKUP_TOOLS + tuple(t.name for t in MISBEHAVING))
# What a well-formed call to each relevant tool may return; an irrelevant tool is always wrong_tool.
OUTCOMES = {name: {"ok", "not_found"} for name in LOOKUP_TOOLS} | {
    "big_output": {"ok"},
    "broken": {"error"},
    "wrong_shape": {"error"},
}
FITS = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: type(v) is int,
    "number": lambda v: type(v) in (int, float),
    "boolean": lambda v: type(v) is bool,
}


def arguments_fit(tool_schema: dict, arguments: object) -> bool:
    """Reference check, written apart from the loop's: do these argument texts fit this tool?"""
    if arguments is None:
        value: object = {}
    elif not isinstance(arguments, str):
        return False
    else:
        try:
            value = json.loads(arguments or "{}")
        except (ValueError, RecursionError):
            return False
    if not isinstance(value, dict):
        return False
    properties, required = tool_schema["properties"], set(tool_schema["required"])
    if not required <= set(value) <= set(properties):
        return False
    return all(FITS[properties[key]["type"]](item) for key, item in value.items())


def expected_statuses(call: ToolCall) -> set[str]:
    """The statuses a call of this shape may get."""
    found = BY_NAME.get(call.name) if isinstance(call.name, str) else None
    if found is None:
        return {"wrong_tool"}
    if not arguments_fit(found.parameters, call.arguments):
        return {"bad_args"}
    return OUTCOMES.get(call.name, {"wrong_tool"})


# --- strategies: what an odd model sends ------------------------------------------------------------


def repeated(chars: str, low: int, high: int) -> st.SearchStrategy[str]:
    """A long string cheaply: one of ``chars`` repeated ``low``..``high`` times (hypothesis shrinks n)."""
    return st.builds(lambda ch, n: ch * n, st.sampled_from(list(chars)), st.integers(low, high))


HUGE = repeated('xé{}"\\[ 0', 1_000, 100_000)  # up to 100 KB, including JSON's own syntax characters
KEYS = ["order_id", "id", "expression", "query", "to", "subject", "body", "customer_id", "", "self"]
json_scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
order_ids = st.sampled_from(["A123", "B456", "C789", "Z999", "", "a123", " A123"]) | st.text(max_size=12)


def nested(depth: int, kind: str, closed: bool) -> str:
    """'[[[...]]]' or '{"a":{"a":...1}}' ``depth`` levels deep, optionally never closed."""
    opening, closing = ("[" * depth, "]" * depth) if kind == "array" else ('{"a":' * depth, "}" * depth)
    middle = "1" if kind == "object" else ""
    return opening + middle + (closing if closed else "")


deep_json = st.builds(
    nested, st.integers(200, 5_000) | st.integers(1, 50), st.sampled_from(["array", "object"]), st.booleans()
)
ODD_ARGUMENTS = ["", "{}", "null", "   ", '{"order_id": NaN}', '{"order_id": Infinity}', "-Infinity",
                 '{"order_id": "A123", "order_id": 5}', "[NaN]", '{"order_id": "A123"} trailing']  # fmt: skip
any_keys = st.dictionaries(st.sampled_from(KEYS), json_values | order_ids, max_size=4)  # missing, extra
argument_texts = st.one_of(
    st.builds(lambda oid: json.dumps({"order_id": oid}), order_ids),  # well-formed
    st.builds(lambda oid: json.dumps({"order_id": oid}), HUGE),  # well-formed, 100 KB id
    st.builds(lambda v: json.dumps({"order_id": v}), json_values),  # right key, any type
    any_keys.map(json.dumps),
    json_values.map(json.dumps),  # any JSON, mostly not an object
    st.text(max_size=60),  # not JSON at all
    st.builds(lambda oid, cut: json.dumps({"order_id": oid})[:cut], order_ids, st.integers(0, 30)),  # cut off
    st.sampled_from(ODD_ARGUMENTS),
    deep_json,
    st.builds(lambda n: '{"order_id": ' + "7" * n + "}", st.integers(4_301, 20_000)),  # too many digits
    st.builds(lambda s: '{"order_id": "' + s, HUGE),  # 100 KB, never closed
    st.none(),
)
ODD_NAMES = ["query_db", "Query_Database", "query_database ", "", "查询订单", "query_local_cache\x00"]
tool_names = st.one_of(
    st.sampled_from(sorted(BY_NAME)),
    st.sampled_from(list(LOOKUP_TOOLS) + [t.name for t in MISBEHAVING]),  # weight the relevant ones
    st.sampled_from(ODD_NAMES),
    st.text(max_size=30),
    HUGE,
    st.none(),
)
tool_calls = st.builds(ToolCall, id=st.text(max_size=8), name=tool_names, arguments=argument_texts)


def final(prefix: str, value: object) -> str:
    return f"{prefix}Final answer: {json.dumps(value)}"


contents = st.one_of(
    st.none(),
    st.sampled_from(["", "   ", "\n", "Final answer:", "Final answer: paid", "Final answer: {", "{}", "[]"]),
    st.text(max_size=120),
    st.builds(final, st.text(max_size=40), json_values),  # answers of any JSON type, NaN included
    st.builds(lambda a, b: final("", a) + "\n" + final("", b), json_values, json_values),  # two answers
    st.builds(lambda v: final("", {"answer": {"nested": v}}), json_values),  # nested objects
    st.builds(lambda v, deep: final("", v) + " " + deep, json_values, deep_json),
    st.builds(lambda deep: "Final answer: " + deep, deep_json),
    st.builds(lambda n: 'Final answer: {"amount": ' + "9" * n + "}", st.integers(4_301, 20_000)),
    st.builds(lambda huge, v: huge + final("\n", v), HUGE, json_values),  # 100 KB of thought, then an answer
    st.builds(lambda huge, v: final("", v) + huge, HUGE, json_values),  # an answer, then 100 KB
    HUGE,
)
usages = st.builds(Usage, st.integers(0, 50_000), st.integers(0, 5_000))
latencies = st.floats(0, 30, allow_nan=False)
calling_replies = st.builds(
    ModelReply, contents, st.lists(tool_calls, min_size=1, max_size=3).map(tuple), usages, latencies
)
text_replies = st.builds(ModelReply, contents, st.just(()), usages, latencies)
quick_calls = st.builds(  # cheap to draw, so a reply can hold dozens
    ToolCall,
    id=st.sampled_from(["c1", "c2", ""]),
    name=st.sampled_from(sorted(BY_NAME) + ["query_db", ""]),
    arguments=st.sampled_from(['{"order_id": "A123"}', '{"order_id": 1}', "{", "", '{"id": "A123"}']),
)
crowded_replies = st.builds(  # dozens of calls in one reply
    ModelReply, st.none(), st.lists(quick_calls, min_size=10, max_size=40).map(tuple), usages, latencies
)
good_replies = st.builds(  # a normal lookup now and then, so runs last long enough to hit max_steps
    ModelReply,
    st.none() | st.text(max_size=40),
    st.builds(
        lambda name, oid: (ToolCall("ok1", name, json.dumps({"order_id": oid})),),
        st.sampled_from(LOOKUP_TOOLS),
        st.sampled_from(["A123", "B456", "C789", "Z999"]),
    ),
)
replies = st.one_of(
    calling_replies, text_replies, calling_replies, text_replies, crowded_replies, good_replies
)


class DrawingModel:
    """A fake model whose every reply is drawn by hypothesis when the loop asks for it.

    Drawing on demand, rather than scripting ``max_steps`` replies up front, spends the generation
    time only on replies the loop actually reads (most runs stop early at ``max_pitfall_depth``).
    """

    def __init__(self, data: st.DataObject):
        self.data = data
        self.given: list[ModelReply] = []

    def complete(self, messages: list[dict], tools: list[dict]) -> ModelReply:
        self.given.append(self.data.draw(replies))
        return self.given[-1]


# --- checks ----------------------------------------------------------------------------------------


def check_step_bounds(step) -> None:
    assert step.status in STATUSES
    assert len(step.observation) <= MAX_OBSERVATION_CHARS
    assert len(step.tool) <= MAX_NAME_CHARS and len(step.arguments) <= MAX_OBSERVATION_CHARS


def meaning(arguments: str) -> str:
    """The reference for loop detection: a call's arguments by their meaning (a JSON object, keys sorted,
    every number a float: 1, 1.0 and 1e0 are one number), or the text as written if it is no object."""
    try:
        value = json.loads(arguments or "{}", parse_int=lambda digits: float(int(digits)))
    except (ValueError, RecursionError, OverflowError):
        return arguments
    return json.dumps(value, sort_keys=True) if isinstance(value, dict) else arguments


def check_run(model: DrawingModel, max_steps: int, depth: int) -> None:
    """One run, checked turn by turn and call by call against the reference semantics.

    Calls of one reply run one at a time; once the wrong calls exceed ``depth`` the run stops, even
    partway through a reply; and a loop stops it as soon as the wrong calls reach ``depth``: a call
    repeated forever ends at ``depth`` + 1 calls.
    """
    trace = run_react(TASK, model, TOOLS, max_steps=max_steps, max_pitfall_depth=depth, tool_timeout_s=5.0)
    calls = len(model.given)
    assert trace.model_calls == calls <= max_steps
    steps, wrong, stopped = iter(trace.steps), 0, False
    for turn, reply in enumerate(model.given, 1):
        answer = None if reply.tool_calls else parse_final_answer(reply.content or "")
        if answer is not None:  # an answer ends the run on this turn
            assert turn == calls and trace.stop_reason == "answered"
            assert isinstance(trace.answer, dict) and trace.final_text == reply.content
            break
        for call in reply.tool_calls or [None]:
            step = next(steps)
            check_step_bounds(step)
            if call is None:
                assert step.status == "bad_reply" and step.tool == "(none)"
            else:
                earlier = trace.steps[: step.index - 1]
                loop = any(
                    s.tool == call.name and meaning(s.arguments) == meaning(step.arguments) and not s.wrong
                    for s in earlier
                )
                expected = {"repeated"} if loop else expected_statuses(call)  # the same call after an answer
                assert step.status in expected, (call.name, call.arguments[:200], step)
                assert step.call_id == call.id
            wrong += step.wrong
            if wrong > depth or (step.status == "repeated" and wrong >= depth):
                stopped = True
                break
        if stopped:
            assert turn == calls, "the run should have stopped at max_pitfall_depth already"
            break
    assert next(steps, None) is None  # every step belongs to a reply
    assert [s.index for s in trace.steps] == list(range(1, len(trace.steps) + 1))
    if trace.stop_reason != "answered":
        assert trace.answer is None and trace.wrong_calls == wrong
        if stopped:
            assert trace.stop_reason == f"max_pitfall_depth: {wrong} wrong calls"
        else:
            assert calls == max_steps
            assert trace.stop_reason == f"max_steps: no final answer after {max_steps} model turns"
    for message in trace.messages[2:]:  # what the loop itself wrote back to the model
        if message["role"] in ("tool", "user"):
            assert len(message["content"]) <= MAX_OBSERVATION_CHARS


# --- the tests ------------------------------------------------------------------------------------


def is_normal(reply: ModelReply) -> bool:
    """A reply a good model would send: tool calls only, each well formed and to a relevant tool."""
    return bool(reply.tool_calls) and all(
        expected_statuses(c) <= {"ok", "not_found"} for c in reply.tool_calls
    )


def test_the_loop_survives_any_run_of_odd_replies():
    fed: list[ModelReply] = []

    @fuzz_settings(max_examples=600)
    @given(st.data(), st.integers(1, 10), st.integers(0, 16))
    def one_run(data, max_steps, depth):
        model = DrawingModel(data)
        check_run(model, max_steps, depth)
        fed.extend(model.given)

    one_run()
    odd = sum(not is_normal(reply) for reply in fed)
    # ~1,500 on a quiet run; hypothesis's example mix shifts a little with machine load, hence the margin.
    assert len(fed) >= 1_000 and odd >= 700, f"only {len(fed)} replies ({odd} odd) reached the loop"
    print(f"\nloop fuzz: {len(fed)} replies in 600 runs, {odd} of them odd")


def test_execute_call_turns_any_single_call_into_a_bounded_step():
    seen: list[int] = []

    @fuzz_settings(max_examples=400)
    @given(tool_calls, contents)
    def one_call(call, thought):
        reply = ModelReply(thought, (call,), Usage(10, 5), 0.5)
        step = execute_call(call, BY_NAME, TASK, 1, reply, tool_timeout_s=5.0)
        check_step_bounds(step)
        assert step.status in expected_statuses(call)
        assert step.observation.split(":", 1)[0] in ("ok", "not_found", "error", "bad_args")
        assert (step.thought, step.tokens_in, step.model_latency_s) == (thought, 10, 0.5)
        seen.append(1)

    one_call()
    assert len(seen) >= 350
    print(f"\nexecute_call fuzz: {len(seen)} single-call replies")


def test_parse_final_answer_never_raises_and_returns_a_dict_or_none():
    seen: list[int] = []

    @fuzz_settings(max_examples=300)
    @given(contents | st.text(max_size=300))
    def one_text(text):
        result = parse_final_answer(text)
        assert result is None or isinstance(result, dict)
        seen.append(1)

    one_text()
    assert parse_final_answer(None) is None  # not even a string
    assert len(seen) >= 250
    print(f"\nparse_final_answer fuzz: {len(seen)} texts")


finite_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=10,
)
answers = st.dictionaries(st.text(max_size=10), finite_values, max_size=5)


@fuzz_settings(max_examples=200)
@given(st.text(max_size=80).filter(lambda t: "Final answer:" not in t), answers, finite_values)
def test_parse_final_answer_returns_exactly_the_object_after_the_marker(thought, answer, trailing):
    # Reference: the object json.dumps wrote, whatever thought came before and whatever JSON after.
    text = f"{thought}\nFinal answer: {json.dumps(answer)} {json.dumps(trailing)}"
    assert parse_final_answer(text) == answer


@tool
def typed(name: str, count: int, ratio: float, flag: bool = False) -> dict:
    """A tool with one parameter of every supported type.

    Args:
        name: text
        count: an integer
        ratio: a number
        flag: a boolean
    """
    return {}


@fuzz_settings(max_examples=200)
@given(
    json_values
    | st.fixed_dictionaries({"name": json_values, "count": json_values, "ratio": json_values})
    | st.dictionaries(st.sampled_from(["name", "count", "ratio", "flag", "extra"]), json_values)
)
def test_tool_validate_accepts_exactly_the_fitting_arguments(value):
    fits = isinstance(value, dict) and arguments_fit(typed.parameters, json.dumps(value))
    try:
        checked = typed.validate(value)
    except BadArguments as err:
        assert not fits, f"rejected fitting arguments {value!r}: {err}"
        assert str(err)  # says what to change
    else:
        assert fits and checked is value


# --- named shapes: each odd reply and the observation it gets (the fuzzer's findings, pinned) -------

FINAL = ModelReply('Final answer: {"status": "paid"}')


def one_call(name: object, arguments: object) -> ModelReply:
    return ModelReply(None, (ToolCall("c1", name, arguments),))


@pytest.mark.parametrize(
    ("reply", "status", "observation"),
    [
        (ModelReply(None), "bad_reply", "error: your reply was empty; call a tool or give the final answer"),
        (ModelReply(" \n"), "bad_reply", "error: your reply was empty"),
        (ModelReply("Let me think."), "bad_reply", "error: your reply had neither a tool call nor a line"),
        (
            ModelReply("Final answer: paid"),
            "bad_reply",
            "error: the text after 'Final answer:' is not a JSON",
        ),
        (
            ModelReply("Final answer: [1, 2]"),
            "bad_reply",
            "error: the text after 'Final answer:' is not a JSON",
        ),
        (ModelReply('Final answer: {"status": "pa'), "bad_reply", "error: the text after 'Final answer:'"),
        (ModelReply("Final answer: " + "[" * 5000), "bad_reply", "error: the text after 'Final answer:'"),
        (ModelReply('Final answer: {"n": ' + "9" * 5000 + "}"), "bad_reply", "error: the text after"),
        (one_call("", "{}"), "wrong_tool", "error: unknown tool ''; known tools are query_local_cache, "),
        (one_call(None, "{}"), "wrong_tool", "error: unknown tool None; known tools are"),
        (one_call("q" * 100_000, "{}"), "wrong_tool", "error: unknown tool 'qqqq"),
        (one_call("查询", "{}"), "wrong_tool", "error: unknown tool '查询'"),
        (
            one_call("query_database", '{"order_id": "A1'),
            "bad_args",
            "bad_args: arguments are not valid JSON (Unterminated string starting at: character 13); send an object",
        ),
        (one_call("query_database", "[" * 5000), "bad_args", "bad_args: arguments are nested too deeply"),
        (
            one_call("query_database", '{"order_id": ' + "[" * 990 + "]" * 990 + "}"),
            "bad_args",
            "bad_args: arguments are nested too deeply",
        ),
        (
            one_call("query_database", '{"order_id": ' + "7" * 5000 + "}"),
            "bad_args",
            "bad_args: arguments hold a number that cannot be read (Exceeds the limit (4300 digits)",
        ),
        (
            one_call("query_database", '{"order_id": NaN}'),
            "bad_args",
            "bad_args: argument 'order_id' must be a string, got float nan",
        ),
        (one_call("query_database", '{"self": 1}'), "bad_args", "bad_args: unexpected argument 'self'"),
        (
            one_call("query_database", "null"),
            "bad_args",
            "bad_args: arguments must be a JSON object, got null",
        ),
        (one_call("query_database", None), "bad_args", "bad_args: missing argument 'order_id'"),
        (
            one_call("query_database", json.dumps({"order_id": "A" * 100_000})),
            "not_found",
            "not_found: order AAAA",
        ),
        (one_call("big_output", '{"order_id": "A123"}'), "ok", "ok: 40 fields: field0=A123A123"),
        (
            one_call("wrong_shape", '{"order_id": "A123"}'),
            "error",
            "error: wrong_shape returned list ['A123'",
        ),
    ],
    ids=lambda value: None if isinstance(value, ModelReply) else "",
)
def test_each_odd_reply_gets_a_clear_bounded_observation(reply, status, observation):
    trace = run_react(TASK, ScriptedModel(reply, FINAL), TOOLS)
    assert trace.stop_reason == "answered"  # the model was told, and the run went on
    [step] = trace.steps
    assert step.status == status
    assert step.observation.startswith(observation)
    assert len(step.observation) <= MAX_OBSERVATION_CHARS and len(step.tool) <= MAX_NAME_CHARS


def test_text_and_a_tool_call_in_one_reply_runs_the_call_and_keeps_the_text_as_thought():
    both = ModelReply(
        'Final answer: {"status": "paid"}', (ToolCall("c1", "query_local_cache", '{"order_id": "A123"}'),)
    )
    trace = run_react(TASK, ScriptedModel(both, FINAL), TOOLS)
    assert [s.status for s in trace.steps] == ["ok"] and trace.model_calls == 2
    assert trace.steps[0].thought == both.content  # the answer in a calling turn is not taken


def test_a_reply_with_thirty_wrong_calls_stops_at_the_depth():
    # max_pitfall_depth is checked after each call, so one crowded reply cannot overshoot it.
    crowded = ModelReply(None, tuple(ToolCall(f"c{i}", "query_db", "{}") for i in range(30)))
    trace = run_react(TASK, ScriptedModel(crowded, FINAL), TOOLS, max_pitfall_depth=3)
    assert trace.stop_reason == "max_pitfall_depth: 4 wrong calls"
    assert len(trace.steps) == 4 and trace.model_calls == 1
