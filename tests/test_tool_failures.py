"""Tools that fail: raise, hang, run slow, or return the wrong thing. Each becomes an observation.

A tool is the agent's code, not the model's, so its failures are reported with their cause (the
exception type and message, or how long the loop waited) and the run goes on. A hung tool is bounded by
``tool_timeout_s``: the loop stops waiting, though Python cannot stop the tool's thread.
"""

import dataclasses
import threading
import time

import pytest
from fakes import ScriptedModel

from ralph_mini.hardening import MAX_OBSERVATION_CHARS
from ralph_mini.model import ModelReply, ToolCall, Usage
from ralph_mini.react import run_react
from ralph_mini.tools import BadArguments, NotFound, ToolTimeout, call_with_timeout, tool
from ralph_mini.worlds.orders import make_suite

SUITE = make_suite(n=4, seed=7)
TASK = dataclasses.replace(SUITE.tasks[0], relevant_tools=())  # every tool counts as relevant here
FINAL = ModelReply('Final answer: {"status": "paid"}', (), Usage(50, 10), 1.0)


def ask(name: str, arguments: str = '{"order_id": "A123"}', id_: str = "c1") -> ModelReply:
    return ModelReply(None, (ToolCall(id_, name, arguments),), Usage(100, 10), 0.5)


def make_tool(body, name: str = "lookup", latency_s: float = 0.3):
    """A one-argument tool whose behaviour is ``body(order_id)``."""

    def lookup(order_id: str) -> dict:
        """A lookup that fails in the way the test needs.

        Args:
            order_id: The order id.
        """
        return body(order_id)

    lookup.__name__ = name
    return tool(lookup, latency_s=latency_s)


def run_one(body, **options):
    """One call to a tool running ``body``, then a final answer: returns (trace, the call's step)."""
    trace = run_react(TASK, ScriptedModel(ask("lookup"), FINAL), [make_tool(body)], **options)
    assert trace.stop_reason == "answered"  # the run went on after the failure
    [step] = trace.steps
    return trace, step


# --- tools that raise ------------------------------------------------------------------------------


class LedgerLocked(Exception):
    """A project-specific exception type, to check the name shown is the real one."""


class Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("cannot print me")


def raise_(err: BaseException):
    def body(order_id: str) -> dict:
        raise err

    return body


@pytest.mark.parametrize(
    ("err", "observation"),
    [
        (ValueError("order id has a bad checksum"), "ValueError: order id has a bad checksum"),
        (KeyError("A123"), "KeyError: 'A123'"),
        (RuntimeError(), "RuntimeError"),
        (
            LedgerLocked("ledger is locked by a nightly job"),
            "LedgerLocked: ledger is locked by a nightly job",
        ),
        (TimeoutError("the tool's own 2 s timeout"), "TimeoutError: the tool's own 2 s timeout"),
        (Unprintable(), "Unprintable: <Unprintable with an unprintable message>"),
        (RecursionError("maximum recursion depth exceeded"), "RecursionError: maximum recursion depth"),
    ],
    ids=["ValueError", "KeyError", "no-message", "custom-type", "own-TimeoutError", "bad-str", "recursion"],
)
def test_a_tool_that_raises_is_an_error_naming_type_and_message(err, observation):
    _, step = run_one(raise_(err))
    assert step.status == "error" and step.wrong
    assert step.observation.startswith(f"error: lookup failed: {observation}")
    assert step.tool_latency_s == 0.3  # the declared virtual latency, as for any finished call


def test_a_real_bug_in_a_tool_is_reported_with_its_message():
    _, step = run_one(lambda order_id: {"ratio": 1 / 0})
    assert step.observation == "error: lookup failed: ZeroDivisionError: division by zero"


def test_a_huge_exception_message_is_capped():
    _, step = run_one(raise_(ValueError("x" * 50_000)))
    assert len(step.observation) == MAX_OBSERVATION_CHARS
    assert step.observation.startswith("error: lookup failed: ValueError: xxx")
    full = len("error: lookup failed: ValueError: ") + 50_000
    assert step.observation.endswith(f"… (truncated from {full} chars)")


def test_not_found_and_bad_arguments_raised_by_the_tool_keep_their_meaning():
    _, missing = run_one(raise_(NotFound("order A123 is not here")))
    _, refused = run_one(raise_(BadArguments("order_id must look like A123")))
    assert (missing.status, missing.observation) == ("not_found", "not_found: order A123 is not here")
    assert (refused.status, refused.observation) == ("bad_args", "bad_args: order_id must look like A123")


def test_keyboard_interrupt_is_not_swallowed():
    # The loop catches Exception (tool bugs), not BaseException (requests to stop the program).
    with pytest.raises(KeyboardInterrupt):
        run_react(TASK, ScriptedModel(ask("lookup"), FINAL), [make_tool(raise_(KeyboardInterrupt()))])


# --- tools that hang or are slow -------------------------------------------------------------------


@pytest.fixture
def release():
    """An event hung tools wait on; set at teardown so no test leaves a thread blocked."""
    event = threading.Event()
    yield event
    event.set()


def test_a_hung_tool_is_abandoned_after_the_timeout_and_the_run_goes_on(release):
    started = threading.Event()

    def hang(order_id: str) -> dict:
        started.set()
        release.wait(30)
        return {"status": "paid"}

    begin = time.perf_counter()
    trace, step = run_one(hang, tool_timeout_s=0.2)
    waited = time.perf_counter() - begin

    assert step.status == "error" and step.wrong
    assert step.observation == "error: lookup timed out after 0.2 s; it may still be running"
    assert step.tool_latency_s == 0.2  # a timed-out call costs the time waited, not the declared 0.3 s
    assert trace.latency_s == pytest.approx(0.5 + 0.2 + 1.0)
    assert 0.2 <= waited < 2.0
    # Python cannot kill the worker: the tool is still blocked until released.
    assert started.is_set()
    worker = [t for t in threading.enumerate() if t.name == "ralph-mini-tool"]
    assert worker and worker[0].daemon


