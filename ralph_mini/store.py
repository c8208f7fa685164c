"""One SQLite file for a run's state: lessons with their history, the step log, the finished tasks.

Why: a ``MemoryFile`` and a JSONL log have no shared commit point, so a run killed between them cannot
be continued, and ``MemoryFile.update`` rewrites the whole JSON for one change. Here all one finished
task produced is ONE transaction (``commit_task``): after a crash or ``kill -9`` the file holds the state
after the last committed task, and ``completed_tasks`` says where to continue.

- **WAL, synchronous=NORMAL**: a commit appends only the changed pages (one lesson costs the same at 10
  or 10k). A kill loses no commit; a power cut may lose the last few, never half of one.
- **Two processes**: each write is ``BEGIN IMMEDIATE`` (the other waits up to ``timeout`` s) and stores
  only the lessons changed since this store last read or wrote them, so two kernels adding lessons lose
  nothing. To change the *same* lessons from several processes use ``update`` (reloads under the lock).
- **Not our file** (not SQLite, damaged, another format or version): ``StoreError`` names the file and
  the fix, keeps a copy at ``<name>.unreadable`` and leaves the file as it was.
- **Readable**: ``export`` writes markdown, JSON and JSONL; ``import_memory_file`` reads a MemoryFile.
Left out on purpose: deleting lessons (``memory.py`` never deletes), migrations but new columns, any ORM.
"""

import json
import operator
import shutil
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from ralph_mini import memory_file
from ralph_mini.clock import Clock
from ralph_mini.log import LogRecord, RunSummary, append_run
from ralph_mini.memory import Experience, Memory, MemoryConfig
from ralph_mini.memory_file import MemoryFile, journal

FORMAT, VERSION = "ralph_mini.store", 1
SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);  -- format, version
-- One row per lesson: the Experience fields (later ones: add_columns), lists as JSON text. `number` keeps
-- the sequence lessons were first stored in (the sequence Memory lists them in).
CREATE TABLE IF NOT EXISTS lessons (
    number INTEGER PRIMARY KEY, id TEXT UNIQUE, rule TEXT, task_type TEXT, "trigger" TEXT, tools TEXT,
    result TEXT, failure_reason TEXT, created_at TEXT, last_hit_at TEXT, confirmations INTEGER,
    hits INTEGER, validations INTEGER, failures INTEGER, calls_saved INTEGER, status TEXT,
    status_reason TEXT, source_tasks TEXT, source_runs TEXT, valid_from TEXT, invalid_from TEXT);
-- One row each time a write changed a lesson: its votes and status over time (task NULL: outside a task).
CREATE TABLE IF NOT EXISTS lesson_history (
    lesson TEXT REFERENCES lessons(id), task INTEGER REFERENCES tasks(number), confirmations INTEGER,
    hits INTEGER, validations INTEGER, failures INTEGER, status TEXT, status_reason TEXT);
-- The task counter: one row per committed task, numbered 1, 2, ... with the caller's JSON (or NULL).
CREATE TABLE IF NOT EXISTS tasks (number INTEGER PRIMARY KEY, task_id TEXT, result TEXT);
-- The log: RunSummary rows (answer as JSON or NULL, correct as 0/1 or NULL) and their LogRecord rows.
CREATE TABLE IF NOT EXISTS runs (
    number INTEGER PRIMARY KEY, task INTEGER REFERENCES tasks(number), run_id TEXT, task_id TEXT,
    question TEXT, now TEXT, calls INTEGER, wrong_calls INTEGER, latency_s REAL, tokens INTEGER,
    answer TEXT, correct INTEGER, stop_reason TEXT);
CREATE TABLE IF NOT EXISTS steps (
    number INTEGER PRIMARY KEY, run INTEGER REFERENCES runs(number), run_id TEXT, step INTEGER, tool TEXT,
    args TEXT, status TEXT, latency_s REAL, tokens_in INTEGER, tokens_out INTEGER, observation TEXT);
