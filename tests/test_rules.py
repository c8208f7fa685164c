"""The micro-prompt grammar: exact parses, clear errors, and a round trip for every rule it can express."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ralph_mini.rules import Action, Rule, RuleSyntaxError, Trigger, find_rules, parse_rule, rule_in

TOOLS = ["query_local_cache", "query_database", "query_payment_api", "get_shipping_status"]


def test_parses_the_seed_lesson():
    rule = parse_rule("When query_local_cache finds the order: answer; skip query_database.")
    assert rule == Rule(
        Trigger("finds", tool="query_local_cache"), (Action("answer"), Action("skip", "query_database"))
    )
    assert str(rule) == "when query_local_cache finds the order: answer; skip query_database"


def test_parses_age_condition():
    rule = parse_rule("- when status is pending and age under 30 min: skip query_payment_api")
    assert rule.trigger == Trigger("status", status="pending", age_op="under", minutes=30)
    assert rule.tools() == {"query_payment_api"}


@pytest.mark.parametrize(
    ("text", "complaint"),
    [
        ("always skip query_database", "is not a rule"),
        ("when the moon is full: skip query_database", "unknown trigger"),
        ("when any task: dance", "unknown action"),
        ("when any task: skip", "needs a tool name"),
        ("when any task: answer query_database", "takes no tool name"),
    ],
)
def test_rejects_with_a_reason(text, complaint):
    with pytest.raises(RuleSyntaxError, match=complaint):
        parse_rule(text)


def test_find_rules_skips_prose():
    prompt = "You are helpful.\nLessons:\n- when any task: start with query_local_cache\n- be quick"
    assert [str(r) for r in find_rules(prompt)] == ["when any task: start with query_local_cache"]


triggers = st.one_of(
    st.just(Trigger("any")),
    st.builds(lambda t: Trigger("finds", tool=t), st.sampled_from(TOOLS)),
    st.builds(lambda t: Trigger("nothing", tool=t), st.sampled_from(TOOLS)),
    st.builds(lambda s: Trigger("status", status=s), st.sampled_from(["paid", "pending", "refunded"])),
    st.builds(
        lambda s, op, n: Trigger("status", status=s, age_op=op, minutes=n),
        st.sampled_from(["paid", "pending"]),
        st.sampled_from(["under", "over"]),
        st.integers(1, 999),
    ),
)
actions = st.one_of(
    st.just(Action("answer")),
    st.builds(Action, st.sampled_from(["skip", "call", "start"]), st.sampled_from(TOOLS)),
)


@given(triggers, st.lists(actions, min_size=1, max_size=3))
def test_round_trip(trigger, action_list):
    rule = Rule(trigger, tuple(action_list))
    assert parse_rule(str(rule)) == rule


@given(st.text(max_size=80))
def test_parser_never_crashes(text):
    try:
        parse_rule(text)
    except RuleSyntaxError:
        pass


def test_find_rules_reads_the_same_prompt_the_same_way_every_turn():
    # Each line's reading is remembered, prose included: the answer must not change on a second reading.
    prompt = "Lessons:\n- when any task: answer\nnot a rule: at all\n- when any task: dance"
    first = find_rules(prompt)
    assert find_rules(prompt) == first == [parse_rule("when any task: answer")]
    assert rule_in("not a rule: at all") is None and rule_in("- when any task: dance") is None
