"""One lesson's record, and memory's settings (notebook 04).

Why a module of its own: the record is what every later lesson reads (the file, the store, retrieval,
the widgets), while ``memory.py`` holds what is done to it. ``generalization_confidence`` is here
because it is part of what a record says about itself: how general the rule has proved.
"""

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass, field, fields
from datetime import datetime, timedelta
from itertools import islice
from typing import Any

from ralph_mini.lesson_dict import LessonDict
from ralph_mini.lesson_guards import instance_details
from ralph_mini.rules import Rule, RuleSyntaxError, parse_rule

LIVE = ("active", "probation")  # the statuses retrieval may return (past expiry aside)
# The fields that decide whether a lesson is live, and where it is filed (``live_filing``).
LIVENESS = frozenset({"status", "last_hit_at", "task_type", "trigger"})


@dataclass(frozen=True)
class MemoryConfig:
    """Every tunable of the memory, with the seed's values where it gives them."""

    confirm_threshold: int = 2  # write a rule once proposed in this many separate tasks ...
    calls_saved_threshold: int = 2  # ... or once a single run shows it saves this many calls
    write_after_rejection: bool = True  # ... or at once if reflected from a run the grader rejected
    half_life_days: float = 7.0  # weight halves every week without a hit
    stale_after_days: float = 14.0  # the seed: not hit for two weeks -> down-weighted
    stale_factor: float = 0.5  # ... by this factor
    expire_after_days: float = 30.0  # not retrieved any more (kept, flagged "expired")
    max_failures: int = 2  # failures with the rule in play before it can be removed ...
    vote_half_life: float = 5.0  # ... once recent down-votes outweigh up-votes; a vote halves after 5 more
    recent_window: int = 3  # a rule is judged by what it does now: of its last 3 votes ...
    recent_failures: int = 2  # ... 2 down make it invalid, whatever its past (the world may have changed)
    max_wrong_answers: int = 1  # ... as does a wrong answer it could have caused (it loses standing at once)
    probation: bool = True  # a rule proposed once is injected at once, on probation: one down-vote ends
    # it, a confirming task or a validated run makes it active (off: it waits as a candidate, unseen)


