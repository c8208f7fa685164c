"""Lessons that bind (guards.py): what a guard refuses, what it narrows, and when it lets go."""

import json
from dataclasses import replace

import pytest
from fakes import ScriptedModel

from ralph_mini.clock import FakeClock
from ralph_mini.guards import BLIND, Guard, binding
from ralph_mini.loop import LoopConfig, run_task
from ralph_mini.memory import Memory
from ralph_mini.model import ModelReply, ToolCall, Usage
from ralph_mini.offline import OfflineModel
from ralph_mini.offline_seen import read_conversation
from ralph_mini.react import ANSWER, run_react
from ralph_mini.reflect import reflect, reflection_text
from ralph_mini.worlds import orders

SUITE = orders.make_suite(n=50, seed=7)
TASK = SUITE.tasks[0]  # A123, paid, in the cache
TOOLS = SUITE.world.tools()
WORDS = orders.WORDS
SKIP_DB = "when query_local_cache finds the order: skip query_database"
START_DB = "when any task: start with query_database"
ANSWER_A = json.dumps({"order_id": "A123", "status": "paid", "amount": 99.5, "paid_at": "2025-03-10 09:13"})
FINAL = ModelReply(f"Final answer: {ANSWER_A}", (), Usage(120, 20), 2.0)


def call(name, id_="c1"):
    return ModelReply(None, (ToolCall(id_, name, json.dumps({"order_id": "A123"})),), Usage(100, 10), 1.0)


def guarded(enforce="guard"):
    return binding(enforce, WORDS, TASK.now, TOOLS)


def test_a_call_a_lesson_forbids_is_refused_quoting_the_lesson_and_costs_a_turn_not_a_call():
    model = ScriptedModel(call("query_local_cache"), call("query_database", "c2"), FINAL)
    trace = run_react(TASK, model, TOOLS, lessons=[SKIP_DB], **guarded())
    first, refused = trace.steps
    assert (first.status, refused.tool, refused.status) == ("ok", "query_database", "refused")
    assert SKIP_DB in refused.observation
    assert (trace.tool_calls, trace.model_calls, trace.stop_reason) == (1, 3, "answered")
    assert model.seen[2][-1]["content"] == refused.observation  # the model read the refusal


def test_without_a_guard_the_same_call_runs():
    model = ScriptedModel(call("query_local_cache"), call("query_database", "c2"), FINAL)
    trace = run_react(TASK, model, TOOLS, lessons=[SKIP_DB])
    assert [s.status for s in trace.steps] == ["ok", "ok"]


def test_a_start_with_lesson_narrows_the_first_turn_and_refuses_a_first_call_elsewhere_once():
    seen_tools = []

    class Recording(ScriptedModel):
        def complete(self, messages, tools):
            seen_tools.append([t["function"]["name"] for t in tools])
            return super().complete(messages, tools)

    model = Recording(call("query_local_cache"), call("query_local_cache", "c2"), FINAL)
    trace = run_react(TASK, model, TOOLS, lessons=[START_DB], **guarded())
    assert seen_tools[0] == ["query_database"]
    assert len(seen_tools[1]) == len(TOOLS)  # every tool is back from the second turn
    assert [s.status for s in trace.steps] == ["refused", "ok"]  # refused once: an insisting model goes on
    assert START_DB in trace.steps[0].observation


def test_an_answer_before_any_look_up_is_refused_once():
    model = ScriptedModel(FINAL, FINAL)
    trace = run_react(TASK, model, TOOLS, **guarded())
    [refused] = trace.steps
    assert (refused.tool, refused.status) == (ANSWER, "refused")
    assert refused.observation == BLIND.format(noun=WORDS.noun)
    assert trace.answer is not None and trace.stop_reason == "answered"
    assert model.seen[1][-1] == {"role": "user", "content": refused.observation}


def test_an_answer_before_the_call_a_held_lesson_asks_for_is_refused_once():
    lesson = "when query_local_cache finds the order: call query_database"
    model = ScriptedModel(call("query_local_cache"), FINAL, call("query_database", "c2"), FINAL)
    trace = run_react(TASK, model, TOOLS, lessons=[lesson], **guarded())
    assert [(s.tool, s.status) for s in trace.steps] == [
        ("query_local_cache", "ok"),
        (ANSWER, "refused"),
        ("query_database", "ok"),
    ]


