"""Notebook 09's world that changes: drift moves the grader, held-out phrasings never reach memory, write
tasks are graded on the world's final state, and the offline model reads every phrasing's id."""

import dataclasses
import json
import random
from datetime import datetime, timedelta
from types import SimpleNamespace

import pytest

from ralph_mini.bench import RALPH, run_agent
from ralph_mini.measure import RunRecord
from ralph_mini.offline import OfflineModel
from ralph_mini.react import run_react
from ralph_mini.scenario_bench import FULL, paired_rows, pass_k, run_arm
from ralph_mini.world import TIME_FORMAT, grade
from ralph_mini.worlds import orders, shop
from ralph_mini.worlds.orders import words as ow
from ralph_mini.worlds.orders.world import NOW, Order
from ralph_mini.worlds.shop import words as sw
from ralph_mini.worlds.shop.scenarios import DRIFT, PAIRED, TRAIN, WORDINGS, build
from ralph_mini.worlds.shop.tasks import held_out, make_task
from ralph_mini.worlds.shop.world import ShopState, empty_shop


def task_of(task_type: str, kind: str, phrasing: int = 0):
    """A seeded task of one sub-kind (drawn until the kind comes up), in a fresh shop."""
    world, state = empty_shop(), ShopState()
    rng = random.Random(1)
    for number in range(1, 200):
        task = make_task(number, world, rng, task_type, NOW, state, (phrasing,))
        if task.kind == f"{task_type}:{kind}":
            return world, task
    raise AssertionError(f"no {kind} order drawn")


def test_a_drift_changes_what_the_grader_accepts():
    """The same request about the same order (same seed), graded before and after the refund window shrinks
    from 30 to 14 days: refunding a payment 16-27 days old is right before and wrong after."""
    old, new = ShopState(), ShopState().changed(refund_days=14)
    seed = next(s for s in range(500) if task_of_seed(s, old)[1].kind == "refund:edge")
    (world_old, before), (world_new, after) = task_of_seed(seed, old), task_of_seed(seed, new)
    assert (before.question, before.record_id) == (after.question, after.record_id)
    done, refused = ({"order_id": before.record_id, "refund": r} for r in (sw.DONE, sw.REFUSED))
    for world in (world_old, world_new):
        world.writes.append((ow.REFUND, before.record_id))  # the agent refunded
    assert grade(before, done).correct and not grade(after, done).correct
    world_old.writes.clear(), world_new.writes.clear()  # the agent refused
    assert not grade(before, refused).correct and grade(after, refused).correct
    drift = build("drift")
    change = next(c.at for c in DRIFT if c.fields.get("refund_days") == 14)
    edge = [(int(t.task_id[1:]), t.expected["refund"]) for t in drift.tasks if t.kind == "refund:edge"]
    assert {e for n, e in edge if n < change} == {sw.DONE} and {e for n, e in edge if n >= change} == {
        sw.REFUSED
    }


def shown_in_lower_case(task) -> bool:
    """Did the customer write the order id in lower case ('d012')?"""
    return task.record_id.lower() in task.question


def expected_writes(task) -> tuple:
    """The writes a correct run leaves: what the task's check finds missing while nothing is written."""
    problems = task.world_problems()
    return problems["writes"][0] if problems else ()


def task_of_seed(seed: int, state: ShopState):
    world = empty_shop()
    return world, make_task(1, world, random.Random(seed), sw.REFUND, NOW, state, (0,))


def test_the_settlement_lag_changes_the_truth_of_a_pending_order():
    from ralph_mini.worlds.shop.tasks import expected

    order = Order("P100", "pending_stale", "pending", 20.0, NOW - timedelta(minutes=60), True, None, "card",
                  "captured", "TXN-20000", NOW - timedelta(minutes=55))  # fmt: skip
    before = expected(sw.STATUS, order, ShopState(), NOW, 1, None)
    after = expected(sw.STATUS, order, ShopState(settlement_lag_min=90), NOW, 1, None)
    assert (before["status"], after["status"]) == ("paid", "pending")


