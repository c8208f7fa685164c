"""The Ralph Loop: bounded fast loop, no memory write on the fast loop, writes on repeated waste, and
the benchmark's headline as inequalities on a small suite."""

from fakes import ScriptedModel

from ralph_mini.clock import FakeClock
from ralph_mini.learn import wants_slow_loop
from ralph_mini.loop import LoopConfig, TaskResult, recurrence, run_loop, run_task
from ralph_mini.measure import record, run_suite
from ralph_mini.memory import Memory, MemoryConfig
from ralph_mini.model import ModelReply, ToolCall, Usage
from ralph_mini.offline import OfflineModel
from ralph_mini.planner import complete_tools, estimate_calls_saved, review, writing_tools
from ralph_mini.react import run_react
from ralph_mini.review import quick_review
from ralph_mini.waste import run_waste
from ralph_mini.worlds import orders

SUITE = orders.make_suite(n=20, seed=7)
TOOLS = SUITE.world.tools()
WORDS = orders.WORDS


def offline_model():
    return OfflineModel(habits=orders.HABITS)


def quick(trace):
    """The fast loop's review of a run, with the order desk's words, as the loop makes it."""
    return review(trace.task, trace, TOOLS, WORDS)


def slow(result, history):
    """Does the loop reflect on ``result`` after ``history``?"""
    return wants_slow_loop(result.correct, result.review, result.trace, *recurrence(result.task, history))


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
    result = run_task(
        SUITE.tasks[0], model, TOOLS, memory, [], words=WORDS, config=LoopConfig(max_reflection_rounds=2)
    )
    # the first run spent the whole pitfall budget: no retry can run on it (no 3x cost on an unsolvable task)
    assert result.retries == 0
    assert result.trace.stop_reason == "max_pitfall_depth: 4 wrong calls"
    assert memory.experiences == {}
    assert model.calls == 4 + 2  # one run of 4 turns, then the slow loop's two re-asks (the grader rejected)
    assert result.extra_tokens == 0  # the mumbler reports no usage


def test_a_retried_run_counts_in_the_tasks_record():
    """The fast loop retries a run whose answer lacks the task type's field; every run counts."""
    look = ModelReply(
        None, (ToolCall("c1", "query_local_cache", '{"order_id": "A123"}'),), Usage(100, 10), 1.0
    )
    incomplete = ModelReply('Final answer: {"amount": 99.5}', (), Usage(120, 20), 1.0)  # no status
    complete = ModelReply('Final answer: {"status": "paid", "amount": 99.5, "paid_at": "2025-03-10 09:13"}', (),
                          Usage(120, 20), 1.0)  # fmt: skip
    memory = Memory(FakeClock())
    result = run_task(SUITE.tasks[0], ScriptedModel(look, incomplete, look, complete), TOOLS, memory, [],
                      words=WORDS, reflector=OfflineModel())  # fmt: skip
    [discarded] = result.discarded
    assert (result.retries, discarded.answer, result.correct) == (1, {"amount": 99.5}, True)
    assert memory.experiences == {}  # the fast loop writes nothing
    assert (result.record.calls, result.record.wrong_calls) == (2, 0)  # one call in each run
    reflection_tokens = sum(r.tokens for r in result.reflections)
    assert reflection_tokens > 0 and result.extra_tokens == 250 + reflection_tokens
    assert result.record.tokens == 2 * 250 + reflection_tokens


def test_slow_loop_waits_for_a_recurring_task_type():
    model = offline_model()
    trace = run_react(SUITE.tasks[1], model, TOOLS)
    result = TaskResult(SUITE.tasks[1], trace, [], quick(trace), correct=True)
    assert not slow(result, [])
    assert slow(result, [result])
    clean = run_react(SUITE.tasks[1], model, TOOLS, lessons=["when any task: start with query_local_cache"])
    clean_result = TaskResult(SUITE.tasks[1], clean, [], quick(clean), correct=True)
    assert clean_result.review.wrong_calls == 0 and clean_result.review.redundant_calls == 2
    assert slow(clean_result, [result])


