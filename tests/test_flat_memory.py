"""Issue 27: a rule's verdicts are computed once, memory's lookups read one shelf and agree with a scan of
every lesson, a store is handed only the lessons memory changed, and a tool's schema is built once per
function. Values and call counts, not timings (``benchmarks/store_speed.py`` reports speed)."""

import copy
import random
from dataclasses import asdict, fields

import pytest

from ralph_mini import experience as experience_module
from ralph_mini import lesson_guards, memory, tools
from ralph_mini.clock import FakeClock
from ralph_mini.memory import LIVE, Experience, Memory, MemoryConfig
from ralph_mini.memory_file import MemoryFile
from ralph_mini.rule_forms import canonical, contradiction, same_rule
from ralph_mini.rules import parse_rule
from ralph_mini.store import Store
from ralph_mini.votes import trigger_tag
from ralph_mini.worlds.orders.world import OrderWorld, demo_orders

SKIP_DB = "when query_local_cache finds the order: skip query_database"
NAMES_ONE = "when any task: skip query_database for order 10023"  # names an instance


def lesson(rule: str, task_type: str = "status", status: str = "active", number: int = 0) -> Experience:
    parsed = parse_rule(rule if "bogus" not in rule else "when any task: answer")  # a bogus row parses not
    return Experience(
        id=f"{number:012x}", rule=rule, task_type=task_type, trigger=trigger_tag(parsed),
        tools=sorted(parsed.tools()), result="", failure_reason="", created_at="2025-03-10T12:00",
        last_hit_at="2025-03-10T12:00", status=status,
    )  # fmt: skip


def counting(monkeypatch, module, name: str) -> list:
    """Replace ``module.name`` with a wrapper that records each call's first argument."""
    calls, real = [], getattr(module, name)

    def wrapper(*args, **kwargs):
        calls.append(args[0] if args else None)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, wrapper)
    return calls


def test_instance_check_runs_once_per_rule_text_and_again_when_it_changes(monkeypatch):
    calls = counting(monkeypatch, experience_module, "instance_details")
    mem, e = Memory(FakeClock()), lesson(SKIP_DB)
    for _ in range(50):
        mem.weight(e)
    assert calls == [SKIP_DB] and mem.weight(e) == 0.5
    e.rule = NAMES_ONE  # edited in place: the kept verdict is not trusted
    assert mem.weight(e) == 0.0 and calls == [SKIP_DB, NAMES_ONE]
    e.rule = 42  # a corrupted row: not text at all, parsed as nothing, and quarantined
    assert e.parsed is None and experience_module.quarantine(e) and e.status == "quarantined"


def test_parse_once_per_text_through_load_propose_and_retrieve(monkeypatch, tmp_path):
    lessons = [lesson(SKIP_DB), lesson("when any task: start with query_local_cache", number=1)]
    calls = counting(monkeypatch, experience_module, "parse_rule")
    mem = Memory(FakeClock(), experiences=lessons)
    mem.propose(SKIP_DB, task_id="T1", run_id="R1", task_type="status")
    mem.retrieve({"any", "query_local_cache:found"})
    mem.record_outcome(lessons, {"any", "query_local_cache:found"}, correct=True)
    assert sorted(calls) == sorted(e.rule for e in lessons)


def test_the_instance_filter_answers_one_text_once():
    lesson_guards._details.cache_clear()
    for _ in range(3):
        assert lesson_guards.instance_details(NAMES_ONE) == ["id 10023"]
    info = lesson_guards._details.cache_info()
    assert (info.misses, info.hits) == (1, 2)
    found = lesson_guards.instance_details(NAMES_ONE)
    found.append("mine")  # a caller's list is its own
    assert lesson_guards.instance_details(NAMES_ONE) == ["id 10023"]


