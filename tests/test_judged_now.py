"""Learning that holds on cases nobody tuned to (issue 24): a rule is judged by what it does now, a new
rule is on probation, memory quarantines what it cannot read, one instance filter everywhere, loop
detection by meaning, only evidence teaches, and every mechanism keeps its place cell by cell.

In the order of the modules: votes and memory, rule_forms, the threshold and stale scenarios, the bad
lessons benchmark, quarantine (memory, file, store, reflector, journal, widgets), lesson_guards, react,
world/loop/learn/review, ablation_grid.
"""

import dataclasses
import importlib.util
import json
from functools import cache
from pathlib import Path

import pytest
from fakes import ScriptedModel
from hypothesis import given
from hypothesis import strategies as st

from ralph_mini import ablation_grid
from ralph_mini.clock import FakeClock
from ralph_mini.experience import LIVE, Experience
from ralph_mini.hardening import canonical_arguments
from ralph_mini.learn import wants_slow_loop
from ralph_mini.lesson_guards import Vocabulary, instance_details
from ralph_mini.log import run_tags
from ralph_mini.loop import LoopConfig, run_task
from ralph_mini.memory import Memory, MemoryConfig
from ralph_mini.memory_file import MemoryFile, journal
from ralph_mini.model import ModelReply, ToolCall
from ralph_mini.offline import OfflineModel
from ralph_mini.planner import review
from ralph_mini.react import run_react
from ralph_mini.reflect import validate_reflection
from ralph_mini.retrieval import Retriever
from ralph_mini.rule_forms import contradiction, renumbered
from ralph_mini.rules import parse_rule
from ralph_mini.scenario_bench import BARE, FULL, run_arm
from ralph_mini.store import Store
from ralph_mini.tools import tool
from ralph_mini.votes import trigger_held, trigger_tag
from ralph_mini.widgets import MemoryInspector, memory_rows
from ralph_mini.world import grade
from ralph_mini.worlds import orders
from ralph_mini.worlds.shop.scenarios import STALE, THRESHOLD

ROOT = Path(__file__).resolve().parents[1]
CACHE, DB, PAY = "query_local_cache", "query_database", "query_payment_api"
TYPE = "status"  # the order desk's task type
SUITE = orders.make_suite(n=50, seed=7)
TOOLS = SUITE.world.tools()
TASK = SUITE.tasks[0]  # A123: paid, in the cache
RIGHT = 'Final answer: {"status": "paid", "amount": 99.5, "paid_at": "2025-03-10 09:13"}'  # TASK's truth
SKIP_DB = f"when {CACHE} finds the order: skip {DB}"
OVER_30 = f"when status is pending and age over 30 min: call {PAY}"
OVER_120 = f"when status is pending and age over 120 min: call {PAY}"


def offline():
    return OfflineModel(habits=orders.HABITS)


def active(memory: Memory, rule: str, task_type: str = TYPE) -> Experience:
    for n in (1, 2):
        _, experience = memory.propose(rule, task_id=f"S{n}", run_id="seed", task_type=task_type)
    assert experience.status == "active"
    return experience


def ask(tool_name: str, arguments: str = '{"order_id": "A123"}', id_: str = "c1") -> ModelReply:
    return ModelReply(None, (ToolCall(id_, tool_name, arguments),))


# --- votes and memory: probation, judged by what it does now ------------------------------------------


def test_a_rule_proposed_once_is_on_probation_live_and_ended_by_its_first_down_vote():
    memory = Memory(FakeClock())
    decision, e = memory.propose(SKIP_DB, task_id="T1", run_id="R1", task_type=TYPE)
    assert (decision, e.status) == ("on probation: injected from now, votes decide", "probation")
    assert memory.live() == [e] and memory.retrieve({f"{CACHE}:found"}) == [e]  # weighted and retrieved
    assert memory.weight(e) == pytest.approx(0.5)  # one confirmation: confidence 1/2
    notes = memory.record_outcome([e], {"any", f"{CACHE}:found"}, correct=False)  # a wrong answer
    assert notes[-1] == f"invalidated: {SKIP_DB} (failed on probation: what it says does not hold now)"
    assert (e.status, e.confirmations) == ("invalid", 0) and memory.retrieve({f"{CACHE}:found"}) == []


def test_a_rule_on_probation_is_made_active_by_its_first_validated_run():
    memory = Memory(FakeClock())
    _, e = memory.propose(SKIP_DB, task_id="T1", run_id="R1", task_type=TYPE)
    notes = memory.record_outcome([e], {"any", f"{CACHE}:found"}, correct=True)
    assert notes == [f"active: {SKIP_DB} (validated on probation)"]
    assert (e.status, e.valid_from, e.recent) == ("active", "2025-03-10T12:00", "+")


