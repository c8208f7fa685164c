"""A benchmark run's state on disk, so a killed run can be finished (notebook 07, ``bench --state DIR
--resume``).

Why: a 50-task run with a real model takes an hour; a kernel restart or a ``kill -9`` must not throw it
away, and continuing by hand (an empty history, a memory file saved at some other moment) gives a
different run. ``python -m ralph_mini bench --state runs/NAME`` keeps, in ``runs/NAME``:

- ``settings.json``: the options that decide the results (suite size and seed, model, ablations),
  written before anything else; ``--resume`` with other options is refused, naming them;
- one ``Store`` per agent (``ralph-loop.sqlite``, ``bare-react.sqlite``, ...), committed after every
  task: the Ralph Loop's through ``run_loop(store=...)``, bare ReAct's through ``run_bare`` here;
- when the run ends, a readable export per agent (``ralph-loop/journal.md``, ``memory.json``,
  ``log.jsonl``) for students and diffs.

Without ``--resume`` a directory that already holds anything is refused: a second run must not mix its
tasks into the first one's files.

Left out on purpose: locking the directory against two runs at once (run one bench per directory) and
resuming with other options (start a new directory instead).
"""

import json
import os
import re
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from ralph_mini.clock import Clock, FakeClock
from ralph_mini.history_json import trace_from_json, trace_to_json
from ralph_mini.log import log_run
from ralph_mini.measure import RunRecord, record
from ralph_mini.memory import MemoryConfig
from ralph_mini.model import ChatModel
from ralph_mini.react import run_react
from ralph_mini.store import Store
from ralph_mini.tools import Tool
from ralph_mini.world import Task, grade

SETTINGS = "settings.json"


class StateError(RuntimeError):
    """The state directory cannot be used as asked; the message says why and what to do."""


def slug(name: str) -> str:
    """'Ralph Loop' -> 'ralph-loop', 'no memory threshold' -> 'no-memory-threshold'."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def open_state(
    directory: str | Path, agents: Sequence[str], settings: dict, resume: bool
) -> dict[str, Store]:
    """One store per agent in ``directory``, after checking the directory may be used: empty (or new),
    or, with ``resume``, holding a run started with the same ``settings``."""
    directory = Path(directory)
    if directory.exists() and not directory.is_dir():
        raise StateError(f"state directory {directory} is a file; choose a folder for --state")
    if directory.exists() and any(directory.iterdir()):
        if not resume:
            raise StateError(
                f"state directory {directory} already holds a run ({progress_text(directory)}); "
                f"add --resume to finish it, or choose another --state directory (or delete this one) "
                f"to start over"
            )
        check_settings(directory, settings)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        write_settings(directory, settings)
    except OSError as err:
        raise StateError(f"cannot keep the run's state in {directory} ({err.strerror}); "
                         "choose a folder you can write for --state") from err  # fmt: skip
    return {name: Store(directory / f"{slug(name)}.sqlite") for name in agents}


def check_settings(directory: Path, settings: dict) -> None:
    """Refuse to resume with other options than the run was started with (no file yet: nothing to check,
    the run was killed before it wrote one)."""
    path = directory / SETTINGS
    if not path.exists():
        return
    kept = json.loads(path.read_text(encoding="utf-8"))
    different = [f"{key} {kept.get(key)!r} (now {settings.get(key)!r})" for key in settings
                 if kept.get(key) != settings.get(key)]  # fmt: skip
    if different:
        raise StateError(
            f"state directory {directory} holds a run started with {', '.join(different)}; "
            f"resume it with the options it was started with, or choose another --state directory"
        )


def write_settings(directory: Path, settings: dict) -> None:
    """Write ``settings.json`` whole or not at all (a temporary file renamed over it)."""
    path = directory / SETTINGS
    temporary = path.with_name(SETTINGS + ".tmp")
    temporary.write_text(json.dumps(settings, indent=1, sort_keys=True), encoding="utf-8")
    os.replace(temporary, path)


def progress_text(directory: Path) -> str:
    """'bare-react: 20 tasks done, ralph-loop: 7 tasks done' from the stores in ``directory``."""
    done = []
    for path in sorted(directory.glob("*.sqlite")):
        store = Store(path)
        done.append(f"{path.stem}: {len(store.completed_tasks())} tasks done")
        store.close()
    return ", ".join(done) or "no task done yet"


def tasks_done(directory: str | Path, agent: str) -> int:
    """How many tasks an agent's store in ``directory`` holds (0: none yet). Reads without creating,
    locking or checking anything, so it can watch a bench that is running (notebook 07)."""
    uri = (Path(directory) / f"{slug(agent)}.sqlite").absolute().as_uri() + "?mode=ro"
    try:
        db = sqlite3.connect(uri, uri=True)
        try:
            return db.execute("SELECT COUNT(*) FROM tasks").fetchone()[0]
        finally:
            db.close()
    except sqlite3.Error:  # no file yet, or its tables not made yet
        return 0


def check_resumable(store: Store, tasks: Sequence[Task]) -> int:
    """How many tasks ``store`` holds, after checking they are the first tasks of ``tasks``."""
    done = [task.task_id for task in store.completed_tasks()]
    if done != [task.task_id for task in tasks[: len(done)]]:
        raise StateError(
            f"{store.path} holds tasks {done[:3]}... that are not the first tasks of this suite "
            f"({[task.task_id for task in tasks[:3]]}...); resume with the options the run started with"
        )
    return len(done)


def run_bare(
    tasks: Sequence[Task],
    model: ChatModel,
    tools: Sequence[Tool],
    store: Store,
    progress: Callable[[Iterable], Iterable] | None = None,
) -> list[RunRecord]:
    """Bare ReAct on every task, as ``measure.run_suite``, committing each task (its log and trace) to
    ``store``; the tasks the store already holds are not run again."""
    done = check_resumable(store, tasks)
    stored = store.completed_tasks()
    stored_traces = (
        trace_from_json(t.result["trace"], task) for t, task in zip(stored, tasks[:done], strict=True)
    )
    records = [record(trace) for trace in stored_traces]  # graded here: the store keeps traces, not verdicts
    remaining = tasks[done:]
    for number, task in enumerate(progress(remaining) if progress else remaining, done + 1):
        trace = run_react(task, model, tools)
        correct = grade(task, trace.answer).correct  # graded once: for the log and for the record
        store.commit_task((), task_id=task.task_id, runs=[log_run(trace, f"R{number:03d}", correct)],
                          result={"trace": trace_to_json(trace)})  # fmt: skip
        records.append(record(trace, correct))
    return records


def export_state(store: Store, clock: Clock | None = None, config: MemoryConfig | None = None) -> list[Path]:
    """The readable export of one agent's store, next to it: ``ralph-loop.sqlite`` -> ``ralph-loop/``."""
    return store.export(store.path.with_suffix(""), clock or FakeClock(), config)
