"""What memory's operations and a store's commit cost as memory grows (issues 17 and 27).

    python benchmarks/store_speed.py                           # 100 / 1k / 10k / 100k lessons
    python benchmarks/store_speed.py --sizes 100 1000          # other sizes
    python benchmarks/store_speed.py --files --file-sizes 10 1000   # also issue 17's file-against-store table

Per size, the median of repeated runs (milliseconds) of:

- ``propose``: a new rule for an existing task type (the lookup for its duplicate, then the write);
- ``dedup``: ``Memory.equivalent`` for a rule with no duplicate, so every candidate is read;
- ``contradiction``: what every promotion, confirmation and validated run does, ``_invalidate_contradicted``
  for an active rule that contradicts none, so every candidate is read;
- ``commit_task``: one lesson's hit recorded, then ``store.commit_task(memory.take_changed())``;
- ``commit (all)``: the same with the whole memory handed over (``memory.experiences.values()``): the store
  compares every lesson to find the changed one, which grows with memory;
- ``run_task``: one task of the Ralph Loop (``loop.run_task``: the order desk, the offline model) with
  that memory: the sweep for expiry, the world's check of its task type's rules, planning and the
  second retrieval read the lessons filed for the task (``live_filing``), not every lesson;
- ``filing``: once per memory, the first dedup after a load files every lesson (``rule_forms.Shelves``),
  and the first task (counted here) files the live ones (``live_filing.LiveFiling``).

Memory grows as a deployment's does, by task types: 50 lessons a type, on 10 statuses and 'any task'.
The cost of a lookup grows with the lessons of one task type and trigger family, not with memory: the
last line is each figure at the largest size over the smallest, "flat" within 2x (all but the two that
must grow: ``commit (all)`` and ``filing``).

The fixture is built directly (a lesson row as ``propose`` writes it), in seconds even at 100k: no
instance check per lesson. Files live in a temporary directory on the working directory's disk.
"""

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from ralph_mini.clock import FakeClock
from ralph_mini.experience import lesson_key
from ralph_mini.loop import run_task
from ralph_mini.measure import at_least_one
from ralph_mini.memory import Experience, Memory
from ralph_mini.memory_file import MemoryFile
from ralph_mini.offline import OfflineModel
from ralph_mini.rule_forms import canonical
from ralph_mini.rules import parse_rule
from ralph_mini.store import Store
from ralph_mini.votes import trigger_tag
from ralph_mini.worlds import orders

PER_TYPE = 50  # lessons a task type
FLAT = 2.0  # issue 27: each operation within 2x from the smallest size to the largest
GROWING = ("commit (all)", "filing")  # what must read every lesson: shown for contrast
NOW = "2025-03-10T12:00"


def lesson(text: str, task_type: str) -> Experience:
    """An active lesson as ``Memory.propose`` writes it."""
    rule = canonical(parse_rule(text))
    return Experience(
        id=lesson_key(task_type, rule), rule=str(rule), task_type=task_type, trigger=trigger_tag(rule),
        tools=sorted(rule.tools()), result="steers tool choice", failure_reason="", created_at=NOW,
        last_hit_at=NOW, status="active", source_tasks=["T0"], source_runs=["R0"],
    )  # fmt: skip


def rule_text(i: int) -> str:
    """The i-th rule of a task type: 'when status is s3: call tool_1', ..., 'when any task: start with T'."""
    if i % 10 == 9:
        return f"when any task: start with tool_{i // 10}"
    return f"when status is s{i % 10}: call tool_{i // 10}"


def memory_of(size: int) -> Memory:
    lessons = [lesson(rule_text(i % PER_TYPE), f"type_{i // PER_TYPE}") for i in range(size)]
    return Memory(FakeClock(), experiences=lessons)


def median_ms(action: Callable[[int], object], repeats: int) -> float:
    times = []
    for i in range(repeats):
        began = time.perf_counter()
        action(i)
        times.append(time.perf_counter() - began)
    return statistics.median(times) * 1000