def test_an_active_rule_is_invalid_at_two_down_of_its_last_three_votes_or_one_wrong_answer():
    memory = Memory(FakeClock())
    start = active(memory, f"when any task: start with {CACHE}")
    for _ in range(10):  # a long good record ...
        memory.record_outcome([start], {"any", f"{CACHE}:found"}, correct=True)
    memory.record_outcome([start], {"any"}, correct=True, wasted=[CACHE])
    memory.record_outcome([start], {"any", f"{CACHE}:found"}, correct=True)
    assert (start.status, start.recent) == ("active", "+-+")  # ... one waste is forgiven
    memory.record_outcome([start], {"any"}, correct=True, wasted=[CACHE])
    assert (start.status, start.recent) == ("invalid", "-+-")  # 2 of its last 3 down, past 11 ups
    skip = active(memory, SKIP_DB)
    for _ in range(10):
        memory.record_outcome([skip], {"any", f"{CACHE}:found"}, correct=True)
    memory.record_outcome([skip], {"any", f"{CACHE}:found"}, correct=False)  # a wrong answer it could cause
    assert skip.status == "invalid" and skip.status_reason.startswith("a wrong answer it could have caused")


def test_a_call_rule_pays_when_its_tool_had_nothing_that_another_found_and_a_start_rule_does_not():
    """'call T' claims T has something: a run where T had nothing and another tool found the record is
    a down-vote. A miss everywhere (no such order) says nothing against it; nor does a miss of the tool a
    'start with' rule puts first (the cache first: a good start misses too)."""
    memory = Memory(FakeClock())
    call = active(memory, f"when any task: call {PAY}")
    start = active(memory, f"when any task: start with {CACHE}")
    notes = memory.record_outcome([call, start], {"any", f"{PAY}:nothing", f"{CACHE}:nothing", f"{DB}:found"},
                                  correct=True)  # fmt: skip
    assert notes == [f"down-voted: when any task: call {PAY} (1 failures; called {PAY}, which had nothing "
                     "another tool found)"]  # fmt: skip
    assert (call.recent, start.recent) == ("-", "+")
    memory.record_outcome([call], {"any", f"{PAY}:nothing", f"{DB}:nothing"}, correct=True)  # no such order
    memory.record_outcome([call], {"any", f"{PAY}:found", f"{DB}:found"}, correct=True)  # it had something
    assert (call.recent, call.status) == ("-++", "active")


def test_a_start_rule_pays_for_a_miss_only_when_a_faster_tool_found_the_record():
    """Starting with the slow provider, which had nothing the fast cache had: down. Starting with the
    cache, which missed where the slower database found it: its price, an up-vote. Without the tools'
    latencies no start is judged by speed."""
    latency = {tool.name: tool.latency_s for tool in TOOLS}
    assert latency[CACHE] < latency[DB] < latency[PAY]
    memory, other = Memory(FakeClock()), Memory(FakeClock())  # two starts in one memory contradict
    slow = active(memory, f"when any task: start with {PAY}")
    cheap = active(other, f"when any task: start with {CACHE}")
    missed_slow = {"any", f"{PAY}:nothing", f"{CACHE}:found"}
    notes = memory.record_outcome([slow], missed_slow, correct=True, latency=latency)
    assert notes == [f"down-voted: when any task: start with {PAY} (1 failures; started with {PAY}, which "
                     "had nothing a faster tool found)"]  # fmt: skip
    other.record_outcome([cheap], {"any", f"{CACHE}:nothing", f"{DB}:found"}, correct=True, latency=latency)
    memory.record_outcome([slow], missed_slow, correct=True)  # latencies not known
    assert (slow.recent, cheap.recent) == ("-+", "+")


def test_only_an_active_rule_invalidates_its_rivals_and_a_tool_gone_ends_probation_too():
    memory = Memory(FakeClock())
    old = active(memory, f"when any task: start with {CACHE}")
    _, new = memory.propose(f"when any task: start with {DB}", task_id="T3", run_id="R3", task_type=TYPE)
    assert (old.status, new.status) == ("active", "probation")  # on probation it contradicts nothing
    memory.record_outcome([old], {"any", f"{CACHE}:found"}, correct=True)  # the active one proves itself
    assert (old.status, new.status) == ("active", "invalid")
    assert new.status_reason.startswith(f"contradicted by 'when any task: start with {CACHE}'")
    _, waiting = memory.propose(f"when any task: call {PAY}", task_id="T4", run_id="R4", task_type=TYPE)
    assert memory.invalidate_unoffered([CACHE, DB], TYPE) == [
        f"invalidated: when any task: call {PAY} ({PAY} no longer offered)"
    ]
    assert waiting.status == "invalid"


def test_without_probation_a_rule_waits_unseen_as_a_candidate():
    memory = Memory(FakeClock(), MemoryConfig(probation=False))
    decision, e = memory.propose(SKIP_DB, task_id="T1", run_id="R1", task_type=TYPE)
    assert (decision, e.status) == ("candidate: 1/2 confirmations", "candidate")
    assert memory.live() == [] and memory.retrieve({f"{CACHE}:found"}) == []


