"""The whole Ralph Loop on a world whose every word is renamed (``renamed_world.py``): it still learns.

The order desk's roles, none of its words: if an agent module still leaned on a tool name, a status, a
field or the noun "order", the loop would learn less here, or a lesson, the reflector's prompt or a log
would spell an order-desk word. The reference is bare ReAct on the same 50 tasks.
"""

import json
import re
from dataclasses import asdict

import pytest
import renamed_world as depot

from ralph_mini.bench import RALPH, run_agent
from ralph_mini.hardening import NOT_FOUND, OK, WRONG_STATUSES
from ralph_mini.lesson_guards import foreign_names
from ralph_mini.log import log_run
from ralph_mini.measure import RunRecord
from ralph_mini.offline import OfflineModel
from ralph_mini.react import run_react
from ralph_mini.reflect import reflection_messages, reflection_text
from ralph_mini.rules import parse_rule
from ralph_mini.scenario_bench import BARE
from ralph_mini.worlds import orders

SPLIT = 20  # tasks 1-20 teach; tasks 21-50 show what was learned

# Every word of the order desk: its tools, noun, id argument, statuses, fields and request type.
ORDER_WORDS = frozenset(
    {t.name for t in orders.OrderWorld(orders={}).tools()}
    | set(orders.WORDS.vocabulary())
    | {r.name for r in orders.WORDS.requests}
    | {"order", "order_id"}
)
ORDER_WORD = re.compile(
    r"(?<![A-Za-z0-9_])(" + "|".join(map(re.escape, sorted(ORDER_WORDS, key=len, reverse=True))) + r")"
    r"(?![A-Za-z0-9_])",
    re.I,
)
# The agent's own words, which the order desk happens to spell too: the rule grammar's "status is WORD"
# and memory's trigger tag "status:WORD", the reflector's frame line "status field NAME" and its
# template's "four sections in this order", and a log step's outcome column (hardening's ``not_found``).
# Anywhere else they count as order-desk words.
AGENT_PHRASES = re.compile(r"\bstatus(?: is\b| field\b|:)|\bin this order\b", re.I)
STEP_OUTCOME = re.compile(
    rf"^(\d+ \S+\(.*\)) (?:{'|'.join((OK, NOT_FOUND, *WRONG_STATUSES))}) (?=[\d.]+s: )", re.M
)


def order_words_in(text: str) -> list[str]:
    """The order desk's words in ``text``, besides the agent's own phrases: 'skip query_database for
    the order' -> ['order', 'query_database']; 'when status is on_hold: answer' -> []."""
    text = STEP_OUTCOME.sub(r"\1 OUTCOME ", AGENT_PHRASES.sub(" ", text))
    return sorted({m.lower() for m in ORDER_WORD.findall(text)})


def lesson_problems(lesson: str) -> list[str]:
    """What a lesson names outside the depot: a tool or status it does not have (``foreign_names``, with
    its read-only tools and statuses), or any order-desk word. A line outside the grammar raises."""
    found = foreign_names(parse_rule(lesson), depot.READ_ONLY, depot.STATES)
    return found + [f"order-desk word {word}" for word in order_words_in(lesson)]


@pytest.fixture(scope="module")
def runs() -> dict:
    """Bare ReAct and the Ralph Loop on the same 50 depot tasks, each agent in a fresh depot."""
    done = {}
    for agent in (BARE, RALPH):
        suite = depot.make_suite(n=50, seed=7)
        model = OfflineModel(seed=0, habits=depot.HABITS)
        done[agent.name] = run_agent(agent, suite.tasks, model, suite.world.tools(), words=depot.WORDS)
    return done


def calls_per_task(records: list[RunRecord]) -> float:
    return sum(r.calls for r in records) / len(records)


def test_the_depot_has_the_order_desks_roles_and_none_of_its_words():
    order_tools, tools = orders.OrderWorld(orders={}).tools(), depot.Depot(parcels={}).tools()
    roles = [(t.core, t.writes, bool(t.statuses), t.holds_every, t.lag_min, t.latency_s) for t in order_tools]
    assert [
        (t.core, t.writes, bool(t.statuses), t.holds_every, t.lag_min, t.latency_s) for t in tools
    ] == roles
    assert (depot.HABITS.fast, depot.HABITS.full, depot.HABITS.lagging) == depot.LOOKUPS
    assert depot.HABITS.writes == (depot.NOTICE, depot.REVERSE)
    assert [t.name for t in tools if not t.writes] == list(depot.READ_ONLY)
    mine = {t.name for t in tools} | set(depot.WORDS.vocabulary()) | {r.name for r in depot.WORDS.requests}
    assert not mine & ORDER_WORDS
    said = [depot.PROMPT, *depot.QUESTIONS, *(json.dumps(t.schema()) for t in tools)]
    assert [order_words_in(text) for text in said] == [[]] * len(said)


