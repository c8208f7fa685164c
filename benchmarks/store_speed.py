"""What one lesson update costs as memory grows: today's JSON file against the SQLite store (issue 17).

    python benchmarks/store_speed.py              # 10 / 100 / 1k / 10k lessons
    python benchmarks/store_speed.py 10 100000    # other sizes

Per size, the median of repeated runs (milliseconds), each update changing one lesson's hit count:

- ``MemoryFile.update``: lock, reload, change, rewrite the whole JSON file (with fsync);
- ``store: 1-row upsert``: ``Store.save_lessons([lesson])``, one row in its own transaction
  (WAL, synchronous=NORMAL), the cost of writing a lesson;
- ``store: commit_task``: what the loop will do after each task: the whole memory handed over (the store
  finds the one changed lesson), plus a task row, in one transaction;
- ``MemoryFile.load`` against ``store: open + load``: what a resume pays once (the store opens the file
  with its integrity check, then ``load_memory``).

Files live in a temporary directory on the working directory's disk (fsync cost is the disk's).
"""

import statistics
import sys
import tempfile
import time
from pathlib import Path

from ralph_mini.clock import FakeClock
from ralph_mini.memory import Memory
from ralph_mini.memory_file import MemoryFile
from ralph_mini.store import Store

TARGET_MS = 2.0  # issue 17: one update at 10k lessons


def memory_of(size: int) -> Memory:
    memory = Memory(FakeClock())
    for i in range(size):
        memory.propose(f"when any task: skip tool_{i}", task_id="T1", run_id="R1")
    return memory


def median_ms(action, repeats: int) -> float:
    times = []
    for i in range(repeats):
        began = time.perf_counter()
        action(i)
        times.append(time.perf_counter() - began)
    return statistics.median(times) * 1000


def measure(size: int, directory: Path) -> dict[str, float]:
    memory = memory_of(size)
    lessons = list(memory.experiences.values())
    clock = FakeClock()

    json_file = MemoryFile(directory / f"memory-{size}.json")
    json_file.save(memory)

    def json_update(i: int) -> None:
        json_file.update(clock, lambda m: m.record_hits([list(m.experiences.values())[i % size]]))

    store = Store(directory / f"state-{size}.sqlite")
    store.save_lessons(lessons)

    def upsert(i: int) -> None:
        lesson = lessons[i % size]
        lesson.hits += 1
        store.save_lessons([lesson])

    def commit(i: int) -> None:
        lessons[i % size].hits += 1
        store.commit_task(memory.experiences.values(), task_id=f"T{i}")

    def open_and_load(_: int) -> None:
        Store(directory / f"state-{size}.sqlite").load_memory(clock)

    row = {
        "MemoryFile.update": median_ms(json_update, 5 if size >= 10_000 else 21),
        "store: 1-row upsert": median_ms(upsert, 201),
        "store: commit_task": median_ms(commit, 51),
        "MemoryFile.load": median_ms(lambda _: json_file.load(clock), 5),
        "store: open + load": median_ms(open_and_load, 5),
    }
    store.close()
    return row


def main(argv: list[str]) -> None:
    sizes = [int(a) for a in argv] or [10, 100, 1_000, 10_000]
    with tempfile.TemporaryDirectory(dir=".") as directory:
        rows = {size: measure(size, Path(directory)) for size in sizes}
    columns = list(next(iter(rows.values())))
    print("median ms per operation (WAL, synchronous=NORMAL for the store)")
    print(f"{'lessons':>8}" + "".join(f"{c:>21}" for c in columns))
    for size, row in rows.items():
        print(f"{size:>8,}" + "".join(f"{row[c]:>21.3f}" for c in columns))
    largest = max(rows)
    upsert = rows[largest]["store: 1-row upsert"]
    verdict = "meets" if upsert <= TARGET_MS else "misses"
    print(f"1-row upsert at {largest:,} lessons: {upsert:.3f} ms, {verdict} the {TARGET_MS} ms target")


if __name__ == "__main__":
    main(sys.argv[1:])