NO_DECAY = {"half_life_days": 1e9, "stale_after_days": 1e9, "expire_after_days": 1e9}  # the ablation


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
    validations: int = 0  # runs with its whole trigger held that ended correct without its waste
    failures: int = 0  # ... that ended wrong, or wasted calls on a tool it sent the agent to
    calls_saved: int = 0  # best single-run saving seen
    status: str = "candidate"  # candidate | probation | active | expired | removed | invalid | quarantined
    status_reason: str = ""
    source_tasks: list[str] = field(default_factory=list)
    source_runs: list[str] = field(default_factory=list)
    valid_from: str | None = None  # when it last became active
    invalid_from: str | None = None  # when it was removed or contradicted (None: still holds)
    votes_up: float | None = None  # validations, decayed by later votes (None in an older file:
    votes_down: float | None = None  # ... start from the plain counts)
    recent: str = ""  # its last votes, oldest first: '+' up, '-' waste, 'x' a wrong answer it could cause
    wrong_answers: int = 0  # wrong answers it could have caused since it last became active

    def __setattr__(self, name: str, value: object) -> None:
        """Set a field; the change is noted in each ledger watching this lesson, by memory's operations
        and by hand alike (``lesson.status = "removed"`` in a notebook). A last hit set by hand on a
        lesson in memory must read as a time: every weight reads it (a file's bad stamp is quarantined
        on load instead, ``quarantine``)."""
        if name == "last_hit_at" and "_watchers" in self.__dict__ and (why := not_a_time(value)):
            raise ValueError(f"lesson {self.id}: {why}; nothing was changed")
        object.__setattr__(self, name, value)
        for changes in self.__dict__.get("_watchers", ()):
            changes.note(self.id, name)

    def watch(self, changes: "LessonChanges") -> None:
        """Note this lesson's changes in ``changes`` from now on (not a field: no file holds it). A lesson
        a hand put in memory that memory cannot weigh (a last hit that is not a time, a rule that does
        not parse) is quarantined as it joins, as on load: kept with the reason, never read live."""
        watchers = self.__dict__.get("_watchers", ())
        if changes not in watchers:
            self.__dict__["_watchers"] = (*watchers, changes)
            quarantine(self)

    @classmethod
    def from_fields(cls, values: Mapping[str, Any]) -> "Experience":
        """``Experience(**values)``, as a memory file or the store reads lessons back, without a call of
        ``__setattr__`` for each field: no ledger watches a lesson being made, and those calls were most
        of the making (a memory file of 10k lessons loaded in 450 ms, not 690: ``benchmarks/store_speed.py
        --files``). A field missing, or a key that is not a field, raises ``TypeError`` naming it, as the
        constructor does."""
        if missing := REQUIRED_FIELDS - values.keys():
            raise TypeError(f"missing required field(s): {', '.join(sorted(map(repr, missing)))}")
        if unknown := values.keys() - FIELD_DEFAULTS.keys():
            raise TypeError(f"not a field of a lesson: {', '.join(sorted(map(repr, unknown)))}")
        lesson = cls.__new__(cls)
        lesson.__dict__.update(FIELD_DEFAULTS)  # every field in order; the values keep that order
        lesson.__dict__.update({name: make() for name, make in MADE_DEFAULTS})  # each lesson its own list
        lesson.__dict__.update(values)
        lesson.__post_init__()
        return lesson

    def __post_init__(self) -> None:
        self.recent, self.wrong_answers = self.recent or "", self.wrong_answers or 0  # NULL in an old store
        if self.votes_up is None:
            self.votes_up = float(self.validations)
        if self.votes_down is None:
            self.votes_down = float(self.failures)

    @property
    def parsed(self) -> Rule | None:
        """The rule, parsed once per rule text (None: it does not parse; memory quarantines it)."""
        return self._verdict("parsed", _parse)

    @property
    def names_an_instance(self) -> bool:
        """The generic instance check, once per rule text: weight and retrieval read it on every task."""
        return self._verdict("names an instance", lambda text: bool(instance_details(text)))

    def _verdict(self, name: str, compute: Callable[[str], object]) -> Any:
        """What ``compute`` says of the rule text, kept with the lesson (not a field: no file or store
        column holds it) and computed again if the text changes ('when any task: skip T' edited in place)."""
        text, verdicts = self.__dict__.get("_verdicts", (None, None))
        if verdicts is None or text is not self.rule and text != self.rule:
            text, verdicts = self.rule, {}
            self.__dict__["_verdicts"] = (text, verdicts)
        if name not in verdicts:
            verdicts[name] = compute(text)
        return verdicts[name]

    @property
    def confidence(self) -> float:
        """How general the rule has proved: n / (n + 1) for n = confirming tasks + validated runs, times
        its recent track record (up + 1) / (up + down + 1) in decayed votes. 1 confirmation -> 0.5."""
        record = (self.votes_up + 1) / (self.votes_up + self.votes_down + 1)
        evidence = self.confirmations + self.validations
        return 0.0 if self.names_an_instance else evidence / (evidence + 1) * record


# What ``Experience.from_fields`` starts a lesson from: each field's default (None for one it must be
# given), in field order; the fields whose default is made afresh; and the fields that must be given.
FIELD_DEFAULTS = {f.name: None if f.default is MISSING else f.default for f in fields(Experience)}
MADE_DEFAULTS = tuple(
    (f.name, f.default_factory) for f in fields(Experience) if f.default_factory is not MISSING
)
REQUIRED_FIELDS = frozenset(
    f.name for f in fields(Experience) if f.default is MISSING and f.default_factory is MISSING
)


