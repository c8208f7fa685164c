"""Long-term experience memory: guarded writes, decay, expiry, keyword retrieval (notebook 04).

The seed article's hardest lesson was *memory pollution*: a few lessons from a special case, retrieved
for an ordinary task, made the agent worse. So every write passes guards, and every read is weighted:

- **generalization filter**: a rule naming an order id, customer, amount, date or transaction is
  rejected before anything else; ``generalization_confidence`` scores how general a rule has proved;
- **write threshold** (the slow loop): a rule is only a *candidate* until it has been proposed in
  ``confirm_threshold`` separate tasks, or until one run shows it alone saves ``calls_saved_threshold``
  calls; only *active* rules are retrieved;
- **merge**: the same rule proposed twice is one experience with its counts added;
- **down-votes**: a run that used a rule (its trigger fired) and got the answer wrong counts against
  it; with ``max_failures`` failures, more than its successes, it is *removed*;
- **decay and expiry**: weight = confidence x 0.5 ** (days since last hit / half-life), halved again
  once stale (not hit for two weeks), and *expired* past ``expire_after_days``.

Nothing is deleted: removed and expired experiences stay in the file with their status and reason.
Time is an injected clock. ``MemoryFile`` stores everything in one JSON file, written atomically under
a file lock, and ``journal`` renders it as the monthly markdown "work journal" the seed's author read.

Left out on purpose: vector search (``retrieval.py``) and deciding *when* to reflect (``loop.py``).
"""

import hashlib
import json
import os
import re
import shutil
from collections.abc import Callable, Collection, Iterable
from dataclasses import asdict, dataclass, field, fields
from datetime import datetime, timedelta
from pathlib import Path

from filelock import FileLock

from ralph_mini.react import Step
from ralph_mini.rules import Rule, RuleSyntaxError, parse_rule
from ralph_mini.tools import read_fields

Clock = Callable[[], datetime]
FORMAT, VERSION = "ralph_mini.memory", 1
INSTANCE_PATTERNS = {
    "order id": r"\b[A-Z]\d{3}\b",
    "customer": r"\bCUST-\d+\b",
    "transaction": r"\bTXN-\d+\b",
    "amount": r"\b\d+\.\d+\b",
    "date": r"\b\d{4}-\d\d-\d\d\b",
}


@dataclass(frozen=True)
class MemoryConfig:
    """Every tunable of the memory, with the seed's values where it gives them."""

    confirm_threshold: int = 2  # write a rule once proposed in this many separate tasks ...
    calls_saved_threshold: int = 2  # ... or once a single run shows it saves this many calls
    half_life_days: float = 7.0  # weight halves every week without a hit
    stale_after_days: float = 14.0  # the seed: not hit for two weeks -> down-weighted
    stale_factor: float = 0.5  # ... by this factor
    expire_after_days: float = 30.0  # not retrieved any more (kept, flagged "expired")
    max_failures: int = 2  # wrong answers with the rule in play before it is removed


@dataclass
class Experience:
    """One lesson: the rule text, its tags, and its track record."""

    id: str
    rule: str  # a micro-prompt, canonical form
    task_type: str
    trigger: str  # tag of the trigger condition, e.g. 'query_local_cache:found', 'status:pending'
    tools: list[str]  # tool combination the rule is about
    result: str  # what the rule is for, e.g. 'saves calls'
    failure_reason: str  # the ineffective step that taught it
    created_at: str
    last_hit_at: str
    confirmations: int = 1  # separate tasks that proposed it
    hits: int = 0  # times injected into a prompt
    validations: int = 0  # runs with its trigger fired that ended correct
    failures: int = 0  # ... that ended wrong
    calls_saved: int = 0  # best single-run saving seen
    status: str = "candidate"  # candidate | active | expired | removed
    status_reason: str = ""
    source_tasks: list[str] = field(default_factory=list)
    source_runs: list[str] = field(default_factory=list)

    @property
    def confidence(self) -> float:
        """How general the rule has proved: n / (n + 1) for n = confirming tasks + validated runs, times
        its track record (validations + 1) / (validations + failures + 1). 1 confirmation -> 0.5."""
        record = (self.validations + 1) / (self.validations + self.failures + 1)
        evidence = self.confirmations + self.validations
        return generalization_confidence(self.rule, evidence) * record


def instance_details(text: str) -> list[str]:
    """What in ``text`` names one instance: 'skip query_database for A123' -> ['order id A123']."""
    found = []
    for label, pattern in INSTANCE_PATTERNS.items():
        found.extend(f"{label} {match}" for match in re.findall(pattern, text))
    return found


