"""Which model answers: pick one from the environment, and check that it answers (notebooks 01 and 08).

``model_from_env()`` reads a few variables *when called* (never at import), so the same notebook runs
on the offline model or on any OpenAI-compatible server without a code change, and a running kernel
switches backend by setting ``os.environ`` and calling it again. ``check_backend(model)`` sends one
tiny request and says, in one line, whether the model answers, or what to fix (a wrong URL, no key,
a model not pulled).

Left out on purpose: a provider hierarchy (one adapter, ``OpenAIModel``, covers every server) and
reading configuration files.
"""

import os
from collections.abc import Mapping
from dataclasses import dataclass

from ralph_mini.model import ChatModel, ModelError, OpenAIModel
from ralph_mini.offline import OfflineModel
from ralph_mini.offline_habits import Habits

# The bundled tiny model as ``local.py`` serves it; here so that naming it costs no server imports.
LOCAL_MODEL_NAME = "gemma3-270m"  # the alias the server answers to: use it as RALPH_MODEL
DEFAULT_PORT = 8765


def model_from_env(env: Mapping[str, str] | None = None, habits: Habits | None = None) -> ChatModel:
    """Pick the model from environment variables, read when called (never at import).

    - nothing set, or ``RALPH_MODEL=offline``: ``OfflineModel(seed=RALPH_SEED or 0, habits=habits)``,
      acting with the naive habits of the world whose ``habits`` it is given (a real model ignores them);
    - ``RALPH_MODEL=<name>``: ``OpenAIModel`` with ``OPENAI_BASE_URL`` and ``OPENAI_API_KEY``.
      Local servers (Ollama, vLLM, llama.cpp) need a base URL but no real key. ``RALPH_TIMEOUT_S``
      (default 60) and ``RALPH_MAX_RETRIES`` (default 2) go to the SDK; ``RALPH_MAX_TOKENS`` caps
      each reply (default: the server's own limit).

    Only ``env`` is read (``os.environ`` when None): the URL and key are passed to the SDK explicitly,
    so it cannot quietly pick up a different ``OPENAI_BASE_URL`` from the process environment.
    """
    env = os.environ if env is None else env
    name = env.get("RALPH_MODEL", "").strip()
    if name in ("", "offline"):
        seed = env.get("RALPH_SEED", "").strip() or "0"
        if not seed.lstrip("-").isdigit():
            raise ValueError(f"RALPH_SEED={seed!r} is not an integer: set it to e.g. 0, or unset it")
        return OfflineModel(seed=int(seed), habits=habits)
    base_url = env.get("OPENAI_BASE_URL", "").strip() or None
    api_key = env.get("OPENAI_API_KEY", "").strip() or None
    if api_key is None and base_url is None:
        raise ModelError(
            f"RALPH_MODEL={name} needs OPENAI_API_KEY for OpenAI, or OPENAI_BASE_URL for a local "
            "server (e.g. http://localhost:11434/v1 for Ollama); unset RALPH_MODEL to go offline"
        )
    return OpenAIModel(
        name,
        base_url=base_url or OpenAIModel.DEFAULT_BASE_URL,
        api_key=api_key or "not-needed",  # local servers accept any key, but the SDK wants one
        timeout_s=_number(env, "RALPH_TIMEOUT_S", 60.0),
        max_retries=int(_number(env, "RALPH_MAX_RETRIES", 2)),
        max_tokens=int(_number(env, "RALPH_MAX_TOKENS", 0)) or None,
    )


def _number(env: Mapping[str, str], name: str, default: float) -> float:
    """A non-negative number from the environment, or a ValueError naming the variable."""
    text = env.get(name, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if value < 0:
        raise ValueError(
            f"{name}={text!r} is not a non-negative number: set it to e.g. {default:g}, or unset it"
        )
    return value


BACKENDS = {  # the documented settings (docs/real_models.md), exactly as model_from_env() reads them
    "OpenAI": {"RALPH_MODEL": "gpt-4o-mini", "OPENAI_API_KEY": "sk-...your key..."},
    "Ollama": {"RALPH_MODEL": "qwen2.5:7b", "OPENAI_BASE_URL": "http://localhost:11434/v1"},
    "vLLM": {"RALPH_MODEL": "Qwen/Qwen2.5-7B-Instruct", "OPENAI_BASE_URL": "http://localhost:8000/v1"},
    "llama.cpp": {"RALPH_MODEL": LOCAL_MODEL_NAME, "OPENAI_BASE_URL": f"http://127.0.0.1:{DEFAULT_PORT}/v1"},
}
PING = [{"role": "user", "content": "Reply with one word: ready"}]


@dataclass(frozen=True)
class BackendCheck:
    """The verdict of ``check_backend``: does the model answer, and if not, what to fix."""

    ok: bool
    backend: str
    message: str

    def __str__(self) -> str:
        return f"{'OK' if self.ok else 'FAILED'}: {self.backend}: {self.message}"


def describe_backend(model: ChatModel) -> str:
    """Which backend a model is, in words: 'OpenAIModel gemma3-270m at http://127.0.0.1:8765/v1'."""
    url = getattr(model, "base_url", None)
    name = getattr(model, "model", None)
    if url and name:
        return f"{type(model).__name__} {name!r} at {url}"
    return repr(model)


def check_backend(model: ChatModel) -> BackendCheck:
    """Send one tiny request; say the model answers (and what, how fast), or why it does not.

    Never raises for a backend failure: a ``ModelError`` (wrong URL, bad key, model not pulled, ...)
    becomes ``ok=False`` with the adapter's own message, which names the setting to fix.
    """
    backend = describe_backend(model)
    try:
        reply = model.complete(PING, [])
    except ModelError as err:
        return BackendCheck(False, backend, str(err))
    said = (reply.content or "").strip().replace("\n", " ")
    if not said and not reply.tool_calls:
        return BackendCheck(False, backend, "it answered with an empty reply: check that it is a chat model")
    shown = said[:60] + ("..." if len(said) > 60 else "")
    return BackendCheck(True, backend, f"answers ({reply.usage.completion_tokens} tokens, "
                        f"{reply.latency_s:.2f} s): {shown!r}")  # fmt: skip
