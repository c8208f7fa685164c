"""Cost that stays flat (issue 27): the slow loop's view of the past kept task by task, equal to a
recomputation from the whole history; faiss searching the loop's small indexes on one thread; the
scenario workers' threads within the cores."""

from concurrent.futures import ProcessPoolExecutor

import faiss

from ralph_mini.clock import FakeClock
from ralph_mini.embed import HashingEmbedder
from ralph_mini.lesson_index import SEARCH_THREADS, VectorIndex
from ralph_mini.loop import past_tasks, recurrence, run_loop, run_task
from ralph_mini.memory import Memory
from ralph_mini.offline import OfflineModel
from ralph_mini.planner import PastTasks
from ralph_mini.retrieval import Retriever, make_planner
from ralph_mini.workers import worker_threads
from ralph_mini.worlds import orders

SUITE = orders.make_suite(n=60, seed=11)
TOOLS = SUITE.world.tools()


def scanned(task, history) -> tuple[bool, set[str]]:
    """The reference: the scan over every past step the loop made before issue 27."""
    recurring = any(past.task.relevant_tools == task.relevant_tools for past in history)
    return recurring, {s.status for past in history for s in past.trace.steps if s.wrong}


def run(tasks, memory, clock, history=()):
    return run_loop(tasks, OfflineModel(habits=orders.HABITS), TOOLS, memory, words=orders.WORDS,
                    history=history, between_tasks=lambda _: clock.advance(hours=6))  # fmt: skip


def test_the_running_summary_equals_a_recomputation_after_every_task():
    clock = FakeClock()
    results = run(SUITE.tasks, Memory(clock), clock)
    past = PastTasks()
    for n, result in enumerate(results):
        assert past == past_tasks(results[:n])  # kept task by task == read from the whole history
        for task in SUITE.tasks:  # and it answers every later task as the scan did
            assert past.recurrence(task) == scanned(task, results[:n]) == recurrence(task, results[:n])
        past = past.then(result.task, result.trace)
    assert past.errors and past.tools  # the suite had errors and tool sets to remember


def test_summary_grows_with_the_worlds_vocabulary_not_the_history():
    clock = FakeClock()
    results = run(SUITE.tasks, Memory(clock), clock)
    past = past_tasks(results)
    assert len(past.tools) <= len({t.relevant_tools for t in SUITE.tasks})
    again = past_tasks(results + results)  # twice the history, nothing new to remember
    assert again == past


def test_the_loop_learns_the_same_with_the_summary_as_with_the_history():
    """run_loop passes its running summary; run_task alone reads the history: the same run, note by note."""
    clock = FakeClock()
    looped = run(SUITE.tasks[:40], Memory(clock), clock)
    clock, history = FakeClock(), []
    memory = Memory(clock)
    for number, task in enumerate(SUITE.tasks[:40], 1):
        history.append(run_task(task, OfflineModel(habits=orders.HABITS), TOOLS, memory, history,
                                words=orders.WORDS, run_id=f"R{number:03d}"))  # fmt: skip
        clock.advance(hours=6)
    assert [r.to_json() for r in looped] == [r.to_json() for r in history]


def test_a_resumed_loop_starts_from_its_history():
    clock = FakeClock()
    memory = Memory(clock)
    first = run(SUITE.tasks[:25], memory, clock)
    whole = run(SUITE.tasks[25:50], memory, clock, history=first)
    clock = FakeClock()
    straight = run(SUITE.tasks[:50], Memory(clock), clock)
    assert [r.to_json() for r in whole] == [r.to_json() for r in straight]


def test_a_scenario_arm_sums_up_its_history_task_by_task(monkeypatch):
    """scenario_bench.run_arm calls run_task itself: it keeps the running summary as run_loop does, so
    each task adds one step to it and none re-reads the history (before: every task re-read it all)."""
    from ralph_mini import scenario_bench

    steps, real = [], PastTasks.then
    monkeypatch.setattr(
        PastTasks, "then", lambda self, task, trace: steps.append(task) or real(self, task, trace)
    )
    run = scenario_bench.run_arm("drift", scenario_bench.FULL)
    assert steps == [r.task for r in run.results]


class SearchSpy:
    """A faiss index that notes how many OpenMP threads each search ran on."""

    def __init__(self, inner):
        self.inner, self.threads = inner, []

    def search(self, *args):
        self.threads.append(faiss.omp_get_max_threads())
        return self.inner.search(*args)

    def search_and_reconstruct(self, *args):  # what ``VectorIndex`` calls: the ids and their vectors
        self.threads.append(faiss.omp_get_max_threads())
        return self.inner.search_and_reconstruct(*args)

    def __getattr__(self, name):
        return getattr(self.inner, name)


def test_a_small_index_searches_on_one_thread_and_leaves_the_setting_as_it_was():
    memory = Memory(FakeClock())
    for task_id in ("T1", "T2"):
        memory.propose("when status is pending: skip query_payments", task_id=task_id, run_id=task_id,
                       task_type="order_status")  # fmt: skip
    retriever = Retriever(memory)
    retriever.search("pending order", k=3)
    retriever.index.index = SearchSpy(retriever.index.index)
    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(2)
    try:
        found = retriever.search("pending order", k=3)
        assert retriever.index.threads == SEARCH_THREADS == 1
        assert retriever.index.index.threads == [1]
        assert faiss.omp_get_max_threads() == 2  # the process's own setting, untouched
    finally:
        faiss.omp_set_num_threads(before)
    assert [s.experience.rule for s in found] == ["when status is pending: skip query_payments"]


def test_an_index_may_be_given_its_threads():
    index = VectorIndex(HashingEmbedder(), threads=2)
    assert index.on_threads(faiss.omp_get_max_threads) == 2
    assert VectorIndex(HashingEmbedder(), threads=None).on_threads(faiss.omp_get_max_threads) >= 1


def test_the_loop_with_the_vector_planner_searches_on_one_thread():
    clock = FakeClock()
    memory = Memory(clock)
    retriever = Retriever(memory)
    retriever.index.index = SearchSpy(retriever.index.index)
    run_loop(SUITE.tasks[:20], OfflineModel(habits=orders.HABITS), TOOLS, memory, words=orders.WORDS,
             retrieve_plan=make_planner(retriever), between_tasks=lambda _: clock.advance(hours=6))  # fmt: skip
    spied = retriever.index.index.threads  # an empty index is not searched: these are the later tasks
    assert spied and set(spied) == {1}


def threads_in_worker(_: int) -> int:
    return faiss.omp_get_max_threads()


def test_scenario_workers_run_within_their_share_of_the_cores():
    with ProcessPoolExecutor(2, initializer=worker_threads, initargs=(1,)) as pool:
        assert set(pool.map(threads_in_worker, range(4))) == {1}
