"""Learning that holds up, part two (issue 16): one definition of waste, counterexamples, tools that
are gone, rules learned from a rejected answer, the mid-run retrieval, and the scenario targets."""

from ralph_mini.clock import FakeClock
from ralph_mini.log import run_tags
from ralph_mini.memory import Memory, MemoryConfig
from ralph_mini.planner import held_first, rule_vocabulary
from ralph_mini.react import Step, Trace
from ralph_mini.rule_forms import contradiction, narrower
from ralph_mini.rules import parse_rule
from ralph_mini.scenario_bench import ARMS, FULL, paired_rows, run_arm
from ralph_mini.tools import Tool
from ralph_mini.waste import covered_steps, redundant_steps, run_waste, wasted_calls
from ralph_mini.worlds.orders import WORDS, make_suite
from ralph_mini.worlds.shop.scenarios import BAD_LESSONS, DRIFT

CACHE, DB, PAY = "query_local_cache", "query_database", "query_payment_api"
NOW = "2025-03-10 12:00"
TYPE = "status"  # the order desk's task type
PAID_DB = "ok: 5 fields: status=paid, amount=99.5, created_at=2025-03-08 10:01, payment_method=card, paid_at=2025-03-08 10:06"
PAID_CACHE = "ok: 4 fields: status=paid, amount=99.5, created_at=2025-03-08 10:01, paid_at=2025-03-08 10:06"
PROVIDER = "ok: 3 fields: payment_status=captured, txn_id=TXN-1, settled_at=2025-03-08 10:06"
PENDING_DB = "ok: 4 fields: status=pending, amount=62.0, created_at=2025-03-10 11:00, payment_method=card"
TASK = make_suite(n=1, seed=7).tasks[0]


def trace(steps: list[tuple[str, str]], answer: dict) -> Trace:
    done = [Step(i, None, tool, "{}", obs.split(":")[0], obs) for i, (tool, obs) in enumerate(steps, 1)]
    return Trace(TASK, [], steps=done, answer=answer)


PAID = {"order_id": "A123", "status": "paid", "amount": 99.5, "paid_at": "2025-03-08 10:06"}


# --- one definition of waste --------------------------------------------------------------------------


def test_a_call_whose_answer_values_another_call_also_gave_is_covered_even_when_it_came_first():
    slow_first = trace([(PAY, PROVIDER), (DB, PAID_DB)], PAID)
    assert covered_steps(slow_first) == [1]  # the database gave the payment time and more
    assert run_waste(slow_first) == [1]
    assert wasted_calls(slow_first.steps, redundant_steps(slow_first), covered_steps(slow_first)) == [PAY]


def test_a_double_check_is_the_later_call_and_a_needed_pair_is_no_waste():
    double = trace([(CACHE, PAID_CACHE), (DB, PAID_DB)], PAID)
    assert run_waste(double) == [2]  # the same answer values, later
    settled = {
        "order_id": "P1",
        "status": "paid",
        "amount": 62.0,
        "paid_at": "2025-03-08 10:06",
        "txn_id": "TXN-1",
    }
    pair = trace([(DB, PENDING_DB), (PAY, PROVIDER)], settled)
    assert (covered_steps(pair), run_waste(pair)) == ([], [])  # amount from one, payment from the other


def test_a_look_up_no_answer_value_came_from_is_not_judged_covered():
    refund = trace([(DB, PAID_DB), (PAY, PROVIDER)], {"order_id": "A123", "refund": "done"})
    assert covered_steps(refund) == []
    assert run_waste(refund) == []  # no shared field names: only repeats would be waste


# --- counterexamples and invalidation -----------------------------------------------------------------


def test_a_narrower_rule_with_an_opposite_action_is_a_counterexample_to_a_wider_one():
    def why(new, old):
        return contradiction(parse_rule(new), parse_rule(old))

    over = f"when status is pending and age over 30 min: call {PAY}"
    assert why(over, "when status is pending: answer") == f"call {PAY} against answer"
    assert why("when status is pending: answer", over) == ""  # a wider new rule: the old may be its exception
    assert (
        why(f"when status is paid: skip {PAY}", f"when any task: call {PAY}")
        == f"skip {PAY} against call {PAY}"
    )
    assert why(f"when {PAY} finds the order: answer", f"when any task: call {PAY}") == ""  # it was called
    assert why(f"when status is paid: skip {PAY}", f"when any task: start with {CACHE}") == ""
    assert narrower(parse_rule(f"when status is pending and age over 90 min: call {PAY}").trigger,
                    parse_rule(over).trigger)  # fmt: skip
    assert not narrower(parse_rule(f"when status is paid: skip {PAY}").trigger, parse_rule(over).trigger)


def active(memory: Memory, rule: str, prefix: str = "S") -> None:
    for n in (1, 2):
        memory.propose(rule, task_id=f"{prefix}{n}", run_id="seed", task_type=TYPE)


def test_a_new_task_confirming_an_active_rule_invalidates_the_wider_rule_it_contradicts():
    memory = Memory(FakeClock())
    over = f"when status is pending and age over 30 min: call {PAY}"
    active(memory, over)
    active(memory, "when status is pending: answer")  # wider, newer: kept, the votes would decide
    assert len(memory.active()) == 2
    decision, _ = memory.propose(over, task_id="T3", run_id="R3", task_type=TYPE)
    assert decision == "merged: 3 confirming tasks; invalidated: when status is pending: answer"
    wide = next(e for e in memory.experiences.values() if e.rule == "when status is pending: answer")
    assert wide.status == "invalid" and "contradicted by" in wide.status_reason and wide.invalid_from
    memory.propose(over, task_id="T3", run_id="R3b", task_type=TYPE)  # the same task again is no new evidence
    assert [e.status for e in memory.experiences.values()] == ["active", "invalid"]