def test_kept_verdicts_are_not_written_to_files(tmp_path):
    mem = Memory(FakeClock(), experiences=[lesson(SKIP_DB)])
    e = mem.experiences["000000000000"]
    assert e.parsed is not None and not e.names_an_instance and mem.equivalent(canonical(e.parsed), "status")
    assert set(asdict(e)) == {f.name for f in fields(Experience)}
    MemoryFile(tmp_path / "memory.json").save(mem)
    store = Store(tmp_path / "state.sqlite")
    store.save_lessons(mem.experiences.values())
    again = MemoryFile(tmp_path / "memory.json").load(FakeClock()).experiences["000000000000"]
    stored = store.load_memory(FakeClock()).experiences["000000000000"]
    assert asdict(again) == asdict(stored) == asdict(e)
    assert copy.deepcopy(e) == e and copy.deepcopy(e).parsed == e.parsed


# --- the shelves agree with a scan of every lesson ---------------------------------------------------
def scan_equivalent(mem: Memory, rule, task_type: str):
    """Memory.equivalent as it was: every lesson read."""
    tag = trigger_tag(rule)
    same = (e for e in mem.experiences.values() if e.task_type == task_type and e.trigger == tag
            and e.parsed and same_rule(e.parsed, rule))  # fmt: skip
    return next(same, None)


def scan_contradicted(mem: Memory, new: Experience) -> list[str]:
    """The rules _invalidate_contradicted must invalidate, in memory's order: every lesson read."""
    return [
        old.rule
        for old in mem.experiences.values()
        if old.status in LIVE and old is not new and old.parsed and old.task_type == new.task_type
        and contradiction(new.parsed, old.parsed)
    ]  # fmt: skip


def random_rule(rng: random.Random) -> str:
    trigger = rng.choice(["any task", "query_local_cache finds the order", "query_database finds nothing",
                          "status is pending", "status is paid", "status is pending and age under 30 min",
                          "status is pending and age under 28 min", "status is pending and age over 120 min"])  # fmt: skip
    action = rng.choice(["answer", "skip query_database", "call query_database", "call query_payment_api",
                         "start with query_local_cache", "start with query_database", "skip query_payment_api"])  # fmt: skip
    return f"when {trigger}: {action}"


@pytest.mark.parametrize("seed", range(8))
def test_shelves_find_what_a_scan_of_every_lesson_finds(seed):
    rng = random.Random(seed)
    lessons = [
        lesson(random_rule(rng), rng.choice(["status", "refund"]), rng.choice([*LIVE, "invalid"]), number=i)
        for i in range(120)
    ]
    mem = Memory(FakeClock(), experiences=lessons)
    for _ in range(40):
        rule, task_type = canonical(parse_rule(random_rule(rng))), rng.choice(["status", "refund", "cancel"])
        assert mem.equivalent(rule, task_type) is scan_equivalent(mem, rule, task_type)
    for new in rng.sample(lessons, 15):
        expected = scan_contradicted(mem, new)
        notes = mem._invalidate_contradicted(new, "2025-03-11T12:00")
        assert notes == [f"invalidated: {rule}" for rule in expected]


def test_propose_reads_one_shelf_only(monkeypatch):
    others = [lesson(SKIP_DB, f"type_{i}", number=i) for i in range(500)]  # other task types
    mine = [lesson("when query_local_cache finds the order: answer", number=900),
            lesson("when status is paid: call query_database", number=901),
            lesson("when any task: start with query_database", number=902)]  # fmt: skip
    mem = Memory(FakeClock(), experiences=others + mine)
    calls = counting(monkeypatch, memory, "contradiction")
    decision, new = mem.propose("when query_local_cache finds the order: call query_database",
                                task_id="T1", run_id="R1", task_type="status", calls_saved=2)  # fmt: skip
    assert decision.startswith("written") and calls == [new.parsed, new.parsed]  # its shelf and 'any task'
    assert [e.status for e in mine] == ["invalid", "active", "active"]  # answer against call


