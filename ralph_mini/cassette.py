"""Record a real model's replies once, replay them offline forever (notebook 08, real models).

Why: a run of a real model costs time (or money) and is not repeatable on a machine without the
model. A *cassette* is a JSON Lines file with one line per ``complete`` call: the messages and tool
schemas that were sent, a stable hash of them, and the ``ModelReply`` that came back, latency
included, so a replayed trace reports the real model's times.

    model = RecordingModel(OpenAIModel("gemma3-270m", base_url=...), "runs/gemma.jsonl")
    trace = run_react(task, model, tools)            # talks to the server, writes lines
    trace2 = run_react(task, ReplayModel("runs/gemma.jsonl"), tools)   # offline, same trace

Replay is strict and in order: request *i* must hash to the same value as recorded line *i*. When it
does not (a prompt or a tool description changed), ``CassetteMismatch`` names the request index and
the first message that differs, instead of silently returning a reply to a different question.

A cassette holds what was sent and received, never credentials: the key lives in the SDK client, not
in ``messages``; as a belt-and-braces check, any known secret found in a line is redacted.

Left out on purpose: matching out of order or by similarity, editing cassettes, streaming.
"""

import hashlib
import json
import os
from pathlib import Path

from ralph_mini.model import ChatModel, ModelError, ModelReply, ToolCall, Usage

REDACTED = "[REDACTED]"
MIN_SECRET_LEN = 8  # shorter "keys" are placeholders such as "x" or "not-needed"-like stubs
# Notebook 08's committed recordings, found from the package (installed editable: pip install -e .), so
# both editions replay them, notebooks/ and notebooks/zh/; RALPH_CASSETTES still chooses another folder
KIT_CASSETTES = Path(__file__).resolve().parent.parent / "notebooks" / "cassettes"


class CassetteError(ModelError):
    """A cassette file cannot be read: missing, truncated, or not written by RecordingModel."""


class CassetteMismatch(CassetteError):
    """A replayed request is not the one that was recorded at that position."""


