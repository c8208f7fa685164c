"""Memory guards on a fake clock, with exact numbers: filter, threshold, merge, down-votes, decay,
expiry, retrieval, persistence and the journal."""

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ralph_mini.clock import FakeClock
from ralph_mini.lesson_guards import instance_details
from ralph_mini.log import run_tags, step_tags
from ralph_mini.memory import Memory, MemoryConfig, decay_factor, generalization_confidence
from ralph_mini.memory_file import MemoryFile, MemoryFileError, journal
from ralph_mini.react import Step
from ralph_mini.worlds.orders import WORDS

TYPE = "status"  # the order desk's one task type

SKIP_DB = "when query_local_cache finds the order: skip query_database"
PENDING = "when status is pending and age under 30 min: skip query_payment_api"
START_CACHE = "when any task: start with query_local_cache"


def cache_step(status="paid"):
    return Step(1, None, "query_local_cache", "{}", "ok", f"ok: 2 fields: status={status}, amount=1.0")


def miss_step():
    return Step(
        1, None, "query_local_cache", "{}", "not_found", "not_found: order X is not in the local cache"
    )


@pytest.fixture
def clock():
    return FakeClock()


def test_filter_rejects_instance_details(clock):
    memory = Memory(clock)
    decision, experience = memory.propose(SKIP_DB + " for A123", task_id="T1", run_id="R1", task_type=TYPE)
    assert decision == "rejected: names id A123; rules must hold for every task"
    assert experience is None and memory.experiences == {}
    text = "refund CUST-0042 99.5 on 2025-03-10 TXN-123"
    assert instance_details(text, id_patterns=WORDS.id_formats) == [  # in text order, the world's kinds named
        "customer CUST-0042",
        "amount 99.5",
        "date 2025-03-10",
        "transaction TXN-123",
    ]
    # memory knows no world: its guard finds the same four by their generic shapes
    assert instance_details(text) == ["id CUST-0042", "amount 99.5", "date 2025-03-10", "id TXN-123"]
    decision, _ = memory.propose("always skip the database", task_id="T1", run_id="R1", task_type=TYPE)
    assert decision.startswith("rejected: 'always skip the database' is not a rule")


def test_confidence_closed_form():
    assert [generalization_confidence(SKIP_DB, n) for n in (1, 2, 3)] == [0.5, 2 / 3, 0.75]
    assert generalization_confidence("skip query_database for A123", 9) == 0.0


def test_write_threshold_and_merge(clock):
    memory = Memory(clock, MemoryConfig(confirm_threshold=2, probation=False))  # the candidate stage
    assert (
        memory.propose(SKIP_DB, task_id="T1", run_id="R1", task_type=TYPE)[0]
        == "candidate: 1/2 confirmations"
    )
    assert (
        memory.propose(SKIP_DB, task_id="T1", run_id="R2", task_type=TYPE)[0]
        == "candidate: 1/2 confirmations"
    )  # same task
    assert memory.retrieve({"query_local_cache:found"}) == []  # candidates are never retrieved
    decision, experience = memory.propose(
        "When query_local_cache finds the order: skip query_database.",
        task_id="T2",
        run_id="R3",
        task_type=TYPE,
    )
    assert decision == "written: confirmed in 2 tasks"
    assert len(memory.experiences) == 1  # merged, not stored twice
    assert (experience.confirmations, experience.source_runs, experience.status) == (
        2,
        ["R1", "R2", "R3"],
        "active",
    )
    assert (
        memory.propose(SKIP_DB, task_id="T3", run_id="R4", task_type=TYPE)[0] == "merged: 3 confirming tasks"
    )
    assert experience.confidence == pytest.approx(0.75)


def test_saving_calls_alone_writes_at_once(clock):
    memory = Memory(clock, MemoryConfig(calls_saved_threshold=2))
    assert (
        memory.propose(PENDING, task_id="T1", run_id="R1", task_type=TYPE, calls_saved=1)[0]
        == "on probation: injected from now, votes decide"
    )
    assert (
        memory.propose(PENDING, task_id="T1", run_id="R2", task_type=TYPE, calls_saved=2)[0]
        == "written: saves calls alone"
    )


def active(memory, rule, tasks=2):
    for i in range(tasks):
        memory.propose(rule, task_id=f"T{i}", run_id=f"R{i}", task_type=TYPE)
    return next(e for e in memory.experiences.values() if e.rule == rule)


