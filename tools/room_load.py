"""The load one student puts on a shared model server, per notebook: requests and tokens.

How it measures: it starts an OpenAI-compatible chat-completions server on 127.0.0.1 (a free port)
whose answers come from ``ralph_mini.OfflineModel``, then executes each notebook, in a temporary copy
of its folder (see ``nbrun.py``), with ``RALPH_MODEL=room-stub``, ``OPENAI_BASE_URL`` pointing at that
server and ``OPENAI_API_KEY=x``: exactly what a room's students set, so every ``model_from_env()`` in a
notebook sends its requests to the server, which counts them with the ``usage`` it reports.

What the numbers mean, and do not:

- Token counts are the kit's own estimate (``ralph_mini.model.count_tokens``: about 4 characters a
  token), not a real tokenizer's; a real model's tokenizer differs by tens of per cent.
- The stub answers as the offline model would, so the agent takes the offline model's steps. A real
  model takes more steps (wrong calls, re-asks) or fewer; read the counts as the order of magnitude.
- Notebook 08 is measured as it runs by default: its experiments replay recorded cassettes and send
  nothing; only its backend check goes to the server. With ``RALPH_LIVE=1`` it would run them live.
- Notebooks and exercises that build ``OfflineModel()`` themselves send nothing, whatever is set.

It also checks that a running kernel can be switched to another backend without restarting JupyterLab:
a kernel starts offline, a cell sets ``%env RALPH_MODEL=...`` and ``%env OPENAI_BASE_URL=...``, and the
next ``model_from_env()`` sends its request to the server.

    python tools/room_load.py            # every lesson and exercise (about 2 minutes on 2 cores)
    python tools/room_load.py 06 ex      # only notebook 06 and the exercises (names starting so)

It prints a markdown table.
"""

import argparse
import json
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import nbformat
from nbclient import NotebookClient
from nbrun import lesson_notebooks, patched_environ, run_copy

from ralph_mini import OfflineModel
from ralph_mini.worlds import orders

MODEL_NAME = "room-stub"


@dataclass
class Load:
    """What one notebook sent to the server."""

    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0


class RoomServer:
    """``POST /v1/chat/completions`` answered by the offline model with the order desk's habits (the world
    of every lesson that sends requests); counts into ``self.load``."""

    def __init__(self) -> None:
        self.model = OfflineModel(seed=0, habits=orders.HABITS)
        self.load = Load()
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def answer(self, body: dict) -> dict:
        reply = self.model.complete(body.get("messages", []), body.get("tools") or [])
        with self.lock:
            self.load.requests += 1
            self.load.prompt_tokens += reply.usage.prompt_tokens
            self.load.completion_tokens += reply.usage.completion_tokens
        message: dict = {"role": "assistant", "content": reply.content, "refusal": None}
        if reply.tool_calls:
            message["tool_calls"] = [call.to_dict() for call in reply.tool_calls]
        usage = {
            "prompt_tokens": reply.usage.prompt_tokens,
            "completion_tokens": reply.usage.completion_tokens,
        }
        return {
            "id": f"chatcmpl-{self.load.requests}",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", MODEL_NAME),
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "logprobs": None,
                    "finish_reason": "tool_calls" if reply.tool_calls else "stop",
                }
            ],
            "usage": usage | {"total_tokens": sum(usage.values())},
        }


def _handler(room: RoomServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as the SDK's connection pool expects
        disable_nagle_algorithm = True

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
            if self.path.rstrip("/").endswith("/chat/completions"):
                status, payload = 200, room.answer(body)
            else:
                status, payload = 404, {"error": {"message": f"only /v1/chat/completions, not {self.path}"}}
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: object) -> None:
            pass

    return Handler


@contextmanager
def running_room() -> Iterator[RoomServer]:
    room = RoomServer()
    room.thread.start()
    try:
        yield room
    finally:
        room.server.shutdown()
        room.server.server_close()
        room.thread.join(timeout=5)


def measure(room: RoomServer, prefixes: list[str]) -> list[tuple[str, Load, float]]:
    """Execute each notebook against the room server; its load and wall seconds."""
    env = {"RALPH_MODEL": MODEL_NAME, "OPENAI_BASE_URL": room.url, "OPENAI_API_KEY": "x"}
    rows = []
    for path in lesson_notebooks():
        if prefixes and not path.name.startswith(tuple(prefixes)):
            continue
        room.load = Load()
        seconds, _ = run_copy(path, env=env)
        rows.append((path.name, room.load, seconds))
        print(f"measured {path.name}", file=sys.stderr)
    return rows


SWITCH_CELLS = [
    "from ralph_mini import model_from_env\nmodel = model_from_env()\nprint(type(model).__name__)",
    "%env RALPH_MODEL={name}\n%env OPENAI_BASE_URL={url}\n%env OPENAI_API_KEY=x",
    "model = model_from_env()\n"
    "reply = model.complete([{{'role': 'user', 'content': 'Status of order A123?'}}], [])\n"
    "print(type(model).__name__, model.model, model.base_url)",
]


def check_switch(room: RoomServer) -> str:
    """Start a kernel offline, switch it with %env, and show the next request reaches the server."""
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell(cell.format(name=MODEL_NAME, url=room.url)) for cell in SWITCH_CELLS
    ]
    room.load = Load()
    offline = {"RALPH_MODEL": "offline", "OPENAI_BASE_URL": "", "OPENAI_API_KEY": ""}
    with patched_environ(offline):
        NotebookClient(notebook, timeout=120).execute()
    before, after = (notebook.cells[i].outputs[0]["text"].strip() for i in (0, 2))
    return f"before: {before}; after %env: {after}; requests the server received: {room.load.requests}"


def table(rows: list[tuple[str, Load, float]]) -> str:
    lines = [
        "| notebook | requests | prompt tokens | completion tokens | run s against the server |",
        "|---|---|---|---|---|",
    ]
    for name, load, seconds in rows:
        lines.append(
            f"| `{name}` | {load.requests:,} | {load.prompt_tokens:,} | {load.completion_tokens:,} "
            f"| {seconds:.0f} |"
        )
    total = Load(
        *(sum(getattr(r[1], f) for r in rows) for f in ("requests", "prompt_tokens", "completion_tokens"))
    )
    lines.append(
        f"| all | {total.requests:,} | {total.prompt_tokens:,} | {total.completion_tokens:,} | "
        f"{sum(r[2] for r in rows):.0f} |"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("prefixes", nargs="*", help="only notebooks whose name starts with these, e.g. 06")
    args = parser.parse_args(argv)
    with running_room() as room:
        rows = measure(room, args.prefixes)
        switch = check_switch(room)
    print(table(rows))
    print(f"\nswitching a running kernel with %env: {switch}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
