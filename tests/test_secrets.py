"""API keys never leak: not in committed notebooks, and not in anything a run writes or shows.

A teaching kit's notebooks are committed with their outputs and its run files get shared, so one
printed key is a leaked key. ``find_secrets`` looks for key-shaped strings (not just one known key):
OpenAI keys (``sk-...``, ``sk-proj-...``), ``Bearer`` tokens, and ``api_key = <long token>``
assignments. The run test sends a real agent run through ``OpenAIModel`` to a local stub with a fake
key of the real shape, then scans every artifact: the log, the cassette, the messages, reprs, widget
views, error messages and their tracebacks, and the SDK's own debug logging.
"""

import json
import logging
import re
import traceback
from collections.abc import Iterator
from pathlib import Path

import pytest
from openai_stub import api_error, completion, running_stub, tool_call

from ralph_mini.cassette import RecordingModel
from ralph_mini.log import append_run, format_for_reflection, log_run
from ralph_mini.model import ModelError, OpenAIModel
from ralph_mini.react import run_react
from ralph_mini.widgets import TraceStepper, trace_html, trace_text
from ralph_mini.world import grade
from ralph_mini.worlds.orders import make_suite

ROOT = Path(__file__).resolve().parent.parent
KEY = "sk-test-" + "Zq8xV2mN4pL7rT1wY6bC" * 2  # the shape of a real key: a leak would match the scanner

SECRET_PATTERNS = {
    # \b: "task-..." or "risk-..." must not count. sk-proj- keys are covered: '-' is a key character.
    "OpenAI key": re.compile(r"\bsk-[A-Za-z0-9_-]{20,}"),
    "Bearer token": re.compile(r"\bBearer\s+[A-Za-z0-9._~+/=-]{16,}"),
    # The value must look like a literal token: `api_key=os.environ["OPENAI_API_KEY"]` is not a leak.
    "api key assignment": re.compile(r"api[_-]?key[\"']?\s*[=:]\s*[\"']?[A-Za-z0-9_\-.]{16,}", re.IGNORECASE),
}


def find_secrets(text: str) -> list[str]:
    """Key-shaped strings in ``text``, described without repeating them (a test log is shared too).

    'key: sk-abc...(40 chars)' -> ['OpenAI key, 43 chars, starting sk-abc']
    """
    return [
        f"{kind}, {len(match)} chars, starting {match[:6]}"
        for kind, pattern in SECRET_PATTERNS.items()
        for match in pattern.findall(text)
    ]


def notebook_texts(path: Path) -> Iterator[tuple[str, str]]:
    """(where, text) for every cell source, every text-like output and the notebook metadata."""
    notebook = json.loads(path.read_text(encoding="utf-8"))
    yield "metadata", json.dumps(notebook.get("metadata", {}))
    for number, cell in enumerate(notebook["cells"], 1):
        yield f"cell {number} source", "".join(cell["source"])
        for output in cell.get("outputs", []):
            texts = [output.get("text", "")] + [
                body for mime, body in output.get("data", {}).items() if not mime.startswith("image/")
            ]
            texts += [output.get("evalue", ""), *output.get("traceback", [])]
            for text in texts:
                yield f"cell {number} output", text if isinstance(text, str) else json.dumps(text)


def scan_notebook(path: Path) -> list[str]:
    return [
        f"{path.name} {where}: {found}"
        for where, text in notebook_texts(path)
        for found in find_secrets(text)
    ]


# The kit's notebooks, not JupyterLab's autosaved copies: a student opening one must not change the count.
NOTEBOOKS = sorted(
    path
    for path in [*ROOT.glob("notebooks/**/*.ipynb"), *ROOT.glob("exercises/**/*.ipynb")]
    if ".ipynb_checkpoints" not in path.parts
)


# --- (a) committed notebooks ------------------------------------------------------------------------


def test_there_are_notebooks_to_scan():
    names = {p.relative_to(ROOT).as_posix() for p in NOTEBOOKS}
    assert "notebooks/01_bare_react.ipynb" in names and any(n.startswith("exercises/") for n in names)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_committed_notebooks_hold_no_key(path):
    assert scan_notebook(path) == []


# --- (b) one real run through OpenAIModel: every artifact it writes or shows -----------------------

SUITE = make_suite(n=4, seed=7)
A123 = SUITE.tasks[0]
ANSWER = '{"order_id": "A123", "status": "paid", "amount": 99.5, "paid_at": "2025-03-10 09:13"}'


