"""Learning that holds up (issue 16): credit only where a rule applied, waste counts, recent votes
outweigh old ones, a contradiction invalidates, and one lesson in many wordings is one row."""

import json
import sqlite3
from dataclasses import asdict

import pytest

from ralph_mini.clock import FakeClock
from ralph_mini.log import run_tags, step_tags
from ralph_mini.memory import Memory, MemoryConfig
from ralph_mini.memory_file import MemoryFile, journal
from ralph_mini.react import Step
from ralph_mini.rule_forms import canonical, contradiction, near_duplicate, normalize_wording
from ralph_mini.rules import parse_rule
from ralph_mini.store import Store
from ralph_mini.votes import decayed, trigger_held
from ralph_mini.waste import wasted_calls
from ralph_mini.worlds.orders import WORDS

TYPE = "status"  # the order desk's one task type
CACHE, DB, PAY = "query_local_cache", "query_database", "query_payment_api"
NOW = "2025-03-10 12:00"
UNDER_30 = f"when status is pending and age under 30 min: skip {PAY}"
OVER_30 = f"when status is pending and age over 30 min: call {PAY}"
START_CACHE = f"when any task: start with {CACHE}"
HIT = {"any", f"{CACHE}:found"}  # a run that called the cache, and it had the order


def order_step(index=1, tool=CACHE, status="pending", created="2025-03-10 11:48"):
    observation = f"ok: 3 fields: status={status}, amount=215.0, created_at={created}"
    return Step(index, None, tool, "{}", "ok", observation)


def failed_step(index, tool, status="error"):
    return Step(index, None, tool, "{}", status, f"{status}: it failed")


def active(memory, rule, tasks=2):
    for i in range(tasks):
        _, experience = memory.propose(rule, task_id=f"T{i}-{rule[:12]}", run_id=f"R{i}", task_type=TYPE)
    assert experience.status == "active"
    return experience


# --- credit where the rule applied -------------------------------------------------------------------


def test_age_tags_come_from_created_at_and_the_tasks_time():
    assert step_tags(order_step(), WORDS, NOW) == {f"{CACHE}:found", "status:pending", "age:pending:12"}
    assert step_tags(order_step(), WORDS) == {f"{CACHE}:found", "status:pending"}  # no time given: no age
    assert "age:pending:210" in run_tags([order_step(created="2025-03-10 08:30")], WORDS, NOW)
    assert "age:pending:12" not in step_tags(order_step(), WORDS, "10 March, noon")  # not a time: no age


def test_an_age_trigger_holds_only_for_an_observed_age_on_its_side():
    under, over = parse_rule(UNDER_30), parse_rule(OVER_30)
    fresh, stale = (
        run_tags([order_step()], WORDS, NOW),
        run_tags([order_step(created="2025-03-10 08:30")], WORDS, NOW),
    )
    assert (trigger_held(under, fresh), trigger_held(over, fresh)) == (True, False)
    assert (trigger_held(under, stale), trigger_held(over, stale)) == (False, True)
    assert not trigger_held(under, {"any", "status:pending"})  # pending, but no age seen: not in play


def test_a_rule_is_voted_on_only_where_its_whole_trigger_held():
    memory = Memory(FakeClock())
    under = active(memory, UNDER_30)
    stale = run_tags([order_step(created="2025-03-10 08:30")], WORDS, NOW)  # pending, 210 min old
    assert memory.record_outcome([under], stale, correct=False) == []
    assert (under.validations, under.failures) == (0, 0)  # not in play: neither credit nor blame
    memory.record_outcome([under], run_tags([order_step()], WORDS, NOW), correct=True)
    assert (under.validations, under.failures) == (1, 0)


