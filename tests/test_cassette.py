"""Cassettes: a recorded run replays offline to the identical trace, and any drift fails loudly."""

import json

import pytest

from ralph_mini.cassette import (
    REDACTED,
    CassetteError,
    CassetteMismatch,
    RecordingModel,
    ReplayModel,
    read_cassette,
    request_hash,
)
from ralph_mini.model import ModelReply, ToolCall, Usage
from ralph_mini.offline import OfflineModel
from ralph_mini.react import run_react
from ralph_mini.worlds.orders import HABITS, make_suite

SUITE = make_suite(n=6, seed=7)
TOOLS = SUITE.world.tools()


def record(path, tasks=SUITE.tasks[:4], model=None):
    recorder = RecordingModel(model or OfflineModel(seed=3, habits=HABITS), path)
    return [run_react(task, recorder, TOOLS) for task in tasks], recorder


def test_replay_gives_the_identical_trace(tmp_path):
    cassette = tmp_path / "run.jsonl"
    recorded, recorder = record(cassette)
    replay = ReplayModel(cassette)
    replayed = [run_react(task, replay, TOOLS) for task in SUITE.tasks[:4]]
    assert replayed == recorded  # steps, messages, answers, tokens and latencies alike
    assert replay.remaining == 0
    calls = sum(t.model_calls for t in recorded)
    assert recorder.count == calls == len(read_cassette(cassette))
    assert [t.latency_s for t in replayed] == [t.latency_s for t in recorded]


def test_each_line_holds_request_hash_and_reply(tmp_path):
    cassette = tmp_path / "run.jsonl"
    [trace], _ = record(cassette, tasks=SUITE.tasks[:1])
    first = json.loads(cassette.read_text().splitlines()[0])
    assert first["index"] == 0
    assert first["model"] == "OfflineModel(seed=3)"
    assert first["messages"] == trace.messages[:2]  # system prompt and question
    assert first["hash"] == request_hash(trace.messages[:2], [t.schema() for t in TOOLS])
    assert first["reply"]["tool_calls"][0]["name"] == trace.steps[0].tool


def test_recording_appends_and_keeps_counting(tmp_path):
    cassette = tmp_path / "run.jsonl"
    first, _ = record(cassette, tasks=SUITE.tasks[:1])
    second, recorder = record(cassette, tasks=SUITE.tasks[1:2])
    lines = [json.loads(line) for line in cassette.read_text().splitlines()]
    assert [line["index"] for line in lines] == list(range(len(lines)))
    assert recorder.count == first[0].model_calls + second[0].model_calls


def test_hash_ignores_key_order_but_not_content():
    a = [{"role": "user", "content": "hi"}]
    assert request_hash(a, []) == request_hash([{"content": "hi", "role": "user"}], [])
    assert request_hash(a, []) != request_hash([{"role": "user", "content": "hi!"}], [])


def test_changed_prompt_names_request_and_message(tmp_path):
    cassette = tmp_path / "run.jsonl"
    record(cassette, tasks=SUITE.tasks[:1])
    replay = ReplayModel(cassette)
    with pytest.raises(CassetteMismatch) as err:
        run_react(SUITE.tasks[0], replay, TOOLS, lessons=["when any task: start with query_database"])
    text = str(err.value)
    assert "request #0" in text
    assert "message 0 (system) differs" in text
    assert "Lessons from earlier runs" in text  # the text around the first difference is shown


def test_changed_tools_are_named(tmp_path):
    cassette = tmp_path / "run.jsonl"
    record(cassette, tasks=SUITE.tasks[:1])
    core = SUITE.world.tools(core_only=True)
    with pytest.raises(CassetteMismatch, match=r"request #0 .*tools differ: recorded \[.*get_shipping"):
        run_react(SUITE.tasks[0], ReplayModel(cassette), core)


def test_running_past_the_recording_fails(tmp_path):
    cassette = tmp_path / "run.jsonl"
    [trace], _ = record(cassette, tasks=SUITE.tasks[:1])
    replay = ReplayModel(cassette)
    run_react(SUITE.tasks[0], replay, TOOLS)
    with pytest.raises(CassetteMismatch, match=f"request #{trace.model_calls}: .* has only"):
        run_react(SUITE.tasks[0], replay, TOOLS)


@pytest.mark.parametrize(
    "damage",
    [
        lambda text: text[: len(text) // 2],  # truncated mid-line, as by a killed process
        lambda text: text.replace('"reply"', '"rep"', 1),  # a field missing
        lambda text: "not json\n" + text,
    ],
)
def test_corrupted_cassette_names_the_line(tmp_path, damage):
    cassette = tmp_path / "run.jsonl"
    record(cassette, tasks=SUITE.tasks[:2])
    cassette.write_text(damage(cassette.read_text()))
    with pytest.raises(CassetteError, match=r"run.jsonl line \d+ is not a complete cassette record"):
        ReplayModel(cassette)


def test_missing_cassette_says_how_to_make_one(tmp_path):
    with pytest.raises(CassetteError, match="record one with RecordingModel"):
        ReplayModel(tmp_path / "nothing.jsonl")


class KeyedModel:
    """A fake real model whose client holds a key and which (wrongly) echoes it back."""

    class client:  # noqa: N801 - mimics the attribute OpenAIModel has
        api_key = "sk-test-1234567890"

    def complete(self, messages, tools):
        return ModelReply(
            content="key is sk-test-1234567890",
            tool_calls=(ToolCall("c1", "query_database", '{"order_id": "A123"}'),),
            usage=Usage(10, 5),
            latency_s=1.25,
        )


def test_api_key_never_reaches_the_cassette(tmp_path):
    cassette = tmp_path / "run.jsonl"
    RecordingModel(KeyedModel(), cassette).complete([{"role": "user", "content": "hi"}], [])
    text = cassette.read_text()
    assert "sk-test-1234567890" not in text
    assert REDACTED in text
    reply = ReplayModel(cassette).complete([{"role": "user", "content": "hi"}], [])
    assert reply.latency_s == 1.25 and reply.usage == Usage(10, 5)


def test_committed_gemma_cassette_still_replays():
    """The real Gemma run a notebook replays: it breaks if the prompt or the tools change."""
    from pathlib import Path

    cassette = Path(__file__).parent.parent / "notebooks" / "cassettes" / "gemma_react.jsonl"
    suite = make_suite(n=50, seed=7)
    replay = ReplayModel(cassette)
    try:
        traces = [run_react(t, replay, suite.world.tools(core_only=True)) for t in suite.tasks[:10]]
    except CassetteMismatch as err:
        pytest.fail(
            f"{err}\nRe-record it: python benchmarks/local_llm.py --record {cassette} --record-tasks 10"
        )
    assert replay.remaining == 0
    assert all(t.model_latency_s > 0 for t in traces)  # the real model's measured times
    assert sum(t.answer is not None for t in traces) == 10