"""
TABLES = {"meta", "lessons", "lesson_history", "tasks", "runs", "steps"}
LESSON_FIELDS = tuple(f.name for f in fields(Experience))
LIST_FIELDS = ("tools", "source_tasks", "source_runs")
VOTES = ("confirmations", "hits", "validations", "failures", "status", "status_reason")
STEP_FIELDS = tuple(f.name for f in fields(LogRecord))
RUN_FIELDS = tuple(f.name for f in fields(RunSummary))
lesson_key = operator.attrgetter(*LESSON_FIELDS)  # Experience -> tuple of its fields, in C


def columns(names: Iterable[str], form: str = '"{}"') -> str:
    """('id', 'rule') -> '"id", "rule"'; with form ':{}' -> ':id, :rule' (named parameters)."""
    return ", ".join(form.format(name) for name in names)


P = ":{}"  # columns(names, P): named parameters
UPSERT_LESSON = (
    f"INSERT INTO lessons ({columns(LESSON_FIELDS)}) VALUES ({columns(LESSON_FIELDS, P)}) "
    f"ON CONFLICT(id) DO UPDATE SET ({columns(LESSON_FIELDS)}) = ({columns(LESSON_FIELDS, P)})"
)
INSERT_META = "INSERT OR IGNORE INTO meta VALUES ('format', ?), ('version', ?)"
INSERT_HISTORY = f"INSERT INTO lesson_history VALUES (:id, :task, {columns(VOTES, P)})"
INSERT_RUN = f"INSERT INTO runs (task, {columns(RUN_FIELDS)}) VALUES (:task, {columns(RUN_FIELDS, P)})"
INSERT_STEP = f"INSERT INTO steps (run, {columns(STEP_FIELDS)}) VALUES (:run, {columns(STEP_FIELDS, P)})"


class StoreError(RuntimeError):
    """The state file cannot be used; the message says where a copy was kept and what to do."""


@dataclass(frozen=True)
class CompletedTask:
    """One committed task: its number (1, 2, ...), its id, and the JSON result the caller stored."""

    number: int
    task_id: str
    result: object


class Store:
    """A run's state in one SQLite file; ``Store("runs/demo.sqlite")`` creates it if missing."""

    def __init__(self, path: str | Path, timeout: float = 30.0):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._written: dict[str, tuple] = {}  # lesson id -> its fields as last read or written here
        self.db = self._open(timeout)

    def _open(self, timeout: float) -> sqlite3.Connection:
        """Check the file is ours before anything writes to it, then create the schema if it is new."""
        if self.path.exists() and self.path.stat().st_size > 0:
            with self.path.open("rb") as file:
                head = file.read(16)
            if head != b"SQLite format 3\x00":
                hint = "; a MemoryFile? use Store(...).import_memory_file" if head[:1] == b"{" else ""
                self._refuse(f"not an SQLite database{hint}")
        db = sqlite3.connect(self.path, timeout=timeout, isolation_level=None)  # we BEGIN ourselves
        try:
            tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if tables:  # not a new file: it must be ours, of our version, and intact
                if "meta" not in tables:
                    raise ValueError(f"an SQLite database with tables {sorted(tables)} but no meta table")
                meta = dict(db.execute("SELECT key, value FROM meta"))
                if (meta.get("format"), meta.get("version")) != (FORMAT, str(VERSION)):
                    found = f"format {meta.get('format')!r} version {meta.get('version')!r}"
                    raise ValueError(f"{found}, expected format {FORMAT!r} version {VERSION}")
                if TABLES - tables:
                    raise ValueError(f"tables {sorted(TABLES - tables)} are missing")
                if (check := db.execute("PRAGMA quick_check").fetchone()[0]) != "ok":
                    raise ValueError(f"damaged: {' '.join(check.split())}")
        except (sqlite3.DatabaseError, ValueError) as err:
            db.close()
            self._refuse(str(err))
        db.execute("PRAGMA synchronous = NORMAL")  # WAL: no fsync per commit, still never half a commit
        if not tables:  # a new file (WAL mode is kept in the file, so only a new one needs switching)
            use_wal(db, timeout)
            with transaction(db):  # two processes creating one file: the second finds the tables made
                for statement in SCHEMA.split(";"):  # not executescript: it would COMMIT our transaction
                    db.execute(statement)
                db.execute(INSERT_META, (FORMAT, VERSION))
        add_columns(db)
        return db

    def _refuse(self, reason: str) -> None:
        backup = self.path.with_name(self.path.name + ".unreadable")
        shutil.copy2(self.path, backup)
        raise StoreError(f"state file {self.path} is unreadable ({reason}); a copy is kept at {backup}. "
                         "Fix the file, or move it away to start a new store.")  # fmt: skip

    def close(self) -> None:
        self.db.close()

    def _lessons(self) -> list[Experience]:
        """All lessons in stored order; their lists decoded in one json.loads (3 a lesson: 0.12 s at 10k)."""
        lists = "'[' || tools || ',' || source_tasks || ',' || source_runs || ']'"
        rows = self.db.execute(f"SELECT {columns(LESSON_FIELDS)}, {lists} FROM lessons ORDER BY number")
        rows = rows.fetchall()
        decoded = json.loads("[" + ",".join(row[-1] for row in rows) + "]")
        names = LESSON_FIELDS + LIST_FIELDS
        return [
            Experience.from_fields(dict(zip(names, row[:-1] + (*d,), strict=True)))
            for row, d in zip(rows, decoded, strict=True)
        ]

    def load_memory(self, clock: Clock, config: MemoryConfig | None = None) -> Memory:
        """The memory as of the last commit, lessons in the order they were first stored."""
        lessons = self._lessons()
        self._remember(lessons)
        return Memory(clock, config, lessons)

    def completed_tasks(self) -> list[CompletedTask]:
        """The committed tasks in order; ``len(...)`` is how many a resumed run skips."""
        rows = self.db.execute("SELECT number, task_id, result FROM tasks ORDER BY number")
        return [CompletedTask(n, task_id, None if r is None else json.loads(r)) for n, task_id, r in rows]

    def runs(self) -> list[tuple[list[LogRecord], RunSummary]]:
        """The log, run by run, in the order it was committed: what ``append_run`` was given."""
        steps: dict[int, list[LogRecord]] = {}
        for run, *values in self.db.execute(f"SELECT run, {columns(STEP_FIELDS)} FROM steps ORDER BY number"):
            steps.setdefault(run, []).append(LogRecord(*values))
        result, rows = [], self.db.execute(f"SELECT number, {columns(RUN_FIELDS)} FROM runs ORDER BY number")
        for number, *values in rows:
            data = dict(zip(RUN_FIELDS, values, strict=True))
            data |= {"answer": None if data["answer"] is None else json.loads(data["answer"])}
            correct = None if data["correct"] is None else bool(data["correct"])  # None: not graded
            result.append((steps.get(number, []), RunSummary(**data | {"correct": correct})))
        return result

    def commit_task(
        self,
        lessons: Iterable[Experience],
        *,
        task_id: str,
        runs: Sequence[tuple[Sequence[LogRecord], RunSummary]] = (),
        result: object = None,
    ) -> int:
        """Everything one finished task produced, in one transaction; returns the task's number (1, 2, ...).
        ``lessons``: ``memory.take_changed()`` (the same cost at 100 or 100k lessons), or the whole memory
        (each compared, ~1 µs a lesson); those changed since this store last read or wrote them are written.
        ``runs``: ``log_run(trace, run_id)`` pairs. ``result``: any JSON, for ``completed_tasks``."""
        blob = None if result is None else json.dumps(result, ensure_ascii=False)
        run_rows = [(run_row(summary), [asdict(r) for r in records]) for records, summary in runs]
        changed = self._changed(lessons)
        with transaction(self.db):
            number = self.db.execute("SELECT COALESCE(MAX(number), 0) + 1 FROM tasks").fetchone()[0]
            self.db.execute("INSERT INTO tasks VALUES (?, ?, ?)", (number, task_id, blob))
            self._write_lessons(changed, number)
            for summary, records in run_rows:
                run = self.db.execute(INSERT_RUN, summary | {"task": number}).lastrowid
                self.db.executemany(INSERT_STEP, [record | {"run": run} for record in records])
        self._remember(changed)
        return number

    def save_lessons(self, lessons: Iterable[Experience]) -> int:
        """Write the changed lessons in one transaction, outside any task; returns how many."""
        changed = self._changed(lessons)
        with transaction(self.db):
            self._write_lessons(changed, None)
        self._remember(changed)
        return len(changed)

    def update(self, clock: Clock, change: Callable[[Memory], object], config: MemoryConfig | None = None):
        """Lock, load the latest lessons, apply ``change``, write what changed; returns ``change``'s value.
        The safe read-modify-write when several processes change the same lessons."""
        with transaction(self.db):
            memory = Memory(clock, config, self._lessons())
            self._remember(memory.experiences.values())
            value = change(memory)
            changed = self._changed(memory.experiences.values())
            self._write_lessons(changed, None)
        self._remember(changed)
        return value

    def import_memory_file(self, path: str | Path) -> int:
        """Add a ``MemoryFile``'s lessons (same id: replaced); returns how many were new or changed."""
        return self.save_lessons(MemoryFile(path).load(clock=lambda: None).experiences.values())

    def export(self, directory: str | Path, clock: Clock, config: MemoryConfig | None = None) -> list[Path]:
        """Write journal.md, memory.json (loads with ``MemoryFile``) and log.jsonl (``load_log``)."""
        Path(directory).mkdir(parents=True, exist_ok=True)
        memory = Memory(clock, config, self._lessons())
        paths = [Path(directory, name) for name in ("journal.md", "memory.json", "log.jsonl")]
        paths[0].write_text(journal(memory), encoding="utf-8")
        data = memory_file.file_data(memory.experiences.values())
        paths[1].write_text(json.dumps(data, indent=1, ensure_ascii=False), encoding="utf-8")
        paths[2].write_text("")  # append_run appends
        for records, summary in self.runs():
            append_run(paths[2], records, summary)
        return paths

    def _changed(self, lessons: Iterable[Experience]) -> list[Experience]:
        """The lessons whose fields differ from what this store last read or wrote (~1 µs a lesson)."""
        return [e for e in lessons if self._written.get(e.id) != lesson_key(e)]

    def _remember(self, lessons: Iterable[Experience]) -> None:
        for e in lessons:  # copy the lists: Memory appends to them in place
            self._written[e.id] = tuple([v.copy() if type(v) is list else v for v in lesson_key(e)])

    def _write_lessons(self, lessons: list[Experience], task: int | None) -> None:
        rows = [{n: getattr(e, n) for n in LESSON_FIELDS} for e in lessons]
        rows = [row | {n: json.dumps(row[n], ensure_ascii=False) for n in LIST_FIELDS} for row in rows]
        self.db.executemany(UPSERT_LESSON, rows)
        self.db.executemany(INSERT_HISTORY, [row | {"task": task} for row in rows])


def add_columns(db: sqlite3.Connection) -> None:
    """Lesson fields newer than the file (votes_up, votes_down) become columns, NULL in old rows (counts)."""
    with transaction(db):
        have = {row[1] for row in db.execute("PRAGMA table_info(lessons)")}
        for name in [n for n in LESSON_FIELDS if n not in have]:
            db.execute(f'ALTER TABLE lessons ADD COLUMN "{name}"')


def use_wal(db: sqlite3.Connection, timeout: float) -> None:
    """Switch to WAL. This pragma fails at once, without waiting on the busy timeout, while another
    process has the file open: two processes creating one store retry here."""
    deadline = time.monotonic() + timeout
    while db.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
        try:
            db.execute("PRAGMA journal_mode = WAL")
        except sqlite3.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.01)


@contextmanager
def transaction(db: sqlite3.Connection) -> Iterator[None]:
    """BEGIN IMMEDIATE (the write lock, waiting up to the busy timeout); COMMIT, or ROLLBACK on any error."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def run_row(summary: RunSummary) -> dict:
    answer = None if summary.answer is None else json.dumps(summary.answer, ensure_ascii=False)
    return asdict(summary) | {"answer": answer}