def test_the_loop_learns_in_the_renamed_world(runs):
    bare, _, _ = runs[BARE.name]
    loop, memory, _ = runs[RALPH.name]
    bare_calls, loop_calls = calls_per_task(bare[SPLIT:]), calls_per_task(loop[SPLIT:])
    oracle = sum(r.oracle_calls for r in bare[SPLIT:]) / len(bare[SPLIT:])
    assert bare_calls >= oracle + 0.5, "the naive habits waste calls here too"
    assert loop_calls <= 0.75 * bare_calls, (
        f"calls/task on 21-50: bare {bare_calls:.2f}, loop {loop_calls:.2f}"
    )
    assert sum(r.correct for r in loop[SPLIT:]) >= sum(r.correct for r in bare[SPLIT:])
    assert memory.active(), "the loop learned no active lesson"


def test_every_lesson_speaks_only_the_renamed_world(runs):
    _, memory, _ = runs[RALPH.name]
    lessons = list(memory.experiences.values())  # every status: candidate, active, expired, invalid ...
    assert len(lessons) >= 3
    assert {e.rule: lesson_problems(e.rule) for e in lessons} == {e.rule: [] for e in lessons}
    notes = [" ".join([e.trigger, *e.tools, e.result, e.failure_reason]) for e in lessons]
    assert [order_words_in(note) for note in notes] == [[]] * len(notes)


@pytest.mark.parametrize(
    ("lesson", "problems"),
    [
        ("when peek_depot_shelf finds the parcel: skip read_ledger", []),
        # foreign_names does not judge the noun: the word check does
        ("when peek_depot_shelf finds the order: answer", ["order-desk word order"]),
        (
            "when query_local_cache finds the parcel: skip read_ledger",
            ["tool query_local_cache", "order-desk word query_local_cache"],
        ),
        (
            "when status is pending and age under 30 min: skip ask_clearing_house",
            ["status pending", "order-desk word pending"],
        ),
    ],
)
def test_the_lesson_check_fails_on_an_order_desk_word(lesson, problems):
    assert lesson_problems(lesson) == problems


def test_the_reflector_prompt_and_the_loops_logs_speak_no_order_desk_word(runs):
    _, _, results = runs[RALPH.name]
    tools = depot.make_suite(n=1).world.tools()
    logs = []  # every run the loop logged, as the store keeps it and as the reflector reads it
    for number, result in enumerate(results, 1):
        run_id = f"R{number:03d}"
        graded = [(t, f"{run_id}.{k}", None) for k, t in enumerate(result.discarded, 1)]
        for trace, name, correct in [*graded, (result.trace, run_id, result.correct)]:
            records, summary = log_run(trace, name, correct)
            steps = [[v for k, v in asdict(r).items() if k != "status"] for r in records]  # not the outcome
            logs.append(json.dumps([*steps, list(asdict(summary).values())]))  # the values, not the schema
            logs.append(reflection_text(trace, name, correct))
        logs += result.memory_notes
    assert len(logs) >= 100
    assert {text: order_words_in(text) for text in logs if order_words_in(text)} == {}
    reflected = next(r for r in results if r.reflections)
    log_text = reflection_text(reflected.trace, "R001", reflected.correct)
    for message in reflection_messages(log_text, tools, depot.WORDS):
        assert order_words_in(message["content"]) == [], message["content"]
    line = "1 read_ledger(order_id=PX-1234) not_found 0.80s: no order here; status is paid"
    assert order_words_in(line) == ["order", "order_id", "paid"]  # the check can fail


def test_a_look_alike_gets_the_id_under_the_worlds_id_argument():
    """The naive model stuffs the id into a look-alike's id argument by the world's word, not by a name."""
    suite = depot.make_suite(n=50, seed=7)
    model, tools = OfflineModel(seed=0, habits=depot.HABITS), suite.world.tools()
    sent = [
        (json.loads(step.arguments), task.record_id)
        for task in suite.tasks
        for step in run_react(task, model, tools).steps
        if step.tool == depot.COURIER
    ]
    assert sent, "no task was tempted by the courier look-alike"
    assert sent == [({depot.WORDS.id_argument: code}, code) for _, code in sent]
