"""OpenAIModel end to end: the real ``openai`` SDK against a scripted HTTP server on 127.0.0.1.

Nothing is mocked between ``OpenAIModel.complete`` and the socket, so these tests check what a student
with a real key or a local server gets: the request the SDK sends, the reply the agent reads, the SDK's
own retries, and one ModelError per failure that names the setting to fix and never shows the key.
"""

import json
import re
import time

import pytest
from openai.types.chat import ChatCompletion
from openai_stub import (
    FAST_RETRY,
    Canned,
    api_error,
    closed_port_url,
    completion,
    running_stub,
    tool_call,
)

from ralph_mini.backends import model_from_env
from ralph_mini.model import ModelError, ModelReply, OpenAIModel, ToolCall, Usage, reply_from_openai
from ralph_mini.offline import OfflineModel
from ralph_mini.react import build_system_prompt, run_react
from ralph_mini.world import grade
from ralph_mini.worlds.orders import HABITS, make_suite

KEY = "sk-test-" + "a1B2c3D4e5" * 4  # shaped like a real key, so a leak would be easy to spot
SUITE = make_suite(n=4, seed=7)  # demo orders first: T001 asks about A123, paid and cached
A123 = SUITE.tasks[0]
TOOLS = SUITE.world.tools(core_only=True)
SCHEMAS = [t.schema() for t in TOOLS]
MESSAGES = [
    {"role": "system", "content": build_system_prompt(A123.system_prompt)},
    {"role": "user", "content": A123.question},
]
CACHE_CALL = tool_call("query_local_cache", '{"order_id": "A123"}', "call_abc")


@pytest.fixture
def stub():
    with running_stub() as server:
        yield server


def model_for(stub, **settings) -> OpenAIModel:
    """A model on the stub; no retries unless a test asks, so a failure costs one request."""
    options = {"api_key": KEY, "max_retries": 0, "timeout_s": 5.0} | settings
    return OpenAIModel("stub-model", base_url=stub.url, **options)


def fails_with(model: OpenAIModel) -> str:
    """Call the model, expect a ModelError, return its message."""
    with pytest.raises(ModelError) as caught:
        model.complete(MESSAGES, SCHEMAS)
    return str(caught.value)


# --- one turn: request sent, reply parsed -------------------------------------------------------


def test_tool_call_turn_sends_openai_request_and_parses_the_call(stub):
    stub.script(completion("I'll check the cache.", [CACHE_CALL], usage=(120, 18)))
    ticks = iter([10.0, 10.25])
    reply = model_for(stub, clock=lambda: next(ticks)).complete(MESSAGES, SCHEMAS)

    assert reply == ModelReply(
        content="I'll check the cache.",
        tool_calls=(ToolCall("call_abc", "query_local_cache", '{"order_id": "A123"}'),),
        usage=Usage(prompt_tokens=120, completion_tokens=18),
        latency_s=0.25,
    )
    [sent] = stub.requests
    assert sent.path == "/v1/chat/completions"
    assert sent.body["model"] == "stub-model"
    assert sent.body["messages"] == MESSAGES
    assert sent.body["tools"] == SCHEMAS
    assert sent.body["temperature"] == 0.0
    assert sent.headers["authorization"] == f"Bearer {KEY}"


def test_text_turn_parses_and_sends_no_tools_key_when_there_are_none(stub):
    stub.script(completion('Done.\nFinal answer: {"status": "paid"}', usage=(30, 9)))
    reply = model_for(stub, temperature=0.7).complete(MESSAGES, [])

    assert reply.tool_calls == ()
    assert reply.usage == Usage(30, 9)
    assert reply.to_message() == {"role": "assistant", "content": 'Done.\nFinal answer: {"status": "paid"}'}
    assert "tools" not in stub.requests[0].body
    assert stub.requests[0].body["temperature"] == 0.7


def test_tools_in_body_sends_the_turn_s_tools_as_request_fields_not_as_tools(stub):
    """A model without tool calling (llama.cpp + JSON schema): each turn's tools become its schema, so a
    guard that offers one tool on the first turn binds at the server too."""
    stub.script(completion("ok", usage=(5, 1)), completion("ok", usage=(5, 1)))
    model = model_for(stub, extra_body={"cache_prompt": True},
                      tools_in_body=lambda tools: {"allowed": [t["function"]["name"] for t in tools]})  # fmt: skip
    model.complete(MESSAGES, SCHEMAS[:1])
    model.complete(MESSAGES, [])
    first, second = (r.body for r in stub.requests)
    assert "tools" not in first and first["allowed"] == [SCHEMAS[0]["function"]["name"]]
    assert first["cache_prompt"] is True
    assert "allowed" not in second and second["cache_prompt"] is True  # no tools: the fixed fields only