def test_write_tasks_are_graded_on_the_final_state():
    world, task = task_of(sw.REFUND, "eligible")
    answer = {"order_id": task.record_id, "refund": sw.DONE}
    assert grade(task, answer).wrong_fields == {
        "writes": (((ow.REFUND, task.record_id),), ())
    }  # said, not done
    world.writes.append((ow.REFUND, task.record_id))
    assert grade(task, answer).correct
    world.writes.append((ow.REFUND, task.record_id))  # never twice
    assert not grade(task, answer).correct
    world, status = task_of(sw.STATUS, "paid_cached")
    world.writes.append((ow.REFUND, status.record_id))  # a read-only request that wrote: nothing more
    assert "writes" in grade(status, dict(status.expected, order_id=status.record_id)).wrong_fields


def test_held_out_phrasings_never_reach_memory():
    run = run_arm("rephrased", FULL)
    held = [t for t in run.scenario.tasks if held_out(t)]
    assert held and all(t.task_id in run.scenario.frozen for t in held)
    learned_from = [r for r in run.results if r.task.task_id not in run.scenario.frozen]
    assert not any(held_out(r.task) for r in learned_from)
    experiences = run.memory.experiences.values()
    assert not any(set(e.source_tasks) & run.scenario.frozen for e in experiences)
    stored = json.dumps([dataclasses.asdict(e) for e in experiences], ensure_ascii=False)
    for task_type, phrasings in sw.PHRASINGS.items():
        for i in sw.HELD_OUT:
            words = max(phrasings[i].split("{id}"), key=len).strip(" ?.，？")
            assert words not in stored, (task_type, words)
    assert run.memory.experiences, "the loop learned nothing at all: the test would prove nothing"


def test_the_rephrased_scenario_asks_the_same_draws_in_three_wordings():
    """Copy j of each wording: same type, order kind, ages, truth, oracle calls and writes; its own order,
    identical but for the id and times moved with the asking time; a phrasing of its own wording."""
    scenario = build("rephrased")
    frozen = scenario.tasks[TRAIN:]
    assert [w[0] for w in scenario.windows[1:]] == [label for label, _ in WORDINGS]
    assert {t.task_id for t in frozen} == scenario.frozen and len(frozen) == 3 * PAIRED
    ids = [t.record_id for t in scenario.tasks]
    assert len(set(ids)) == len(ids)  # a write in one window cannot reach another window's order
    world = scenario.world
    for j in range(PAIRED):
        copies = frozen[j::PAIRED]
        first = copies[0]
        for copy, (_, phrasings) in zip(copies, WORDINGS, strict=True):
            shift = datetime.strptime(copy.now, TIME_FORMAT) - datetime.strptime(first.now, TIME_FORMAT)
            assert copy.phrasing in phrasings and shown_in_lower_case(copy) == shown_in_lower_case(first)
            assert (copy.task_type, copy.kind, copy.oracle_calls) == (
                first.task_type,
                first.kind,
                first.oracle_calls,
            )
            paid = first.expected.get("paid_at")
            moved = paid and (datetime.strptime(paid, TIME_FORMAT) + shift).strftime(TIME_FORMAT)
            assert copy.expected == first.expected | ({"paid_at": moved} if paid else {})
            assert [w for w, _ in expected_writes(copy)] == [w for w, _ in expected_writes(first)]
            a, b = world.orders[first.record_id], world.orders[copy.record_id]
            assert b == dataclasses.replace(a, order_id=b.order_id, created_at=a.created_at + shift,
                                            paid_at=a.paid_at and a.paid_at + shift,
                                            settled_at=a.settled_at and a.settled_at + shift)  # fmt: skip
            assert world.charges[copy.record_id] == world.charges[first.record_id]
            assert world.parcels.get(copy.record_id) == world.parcels.get(first.record_id)