def foreign_names(rule: Rule, tools: Collection[str], statuses: Collection[str]) -> list[str]:
    """The names in ``rule`` outside a closed vocabulary of tools and statuses, in rule order.

    With tools ('query_local_cache', 'query_database') and statuses ('paid', 'pending'):
    'when status is urgent: call refund_order' -> ['status urgent', 'tool refund_order'].
    The grammar fixes every other word of a rule, so a rule with no foreign name carries no free text.
    """
    found = [f"status {rule.trigger.status}"] if rule.trigger.status not in (None, *statuses) else []
    named = [rule.trigger.tool] + [action.tool for action in rule.actions]
    found += [f"tool {name}" for name in named if name is not None and name not in tools]
    return list(dict.fromkeys(found))


def generalization_confidence(rule: str, evidence: int) -> float:
    """0 for a rule naming an instance; else n / (n + 1) for n pieces of evidence (1 -> 0.5, 3 -> 0.75)."""
    if instance_details(rule):
        return 0.0
    return evidence / (evidence + 1)


def trigger_tag(rule: Rule) -> str:
    trigger = rule.trigger
    if trigger.kind == "any":
        return "any"
    if trigger.kind in ("finds", "nothing"):
        return f"{trigger.tool}:{'found' if trigger.kind == 'finds' else 'nothing'}"
    return f"status:{trigger.status}"


def step_tags(step: Step) -> set[str]:
    """What a step revealed, as tags: {'query_local_cache:found', 'status:pending'}."""
    if step.status == "not_found":
        return {f"{step.tool}:nothing"}
    if step.status != "ok":
        return set()
    status = read_fields(step.observation).get("status")
    return {f"{step.tool}:found"} | ({f"status:{status}"} if status else set())


def trigger_fired(experience: Experience, steps: Iterable[Step]) -> bool:
    """Did the situation the rule is about occur in this run? (credit goes only to rules in play)"""
    if experience.trigger == "any":
        return True
    return any(experience.trigger in step_tags(step) for step in steps)


class Memory:
    """All experiences, and the guarded operations on them. Pure logic: time comes from ``clock``."""

    def __init__(self, clock: Clock, config: MemoryConfig | None = None, experiences: Iterable = ()):
        self.clock = clock
        self.config = config or MemoryConfig()
        self.experiences: dict[str, Experience] = {e.id: e for e in experiences}

    def propose(
        self,
        rule_text: str,
        *,
        task_id: str,
        run_id: str,
        calls_saved: int = 0,
        failure_reason: str = "",
        task_type: str = "order_status",
    ) -> tuple[str, Experience | None]:
        """Offer a rule from a reflection. Returns (decision, experience); decision says what happened."""
        details = instance_details(rule_text)
        if details:
            return f"rejected: names {', '.join(details)}; rules must hold for every order", None
        try:
            rule = parse_rule(rule_text)
        except RuleSyntaxError as err:
            return f"rejected: {err}", None
        now = self.clock().isoformat(timespec="minutes")
        key = hashlib.sha256(str(rule).encode()).hexdigest()[:12]
        experience = self.experiences.get(key)
        if experience is None:
            experience = Experience(
                id=key,
                rule=str(rule),
                task_type=task_type,
                trigger=trigger_tag(rule),
                tools=sorted(rule.tools()),
                result="saves calls" if any(a.verb == "skip" for a in rule.actions) else "steers tool choice",
                failure_reason=failure_reason,
                created_at=now,
                last_hit_at=now,
                confirmations=0,
            )
            self.experiences[key] = experience
        if task_id not in experience.source_tasks:
            experience.confirmations += 1
            experience.source_tasks.append(task_id)
        experience.source_runs.append(run_id)
        experience.calls_saved = max(experience.calls_saved, calls_saved)
        return self._promote(experience, now), experience

    def _promote(self, experience: Experience, now: str) -> str:
        if experience.status == "removed":
            return "kept out: removed earlier (" + experience.status_reason + ")"
        confirmed = experience.confirmations >= self.config.confirm_threshold
        saves = experience.calls_saved >= self.config.calls_saved_threshold
        if experience.status in ("candidate", "expired") and (confirmed or saves):
            experience.status, experience.last_hit_at = "active", now
            why = f"confirmed in {experience.confirmations} tasks" if confirmed else "saves calls alone"
            experience.status_reason = why
            return f"written: {why}"
        if experience.status == "active":
            return f"merged: {experience.confirmations} confirming tasks"
        return f"candidate: {experience.confirmations}/{self.config.confirm_threshold} confirmations"

    def weight(self, experience: Experience, now: datetime | None = None) -> float:
        """Decayed weight; 0 for anything not active or past expiry."""
        if experience.status != "active":
            return 0.0
        days = ((now or self.clock()) - datetime.fromisoformat(experience.last_hit_at)) / timedelta(days=1)
        return experience.confidence * decay_factor(days, self.config)

    def sweep(self) -> list[Experience]:
        """Flag active experiences past expiry as expired (kept in the file). Returns those flagged."""
        now = self.clock()
        flagged = []
        for experience in self.experiences.values():
            days = (now - datetime.fromisoformat(experience.last_hit_at)) / timedelta(days=1)
            if experience.status == "active" and days > self.config.expire_after_days:
                experience.status = "expired"
                experience.status_reason = f"not hit for {days:.0f} days"
                flagged.append(experience)
        return flagged

    def retrieve(self, tags: set[str], top_k: int = 3, exclude: Iterable[str] = ()) -> list[Experience]:
        """Best active experiences by tag match x weight. Tags: {'any'} at planning time, or a step's
        tags mid-run; an experience matches when its trigger tag (or its tools) is among them."""
        self.sweep()
        skip = set(exclude)
        scored = []
        for experience in self.experiences.values():
            if experience.id in skip:
                continue
            match = 1.0 if experience.trigger in tags else 0.0
            score = match * self.weight(experience)
            if score > 0:
                scored.append((score, experience.rule, experience))
        scored.sort(key=lambda item: (-item[0], item[1]))
        return [experience for _, _, experience in scored[:top_k]]

    def record_hits(self, used: Iterable[Experience]) -> None:
        """The rules were injected into a prompt: refresh their clocks."""
        now = self.clock().isoformat(timespec="minutes")
        for experience in used:
            experience.hits += 1
            experience.last_hit_at = now

    def record_outcome(self, used: Iterable[Experience], steps: list[Step], correct: bool) -> list[str]:
        """Credit or blame the injected rules whose trigger fired; remove past ``max_failures``."""
        notes = []
        for experience in used:
            if not trigger_fired(experience, steps):
                continue
            if correct:
                experience.validations += 1
                continue
            experience.failures += 1
            notes.append(f"down-voted: {experience.rule} ({experience.failures} failures)")
            losing = (
                experience.failures >= self.config.max_failures
                and experience.failures > experience.validations
            )
            if losing and experience.status == "active":
                experience.status = "removed"
                experience.status_reason = f"{experience.failures} wrong answers with it in play"
                notes.append(f"removed: {experience.rule}")
        return notes

    def active(self) -> list[Experience]:
        return [e for e in self.experiences.values() if e.status == "active"]