def test_every_outside_signal_starts_a_reflection_even_without_waste():
    trace = run_react(SUITE.tasks[0], offline_model(), TOOLS, lessons=["when any task: start with query_local_cache",
                      "when query_local_cache finds the order: skip query_database"])  # fmt: skip
    assert quick(trace).reason == "clean run"
    rejected = TaskResult(SUITE.tasks[0], trace, [], quick(trace), correct=False)
    assert slow(rejected, [])  # the grader said no: reflect, first task or not
    blind = run_react(SUITE.tasks[0], ScriptedModel(ModelReply('Final answer: {"status": "paid"}')), TOOLS)
    verdict = quick(blind)
    assert verdict.blind and verdict.complete and not verdict.retry
    assert slow(TaskResult(SUITE.tasks[0], blind, [], verdict, correct=False), [])  # rejected: even blind
    accepted = TaskResult(SUITE.tasks[0], blind, [], verdict, correct=True)
    assert not slow(accepted, [accepted])  # accepted without a look-up: it showed nothing, even recurring


def test_an_outage_is_not_a_not_found_and_a_write_is_never_retried():
    failing = [ModelReply(None, (ToolCall(f"c{i}", "query_database", '{"order_id": 1}'),)) for i in range(2)]
    outage = run_react(SUITE.tasks[0], ScriptedModel(*failing, ModelReply('Final answer: {"status": "not_found"}')),
                       TOOLS)  # fmt: skip
    assert not quick(outage).complete and quick(outage).retry
    wrote = run_react(SUITE.tasks[0], ScriptedModel(ModelReply(None, (ToolCall("c1", "refund_order",
                      '{"order_id": "A123"}'),)), ModelReply("Final answer: {}")), TOOLS)  # fmt: skip
    verdict = quick_review(wrote, ("refund",), writing_tools(TOOLS))
    assert verdict.wrote and not verdict.complete and not verdict.retry
    assert verdict.reason.endswith("no retry, it wrote")


def test_rules_are_written_when_waste_repeats():
    start, skip = (
        "when any task: start with query_local_cache",
        "when query_local_cache finds the order: skip query_database",
    )
    learned = {start, skip}
    memory = Memory(FakeClock())
    results = run_loop(SUITE.tasks[:4], offline_model(), TOOLS, memory, words=WORDS)
    assert results[0].memory_notes == []  # the first task: nothing recurs yet
    proposed = [n.split(": ", 2)[-1] for n in results[1].memory_notes if n.startswith("on probation")]
    assert learned < set(proposed)  # the second task proposes them: on probation, injected from now
    assert [r.injected for r in results[2:]] == [[start], [start, skip]]
    notes = [note for r in results for note in r.memory_notes]
    assert f"active: {skip} (validated on probation)" in notes
    assert {e.rule for e in memory.active()} == learned
    # without probation a rule waits as a candidate until a second task confirms it
    memory = Memory(FakeClock(), MemoryConfig(probation=False))
    results = run_loop(SUITE.tasks[:4], offline_model(), TOOLS, memory, words=WORDS)
    notes = [note for r in results for note in r.memory_notes]
    assert f"written: confirmed in 2 tasks: {skip}" in notes
    assert all(r.injected == [] for r in results) and {e.rule for e in memory.active()} == learned


def test_estimate_calls_saved():
    trace = run_react(SUITE.tasks[1], offline_model(), TOOLS)  # B456: look-alike, cache, database, provider
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
    model = offline_model()
    bare = [record(t) for t in run_suite(SUITE.tasks, model, TOOLS)]
    ralph = [r.record for r in run_loop(SUITE.tasks, model, TOOLS, Memory(FakeClock()), words=WORDS)]
    late_bare, late_ralph = bare[10:], ralph[10:]
    assert sum(r.calls for r in late_ralph) < sum(r.calls for r in late_bare)
    assert sum(r.correct for r in ralph) >= sum(r.correct for r in bare) == 20
    assert sum(r.wrong_calls for r in late_ralph) <= sum(r.wrong_calls for r in late_bare)
    assert sum(r.tokens for r in ralph) < sum(r.tokens for r in bare)
