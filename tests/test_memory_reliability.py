"""Memory that loses nothing: killed writers, two writers at once, and files that cannot be read.

Real processes, real signals: a writer process is killed with SIGKILL (no cleanup, no ``finally``)
at seeded random moments while it saves a growing memory, and two processes add experiences to one
file at the same time. Each is checked against what it must be, not against a snapshot:

- after every kill the file loads, and holds exactly the last state the writer reported saved or the
  one it was writing (never a mix), with the experiences in the order they were added;
- with ``MemoryFile.update`` (lock, reload, change, write) two writers lose nothing; with plain
  ``load`` ... ``save`` (each call locked, but not the gap between them) they do, so the test shows
  that the read-modify-write under one lock is what matters, not the lock alone;
- a corrupted, truncated, empty or wrong-version file raises ``MemoryFileError`` naming the file and
  the fix, keeps a byte-for-byte backup and leaves the file itself untouched: no silent reset.

Processes come from a ``forkserver`` that imports ``ralph_mini`` and this module once, so a writer
starts in milliseconds instead of the ~1 s a fresh interpreter takes to import the package.
"""

import json
import os
import random
import signal
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

import pytest
from writers import ADDS, forkserver, report, rule, run_two_writers

from ralph_mini import memory_file as memory_module
from ralph_mini.clock import FakeClock
from ralph_mini.memory import Memory
from ralph_mini.memory_file import MemoryFile, MemoryFileError

TYPE = "status"  # the task type every lesson here is learned on (the order desk's)
STEP = 20  # experiences added per save by the killed writer
KILLS = 20


def rules_in(path: Path) -> list[str]:
    return [e.rule for e in MemoryFile(path).load(FakeClock()).experiences.values()]


@pytest.fixture(scope="module")
def processes():
    return forkserver("ralph_mini.memory", __name__)


def reported(progress: Path) -> list[int]:
    return [int(line.split()[1]) for line in progress.read_text().splitlines()]


# --- kill -9 at random moments -------------------------------------------------------------------


