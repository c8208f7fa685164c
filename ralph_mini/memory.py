"""Long-term experience memory: guarded writes, decay, expiry, keyword retrieval (notebook 04).

The seed article's hardest lesson was *memory pollution*: a few lessons from a special case, retrieved
for an ordinary task, made the agent worse. So every write passes guards, and every read is weighted:

- **generalization filter**: a rule naming one instance (an order, a customer, an amount, a time) is
  rejected (``lesson_guards.py``); ``generalization_confidence`` scores how general it has proved;
- **write threshold** (the slow loop): a rule is a *candidate* until proposed in ``confirm_threshold``
  separate tasks, or one run shows it alone saves ``calls_saved_threshold`` calls, or it was reflected
  from an answer the grader rejected (a wrong answer costs a customer; a wasted call can wait for a
  second task to confirm the lesson); only *active* rules are retrieved;
- **one row per task type and rule**: a lesson is learned on a task type and serves that type only; the
  same lesson in another wording or order, or a near duplicate, strengthens the one experience of that
  type instead of adding a row (``rule_forms.py``), and the same rule learned on two types is two rows,
  each judged by its own votes, so one type's evidence never flips the other's;
- **votes** (``votes.py``): a run votes on an injected rule only if its whole trigger held; down for
  calls wasted on a tool the rule sent it to, or for a wrong answer it could have caused. Votes decay
  by votes (Generative Agents' recency, ExpeL's up/down-votes); with ``max_failures`` failures and more
  recent down- than up-votes a rule is *removed*;
- **contradiction**: a rule that becomes active, or is confirmed by a new task or validated by a run
  while active, marks *invalid* every active rule of its task type it contradicts (the same trigger and an opposite action,
  or a wider rule it is a counterexample to: ``rule_forms.contradiction``); so does a world that stops
  offering the tool a rule sends the agent to (``valid_from`` / ``invalid_from``, as Zep does);
- **decay and expiry**: weight = confidence x 0.5 ** (days since last hit / half-life), halved again
  once stale (not hit for two weeks), and *expired* past ``expire_after_days``.

Nothing is deleted: removed, invalid and expired experiences keep their status and reason. Time is an
injected clock (``clock.py``); an explicit ``sweep()`` flags expiry, never a read. Memory knows no agent
steps: the loop tells it which tags a run revealed (``log.run_tags``).

The record itself (``Experience``) and the settings (``MemoryConfig``) are in ``experience.py``.

Left out on purpose: the file (``memory_file.py``), vector search (``retrieval.py``) and deciding
*when* to reflect (``loop.py``).
"""

import hashlib
from collections.abc import Collection, Iterable
from datetime import datetime, timedelta

from ralph_mini.clock import Clock
from ralph_mini.experience import NO_DECAY, Experience, MemoryConfig, generalization_confidence
from ralph_mini.lesson_guards import instance_details
from ralph_mini.rule_forms import canonical, contradiction, normalize_wording, same_lesson
from ralph_mini.rules import Rule, RuleSyntaxError, parse_rule
from ralph_mini.votes import decayed, judge, sent_to, trigger_tag

