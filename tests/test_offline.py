"""The offline model: deterministic, stateless, reads only the messages, has its documented habits,
and changes them only when a rule is written in the prompt."""

import enum
import json
from collections import OrderedDict
from dataclasses import replace

import pytest

from ralph_mini.offline import OfflineModel
from ralph_mini.react import build_system_prompt, run_react
from ralph_mini.tokens import count_prompt_tokens, count_tokens
from ralph_mini.world import grade
from ralph_mini.worlds import orders
from ralph_mini.worlds.orders.words import SYSTEM_PROMPT

SUITE = orders.make_suite(n=50, seed=7)
HABITS = orders.HABITS  # the order desk's naive habits
LAZY = replace(HABITS, double_check=False)
CORE = SUITE.world.tools(core_only=True)
ALL = SUITE.world.tools()


def conversation(question, observations=(), lessons=()):
    """A hand-written conversation: (tool, observation) pairs as if earlier turns had happened."""
    messages = [
        {
            "role": "system",
            "content": build_system_prompt(SYSTEM_PROMPT.format(now="2025-03-10 12:00"), lessons),
        },
        {"role": "user", "content": question},
    ]
    for i, (tool, text) in enumerate(observations, 1):
        call = {"id": f"c{i}", "type": "function", "function": {"name": tool, "arguments": "{}"}}
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": text})
    return messages


SCHEMAS = [t.schema() for t in CORE]
CACHE_HIT = ("query_local_cache", "ok: 3 fields: status=paid, amount=12.0, paid_at=2025-03-10 08:00")
FRESH = ("query_local_cache", "ok: 3 fields: status=pending, amount=5.0, created_at=2025-03-10 11:50")
STALE = ("query_local_cache", "ok: 3 fields: status=pending, amount=5.0, created_at=2025-03-10 09:00")


def next_tool(messages, schemas=SCHEMAS, model=None):
    reply = (model or OfflineModel(habits=HABITS)).complete(messages, schemas)
    return reply.tool_calls[0].name if reply.tool_calls else None


def test_first_move_is_the_cache():
    reply = OfflineModel(habits=HABITS).complete(conversation("Status of order Q100?"), SCHEMAS)
    assert reply.tool_calls[0].name == "query_local_cache"
    assert json.loads(reply.tool_calls[0].arguments) == {"order_id": "Q100"}
    assert reply.content == "I'll check query_local_cache first, it is fast."


def test_habit_double_checks_database_after_cache_hit():
    assert next_tool(conversation("Order Q100?", [CACHE_HIT])) == "query_database"
    lazy = OfflineModel(habits=LAZY)
    assert next_tool(conversation("Order Q100?", [CACHE_HIT]), model=lazy) is None


def test_rule_in_prompt_changes_the_habit():
    rule = "when query_local_cache finds the order: skip query_database"
    reply = OfflineModel(habits=HABITS).complete(conversation("Order Q100?", [CACHE_HIT], [rule]), SCHEMAS)
    assert not reply.tool_calls
    assert reply.content.endswith(
        'Final answer: {"order_id": "Q100", "status": "paid", "amount": 12.0, "paid_at": "2025-03-10 08:00"}'
    )


def test_answer_comes_from_observations_not_the_world():
    # A123 is paid 99.5 in the world; the model must believe what the tool said.
    reply = OfflineModel(habits=LAZY).complete(conversation("Order A123?", [CACHE_HIT]), SCHEMAS)
    assert '"amount": 12.0' in reply.content


def test_every_pending_order_goes_to_the_provider_unless_a_rule_says_age():
    rule = "when status is pending and age under 30 min: skip query_payment_api"
    db = ("query_database", "ok: 2 fields: status=pending, amount=5.0")
    assert next_tool(conversation("Order Q101?", [FRESH, db])) == "query_payment_api"
    assert next_tool(conversation("Order Q101?", [FRESH, db], [rule])) is None  # 10 min old: skip
    assert next_tool(conversation("Order Q101?", [STALE, db], [rule])) == "query_payment_api"  # 3 h old


def test_provider_word_wins_on_status():
    pay = (
        "query_payment_api",
        "ok: 3 fields: payment_status=captured, txn_id=TXN-1, settled_at=2025-03-10 09:02",
    )
    db = ("query_database", "ok: 2 fields: status=pending, amount=5.0")
    reply = OfflineModel(habits=HABITS).complete(conversation("Order Q101?", [STALE, db, pay]), SCHEMAS)
    answer = json.loads(reply.content.split("Final answer: ")[1])
    assert answer == {
        "order_id": "Q101",
        "status": "paid",
        "amount": 5.0,
        "paid_at": "2025-03-10 09:02",
        "txn_id": "TXN-1",
    }


