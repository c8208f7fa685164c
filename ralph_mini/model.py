"""The model interface, in OpenAI chat-completions shape (notebook 01).

Every model in the kit is one method: ``complete(messages, tools) -> ModelReply``. ``messages`` and
``tools`` are the plain dicts the OpenAI API takes, so a student can print exactly what was sent, and the
same agent code runs on the offline model (``offline.py``), on OpenAI, or on any OpenAI-compatible server
(Ollama, vLLM, llama.cpp) through ``OpenAIModel``.

Left out on purpose: streaming, images, a provider hierarchy. The ``openai`` SDK already speaks to every
OpenAI-compatible server, so one adapter is enough; retries and timeouts are the SDK's own, configured
here rather than rewritten.
"""

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from ralph_mini.tokens import count_tokens as count_tokens  # notebooks and exercises import it from here


@dataclass(frozen=True)
class ToolCall:
    """One function call requested by the model.

    ``arguments`` stays the raw JSON text the model wrote: parsing (and rejecting) it is the agent
    loop's job, so a malformed call becomes an observation instead of a crash.
    """

    id: str
    name: str
    arguments: str

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass(frozen=True)
class ModelReply:
    """An assistant turn: an optional thought (``content``), optional tool calls, usage and latency.

    ``latency_s`` is simulated for the offline model and measured for a real one.
    """

    content: str | None
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = field(default_factory=Usage)
    latency_s: float = 0.0

    def to_message(self) -> dict:
        """The assistant message to append to the conversation, in OpenAI shape."""
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [call.to_dict() for call in self.tool_calls]
        return message


def wire_message(message: dict) -> dict:
    """A message as a server is sent it: a tool-calling assistant turn with ``content: null`` (the OpenAI
    shape) gets ``""`` instead, which llama-cpp-python's server requires (it rejects null: HTTP 500)."""
    if message.get("role") == "assistant" and message.get("content") is None and message.get("tool_calls"):
        return {**message, "content": ""}
    return message


class ChatModel(Protocol):
    """Anything with this one method is a model for the kit."""

    def complete(self, messages: list[dict], tools: list[dict]) -> ModelReply: ...


class ModelError(RuntimeError):
    """The model backend failed (network, key, rate limit, server). The message names what to fix."""


CHECK_URL = "check that OPENAI_BASE_URL points to an OpenAI-compatible API, usually ending in /v1"


class OpenAIModel:
    """A real model behind the ``openai`` SDK: OpenAI itself or any OpenAI-compatible server.

    >>> OpenAIModel("qwen2.5:7b", base_url="http://localhost:11434/v1")  # Ollama  # doctest: +SKIP

    ``max_retries`` and ``timeout_s`` go to the SDK, which already retries connection errors, timeouts,
    408, 409, 429 and 5xx with exponential backoff (0.5 s doubling to 8 s, or the server's
    ``retry-after``). Every failure comes out as one ``ModelError`` naming the setting to fix, and never
    containing the API key. Pass ``client`` to inject a prepared ``openai.OpenAI`` (then its own timeout
    and retries apply). ``tools_in_body``, for a server without tool calling: each turn's tools become
    request fields (llama.cpp: a ``response_format`` schema naming only them), not ``tools``.
    """

    DEFAULT_BASE_URL = "https://api.openai.com/v1"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        temperature: float = 0.0,
        timeout_s: float = 60.0,
        max_retries: int = 2,
        max_tokens: int | None = None,
        extra_body: dict | None = None,
        tools_in_body: Callable[[list[dict]], dict] | None = None,
        client: Any = None,
        clock: Callable[[], float] = time.perf_counter,
    ):
        import openai  # imported here so the offline path never needs the SDK

        self.model = model
        self.temperature = temperature
        self.max_tokens = max_tokens  # caps each reply: a base model may write until its context is full
        self.extra_body = extra_body  # server-specific request fields, sent as they are (response_format)
        self.tools_in_body = tools_in_body
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.clock = clock
        if client is None:
            try:
                client = openai.OpenAI(
                    base_url=base_url, api_key=api_key, timeout=timeout_s, max_retries=max_retries
                )
            except openai.OpenAIError:  # the SDK found no key, here or in the environment
                raise ModelError(
                    f"model {model!r} needs an API key: set OPENAI_API_KEY, or OPENAI_BASE_URL for a "
                    "local server (which accepts any key)"
                ) from None
        self.client = client
        # The URL actually used: the SDK may have read OPENAI_BASE_URL itself when base_url is None.
        self.base_url = str(getattr(client, "base_url", None) or base_url or self.DEFAULT_BASE_URL)
        self.base_url = self.base_url.rstrip("/")

    def __repr__(self) -> str:
        # Never show the key: reprs end up in notebooks and logs.
        return f"OpenAIModel(model={self.model!r}, base_url={self.base_url!r})"

    def complete(self, messages: list[dict], tools: list[dict]) -> ModelReply:
        import openai

        request: dict[str, Any] = {
            "model": self.model,
            "messages": [wire_message(m) for m in messages],
            "temperature": self.temperature,
        }
        body = dict(self.extra_body or {})
        if tools and self.tools_in_body:
            body.update(self.tools_in_body(tools))
        elif tools:
            request["tools"] = tools
        if self.max_tokens is not None:
            request["max_tokens"] = self.max_tokens
        if body:
            request["extra_body"] = body
        start = self.clock()
        try:
            response = self.client.chat.completions.create(**request)
        except openai.APIError as err:
            why = explain_api_error(
                err, self.model, self.base_url, timeout_s=self.timeout_s, max_retries=self.max_retries
            )
            # `from None`: the traceback must not print the raw SDK error, which may quote the key;
            # it stays reachable for debugging as the ModelError's __context__.
            raise ModelError(self.redact(why)) from None
        except json.JSONDecodeError as err:  # a 200 whose JSON body is cut or malformed
            raise ModelError(
                f"the server at {self.base_url} sent a body that is not valid JSON ({err}): {CHECK_URL}"
            ) from None
        return reply_from_openai(response, latency_s=self.clock() - start)

    def redact(self, text: str) -> str:
        """Hide the API key in ``text``: some servers echo the key they rejected in their message.

        Keys under 8 characters are placeholders that local servers accept ("ollama", "x"), not secrets;
        masking them would garble ordinary words ("run `ollama pull`").
        """
        key = getattr(self.client, "api_key", None)
        return text.replace(key, "[OPENAI_API_KEY]") if isinstance(key, str) and len(key) >= 8 else text