def test_wasted_calls_count_against_the_rule_that_sent_the_agent_there():
    memory = Memory(FakeClock())
    start, skip = active(memory, START_CACHE), active(memory, f"when {CACHE} finds nothing: call {DB}")
    # the cache is gone: a wrong call to it, then the database answers; the answer is correct
    steps = [failed_step(1, CACHE, "wrong_tool"), order_step(2, DB, "paid")]
    wasted = wasted_calls(steps, redundant=[])
    assert wasted == [CACHE]
    notes = memory.record_outcome([start, skip], run_tags(steps, WORDS, NOW), correct=True, wasted=wasted)
    assert notes == [f"down-voted: {START_CACHE} (1 failures; 1 wasted calls to {CACHE})"]
    assert (start.validations, start.failures) == (0, 1)
    assert (skip.validations, skip.failures) == (0, 0)  # its trigger (a cache miss) never held


def test_a_flaky_tool_that_answers_on_retry_is_not_waste_but_a_redundant_call_is():
    steps = [
        order_step(1),
        failed_step(2, PAY),
        Step(3, None, PAY, "{}", "ok", "ok: 1 fields: payment_status=captured"),
    ]
    assert wasted_calls(steps, redundant=[]) == []
    assert wasted_calls(steps, redundant=[3]) == []  # redundant for the answer, but it brought news
    again = steps + [Step(4, None, PAY, "{}", "ok", "ok: 1 fields: payment_status=captured")]
    assert wasted_calls(again, redundant=[4]) == [PAY]  # a repeat of what was known: waste
    miss = Step(5, None, DB, "{}", "not_found", "not_found: no such order")
    assert wasted_calls([*steps, miss], redundant=[5]) == [DB]  # nothing found after the order was
    assert wasted_calls([order_step(1), failed_step(2, PAY)], redundant=[]) == [PAY]


def test_a_rule_that_only_wastes_calls_is_voted_out():
    memory = Memory(FakeClock())
    over_general = active(memory, f"when any task: call {PAY}")
    for _ in range(2):
        memory.record_outcome([over_general], {"any"}, correct=True, wasted=[PAY])
    assert over_general.status == "invalid" and over_general.invalid_from == "2025-03-10T12:00"
    assert over_general.status_reason == "2 of its last 2 votes down: what it says does not hold now"
    assert memory.retrieve({"any"}) == []


# --- recent evidence outweighs old --------------------------------------------------------------------


def test_votes_decay_by_votes():
    assert decayed(0.0, 0.0, True, 5) == (1.0, 0.0)
    assert decayed(1.0, 0.0, False, 5) == (0.870551, 1.0)
    up, down = 1.0, 0.0
    for _ in range(5):  # five later votes: the first one counts half
        up, down = decayed(up, down, False, 5)
    assert up == pytest.approx(0.5, abs=1e-5)


@pytest.mark.parametrize(
    ("config", "failures", "status", "why"),
    [
        (MemoryConfig(), 2, "invalid", "2 of its last 3 votes down: what it says does not hold now"),
        # the decayed tally alone (issue 16, before the recent-votes rule): five
        (
            MemoryConfig(recent_failures=10**9, max_wrong_answers=10**9),
            5,
            "removed",
            "5 failures with it in play; recent votes 3.9 down against 3.7 up",
        ),
    ],
)
def test_a_once_good_rule_is_voted_out_two_tasks_after_the_world_changes(config, failures, status, why):
    """The issue's case: 23 validations, then the cache disappears and every run wastes a call on it."""
    memory = Memory(FakeClock(), config)
    rule = active(memory, START_CACHE)
    for _ in range(23):
        memory.record_outcome([rule], HIT, correct=True)
    assert rule.votes_up == pytest.approx(7.41, abs=0.01)
    failures_to_removal = 0
    while rule.status == "active" and failures_to_removal < 50:
        memory.record_outcome([rule], {"any"}, correct=True, wasted=[CACHE])
        failures_to_removal += 1
    assert failures_to_removal == failures and (rule.validations, rule.failures) == (23, failures)
    assert (rule.status, rule.status_reason) == (status, why)


