"""The memory on disk: one JSON file written safely, and the work journal (notebooks 04 and 07).

``MemoryFile`` keeps every experience in one JSON file. Writes go to a temporary file that replaces the
real one (``os.replace`` is atomic) under a ``filelock`` lock, so a crash leaves the old or the new
state and two kernels never interleave. ``journal`` renders a memory as the markdown "work journal"
the seed's author read every month.

Left out on purpose: a database and history per experience (a later lesson's store), and any merge of
two diverged files.
"""

import json
import os
import shutil
from collections.abc import Callable, Iterable
from dataclasses import fields
from pathlib import Path

from filelock import FileLock

from ralph_mini.clock import Clock
from ralph_mini.memory import Experience, Memory, MemoryConfig, days_since

FORMAT, VERSION = "ralph_mini.memory", 1


class MemoryFileError(RuntimeError):
    """The memory file cannot be read; the message says where a copy was kept and what to do."""


class MemoryFile:
    """One JSON file: ``{"format": "ralph_mini.memory", "version": 1, "experiences": [...]}``.

    Writes go to a temporary file that replaces the real one (``os.replace`` is atomic), under a
    ``filelock`` lock, so a crash leaves the old or the new state and two kernels never interleave.
    ``update`` is the safe read-modify-write: lock, reload, change, write. A file that cannot be read
    (corrupt, truncated, another version) raises ``MemoryFileError`` and is copied to
    ``<name>.unreadable``; nothing is ever reset to empty behind your back.
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.lock = FileLock(str(self.path) + ".lock", timeout=30)

    def load(self, clock: Clock, config: MemoryConfig | None = None) -> Memory:
        with self.lock:
            return Memory(clock, config, self._read())

    def save(self, memory: Memory) -> None:
        with self.lock:
            self._write(memory)

    def update(self, clock: Clock, change: Callable[[Memory], object], config: MemoryConfig | None = None):
        """Lock, load the latest state, apply ``change``, write; returns what ``change`` returned."""
        with self.lock:
            memory = Memory(clock, config, self._read())
            result = change(memory)
            self._write(memory)
            return result

    def _read(self) -> list[Experience]:
        if not self.path.exists():
            return []
        try:
            return experiences_from(json.loads(self.path.read_text(encoding="utf-8")))
        except (ValueError, RecursionError) as err:  # RecursionError: JSON nested ~1000 deep
            backup = self.path.with_name(self.path.name + ".unreadable")
            shutil.copy2(self.path, backup)
            raise MemoryFileError(
                f"memory file {self.path} is unreadable ({err}); a copy is kept at {backup}. "
                f"Fix the file, or move it away to start with an empty memory."
            ) from err

    def _write(self, memory: Memory) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_name(self.path.name + ".tmp")
        with temporary.open("w", encoding="utf-8") as file:
            json.dump(file_data(memory.experiences.values()), file, indent=1, ensure_ascii=False)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, self.path)


def file_data(experiences: Iterable[Experience]) -> dict:
    """What a memory file holds, for ``json``: what ``MemoryFile`` writes and ``Store.export`` exports.
    Each lesson's fields as they are: ``dataclasses.asdict`` would deep-copy every list first, a third
    of an ``update``'s time (``json`` reads the lists, it never keeps them)."""
    names = [f.name for f in fields(Experience)]
    rows = [{name: getattr(e, name) for name in names} for e in experiences]
    return {"format": FORMAT, "version": VERSION, "experiences": rows}


def experiences_from(data: object) -> list[Experience]:
    """The experiences in a parsed memory file, or ValueError saying what is wrong with it.

    {"format": "ralph_mini.memory", "version": 1, "experiences": [{...}]} -> [Experience(...)];
    [] -> ValueError('the file holds a JSON list, not an object with format, version, experiences').
    Unknown keys in an experience are ignored, so a file with extra notes still loads.
    """
    if not isinstance(data, dict):
        kind = type(data).__name__
        raise ValueError(f"the file holds a JSON {kind}, not an object with format, version, experiences")
    if data.get("format") != FORMAT or data.get("version") != VERSION:
        raise ValueError(f"format {data.get('format')!r} version {data.get('version')!r}, expected {VERSION}")
    rows = data.get("experiences")
    if not isinstance(rows, list):
        raise ValueError(f"'experiences' is {'missing' if rows is None else type(rows).__name__}, not a list")
    names = {f.name for f in fields(Experience)}
    experiences = []
    for number, row in enumerate(rows, 1):
        try:
            experiences.append(Experience.from_fields({k: v for k, v in row.items() if k in names}))
        except (TypeError, AttributeError) as err:  # not an object, or a field missing
            raise ValueError(f"experience {number}: {err}") from err
    return experiences


def journal(memory: Memory, title: str = "Work journal") -> str:
    """All experiences as readable markdown, grouped by status, strongest first. Removed, invalid and
    quarantined lessons stay, with why and since when: memory never deletes silently."""
    now = memory.clock()
    lines = [f"# {title} ({now:%Y-%m-%d})", ""]
    for status in ("active", "probation", "candidate", "expired", "removed", "invalid", "quarantined"):
        group = [e for e in memory.experiences.values() if e.status == status]
        if not group:
            continue
        lines += [f"## {status.capitalize()} ({len(group)})", ""]
        for e in sorted(group, key=lambda x: (-memory.weight(x, now), x.rule)):
            age = days_since(e.last_hit_at, now)
            lines.append(
                f"- **{e.rule}** — weight {memory.weight(e, now):.2f}, confidence {e.confidence:.2f}, "
                f"{e.confirmations} tasks, {e.hits} hits, {e.validations} ok / {e.failures} wrong, "
                f"last hit {age:.0f} days ago"
                + (f"; {e.status_reason}" if e.status_reason else "")
                + (f"; invalid from {e.invalid_from}" if e.invalid_from else "")
            )
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"
