"""The Ralph Loop: bounded fast loop, no memory write on the fast loop, writes on repeated waste, and
the benchmark's headline as inequalities on a small suite."""

from ralph_mini.clock import FakeClock
from ralph_mini.loop import LoopConfig, TaskResult, estimate_calls_saved, run_loop, run_task, wants_slow_loop
from ralph_mini.measure import record, run_suite
from ralph_mini.memory import Memory
from ralph_mini.model import ModelReply
from ralph_mini.offline import OfflineModel
from ralph_mini.react import run_react
from ralph_mini.reflect import quick_review
from ralph_mini.suite import make_suite

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


def test_fast_loop_retries_are_bounded_and_write_nothing():
    memory = Memory(FakeClock())
    model = Mumbler()
    result = run_task(SUITE.tasks[0], model, TOOLS, memory, [], config=LoopConfig(max_reflection_rounds=2))
    assert result.retries == 2
    assert result.trace.stop_reason == "max_pitfall_depth: 4 wrong calls"
    assert memory.experiences == {}
    # 3 runs x 4 turns + 2 fast-loop reflections x 2 rounds; no slow loop on the first task
    assert model.calls == 3 * 4 + 2 * 2
    assert result.extra_tokens == 0  # the mumbler reports no usage


def test_slow_loop_waits_for_a_recurring_task_type():
    model = OfflineModel()
    trace = run_react(SUITE.tasks[1], model, TOOLS)
    result = TaskResult(SUITE.tasks[1], trace, [], quick_review(trace))
    assert not wants_slow_loop(result, [])
    assert wants_slow_loop(result, [result])
    clean = run_react(SUITE.tasks[1], model, TOOLS, lessons=["when any task: start with query_local_cache"])
    clean_result = TaskResult(SUITE.tasks[1], clean, [], quick_review(clean))
    assert clean_result.review.wrong_calls == 0 and clean_result.review.redundant_calls == 2
    assert wants_slow_loop(clean_result, [result])


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
    assert estimate_calls_saved("when query_local_cache finds the order: skip query_database", trace) == 1
    assert estimate_calls_saved("when any task: start with query_local_cache", trace) == 1
    assert (
        estimate_calls_saved("when status is pending and age under 30 min: skip query_payment_api", trace)
        == 1
    )
    assert (
        estimate_calls_saved("when status is pending and age over 30 min: call query_payment_api", trace) == 0
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
