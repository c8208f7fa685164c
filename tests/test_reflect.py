"""The reflector: the template validator (incl. adversarial replies), the bounded re-ask, the offline
reflector's rules on known logs, and the fast loop's quick review."""

import pytest
from fakes import ScriptedModel as Scripted
from hypothesis import given
from hypothesis import strategies as st

from ralph_mini.log import format_for_reflection, log_run
from ralph_mini.model import ModelReply, ToolCall
from ralph_mini.offline import OfflineModel
from ralph_mini.react import run_react
from ralph_mini.reflect import (
    SECTIONS,
    ask_untemplated,
    parse_sections,
    quick_review,
    redundant_steps,
    reflect,
    validate_reflection,
)
from ralph_mini.suite import grade, make_suite

SUITE = make_suite(n=50, seed=7)
TOOLS = SUITE.world.tools()
MODEL = OfflineModel()

VALID = """EFFECTIVE STEPS:
- query_local_cache returned status and amount in 0.05 s
INEFFECTIVE STEPS:
- query_database after a cache hit repeated status and amount
REUSABLE RULES:
- when query_local_cache finds the order: skip query_database
AVOID:
- none"""


def log_text(*indexes):
    traces = [run_react(SUITE.tasks[i], MODEL, TOOLS) for i in indexes]
    return "\n\n".join(
        format_for_reflection(*log_run(t, f"R{i}", grade(t.task, t.answer).correct))
        for i, t in zip(indexes, traces, strict=True)
    )


def test_valid_template_passes():
    assert validate_reflection(VALID) == []
    assert parse_sections(VALID)["AVOID"] == []


@pytest.mark.parametrize(
    ("broken", "problem"),
    [
        (VALID.replace("AVOID:\n- none", ""), "missing section AVOID"),
        (VALID.replace("in 0.05 s", "in 0.05 s " + "really " * 30), "words, over 30"),
        (VALID.replace("- none", "- improve performance"), "vague item names no tool or field"),
        (VALID.replace("skip query_database", "maybe skip the database"), "rule outside the grammar"),
        (
            VALID.replace("repeated status", "repeated A123 status"),
            "names a specific instance (order id A123)",
        ),
        (VALID.replace("- none", "- ask CUST-0042 about amount"), "(customer CUST-0042)"),
        (
            "INEFFECTIVE STEPS:\n- none\nEFFECTIVE STEPS:\n- none\nREUSABLE RULES:\n- none\nAVOID:\n- none",
            "out of order",
        ),
        ("", "missing section EFFECTIVE STEPS"),
    ],
)
def test_broken_templates_are_rejected_with_the_reason(broken, problem):
    problems = validate_reflection(broken)
    assert any(problem in p for p in problems), problems


@given(st.text(max_size=400))
def test_validator_never_crashes(text):
    assert isinstance(validate_reflection(text), list)


items = st.sampled_from(
    ["query_database added no field", "status came from query_local_cache", "txn_id confirmed"]
)


INSTANCES = {"A123": "order id", "Z999": "order id", "CUST-7": "customer", "X9F2": "id", "$215": "amount"}


@given(st.lists(items, max_size=3), st.lists(items, max_size=3), st.sampled_from(sorted(INSTANCES)))
def test_any_instance_name_is_caught(effective, avoid, instance):
    def block(name, xs):
        return f"{name}:\n" + "\n".join(f"- {x}" for x in xs or ["none"])

    text = "\n".join(
        [block(SECTIONS[0], effective), block(SECTIONS[1], [f"query_database for {instance}"]),
         block(SECTIONS[2], []), block(SECTIONS[3], avoid)]
    )  # fmt: skip
    assert validate_reflection(text) == [
        f"INEFFECTIVE STEPS: item names a specific instance ({INSTANCES[instance]} {instance}); "
        "it must hold for every order"
    ]


def test_offline_reflector_on_a_cache_hit_run():
    reflection = reflect(log_text(0), MODEL, TOOLS)
    assert reflection.ok and reflection.rounds == 1
    assert reflection.rules == ("when query_local_cache finds the order: skip query_database",)
    assert reflection.ineffective == (
        "query_database after a query_local_cache hit repeated status and amount; it added no field",
    )


def test_offline_reflector_on_a_fresh_pending_run_reads_the_lag_from_the_tool_docs():
    reflection = reflect(log_text(1), MODEL, TOOLS)  # B456: 12 minutes old
    assert reflection.rules == (
        "when any task: start with query_local_cache",
        "when query_local_cache finds the order: skip query_database",
        "when status is pending and age under 30 min: skip query_payment_api",
    )
    assert (
        "query_payment_api had no transaction for a pending order 12 min old; too new"
        in reflection.ineffective
    )


def test_offline_reflector_on_a_missing_order():
    missing = next(i for i, t in enumerate(SUITE.tasks) if t.kind == "missing")
    assert (
        "when query_database finds nothing: skip query_payment_api"
        in reflect(log_text(missing), MODEL, TOOLS).rules
    )


def test_reask_then_accept():
    model = Scripted("improve performance", VALID)
    reflection = reflect("log", model, TOOLS)
    assert reflection.ok and reflection.rounds == 2 and len(model.seen) == 2


def test_give_up_cleanly_after_max_rounds():
    model = Scripted("improve performance", "be faster", "never asked")
    reflection = reflect("log", model, TOOLS, max_reflection_rounds=2)
    assert not reflection.ok and len(model.seen) == 2
    assert reflection.rules == ()
    assert reflection.reason.startswith("no reflection after 2 rounds: missing section EFFECTIVE STEPS")


def test_offline_model_shortens_after_a_rejection():
    reflection = reflect(log_text(3), MODEL, TOOLS, max_words=10)
    assert reflection.ok and reflection.rounds == 2
    assert all(len(item.split()) <= 10 for item in reflection.effective + reflection.rules + reflection.avoid)


def test_untemplated_advice_is_vague():
    transcript = str(run_react(SUITE.tasks[1], MODEL, TOOLS).messages)
    advice = ask_untemplated(transcript, MODEL)
    assert "improve performance" in advice
    assert any("missing section" in p for p in validate_reflection(advice))


def test_quick_review():
    wasteful = run_react(SUITE.tasks[1], MODEL, TOOLS)
    review = quick_review(wasteful)
    assert (review.wrong_calls, review.redundant_calls, review.retry) == (1, 2, False)
    assert redundant_steps(wasteful) == [3, 4]
    lost = run_react(SUITE.tasks[1], Scripted(*["thinking..."] * 8), TOOLS)
    review = quick_review(lost)
    assert review.retry and not review.answered
    assert review.reason.startswith("no answer (max_pitfall_depth")
    calls = [
        ModelReply(None, (ToolCall(f"c{i}", "query_local_cache", '{"order_id": "A123"}'),)) for i in range(1)
    ]
    clean = run_react(
        SUITE.tasks[0],
        Scripted(*calls, ModelReply('Final answer: {"status": "paid", "amount": 99.5}')),
        TOOLS,
    )
    assert quick_review(clean).reason == "clean run"


def test_an_empty_reflection_is_no_reflection():
    empty = "\n".join(f"{name}:\n- none" for name in SECTIONS)
    assert validate_reflection(empty) == ["empty reflection: name at least one effective or ineffective step"]
    nothing = reflect(log_text(1), MODEL, TOOLS, max_words=4)
    assert not nothing.ok and "empty reflection" in nothing.reason