def test_paired_rows_compare_each_wording_with_the_trained_phrasings():
    def records(*calls_correct):
        return [
            RunRecord(f"T{i}", "status:x", c, 0, ok, 1.0, 100, 1) for i, (c, ok) in enumerate(calls_correct)
        ]

    windows = [
        ("train", 1, 1),
        ("held-out English", 2, 3),
        ("held-out Chinese", 4, 5),
        ("trained phrasings", 6, 7),
    ]
    run = SimpleNamespace(
        scenario=SimpleNamespace(windows=windows),
        arm=SimpleNamespace(name="toy"),
        records=records((9, True), (3, True), (2, False), (2, True), (2, True), (2, True), (2, True)),
    )
    rows = {row["wording"]: row for row in paired_rows(run)}
    assert (
        rows["held-out English"]["calls/task"] == 2.5 and rows["held-out English"]["calls vs trained"] == 1.25
    )
    assert (
        rows["held-out English"]["correct"] == "1/2"
        and rows["held-out English"]["same verdict as trained"] == "1/2"
    )
    assert (
        rows["held-out Chinese"]["calls vs trained"] == 1.0
        and rows["trained phrasings"]["calls vs trained"] == 1.0
    )
    assert rows["trained phrasings"]["oracle calls/task"] == 1.0


@pytest.mark.parametrize("task_type", sw.TASK_TYPES)
def test_every_phrasing_is_read_as_its_type_with_enough_of_each_language(task_type):
    phrasings = sw.PHRASINGS[task_type]
    assert len([i for i in sw.ENGLISH if i < len(phrasings)]) >= 5 and len(sw.CHINESE) >= 3
    assert all(shop.HABITS.request_of(p.format(id="D012")) == task_type for p in phrasings)
    assert all(" " not in phrasings[i] for i in sw.CHINESE)


@pytest.mark.parametrize("phrasing", [6, 7, 8, 9])
def test_the_offline_model_reads_ids_next_to_chinese_and_in_lower_case(phrasing):
    world, task = task_of(sw.STATUS, "paid_cached", phrasing=phrasing)
    for shown in (task.record_id, task.record_id.lower()):
        question = sw.PHRASINGS[sw.STATUS][phrasing].format(id=shown)
        trace = run_react(
            dataclasses.replace(task, question=question),
            OfflineModel(habits=shop.HABITS),
            world.tools(core_only=True),
        )
        assert grade(task, trace.answer).correct, (question, trace.answer)


def test_the_static_scenario_is_notebook_06s_benchmark():
    suite = orders.make_suite(n=50, seed=7)
    expected = run_agent(RALPH, suite.tasks, OfflineModel(habits=orders.HABITS), suite.world.tools(),
                         words=orders.WORDS)[0]  # fmt: skip
    assert run_arm("static", FULL).records == expected


def test_one_clock_prompt_world_and_memory():
    run = run_arm("seasons", FULL)
    times = [t.now for t in run.scenario.tasks]
    assert times[0] == "2025-03-10 12:00" and times[10] == "2025-03-17 12:00"  # 10 tasks a virtual week
    assert run.memory.clock() - NOW == timedelta(hours=16.8 * 90)


def test_pass_k_is_the_chance_that_all_k_runs_succeed():
    class Run:
        def __init__(self, *correct):
            self.records = [type("R", (), {"correct": c})() for c in correct]

    runs = [Run(True, True), Run(True, False), Run(True, True), Run(True, True)]
    assert pass_k(runs, 1) == 0.875 and pass_k(runs, 4) == 0.5 and pass_k(runs, 2) == 0.75


def test_the_bench_prints_from_summaries_made_in_the_workers_what_the_whole_runs_give():
    """``bench --scenario`` ships each run's tables back, not the run (``summary_job``): the same rows and
    pass^k as read from the whole runs, through 2 worker processes."""
    from ralph_mini.scenario_bench import ARMS, arm_row, pass_k_rows, run_grid, summary_job, window_rows

    names = ["rephrased", "noisy"]
    runs, seeds = run_grid(names, ARMS[:2] + (FULL,), k=2, jobs=1)
    short, short_seeds = run_grid(names, ARMS[:2] + (FULL,), k=2, jobs=2, job=summary_job)
    assert short.keys() == runs.keys() and pass_k_rows(short_seeds, 2) == pass_k_rows(seeds, 2)
    for key, run in runs.items():
        assert short[key].windows == window_rows(run) and short[key].row == arm_row(run)
        assert short[key].paired == (paired_rows(run) if key[0] == "rephrased" else [])