def measure(size: int, directory: Path) -> dict[str, float]:
    """The memory operations at one size (the module docstring says what each one does)."""
    memory = memory_of(size)
    types = max(size // PER_TYPE, 1)
    suite, model = orders.make_suite(n=20, seed=7), OfflineModel(habits=orders.HABITS)
    tools = suite.world.tools()

    def task(i: int) -> None:
        run_task(suite.tasks[i % len(suite.tasks)], model, tools, memory, [], words=orders.WORDS)

    began = time.perf_counter()
    memory.equivalent(parse_rule("when status is s0: call tool_0"), "type_0")  # files every lesson
    task(0)  # the first task files the live ones
    filing = (time.perf_counter() - began) * 1000
    lessons = list(memory.experiences.values())
    active = lessons[len(lessons) // 2]
    store = Store(directory / f"state-{size}.sqlite")
    store.save_lessons(lessons)

    def propose(i: int) -> None:
        memory.propose(f"when status is s{i % 9}: skip tool_n{i}", task_id=f"P{i}", run_id=f"P{i}",
                       task_type=f"type_{i * 7919 % types}")  # fmt: skip

    def commit(i: int) -> None:
        memory.record_hits([lessons[i * 7919 % size]])
        store.commit_task(memory.take_changed(), task_id=f"T{i}")

    def commit_all(i: int) -> None:
        memory.record_hits([lessons[i * 7919 % size]])
        store.commit_task(memory.experiences.values(), task_id=f"A{i}")

    unmatched = canonical(parse_rule("when status is s1: answer; skip tool_x"))
    row = {
        "propose": median_ms(propose, 101),
        "dedup": median_ms(lambda i: memory.equivalent(unmatched, f"type_{i % types}"), 201),
        "contradiction": median_ms(lambda _: memory._invalidate_contradicted(active, NOW), 201),
        "commit_task": median_ms(commit, 51),
        "run_task": median_ms(task, 21),
        "commit (all)": median_ms(commit_all, 11),
        "filing": filing,
    }
    store.close()
    return row


def measure_files(size: int, directory: Path) -> dict[str, float]:
    """Issue 17's table: one lesson's hit count changed, in today's JSON file against the store."""
    memory, clock = memory_of(size), FakeClock()
    lessons = list(memory.experiences.values())
    json_file = MemoryFile(directory / f"memory-{size}.json")
    json_file.save(memory)
    store = Store(directory / f"files-{size}.sqlite")
    store.save_lessons(lessons)

    def json_update(i: int) -> None:
        json_file.update(clock, lambda m: m.record_hits([list(m.experiences.values())[i % size]]))

    def upsert(i: int) -> None:
        lessons[i % size].hits += 1
        store.save_lessons([lessons[i % size]])

    row = {
        "MemoryFile.update": median_ms(json_update, 5 if size >= 10_000 else 21),
        "store: 1-row upsert": median_ms(upsert, 201),
        "MemoryFile.load": median_ms(lambda _: json_file.load(clock), 5),
        "store: open + load": median_ms(lambda _: Store(store.path).load_memory(clock), 5),
    }
    store.close()
    return row


def table(title: str, rows: dict[int, dict[str, float]], ratio: bool) -> None:
    columns = list(next(iter(rows.values())))
    print(title)
    print(f"{'lessons':>8}" + "".join(f"{c:>20}" for c in columns))
    for size, row in rows.items():
        print(f"{size:>8,}" + "".join(f"{row[c]:>20.3f}" for c in columns))
    if ratio and len(rows) > 1:
        small, large = rows[min(rows)], rows[max(rows)]
        print(f"{'ratio':>8}" + "".join(f"{large[c] / small[c]:>19.2f}x" for c in columns))
        flat = [c for c in columns if c not in GROWING and large[c] / small[c] <= FLAT]
        print(f"within {FLAT:g}x from {min(rows):,} to {max(rows):,} lessons: {', '.join(flat) or 'none'}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=at_least_one, nargs="+", default=[100, 1_000, 10_000, 100_000],
                        help="memory sizes in lessons (default 100 1000 10000 100000)")  # fmt: skip
    parser.add_argument("--files", action="store_true", help="also the JSON file against the store")
    parser.add_argument("--file-sizes", type=at_least_one, nargs="+", default=[10, 100, 1_000, 10_000],
                        help="sizes for --files (default 10 100 1000 10000)")  # fmt: skip
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(dir=".") as directory:
        measure(min(args.sizes), Path(directory, "warm-up"))  # the first size does not pay for warming up
        rows = {size: measure(size, Path(directory)) for size in args.sizes}
        table("median ms per operation (commit: WAL, synchronous=NORMAL)", rows, ratio=True)
        if args.files:
            files = {size: measure_files(size, Path(directory)) for size in args.file_sizes}
            table("\nmedian ms per lesson update: the JSON file against the store", files, ratio=False)


if __name__ == "__main__":
    main()