def test_a_tool_the_world_no_longer_offers_invalidates_the_rules_that_send_the_agent_to_it():
    memory = Memory(FakeClock())
    active(memory, f"when any task: start with {CACHE}")
    active(memory, f"when {CACHE} finds the order: skip {DB}")  # sends nowhere: harmless, kept
    active(memory, f"when any task: start with {CACHE}", prefix="R")
    notes = memory.invalidate_unoffered([DB, PAY], TYPE)
    assert notes == [f"invalidated: when any task: start with {CACHE} ({CACHE} no longer offered)"]
    assert memory.invalidate_unoffered([DB, PAY], "refund") == []  # another type's lessons are its own
    assert memory.invalidate_unoffered([CACHE, DB], TYPE) == []  # it does not come back by itself
    memory.propose(f"when any task: start with {CACHE}", task_id="T9", run_id="R9", task_type=TYPE)
    memory.propose(f"when any task: start with {CACHE}", task_id="T10", run_id="R10", task_type=TYPE)
    assert sorted(e.status for e in memory.experiences.values()) == ["active", "active"]


def test_a_rule_reflected_from_a_rejected_answer_is_written_at_once_unless_switched_off():
    rule = f"when any task: start with {DB}"
    decision, experience = Memory(FakeClock()).propose(
        rule, task_id="T1", run_id="R1", rejected=True, task_type=TYPE
    )
    assert (decision, experience.status) == ("written: learned from a rejected answer", "active")
    off = Memory(FakeClock(), MemoryConfig(write_after_rejection=False))
    assert (
        off.propose(rule, task_id="T1", run_id="R1", rejected=True, task_type=TYPE)[1].status == "probation"
    )  # switched off, a rejected answer's rule is proposed once like any other: on probation, not active
    assert (
        Memory(FakeClock()).propose(rule, task_id="T1", run_id="R1", task_type=TYPE)[1].status == "probation"
    )
    waiting = Memory(FakeClock(), MemoryConfig(write_after_rejection=False, probation=False))
    assert (
        waiting.propose(rule, task_id="T1", run_id="R1", rejected=True, task_type=TYPE)[1].status
        == "candidate"
    )


# --- the mid-run retrieval ----------------------------------------------------------------------------


def test_mid_run_matches_are_those_whose_whole_trigger_held_most_specific_first():
    memory = Memory(FakeClock())
    rules = [f"when {CACHE} finds the order: skip {DB}", f"when status is pending and age over 30 min: call {PAY}",
             f"when status is pending and age under 30 min: skip {PAY}", f"when status is pending: skip {DB}"]  # fmt: skip
    for rule in rules:
        active(memory, rule)
    step = Step(
        1, None, CACHE, "{}", "ok", "ok: 3 fields: status=pending, amount=215.0, created_at=2025-03-10 11:00"
    )
    tags = run_tags([step], WORDS, NOW)  # pending, 60 minutes old
    found = held_first(memory.retrieve(tags, 10), tags)
    assert [e.rule for e in found] == [rules[1], rules[3], rules[0]]  # 'under 30 min' did not hold


# --- the scenario targets (the numbers are in notebook 09 and the README) ------------------------------


def test_noisy_memory_every_bad_lesson_is_inactive_within_ten_tasks():
    run = run_arm("noisy", FULL)
    bad = {e.rule: e for e in run.memory.experiences.values() if e.rule in BAD_LESSONS}
    assert len(bad) == 3 and all(e.status != "active" for e in bad.values())
    for e in bad.values():  # ended by task 10: the scenario's clock runs 6 h a task
        assert e.invalid_from is None or e.invalid_from <= "2025-03-12T18:00"


def test_drift_the_rule_that_names_the_vanished_cache_is_invalid_within_ten_tasks():
    run = run_arm("drift", FULL)
    gone = DRIFT[0].at
    notes = [n for r in run.results[gone - 1 : gone + 9] for n in r.memory_notes]
    assert f"invalidated: when any task: start with {CACHE} ({CACHE} no longer offered)" in notes


def test_rephrased_held_out_wordings_cost_what_the_trained_ones_cost():
    rows = paired_rows(run_arm("rephrased", FULL))
    trained = next(r for r in rows if r["wording"] == "trained phrasings")
    for row in rows:
        assert row["calls vs trained"] <= 1.05 and row["correct"] == trained["correct"]


def test_without_the_write_threshold_a_one_off_special_case_invalidates_a_good_rule():
    unguarded = run_arm("noisy", next(a for a in ARMS if a.name == "no write threshold"))
    special = next(e for e in unguarded.memory.experiences.values() if e.rule == BAD_LESSONS[2])
    assert special.status == "active" and special.confirmations == 1  # one odd task was enough
    guarded = run_arm("noisy", FULL)
    assert not unguarded.records[2].correct and guarded.records[2].correct  # a stale pending order


def test_the_rule_vocabulary_is_what_the_world_declares_on_its_tools():
    def lookup(name: str, statuses: tuple[str, ...] = ()) -> Tool:
        return Tool(name, f"{name}: a look-up.", {}, dict, statuses=statuses)

    tickets = [lookup("peek_recent", ("open", "closed")), lookup("read_archive", ("open", "closed", "lost")),
               Tool("close_ticket", "Close a ticket.", {}, dict, writes=True)]  # fmt: skip
    assert rule_vocabulary(tickets) == (("peek_recent", "read_archive"), ("open", "closed", "lost"))
    shop = make_suite(n=1, seed=7).world.tools()
    tools, statuses = rule_vocabulary(shop)
    assert "refund_order" not in tools and "query_local_cache" in tools
    assert statuses == ("paid", "pending", "refunded", "payment_failed", "not_found")