def reply_from_openai(response: Any, latency_s: float = 0.0) -> ModelReply:
    """Convert an SDK ``ChatCompletion`` into a ModelReply, or raise ModelError saying what is wrong.

    Lenient where local servers differ from OpenAI: no ``usage`` counts as 0 tokens, ``content=None``
    stays None, a tool call without an id gets ``call_<n>``, and arguments sent as a JSON object rather
    than a JSON string are turned back into text (the loop parses them either way).
    """
    choices = getattr(response, "choices", None)
    if not isinstance(choices, list):  # the SDK hands back plain text when the body is not JSON
        what = repr(response[:80]) if isinstance(response, str) else "JSON without a choices list"
        raise ModelError(f"the server answered {what}, not a chat completion: {CHECK_URL}")
    if not choices or getattr(choices[0], "message", None) is None:
        raise ModelError("the server answered with no message: check that RALPH_MODEL is a chat model")
    message = choices[0].message
    calls = []
    for n, call in enumerate(message.tool_calls or [], start=1):
        arguments = call.function.arguments
        if not isinstance(arguments, str):  # some servers send {"order_id": ...}, not its JSON text
            arguments = json.dumps(arguments)
        calls.append(ToolCall(id=call.id or f"call_{n}", name=call.function.name, arguments=arguments))
    usage = getattr(response, "usage", None)
    prompt, completion = (getattr(usage, name, 0) or 0 for name in ("prompt_tokens", "completion_tokens"))
    return ModelReply(message.content, tuple(calls), Usage(prompt, completion), latency_s=latency_s)


def explain_api_error(
    err: Exception,
    model: str,
    base_url: str | None,
    *,
    timeout_s: float | None = None,
    max_retries: int | None = None,
) -> str:
    """Turn an SDK exception into one sentence naming the setting to fix.

    The SDK retries only connection errors, timeouts, 429 and 5xx, so only those say "after retries".
    """
    import openai

    where = base_url or OpenAIModel.DEFAULT_BASE_URL
    after = f" after {max_retries} {'retry' if max_retries == 1 else 'retries'}" if max_retries else ""
    body = getattr(err, "body", None)
    said = str((body.get("message") if isinstance(body, dict) else body) or "")[:200]
    if isinstance(err, openai.AuthenticationError):
        return f"the server at {where} rejected the API key (HTTP 401): set OPENAI_API_KEY to a valid key"
    if isinstance(err, openai.PermissionDeniedError):
        return (
            f"the API key may not use model {model!r} at {where} (HTTP 403): check the project of "
            "OPENAI_API_KEY, or choose another RALPH_MODEL"
        )
    if isinstance(err, openai.NotFoundError):
        return (
            f"model {model!r} was not found at {where} (HTTP 404): check RALPH_MODEL (for Ollama, "
            f"run `ollama pull {model}` first) and that OPENAI_BASE_URL ends in /v1"
        )
    if isinstance(err, openai.RateLimitError) and getattr(err, "code", None) == "insufficient_quota":
        return f"the account of OPENAI_API_KEY has no quota left at {where} (HTTP 429): check its billing"
    if isinstance(err, openai.RateLimitError):
        return (
            f"rate limited by {where} (HTTP 429){after}: wait a minute, send fewer requests, or "
            "raise max_retries"
        )
    if isinstance(err, openai.APITimeoutError):
        limit = f"within timeout_s={timeout_s} s" if timeout_s is not None else "in time"
        return (
            f"{where} did not answer {limit}{after}: check that the server is not overloaded, "
            "or raise timeout_s (a small local model can be slow)"
        )
    if isinstance(err, openai.APIConnectionError):
        return f"cannot connect to {where}{after}: check OPENAI_BASE_URL and that the server is running"
    if isinstance(err, openai.APIResponseValidationError):
        return f"the server at {where} did not answer with a chat completion: {CHECK_URL}"
    if isinstance(err, openai.APIStatusError) and err.status_code >= 500:
        return (
            f"the server at {where} failed with HTTP {err.status_code}{after} ({said}): try again "
            "later, or check the server behind OPENAI_BASE_URL"
        )
    if isinstance(err, openai.APIStatusError):
        return f"the server at {where} refused the request with HTTP {err.status_code}: {said}"
    return f"the model backend at {where} failed: {err}"
