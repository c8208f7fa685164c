"""The reflector: the template validator (incl. adversarial replies), the bounded re-ask, the offline
reflector's rules on known logs, and the fast loop's quick review."""

import pytest
from fakes import ScriptedModel as Scripted
from hypothesis import given
from hypothesis import strategies as st

from ralph_mini import planner
from ralph_mini.log import format_for_reflection, log_run
from ralph_mini.model import ModelReply, ToolCall
from ralph_mini.offline import OfflineModel
from ralph_mini.react import run_react
from ralph_mini.reflect import (
    SECTIONS,
    ask_untemplated,
    parse_sections,
    reflect,
    reflection_messages,
    validate_reflection,
)
from ralph_mini.review import quick_review
from ralph_mini.tools import Tool
from ralph_mini.waste import redundant_steps
from ralph_mini.world import RequestType, Words, grade
from ralph_mini.worlds import orders
from ralph_mini.worlds.orders import words as ow

SUITE = orders.make_suite(n=50, seed=7)
TOOLS = SUITE.world.tools()
NAMES = [t.name for t in TOOLS]
WORDS = orders.WORDS
MODEL = OfflineModel(habits=orders.HABITS)

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
    assert validate_reflection(VALID, WORDS, NAMES) == []
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
    problems = validate_reflection(broken, WORDS, NAMES)
    assert any(problem in p for p in problems), problems


@given(st.text(max_size=400))
def test_validator_never_crashes(text):
    assert isinstance(validate_reflection(text, WORDS, NAMES), list)


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
    assert validate_reflection(text, WORDS, NAMES) == [
        f"INEFFECTIVE STEPS: item names a specific instance ({INSTANCES[instance]} {instance}); "
        "it must hold for every order"
    ]


def test_offline_reflector_on_a_cache_hit_run():
    reflection = reflect(log_text(0), MODEL, TOOLS, WORDS)
    assert reflection.ok and reflection.rounds == 1
    assert reflection.rules == ("when query_local_cache finds the order: skip query_database",)
    assert reflection.ineffective == (
        "query_database repeated amount, paid_at, status from query_local_cache; no new field",
    )


def test_offline_reflector_on_a_fresh_pending_run_reads_the_lag_from_the_tool_docs():
    reflection = reflect(log_text(1), MODEL, TOOLS, WORDS)  # B456: 12 minutes old
    assert set(reflection.rules) == {
        "when any task: start with query_local_cache",
        "when query_local_cache finds the order: skip query_database",
        "when status is pending and age under 30 min: skip query_payment_api",
    }
    assert "query_payment_api had nothing for a pending order 12 min old; too new" in reflection.ineffective


# A world the reflector has never seen: every tool renamed, its roles declared, not described; another
# record noun, status field, creation field and "no such record" answer; a new request type.
TICKET_TOOLS = [
    Tool("peek_recent", "Quick memory of recent tickets: state and model. May miss older ones.", {}, dict),
    Tool("read_archive", "The archive of tickets, with their dates. Slower.", {}, dict, holds_every=True),
    Tool("ask_vendor", "Vendor portal: the claim filed for a ticket.", {}, dict, lag_min=45),
    Tool("check_warranty", "Warranty state and expiry date of a device.", {}, dict),
    Tool("close_ticket", "Close a ticket.", {}, dict, writes=True),
]
TICKET_WORDS = Words(
    job="a help desk's agent: it answers questions about support tickets",
    noun="ticket",
    id_argument="ticket",
    id_pattern=r"\b(Q\d+)\b",
    statuses=("open", "closed", "no_such_ticket"),
    missing="no_such_ticket",
    requests=(RequestType("state", ("state",)), RequestType("warranty", ("warranty",), cues=("warranty",)),
              RequestType("close", ("close",), cues=("close",), writes=True)),
    fields=("state", "model", "opened_at", "desk", "claim", "vendor_ref", "warranty", "expires", "closed"),
    status_field="state",
    created_field="opened_at",
)  # fmt: skip
TICKET_LOGS = {
    "repeat": """run R1 at 2025-03-10 12:00: What is the state of ticket Q7?
1 peek_recent(ticket=Q7) ok 0.10s: state=open, model=K2, opened_at=2025-03-09 08:00
2 read_archive(ticket=Q7) ok 0.90s: state=open, model=K2, opened_at=2025-03-09 08:00, desk=north
result: answered, answer {"state": "open", "model": "K2"}; 2 calls, 0 wrong, 2.0 s, 900 tokens
grader: accepted""",
    "archive has nothing": """run R2 at 2025-03-10 12:00: What is the state of ticket Q8?
1 read_archive(ticket=Q8) not_found 0.90s: no ticket Q8
2 ask_vendor(ticket=Q8) not_found 6.00s: no claim for Q8
result: answered, answer {"state": "no_such_ticket"}; 2 calls, 0 wrong, 8.0 s, 900 tokens
grader: accepted""",
    "too new": """run R3 at 2025-03-10 12:00: What is the state of ticket Q9?
1 peek_recent(ticket=Q9) ok 0.10s: state=open, model=K2, opened_at=2025-03-10 11:50
2 ask_vendor(ticket=Q9) not_found 6.00s: no claim for Q9
result: answered, answer {"state": "open", "model": "K2"}; 2 calls, 0 wrong, 7.0 s, 900 tokens
grader: accepted""",
    "wrote blind": """run R4 at 2025-03-10 12:00: Close ticket Q10 please.
1 close_ticket(ticket=Q10) ok 0.50s: closed=True
result: answered, answer {"close": "done"}; 1 calls, 0 wrong, 1.0 s, 500 tokens
grader: rejected; wrong or missing: close, writes""",
    "wrong first": """run R5 at 2025-03-10 12:00: Is the warranty of ticket Q11 still valid?
1 ask_vendor(ticket=Q11) ok 6.00s: claim=none, vendor_ref=VX-88
2 check_warranty(ticket=Q11) ok 0.40s: warranty=valid, expires=2026-01-01
result: answered, answer {"warranty": "valid", "expires": "2026-01-01"}; 2 calls, 0 wrong, 7.0 s, 600 tokens
grader: accepted""",
}
TICKET_RULES = {
    "repeat": {"when peek_recent finds the ticket: skip read_archive"},
    "archive has nothing": {"when read_archive finds nothing: skip ask_vendor"},
    "too new": {"when status is open and age under 45 min: skip ask_vendor"},  # the declared lag, 45 min
    "wrote blind": {"when any task: start with read_archive"},  # the tool that holds every ticket
    "wrong first": {"when any task: start with check_warranty",
                    "when check_warranty finds the ticket: answer; skip ask_vendor"},
}  # fmt: skip


