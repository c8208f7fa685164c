"""Long-term experience memory: guarded writes, decay, expiry, keyword retrieval (notebook 04).

The seed article's hardest lesson was *memory pollution*: a few lessons from a special case, retrieved
for an ordinary task, made the agent worse. So every write passes guards, and every read is weighted:

- **generalization filter**: a rule naming one instance (a record, a person, an amount, a time) is
  rejected (``lesson_guards.py``, with the world's ``Vocabulary``); ``confidence`` scores how general
  it has proved;
- **write threshold** (the slow loop): a rule is *active* once proposed in ``confirm_threshold``
  separate tasks (or validated by a run), or one run shows it alone saves ``calls_saved_threshold``
  calls, or it was reflected from an answer the grader rejected (a wrong answer costs a customer);
  until then it is on *probation*: injected at once, ended by its first down-vote, made active by its
  first validated run (``MemoryConfig.probation``; off, it waits unseen as a *candidate*);
- **one row per task type and rule**: a lesson is learned on a task type and serves that type only; the
  same lesson in another wording or order, or a near duplicate, strengthens the one experience of that
  type instead of adding a row (``rule_forms.py``), and the same rule learned on two types is two rows,
  each judged by its own votes, so one type's evidence never flips the other's;
- **votes** (``votes.py``): a run votes on an injected rule only if its whole trigger held; down for
  calls wasted on a tool the rule sent it to, or for a wrong answer it could have caused. A rule is
  judged by what it does now: 2 of its last 3 votes down make it *invalid*, whatever its past (a lag
  that grew, a source gone stale). Votes decay by votes (Generative Agents' recency, ExpeL's up- and
  down-votes); with ``max_failures`` failures and more recent down- than up-votes it is *removed*;
- **contradiction**: a rule that becomes active, or is confirmed by a new task or validated by a run
  while active, marks *invalid* every live rule of its task type it contradicts (the same trigger and
  an opposite action, a wider rule it is a counterexample to, or the same rule with another threshold:
  ``rule_forms.contradiction``); so does a world that stops offering the tool a rule sends the agent to
  (``valid_from`` / ``invalid_from``, as Zep does). A rule on probation contradicts nothing;
- **quarantine** (on load): a lesson that does not parse (an older version's, a real model's) or whose
  last hit is not a time (a hand edit) is kept with its reason, never retrieved: memory never crashes;
- **decay and expiry**: weight = confidence x 0.5 ** (days since last hit / half-life), halved again
  once stale (not hit for two weeks), and *expired* past ``expire_after_days``.

Nothing is deleted: removed, invalid, quarantined and expired experiences keep their status and reason.
Time is an injected clock (``clock.py``); an explicit ``sweep()`` flags expiry, never a read. Memory
knows no agent steps: the loop tells it which tags a run revealed (``log.run_tags``). The record
(``Experience``), the settings (``MemoryConfig``) and the ledger of changes are in ``experience.py``.
Left out on purpose: the file (``memory_file.py``), vectors (``retrieval.py``), when to reflect (``loop.py``).
"""

from collections.abc import Collection, Iterable, Mapping
from datetime import datetime

from ralph_mini.clock import Clock
from ralph_mini.experience import (
    LIVE,
    NO_DECAY,
    Experience,
    LessonChanges,
    MemoryConfig,
    days_since,
    decay_factor,
    generalization_confidence,
    lesson_key,
)
from ralph_mini.lesson_dict import LessonDict
from ralph_mini.lesson_guards import Vocabulary, instance_details
from ralph_mini.live_filing import LiveFiling, live_in_date
from ralph_mini.rule_forms import (
    Shelves,
    canonical,
    contradiction,
    near_duplicate,
    normalize_wording,
    outdated,
    replace_minutes,
)
from ralph_mini.rules import Rule, RuleSyntaxError, Trigger, parse_rule
from ralph_mini.votes import apply_vote, judge, trigger_tag

__all__ = ["NO_DECAY", "Experience", "Memory", "MemoryConfig", "decay_factor", "days_since"]
__all__ += ["generalization_confidence"]