def test_deterministic_and_stateless():
    model = OfflineModel(seed=3, habits=HABITS)
    messages = conversation("Order Q100?", [CACHE_HIT])
    first = model.complete(messages, SCHEMAS)
    model.complete(conversation("Something else about Z999", [FRESH]), SCHEMAS)
    assert model.complete(messages, SCHEMAS) == first
    assert OfflineModel(seed=3, habits=HABITS).complete(messages, SCHEMAS) == first


def test_usage_and_latency_follow_tokens():
    messages = conversation("Order Q100?")
    reply = OfflineModel(habits=HABITS).complete(messages, SCHEMAS)
    assert reply.usage.prompt_tokens == count_tokens(json.dumps(messages)) + count_tokens(json.dumps(SCHEMAS))
    assert reply.latency_s > 1.0
    assert (
        OfflineModel(habits=HABITS).complete(messages, [t.schema() for t in ALL]).usage.prompt_tokens
        > reply.usage.prompt_tokens
    )


def test_schema_tokens_are_exact_whatever_the_schemas_hold():
    # The schemas' count is remembered by their marshal bytes: a schema changed in place is counted
    # afresh, and values marshal cannot pack (an OrderedDict, a str enum) are counted all the same.
    class Kind(enum.StrEnum):
        STRING = "string"

    schemas = [t.schema() for t in ALL]
    odd = [OrderedDict(schemas[0]), {"type": "function", "function": {"name": "订单", "kind": Kind.STRING}}]
    for tools in (schemas, odd):
        assert count_prompt_tokens([], tools) == count_tokens("[]") + count_tokens(
            json.dumps(tools, ensure_ascii=False)
        )
    before = count_prompt_tokens([], schemas)
    schemas[0]["function"]["description"] += " Longer now, by quite a few words."
    assert count_prompt_tokens([], schemas) > before


def test_prompt_tokens_counted_message_by_message_are_the_whole_conversation_written_as_json():
    """Each message is written out once and remembered; the count is still the whole list's JSON."""
    schemas = [t.schema() for t in ALL]
    trace = run_react(SUITE.tasks[1], OfflineModel(habits=HABITS), ALL)
    odd = {"role": "user", "content": '订单 b456 的状态？\n"引号" \\ 和制表\t符', "extra": OrderedDict(a=1)}
    for messages in ([], trace.messages[:1], trace.messages, [*trace.messages, odd], [odd, odd]):
        whole = count_tokens(json.dumps(messages, ensure_ascii=False))
        assert count_prompt_tokens(messages, schemas) == whole + count_prompt_tokens([], schemas) - 1
    before = count_prompt_tokens(trace.messages, schemas)
    trace.messages[0]["content"] += "还有几个字"
    assert count_prompt_tokens(trace.messages, schemas) == before + 5  # changed in place: counted afresh


def run_suite(tools, lessons=(), seed=0):
    traces = [
        run_react(task, OfflineModel(seed=seed, habits=HABITS), tools, lessons=lessons)
        for task in SUITE.tasks
    ]
    return traces


def test_long_tool_list_causes_wrong_tools_and_rules_fix_it():
    core, full = run_suite(CORE), run_suite(ALL)
    assert sum(t.wrong_calls for t in core) == 0
    assert sum(t.wrong_calls for t in full) == 17
    fixed = run_suite(ALL, lessons=["when any task: start with query_local_cache"])
    assert sum(t.wrong_calls for t in fixed) == 0
    assert all(grade(t.task, t.answer).correct for t in full + core + fixed)


def test_another_seed_is_another_student():
    assert [t.wrong_calls for t in run_suite(ALL, seed=1)] != [t.wrong_calls for t in run_suite(ALL, seed=0)]


def test_no_order_id_gives_up_cleanly():
    reply = OfflineModel(habits=HABITS).complete(conversation("Where is my parcel?"), SCHEMAS)
    assert reply.tool_calls == () and reply.content.endswith("Final answer: {}")  # it claims nothing
    assert "names no order id" in reply.content  # the world's noun, from its habits


def test_acting_needs_a_worlds_habits_reflecting_does_not():
    with pytest.raises(ValueError, match="has no habits to act with"):
        OfflineModel().complete(conversation("Order Q100?"), SCHEMAS)
    reflection = OfflineModel().complete(
        [{"role": "system", "content": "x"}, {"role": "user", "content": "y"}], []
    )
    assert reflection.tool_calls == () and reflection.content


def test_model_from_env_timeout_and_retries():
    from ralph_mini.backends import model_from_env

    env = {
        "RALPH_MODEL": "m",
        "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
        "RALPH_TIMEOUT_S": "5",
        "RALPH_MAX_RETRIES": "0",
    }
    model = model_from_env(env)
    assert (model.client.timeout, model.client.max_retries) == (5.0, 0)
    with pytest.raises(ValueError, match="RALPH_TIMEOUT_S='soon' is not a non-negative number"):
        model_from_env({**env, "RALPH_TIMEOUT_S": "soon"})
