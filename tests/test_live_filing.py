"""Issue 27: a task reads the lessons it may use, not every lesson (``live_filing``). Memory's filed reads
(``retrieve``, ``live``, ``sweep``, ``invalidate_unoffered``) agree with a scan of every lesson after
any mix of memory's own changes and a hand's, and read only what they return. Values and call
counts, not timings (``benchmarks/store_speed.py`` prints ``run_task``)."""

import copy
import dataclasses
import random
from datetime import timedelta

import pytest

from ralph_mini import live_filing
from ralph_mini.clock import FakeClock
from ralph_mini.experience import LIVE, days_since
from ralph_mini.memory import Experience, Memory, MemoryConfig

TYPES = ["status", "refund", "cancel"]
TRIGGERS = ["any", "status:pending", "status:paid", "cache:found"]
STATUSES = ["active", "probation", "candidate", "expired", "invalid", "removed"]
RULES = {  # a rule per trigger tag, so that ``parsed`` agrees with ``trigger``
    "any": "when any task: start with tool_{n}",
    "status:pending": "when status is pending: skip tool_{n}",
    "status:paid": "when status is paid: skip tool_{n}",
    "cache:found": "when tool_{n} finds the order: answer",
}


def random_lesson(rng: random.Random, clock: FakeClock, number: int) -> Experience:
    trigger = rng.choice(TRIGGERS)
    stamp = (clock() - timedelta(hours=rng.randrange(60 * 24))).isoformat(timespec="minutes")
    return Experience(
        id=f"{number:012x}", rule=RULES[trigger].format(n=rng.randrange(3)), task_type=rng.choice(TYPES),
        trigger=trigger, tools=[], result="", failure_reason="", created_at=stamp, last_hit_at=stamp,
        status=rng.choice(STATUSES), confirmations=rng.randrange(4),
    )  # fmt: skip


def start_lesson(number: int, last_hit: str = "2025-03-10T11:00") -> Experience:
    """An active lesson of the status type for every task, last hit at ``last_hit``."""
    return Experience(
        id=f"{number:012x}", rule="when any task: start with tool_1", task_type="status", trigger="any",
        tools=[], result="", failure_reason="", created_at=last_hit, last_hit_at=last_hit, status="active",
        confirmations=2,
    )  # fmt: skip


def scanned_retrieve(memory: Memory, tags, top_k, exclude, task_type) -> list[Experience]:
    """``Memory.retrieve`` as it read memory before the filing: every lesson, in memory's order."""
    scored = [
        (memory.weight(e), e.rule, e)
        for e in memory.experiences.values()
        if e.trigger in tags and e.id not in exclude and task_type in (None, e.task_type)
    ]
    scored = sorted((s for s in scored if s[0] > 0), key=lambda s: (-s[0], s[1]))
    return [e for *_, e in scored[:top_k]]


def scanned_live(memory: Memory, task_type, triggers) -> list[Experience]:
    now = memory.clock()
    return [
        e
        for e in memory.experiences.values()
        if e.status in LIVE
        and days_since(e.last_hit_at, now) <= memory.config.expire_after_days
        and e.task_type == task_type
        and e.trigger in triggers
    ]


def scanned_sweep(lessons: dict, now, expire_after_days: float) -> list[str]:
    return [
        e.id
        for e in lessons.values()
        if e.status in LIVE and days_since(e.last_hit_at, now) > expire_after_days
    ]


def agrees_with_a_scan(memory: Memory, rng: random.Random) -> None:
    for task_type in [None, *TYPES]:
        tags = set(rng.sample(TRIGGERS, rng.randint(1, 3)))
        exclude = {e.id for e in rng.sample(list(memory.experiences.values()), 3)}
        top_k = rng.choice([3, len(memory.experiences)])
        expected = scanned_retrieve(memory, tags, top_k, exclude, task_type)
        assert memory.retrieve(tags, top_k, exclude, task_type=task_type) == expected
    for task_type in TYPES:
        triggers = rng.sample(TRIGGERS, 2)
        assert memory.live(task_type, triggers) == scanned_live(memory, task_type, triggers)
        filed = memory.filing.of(memory.experiences, memory.changes, task_type)
        assert filed == [
            e for e in memory.experiences.values() if e.status in LIVE and e.task_type == task_type
        ]
    expected = scanned_sweep(
        copy.deepcopy(memory.experiences), memory.clock(), memory.config.expire_after_days
    )
    assert [e.id for e in memory.sweep()] == expected
    assert all(memory.experiences[i].status == "expired" for i in expected)