@pytest.mark.parametrize("case", list(TICKET_LOGS))
def test_the_offline_reflector_knows_no_tool_names_status_or_answers(case):
    reflection = reflect(TICKET_LOGS[case], MODEL, TICKET_TOOLS, TICKET_WORDS)
    assert reflection.ok, reflection.reason
    assert set(reflection.rules) == TICKET_RULES[case]
    assert reflection.effective or reflection.ineffective


def test_the_reflector_reads_the_roles_the_tools_declare_not_their_descriptions():
    """The prompt shows each tool's declared roles; a description that merely speaks of a lag or of
    "every" record declares nothing."""
    described = [Tool("ask_vendor", "A claim shows up about 45 minutes after a ticket is opened.", {}, dict),
                 Tool("read_archive", "Every ticket ever filed.", {}, dict)]  # fmt: skip
    prompt = reflection_messages("log", TICKET_TOOLS, TICKET_WORDS)[0]["content"]
    assert "- read_archive (holds every ticket): The archive" in prompt
    assert "- ask_vendor (learns of every ticket 45 min after it is created): Vendor portal" in prompt
    assert "- close_ticket (writes): Close a ticket." in prompt
    assert 'Records are "ticket": status field state, creation time field opened_at' in prompt
    undeclared = reflect(TICKET_LOGS["too new"], MODEL, [TICKET_TOOLS[0], described[0]], TICKET_WORDS)
    assert not any("age under" in rule for rule in undeclared.rules)


def test_offline_reflector_on_a_missing_order():
    missing = next(i for i, t in enumerate(SUITE.tasks) if t.kind == "missing")
    assert (
        "when query_database finds nothing: skip query_payment_api"
        in reflect(log_text(missing), MODEL, TOOLS, WORDS).rules
    )


def test_reask_then_accept():
    model = Scripted("improve performance", VALID)
    reflection = reflect("log", model, TOOLS, WORDS)
    assert reflection.ok and reflection.rounds == 2 and len(model.seen) == 2


def test_give_up_cleanly_after_max_rounds():
    model = Scripted("improve performance", "be faster", "never asked")
    reflection = reflect("log", model, TOOLS, WORDS, max_reflection_rounds=2)
    assert not reflection.ok and len(model.seen) == 2
    assert reflection.rules == ()
    assert reflection.reason.startswith("no reflection after 2 rounds: missing section EFFECTIVE STEPS")


def test_offline_model_shortens_after_a_rejection():
    reflection = reflect(log_text(3), MODEL, TOOLS, WORDS, max_words=10)
    assert reflection.ok and reflection.rounds == 2
    assert all(len(item.split()) <= 10 for item in reflection.effective + reflection.rules + reflection.avoid)


def test_untemplated_advice_is_vague():
    transcript = str(run_react(SUITE.tasks[1], MODEL, TOOLS).messages)
    advice = ask_untemplated(transcript, MODEL)
    assert "improve performance" in advice
    assert any("missing section" in p for p in validate_reflection(advice, WORDS, NAMES))


def test_quick_review():
    """The fast loop's check, with the order desk's words as the loop passes them (``planner.review``)."""
    world = (
        ("status",),
        ow.WRITING_TOOLS,
        (ow.DATABASE,),
        ow.MISSING,
    )  # fields, writers, holds every, missing
    wasteful = run_react(SUITE.tasks[1], MODEL, TOOLS)
    review = quick_review(wasteful, *world)
    assert review == planner.review(SUITE.tasks[1], wasteful, TOOLS, WORDS)
    assert (review.wrong_calls, review.redundant_calls, review.retry) == (1, 2, False)
    assert redundant_steps(wasteful) == [3, 4]
    lost = run_react(SUITE.tasks[1], Scripted(*["thinking..."] * 8), TOOLS)
    review = quick_review(lost, *world)
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
    assert quick_review(clean, *world).reason == "clean run"
    incomplete = run_react(
        SUITE.tasks[0], Scripted(*calls, ModelReply('Final answer: {"amount": 99.5}')), TOOLS
    )
    assert quick_review(incomplete, *world).retry  # no status: the task type's answer field is missing
    assert not quick_review(incomplete).retry  # without the world's answer fields, any answer is complete


def test_an_empty_reflection_is_no_reflection():
    empty = "\n".join(f"{name}:\n- none" for name in SECTIONS)
    assert validate_reflection(empty, WORDS, NAMES) == [
        "empty reflection: name at least one effective or ineffective step"
    ]
    nothing = reflect(log_text(1), MODEL, TOOLS, WORDS, max_words=4)
    assert not nothing.ok and "empty reflection" in nothing.reason