def test_reply_without_usage_and_with_null_content(stub):
    stub.script(completion(None, [CACHE_CALL], usage=None))
    reply = model_for(stub).complete(MESSAGES, SCHEMAS)
    assert reply.content is None
    assert reply.usage == Usage(0, 0)
    assert reply.to_message()["content"] is None
    assert reply.tool_calls[0].name == "query_local_cache"


def test_reply_from_openai_on_a_validated_completion_without_usage():
    # The same conversion, without HTTP: the SDK's own strict model of the body the stub sends.
    response = ChatCompletion.model_validate(completion(None, [CACHE_CALL], usage=None).body)
    assert response.usage is None
    assert reply_from_openai(response, latency_s=1.5) == ModelReply(
        content=None,
        tool_calls=(ToolCall("call_abc", "query_local_cache", '{"order_id": "A123"}'),),
        usage=Usage(0, 0),
        latency_s=1.5,
    )


def test_local_server_quirks_missing_call_id_and_object_arguments(stub):
    # Some servers leave out the call id, or send arguments as an object instead of JSON text.
    quirky = {"type": "function", "function": {"name": "query_database", "arguments": {"order_id": "C789"}}}
    stub.script(completion(None, [quirky]))
    reply = model_for(stub).complete(MESSAGES, SCHEMAS)
    assert reply.tool_calls == (ToolCall("call_1", "query_database", '{"order_id": "C789"}'),)


HTML = {"content-type": "text/html"}
CHECK_URL = "check that OPENAI_BASE_URL points to an OpenAI-compatible API, usually ending in /v1"


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        (Canned(body='{"id": "chatcmpl-1", "choices": [{"ind'), "sent a body that is not valid JSON"),
        (Canned(body="<html>Welcome to nginx</html>", headers=HTML), "'<html>Welcome to nginx</html>'"),
        (Canned(body={"detail": "Not a chat API"}), "answered JSON without a choices list"),
    ],
    ids=["malformed-json", "html-page", "json-without-choices"],
)
def test_a_body_that_is_not_a_chat_completion_names_the_base_url(stub, answer, says):
    stub.script(answer)
    message = fails_with(model_for(stub))
    assert says in message and message.endswith(CHECK_URL)


def test_a_completion_without_choices_names_the_model_setting(stub):
    stub.script(Canned(body={"id": "x", "object": "chat.completion", "choices": []}))
    assert fails_with(model_for(stub)) == (
        "the server answered with no message: check that RALPH_MODEL is a chat model"
    )


# --- the whole bare ReAct agent over HTTP -------------------------------------------------------


def answer_from_observation(body: dict) -> Canned:
    """Turn 2 of a scripted model: answer from the tool observation the SDK actually delivered."""
    observation = body["messages"][-1]["content"]  # 'ok: 4 fields: status=paid, amount=99.5, ...'
    fields = dict(re.findall(r"(\w+)=([^,]+)", observation))
    answer = {"order_id": "A123", "status": fields["status"], "amount": float(fields["amount"]),
              "paid_at": fields["paid_at"]}  # fmt: skip
    return completion(f"The cache has it.\nFinal answer: {json.dumps(answer)}", usage=(260, 40))


def test_run_react_over_http_answers_and_grades_correct(stub):
    stub.script(completion("Check the cache first.", [CACHE_CALL], usage=(200, 20)), answer_from_observation)
    trace = run_react(A123, model_for(stub), TOOLS)

    assert trace.stop_reason == "answered"
    assert [(s.tool, s.status) for s in trace.steps] == [("query_local_cache", "ok")]
    assert trace.steps[0].thought == "Check the cache first."
    assert trace.answer == {"order_id": "A123", "status": "paid", "amount": 99.5,
                            "paid_at": "2025-03-10 09:13"}  # fmt: skip
    assert grade(A123, trace.answer).correct
    assert (trace.model_calls, trace.tokens_in, trace.tokens_out) == (2, 460, 60)
    # What went over the wire on turn 2: the assistant's call, then the observation for that call id.
    second = stub.requests[1].body["messages"]
    assert [m["role"] for m in second] == ["system", "user", "assistant", "tool"]
    assert second[2]["tool_calls"] == [CACHE_CALL]
    assert second[3] == {
        "role": "tool",
        "tool_call_id": "call_abc",
        "content": "ok: 4 fields: status=paid, amount=99.5, created_at=2025-03-10 09:12, "
        "paid_at=2025-03-10 09:13",
    }