def test_shelves_follow_changes_made_behind_memorys_back():
    mem = Memory(FakeClock(), experiences=[lesson(SKIP_DB)])
    rule = canonical(parse_rule(SKIP_DB))
    assert mem.equivalent(rule, "status").id == "000000000000"
    mem.experiences = {}  # replaced, as a test of the guards does
    assert mem.equivalent(rule, "status") is None
    mem.experiences["x"] = added = lesson(SKIP_DB, number=7)  # added by hand
    assert mem.equivalent(rule, "status") is added
    added.rule, added.trigger = "when any task: skip query_database", "any"  # edited in place: filed again
    assert mem.equivalent(rule, "status") is None
    assert mem.equivalent(canonical(parse_rule(added.rule)), "status") is added


# --- a store is handed what memory changed -----------------------------------------------------------
def test_take_changed_writes_what_the_whole_memory_would(tmp_path):
    def run(hand_over) -> list:
        clock = FakeClock()
        mem = Memory(clock, MemoryConfig(), [lesson(SKIP_DB), lesson("when any task: bogus", number=1)])
        store = Store(tmp_path / f"{hand_over.__name__}.sqlite")
        store.save_lessons(mem.experiences.values())
        mem.take_changed()
        steps = [
            lambda: mem.propose("when any task: start with query_local_cache", task_id="T1", run_id="R1",
                                task_type="status"),
            lambda: mem.record_hits([mem.experiences["000000000000"]]),
            lambda: mem.propose("when query_local_cache finds the order: call query_database", task_id="T2",
                                run_id="R2", task_type="status", calls_saved=3),
            lambda: mem.record_outcome(list(mem.live()), {"any"}, correct=False),
            lambda: (clock.advance(days=40), mem.sweep()),
        ]  # fmt: skip
        for number, step in enumerate(steps):
            step()
            store.commit_task(hand_over(mem), task_id=f"T{number}")
        rows = store.db.execute("SELECT * FROM lessons ORDER BY number").fetchall()
        return rows + sorted(
            store.db.execute("SELECT * FROM lesson_history"), key=repr
        )  # one task's in any order

    def changed(mem):
        return mem.take_changed()

    def everything(mem):
        return mem.experiences.values()

    assert run(changed) == run(everything)


def test_a_hand_edit_reaches_the_store_through_take_changed(tmp_path):
    """A student's ``lesson.status = "removed"`` between tasks is written with the next task, as memory's
    own changes are; the store then holds what the whole memory would have given it."""
    mem = Memory(FakeClock(), MemoryConfig(), [lesson(SKIP_DB), lesson(SKIP_DB, "refund", number=1)])
    store = Store(tmp_path / "hand.sqlite")
    store.save_lessons(mem.experiences.values())
    assert mem.take_changed() == []
    kept, edited = mem.experiences.values()
    edited.status, edited.status_reason = "removed", "by hand: wrong for refunds"
    changed = mem.take_changed()
    assert changed == [edited] and mem.take_changed() == []
    store.commit_task(changed, task_id="T1")
    loaded = {e.id: e for e in store.load_memory(FakeClock()).experiences.values()}
    assert loaded[edited.id].status == "removed" and loaded[kept.id].status == "active"


def test_a_lesson_put_in_memory_by_hand_reaches_the_store_and_reports_its_edits(tmp_path):
    """``memory.experiences[lesson.id] = lesson`` between tasks: no field was set, yet the store must get
    it, and its later hand edits too."""
    mem = Memory(FakeClock(), MemoryConfig(), [lesson(SKIP_DB)])
    store = Store(tmp_path / "put.sqlite")
    store.save_lessons(mem.experiences.values())
    assert mem.take_changed() == []
    put = lesson("when any task: skip query_payment_provider", number=1)
    mem.experiences[put.id] = put
    assert mem.take_changed() == [put] and mem.take_changed() == []
    store.commit_task([put], task_id="T1")
    put.status = "removed"
    assert mem.take_changed() == [put]
    _, proposed = mem.propose("when any task: start with query_database", task_id="T2", run_id="R2",
                              task_type="status")  # fmt: skip
    assert mem.take_changed() == [proposed]  # memory's own addition: nothing else looked at again
    loaded = store.load_memory(FakeClock()).experiences
    assert loaded[put.id].rule == put.rule