def test_guard_mode_keeps_the_lessons_out_of_the_prompt_and_both_puts_them_in():
    for enforce, in_prompt in (("guard", False), ("both", True), ("prompt", True)):
        model = ScriptedModel(call("query_local_cache"), FINAL)
        run_react(TASK, model, TOOLS, lessons=[SKIP_DB], **guarded(enforce))
        assert (SKIP_DB in model.seen[0][0]["content"]) is in_prompt, enforce


def test_an_unknown_mode_fails_at_once_and_names_the_modes():
    with pytest.raises(ValueError, match="prompt, guard, both"):
        LoopConfig(enforce="guards")
    with pytest.raises(ValueError, match="prompt, guard, both"):
        binding("hard", WORDS, None, TOOLS)


def test_a_lesson_that_does_not_parse_guards_nothing():
    guard = Guard.of(["when the moon is full: skip everything", SKIP_DB], WORDS, TASK.now, TOOLS)
    assert [str(r) for r in guard.rules] == [SKIP_DB]


def test_the_offline_model_takes_a_refused_tool_as_done():
    messages = [
        {"role": "system", "content": "Current time: 2025-03-10 12:00."},
        {"role": "user", "content": "Check order A123."},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "query_database", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "refused: the lesson says skip query_database"},
    ]  # fmt: skip
    seen = read_conversation(messages, [t.schema() for t in TOOLS], orders.HABITS)
    assert seen.refused == {"query_database"} and seen.done("query_database")


def test_the_reflector_does_not_blame_a_refused_step():
    model = ScriptedModel(FINAL, FINAL)
    trace = run_react(TASK, model, TOOLS, **guarded())
    text = reflection_text(trace, "R001", correct=False)
    assert "refused" in text  # the log shows what the guard did
    reflection = reflect(text, OfflineModel(habits=orders.HABITS), TOOLS, WORDS)
    assert reflection.ok and ANSWER not in " ".join(reflection.rules + reflection.avoid)
    assert reflection.rules == ("when any task: start with query_database",)


def test_an_invalidated_rule_lifts_its_guard_at_once():
    clock = FakeClock()
    memory = Memory(clock)
    skip_payment = "when status is paid: skip query_payment_api"
    memory.propose(skip_payment, task_id="T1", run_id="R1", task_type="status", rejected=True)
    config = LoopConfig(enforce="guard", reflect=False)
    steps = [call("query_local_cache"), call("query_payment_api", "c2"), FINAL]

    first = run_task(TASK, ScriptedModel(*steps), TOOLS, memory, [], words=WORDS, config=config)
    assert [s.status for s in first.trace.steps] == ["ok", "refused"]

    call_payment = "when status is paid: call query_payment_api"
    decision, _ = memory.propose(call_payment, task_id="T2", run_id="R2", task_type="status", rejected=True)
    assert f"invalidated: {skip_payment}" in decision
    memory.experiences = {k: e for k, e in memory.experiences.items() if e.rule != call_payment}
    task = replace(TASK, task_id="T002")
    again = run_task(task, ScriptedModel(*steps), TOOLS, memory, [first], words=WORDS, config=config)
    assert [s.status for s in again.trace.steps] == ["ok", "ok"]
    assert again.injected == []


def test_two_held_lessons_that_disagree_never_deadlock_the_run():
    lessons = ["when query_local_cache finds the order: answer; skip query_database",
               "when status is paid: call query_database"]  # fmt: skip
    model = ScriptedModel(call("query_local_cache"), call("query_database", "c2"), FINAL)
    trace = run_react(TASK, model, TOOLS, lessons=lessons, **guarded())
    assert [s.status for s in trace.steps] == ["ok", "ok"] and trace.stop_reason == "answered"


def test_the_votes_count_a_refused_call_as_withheld():
    from ralph_mini.log import run_tags
    from ralph_mini.rules import parse_rule
    from ralph_mini.votes import withheld

    model = ScriptedModel(call("query_local_cache"), call("query_database", "c2"), FINAL)
    trace = run_react(TASK, model, TOOLS, lessons=[SKIP_DB], **guarded())
    revealed = run_tags(trace.steps, WORDS, TASK.now)
    assert "query_database:found" not in revealed  # the refused call showed nothing
    assert withheld(parse_rule(SKIP_DB), revealed)  # so a wrong answer after it counts against the lesson