def test_down_votes_only_when_trigger_fired_and_removal_past_limit(clock):
    memory = Memory(clock, MemoryConfig(max_failures=2))
    experience = active(memory, SKIP_DB)
    assert (
        memory.record_outcome([experience], run_tags([miss_step()], WORDS), correct=False) == []
    )  # did not fire: no blame
    assert memory.record_outcome([experience], run_tags([cache_step()], WORDS), correct=False) == [
        f"down-voted: {SKIP_DB} (1 failures; a wrong answer it could have caused)",
        f"invalidated: {SKIP_DB} (a wrong answer it could have caused since it became active: "
        "what it says does not hold now)",
    ]  # a wrong answer it could have caused: out at once, whatever its past
    assert (experience.status, experience.invalid_from) == ("invalid", "2025-03-10T12:00")
    # the decayed tally alone (the recent-votes and wrong-answer rules off): removed past the limit
    memory = Memory(clock, MemoryConfig(max_failures=2, recent_failures=10**9, max_wrong_answers=10**9))
    experience = active(memory, SKIP_DB)
    assert memory.record_outcome([experience], run_tags([cache_step()], WORDS), correct=False) == [
        f"down-voted: {SKIP_DB} (1 failures; a wrong answer it could have caused)"
    ]
    assert experience.confidence == pytest.approx(2 / 3 * 1 / 2)
    notes = memory.record_outcome([experience], run_tags([cache_step()], WORDS), correct=False)
    assert notes == [
        f"down-voted: {SKIP_DB} (2 failures; a wrong answer it could have caused)",
        f"removed: {SKIP_DB}",
    ]
    assert experience.status == "removed" and experience.invalid_from == "2025-03-10T12:00"
    assert experience.status_reason == "2 failures with it in play; recent votes 1.9 down against 0.0 up"
    assert memory.propose(SKIP_DB, task_id="T9", run_id="R9", task_type=TYPE)[0].startswith(
        "kept out: removed earlier"
    )


def test_a_good_track_record_protects_from_one_failure(clock):
    memory = Memory(clock, MemoryConfig(max_failures=2))
    experience = active(memory, START_CACHE)
    for _ in range(3):
        memory.record_outcome([experience], run_tags([cache_step()], WORDS), correct=True)
    memory.record_outcome([experience], {"any"}, correct=True, wasted=["query_local_cache"])
    assert experience.status == "active" and experience.recent == "++-"  # 1 failure, 3 validations
    k = 0.5**0.2  # each vote keeps this share of the earlier ones (vote_half_life 5)
    up, down = (1 + k + k**2) * k, 1
    assert (experience.votes_up, experience.votes_down) == (pytest.approx(up), pytest.approx(down))
    assert experience.confidence == pytest.approx(5 / 6 * (up + 1) / (up + down + 1))
    # but not from what it does now: a second failure is 2 of its last 3 votes down
    memory.record_outcome([experience], {"any"}, correct=True, wasted=["query_local_cache"])
    assert (experience.status, experience.recent) == ("invalid", "+--")
    assert experience.status_reason == "2 of its last 3 votes down: what it says does not hold now"


def test_decay_closed_form():
    config = MemoryConfig(half_life_days=7, stale_after_days=14, stale_factor=0.5, expire_after_days=30)
    assert decay_factor(0, config) == 1.0
    assert decay_factor(7, config) == 0.5
    assert decay_factor(14, config) == 0.25  # exactly two weeks: not yet stale
    assert decay_factor(15, config) == pytest.approx(0.5 * 0.5 ** (15 / 7))
    assert decay_factor(30, config) == pytest.approx(0.5 * 0.5 ** (30 / 7))
    assert decay_factor(30.01, config) == 0.0


@given(st.floats(0, 60), st.floats(0.5, 30))
def test_decay_matches_its_formula(days, half_life):
    config = MemoryConfig(half_life_days=half_life)
    expected = 0.0 if days > 30 else 0.5 ** (days / half_life) * (0.5 if days > 14 else 1.0)
    assert math.isclose(decay_factor(days, config), expected, rel_tol=1e-12)