def test_a_lesson_swapped_in_by_hand_reaches_the_store(tmp_path):
    """``memory.experiences[key] = other`` under a key memory has, or one lesson taken out and another
    put in: no field was set and memory holds as many lessons as before, yet the store must get them."""
    mem = Memory(FakeClock(), MemoryConfig(), [lesson(SKIP_DB), lesson(SKIP_DB, "refund", number=1)])
    mem.take_changed()
    first, second = mem.experiences.values()
    swapped = mem.experiences[first.id] = lesson("when any task: skip query_payment_provider")
    assert swapped in mem.take_changed() and mem.take_changed() == []  # (all: what changed is not known)
    del mem.experiences[second.id]
    put = lesson("when any task: start with query_database", number=2)
    mem.experiences[put.id] = put
    assert put in mem.take_changed()
    swapped.status = "removed"  # watched now: its edits reach the store too
    assert mem.take_changed() == [swapped]


def test_a_new_dict_of_lessons_is_handed_over_whole():
    mem = Memory(FakeClock(), experiences=[lesson(SKIP_DB)])
    mem.take_changed()
    (gone,) = mem.experiences.values()
    mem.experiences = {e.id: e for e in [lesson(SKIP_DB, number=3), lesson(SKIP_DB, "refund", number=4)]}
    gone.status = "removed"  # no longer memory's: not handed over
    assert [e.id for e in mem.take_changed()] == ["000000000003", "000000000004"]
    assert mem.take_changed() == []


@pytest.mark.parametrize("size", [200, 0])  # 0: a memory that starts empty keeps its own dict in step too
def test_take_changed_does_not_read_every_lesson_after_memory_adds_one(monkeypatch, size):
    mem = Memory(FakeClock(), experiences=[lesson(SKIP_DB, f"type_{i}", number=i) for i in range(size)])
    mem.propose("when any task: start with query_database", task_id="T1", run_id="R1", task_type="status")
    read = counting(monkeypatch, experience_module.Experience, "watch")
    mem.take_changed()
    assert read == []


def test_a_proposed_lesson_reports_its_later_changes():
    mem = Memory(FakeClock())
    _, new = mem.propose(SKIP_DB, task_id="T1", run_id="R1", task_type="status")
    assert mem.take_changed() == [new]
    new.failure_reason = "edited by hand"
    assert mem.take_changed() == [new]


def test_quarantine_on_load_is_a_change():
    mem = Memory(FakeClock(), experiences=[lesson(SKIP_DB), lesson("when any task: bogus", number=1)])
    assert [e.id for e in mem.take_changed()] == ["000000000001"] and mem.take_changed() == []


# --- a lesson read back -------------------------------------------------------------------------------
def every_field_given(number: int) -> dict:
    """A lesson's fields, each set to a value unlike its default (as a file written later holds them)."""
    values = asdict(lesson(SKIP_DB, number=number))
    values |= {"confirmations": 3, "hits": 7, "validations": 2, "failures": 1, "calls_saved": 2,
               "status_reason": "why", "source_tasks": ["T1", "T2"], "source_runs": ["R1"],
               "valid_from": "2025-03-11T09:00", "invalid_from": None, "votes_up": 1.5, "votes_down": 0.25,
               "recent": "+-", "wrong_answers": 1}  # fmt: skip
    return values


def required_only(values: dict) -> dict:
    return {f.name: values[f.name] for f in fields(Experience) if f.name in experience_module.REQUIRED_FIELDS}