# --- rule_forms: a new threshold replaces the old ------------------------------------------------------


def test_the_same_rule_with_another_threshold_is_renumbered_beyond_the_near_duplicate_tolerance():
    def r(text):
        return parse_rule(text)

    assert renumbered(r(OVER_120), r(OVER_30)) and renumbered(r(OVER_30), r(OVER_120))
    assert contradiction(r(OVER_120), r(OVER_30)) == "the threshold is 120 min now, not 30"
    assert not renumbered(r(OVER_30.replace("30", "35")), r(OVER_30))  # within 20%: a near duplicate
    assert not renumbered(r(OVER_120.replace("call", "skip")), r(OVER_30))  # other actions
    assert not renumbered(r(OVER_120.replace("over", "under")), r(OVER_30))  # the other side
    assert not renumbered(r(OVER_120.replace("pending", "paid")), r(OVER_30))  # another status
    assert not renumbered(r(f"when status is pending: call {PAY}"), r(OVER_30))  # no threshold


def test_memory_replaces_the_old_threshold_when_the_new_one_becomes_active():
    memory = Memory(FakeClock())
    old = active(memory, OVER_30)
    _, new = memory.propose(OVER_120, task_id="T3", run_id="R3", task_type=TYPE)
    assert (old.status, new.status) == ("active", "probation")  # two rows: not merged, not yet replaced
    tags = {"any", "status:pending", f"{CACHE}:found", "age:pending:150", f"{PAY}:found"}
    notes = memory.record_outcome([new], tags, correct=True)  # validated: active, and replaces the old
    assert notes == [f"active: {OVER_120} (validated on probation)", f"invalidated: {OVER_30}"]
    assert old.status == "invalid"
    assert old.status_reason == f"contradicted by '{OVER_120}' (the threshold is 120 min now, not 30)"
    again = Memory(FakeClock())  # or confirmed in a second task
    old = active(again, OVER_30)
    again.propose(OVER_120, task_id="T3", run_id="R3", task_type=TYPE)
    decision, _ = again.propose(OVER_120, task_id="T4", run_id="R4", task_type=TYPE)
    assert decision == f"written: confirmed in 2 tasks; invalidated: {OVER_30}" and old.status == "invalid"


# --- the scenarios: a threshold that moves, a source that goes stale ----------------------------------


@cache
def scenario_run(name: str, arm_name: str):
    return run_arm(name, FULL if arm_name == FULL.name else BARE)


def fired(run, n: int, e: Experience) -> bool:
    """Was ``e`` in task ``n``'s prompt with its whole trigger holding (notebook 09's definition)?"""
    result = run.results[n - 1]
    tags = run_tags(result.trace.steps, run.scenario.world.words, result.task.now)
    return result.task.task_type == e.task_type and e.rule in result.injected and trigger_held(e.parsed, tags)


def ended_at(run, e: Experience) -> int:
    """The task whose notes ended ``e``: invalidated (by votes, or by a rule memory wrote) or removed."""
    ends = (f"invalidated: {e.rule}", f"removed: {e.rule}")
    parts = [[part for note in r.memory_notes for part in note.split("; ")] for r in run.results]
    return next(n for n, notes in enumerate(parts, 1) if any(part.startswith(ends) for part in notes))


def down_voted(run, n: int, e: Experience) -> bool:
    result = run.results[n - 1]
    return result.task.task_type == e.task_type and any(
        note.startswith(f"down-voted: {e.rule} (") for note in result.memory_notes
    )


def test_threshold_the_30_minute_rule_is_replaced_by_the_new_number_before_it_misleads():
    """The provider declares its new lag (120 min) from task 21 on: at the first status task after the
    change, the rule about the old number is outdated, with the reason, and the same rule with the new
    number takes its place, before the stale rule fired once."""
    run = scenario_run("threshold", FULL.name)
    change = THRESHOLD[0].at
    [rule] = [e for e in run.memory.experiences.values() if e.task_type == TYPE and e.rule == OVER_30]
    assert rule.status == "invalid"
    assert rule.status_reason == "query_payment_api learns of a record after 120 min now, not 30"
    end = ended_at(run, rule)
    firings = [n for n in range(change, end + 1) if fired(run, n, rule)]
    assert (firings, end) == ([], 22)  # within two firings: here, none
    assert not any(fired(run, n, rule) for n in range(end + 1, 51))  # never injected again
    [new] = [e for e in run.memory.experiences.values() if e.task_type == TYPE and e.rule == OVER_120]
    assert new.status == "active" and new.status_reason.startswith(f"renumbered from '{OVER_30}'")
    assert any(note.startswith(f"renumbered: {OVER_120}") for note in run.results[end - 1].memory_notes)


