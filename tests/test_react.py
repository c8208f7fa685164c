"""The bare ReAct loop: scripted models drive every path, including every kind of bad reply."""

import json

import pytest
from fakes import ScriptedModel
from hypothesis import given
from hypothesis import strategies as st

from ralph_mini.hardening import parse_final_answer
from ralph_mini.model import ModelReply, ToolCall, Usage
from ralph_mini.offline import OfflineModel
from ralph_mini.react import LessonBudget, build_system_prompt, run_react
from ralph_mini.tools import tool
from ralph_mini.world import grade
from ralph_mini.worlds import orders
from ralph_mini.worlds.orders.words import LOOKUP_TOOLS as LOOKUPS
from ralph_mini.worlds.orders.words import SYSTEM_PROMPT

SUITE = orders.make_suite(n=50, seed=7)
TASK = SUITE.tasks[0]  # A123, paid, cached
TOOLS = SUITE.world.tools()


def call(name, arguments, id_="c1", thought=None):
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return ModelReply(thought, (ToolCall(id_, name, text),), Usage(100, 10), latency_s=1.0)


FINAL = ModelReply(
    'Final answer: {"status": "paid", "amount": 99.5, "paid_at": "2025-03-10 09:13"}', (), Usage(120, 20), 2.0
)


def test_happy_path_counts_everything():
    model = ScriptedModel(call("query_local_cache", {"order_id": "A123"}, thought="cache first"), FINAL)
    trace = run_react(TASK, model, TOOLS)
    assert trace.stop_reason == "answered"
    assert grade(TASK, trace.answer).correct
    [step] = trace.steps
    assert (step.tool, step.status, step.thought) == ("query_local_cache", "ok", "cache first")
    assert (
        step.observation
        == "ok: 4 fields: status=paid, amount=99.5, created_at=2025-03-10 09:12, paid_at=2025-03-10 09:13"
    )
    assert (trace.model_calls, trace.tokens_in, trace.tokens_out) == (2, 220, 30)
    assert trace.latency_s == pytest.approx(1.0 + 2.0 + 0.05)
    # the model saw its tool result on the second turn
    assert model.seen[1][-1] == {"role": "tool", "tool_call_id": "c1", "content": step.observation}


@pytest.mark.parametrize(
    ("name", "arguments", "status", "observation"),
    [
        (
            "query_db",
            {"order_id": "A123"},
            "wrong_tool",
            "error: unknown tool 'query_db'; known tools are query_local_cache, query_database",
        ),
        ("query_database", '{"order_id": "A1', "bad_args", "bad_args: arguments are not valid JSON"),
        (
            "query_database",
            {"id": "A123"},
            "bad_args",
            "bad_args: unexpected argument 'id': query_database takes order_id",
        ),
        ("query_database", {}, "bad_args", "bad_args: missing argument 'order_id'"),
        (
            "query_database",
            {"order_id": 123},
            "bad_args",
            "bad_args: argument 'order_id' must be a string, got int 123",
        ),
        ("query_database", "[1, 2]", "bad_args", "bad_args: arguments must be a JSON object"),
        ("get_shipping_status", {"order_id": "A123"}, "wrong_tool", "ok: 2 fields: carrier=DHL"),
        (
            "calculator",
            {"expression": "import os"},
            "wrong_tool",
            "error: calculator failed: ValueError: calculator accepts",
        ),
    ],
)
def test_bad_calls_become_observations(name, arguments, status, observation):
    trace = run_react(TASK, ScriptedModel(call(name, arguments), FINAL), TOOLS)
    [step] = trace.steps
    assert step.status == status and step.wrong
    assert step.observation.startswith(observation)
    assert trace.stop_reason == "answered" and trace.wrong_calls == 1


def test_tool_exception_is_reported_not_raised():
    @tool
    def query_local_cache(order_id: str) -> dict:
        """Broken cache.

        Args:
            order_id: id
        """
        raise TimeoutError("cache did not answer in 2 s")

    trace = run_react(
        TASK, ScriptedModel(call("query_local_cache", {"order_id": "A123"}), FINAL), [query_local_cache]
    )
    assert trace.steps[0].status == "error"
    assert (
        trace.steps[0].observation
        == "error: query_local_cache failed: TimeoutError: cache did not answer in 2 s"
    )


def test_reply_without_call_or_answer_is_a_wrong_call_and_the_model_is_told():
    model = ScriptedModel(ModelReply("Let me think about it."), FINAL)
    trace = run_react(TASK, model, TOOLS)
    assert [s.status for s in trace.steps] == ["bad_reply"]
    assert trace.tool_calls == 0 and trace.wrong_calls == 1
    assert model.seen[1][-1]["role"] == "user"
    assert "neither a tool call nor a line" in model.seen[1][-1]["content"]