def test_a_rule_whose_tool_is_gone_is_voted_out_too():
    """The cache is gone from the tool list: the model cannot follow 'start with' it, wastes nothing."""
    memory = Memory(FakeClock())
    rule = active(memory, START_CACHE)
    for _ in range(23):
        memory.record_outcome([rule], HIT, correct=True, offered=[CACHE, DB])
    seen = {"any", f"{DB}:found"}
    assert memory.record_outcome([rule], seen, correct=True, offered=[CACHE, DB]) == []
    assert (rule.validations, rule.failures) == (23, 0)  # offered, not called: not followed, no vote
    notes = [memory.record_outcome([rule], seen, correct=True, offered=[DB, PAY]) for _ in range(5)]
    assert notes[0] == [f"down-voted: {START_CACHE} (1 failures; {CACHE} not offered)"]
    assert notes[1][-1] == (
        f"invalidated: {START_CACHE} (2 of its last 3 votes down: what it says does not hold now)"
    )
    assert rule.status == "invalid" and notes[2:] == [[], [], []]  # out: no more votes


def test_plain_counts_would_have_kept_it_for_24_failures():
    # no decay: counts; and the tally alone (the recent-votes rule would end it at 2, counts or not)
    memory = Memory(FakeClock(), MemoryConfig(vote_half_life=1e12, recent_failures=10**9))
    rule = active(memory, START_CACHE)
    for _ in range(23):
        memory.record_outcome([rule], HIT, correct=True)
    for _ in range(23):
        memory.record_outcome([rule], {"any"}, correct=True, wasted=[CACHE])
    assert rule.status == "active"  # 23 against 23: still in; the 24th removes it
    memory.record_outcome([rule], {"any"}, correct=True, wasted=[CACHE])
    assert rule.status == "removed"


def test_a_wrong_answer_counts_only_against_rules_that_could_have_caused_it():
    memory = Memory(FakeClock())
    start = active(memory, START_CACHE)  # only adds a lookup
    skip = active(memory, f"when {CACHE} finds the order: skip {DB}")
    answer = active(memory, f"when {CACHE} finds the order: answer")
    hit = [order_step(1, CACHE, "paid")]
    notes = memory.record_outcome([start, skip, answer], run_tags(hit, WORDS, NOW), correct=False)
    assert [n.split(" (")[0] for n in notes] == [
        f"down-voted: {skip.rule}", f"invalidated: {skip.rule}",
        f"down-voted: {answer.rule}", f"invalidated: {answer.rule}",
    ]  # fmt: skip
    assert (skip.status, answer.status, start.status) == ("invalid", "invalid", "active")
    assert (start.validations, start.failures) == (0, 0)  # no vote: it withheld nothing
    fresh = Memory(FakeClock())
    skip = active(fresh, skip.rule)
    checked = hit + [order_step(2, DB, "paid")]  # the database was called after all: skip was not obeyed
    assert fresh.record_outcome([skip], run_tags(checked, WORDS, NOW), correct=False) == []
    assert (skip.failures, skip.status) == (0, "active")


# --- contradiction invalidates ------------------------------------------------------------------------


def test_contradictions_are_same_trigger_opposite_action():
    def why(a, b):
        return contradiction(parse_rule(a), parse_rule(b))

    assert why(f"when any task: skip {CACHE}", START_CACHE) == f"skip {CACHE} against start with {CACHE}"
    assert (
        why(f"when any task: start with {DB}", START_CACHE) == f"start with {DB} against start with {CACHE}"
    )
    assert why("when status is pending and age over 30 min: answer", OVER_30) == f"answer against call {PAY}"
    assert why(f"when status is pending: skip {PAY}", OVER_30) == ""  # another trigger: an exception
    assert (
        why(f"when {CACHE} finds the order: skip {DB}", f"when {CACHE} finds the order: answer; skip {DB}")
        == ""
    )