def test_stale_every_rule_that_keeps_the_agent_on_the_cache_ends_within_two_firings():
    run, bare = scenario_run("stale", FULL.name), scenario_run("stale", BARE.name)
    change = STALE[0].at

    def trusts_the_cache(e: Experience) -> bool:
        rule = e.parsed
        starts = any(a.verb == "start" and a.tool == CACHE for a in rule.actions)
        skips = rule.trigger.kind == "finds" and rule.trigger.tool == CACHE
        return starts or (skips and any(a.verb == "skip" and a.tool == DB for a in rule.actions))

    stale = [e for e in run.memory.experiences.values() if e.parsed and trusts_the_cache(e)]
    assert {e.rule for e in stale} == {f"when any task: start with {CACHE}", SKIP_DB}
    for e in stale:
        assert e.status not in LIVE, e.rule
        end = ended_at(run, e)
        firings = [n for n in range(change, end + 1) if fired(run, n, e)]
        assert change < end and len(firings) <= 2, (e.rule, firings)
        assert not any(e.rule in r.injected for r in run.results[end:])
    assert [ended_at(run, e) for e in stale] == [25, 25]  # the first wrong answer from the stale cache
    notes = run.results[24].memory_notes
    assert (
        f"written: learned from a rejected answer; invalidated: when any task: start with {CACHE}: "
        f"when any task: start with {DB}"
    ) in notes  # the rejected answer taught "start with" the tool that holds every order
    ralph, react = [r.correct for r in run.records], [r.correct for r in bare.records]
    assert sum(ralph) >= sum(react) and sum(ralph[change - 1 :]) >= sum(react[change - 1 :])


# --- benchmarks/bad_lessons.py: bounded harm ----------------------------------------------------------