def test_max_pitfall_depth_stops_the_run():
    bad = [call("nope", {}, id_=f"c{i}") for i in range(10)]
    trace = run_react(TASK, ScriptedModel(*bad), TOOLS, max_pitfall_depth=2)
    assert trace.stop_reason == "max_pitfall_depth: 3 wrong calls"
    assert len(trace.steps) == 3 and trace.answer is None


def test_max_steps_bounds_every_run():
    wander = [call(name, {"order_id": "A123"}, id_=f"c{i}") for i, name in enumerate(LOOKUPS * 3)]
    trace = run_react(TASK, ScriptedModel(*wander), TOOLS, max_steps=4, max_pitfall_depth=10)
    assert trace.stop_reason == "max_steps: no final answer after 4 model turns"
    assert trace.tool_calls == 4


def test_an_identical_call_repeated_is_a_loop_and_counts_toward_the_pitfall_depth():
    loop = [call("query_local_cache", {"order_id": "A123"}, id_=f"c{i}") for i in range(10)]
    trace = run_react(TASK, ScriptedModel(*loop), TOOLS, max_steps=8, max_pitfall_depth=3)
    # a loop stops at the depth itself: the first call and 3 repeats (max_pitfall_depth + 1 calls)
    assert trace.stop_reason == "max_pitfall_depth: 3 wrong calls"
    assert [s.status for s in trace.steps] == ["ok", "repeated", "repeated", "repeated"]
    assert trace.steps[1].tool_latency_s == 0.0  # not run again


def test_asking_again_after_an_error_is_a_fair_retry_not_a_loop():
    bad = [call("query_local_cache", {"order_id": 7}, id_=f"c{i}") for i in range(2)]
    trace = run_react(TASK, ScriptedModel(*bad), TOOLS, max_steps=2)
    assert [s.status for s in trace.steps] == ["bad_args", "bad_args"]


def test_the_lesson_budget_cuts_planned_and_added_lessons_together():
    budget = LessonBudget(max_lessons=3, share=0.15, context_tokens=8192)
    rules = [f"when any task: start with tool_{i}" for i in range(5)]
    assert budget.fit(rules) == rules[:3]
    assert budget.fit(rules[3:], carried=rules[:2]) == rules[3:4]
    assert LessonBudget(3, 0.15, 100).fit(rules) == rules[:1]  # 15 tokens: room for one bullet
    trace = run_react(TASK, ScriptedModel(FINAL), TOOLS, lessons=rules)
    assert trace.messages[0]["content"].count("\n- when") == 3


def test_lessons_go_into_the_system_prompt():
    prompt = build_system_prompt(
        SYSTEM_PROMPT.format(now="2025-03-10 12:00"), ["when any task: start with query_local_cache"]
    )
    assert "Current time: 2025-03-10 12:00." in prompt
    assert prompt.endswith(
        "Lessons from earlier runs (follow them):\n- when any task: start with query_local_cache"
    )
    assert "Lessons" not in build_system_prompt(SYSTEM_PROMPT.format(now="2025-03-10 12:00"))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('ok.\nFinal answer: {"status": "paid"}', {"status": "paid"}),
        ('{"a": 1} then Final answer: {"b": 2} {"c": 3}', {"b": 2}),
        ('no marker {"a": 1} and {"b": {"c": 2}}', {"b": {"c": 2}}),
        ("Final answer: paid", None),
        ("", None),
    ],
)
def test_parse_final_answer(text, expected):
    assert parse_final_answer(text) == expected


@given(st.text(max_size=200))
def test_parse_final_answer_never_crashes(text):
    result = parse_final_answer(text)
    assert result is None or isinstance(result, dict)


def test_baseline_on_the_suite():
    """The numbers notebook 01 shows: bare ReAct vs the oracle on the 50-task suite."""
    traces = [run_react(task, OfflineModel(habits=orders.HABITS), TOOLS) for task in SUITE.tasks]
    assert sum(t.tool_calls for t in traces) == 141
    assert sum(t.task.oracle_calls for t in traces) == 76
    assert sum(t.wrong_calls for t in traces) == 17
    assert all(grade(t.task, t.answer).correct for t in traces)


def test_a_rambling_reply_is_not_resent_in_full():
    ramble = ModelReply("blah " * 30_000, (ToolCall("c1", "query_local_cache", '{"order_id": "A123"}'),))
    model = ScriptedModel(ramble, FINAL)
    run_react(TASK, model, TOOLS)
    kept = model.seen[1][2]["content"]
    assert len(kept) == 4_000 and kept.endswith("(truncated from 150000 chars)")