def test_a_new_contradicting_rule_invalidates_the_old_one_which_stays_in_the_journal():
    clock = FakeClock()
    memory = Memory(clock)
    old = active(memory, START_CACHE)
    assert old.valid_from == "2025-03-10T12:00" and old.invalid_from is None
    clock.advance(hours=6)
    _, rival = memory.propose(f"when any task: start with {DB}", task_id="T7", run_id="R7", task_type=TYPE)
    assert (old.status, rival.status) == ("active", "probation")  # a rule on probation invalidates nothing
    decision, new = memory.propose(
        f"when any task: start with {DB}", task_id="T8", run_id="R8", task_type=TYPE
    )
    assert decision == f"written: confirmed in 2 tasks; invalidated: {START_CACHE}"
    assert (old.status, old.invalid_from, new.valid_from) == (
        "invalid",
        "2025-03-10T18:00",
        "2025-03-10T18:00",
    )
    assert (
        old.status_reason
        == f"contradicted by 'when any task: start with {DB}' (start with {DB} against start with {CACHE})"
    )
    assert memory.retrieve({"any"}) == [new]  # an invalid rule is never retrieved
    assert old.id in memory.experiences  # kept, never deleted
    text = journal(memory)
    assert "## Invalid (1)" in text and "invalid from 2025-03-10T18:00" in text
    # it comes back only when new tasks confirm it again, and then it invalidates the other one
    assert memory.propose(START_CACHE, task_id="T9", run_id="R9", task_type=TYPE)[0].startswith(
        "kept invalid: contradicted"
    )
    decision, _ = memory.propose(START_CACHE, task_id="T10", run_id="R10", task_type=TYPE)
    assert decision == f"written: confirmed in 2 tasks; invalidated: when any task: start with {DB}"
    assert (old.status, old.invalid_from, new.status) == ("active", None, "invalid")


def test_rules_of_other_task_types_do_not_contradict():
    memory = Memory(FakeClock())
    for tool, kind in ((CACHE, TYPE), ("get_shipping_status", "delivery")):
        for task in ("T1", "T2"):
            memory.propose(f"when any task: start with {tool}", task_id=task, run_id=task, task_type=kind)
    assert [e.status for e in memory.experiences.values()] == ["active", "active"]
    for task in ("T3", "T4"):  # the same rule learned on the other type is a row of its own
        memory.propose(f"when any task: start with {CACHE}", task_id=task, run_id=task, task_type="delivery")
    assert sorted((e.task_type, e.rule) for e in memory.experiences.values()) == [
        ("delivery", "when any task: start with get_shipping_status"),
        ("delivery", f"when any task: start with {CACHE}"),
        (TYPE, f"when any task: start with {CACHE}"),
    ]


# --- semantic dedup -----------------------------------------------------------------------------------

SEVEN_WORDINGS = [  # two lessons
    f"when {CACHE} finds the order: answer; skip {DB}",
    f"When {CACHE} finds the order: skip {DB}; answer.",
    f"- if {CACHE} finds the order, skip {DB} and answer",
    f"when {CACHE} finds the order: answer; skip {DB}; answer",
    START_CACHE,
    f"Always call {CACHE} first",
    f"when every task: start with {CACHE}",
]


def test_seven_wordings_of_two_lessons_are_two_rows():
    memory = Memory(FakeClock())
    for i, wording in enumerate(SEVEN_WORDINGS):
        memory.propose(wording, task_id=f"T{i}", run_id=f"R{i}", task_type=TYPE)
    rows = sorted((e.rule, e.confirmations, e.status) for e in memory.experiences.values())
    assert rows == [
        (START_CACHE, 3, "active"),
        (f"when {CACHE} finds the order: answer; skip {DB}", 4, "active"),
    ]


