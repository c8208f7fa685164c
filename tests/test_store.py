"""The SQLite store: one transaction per task, a readable export, two writers, bad files, kill -9.

Like ``test_memory_reliability.py``, with real processes and real signals. Every check compares with
what the state must be after exactly n committed tasks (``expected_state(n)``), not with a snapshot:

- a writer killed with SIGKILL at random moments, or stalled *inside* its transaction (an SQLite
  progress handler that sleeps at a random VM instruction) and killed there, always leaves the state
  after a whole task: the last one it finished, or (killed at random) the one it was committing;
- two processes committing 50 tasks each keep all 100 tasks, runs and lessons; two processes voting on
  one shared lesson through ``update`` lose no vote, while a stale ``load_memory`` ... ``commit_task``
  from each does lose votes (the contrast that says when to use ``update``);
- a file that is not SQLite, another program's SQLite, another version, or a damaged store raises
  ``StoreError`` naming the file and the fix, keeps a copy and leaves the file byte-for-byte as it was.
"""

import os
import random
import signal
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

import pytest
from writers import ADDS, forkserver, report, rule, run_two_writers

from ralph_mini.clock import FakeClock
from ralph_mini.log import LogRecord, RunSummary, append_run, load_log
from ralph_mini.memory import Memory
from ralph_mini.memory_file import MemoryFile, MemoryFileError, journal
from ralph_mini.store import CompletedTask, Store, StoreError

TYPE = "status"  # the task type every lesson here is learned on (the order desk's)
PAD = "x" * 20_000  # a task result of realistic size, so a commit writes several pages


def run_of(k: int, who: str = "w") -> tuple[list[LogRecord], RunSummary]:
    """Task k's log: k % 3 + 1 steps and a summary, all values distinct per task."""
    run_id = f"R{who}{k:03d}"
    steps = [
        LogRecord(
            run_id, s, "query_database", f"order_id=A{k:03d}", "ok", 0.125 * s, 100 + s, 10, "status=paid"
        )
        for s in range(1, k % 3 + 2)
    ]
    answer = {"status": "paid", "k": k} if k % 4 else None
    summary = RunSummary(run_id, f"T{k}", f"question {k}?", "2025-03-10T12:00", len(steps), k % 2, 0.5 + k,
                         300 + k, answer, k % 4 != 0, "answered" if answer else "max_steps")  # fmt: skip
    return steps, summary


def do_task(memory: Memory, k: int) -> None:
    """What task k changes: proposes rule k and hits the first lesson."""
    memory.propose(rule(k), task_id=f"T{k}", run_id=f"Rw{k:03d}", task_type=TYPE)
    memory.record_hits([next(iter(memory.experiences.values()))])


def commit(store: Store, memory: Memory, k: int) -> int:
    return store.commit_task(memory.experiences.values(), task_id=f"T{k}", runs=[run_of(k)],
                             result={"k": k, "pad": PAD})  # fmt: skip


def lessons(store: Store) -> list[dict]:
    return [asdict(e) for e in store.load_memory(FakeClock()).experiences.values()]


def assert_state_after(store: Store, n: int) -> None:
    """The store holds exactly what tasks 1..n committed: lessons, votes, history, tasks, log."""
    memory = store.load_memory(FakeClock())
    assert [e.rule for e in memory.experiences.values()] == [rule(k) for k in range(1, n + 1)]
    assert [e.hits for e in memory.experiences.values()] == ([n] + [0] * (n - 1) if n else [])
    assert store.completed_tasks() == [
        CompletedTask(k, f"T{k}", {"k": k, "pad": PAD}) for k in range(1, n + 1)
    ]
    assert store.runs() == [run_of(k) for k in range(1, n + 1)]
    history = store.db.execute("SELECT task, COUNT(*) FROM lesson_history GROUP BY task ORDER BY task")
    assert history.fetchall() == [(k, 1 if k == 1 else 2) for k in range(1, n + 1)]


# --- one task, one transaction -------------------------------------------------------------------