def test_weight_decays_and_expires_on_the_clock(clock):
    memory = Memory(clock)
    experience = active(memory, SKIP_DB)  # confidence 2/3, last hit now
    assert memory.weight(experience) == pytest.approx(2 / 3)
    clock.advance(days=7)
    assert memory.weight(experience) == pytest.approx(1 / 3)
    memory.record_hits([experience])  # a hit refreshes the clock
    assert memory.weight(experience) == pytest.approx(2 / 3) and experience.hits == 1
    clock.advance(days=31)
    assert memory.retrieve({"query_local_cache:found"}) == []  # past expiry it weighs 0 ...
    assert experience.status == "active"  # ... but a read changes nothing
    assert memory.sweep() == [experience]  # only an explicit sweep flags it
    assert experience.status == "expired" and experience.status_reason == "not hit for 31 days"
    assert (
        memory.propose(SKIP_DB, task_id="T7", run_id="R7", task_type=TYPE)[0]
        == "written: confirmed in 3 tasks"
    )  # revived


def test_retrieval_by_tag_times_weight(clock):
    memory = Memory(clock)
    start = active(memory, "when any task: start with query_local_cache")
    skip = active(memory, SKIP_DB)
    pending = active(memory, PENDING)
    memory.record_outcome(
        [skip], run_tags([cache_step()], WORDS), correct=True
    )  # a validation raises confidence
    assert memory.retrieve({"any"}) == [start]
    assert step_tags(cache_step("pending"), WORDS) == {"query_local_cache:found", "status:pending"}
    assert memory.retrieve(step_tags(cache_step("pending"), WORDS)) == [skip, pending]
    assert memory.retrieve(step_tags(cache_step("pending"), WORDS), top_k=1) == [skip]
    assert memory.retrieve(step_tags(cache_step("pending"), WORDS), exclude=[skip.id]) == [pending]


def test_persistence_round_trip_and_atomic_file(tmp_path, clock):
    path = tmp_path / "memory.json"
    memory = Memory(clock)
    active(memory, SKIP_DB)
    memory.propose(PENDING, task_id="T1", run_id="R1", task_type=TYPE)
    MemoryFile(path).save(memory)
    again = MemoryFile(path).load(clock)
    assert again.experiences == memory.experiences
    data = json.loads(path.read_text())
    assert (data["format"], data["version"], len(data["experiences"])) == ("ralph_mini.memory", 1, 2)
    assert not (tmp_path / "memory.json.tmp").exists()


def test_update_is_read_modify_write(tmp_path, clock):
    path = tmp_path / "memory.json"
    store = MemoryFile(path)
    store.update(clock, lambda m: m.propose(SKIP_DB, task_id="T1", run_id="R1", task_type=TYPE))
    store.update(clock, lambda m: m.propose(SKIP_DB, task_id="T2", run_id="R2", task_type=TYPE))
    [experience] = store.load(clock).experiences.values()
    assert (experience.status, experience.source_tasks) == ("active", ["T1", "T2"])


@pytest.mark.parametrize(
    ("content", "complaint"),
    [
        ("{not json", "unreadable"),
        ('{"format": "ralph_mini.memory", "version": 99, "experiences": []}', "version 99, expected 1"),
        ('{"format": "something else", "version": 1}', "format 'something else'"),
    ],
)
def test_bad_file_gives_clear_error_and_keeps_a_copy(tmp_path, clock, content, complaint):
    path = tmp_path / "memory.json"
    path.write_text(content)
    with pytest.raises(MemoryFileError, match=complaint) as error:
        MemoryFile(path).load(clock)
    assert "a copy is kept at" in str(error.value)
    assert (tmp_path / "memory.json.unreadable").read_text() == content
    assert path.read_text() == content  # nothing reset


def test_journal(clock):
    memory = Memory(clock)
    active(memory, SKIP_DB)
    memory.propose(PENDING, task_id="T1", run_id="R1", task_type=TYPE)
    clock.advance(days=3)
    text = journal(memory)
    assert text.startswith("# Work journal (2025-03-13)\n\n## Active (1)\n")
    assert (
        f"- **{SKIP_DB}** — weight 0.50, confidence 0.67, 2 tasks, 0 hits, 0 ok / 0 wrong, last hit 3 days ago"
        in text
    )
    assert "## Probation (1)" in text  # proposed once: on probation, weighted and injected
    assert (
        f"- **{PENDING}** — weight 0.37, confidence 0.50, 1 tasks, 0 hits, 0 ok / 0 wrong, last hit 3 days ago; "
        "proposed once: injected, votes decide\n" in text
    )