class Memory:
    """All experiences, and the guarded operations on them. Pure logic: time comes from ``clock``."""

    def __init__(self, clock: Clock, config: MemoryConfig | None = None, experiences: Iterable = ()):
        self.clock = clock
        self.config = config or MemoryConfig()
        self.experiences = {e.id: e for e in experiences}  # a LessonDict (``experiences``)
        self.changes = LessonChanges(self.experiences)  # who changed, by any hand (see take_changed)
        # quarantined on load: as each lesson joined the ledger, ``Experience.watch`` checked it
        self.quarantined = [e for e in self.experiences.values() if e.status == "quarantined"]
        self.changed: dict[str, Experience] = {e.id: e for e in self.quarantined}  # see take_changed
        self.shelves = Shelves()  # where a rule's duplicates and rivals can be (rule_forms.Shelves)
        self.filing = LiveFiling()  # the live lessons by task type and trigger, and by last hit

    @property
    def experiences(self) -> LessonDict:
        """Every lesson, by key. Memory keeps them in a dict of its own (one given is copied into it) that
        counts what a hand rewrites, so its readers see a lesson swapped in as they see one added."""
        return self._experiences

    @experiences.setter
    def experiences(self, lessons: Mapping[str, Experience]) -> None:
        self._experiences = lessons if isinstance(lessons, LessonDict) else LessonDict(lessons)

    def propose(self, rule_text: str, *, task_id: str, run_id: str, task_type: str, calls_saved: int = 0,
                failure_reason: str = "", rejected: bool = False,
                vocabulary: Vocabulary | None = None) -> tuple[str, Experience | None]:  # fmt: skip
        """Offer a rule learned on a task of ``task_type``. Returns (decision, experience); the decision
        says what happened. ``vocabulary``: the world's words, which the instance filter must not take
        for names or ids (and without which it cannot judge a word in a tool's slot)."""
        details = instance_details(rule_text, **(vocabulary.filter_arguments() if vocabulary else {}))
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
                id=key, rule=str(rule), task_type=task_type, trigger=trigger_tag(rule),
                tools=sorted(rule.tools()), failure_reason=failure_reason, created_at=now, last_hit_at=now,
                result="saves calls" if any(a.verb == "skip" for a in rule.actions) else "steers tool choice",
                confirmations=0,
            )  # fmt: skip
            self.experiences[key] = experience
            self.shelves.add(self.experiences, experience)
            self.changes.added(self.experiences, experience)
        self.changed[experience.id] = experience
        fresh = task_id not in experience.source_tasks
        if fresh:
            experience.confirmations += 1
            experience.source_tasks.append(task_id)
        experience.source_runs.append(run_id)
        experience.calls_saved = max(experience.calls_saved, calls_saved)
        return self._promote(experience, now, fresh, rejected), experience

    def equivalent(self, rule: Rule, task_type: str) -> Experience | None:
        """The experience of ``task_type`` holding the same lesson as the canonical ``rule`` in other
        words: the same canonical rule (a file written before canonical forms) or a near duplicate
        (``near_duplicate``). Only the lessons of its task type and trigger family are read."""
        tag, filed = trigger_tag(rule), self.shelves.of(self.experiences, task_type, rule.trigger)
        same = (
            e for _, e, _, form in filed if e.trigger == tag and (form == rule or near_duplicate(form, rule))
        )
        return next(same, None)

    def _promote(self, experience: Experience, now: str, fresh: bool = True, rejected: bool = False) -> str:
        if experience.status in ("removed", "quarantined"):
            return f"kept out: {experience.status} earlier ({experience.status_reason})"
        confirmed = experience.confirmations >= self.config.confirm_threshold
        saves = experience.calls_saved >= self.config.calls_saved_threshold
        fixes = rejected and self.config.write_after_rejection
        waiting = ("candidate", "probation", "expired", "invalid")
        if experience.status in waiting and (confirmed or saves or fixes):
            experience.status, experience.last_hit_at, experience.wrong_answers = "active", now, 0
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
        if experience.status == "candidate" and self.config.probation:
            experience.status, experience.status_reason = "probation", "proposed once: injected, votes decide"
            return "on probation: injected from now, votes decide"
        progress = f"{experience.confirmations}/{self.config.confirm_threshold} confirmations"
        return f"{experience.status}: {progress}"

    def _invalidate_contradicted(self, new: Experience, now: str) -> list[str]:
        """Mark every live rule of its task type the active ``new`` contradicts invalid from ``now``, with
        why. Its confirmations restart at 0: only new tasks confirming it bring it back. See ``Shelves``."""
        notes, rule = [], new.parsed
        if rule is None:
            return notes
        for _, old, _, _ in self.shelves.of(self.experiences, new.task_type, rule.trigger, Trigger("any")):
            if old.status in LIVE and old is not new and (why := contradiction(rule, old.parsed)):
                old.status, old.invalid_from, old.confirmations, old.calls_saved = "invalid", now, 0, 0
                old.status_reason = f"contradicted by '{new.rule}' ({why})"
                notes.append(f"invalidated: {old.rule}")
                self.changed[old.id] = old
        return notes

    def weight(self, experience: Experience, now: datetime | None = None) -> float:
        """Decayed weight; 0 for anything not active (or on probation) or past expiry."""
        if experience.status not in LIVE:
            return 0.0
        days = days_since(experience.last_hit_at, now or self.clock())
        return experience.confidence * decay_factor(days, self.config)

    def sweep(self) -> list[Experience]:
        """Flag active experiences past expiry as expired (kept in the file). Returns those flagged."""
        now = self.clock()
        flagged = self.filing.expired(self.experiences, self.changes, now, self.config.expire_after_days)
        for experience in flagged:
            experience.status = "expired"
            experience.status_reason = f"not hit for {days_since(experience.last_hit_at, now):.0f} days"
            self.changed[experience.id] = experience
        return flagged

    def retrieve(self, tags: set[str], top_k: int = 3, exclude: Iterable[str] = (),
                 task_type: str | None = None) -> list[Experience]:  # fmt: skip
        """Best active experiences by tag match x weight. Tags: {'any'} at planning time, or a step's
        tags mid-run; an experience matches when its trigger tag is among them (and it is of ``task_type``
        unless None). A pure read of the filed matches: one past expiry weighs 0, swept or not."""
        skip = set(exclude)
        scored = []
        for experience in self.filing.of(self.experiences, self.changes, task_type, tags):
            if experience.id in skip:
                continue
            score = self.weight(experience)
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
            self.changed[experience.id] = experience

    def record_outcome(
        self,
        used: Iterable[Experience],
        revealed: Collection[str],
        correct: bool,
        wasted: Collection[str] = (),
        offered: Collection[str] | None = None,
        latency: Mapping[str, float] | None = None,
    ) -> list[str]:
        """Vote on the injected rules whose whole trigger held; remove those the recent votes condemn.

        ``correct`` is the grader's verdict on the run, ``revealed`` the tags the run showed
        (``log.run_tags``), ``wasted`` the tool of each wasted call (``waste.run_waste``),
        ``offered`` the names of the tools the run had (None: not known), ``latency`` their declared
        seconds (None: not known).
        Down for wasted calls to a tool it sent the agent to, one that had nothing, or one not offered, or
        for a wrong answer it could have caused (answer, or skip a tool not called): ``votes.judge``."""
        notes, now = [], self.clock().isoformat(timespec="minutes")
        for e in used:
            vote = judge(e.rule, e.trigger, revealed, wasted, correct, offered, latency)
            if vote is None or e.status not in LIVE:
                continue
            notes += apply_vote(e, *vote, self.config, now)  # what a vote does: votes.apply_vote
            self.changed[e.id] = e
            if vote[0] and e.status == "active":  # a rule proving itself now is evidence against its rivals
                notes += self._invalidate_contradicted(e, now)
        return notes

    def invalidate_unoffered(
        self, offered: Collection[str], task_type: str, lags: Mapping[str, int | None] | None = None
    ) -> list[str]:
        """What the world says now, against the live rules of ``task_type``: a tool it no longer offers
        makes every rule that sends the agent to it false from now; a tool whose declared lag (``lags``:
        tool -> minutes) moved makes a rule about its age threshold outdated, and the same rule with the
        new number replaces it ('age over 30 min: call T' -> 'age over 120 min: call T'). Kept with why
        (``invalid_from``); a new task confirming a rule brings it back."""
        notes, now = [], self.clock().isoformat(timespec="minutes")
        for e in self.filing.of(self.experiences, self.changes, task_type):  # its live ones, filed
            why = outdated(e.parsed, offered, lags or {}) if e.parsed else ""
            if not why:
                continue
            e.status, e.invalid_from, e.confirmations, e.calls_saved = "invalid", now, 0, 0
            e.status_reason, self.changed[e.id] = why, e
            notes.append(f"invalidated: {e.rule} ({why})")
            lag = next((lags[a.tool] for a in e.parsed.actions if (lags or {}).get(a.tool or "")), None)
            if lag is not None and "learns of a record" in why:
                renumbered = str(replace_minutes(e.parsed, lag))
                decision, new = self.propose(renumbered, task_id="world", run_id="world", task_type=task_type,
                                             calls_saved=self.config.calls_saved_threshold)  # fmt: skip
                if new is not None and new.status == "active":
                    new.status_reason = f"renumbered from '{e.rule}': {why}"
                notes.append(f"renumbered: {renumbered} ({decision})")
        return notes

    def take_changed(self) -> list[Experience]:
        """The lessons changed (or quarantined on load) since the last call, by memory or by hand (a field
        set, a lesson put in ``experiences`` or swapped in there), then forgets them: what a store writes
        after a task, found without a sweep. Not among them: a list edited in place."""
        touched = [self.experiences[i] for i in self.changes.take_touched(self.experiences)]
        changed, self.changed = self.changed | {e.id: e for e in touched}, {}
        return list(changed.values())

    def active(self) -> list[Experience]:
        return [e for e in self.experiences.values() if e.status == "active"]

    def live(self, task_type: str | None = None, triggers: Collection[str] | None = None) -> list[Experience]:
        """Active or on probation, and not past expiry: what retrieval may return, even before a sweep.
        Of ``task_type`` with a trigger among ``triggers``, read from the filing; of every type, a scan."""
        every = task_type is None and triggers is None
        lessons = self.experiences.values() if every else self.filing.of(self.experiences, self.changes,
                                                                         task_type, triggers)  # fmt: skip
        return live_in_date(lessons, self.clock(), self.config.expire_after_days)
