"""The Ralph Loop: bounded fast loop, no memory write on the fast loop, writes on repeated waste, and
the benchmark's headline as inequalities on a small suite."""

from fakes import ScriptedModel

from ralph_mini.clock import FakeClock
from ralph_mini.loop import LoopConfig, TaskResult, estimate_calls_saved, run_loop, run_task, wants_slow_loop
from ralph_mini.measure import record, run_suite
from ralph_mini.memory import Memory
from ralph_mini.model import ModelReply, ToolCall
from ralph_mini.offline import OfflineModel
from ralph_mini.planner import complete_tools, writing_tools
from ralph_mini.react import run_react
from ralph_mini.reflect import quick_review
from ralph_mini.suite import make_suite
from ralph_mini.waste import run_waste

SUITE = make_suite(n=20, seed=7)
TOOLS = SUITE.world.tools()


class Mumbler:
    """A model that never calls a tool nor answers: every run ends at max_pitfall_depth."""

    def __init__(self):
        self.calls = 0

    def complete(self, messages, tools):
        self.calls += 1
        if not tools:  # asked to reflect: it can't
            return ModelReply("no idea")
        return ModelReply("hmm")


def test_fast_loop_retries_share_the_tasks_pitfall_budget_and_write_nothing():
    memory = Memory(FakeClock())
    model = Mumbler()
    result = run_task(SUITE.tasks[0], model, TOOLS, memory, [], config=LoopConfig(max_reflection_rounds=2))
    # the first run spent the whole pitfall budget: no retry can run on it (no 3x cost on an unsolvable task)
    assert result.retries == 0
    assert result.trace.stop_reason == "max_pitfall_depth: 4 wrong calls"
    assert memory.experiences == {}
    assert model.calls == 4 + 2  # one run of 4 turns, then the slow loop's two re-asks (the grader rejected)
    assert result.extra_tokens == 0  # the mumbler reports no usage


def test_slow_loop_waits_for_a_recurring_task_type():
    model = OfflineModel()
    trace = run_react(SUITE.tasks[1], model, TOOLS)
    result = TaskResult(SUITE.tasks[1], trace, [], quick_review(trace), correct=True)
    assert not wants_slow_loop(result, [])
    assert wants_slow_loop(result, [result])
    clean = run_react(SUITE.tasks[1], model, TOOLS, lessons=["when any task: start with query_local_cache"])
    clean_result = TaskResult(SUITE.tasks[1], clean, [], quick_review(clean), correct=True)
    assert clean_result.review.wrong_calls == 0 and clean_result.review.redundant_calls == 2
    assert wants_slow_loop(clean_result, [result])


def test_every_outside_signal_starts_a_reflection_even_without_waste():
    trace = run_react(SUITE.tasks[0], OfflineModel(), TOOLS, lessons=["when any task: start with query_local_cache",
                      "when query_local_cache finds the order: skip query_database"])  # fmt: skip
    assert quick_review(trace).reason == "clean run"
    rejected = TaskResult(SUITE.tasks[0], trace, [], quick_review(trace), correct=False)
    assert wants_slow_loop(rejected, [])  # the grader said no: reflect, first task or not
    blind = run_react(SUITE.tasks[0], ScriptedModel(ModelReply('Final answer: {"status": "paid"}')), TOOLS)
    review = quick_review(blind)
    assert review.blind and review.complete and not review.retry
    assert wants_slow_loop(TaskResult(SUITE.tasks[0], blind, [], review, correct=True), [])


def test_an_outage_is_not_a_not_found_and_a_write_is_never_retried():
    failing = [ModelReply(None, (ToolCall(f"c{i}", "query_database", '{"order_id": 1}'),)) for i in range(2)]
    outage = run_react(SUITE.tasks[0], ScriptedModel(*failing, ModelReply('Final answer: {"status": "not_found"}')),
                       TOOLS)  # fmt: skip
    assert not quick_review(outage).complete and quick_review(outage).retry
    wrote = run_react(SUITE.tasks[0], ScriptedModel(ModelReply(None, (ToolCall("c1", "refund_order",
                      '{"order_id": "A123"}'),)), ModelReply("Final answer: {}")), TOOLS)  # fmt: skip
    review = quick_review(wrote, ("refund",), writing_tools(TOOLS))
    assert review.wrote and not review.complete and not review.retry
    assert review.reason.endswith("no retry, it wrote")


def test_rules_are_written_when_waste_repeats():
    clock = FakeClock()
    memory = Memory(clock)
    results = run_loop(SUITE.tasks[:4], OfflineModel(), TOOLS, memory)
    notes = [note for r in results for note in r.memory_notes]
    assert (
        "written: confirmed in 2 tasks: when query_local_cache finds the order: skip query_database" in notes
    )
    assert results[0].memory_notes == []  # the first task: nothing recurs yet
    assert {e.rule for e in memory.active()} == {
        "when any task: start with query_local_cache",
        "when query_local_cache finds the order: skip query_database",
    }


def test_estimate_calls_saved():
    trace = run_react(SUITE.tasks[1], OfflineModel(), TOOLS)  # B456: look-alike, cache, database, provider
    wasted = run_waste(trace, writing_tools(TOOLS), complete_tools(TOOLS))
    assert (
        estimate_calls_saved("when query_local_cache finds the order: skip query_database", trace, wasted)
        == 1
    )
    assert estimate_calls_saved("when any task: start with query_local_cache", trace, wasted) == 1
    assert (
        estimate_calls_saved(
            "when status is pending and age under 30 min: skip query_payment_api", trace, wasted
        )
        == 1
    )
    assert (
        estimate_calls_saved(
            "when status is pending and age over 30 min: call query_payment_api", trace, wasted
        )
        == 0
    )


def test_ralph_beats_react_late_and_stays_correct():
    model = OfflineModel()
    bare = [record(t) for t in run_suite(SUITE.tasks, model, TOOLS)]
    ralph = [r.record for r in run_loop(SUITE.tasks, model, TOOLS, Memory(FakeClock()))]
    late_bare, late_ralph = bare[10:], ralph[10:]
    assert sum(r.calls for r in late_ralph) < sum(r.calls for r in late_bare)
    assert sum(r.correct for r in ralph) >= sum(r.correct for r in bare) == 20
    assert sum(r.wrong_calls for r in late_ralph) <= sum(r.wrong_calls for r in late_bare)
    assert sum(r.tokens for r in ralph) < sum(r.tokens for r in bare)