__all__ = [
    "NO_DECAY",
    "Experience",
    "Memory",
    "MemoryConfig",
    "decay_factor",
    "days_since",
    "generalization_confidence",
]


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
        task_type: str,
        calls_saved: int = 0,
        failure_reason: str = "",
        rejected: bool = False,
    ) -> tuple[str, Experience | None]:
        """Offer a rule learned on a task of ``task_type``. Returns (decision, experience); the decision
        says what happened."""
        details = instance_details(rule_text)
        if details:
            return f"rejected: names {', '.join(details)}; rules must hold for every task", None
        try:
            rule = canonical(parse_rule(normalize_wording(rule_text)))
        except RuleSyntaxError:
            try:  # the error message of the text as written, not of its normalized form
                parse_rule(rule_text)
            except RuleSyntaxError as err:
                return f"rejected: {err}", None
            raise
        now = self.clock().isoformat(timespec="minutes")
        key = lesson_key(task_type, rule)
        experience = self.experiences.get(key) or self.equivalent(rule, task_type)
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
        fresh = task_id not in experience.source_tasks
        if fresh:
            experience.confirmations += 1
            experience.source_tasks.append(task_id)
        experience.source_runs.append(run_id)
        experience.calls_saved = max(experience.calls_saved, calls_saved)
        return self._promote(experience, now, fresh, rejected), experience

    def equivalent(self, rule: Rule, task_type: str) -> Experience | None:
        """The experience of ``task_type`` holding the same lesson as ``rule`` in other words: the same
        canonical rule (a file written before canonical forms) or a near duplicate (``near_duplicate``)."""
        tag = trigger_tag(rule)  # cheap first: most rows differ here
        same = (
            e
            for e in self.experiences.values()
            if e.task_type == task_type and e.trigger == tag and same_lesson(e.rule, rule)
        )
        return next(same, None)

    def _promote(self, experience: Experience, now: str, fresh: bool = True, rejected: bool = False) -> str:
        if experience.status == "removed":
            return "kept out: removed earlier (" + experience.status_reason + ")"
        confirmed = experience.confirmations >= self.config.confirm_threshold
        saves = experience.calls_saved >= self.config.calls_saved_threshold
        fixes = rejected and self.config.write_after_rejection
        if experience.status in ("candidate", "expired", "invalid") and (confirmed or saves or fixes):
            experience.status, experience.last_hit_at = "active", now
            experience.valid_from, experience.invalid_from = now, None
            why = f"confirmed in {experience.confirmations} tasks" if confirmed else "saves calls alone"
            why = why if confirmed or saves else "learned from a rejected answer"
            experience.status_reason = why
            return "; ".join([f"written: {why}", *self._invalidate_contradicted(experience, now)])
        if experience.status == "active":  # a new task confirming it is new evidence against its rivals
            rivals = self._invalidate_contradicted(experience, now) if fresh else []
            return "; ".join([f"merged: {experience.confirmations} confirming tasks", *rivals])
        if experience.status == "invalid":
            return f"kept invalid: {experience.status_reason}"
        return f"candidate: {experience.confirmations}/{self.config.confirm_threshold} confirmations"

    def _invalidate_contradicted(self, new: Experience, now: str) -> list[str]:
        """Mark every active rule of its task type the newly active ``new`` contradicts invalid from
        ``now``, with why. Its confirmations restart at 0: only new tasks confirming it bring it back."""
        rule, notes = parse_rule(new.rule), []
        for old in [e for e in self.active() if e is not new and e.task_type == new.task_type]:
            if why := contradiction(rule, parse_rule(old.rule)):
                old.status, old.invalid_from, old.confirmations, old.calls_saved = "invalid", now, 0, 0
                old.status_reason = f"contradicted by '{new.rule}' ({why})"
                notes.append(f"invalidated: {old.rule}")
        return notes

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
        self,
        used: Iterable[Experience],
        revealed: Collection[str],
        correct: bool,
        wasted: Collection[str] = (),
        offered: Collection[str] | None = None,
    ) -> list[str]:
        """Vote on the injected rules whose whole trigger held; remove those the recent votes condemn.

        ``correct`` is the grader's verdict on the run, ``revealed`` the tags the run showed
        (``log.run_tags``), ``wasted`` the tool of each wasted call (``waste.run_waste``),
        ``offered`` the names of the tools the run had (None: not known).
        Down for wasted calls to a tool it sent the agent to, or one not offered, or for a wrong answer it
        could have caused (it said answer, or skip a tool the run did not call): ``votes.judge``."""
        notes, now = [], self.clock().isoformat(timespec="minutes")
        for e in used:
            vote = judge(e.rule, e.trigger, revealed, wasted, correct, offered)
            if vote is None:
                continue
            up, why = vote
            e.votes_up, e.votes_down = decayed(e.votes_up, e.votes_down, up, self.config.vote_half_life)
            if up:  # a rule proving itself now is evidence against the wider rules it contradicts
                e.validations += 1
                notes += self._invalidate_contradicted(e, now) if e.status == "active" else []
                continue
            e.failures += 1
            notes.append(f"down-voted: {e.rule} ({e.failures} failures{'; ' + why if why else ''})")
            losing = e.failures >= self.config.max_failures and e.votes_down > e.votes_up
            if losing and e.status == "active":
                e.status, e.invalid_from = "removed", now
                e.status_reason = (
                    f"{e.failures} failures with it in play; recent votes "
                    f"{e.votes_down:.1f} down against {e.votes_up:.1f} up"
                )
                notes.append(f"removed: {e.rule}")
        return notes

    def invalidate_unoffered(self, offered: Collection[str], task_type: str) -> list[str]:
        """A tool the world no longer offers makes every active rule of ``task_type`` that sends the agent
        to it false from now (``invalid_from``, kept with why); a new task confirming it brings it back."""
        notes, now = [], self.clock().isoformat(timespec="minutes")
        for e in [e for e in self.active() if e.task_type == task_type]:
            try:
                missing = sorted(sent_to(parse_rule(e.rule)) - set(offered))
            except RuleSyntaxError:
                continue
            if missing:
                e.status, e.invalid_from, e.confirmations, e.calls_saved = "invalid", now, 0, 0
                e.status_reason = f"{', '.join(missing)} no longer offered"
                notes.append(f"invalidated: {e.rule} ({e.status_reason})")
        return notes

    def active(self) -> list[Experience]:
        return [e for e in self.experiences.values() if e.status == "active"]

    def live(self) -> list[Experience]:
        """Active and not past expiry: what retrieval may return, even before a sweep flags it."""
        now = self.clock()
        return [e for e in self.active() if days_since(e.last_hit_at, now) <= self.config.expire_after_days]


def lesson_key(task_type: str, rule: Rule) -> str:
    """A lesson's id: a hash of its task type and canonical rule, so each type has its own row."""
    return hashlib.sha256(f"{task_type}|{rule}".encode()).hexdigest()[:12]


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