@pytest.mark.parametrize("given", ["required only", "every field", "an old file's nulls"])
def test_a_lesson_read_back_is_the_lesson_the_constructor_makes(given):
    values = every_field_given(5)
    if given == "required only":
        values = required_only(values)
    if given == "an old file's nulls":  # as an older store or file holds them: __post_init__ fills them in
        values |= {"votes_up": None, "votes_down": None, "recent": None, "wrong_answers": None}
    made, read = Experience(**values), Experience.from_fields(values)
    assert read == made and vars(read) == vars(made)
    assert list(vars(read)) == list(vars(made))  # the same fields, in the same order
    assert type(read) is Experience


def test_lessons_read_back_without_their_lists_each_get_lists_of_their_own():
    bare = required_only(every_field_given(1))
    first, second = Experience.from_fields(bare), Experience.from_fields(bare)
    first.source_tasks.append("T9")
    first.source_runs.append("R9")
    assert second.source_tasks == second.source_runs == []
    assert Experience.from_fields(bare).source_tasks == []


def test_a_lesson_read_back_with_a_field_missing_or_unknown_names_it():
    values = every_field_given(1)
    with pytest.raises(TypeError, match=r"missing required field\(s\): 'rule', 'trigger'"):
        Experience.from_fields({k: v for k, v in values.items() if k not in ("rule", "trigger")})
    with pytest.raises(TypeError, match="not a field of a lesson: 'colour'"):
        Experience.from_fields(values | {"colour": "red"})


def test_a_lesson_read_back_is_watched_once_it_joins_memory():
    read = Experience.from_fields(asdict(lesson(SKIP_DB)))
    mem = Memory(FakeClock(), experiences=[read])
    mem.take_changed()
    read.hits += 1
    assert mem.take_changed() == [read]


# --- tool schemas --------------------------------------------------------------------------------------
def test_a_schema_is_built_once_per_function_definition(monkeypatch):
    OrderWorld(demo_orders()).tools()  # warm: every definition seen once
    calls = counting(monkeypatch, tools, "schema_for")
    first, second = (
        OrderWorld(demo_orders()).tools(),
        OrderWorld(demo_orders()).tools(),
    )  # new closures for each world
    assert calls == []
    assert [t.schema() for t in first] == [t.schema() for t in second]
    first[0].parameters["properties"]["order_id"]["description"] = "changed"
    assert second[0].parameters["properties"]["order_id"]["description"] != "changed"


def test_a_renamed_or_redocumented_function_keeps_its_own_words():
    def make(doc: str):
        def lookup(order_id: str) -> dict:
            return {}

        lookup.__doc__ = doc
        return lookup

    one = tools.tool(make("Look it up.\n\nArgs:\n    order_id: The order."))
    renamed = make("Look it up.\n\nArgs:\n    order_id: The order.")
    renamed.__name__ = "find_order"
    other = tools.tool(make("Find it elsewhere.\n\nArgs:\n    order_id: Its id, e.g. A1."))
    assert (one.name, tools.tool(renamed).name) == ("lookup", "find_order")
    assert (one.description, other.description) == ("Look it up.", "Find it elsewhere.")
    assert other.parameters["properties"]["order_id"]["description"] == "Its id, e.g. A1."
    with pytest.raises(tools.ToolDefinitionError, match="not described"):
        tools.tool(make("Look it up."))


def test_store_speed_answers_help_and_prints_ratios(capsys):
    import importlib.util
    from pathlib import Path

    path = Path(__file__).parents[1] / "benchmarks" / "store_speed.py"
    spec = importlib.util.spec_from_file_location("store_speed", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    with pytest.raises(SystemExit) as done:
        bench.main(["--help"])
    assert done.value.code == 0 and "--sizes" in capsys.readouterr().out
    mem = bench.memory_of(120)
    assert len(mem.experiences) == 120 and not mem.quarantined
    assert {e.task_type for e in mem.experiences.values()} == {"type_0", "type_1", "type_2"}
