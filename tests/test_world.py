"""The order world: the seed's demo data, the tools' answers and latencies, the suite and the grader."""

from collections import Counter

import pytest

from ralph_mini.tools import NotFound
from ralph_mini.world import grade, parse_time, time_since
from ralph_mini.worlds.orders.tasks import make_suite
from ralph_mini.worlds.orders.words import LOOKUP_TOOLS


@pytest.fixture
def suite():
    return make_suite(n=50, seed=7)


def tools_by_name(suite):
    return {t.name: t for t in suite.world.tools()}


def test_demo_data_from_the_article(suite):
    tools = tools_by_name(suite)
    a123 = tools["query_local_cache"](order_id="A123")
    assert (a123["status"], a123["amount"]) == ("paid", 99.5)
    b456 = tools["query_local_cache"](order_id="B456")
    assert (b456["status"], b456["amount"]) == ("pending", 215.0)
    with pytest.raises(NotFound):
        tools["query_local_cache"](order_id="C789")
    c789 = tools["query_database"](order_id="C789")
    assert (c789["status"], c789["amount"], c789["payment_method"]) == ("refunded", 66.0, "paypal")
    assert tools["query_payment_api"](order_id="A123")["txn_id"] == "TXN-88231"
    with pytest.raises(NotFound, match="no transaction"):
        tools["query_payment_api"](order_id="B456")  # created 12 minutes ago: not settled yet


def test_latencies_fast_to_slow(suite):
    tools = tools_by_name(suite)
    assert [tools[name].latency_s for name in LOOKUP_TOOLS] == [0.05, 0.8, 6.0]


def test_core_only_hides_extended_tools(suite):
    assert [t.name for t in suite.world.tools(core_only=True)] == list(LOOKUP_TOOLS)
    assert len(suite.world.tools()) == 9


def test_suite_is_seeded_and_mixed():
    first, again, other = make_suite(50, seed=7), make_suite(50, seed=7), make_suite(50, seed=8)
    assert first.tasks == again.tasks
    assert first.tasks != other.tasks
    assert [t.record_id for t in first.tasks[:4]] == ["A123", "B456", "C789", "D012"]
    kinds = Counter(t.kind for t in first.tasks)
    assert set(kinds) == {
        "paid_cached",
        "paid_uncached",
        "refunded",
        "pending_fresh",
        "pending_stale",
        "missing",
    }
    assert sum(t.oracle_calls for t in first.tasks) == 76


def test_expected_answers(suite):
    by_id = {t.record_id: t for t in suite.tasks}
    assert by_id["A123"].expected == {"status": "paid", "amount": 99.5, "paid_at": "2025-03-10 09:13"}
    assert by_id["B456"].expected == {"status": "pending", "amount": 215.0}
    assert by_id["D012"].expected == {
        "status": "paid",
        "amount": 42.0,
        "paid_at": "2025-03-10 08:32",
        "txn_id": "TXN-90417",
    }
    assert (by_id["A123"].oracle_calls, by_id["C789"].oracle_calls, by_id["D012"].oracle_calls) == (1, 2, 2)


def test_grader_checks_every_field(suite):
    task = suite.tasks[0]  # A123
    good = {"status": "PAID", "amount": "99.50", "paid_at": "2025-03-10 09:13", "extra": 1}
    assert grade(task, good).correct
    wrong = grade(task, {"status": "paid", "amount": 99.0, "paid_at": "2025-03-10 09:13"})
    assert not wrong.correct
    assert wrong.explain() == "amount: expected 99.5, got 99.0"
    assert set(grade(task, None).wrong_fields) == {"status", "amount", "paid_at"}
    stale = next(t for t in suite.tasks if t.record_id == "D012")
    pending_answer = {"status": "pending", "amount": 42.0}
    assert set(grade(stale, pending_answer).wrong_fields) == {"status", "paid_at", "txn_id"}


def test_a_longer_suite_only_appends():
    assert make_suite(n=50, seed=7).tasks[:10] == make_suite(n=10, seed=7).tasks


def test_parse_time_reads_the_worlds_format_and_refuses_others():
    assert parse_time("2025-03-10 12:00").isoformat() == "2025-03-10T12:00:00"
    for wrong in ("2025-03-10T12:00", "10/03/2025 12:00", ""):
        with pytest.raises(ValueError):
            parse_time(wrong)


def test_time_since_a_stamp_or_none_for_what_is_not_one():
    """The offline model (a record's age) and the reflector (a log line's age) read times this way."""
    now = parse_time("2025-03-10 12:30")
    assert time_since(" 2025-03-10 12:00 ", now).total_seconds() == 1800
    assert time_since("2025-03-10 1", now) is None and time_since("paid", now) is None
