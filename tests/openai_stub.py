"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1, for tests.

Why a real server instead of a mock: ``OpenAIModel`` is the kit's one real adapter, and what can go wrong
with it lives in the HTTP layer (status codes, retries, timeouts, bodies that are not JSON). So tests
point the real ``openai`` SDK at this stub and exercise the whole path end to end, with no network.

Each test scripts the replies, in order, as ``Canned`` values (or functions of the request body that
return one) and then reads ``stub.requests`` to see exactly what the SDK sent::

    with running_stub() as stub:
        stub.script(completion(tool_calls=[tool_call("query_local_cache", '{"order_id": "A123"}')]),
                    api_error(503, "overloaded"))
        OpenAIModel("m", base_url=stub.url, api_key="x").complete(messages, tools)
        stub.requests[0].body["model"]  # -> "m"

Everything is bounded: a request after the script runs out gets an HTTP 500 the SDK will not retry
(``x-should-retry: false``), a delay is capped at ``MAX_DELAY_S`` and cut short when the stub stops,
and ``running_stub`` stops the server on exit.

Left out on purpose: streaming, every endpoint but ``POST /v1/chat/completions``, authentication.
"""

import json
import threading
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CHAT_PATH = "/v1/chat/completions"
MAX_DELAY_S = 10.0  # no scripted delay may hold a test longer than this
FAST_RETRY = {"retry-after-ms": "1"}  # the SDK honours it: a retry after 1 ms, not 0.5-8 s


@dataclass(frozen=True)
class Canned:
    """One scripted HTTP answer. A ``str`` body is sent as-is, so it can be malformed JSON."""

    status: int = 200
    body: dict | str = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0  # wait this long before answering (to trip the client's timeout)


Reply = Canned | Callable[[dict], Canned]  # a canned answer, or one computed from the request body


@dataclass(frozen=True)
class Recorded:
    """One request as the stub received it: path, headers (lower-case names) and the JSON body."""

    path: str
    headers: dict[str, str]
    body: dict


def tool_call(name: str, arguments: str, call_id: str = "call_1") -> dict:
    """A ``tool_calls[]`` entry; ``arguments`` is the JSON *text* the model wrote, possibly broken."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def completion(
    content: str | None = None,
    tool_calls: list[dict] | None = None,
    *,
    model: str = "stub-model",
    usage: tuple[int, int] | None = (21, 7),
    headers: dict[str, str] | None = None,
) -> Canned:
    """A 200 with the full ``chat.completion`` shape, as OpenAI sends it. ``usage=None`` leaves it out."""
    message: dict = {"role": "assistant", "content": content, "refusal": None}
    if tool_calls:
        message["tool_calls"] = tool_calls
    body: dict = {
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "created": 1741600800,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": "tool_calls" if tool_calls else "stop",
            }
        ],
    }
    if usage is not None:
        prompt, completion_tokens = usage
        body["usage"] = {
            "prompt_tokens": prompt,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt + completion_tokens,
        }
    return Canned(body=body, headers=headers or {})


def api_error(
    status: int,
    message: str,
    *,
    error_type: str = "invalid_request_error",
    code: str | None = None,
    headers: dict[str, str] | None = None,
) -> Canned:
    """An error in OpenAI's shape: ``{"error": {"message", "type", "param", "code"}}``."""
    error = {"message": message, "type": error_type, "param": None, "code": code}
    return Canned(status=status, body={"error": error}, headers=headers or {})


class ChatStub:
    """The server and its script. Use ``running_stub()`` rather than start/stop by hand."""

    def __init__(self) -> None:
        self.pending: deque[Reply] = deque()
        self.requests: list[Recorded] = []
        self.stopping = threading.Event()  # wakes every delayed answer at shutdown
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)

    @property
    def url(self) -> str:
        """The base URL to give the SDK, like ``http://127.0.0.1:54321/v1``."""
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def script(self, *replies: Reply) -> None:
        """Queue answers; each request takes the next one."""
        with self.lock:
            self.pending.extend(replies)

    def answer(self, path: str, body: dict, headers: dict[str, str]) -> Canned:
        """Record the request and pick its answer (called on the server's threads)."""
        with self.lock:
            self.requests.append(Recorded(path, headers, body))
            if path != CHAT_PATH:
                return api_error(404, f"stub serves only POST {CHAT_PATH}, not {path}")
            if not self.pending:
                return api_error(500, "stub script exhausted", headers={"x-should-retry": "false"})
            reply = self.pending.popleft()
        return reply(body) if callable(reply) else reply

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.stopping.set()
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


@contextmanager
def running_stub() -> Iterator[ChatStub]:
    """A started stub on a free port, always stopped on exit."""
    stub = ChatStub()
    stub.start()
    try:
        yield stub
    finally:
        stub.stop()


def closed_port_url() -> str:
    """A base URL where nothing listens (a port just freed), so connecting is refused at once."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    port = server.server_address[1]
    server.server_close()
    return f"http://127.0.0.1:{port}/v1"


def _handler_for(stub: ChatStub) -> type[BaseHTTPRequestHandler]:
    """A request-handler class bound to one stub (http.server wants a class, not an instance)."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as the SDK's connection pool expects
        disable_nagle_algorithm = True  # headers and body go out in two writes: no 40 ms ACK wait

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                body = {"unparsed": raw.decode(errors="replace")}
            headers = {name.lower(): value for name, value in self.headers.items()}
            self.send(stub.answer(self.path, body, headers))

        def send(self, canned: Canned) -> None:
            if canned.delay_s:
                stub.stopping.wait(min(canned.delay_s, MAX_DELAY_S))
            payload = canned.body if isinstance(canned.body, str) else json.dumps(canned.body)
            data = payload.encode()
            try:
                self.send_response(canned.status)
                headers = {"content-type": "application/json"} | canned.headers
                headers["content-length"] = str(len(data))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout): nothing left to tell it

        def log_message(self, format: str, *args: object) -> None:
            pass  # keep pytest output clean; stub.requests is the log

    return Handler
