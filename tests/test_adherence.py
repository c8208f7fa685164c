"""Follow rates (adherence.py): did a run do what the lessons whose trigger held say?"""

import json

import pytest
from fakes import ScriptedModel

from ralph_mini.adherence import adherence, follow_rate, follow_rates, outcome_by_following
from ralph_mini.enforce_bench import cost_table, recovery, run_modes
from ralph_mini.model import ModelReply, ToolCall, Usage
from ralph_mini.react import run_react
from ralph_mini.scenario_bench import BARE, FULL, run_arm
from ralph_mini.worlds import orders

SUITE = orders.make_suite(n=50, seed=7)
TASK = SUITE.tasks[0]  # A123, paid, in the cache
TOOLS = SUITE.world.tools()
LOOKUPS = [t.name for t in TOOLS if not t.writes]
FINAL = ModelReply('Final answer: {"order_id": "A123", "status": "paid", "amount": 99.5}', (), Usage(1, 1))


def run(*tools: str):
    calls = [ModelReply(None, (ToolCall(f"c{i}", t, json.dumps({"order_id": "A123"})),), Usage(1, 1))
             for i, t in enumerate(tools)]  # fmt: skip
    return run_react(TASK, ScriptedModel(*calls, FINAL), TOOLS)


def verdict(lesson: str, *tools: str) -> tuple[bool, bool]:
    [found] = adherence(run(*tools), [lesson], orders.WORDS, LOOKUPS)
    return found.held, found.followed


@pytest.mark.parametrize(
    ("lesson", "tools", "held", "followed"),
    [
        ("when query_local_cache finds the order: skip query_database", ["query_local_cache"], True, True),
        ("when query_local_cache finds the order: skip query_database",
         ["query_local_cache", "query_database"], True, False),
        ("when query_local_cache finds nothing: skip query_database", ["query_local_cache"], False, False),
        ("when any task: start with query_database", ["query_database"], True, True),
        ("when any task: start with query_database", ["query_local_cache", "query_database"], True, False),
        ("when status is paid: call query_payment_api", ["query_local_cache", "query_payment_api"], True, True),
        ("when status is paid: call query_payment_api", ["query_local_cache"], True, False),
        ("when query_local_cache finds the order: answer", ["query_local_cache"], True, True),
        ("when query_local_cache finds the order: answer", ["query_local_cache", "query_database"], True, False),
    ],
)  # fmt: skip
def test_each_rule_form_is_checked_against_what_the_run_did(lesson, tools, held, followed):
    assert verdict(lesson, *tools) == (held, followed)


def test_a_skip_before_its_trigger_held_is_not_a_breach():
    lesson = "when query_database finds the order: skip query_local_cache"
    assert verdict(lesson, "query_local_cache", "query_database") == (True, True)


def test_rates_count_only_lessons_whose_trigger_held_and_sum_by_form():
    runs = [
        adherence(run("query_local_cache"), ["when query_local_cache finds nothing: skip query_database"],
                  orders.WORDS, LOOKUPS),
        adherence(run("query_local_cache", "query_database"),
                  ["when query_local_cache finds the order: skip query_database",
                   "when any task: start with query_local_cache"], orders.WORDS, LOOKUPS),
    ]  # fmt: skip
    rows = {row["rule form"]: row for row in follow_rates(runs)}
    assert rows["skip"] == {"rule form": "skip", "trigger held": 1, "followed": 0, "follow rate": "0%"}
    assert rows["start"]["follow rate"] == "100%"
    assert rows["all"]["trigger held"] == 2 and follow_rate(runs) == "50%"
    assert follow_rate([]) == "-"
    outcome = outcome_by_following(zip(runs, (True, False), strict=True))
    assert [(o["count"], o["correct"]) for o in outcome] == [(0, "0/0"), (1, "0/1")]


def test_a_lesson_that_does_not_parse_is_not_counted():
    assert adherence(run("query_local_cache"), ["when the moon is full: dance"], orders.WORDS, LOOKUPS) == []


def test_the_offline_model_follows_what_it_reads_and_the_cost_table_has_every_mode():
    rows = {row["agent"]: row for row in cost_table(run_modes(["static"], jobs=1))}
    assert list(rows) == ["bare ReAct", "Ralph Loop, prompt", "Ralph Loop, guard", "Ralph Loop, both"]
    assert rows["bare ReAct"]["lessons followed"] == "-"
    assert rows["Ralph Loop, prompt"]["lessons followed"] == "100%"  # by construction
    assert rows["Ralph Loop, prompt"]["refusals"] == 0 and rows["Ralph Loop, guard"]["refusals"] > 0
    assert rows["Ralph Loop, both"]["correct"] == rows["Ralph Loop, prompt"]["correct"] == "50/50"


def test_recovery_is_counted_from_each_change_of_the_world():
    assert recovery(run_arm("static", BARE)) == []  # no change, nothing to recover from
    drift = run_arm("drift", FULL)
    assert len(recovery(drift)) == len({c.at for c in drift.scenario.changes if c.fields})