def run_artifacts(stub, tmp_path: Path) -> dict[str, str]:
    """Run the agent over HTTP with KEY, write its files, and return every text it produced."""
    stub.script(
        completion("Check the cache.", [tool_call("query_local_cache", '{"order_id": "A123"}', "c1")]),
        completion(f"The cache has it.\nFinal answer: {ANSWER}"),
    )
    model = OpenAIModel("stub-model", base_url=stub.url, api_key=KEY, max_retries=0, timeout_s=5.0)
    recorder = RecordingModel(model, tmp_path / "cassette.jsonl")
    trace = run_react(A123, recorder, SUITE.world.tools(core_only=True))
    assert trace.stop_reason == "answered"  # a real run, not an early failure
    assert stub.requests[0].headers["authorization"] == f"Bearer {KEY}"  # the key was really used

    records, summary = log_run(trace, "run-1", grade(trace.task, trace.answer).correct)
    append_run(tmp_path / "session.jsonl", records, summary)
    (tmp_path / "messages.json").write_text(json.dumps(trace.messages, ensure_ascii=False))
    stepper = TraceStepper(trace)
    artifacts = {path.name: path.read_text(encoding="utf-8") for path in sorted(tmp_path.iterdir())}
    return artifacts | {
        "repr(model)": repr(model),
        "repr(recorder)": repr(recorder),
        "repr(trace)": repr(trace),
        "reflection input": format_for_reflection(records, summary),
        "trace_text": trace_text(trace),
        "trace_html": trace_html(trace),
        "stepper": repr(stepper) + json.dumps(stepper._repr_mimebundle_(), default=str),
    }


def error_texts(stub, status: int) -> dict[str, str]:
    """A ModelError from a server that echoes the key it rejected: message, repr and full traceback."""
    stub.script(api_error(status, f"Incorrect API key provided: {KEY}", code="invalid_api_key"))
    model = OpenAIModel("stub-model", base_url=stub.url, api_key=KEY, max_retries=0, timeout_s=5.0)
    with pytest.raises(ModelError) as caught:
        run_react(A123, model, SUITE.world.tools(core_only=True))
    err = caught.value
    return {
        f"HTTP {status} message": str(err),
        f"HTTP {status} repr": repr(err),
        f"HTTP {status} traceback": "".join(traceback.format_exception(err)),
    }


def test_a_run_through_openai_model_leaks_the_key_nowhere(tmp_path, caplog):
    caplog.set_level(logging.DEBUG)  # the SDK's and httpx's own debug logging, too
    with running_stub() as stub:
        texts = run_artifacts(stub, tmp_path)
        texts |= error_texts(stub, 401) | error_texts(stub, 400)
    texts["debug log"] = caplog.text

    assert {"session.jsonl", "cassette.jsonl", "messages.json"} <= set(texts)
    assert "HTTP 401" in texts["HTTP 401 message"] and "rejected the API key" in texts["HTTP 401 message"]
    assert "[OPENAI_API_KEY]" in texts["HTTP 400 message"]  # the server's echo, redacted
    assert "Sending HTTP Request: POST" in texts["debug log"]  # the SDK did log at debug level
    leaks = {name: find_secrets(text) for name, text in texts.items() if KEY in text or find_secrets(text)}
    assert leaks == {}


# --- (c) the scanner can fail ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "planted",
    [
        f"print({KEY!r})",
        "sk-proj-" + "a1B2c3D4e5F6g7H8i9J0" * 3,
        "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig",
        'OPENAI_API_KEY="abcdefghijklmnop1234"',
        '{"api_key": "0123456789abcdefXYZ"}',
        "api-key: 9f8e7d6c5b4a39281706",
    ],
)
def test_the_scanner_finds_a_planted_key(planted):
    found = find_secrets(f"some output\n{planted}\nmore output")
    assert found and all(planted not in f for f in found)  # found, and not repeated in the report


@pytest.mark.parametrize(
    "harmless",
    [
        "api_key='x'",
        "sk-...",
        "Bearer not-needed",
        "rejected the API key (HTTP 401): set OPENAI_API_KEY to a valid key",
        "bad request from [OPENAI_API_KEY]",
        'OpenAI(api_key=os.environ["OPENAI_API_KEY"])',
        "task-0123456789-abcdefghij-klmnop",
    ],
)
def test_the_scanner_ignores_placeholders(harmless):
    assert find_secrets(harmless) == []


def test_a_key_planted_in_a_notebook_output_is_found(tmp_path):
    source = json.loads((ROOT / "notebooks" / "01_bare_react.ipynb").read_text(encoding="utf-8"))
    code_cell = next(c for c in source["cells"] if c["cell_type"] == "code")
    code_cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": [f"key is {KEY}\n"]}]
    planted = tmp_path / "leaky.ipynb"
    planted.write_text(json.dumps(source))
    [finding] = scan_notebook(planted)
    assert finding.startswith("leaky.ipynb cell ") and "OpenAI key, 48 chars, starting sk-tes" in finding