class LessonChanges:
    """Which lessons had a field set, by any hand, so finding what changed costs what changed, not what
    memory holds. Two readers: retrieval's live-lesson filter reads the liveness ledger (``since``: a
    reader keeps the count it has read up to; ``lesson_index.LiveLessons``), and the store is handed the
    lessons touched since the last task (``take_touched``, through ``Memory.take_changed``). Memory owns
    one; a lesson reports to it once watched (``Experience.watch``): memory's own lessons from the
    start, a lesson put in memory's dict by hand from the next ``take_touched`` (``adopt``)."""

    def __init__(self, lessons: LessonDict) -> None:
        """A ledger the lessons of memory's dict report to from now on."""
        self.count = 0
        self.latest: dict[str, int] = {}  # id -> the count at its last liveness change, oldest first
        self.touched: dict[str, None] = {}  # ids with any field set since ``take_touched``, in order
        self.source, self.size = lessons, 0  # memory's dict, and how many of its lessons are watched
        self.rewrites = lessons.rewrites  # the dict's rewrites when last adopted (``lesson_dict``)
        self.adopt(lessons, report=False)

    def added(self, lessons: LessonDict, lesson: Experience) -> None:
        """Memory has just added ``lesson`` to ``lessons``: watch it (and only it, if all before were)."""
        lesson.watch(self)
        if lessons is self.source and len(lessons) == self.size + 1:
            self.size += 1

    def adopt(self, lessons: LessonDict, report: bool = True) -> None:
        """Watch the lessons put in memory's dict behind memory's back, and note them as touched (no
        field was set to say so): those appended by hand, past the lessons already watched, or every
        lesson of a new dict or of one a hand rewrote (a lesson swapped in or taken out). Reads nothing
        when none were."""
        same = lessons is self.source and lessons.rewrites == self.rewrites
        if same and len(lessons) == self.size:
            return
        start = self.size if same and len(lessons) > self.size else 0
        for lesson in islice(lessons.values(), start, None):
            lesson.watch(self)
            if report:
                self.touched[lesson.id] = None
        self.source, self.size, self.rewrites = lessons, len(lessons), lessons.rewrites

    def note(self, experience_id: str, field: str) -> None:
        self.touched[experience_id] = None
        if field in LIVENESS:
            self.count += 1
            self.latest.pop(experience_id, None)  # moved to the end: ``since`` stops at the first older one
            self.latest[experience_id] = self.count

    def take_touched(self, lessons: LessonDict) -> list[str]:
        """The ids of the lessons in memory's dict ``lessons`` that had a field set since the last call
        or were put there behind memory's back (``adopt``), then forgets them."""
        self.adopt(lessons)
        touched, self.touched = [i for i in self.touched if i in lessons], {}
        return touched

    def since(self, count: int) -> list[str]:
        """The ids changed after ``count`` (a reader's last ``self.count``), newest first."""
        changed = []
        for experience_id in reversed(self.latest):
            if self.latest[experience_id] <= count:
                break
            changed.append(experience_id)
        return changed


def generalization_confidence(rule: str, evidence: int) -> float:
    """0 for a rule naming an instance; else n / (n + 1) for n pieces of evidence (1 -> 0.5, 3 -> 0.75)."""
    if instance_details(rule):
        return 0.0
    return evidence / (evidence + 1)


def _parse(text: str) -> Rule | None:
    try:
        return parse_rule(text)
    except (RuleSyntaxError, TypeError, AttributeError):  # not a rule, or not text at all
        return None


def quarantine(experience: Experience) -> bool:
    """Quarantine a lesson that does not parse (from an older version, a hand edit, a real model's
    reflection), or whose last hit does not read as a time (a hand-edited file): kept, never retrieved,
    with the reason. True when it was quarantined."""
    if experience.status == "quarantined":
        return True
    why = unusable(experience)
    if why:
        experience.status, experience.status_reason = "quarantined", why
    return bool(why)


def unusable(experience: Experience) -> str:
    """Why memory cannot weigh a lesson, or '' if it can (the parse is kept; its error needs no cache)."""
    if experience.parsed is None:
        try:
            parse_rule(experience.rule)
        except RuleSyntaxError as err:
            return f"does not parse: {err}"
        except (TypeError, AttributeError):
            return f"the rule is not text: {experience.rule!r}"
    return not_a_time(experience.last_hit_at)


def not_a_time(stamp: object) -> str:
    """Why a last hit is not a time memory can weigh, or '' if it is one."""
    try:
        datetime.fromisoformat(stamp)  # (a number or None: TypeError)
    except (TypeError, ValueError):
        return f"its last hit {stamp!r} is not a time: write it as 2025-03-10T12:00"
    return ""


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


DAY = timedelta(days=1)  # built once: ``timedelta(days=1)`` costs more than the division it serves


def days_since(moment: str, now: datetime) -> float:
    """Days from an ISO time stamp to ``now``: '2025-03-03T12:00', 2025-03-10 12:00 -> 7.0."""
    return (now - datetime.fromisoformat(moment)) / DAY
