"""Long-term experience memory: guarded writes, decay, expiry, keyword retrieval (notebook 04).

The seed article's hardest lesson was *memory pollution*: a few lessons from a special case, retrieved
for an ordinary task, made the agent worse. So every write passes guards, and every read is weighted:

- **generalization filter**: a rule naming an order id, customer, amount, date or transaction is
  rejected before anything else (``lesson_guards.py``); ``generalization_confidence`` scores how
  general a rule has proved;
- **write threshold** (the slow loop): a rule is only a *candidate* until it has been proposed in
  ``confirm_threshold`` separate tasks, or until one run shows it alone saves ``calls_saved_threshold``
  calls; only *active* rules are retrieved;
- **merge**: the same rule proposed twice is one experience with its counts added;
- **down-votes**: a run that used a rule (its trigger fired) and got the answer wrong counts against
  it; with ``max_failures`` failures, more than its successes, it is *removed*;
- **decay and expiry**: weight = confidence x 0.5 ** (days since last hit / half-life), halved again
  once stale (not hit for two weeks), and *expired* past ``expire_after_days``.

Nothing is deleted: removed and expired experiences stay with their status and reason. Time is an
injected clock (``clock.py``); expiry is flagged by an explicit ``sweep()``, never as a side effect of
a read. Memory knows no agent steps: the loop tells it which tags a run revealed (``log.run_tags``).

Left out on purpose: the file (``memory_file.py``), vector search (``retrieval.py``) and deciding
*when* to reflect (``loop.py``).
"""

import hashlib
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from ralph_mini.clock import Clock
from ralph_mini.lesson_guards import instance_details
from ralph_mini.rules import Rule, RuleSyntaxError, parse_rule


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


def trigger_fired(experience: Experience, revealed: Collection[str]) -> bool:
    """Did the situation the rule is about occur in this run? (credit goes only to rules in play)

    ``revealed`` is what the run showed, as tags (``log.run_tags``): {'any', 'status:pending', ...}.
    """
    return experience.trigger == "any" or experience.trigger in revealed


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
        days = days_since(experience.last_hit_at, now or self.clock())
        return experience.confidence * decay_factor(days, self.config)

    def sweep(self) -> list[Experience]:
        """Flag active experiences past expiry as expired (kept in the file). Returns those flagged."""
        now = self.clock()
        flagged = []
        for experience in self.experiences.values():
            days = days_since(experience.last_hit_at, now)
            if experience.status == "active" and days > self.config.expire_after_days:
                experience.status = "expired"
                experience.status_reason = f"not hit for {days:.0f} days"
                flagged.append(experience)
        return flagged

    def retrieve(self, tags: set[str], top_k: int = 3, exclude: Iterable[str] = ()) -> list[Experience]:
        """Best active experiences by tag match x weight. Tags: {'any'} at planning time, or a step's
        tags mid-run; an experience matches when its trigger tag is among them. A pure read: an
        experience past expiry weighs 0, whether or not ``sweep`` has flagged it yet."""
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

    def record_outcome(
        self, used: Iterable[Experience], revealed: Collection[str], correct: bool
    ) -> list[str]:
        """Credit or blame the injected rules whose trigger fired; remove past ``max_failures``.
        ``correct`` is the grader's verdict on the run, ``revealed`` the tags the run showed."""
        notes = []
        for experience in used:
            if not trigger_fired(experience, revealed):
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

    def live(self) -> list[Experience]:
        """Active and not past expiry: what retrieval may return, even before a sweep flags it."""
        now = self.clock()
        return [e for e in self.active() if days_since(e.last_hit_at, now) <= self.config.expire_after_days]


def decay_factor(days: float, config: MemoryConfig) -> float:
    """0.5 ** (days / half-life), x stale_factor past stale_after_days, 0 past expire_after_days.

    half-life 7, stale after 14 (factor 0.5), expiry 30: day 0 -> 1.0, day 7 -> 0.5,
    day 14 -> 0.25, day 15 -> 0.114, day 31 -> 0.0
    """
    if days > config.expire_after_days:
        return 0.0
    weight = 0.5 ** (max(days, 0.0) / config.half_life_days)
    return weight * config.stale_factor if days > config.stale_after_days else weight


def days_since(moment: str, now: datetime) -> float:
    """Days from an ISO time stamp to ``now``: '2025-03-03T12:00', 2025-03-10 12:00 -> 7.0."""
    return (now - datetime.fromisoformat(moment)) / timedelta(days=1)