def hand_edit(memory: Memory, rng: random.Random, clock: FakeClock, number: int) -> None:
    """One change, by memory or by a hand in a notebook."""
    lessons = list(memory.experiences.values())
    lesson = rng.choice(lessons)
    move = rng.randrange(11)
    if move == 0:
        lesson.status = rng.choice(STATUSES)
    elif move == 1:
        lesson.task_type = rng.choice(TYPES)
    elif move == 2:
        lesson.trigger = rng.choice(TRIGGERS)
    elif move == 3:
        memory.record_hits(rng.sample(lessons, 3))
    elif move == 4:  # appended behind memory's back
        new = random_lesson(rng, clock, number)
        memory.experiences[new.id] = new
    elif move == 5:  # another lesson under a key memory has, live or not, filed or not
        memory.experiences[lesson.id] = dataclasses.replace(
            lesson, rule=lesson.rule + " ", status=rng.choice(STATUSES)
        )
    elif move == 6:  # a new dict, as a notebook might rebuild it
        memory.experiences = {e.id: e for e in rng.sample(lessons, len(lessons))}
    elif move == 7:
        clock.advance(days=rng.choice([1, 5, 12]))
    elif move == 9:  # one taken out and another put in: as many lessons as before
        del memory.experiences[lesson.id]
        new = random_lesson(rng, clock, number)
        memory.experiences[new.id] = new
    elif move == 10:  # the same, by dict methods
        memory.experiences.pop(lesson.id)
        new = random_lesson(rng, clock, number)
        memory.experiences.update({new.id: new})
    else:
        lesson.last_hit_at = clock().isoformat(timespec="minutes")


@pytest.mark.parametrize("seed", range(8))
def test_filed_reads_agree_with_a_scan_of_every_lesson_after_any_changes(seed):
    rng, clock = random.Random(seed), FakeClock()
    memory = Memory(clock, MemoryConfig(), [random_lesson(rng, clock, n) for n in range(60)])
    agrees_with_a_scan(memory, rng)
    for step in range(40):
        hand_edit(memory, rng, clock, 1000 + step)
        agrees_with_a_scan(memory, rng)


def test_a_task_type_reads_its_own_lessons_only(monkeypatch):
    rng, clock = random.Random(0), FakeClock()
    others = [random_lesson(rng, clock, n) for n in range(2000)]
    for lesson in others:
        lesson.task_type, lesson.status, lesson.last_hit_at = "refund", "active", "2025-03-10T10:00"
    mine = start_lesson(9999)
    memory = Memory(clock, MemoryConfig(), [*others, mine])
    memory.retrieve({"any"}, 3)  # the first read files every lesson, once
    weighed = []
    real = Memory.weight
    monkeypatch.setattr(Memory, "weight", lambda self, e, now=None: weighed.append(e) or real(self, e, now))
    assert memory.retrieve({"any"}, 3, task_type="status") == [mine]
    assert memory.live("status", ["any"]) == [mine]
    assert weighed == [mine]
    aged = []
    monkeypatch.setattr(live_filing, "days_since", lambda *a: aged.append(a) or days_since(*a))
    memory.sweep()
    assert len(aged) == 1  # the oldest hit, still in date: nothing older is read


def test_sweep_flags_in_memorys_order_and_once():
    clock = FakeClock()
    old = [start_lesson(n, f"2025-01-{10 - n:02d}T00:00") for n in range(5)]
    memory = Memory(clock, MemoryConfig(), old)
    flagged = memory.sweep()
    assert [e.id for e in flagged] == [e.id for e in old]  # memory's order, not the order of their hits
    assert all(e.status == "expired" and e.status_reason.startswith("not hit for") for e in old)
    assert memory.sweep() == []
    old[2].status = "active"  # brought back by hand, and hit today: in date
    old[2].last_hit_at = clock().isoformat(timespec="minutes")
    assert memory.sweep() == [] and old[2].status == "active"