def test_a_tool_slower_than_the_timeout_times_out():
    _, step = run_one(lambda order_id: time.sleep(0.6) or {"status": "paid"}, tool_timeout_s=0.1)
    assert step.observation == "error: lookup timed out after 0.1 s; it may still be running"


def test_a_tool_within_the_timeout_keeps_its_declared_virtual_latency():
    _, step = run_one(lambda order_id: time.sleep(0.05) or {"status": "paid"}, tool_timeout_s=2.0)
    assert (step.status, step.observation) == ("ok", "ok: 1 fields: status=paid")
    assert step.tool_latency_s == 0.3


def test_virtual_latency_above_the_real_timeout_is_not_a_timeout():
    # query_payment_api declares 6 s of *virtual* latency; it answers at once in real time.
    payment = ask("query_payment_api", '{"order_id": "A123"}')
    trace = run_react(TASK, ScriptedModel(payment, FINAL), SUITE.world.tools(), tool_timeout_s=0.5)
    assert trace.steps[0].status == "ok" and trace.steps[0].tool_latency_s == 6.0


def test_repeated_timeouts_count_toward_max_pitfall_depth(release):
    hung = make_tool(lambda order_id: release.wait(30) or {})
    replies = [ask("lookup", id_=f"c{i}") for i in range(10)]
    begin = time.perf_counter()
    trace = run_react(TASK, ScriptedModel(*replies), [hung], max_pitfall_depth=2, tool_timeout_s=0.1)
    assert trace.stop_reason == "max_pitfall_depth: 3 wrong calls"
    assert [s.tool_latency_s for s in trace.steps] == [0.1, 0.1, 0.1]
    assert time.perf_counter() - begin < 3.0


def test_without_a_timeout_the_tool_runs_in_the_callers_thread():
    threads = []
    body = lambda order_id: threads.append(threading.current_thread().name) or {"status": "paid"}  # noqa: E731
    run_one(body, tool_timeout_s=None)
    run_one(body, tool_timeout_s=5.0)
    assert threads == [threading.current_thread().name, "ralph-mini-tool"]


# --- tools that return the wrong thing -------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "observation"),
    [
        (None, "error: lookup returned NoneType None, not a dict of fields: fix the tool"),
        ([1, 2], "error: lookup returned list [1, 2], not a dict of fields: fix the tool"),
        (42, "error: lookup returned int 42, not a dict of fields: fix the tool"),
        ("paid", "error: lookup returned str 'paid', not a dict of fields: fix the tool"),
    ],
)
def test_a_tool_returning_a_non_dict_is_a_clear_error(value, observation):
    _, step = run_one(lambda order_id: value)
    assert (step.status, step.observation) == ("error", observation)


def test_a_tool_returning_a_huge_string_is_an_error_with_a_short_preview():
    _, step = run_one(lambda order_id: "y" * 1_000_000)
    assert step.status == "error"
    assert step.observation.startswith("error: lookup returned str 'yyy")
    assert step.observation.endswith(", not a dict of fields: fix the tool")
    assert len(step.observation) < 200


def test_a_huge_dict_is_compressed_and_capped():
    huge = {f"field{i}": "v" * 5_000 for i in range(1_000)}
    model = ScriptedModel(ask("lookup"), FINAL)
    trace = run_react(TASK, model, [make_tool(lambda order_id: huge)])
    [step] = trace.steps
    assert step.status == "ok"
    assert step.observation.startswith("ok: 1000 fields: field0=vvvv")
    assert len(step.observation) == MAX_OBSERVATION_CHARS
    assert step.observation.endswith(" chars)")
    # what the model read next turn is the capped observation, not 5 MB
    assert model.seen[1][-1]["content"] == step.observation


def test_a_field_that_cannot_be_printed_is_an_error():
    class Broken:
        def __str__(self) -> str:
            raise ValueError("no str for you")

    _, step = run_one(lambda order_id: {"status": Broken()})
    assert step.observation == (
        "error: lookup returned fields that cannot be shown: ValueError: no str for you"
    )


# --- call_with_timeout on its own ------------------------------------------------------------------


def test_call_with_timeout_returns_raises_and_gives_up():
    assert call_with_timeout(lambda: {"a": 1}, 1.0) == {"a": 1}
    assert call_with_timeout(lambda: 7, None) == 7
    err = LookupError("same object")

    def boom() -> None:
        raise err

    with pytest.raises(LookupError) as caught:
        call_with_timeout(boom, 1.0)
    assert caught.value is err  # the tool's own exception, raised again in the caller's thread
    with pytest.raises(ToolTimeout, match="no answer after 0.05 s"):
        call_with_timeout(lambda: time.sleep(0.5), 0.05)


def test_a_timeout_inside_the_tool_is_reported_with_its_own_seconds():
    # The tool bounds its own backend call (as call_with_timeout's docstring advises) and lets it raise.
    def guarded(order_id: str) -> dict:
        return call_with_timeout(lambda: time.sleep(0.5) or {}, 0.05)

    _, step = run_one(guarded, tool_timeout_s=None)
    assert step.observation == "error: lookup timed out after 0.05 s; it may still be running"
    assert step.tool_latency_s == 0.05