def test_commit_task_writes_lessons_log_and_task_together_and_they_read_back(tmp_path):
    store = Store(tmp_path / "state.sqlite")
    memory = store.load_memory(FakeClock())
    for k in (1, 2, 3):
        do_task(memory, k)
        assert commit(store, memory, k) == k
    store.close()
    again = Store(tmp_path / "state.sqlite")
    assert_state_after(again, 3)
    assert lessons(again) == [asdict(e) for e in memory.experiences.values()]
    row = again.db.execute(
        "SELECT tools, source_tasks, valid_from, invalid_from FROM lessons WHERE number = 1"
    )
    assert row.fetchone() == ('["tool_w_1"]', '["T1"]', None, None)


def test_only_changed_lessons_are_written_and_history_records_their_votes(tmp_path):
    store = Store(tmp_path / "state.sqlite")
    memory = store.load_memory(FakeClock())
    for i in range(5):
        memory.propose(rule(i), task_id="T1", run_id="R1", task_type=TYPE)
    assert store.commit_task(memory.experiences.values(), task_id="T1") == 1
    assert store.commit_task(memory.experiences.values(), task_id="T2") == 2  # nothing changed
    second = list(memory.experiences.values())[1]
    memory.record_outcome([second], [], correct=False)  # trigger 'any' fired: one failure, ends probation
    second.valid_from = "2025-03-01"  # a field like any other: the upsert writes it
    assert store.commit_task(memory.experiences.values(), task_id="T3") == 3
    history = store.db.execute("SELECT lesson, task, failures, status FROM lesson_history").fetchall()
    assert history == [(e.id, 1, 0, "probation") for e in list(memory.experiences.values())] + [
        (second.id, 3, 1, "invalid")
    ]
    kept = store.db.execute("SELECT failures, valid_from FROM lessons WHERE id = ?", (second.id,)).fetchone()
    assert kept == (1, "2025-03-01")


def test_a_failed_commit_keeps_nothing_and_the_next_one_writes_it(tmp_path):
    store = Store(tmp_path / "state.sqlite")
    memory = store.load_memory(FakeClock())
    do_task(memory, 1)
    commit(store, memory, 1)
    do_task(memory, 2)
    steps, summary = run_of(2)
    bad = [LogRecord(*(object() if name == "tool" else v for name, v in asdict(steps[0]).items()))]
    with pytest.raises(sqlite3.ProgrammingError):  # the step row fails after the lessons were written
        store.commit_task(memory.experiences.values(), task_id="T2", runs=[(bad, summary)])
    assert_state_after(store, 1)
    assert commit(store, memory, 2) == 2
    assert_state_after(store, 2)


def test_update_reloads_under_the_lock_and_returns_what_the_change_returned(tmp_path):
    store = Store(tmp_path / "state.sqlite")
    decision = store.update(
        FakeClock(), lambda m: m.propose(rule(1), task_id="T1", run_id="R1", task_type=TYPE)[0]
    )
    assert decision == "on probation: injected from now, votes decide"
    decision = store.update(
        FakeClock(), lambda m: m.propose(rule(1), task_id="T2", run_id="R2", task_type=TYPE)[0]
    )
    assert decision == "written: confirmed in 2 tasks"
    assert [(e["status"], e["source_tasks"]) for e in lessons(store)] == [("active", ["T1", "T2"])]
    assert store.completed_tasks() == []  # update is not a task


# --- export and import ---------------------------------------------------------------------------


def test_export_writes_the_journal_memory_file_and_log_as_the_old_writers_do(tmp_path):
    clock = FakeClock()
    store = Store(tmp_path / "state.sqlite")
    memory = store.load_memory(clock)
    for k in range(1, 5):
        do_task(memory, k)
        commit(store, memory, k)
    clock.advance(days=3)
    journal_md, memory_json, log_jsonl = store.export(tmp_path / "export", clock)

    assert journal_md.read_text() == journal(memory)
    MemoryFile(tmp_path / "reference.json").save(memory)
    assert memory_json.read_bytes() == (tmp_path / "reference.json").read_bytes()
    loaded = MemoryFile(memory_json).load(clock).experiences.values()
    assert [asdict(e) for e in loaded] == [asdict(e) for e in memory.experiences.values()]
    for k in range(1, 5):
        append_run(tmp_path / "reference.jsonl", *run_of(k))
    assert log_jsonl.read_bytes() == (tmp_path / "reference.jsonl").read_bytes()
    records, summaries = load_log(log_jsonl)
    assert summaries == [run_of(k)[1] for k in range(1, 5)]
    assert records == [r for k in range(1, 5) for r in run_of(k)[0]]