def decay_factor(days: float, config: MemoryConfig) -> float:
    """0.5 ** (days / half-life), x stale_factor past stale_after_days, 0 past expire_after_days.

    half-life 7, stale after 14 (factor 0.5), expiry 30: day 0 -> 1.0, day 7 -> 0.5,
    day 14 -> 0.25, day 15 -> 0.114, day 31 -> 0.0
    """
    if days > config.expire_after_days:
        return 0.0
    weight = 0.5 ** (max(days, 0.0) / config.half_life_days)
    return weight * config.stale_factor if days > config.stale_after_days else weight


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
        data = {
            "format": FORMAT,
            "version": VERSION,
            "experiences": [asdict(e) for e in memory.experiences.values()],
        }
        temporary = self.path.with_name(self.path.name + ".tmp")
        with temporary.open("w", encoding="utf-8") as file:
            json.dump(data, file, indent=1, ensure_ascii=False)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, self.path)


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
            experiences.append(Experience(**{k: v for k, v in row.items() if k in names}))
        except (TypeError, AttributeError) as err:  # not an object, or a field missing
            raise ValueError(f"experience {number}: {err}") from err
    return experiences


def journal(memory: Memory, title: str = "Work journal") -> str:
    """All experiences as readable markdown, grouped by status, strongest first."""
    now = memory.clock()
    lines = [f"# {title} ({now:%Y-%m-%d})", ""]
    for status in ("active", "candidate", "expired", "removed"):
        group = [e for e in memory.experiences.values() if e.status == status]
        if not group:
            continue
        lines += [f"## {status.capitalize()} ({len(group)})", ""]
        for e in sorted(group, key=lambda x: (-memory.weight(x, now), x.rule)):
            age = (now - datetime.fromisoformat(e.last_hit_at)) / timedelta(days=1)
            lines.append(
                f"- **{e.rule}** — weight {memory.weight(e, now):.2f}, confidence {e.confidence:.2f}, "
                f"{e.confirmations} tasks, {e.hits} hits, {e.validations} ok / {e.failures} wrong, "
                f"last hit {age:.0f} days ago" + (f"; {e.status_reason}" if e.status_reason else "")
            )
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


class FakeClock:
    """A clock for notebooks and tests: starts at ``start`` and moves only when told."""

    def __init__(self, start: datetime = datetime(2025, 3, 10, 12, 0)):
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> datetime:
        """clock.advance(days=3) or clock.advance(minutes=5)."""
        self.now += timedelta(**delta)
        return self.now