def test_a_tool_calling_turn_without_text_goes_over_the_wire_with_empty_content(stub):
    # llama-cpp-python's server answers HTTP 500 to an assistant message with content null (the OpenAI
    # shape of a pure tool call); an empty string is accepted by both. The trace keeps None.
    stub.script(completion(None, [CACHE_CALL]), answer_from_observation)
    trace = run_react(A123, model_for(stub), TOOLS)
    assert trace.stop_reason == "answered"
    second = stub.requests[1].body["messages"]
    assert second[2]["content"] == "" and second[2]["tool_calls"] == [CACHE_CALL]
    assert trace.messages[2]["content"] is None


def test_run_react_over_http_records_unknown_tool_and_malformed_arguments(stub):
    stub.script(
        completion("Try the DB.", [tool_call("query_db", '{"order_id": "A123"}', "c1")]),
        completion("Cache then.", [tool_call("query_local_cache", '{"order_id": "A1', "c2")]),
        completion("Again, properly.", [tool_call("query_local_cache", '{"order_id": "A123"}', "c3")]),
        answer_from_observation,
    )
    trace = run_react(A123, model_for(stub), TOOLS)

    assert trace.stop_reason == "answered"
    assert [s.status for s in trace.steps] == ["wrong_tool", "bad_args", "ok"]
    assert trace.wrong_calls == 2
    assert grade(A123, trace.answer).correct
    observations = [m["content"] for m in stub.requests[3].body["messages"] if m["role"] == "tool"]
    assert observations[0] == (
        "error: unknown tool 'query_db'; known tools are query_local_cache, query_database, query_payment_api"
    )
    assert observations[1].startswith("bad_args: arguments are not valid JSON")


def test_run_react_over_http_stops_at_max_pitfall_depth(stub):
    wrong = [completion(None, [tool_call("query_db", "{}", f"c{i}")]) for i in range(10)]
    stub.script(*wrong)
    trace = run_react(A123, model_for(stub), TOOLS, max_pitfall_depth=3)
    assert trace.stop_reason == "max_pitfall_depth: 4 wrong calls"
    assert len(stub.requests) == 4  # it stopped asking the model


# --- model_from_env -----------------------------------------------------------------------------


def test_model_from_env_nothing_set_is_offline():
    model = model_from_env({})
    assert isinstance(model, OfflineModel) and model.seed == 0
    assert model_from_env({"RALPH_MODEL": "offline", "RALPH_SEED": "3"}).seed == 3
    assert model_from_env({}, habits=HABITS).habits is HABITS  # it acts with the world's habits it is given


def test_model_from_env_bad_seed_names_the_variable():
    with pytest.raises(ValueError, match="RALPH_SEED='abc'"):
        model_from_env({"RALPH_SEED": "abc"})


def test_model_from_env_local_server_needs_no_key(stub):
    model = model_from_env({"RALPH_MODEL": "qwen-local", "OPENAI_BASE_URL": stub.url})
    assert isinstance(model, OpenAIModel)
    assert repr(model) == f"OpenAIModel(model='qwen-local', base_url='{stub.url}')"
    stub.script(completion("hello"))
    assert model.complete(MESSAGES, []).content == "hello"
    assert stub.requests[0].body["model"] == "qwen-local"
    assert stub.requests[0].headers["authorization"] == "Bearer not-needed"