def test_normal_forms():
    assert normalize_wording(f"never call {PAY}") == f"when any task: skip {PAY}"
    assert normalize_wording(OVER_30) == OVER_30  # in the grammar already: untouched
    rule = canonical(parse_rule(f"when any task: start with {CACHE}; skip {PAY}; call {DB}; skip {PAY}"))
    assert str(rule) == f"when any task: skip {PAY}; call {DB}; start with {CACHE}"


def test_near_duplicates_merge_and_distant_numbers_do_not():
    def near(a, b):
        return near_duplicate(parse_rule(a), parse_rule(b))

    assert near(UNDER_30, UNDER_30.replace("30", "25"))  # 5 <= 20% of 30
    assert not near(UNDER_30, UNDER_30.replace("30", "90"))  # the settlement lag really changed
    assert not near(UNDER_30, OVER_30.replace("call", "skip"))  # the other side of the limit
    memory = Memory(FakeClock())
    memory.propose(UNDER_30, task_id="T1", run_id="R1", task_type=TYPE)
    decision, experience = memory.propose(
        UNDER_30.replace("30", "25"), task_id="T2", run_id="R2", task_type=TYPE
    )
    assert decision == "written: confirmed in 2 tasks" and experience.rule == UNDER_30
    assert len(memory.experiences) == 1


# --- the new fields on disk ---------------------------------------------------------------------------


def voted_memory() -> Memory:
    memory = Memory(FakeClock())
    rule = active(memory, START_CACHE)
    memory.record_outcome([rule], HIT, correct=True)
    memory.record_outcome([rule], {"any"}, correct=True, wasted=[CACHE])
    active(memory, f"when any task: start with {DB}")  # invalidates the first
    return memory


def test_new_fields_round_trip_through_the_json_file_and_the_store(tmp_path):
    memory = voted_memory()
    MemoryFile(tmp_path / "m.json").save(memory)
    assert MemoryFile(tmp_path / "m.json").load(FakeClock()).experiences == memory.experiences
    store = Store(tmp_path / "s.sqlite")
    store.save_lessons(memory.experiences.values())
    assert Store(tmp_path / "s.sqlite").load_memory(FakeClock()).experiences == memory.experiences


def test_files_written_before_the_new_fields_still_load(tmp_path):
    memory = voted_memory()
    data = {"format": "ralph_mini.memory", "version": 1, "experiences": []}
    for e in memory.experiences.values():
        new = ("valid_from", "invalid_from", "votes_up", "votes_down", "recent", "wrong_answers")
        row = {k: v for k, v in asdict(e).items() if k not in new}
        data["experiences"].append(row)
    (tmp_path / "old.json").write_text(json.dumps(data))
    loaded = MemoryFile(tmp_path / "old.json").load(FakeClock()).experiences
    first = loaded[next(iter(loaded))]
    assert (first.votes_up, first.votes_down, first.invalid_from) == (1.0, 1.0, None)  # from the counts
    assert (first.recent, first.wrong_answers) == ("", 0)  # no recent votes known: judged from now on

    store = Store(tmp_path / "old.sqlite")
    store.save_lessons(memory.experiences.values())
    store.close()
    db = sqlite3.connect(tmp_path / "old.sqlite")
    db.execute("ALTER TABLE lessons DROP COLUMN votes_up")  # a file made before the votes columns
    db.execute("ALTER TABLE lessons DROP COLUMN votes_down")
    db.execute("ALTER TABLE lessons DROP COLUMN recent")  # and before issue 24's
    db.execute("ALTER TABLE lessons DROP COLUMN wrong_answers")
    db.commit()
    db.close()
    again = Store(tmp_path / "old.sqlite").load_memory(FakeClock()).experiences
    first = again[next(iter(again))]
    assert (first.votes_up, first.votes_down, first.status) == (1.0, 1.0, "invalid")
    assert (first.recent, first.wrong_answers) == ("", 0)  # NULL in the old rows
    Store(tmp_path / "old.sqlite").save_lessons(memory.experiences.values())  # and it takes writes