def request_hash(messages: list[dict], tools: list[dict]) -> str:
    """A stable digest of one request: key order and whitespace do not change it.

    request_hash([{"role": "user", "content": "hi"}], []) is the same on every machine and run.
    """
    canonical = json.dumps(
        {"messages": messages, "tools": tools},
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def reply_to_dict(reply: ModelReply) -> dict:
    """A ModelReply as plain JSON-ready data (the inverse of ``reply_from_dict``)."""
    return {
        "content": reply.content,
        "tool_calls": [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in reply.tool_calls],
        "usage": {
            "prompt_tokens": reply.usage.prompt_tokens,
            "completion_tokens": reply.usage.completion_tokens,
        },
        "latency_s": reply.latency_s,
    }


def reply_from_dict(data: dict) -> ModelReply:
    """Rebuild the exact ModelReply that was recorded."""
    return ModelReply(
        content=data["content"],
        tool_calls=tuple(ToolCall(c["id"], c["name"], c["arguments"]) for c in data["tool_calls"]),
        usage=Usage(data["usage"]["prompt_tokens"], data["usage"]["completion_tokens"]),
        latency_s=data["latency_s"],
    )


def known_secrets(inner: object) -> list[str]:
    """Secrets that must never reach a cassette: the inner client's key and OPENAI_API_KEY."""
    client_key = getattr(getattr(inner, "client", None), "api_key", None)
    candidates = [client_key, os.environ.get("OPENAI_API_KEY")]
    return [s for s in candidates if isinstance(s, str) and len(s) >= MIN_SECRET_LEN]


class RecordingModel:
    """Wrap any ChatModel; pass every call through and append it to a JSON Lines cassette.

    Appends, so several runs (or several processes, one after another) can build one cassette.
    """

    def __init__(self, inner: ChatModel, path: str | Path):
        self.inner = inner
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.count = len(read_cassette(self.path)) if self.path.exists() else 0
        self.secrets = known_secrets(inner)

    def __repr__(self) -> str:
        return f"RecordingModel({self.inner!r}, path={str(self.path)!r})"

    def complete(self, messages: list[dict], tools: list[dict]) -> ModelReply:
        reply = self.inner.complete(messages, tools)
        record = {
            "index": self.count,
            "model": repr(self.inner),
            "hash": request_hash(messages, tools),
            "messages": messages,
            "tools": tools,
            "reply": reply_to_dict(reply),
        }
        line = json.dumps(record, ensure_ascii=False)
        for secret in self.secrets:
            line = line.replace(secret, REDACTED)
        with self.path.open("a", encoding="utf-8") as file:
            file.write(line + "\n")
        self.count += 1
        return reply


class ReplayModel:
    """Play a cassette back offline, one recorded reply per call, checking each request matches."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.records = read_cassette(self.path)
        self.position = 0

    def __repr__(self) -> str:
        model = self.records[0]["model"] if self.records else "empty"
        return f"ReplayModel({str(self.path)!r}, {len(self.records)} replies of {model})"

    @property
    def remaining(self) -> int:
        return len(self.records) - self.position

    def complete(self, messages: list[dict], tools: list[dict]) -> ModelReply:
        if self.position >= len(self.records):
            raise CassetteMismatch(
                f"request #{self.position}: {self.path} has only {len(self.records)} recorded "
                "requests; the run went further than the recording (record it again)"
            )
        record = self.records[self.position]
        if request_hash(messages, tools) != record["hash"]:
            where = describe_difference(record["messages"], record["tools"], messages, tools)
            raise CassetteMismatch(
                f"request #{self.position} does not match {self.path}: {where}. "
                "The prompt, tools or an earlier reply changed since recording: record it again"
            )
        self.position += 1
        return reply_from_dict(record["reply"])


def read_cassette(path: Path) -> list[dict]:
    """All records of a cassette; a bad line raises CassetteError naming the line and the fix."""
    if not path.exists():
        raise CassetteError(f"no cassette at {path}: record one with RecordingModel first")
    records = []
    with path.open(encoding="utf-8") as file:
        for number, line in enumerate(file, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                reply_from_dict(record["reply"])  # checks every field the replay will need
                _ = record["hash"], record["messages"], record["tools"]
            except (json.JSONDecodeError, KeyError, TypeError, IndexError) as err:
                raise CassetteError(
                    f"{path} line {number} is not a complete cassette record "
                    f"({type(err).__name__}: {err}); the file is truncated or corrupted: "
                    "record it again"
                ) from err
            records.append(record)
    return records


def describe_difference(
    old_messages: list[dict], old_tools: list[dict], messages: list[dict], tools: list[dict]
) -> str:
    """Say where two requests first differ: which message (role, text around it) or which tools."""
    for i, (old, new) in enumerate(zip(old_messages, messages, strict=False)):
        if request_hash([old], []) != request_hash([new], []):
            return f"message {i} ({new.get('role')}) differs: {first_text_difference(old, new)}"
    if len(old_messages) != len(messages):
        return f"recorded {len(old_messages)} messages, got {len(messages)}"
    old_names = [t.get("function", {}).get("name") for t in old_tools]
    new_names = [t.get("function", {}).get("name") for t in tools]
    if old_names != new_names:
        return f"tools differ: recorded {old_names}, got {new_names}"
    return "the tool schemas differ (same names, changed descriptions or parameters)"


def first_text_difference(old: dict, new: dict, width: int = 30) -> str:
    """The JSON text around the first differing character of two messages.

    -> "recorded '...time: 2025-03-10 12:00...' vs got '...time: 2025-03-11 12:00...'"
    """
    a = json.dumps(old, sort_keys=True, ensure_ascii=False)
    b = json.dumps(new, sort_keys=True, ensure_ascii=False)
    at = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    start = max(0, at - width)
    return f"recorded '...{a[start : at + width]}...' vs got '...{b[start : at + width]}...'"