def test_model_from_env_reads_only_the_mapping_it_is_given(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # must not leak in
    model = model_from_env({"RALPH_MODEL": "gpt-4o-mini", "OPENAI_API_KEY": KEY})
    assert model.base_url == "https://api.openai.com/v1"
    assert KEY not in repr(model)


def test_model_from_env_without_key_or_url_names_both():
    with pytest.raises(ModelError) as caught:
        model_from_env({"RALPH_MODEL": "gpt-4o-mini"})
    assert "OPENAI_API_KEY" in str(caught.value) and "OPENAI_BASE_URL" in str(caught.value)


def test_openai_model_without_any_key_is_a_model_error(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_ADMIN_KEY", raising=False)
    with pytest.raises(ModelError, match="OPENAI_API_KEY"):
        OpenAIModel("gpt-4o-mini")


# --- failures: one ModelError each, naming the fix ----------------------------------------------


def test_connection_refused_names_the_base_url():
    url = closed_port_url()
    model = OpenAIModel("stub-model", base_url=url, api_key=KEY, max_retries=0, timeout_s=2.0)
    start = time.perf_counter()
    message = fails_with(model)
    assert message == (f"cannot connect to {url}: check OPENAI_BASE_URL and that the server is running")
    assert time.perf_counter() - start < 2.0


def test_timeout_names_timeout_s(stub):
    stub.script(Canned(body=completion("late").body, delay_s=5.0))
    start = time.perf_counter()
    message = fails_with(model_for(stub, timeout_s=0.3))
    assert f"{stub.url} did not answer within timeout_s=0.3 s" in message
    assert "raise timeout_s" in message
    assert time.perf_counter() - start < 2.0  # the client gave up; it did not wait 5 s


def test_timeout_is_retried_by_the_sdk(stub):
    stub.script(*[Canned(body=completion("late").body, delay_s=5.0)] * 2)
    message = fails_with(model_for(stub, timeout_s=0.3, max_retries=1))
    assert "within timeout_s=0.3 s after 1 retry" in message
    assert len(stub.requests) == 2


def test_401_names_the_key_setting_and_is_not_retried(stub):
    stub.script(api_error(401, "Incorrect API key provided.", code="invalid_api_key"))
    message = fails_with(model_for(stub, max_retries=2))
    assert message == (
        f"the server at {stub.url} rejected the API key (HTTP 401): set OPENAI_API_KEY to a valid key"
    )
    assert len(stub.requests) == 1


def test_404_names_the_model_and_base_url_settings(stub):
    stub.script(api_error(404, "model 'stub-model' not found", code="model_not_found"))
    message = fails_with(model_for(stub, max_retries=2))
    assert "model 'stub-model' was not found" in message
    assert "RALPH_MODEL" in message and "OPENAI_BASE_URL ends in /v1" in message
    assert len(stub.requests) == 1


def test_429_uses_the_sdk_retries_then_fails(stub):
    stub.script(*[api_error(429, "Rate limit reached", code="rate_limit_exceeded", headers=FAST_RETRY)] * 3)
    start = time.perf_counter()
    message = fails_with(model_for(stub, max_retries=2))
    assert message.startswith(f"rate limited by {stub.url} (HTTP 429) after 2 retries")
    assert "max_retries" in message
    assert [r.headers["x-stainless-retry-count"] for r in stub.requests] == ["0", "1", "2"]
    # retry-after-ms: 1 was honoured; the SDK's own backoff would take >= 0.375 + 0.75 s.
    assert time.perf_counter() - start < 1.0


def test_429_out_of_quota_points_at_the_account(stub):
    stub.script(api_error(429, "You exceeded your current quota", code="insufficient_quota"))
    assert "OPENAI_API_KEY has no quota left" in fails_with(model_for(stub))


@pytest.mark.parametrize("status", [500, 503])
def test_5xx_uses_the_sdk_retries_then_fails(stub, status):
    stub.script(*[api_error(status, "overloaded", error_type="server_error", headers=FAST_RETRY)] * 3)
    message = fails_with(model_for(stub, max_retries=2))
    assert message == (
        f"the server at {stub.url} failed with HTTP {status} after 2 retries (overloaded): "
        "try again later, or check the server behind OPENAI_BASE_URL"
    )
    assert len(stub.requests) == 3


def test_503_then_success_is_retried_by_the_sdk(stub):
    stub.script(api_error(503, "warming up", headers=FAST_RETRY), completion("ready"))
    reply = model_for(stub, max_retries=2).complete(MESSAGES, SCHEMAS)
    assert reply.content == "ready"
    assert len(stub.requests) == 2


def test_script_exhausted_is_not_retried(stub):
    # The stub's own guard: past the script it answers 500 with x-should-retry: false.
    message = fails_with(model_for(stub, max_retries=2))
    assert "HTTP 500" in message and "stub script exhausted" in message
    assert len(stub.requests) == 1


# --- the key never shows ------------------------------------------------------------------------


@pytest.mark.parametrize("status", [400, 401, 403, 404, 429, 500, 503])
def test_the_key_never_appears_in_errors_even_when_the_server_echoes_it(stub, status):
    stub.script(api_error(status, f"Incorrect API key provided: {KEY}"))
    model = model_for(stub)
    message = fails_with(model)
    assert KEY not in message
    assert KEY not in repr(model)
    assert len(message) > 40  # a real sentence, not an empty string


def test_a_server_echo_of_the_key_is_replaced_by_the_setting_name(stub):
    stub.script(api_error(400, f"bad request from {KEY}"))
    assert fails_with(model_for(stub)) == (
        f"the server at {stub.url} refused the request with HTTP 400: bad request from [OPENAI_API_KEY]"
    )