def test_a_lesson_swapped_in_under_the_key_of_one_not_filed_is_read():
    clock = FakeClock()
    first, gone = start_lesson(1), start_lesson(2)
    gone.status = "removed"
    memory = Memory(clock, MemoryConfig(), [first, gone])
    assert memory.retrieve({"any"}, 3) == [first]
    back = memory.experiences[gone.id] = dataclasses.replace(
        gone, status="active", rule="when any task: skip tool_2"
    )
    assert memory.retrieve({"any"}, 3) == scanned_retrieve(memory, {"any"}, 3, (), None)
    assert back in memory.retrieve({"any"}, 3) and memory.live("status", ["any"]) == [first, back]


def test_a_live_lesson_swapped_in_under_its_key_is_the_one_read():
    clock = FakeClock()
    first = start_lesson(1)
    memory = Memory(clock, MemoryConfig(), [first])
    assert memory.retrieve({"any"}, 3) == [first]
    swapped = memory.experiences[first.id] = dataclasses.replace(
        first, rule="when any task: start with tool_2"
    )
    assert memory.retrieve({"any"}, 3, task_type="status")[0] is swapped


# --- memory's dict counts what a hand rewrites in it (lesson_dict) -------------------------------------


def test_memorys_dict_counts_every_rewrite_and_no_append():
    from ralph_mini.lesson_dict import LessonDict

    lessons = LessonDict(a=1)
    lessons["b"] = 2
    lessons.setdefault("c", 3)
    lessons.update(d=4)
    lessons |= {"e": 5}
    assert lessons.rewrites == 0 and list(lessons) == ["a", "b", "c", "d", "e"]  # appends only
    rewrites = [
        lambda: lessons.__setitem__("a", 9), lambda: lessons.update({"b": 8}), lambda: lessons.__ior__({"c": 7}),
        lambda: lessons.__delitem__("d"), lambda: lessons.pop("e"), lambda: lessons.popitem(), lambda: lessons.clear(),
    ]  # fmt: skip
    for number, rewrite in enumerate(rewrites, 1):
        rewrite()
        assert lessons.rewrites == number
    lessons.pop("gone", None), lessons.clear()  # nothing taken out: no rewrite
    assert lessons.rewrites == len(rewrites)


def test_memory_keeps_its_lessons_in_its_own_counting_dict_through_copies():
    import pickle

    from ralph_mini.lesson_dict import LessonDict

    clock = FakeClock()
    given = {e.id: e for e in [start_lesson(1), start_lesson(2)]}
    memory = Memory(clock, MemoryConfig(), given.values())
    memory.experiences = given  # a plain dict: copied into memory's own
    assert type(memory.experiences) is LessonDict and memory.experiences == given
    memory.experiences[start_lesson(1).id] = start_lesson(3)
    for twin in (copy.deepcopy(memory), pickle.loads(pickle.dumps(memory))):
        assert type(twin.experiences) is LessonDict and twin.experiences.rewrites == 1
        assert twin.live("status", ["any"]) == memory.live("status", ["any"])


@pytest.mark.parametrize("read", ["sweep", "retrieve", "search", "take_changed"])
def test_a_lesson_put_in_by_hand_that_memory_cannot_weigh_is_quarantined_not_a_crash(read):
    """A hand's lesson whose last hit is not a time: quarantined as it joins (as a file's is on load),
    with what to write, and handed to the store; memory's reads go on (they raised Python's ValueError)."""
    from ralph_mini.retrieval import Retriever

    memory = Memory(FakeClock(), MemoryConfig(), [start_lesson(1)])
    retriever = Retriever(memory)
    memory.retrieve({"any"}, 3), retriever.search("start", 3), memory.take_changed()
    bad = start_lesson(2, last_hit="yesterday")
    memory.experiences[bad.id] = bad
    reads = {"sweep": memory.sweep, "retrieve": lambda: memory.retrieve({"any"}, 3),
             "search": lambda: retriever.search("start", 3), "take_changed": memory.take_changed}  # fmt: skip
    reads[read]()
    assert bad.status == "quarantined" and "2025-03-10T12:00" in bad.status_reason
    assert memory.retrieve({"any"}, 3) == [memory.experiences[start_lesson(1).id]] and memory.sweep() == []
    assert bad in memory.take_changed() or read == "take_changed"