def test_import_memory_file_brings_in_every_lesson_once(tmp_path):
    memory = Memory(FakeClock())
    for i in range(3):
        memory.propose(rule(i), task_id=f"T{i}", run_id="R1", task_type=TYPE)
    memory.propose(rule(0), task_id="T9", run_id="R2", task_type=TYPE)  # confirmed twice: active
    MemoryFile(tmp_path / "memory.json").save(memory)
    store = Store(tmp_path / "state.sqlite")
    assert store.import_memory_file(tmp_path / "memory.json") == 3
    assert store.import_memory_file(tmp_path / "memory.json") == 0  # already there, unchanged
    assert lessons(store) == [asdict(e) for e in memory.experiences.values()]
    assert lessons(store)[0]["status"] == "active"
    (tmp_path / "broken.json").write_text("{")
    with pytest.raises(MemoryFileError, match="is unreadable"):
        store.import_memory_file(tmp_path / "broken.json")


# --- files that are not a store ------------------------------------------------------------------


def sqlite_file(path: Path, *statements: str) -> bytes:
    db = sqlite3.connect(path)
    for statement in statements:
        db.execute(statement)
    db.commit()
    db.close()
    return path.read_bytes()


def store_file(path: Path, *statements: str) -> bytes:
    store = Store(path)
    memory = store.load_memory(FakeClock())
    for k in range(1, 60):
        do_task(memory, k)
        commit(store, memory, k)
    for statement in statements:
        store.db.execute(statement)
    store.close()  # the last connection checkpoints the WAL into the file
    return path.read_bytes()


def memory_json(path: Path) -> bytes:
    MemoryFile(path).save(Memory(FakeClock()))
    return path.read_bytes()