def load_benchmark(name: str):
    spec = importlib.util.spec_from_file_location(f"{name}_benchmark", ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BAD = load_benchmark("bad_lessons")
PAIRS = [(7, 0), (7, 1), (8, 0), (8, 1)]  # suite seed x model seed


def harm(config: MemoryConfig) -> dict[str, list[tuple[int, int, str, int]]]:
    """Per bad lesson, per seed pair: (answers lost, calls added) against the clean run, its firings, and
    the clean run's calls."""
    out = {name: [] for name in BAD.bad_lessons(orders.HABITS)}
    for pair in PAIRS:
        clean, _, _ = BAD.run(orders, *pair, [], config)
        for name, rule in BAD.bad_lessons(orders.HABITS).items():
            records, results, memory = BAD.run(orders, *pair, [rule], config)
            lost = sum(r.correct for r in clean) - sum(r.correct for r in records)
            added = sum(r.calls for r in records) - sum(r.calls for r in clean)
            out[name].append(
                (lost, added, BAD.firings(rule, results, memory, orders.WORDS), sum(r.calls for r in clean))
            )
    return out


def test_each_bad_lesson_planted_active_costs_at_most_2_points_and_5_percent_calls_and_ends_in_3_firings():
    guarded = harm(MemoryConfig())
    assert len(guarded) == 6
    for name, rows in guarded.items():
        for (lost, added, firings, clean_calls), pair in zip(rows, PAIRS, strict=True):
            assert lost * 100 <= 2 * 50, (name, pair, lost)  # at most 2 points of 50 tasks: one answer
            assert added <= 0.05 * clean_calls, (name, pair, added, clean_calls)
            assert firings != "never" and int(firings) <= 3, (name, pair, firings)
    unguarded = harm(BAD.UNGUARDED)  # no probation, no votes out, no wrong-answer rule
    lost = {
        label: sum(r[0] for rows in h.values() for r in rows)
        for label, h in (("on", guarded), ("off", unguarded))
    }
    added = {
        label: sum(r[1] for rows in h.values() for r in rows)
        for label, h in (("on", guarded), ("off", unguarded))
    }
    assert lost["off"] >= 4 * lost["on"] and added["off"] >= 4 * added["on"] > 0, (lost, added)
    for name in guarded:  # no lesson does less harm without the guards
        assert sum(r[0] for r in unguarded[name]) >= sum(r[0] for r in guarded[name]), name
    still_live = [name for name, rows in unguarded.items() if any(r[2] == "never" for r in rows)]
    assert len(still_live) >= 3, still_live  # without the guards most stay live to the end


# --- quarantine: memory never crashes on what it holds -------------------------------------------------

OLD_GRAMMAR = "when the cache has the order: skip query_database"  # a rule from an older version


def lesson(rule: str, status: str = "active", key: str = "0000000000b1") -> Experience:
    trigger = "any" if rule == OLD_GRAMMAR else trigger_tag(parse_rule(rule))
    return Experience(id=key, rule=rule, task_type=TYPE, trigger=trigger, tools=[], result="", failure_reason="",
                      created_at="2025-03-10T12:00", last_hit_at="2025-03-10T12:00", confirmations=2,
                      status=status)  # fmt: skip


def check_quarantined(memory: Memory, key: str = "0000000000b1") -> Experience:
    """The lesson is kept, quarantined with its reason, never retrieved; memory works around it."""
    bad = memory.experiences[key]
    assert memory.quarantined == [bad] and bad.status == "quarantined"
    assert bad.status_reason.startswith("does not parse: unknown trigger 'the cache has the order'")
    assert bad not in memory.live() and memory.weight(bad) == 0.0
    assert bad not in memory.retrieve({"any", f"{CACHE}:found"}, 10)
    assert all(
        hit.experience is not bad for hit in Retriever(memory).search("cache has the order, skip db", 5)
    )
    decision, _ = memory.propose(OLD_GRAMMAR, task_id="T9", run_id="R9", task_type=TYPE)
    assert decision.startswith("rejected: unknown trigger")
    results = [run_task(t, offline(), TOOLS, memory, [], words=orders.WORDS) for t in SUITE.tasks[:3]]
    assert all(OLD_GRAMMAR not in r.injected for r in results) and bad.status == "quarantined"
    text = journal(memory)
    assert "## Quarantined (1)" in text and f"- **{OLD_GRAMMAR}** — weight 0.00" in text
    assert "does not parse: unknown trigger" in text
    [row] = [r for r in memory_rows(memory) if r["rule"] == OLD_GRAMMAR]
    assert (row["status"], row["weight"]) == ("quarantined", 0.0)
    assert ">quarantined<" in MemoryInspector(memory).table.value
    return bad


def test_a_lesson_in_memory_that_does_not_parse_is_quarantined_on_load():
    good = lesson(SKIP_DB, key="0000000000a1")
    memory = Memory(FakeClock(), experiences=[good, lesson(OLD_GRAMMAR)])
    check_quarantined(memory)
    assert good.status == "active"
    assert Memory(FakeClock(), experiences=[good]).quarantined == []


def test_a_memory_file_with_a_rule_that_does_not_parse_loads_and_keeps_it_quarantined(tmp_path):
    path = tmp_path / "memory.json"
    rows = [dataclasses.asdict(lesson(SKIP_DB, key="0000000000a1")), dataclasses.asdict(lesson(OLD_GRAMMAR))]
    path.write_text(json.dumps({"format": "ralph_mini.memory", "version": 1, "experiences": rows}))
    memory = MemoryFile(path).load(FakeClock())
    check_quarantined(memory)
    MemoryFile(path).save(memory)
    again = MemoryFile(path).load(FakeClock()).experiences["0000000000b1"]
    assert again.status == "quarantined" and again.status_reason.startswith("does not parse")


def test_a_store_with_a_rule_that_does_not_parse_loads_and_keeps_it_quarantined(tmp_path):
    store = Store(tmp_path / "state.sqlite")
    store.save_lessons([lesson(SKIP_DB, key="0000000000a1"), lesson(OLD_GRAMMAR)])
    store.close()
    store = Store(tmp_path / "state.sqlite")
    memory = store.load_memory(FakeClock())
    check_quarantined(memory)
    store.commit_task(memory.experiences.values(), task_id="T1")
    store.close()
    again = Store(tmp_path / "state.sqlite").load_memory(FakeClock()).experiences["0000000000b1"]
    assert again.status == "quarantined" and again.status_reason.startswith("does not parse")


@pytest.mark.parametrize("stamp", ["yesterday", "2025-13-40T12:00", "10/03/2025", "", None])
def test_a_lesson_whose_last_hit_is_not_a_time_is_quarantined_on_load_from_a_file_or_a_store(stamp, tmp_path):
    """A hand-edited row: every weight, retrieval and sweep read the last hit, and raised on it."""
    bad = dataclasses.replace(lesson(SKIP_DB), last_hit_at=stamp)
    good = lesson("when any task: start with query_local_cache", key="0000000000a1")
    path = tmp_path / "memory.json"
    rows = [dataclasses.asdict(good), dataclasses.asdict(bad)]
    path.write_text(json.dumps({"format": "ralph_mini.memory", "version": 1, "experiences": rows}))
    store = Store(tmp_path / "state.sqlite")
    store.save_lessons([good, bad])
    for memory in (MemoryFile(path).load(FakeClock()), store.load_memory(FakeClock())):
        held = memory.experiences["0000000000b1"]
        assert memory.quarantined == [held] and held.status == "quarantined"
        assert held.status_reason == f"its last hit {stamp!r} is not a time: write it as 2025-03-10T12:00"
        assert memory.retrieve({"any"}, 10) == [memory.experiences["0000000000a1"]]
        assert memory.sweep() == [] and memory.weight(held) == 0.0
        run_task(SUITE.tasks[0], offline(), TOOLS, memory, [], words=orders.WORDS)  # a task runs past it
    store.close()


@pytest.mark.parametrize("stamp", ["yesterday", "2025-13-40T12:00", "", None, 1741608000])
def test_a_last_hit_set_by_hand_that_is_not_a_time_is_refused_and_changes_nothing(stamp):
    """After the load, in a notebook: ``lesson.last_hit_at = "yesterday"`` raised nothing, and the next
    weight, retrieval or sweep raised Python's ValueError from deep inside memory."""
    memory = Memory(FakeClock(), experiences=[lesson("when any task: start with query_local_cache")])
    held = memory.experiences["0000000000b1"]
    before = held.last_hit_at
    with pytest.raises(ValueError, match=r"lesson 0000000000b1: its last hit .* is not a time: write it as"):
        held.last_hit_at = stamp
    assert held.last_hit_at == before and memory.retrieve({"any"}, 3) == [held] and memory.sweep() == []
    held.last_hit_at = "2025-03-09T12:00"  # a time is taken, and read by the next retrieval
    assert memory.retrieve({"any"}, 3) == [held] and memory.weight(held) > 0


REAL_MODEL_REPLY = """EFFECTIVE STEPS:
- query_local_cache gave the status field
INEFFECTIVE STEPS:
- query_database repeated what query_local_cache had said
REUSABLE RULES:
- When the cache has the order, skip query_database.
AVOID:
- calling query_database after query_local_cache found the order"""


def test_a_reflectors_rule_the_grammar_refuses_never_reaches_memory_nor_crashes_the_loop():
    memory = Memory(FakeClock())
    wrong = dataclasses.replace(TASK, expected={**TASK.expected, "status": "refunded"})  # rejected: reflect
    agent = ScriptedModel(ask(CACHE), ask(DB, id_="c2"), RIGHT)
    result = run_task(wrong, agent, TOOLS, memory, [], words=orders.WORDS,
                      reflector=ScriptedModel(REAL_MODEL_REPLY, REAL_MODEL_REPLY))  # fmt: skip
    assert not result.correct and memory.experiences == {}
    [note] = result.memory_notes
    assert note.startswith("no write: no reflection after 2 rounds: REUSABLE RULES: rule outside the grammar")


# --- lesson_guards: one instance filter for memory, the reflector and the loop -------------------------

INSTANCES = [
    ("when status is pending: skip cust_0042", "id cust_0042"),
    ("when status is pending: skip alice_chen", "name alice_chen"),
    ("when status is pending: skip bob-lee", "name bob-lee"),
    ("when status is pending: skip aliceChen", "name aliceChen"),
]
WORLD_RULES = [SKIP_DB, f"when status is payment_failed: call {PAY}", "when any task: start with get_order_history",
               f"when {DB} finds nothing: skip {PAY}"]  # fmt: skip
VOCABULARY = Vocabulary.of(orders.WORDS, [t.name for t in TOOLS])


def template(rule: str) -> str:
    return REAL_MODEL_REPLY.replace("When the cache has the order, skip query_database.", rule)


@pytest.mark.parametrize(("rule", "detail"), [*INSTANCES, ("skip cust_0042", "id cust_0042")])
def test_memory_and_the_reflectors_validator_refuse_an_instance_in_any_style(rule, detail):
    assert instance_details(rule, **VOCABULARY.filter_arguments()) == [detail]
    decision, experience = Memory(FakeClock()).propose(rule, task_id="T1", run_id="R1", task_type=TYPE,
                                                       vocabulary=VOCABULARY)  # fmt: skip
    assert (decision, experience) == (f"rejected: names {detail}; rules must hold for every task", None)
    problems = validate_reflection(template(rule), orders.WORDS, [t.name for t in TOOLS])
    assert any(f"item names a specific instance ({detail})" in p for p in problems), problems


@pytest.mark.parametrize("rule", WORLD_RULES)
def test_the_worlds_snake_case_tool_and_status_names_are_no_instance(rule):
    decision, experience = Memory(FakeClock()).propose(rule, task_id="T1", run_id="R1", task_type=TYPE,
                                                       vocabulary=VOCABULARY)  # fmt: skip
    assert experience is not None and experience.status == "probation", decision
    assert validate_reflection(template(rule), orders.WORDS, [t.name for t in TOOLS]) == []


def reflect_once(rules: list[str]) -> tuple:
    """The loop on a task the grader rejects, with a reflector that proposes ``rules``."""
    memory = Memory(FakeClock())
    reply = REAL_MODEL_REPLY.replace("- When the cache has the order, skip query_database.",
                                     "\n".join(f"- {r}" for r in rules))  # fmt: skip
    wrong = dataclasses.replace(TASK, expected={**TASK.expected, "status": "refunded"})
    result = run_task(wrong, ScriptedModel(ask(CACHE), ask(DB, id_="c2"), RIGHT), TOOLS, memory, [],
                      words=orders.WORDS, reflector=ScriptedModel(reply, reply))  # fmt: skip
    return result, memory


def test_the_loop_refuses_an_instance_and_writes_the_worlds_rules():
    for rule, detail in INSTANCES:
        result, memory = reflect_once([SKIP_DB, rule])  # one bad item spoils the reflection: no write
        assert memory.experiences == {}, rule
        assert f"item names a specific instance ({detail})" in result.memory_notes[0], result.memory_notes
    result, memory = reflect_once(WORLD_RULES)
    assert sorted(e.rule for e in memory.experiences.values()) == sorted(WORLD_RULES)
    assert {e.status for e in memory.experiences.values()} == {"active"}  # from a rejected answer: at once


# --- react: loop detection by meaning, and where a loop stops ------------------------------------------


@tool(latency_s=0.1)
def lookup(order_id: str, limit: int) -> dict:
    """Look an order up.

    Args:
        order_id: The order.
        limit: How many rows.
    """
    return {"status": "paid", "rows": limit}


def test_the_same_call_spelled_another_way_is_repeated():
    spellings = ['{"order_id": "A123", "limit": 1}', '{"limit":1.0,"order_id":"A123"}',
                 '{ "order_id" : "A123" ,\n "limit" : 1e0 }', '{"limit": 10E-1, "order_id": "A123"}']  # fmt: skip
    others = ['{"order_id": "A123", "limit": 2}', '{"order_id": "a123", "limit": 1}']
    replies = [ask("lookup", a, id_=f"c{i}") for i, a in enumerate([*spellings, *others])]
    anything = dataclasses.replace(TASK, relevant_tools=())  # every tool counts as relevant
    trace = run_react(anything, ScriptedModel(*replies, RIGHT), [lookup], max_pitfall_depth=10)
    assert [s.status for s in trace.steps] == ["ok", "repeated", "repeated", "repeated", "ok", "ok"]


@given(
    st.dictionaries(st.sampled_from(["order_id", "limit", "a", "b"]), st.integers(-1000, 1000) | st.text(max_size=5),
                    min_size=1),
    st.randoms(use_true_random=False),
    st.sampled_from([(", ", ": "), (",", ":"), (" ,  ", " :\n")]),
)  # fmt: skip
def test_canonical_arguments_ignore_key_order_spacing_and_number_spelling(arguments, rng, separators):
    keys = list(arguments)
    rng.shuffle(keys)
    respelled = separators[0].join(
        f"{json.dumps(k)}{separators[1]}"
        + (rng.choice([str(v), f"{v}.0", f"{v}e0"]) if isinstance(v, int) else json.dumps(v))
        for k, v in ((k, arguments[k]) for k in keys)
    )
    assert canonical_arguments("{" + respelled + "}") == canonical_arguments(json.dumps(arguments))
    changed = {**arguments, keys[0]: "other value"}
    assert canonical_arguments(json.dumps(changed)) != canonical_arguments(json.dumps(arguments))


@pytest.mark.parametrize("depth", [1, 2, 3, 5])
@pytest.mark.parametrize("one_reply", [False, True], ids=["a call a turn", "all in one reply"])
def test_a_valid_call_repeated_forever_ends_at_max_pitfall_depth_plus_one_calls(depth, one_reply):
    same = ToolCall("c", CACHE, '{"order_id": "A123"}')
    script = [ModelReply(None, (same,) * 50)] if one_reply else [ModelReply(None, (same,))] * 50
    trace = run_react(TASK, ScriptedModel(*script), TOOLS, max_steps=50, max_pitfall_depth=depth)
    assert trace.tool_calls == len(trace.steps) == depth + 1  # the first and ``depth`` repeats
    assert [s.status for s in trace.steps] == ["ok"] + ["repeated"] * depth
    assert trace.stop_reason == f"max_pitfall_depth: {depth} wrong calls"


# --- world, loop, learn, review: only evidence teaches ------------------------------------------------


def test_a_task_without_truth_is_not_judged():
    for expected in ({}, {**TASK.expected, "paid_at": None}):
        verdict = grade(dataclasses.replace(TASK, expected=expected), {"status": "paid"})
        assert (verdict.judged, verdict.correct) == (False, False)
        assert verdict.explain() == "not judged: the task has no truth to compare with"
    assert grade(TASK, json.loads(RIGHT.split(": ", 1)[1])).judged


@pytest.mark.parametrize(
    ("expected", "validations", "failures", "rows"),
    [
        ({**TASK.expected, "paid_at": None}, 0, 0, 1),  # no truth: no vote, no lesson
        ({}, 0, 0, 1),
        (TASK.expected, 1, 0, 1),  # the reference: judged right, an up-vote
        ({**TASK.expected, "status": "refunded"}, 0, 1, 2),  # judged wrong: a down-vote and a lesson
    ],
    ids=["a None value", "no truth", "judged right", "judged wrong"],
)
def test_a_task_the_grader_cannot_judge_neither_votes_nor_writes(expected, validations, failures, rows):
    memory = Memory(FakeClock())
    rule = active(memory, SKIP_DB)
    before = dataclasses.asdict(rule)
    result = run_task(
        dataclasses.replace(TASK, expected=expected), offline(), TOOLS, memory, [], words=orders.WORDS
    )
    assert result.injected == [SKIP_DB]  # it was in play: its trigger held
    assert (rule.validations, rule.failures, len(memory.experiences)) == (validations, failures, rows)
    if rows == 1 and not validations:
        kept = {k: v for k, v in dataclasses.asdict(rule).items() if k not in ("hits", "last_hit_at")}
        assert kept == {k: v for k, v in before.items() if k not in ("hits", "last_hit_at")}
        assert result.memory_notes == [] and result.reflections == []


@pytest.mark.parametrize("looked", [False, True], ids=["blind", "looked"])
def test_an_accepted_run_that_looked_nothing_up_votes_on_nothing_and_writes_nothing(looked):
    memory = Memory(FakeClock())
    rule = active(memory, f"when any task: skip {PAY}")  # its trigger holds in every run
    agent = ScriptedModel(*([ask(CACHE)] if looked else []), RIGHT)
    result = run_task(TASK, agent, TOOLS, memory, [], words=orders.WORDS, reflector=offline())
    assert result.correct and result.review.blind is not looked
    assert (rule.validations, rule.recent) == ((1, "+") if looked else (0, ""))  # looked: the reference
    assert len(memory.experiences) == 1 and result.reflections == []
    rejected = dataclasses.replace(TASK, expected={**TASK.expected, "status": "refunded"})
    result = run_task(rejected, ScriptedModel(RIGHT), TOOLS, Memory(FakeClock()), [], words=orders.WORDS,
                      reflector=offline())  # fmt: skip
    assert result.memory_notes == [f"written: learned from a rejected answer: when any task: start with {DB}"]


def test_wants_slow_loop_a_rejected_answer_always_a_blind_accepted_run_never():
    blind = review(TASK, run_react(TASK, ScriptedModel(RIGHT), TOOLS), TOOLS, orders.WORDS)
    trace = run_react(TASK, ScriptedModel(RIGHT), TOOLS)
    assert blind.blind
    assert wants_slow_loop(False, blind, trace, recurring=False, repeated_errors=set())
    assert not wants_slow_loop(True, blind, trace, recurring=True, repeated_errors={"wrong_tool"})


def missing_task_in_an_outage():
    task = next(t for t in SUITE.tasks if t.kind == "missing")

    def unreachable(order_id: str) -> dict:
        raise ConnectionError("database unreachable")

    down = [dataclasses.replace(t, function=unreachable) if t.name == DB else t for t in TOOLS]
    arguments = json.dumps({"order_id": task.record_id})
    return (
        task,
        down,
        [ask(CACHE, arguments), ask(DB, arguments, id_="c2"), 'Final answer: {"status": "not_found"}'],
    )


def test_in_a_database_outage_a_not_found_from_the_cache_is_no_complete_answer():
    task, down, script = missing_task_in_an_outage()
    trace = run_react(task, ScriptedModel(*script), down)
    assert [(s.tool, s.status) for s in trace.steps] == [(CACHE, "not_found"), (DB, "error")]
    verdict = review(task, trace, down, orders.WORDS)
    assert not verdict.complete and verdict.retry
    up = run_react(task, ScriptedModel(*script), TOOLS)  # the reference: the database said not_found
    assert review(task, up, TOOLS, orders.WORDS).complete
    result = run_task(task, ScriptedModel(*(script * 3)), down, Memory(FakeClock()), [], words=orders.WORDS,
                      reflector=offline(), config=LoopConfig(max_reflection_rounds=2))  # fmt: skip
    assert result.retries == 2 and len(result.discarded) == 2  # the fast loop retried, up to its bound


# --- ablation_grid: every mechanism keeps its place, cell by cell -------------------------------------


def test_the_full_loop_loses_no_cell_of_a_small_grid():
    runs = ablation_grid.run_grid(range(7, 9), range(2), jobs=1)
    assert {arm for _, _, arm in runs} == {arm.name for arm in ablation_grid.MECHANISMS}
    judged = ablation_grid.verdicts(ablation_grid.cells(runs))
    assert len(judged) >= 4 * 5 and all(row["tasks"] > 0 for row in judged)
    assert [row for row in judged if row["beaten by"] != "-"] == []


def test_verdicts_flag_a_cell_where_an_ablation_is_more_correct_or_over_3_percent_cheaper():
    full, a, b = FULL.name, "no decay/expiry", "keyword retrieval only"

    def cell(kind, **arms):
        return [{"suite seed": 7, "model seed": 0, "kind": kind, "arm": arm, "tasks": 10, "correct": c,
                 "calls": k} for arm, (c, k) in arms.items()]  # fmt: skip

    rows = [
        *cell("more correct", **{full: (9, 100), a: (10, 120)}),
        *cell("cheaper by 4%", **{full: (10, 104), b: (10, 100)}),
        *cell("cheaper by 3%", **{full: (10, 103), b: (10, 100)}),
        *cell("cheaper but wrong", **{full: (10, 100), a: (9, 50)}),
    ]
    beaten = {row["kind"]: row["beaten by"] for row in ablation_grid.verdicts(rows)}
    assert beaten == {"more correct": a, "cheaper by 4%": b, "cheaper by 3%": "-", "cheaper but wrong": "-"}
