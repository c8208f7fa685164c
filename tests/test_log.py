"""The execution log: compact records, an append-only JSONL round trip, clear errors on bad lines."""

import pytest

from ralph_mini.log import append_run, format_for_reflection, load_log, log_run, summarize_args
from ralph_mini.offline import OfflineModel
from ralph_mini.react import run_react
from ralph_mini.world import grade
from ralph_mini.worlds import orders

SUITE = orders.make_suite(n=10, seed=7)
TOOLS = SUITE.world.tools()


def run(i, run_id):
    trace = run_react(SUITE.tasks[i], OfflineModel(habits=orders.HABITS), TOOLS)
    return log_run(trace, run_id, grade(trace.task, trace.answer).correct)


def test_records_are_compact():
    records, summary = run(1, "R002")  # B456: look-alike tool, cache, database, provider
    assert [(r.step, r.tool, r.status) for r in records] == [
        (1, "get_shipping_status", "wrong_tool"),
        (2, "query_local_cache", "ok"),
        (3, "query_database", "ok"),
        (4, "query_payment_api", "not_found"),
    ]
    assert records[1].args == "order_id=B456"
    assert records[1].observation == "status=pending, amount=215.0, created_at=2025-03-10 11:48"
    assert records[3].observation == "the payment provider has no transaction for order B456"
    assert records[3].latency_s > 6.0  # the provider's 6 s plus the model's turn
    assert (summary.calls, summary.wrong_calls, summary.correct) == (4, 1, True)
    assert summary.tokens == sum(r.tokens_in + r.tokens_out for r in records) + summary.tokens - sum(
        r.tokens_in + r.tokens_out for r in records
    )


def test_round_trip_and_append_only(tmp_path):
    path = tmp_path / "session.jsonl"
    first, second = run(0, "R001"), run(2, "R003")
    append_run(path, *first)
    append_run(path, *second)
    records, summaries = load_log(path)
    assert records == first[0] + second[0]
    assert summaries == [first[1], second[1]]
    assert len(path.read_text().splitlines()) == len(records) + 2


def test_bad_line_names_file_and_line(tmp_path):
    path = tmp_path / "session.jsonl"
    append_run(path, *run(0, "R001"))
    with path.open("a") as file:
        file.write('{"type": "step", "run_id": "R9"\n')
    with pytest.raises(ValueError, match=r"session.jsonl:4: not a log line"):
        load_log(path)


def test_format_for_reflection_is_the_compact_log():
    text = format_for_reflection(*run(0, "R001"))
    lines = text.splitlines()
    assert lines[0] == "run R001 at 2025-03-10 12:00: Check order A123 and report its status and amount."
    assert lines[1].startswith("1 query_local_cache(order_id=A123) ok ")
    assert lines[1].endswith(
        "s: status=paid, amount=99.5, created_at=2025-03-10 09:12, paid_at=2025-03-10 09:13"
    )
    assert lines[3].startswith('result: answered, answer {"order_id": "A123", "status": "paid"')
    assert "2 calls, 0 wrong" in lines[3]
    assert "You are an order-status assistant" not in text  # never the transcript


def test_summarize_args():
    assert summarize_args('{"order_id": "A123"}') == "order_id=A123"
    assert summarize_args('{"order_id": "A1') == '{"order_id": "A1'
    assert summarize_args("[1, 2]") == "[1, 2]"


def test_summarize_args_survives_deep_nesting():
    assert summarize_args("[" * 1500) == "[" * 40