def wait_for(condition, writer, seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert writer.is_alive() and time.monotonic() < deadline, "the writer died or never got there"
        time.sleep(0.001)


def signature(path: Path) -> tuple[int, int] | None:
    """(modification time in ns, size) of a file, or None: tells a fresh write from an old leftover."""
    try:
        stat = path.stat()
    except FileNotFoundError:
        return None
    return stat.st_mtime_ns, stat.st_size


def says(progress: Path, word: str):
    return lambda: progress.exists() and word in progress.read_text()


def growing_writer(path: str, progress: str) -> None:
    """Load the memory, then forever: add STEP experiences, save, report the count. Runs until killed."""
    store = MemoryFile(path)
    memory = store.load(FakeClock())
    count = len(memory.experiences)
    report(Path(progress), f"loaded {count}")
    while True:
        for i in range(count, count + STEP):
            memory.propose(rule(i), task_id="T1", run_id="R1", task_type=TYPE)
        count += STEP
        store.save(memory)
        report(Path(progress), f"saved {count}")


def test_a_writer_killed_at_random_moments_leaves_the_old_or_the_new_state(tmp_path, processes):
    """KILLS kills: half at a random moment of the writer's loop, half at a random moment after a write
    has begun (its temporary file appeared), so that many land inside the write itself."""
    path = tmp_path / "memory.json"
    temporary = tmp_path / "memory.json.tmp"
    rng = random.Random(7)
    counts, mid_write = [], 0
    for kill in range(KILLS):
        progress = tmp_path / f"progress-{kill}.txt"
        leftover = signature(temporary)  # a half-written file the previous kill may have left

        def writing(leftover=leftover) -> bool:  # this writer opened the temporary file, has not renamed it
            return signature(temporary) not in (None, leftover)

        writer = processes.Process(target=growing_writer, args=(str(path), str(progress)), daemon=True)
        writer.start()
        wait_for(says(progress, "loaded"), writer)
        if kill % 2 == 0:
            time.sleep(rng.uniform(0.01, 0.15))
        else:
            wait_for(writing, writer)
            time.sleep(rng.uniform(0.0, 0.01))
        os.kill(writer.pid, signal.SIGKILL)
        writer.join()
        assert writer.exitcode == -signal.SIGKILL
        inside = writing()
        mid_write += inside

        last = reported(progress)[-1]
        rules = rules_in(path)  # loads (under the lock the dead writer held: the OS released it)
        assert len(rules) in (last, last + STEP), f"kill {kill}: {len(rules)} experiences, saved {last}"
        assert not inside or len(rules) == last, f"kill {kill}: killed inside a write, yet not the old state"
        assert rules == [rule(i) for i in range(len(rules))], f"kill {kill}: not the states written"
        assert not counts or len(rules) >= counts[-1]  # nothing saved earlier is ever lost
        counts.append(len(rules))

    assert mid_write >= 1, "no kill landed inside a write: the test did not test atomicity"
    assert len(set(counts)) >= 3  # the writers made progress across the kills
    # The leftover temporary file (if the last kill left one) is only ever a half-written next state:
    # it is never read, and the next save overwrites it and renames it away.
    memory = MemoryFile(path).load(FakeClock())
    memory.propose(rule(counts[-1]), task_id="T1", run_id="R1", task_type=TYPE)
    MemoryFile(path).save(memory)
    assert not temporary.exists()
    assert rules_in(path) == [rule(i) for i in range(counts[-1] + 1)]


# --- kill -9 at a chosen point inside the write --------------------------------------------------


def stall(progress: str) -> None:
    report(Path(progress), "stalled 0")
    time.sleep(60)  # the parent kills us here


def half_then_stall(progress: str):
    """A json.dump that writes the first half of its text, flushes it to disk, and waits to be killed."""

    def dump(data, file, **options) -> None:
        text = json.dumps(data, **options)
        file.write(text[: len(text) // 2])
        file.flush()
        os.fsync(file.fileno())
        stall(progress)

    return dump


def stalled_writer(path: str, progress: str, point: str) -> None:
    """Add one experience to a 300-experience memory and save it, stalling at ``point``."""
    store = MemoryFile(path)
    memory = store.load(FakeClock())
    memory.propose(rule(len(memory.experiences)), task_id="T1", run_id="R1", task_type=TYPE)
    if point == "halfway through the bytes":
        memory_module.json.dump = half_then_stall(progress)  # this child's json module only
    elif point == "written, before the rename":
        memory_module.os.replace = lambda *_: stall(progress)
    if point == "naive writer, halfway":  # the contrast: no temporary file, write the real file directly
        data = {
            "format": "ralph_mini.memory",
            "version": 1,
            "experiences": [asdict(e) for e in memory.experiences.values()],
        }
        with open(path, "w", encoding="utf-8") as file:
            half_then_stall(progress)(data, file, indent=1)
    store.save(memory)


@pytest.mark.parametrize("point", ["halfway through the bytes", "written, before the rename"])
def test_a_writer_killed_inside_the_write_leaves_the_old_state(tmp_path, processes, point):
    path = tmp_path / "memory.json"
    old = Memory(FakeClock())
    for i in range(300):
        old.propose(rule(i), task_id="T1", run_id="R1", task_type=TYPE)
    MemoryFile(path).save(old)
    before = path.read_bytes()
    kill_when_stalled(processes, stalled_writer, (str(path), str(tmp_path / "progress.txt"), point))

    assert path.read_bytes() == before  # the real file was never touched
    temporary = (tmp_path / "memory.json.tmp").read_text()
    if point == "halfway through the bytes":
        assert 0 < len(temporary) < len(before) and not is_json(temporary)
    else:
        assert len(json.loads(temporary)["experiences"]) == 301  # complete, but never renamed
    assert rules_in(path) == [rule(i) for i in range(300)]
    # The next save overwrites the leftover and renames it away.
    memory = MemoryFile(path).load(FakeClock())
    memory.propose(rule(300), task_id="T1", run_id="R1", task_type=TYPE)
    MemoryFile(path).save(memory)
    assert rules_in(path) == [rule(i) for i in range(301)]
    assert not (tmp_path / "memory.json.tmp").exists()


def test_contrast_a_naive_writer_killed_halfway_corrupts_the_file(tmp_path, processes):
    path = tmp_path / "memory.json"
    old = Memory(FakeClock())
    for i in range(300):
        old.propose(rule(i), task_id="T1", run_id="R1", task_type=TYPE)
    MemoryFile(path).save(old)
    progress = tmp_path / "progress.txt"
    kill_when_stalled(processes, stalled_writer, (str(path), str(progress), "naive writer, halfway"))
    with pytest.raises(MemoryFileError, match="is unreadable"):
        MemoryFile(path).load(FakeClock())


def kill_when_stalled(processes, target, args) -> None:
    writer = processes.Process(target=target, args=args, daemon=True)
    writer.start()
    progress = Path(args[1])
    wait_for(says(progress, "stalled"), writer)
    os.kill(writer.pid, signal.SIGKILL)
    writer.join()
    assert writer.exitcode == -signal.SIGKILL


def is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


# --- two writers at once -------------------------------------------------------------------------


def adder(who: str, path: str, safe: bool, both_loaded=None) -> Callable[[int], None]:
    """Add ADDS distinct experiences, one write each, either with update() or with load ... save. With
    ``both_loaded`` (a barrier), each load ... save waits there for the other writer's load: the two
    kernels' copies overlap every time, as two tasks of seconds do, so the contrast cannot pass by luck."""
    store, clock = MemoryFile(path), FakeClock()

    def add(i: int) -> None:
        text = rule(i, who)
        if safe:
            store.update(clock, lambda memory: memory.propose(text, task_id=who, run_id="R1", task_type=TYPE))
        else:
            memory = store.load(clock)
            memory.propose(text, task_id=who, run_id="R1", task_type=TYPE)
            both_loaded.wait(timeout=30)  # the kernel works with its copy (in a notebook: a whole task)
            store.save(memory)

    return add


def two_writers(tmp_path: Path, processes, safe: bool) -> list[str]:
    path = tmp_path / "memory.json"
    both_loaded = None if safe else processes.Barrier(2)  # (update() holds the lock: it cannot wait)
    run_two_writers(processes, tmp_path, adder, str(path), safe, both_loaded)
    return rules_in(path)


def test_two_processes_updating_one_file_lose_no_experience(tmp_path, processes):
    rules = two_writers(tmp_path, processes, safe=True)
    assert sorted(rules) == sorted(rule(i, who) for who in ("a", "b") for i in range(ADDS))
    for who in ("a", "b"):  # and each writer's experiences are in the order it added them
        assert [r for r in rules if f"tool_{who}_" in r] == [rule(i, who) for i in range(ADDS)]


def test_contrast_load_then_save_from_two_processes_loses_updates(tmp_path, processes):
    rules = two_writers(tmp_path, processes, safe=False)
    lost = 2 * ADDS - len(rules)
    assert set(rules) <= {rule(i, who) for who in ("a", "b") for i in range(ADDS)}
    assert lost > 0, "two overlapping load ... save loops lost nothing: expected lost updates"


# --- files that cannot be read -------------------------------------------------------------------


def good_file_text() -> str:
    memory = Memory(FakeClock())
    for i in range(3):
        memory.propose(rule(i), task_id="T1", run_id="R1", task_type=TYPE)
    return json.dumps(
        {
            "format": "ralph_mini.memory",
            "version": 1,
            "experiences": [asdict(e) for e in memory.experiences.values()],
        },
        indent=1,
    )


GOOD = good_file_text()
LINES = GOOD.splitlines()
BAD_FILES = {
    "truncated JSON": (GOOD[: len(GOOD) * 2 // 3].encode(), "Expecting|Unterminated"),
    "a line of garbage": (
        "\n".join([*LINES[:5], "<<<<<<< HEAD", *LINES[5:]]).encode(),
        "Expecting",
    ),
    "garbage after the end": ((GOOD + "\nhello\n").encode(), "Extra data"),
    "empty file": (b"", "Expecting value"),
    "not UTF-8": (b"\xff\xfe\x00garbage\x80", "can't decode"),
    "wrong version": (GOOD.replace('"version": 1', '"version": 2').encode(), "version 2, expected 1"),
    "wrong format": (GOOD.replace('"ralph_mini.memory"', '"notes"').encode(), "format 'notes'"),
    "a list, not an object": (b"[]", "holds a JSON list, not an object with format, version, experiences"),
    "no experiences": (
        b'{"format": "ralph_mini.memory", "version": 1}',
        "'experiences' is missing, not a list",
    ),
    "an experience missing a field": (
        GOOD.replace('"rule": "when any task: skip tool_w_1",', "").encode(),
        r"missing required field\(s\): 'rule'",
    ),
    "nested a million deep": (b"[" * 1_000_000, "maximum recursion depth exceeded"),
}


@pytest.mark.parametrize("content, complaint", BAD_FILES.values(), ids=BAD_FILES.keys())
def test_an_unreadable_file_is_a_clear_error_with_a_backup_and_no_reset(tmp_path, content, complaint):
    path = tmp_path / "memory.json"
    path.write_bytes(content)
    with pytest.raises(MemoryFileError, match=complaint) as error:
        MemoryFile(path).load(FakeClock())
    message = str(error.value)
    backup = tmp_path / "memory.json.unreadable"
    assert message.startswith(f"memory file {path} is unreadable (")
    assert message.endswith(
        f"a copy is kept at {backup}. Fix the file, or move it away to start with an empty memory."
    )
    assert backup.read_bytes() == content
    assert path.read_bytes() == content  # untouched
    # No silent reset on a write either: update() refuses before it writes anything, every time.
    for _ in range(2):
        with pytest.raises(MemoryFileError):
            MemoryFile(path).update(
                FakeClock(), lambda m: m.propose(rule(9), task_id="T1", run_id="R1", task_type=TYPE)
            )
    assert path.read_bytes() == content
    assert not (tmp_path / "memory.json.tmp").exists()


def test_a_good_file_next_to_a_leftover_backup_and_temporary_file_loads(tmp_path):
    path = tmp_path / "memory.json"
    path.write_text(GOOD)
    (tmp_path / "memory.json.tmp").write_text(GOOD[:100])  # from a writer killed mid-write
    (tmp_path / "memory.json.unreadable").write_text("old junk")
    assert rules_in(path) == [rule(i) for i in range(3)]