BAD_FILES = {
    "text": (lambda p: b"hello, not a database\n", "not an SQLite database"),
    "a few bytes": (lambda p: b"SQLite", "not an SQLite database"),
    "a JSON memory file": (
        memory_json,
        r"not an SQLite database; a MemoryFile\? use Store\(...\).import_memory_file",
    ),
    "another program's SQLite": (
        lambda p: sqlite_file(p, "CREATE TABLE orders (id TEXT)"),
        r"an SQLite database with tables \['orders'\] but no meta table",
    ),
    "another format": (
        lambda p: sqlite_file(
            p, "CREATE TABLE meta (key, value)", "INSERT INTO meta VALUES ('format', 'notes')"
        ),
        "format 'notes' version None, expected format 'ralph_mini.store' version 1",
    ),
    "a newer version": (
        lambda p: store_file(p, "UPDATE meta SET value = '2' WHERE key = 'version'"),
        "format 'ralph_mini.store' version '2', expected format 'ralph_mini.store' version 1",
    ),
    "a table dropped": (lambda p: store_file(p, "DROP TABLE steps"), r"tables \['steps'\] are missing"),
    "a damaged page": (
        lambda p: (lambda b: b[:8192] + b"\x55" * 4096 + b[12288:])(store_file(p)),
        "damaged: .* Page 3: btreeInitPage",
    ),
    "cut in half": (
        lambda p: (lambda b: b[: len(b) // 2])(store_file(p)),
        "database disk image is malformed",
    ),
}


@pytest.mark.parametrize("make, complaint", BAD_FILES.values(), ids=BAD_FILES.keys())
def test_a_file_that_is_not_a_store_is_a_clear_error_with_a_copy_and_left_as_it_was(
    tmp_path, make, complaint
):
    content = make(tmp_path / "source")
    path = tmp_path / "state.sqlite"
    path.write_bytes(content)
    for _ in range(2):  # and again: nothing was reset or repaired behind your back
        with pytest.raises(StoreError, match=complaint) as error:
            Store(path)
        backup = tmp_path / "state.sqlite.unreadable"
        assert str(error.value).startswith(f"state file {path} is unreadable (")
        assert str(error.value).endswith(
            f"a copy is kept at {backup}. Fix the file, or move it away to start a new store."
        )
        assert backup.read_bytes() == content
        assert path.read_bytes() == content


def test_an_empty_file_is_a_new_store(tmp_path):
    """SQLite creates the file before it writes the schema: a kill in between leaves 0 bytes."""
    (tmp_path / "state.sqlite").touch()
    store = Store(tmp_path / "state.sqlite")
    assert store.completed_tasks() == [] and lessons(store) == []
    assert store.db.execute("PRAGMA journal_mode").fetchone() == ("wal",)


# --- two processes at once -----------------------------------------------------------------------

SHARED = "when any task: skip tool_shared"


@pytest.fixture(scope="module")
def processes():
    return forkserver("ralph_mini.store", __name__)


def writer(who: str, path: str, mode: str) -> Callable[[int], None]:
    """A task each ('tasks'), a vote on the shared lesson each through update ('update'), or the same
    vote through a stale load_memory ... commit_task ('stale')."""
    store, clock = Store(path), FakeClock()
    memory = store.load_memory(clock)

    def write(i: int) -> None:
        if mode == "update":
            store.update(clock, lambda m: m.record_hits([m.experiences[shared_id(m)]]))
            return
        memory.propose(rule(i, who), task_id=f"{who}{i}", run_id=f"R{who}{i:03d}", task_type=TYPE)
        if mode == "stale":
            memory.record_hits([memory.experiences[shared_id(memory)]])
            time.sleep(0.002)  # the task takes a while (in a notebook: seconds)
        store.commit_task(memory.experiences.values(), task_id=f"{who}{i}", runs=[run_of(i, who)],
                          result={"who": who, "i": i})  # fmt: skip

    return write


def shared_id(memory: Memory) -> str:
    return next(e.id for e in memory.experiences.values() if e.rule == SHARED)


def two_writers(tmp_path: Path, processes, mode: str) -> Store:
    path = tmp_path / "state.sqlite"
    Store(path).update(FakeClock(), lambda m: m.propose(SHARED, task_id="T0", run_id="R0", task_type=TYPE))
    run_two_writers(processes, tmp_path, writer, str(path), mode)
    return Store(path)


def test_two_processes_committing_tasks_at_once_lose_nothing(tmp_path, processes):
    store = two_writers(tmp_path, processes, "tasks")
    tasks = store.completed_tasks()
    assert [t.number for t in tasks] == list(range(1, 2 * ADDS + 1))
    for who in ("a", "b"):  # all 50 of each, in the order each writer committed them
        assert [t.result for t in tasks if t.result["who"] == who] == [
            {"who": who, "i": i} for i in range(ADDS)
        ]
        assert [t.task_id for t in tasks if t.task_id.startswith(who)] == [f"{who}{i}" for i in range(ADDS)]
        assert [run for run in store.runs() if run[1].run_id.startswith(f"R{who}")] == [
            run_of(i, who) for i in range(ADDS)
        ]
        assert [e["rule"] for e in lessons(store) if f"_{who}_" in e["rule"]] == [
            rule(i, who) for i in range(ADDS)
        ]
    assert len(lessons(store)) == 1 + 2 * ADDS


def test_two_processes_voting_through_update_lose_no_vote(tmp_path, processes):
    store = two_writers(tmp_path, processes, "update")
    assert [(e["rule"], e["hits"]) for e in lessons(store)] == [(SHARED, 2 * ADDS)]


def test_contrast_stale_commits_of_one_lesson_from_two_processes_lose_votes(tmp_path, processes):
    store = two_writers(tmp_path, processes, "stale")
    shared = lessons(store)[0]
    assert shared["rule"] == SHARED
    assert 0 < shared["hits"] < 2 * ADDS, "two stale writers lost no vote: expected lost updates"
    assert len(store.completed_tasks()) == 2 * ADDS and len(lessons(store)) == 1 + 2 * ADDS  # the rest kept


def test_a_new_store_waits_while_another_connection_holds_the_file(tmp_path):
    """Switching a new file to WAL fails at once, without waiting on the busy timeout, while another
    connection holds a lock (two kernels creating one store at once): the store retries until it is free."""
    path = tmp_path / "state.sqlite"
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")  # holds the file, as a second creator would
    release = threading.Timer(0.3, lambda: other.execute("COMMIT"))
    release.start()
    began = time.monotonic()
    store = Store(path, timeout=10)
    assert time.monotonic() - began >= 0.25  # it waited for the other connection, then went on
    assert store.db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    assert store.commit_task([], task_id="T1") == 1
    release.join()
    other.close()


# --- kill -9 -------------------------------------------------------------------------------------

KILLS = 12


def task_writer(path: str, progress: str, stall_after: int) -> None:
    """Continue from the store forever: task n+1, n+2, ... one commit each. With ``stall_after``,
    sleep inside a commit at that many SQLite VM instructions (counted over all commits)."""
    store = Store(path)
    memory = store.load_memory(FakeClock())
    n = len(store.completed_tasks())
    report(Path(progress), f"loaded {n}")
    instructions = 0

    def count() -> int:
        nonlocal instructions
        instructions += 1
        if stall_after and instructions >= stall_after:
            report(Path(progress), f"stalled {n}")
            time.sleep(60)  # the parent kills us here, inside the transaction
        return 0

    while True:
        n += 1
        do_task(memory, n)
        report(Path(progress), f"committing {n}")
        store.db.set_progress_handler(count, 1)
        commit(store, memory, n)
        store.db.set_progress_handler(None, 1)
        report(Path(progress), f"committed {n}")


def test_a_writer_killed_at_random_moments_leaves_the_store_at_a_task_boundary(tmp_path, processes):
    """Even kills: a random moment of the writer's loop. Odd kills: stalled inside a commit."""
    path = tmp_path / "state.sqlite"
    rng = random.Random(17)
    counts, landed_inside = [], 0
    for kill in range(KILLS):
        progress = tmp_path / f"progress-{kill}.txt"
        stall_after = rng.randint(1, 3000) if kill % 2 else 0
        child = processes.Process(
            target=task_writer, args=(str(path), str(progress), stall_after), daemon=True
        )
        child.start()
        wait_for(progress, "stalled" if stall_after else "loaded", child)
        if not stall_after:
            time.sleep(rng.uniform(0.0, 0.03))
        os.kill(child.pid, signal.SIGKILL)
        child.join()
        assert child.exitcode == -signal.SIGKILL

        lines = [line.split() for line in progress.read_text().splitlines()]
        done = max(int(n) for word, n in lines if word in ("loaded", "committed"))
        committing = max([int(n) for word, n in lines if word == "committing"], default=done)
        store = Store(path)
        n = len(store.completed_tasks())
        if stall_after:  # killed inside the transaction: the old state, exactly
            assert n == done and committing == done + 1, f"kill {kill}: {n} tasks, {lines[-2:]}"
            landed_inside += 1
        else:
            assert n in (done, committing), f"kill {kill}: {n} tasks, last reports {lines[-2:]}"
        assert_state_after(store, n)
        store.close()
        assert not counts or n >= counts[-1]
        counts.append(n)
    assert landed_inside == KILLS // 2
    assert len(set(counts)) >= 3, f"the writers made no progress across the kills: {counts}"


def wait_for(progress: Path, word: str, child, seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while not (progress.exists() and word in progress.read_text()):
        assert child.is_alive() and time.monotonic() < deadline, "the writer died or never got there"
        time.sleep(0.001)
