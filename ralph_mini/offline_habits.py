"""The simulated model's naive habits, as data a world gives it (notebook 01).

The offline model (``offline.py``) is one generic program; what it does in a given world is data, the
way a pretrained model "knows" a domain. A world hands it a ``Habits`` record: how an id looks, which
of its tools plays which *role*, and, per request type, the moves a plausible untrained assistant makes.
The roles come from what the tools declare (``@tool(holds_every=True)``, ``@tool(lag_min=30)``,
``latency_s``), never from their names (``roles``):

- the **fast source**: a quick look-up that may miss records (a cache, a front-desk board);
- the **full source**: the one that holds every record (a database);
- the **lagging source**: a slow third party that learns of a record some minutes after it is created.

The naive habits, defined on those roles, are the seed article's:

1. after the fast source found the record, it double-checks the full one "to confirm accuracy";
2. it asks the lagging source about every record in a *waiting* status, without looking at its age;
3. when the full source has no such record, it asks the lagging source anyway;
4. it sometimes starts with a look-alike tool that merely sounds right (a world names which ones tempt
   for which request), more often the longer the tool list: each tool beyond the request's look-ups
   adds ``confusion_per_extra_tool`` to the chance;

and it reads ids by the world's pattern and the request type by the world's cue words. Habits 1-3 apply
in a *thorough* look-up (``LookUp(thorough=True)``); a plain look-up stops once the record is found.

How an answer is read off the observations is the one piece of code a world gives per request type
(``RequestHabit.answer``), since it is the world's own answer format; the small helpers below cover the
usual cases (the fields the look-ups found, whether a write went through).

Left out on purpose: learning of any kind (lessons reach the model only through its prompt).
"""

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from ralph_mini.tools import Tool
from ralph_mini.world import Words

FIRST, ALWAYS, FOUND, ALLOWED = "first", "always", "found", "allowed"  # when a ``Move`` is made


@dataclass(frozen=True)
class LookUp:
    """Find the record: the fast source first (``start="fast"``, the full one on a miss) or the full
    source at once (``start="full"``). ``thorough``: habits 1-3 apply (double-check, ask the lagging
    source about a waiting or a missing record); otherwise the look-up ends once the record is known."""

    start: str = "fast"
    thorough: bool = False
    why: str = ""  # the thought of a plain look-up's first call


@dataclass(frozen=True)
class Move:
    """Call ``tool`` once ``when`` holds: FIRST (no call made yet), ALWAYS, FOUND (a look-up found the
    record) or ALLOWED (the request's ``allowed`` policy says yes). ``why`` is the model's thought."""

    tool: str
    when: str = ALWAYS
    why: str = ""


class Seen(Protocol):
    """What the model has read so far (``offline.Observed``), as an answer function sees it."""

    record_id: str | None
    now: datetime | None
    system: str
    results: dict[str, tuple[str, dict]]

    @property
    def status(self) -> str | None: ...

    def found_fields(self) -> dict[str, str]: ...

    def record(self) -> str | None: ...


@dataclass(frozen=True)
class RequestHabit:
    """How the naive model handles one request type: its moves in order (the first that applies, and
    whose tool is offered, not done and not skipped by a lesson, is made), how it reads its answer, the
    policy it checks before an ALLOWED move, and the look-alike tools that tempt it first (habit 4)."""

    moves: tuple[LookUp | Move, ...]
    answer: Callable[[Seen], dict]
    allowed: Callable[[Seen], bool] | None = None
    tempted_by: tuple[str, ...] = ()


@dataclass(frozen=True)
class Habits:
    """Everything the offline model knows about one world, as data. Build it with ``habits_for``."""

    noun: str
    id_pattern: str  # one regex group: the id as written in the question
    id_argument: str  # the tool argument that names a record
    status_field: str
    created_field: str
    requests: Mapping[str, RequestHabit]  # by request type; the first is the default
    cues: Mapping[str, tuple[str, ...]]  # words that tell a request type apart, checked in this order
    fast: str | None = None
    full: str | None = None
    lagging: str | None = None
    writes: tuple[str, ...] = ()  # tools that change the world: once one is tried, the plan ends
    waiting: tuple[str, ...] = ()  # statuses in which the lagging source may know more
    double_check: bool = True  # habit 1
    ask_lagging_when_missing: bool = True  # habit 3
    confusion_per_extra_tool: float = 0.045  # habit 4: P(look-alike first) per extra tool listed
    # Simulated latency of one model call: fixed overhead + reading + writing speed.
    base_latency_s: float = 1.0
    prompt_tokens_per_s: float = 2000.0
    completion_tokens_per_s: float = 40.0
    # (phrasing, the phrasing it translates), '{id}' marking the record's id: one question to the model
    twins: tuple[tuple[str, str], ...] = ()

    def meaning(self, question: str) -> str:
        """The question as the phrasing it translates asks it (itself if it is no declared translation)."""
        for said, meant in self.twins:
            found = re.fullmatch(re.escape(said).replace(re.escape("{id}"), "(.+?)"), question.strip())
            if found:
                return meant.format(id=found[1])
        return question

    def request_of(self, question: str) -> str:
        """The request type of a question: the first whose cue words it contains, else the default."""
        text = question.lower()
        for name, cues in self.cues.items():
            if any(cue in text for cue in cues):
                return name
        return next(iter(self.requests))

    def sources(self) -> tuple[str, ...]:
        """The look-up tools whose records carry a status, the fuller first (its word wins)."""
        return tuple(name for name in (self.full, self.fast) if name)


def roles(tools: Sequence[Tool]) -> dict:
    """The fast, full and lagging sources among ``tools`` and the tools that write, by what they
    declare (never by name). full: a read-only tool that holds every record; lagging: one with a lag;
    fast: the quickest core read-only tool that declares statuses and is neither of the other two."""
    reads = [t for t in tools if not t.writes]
    full = next((t.name for t in reads if t.holds_every), None)
    lagging = next((t.name for t in reads if t.lag_min is not None), None)
    quick = sorted((t for t in reads if t.core and t.statuses and t.name not in (full, lagging)),
                   key=lambda t: t.latency_s)  # fmt: skip
    writes = tuple(t.name for t in tools if t.writes)
    return {"fast": quick[0].name if quick else None, "full": full, "lagging": lagging, "writes": writes}


def habits_for(
    words: Words, tools: Sequence[Tool], requests: Mapping[str, RequestHabit], **settings: object
) -> Habits:
    """A world's ``Habits``: its words, the roles its tools declare, its request habits; ``settings``
    override the rest (``waiting=('pending',)``, ``double_check=False`` ...). Every request type of the
    world needs a habit: a KeyError names the one missing."""
    missing = [r.name for r in words.requests if r.name not in requests]
    if missing:
        raise KeyError(f"no RequestHabit for the request types {missing}: give each one its moves")
    cues = {r.name: r.cues for r in words.requests if r.cues}
    ordered = {r.name: requests[r.name] for r in words.requests}
    return Habits(noun=words.noun, id_pattern=words.id_pattern, id_argument=words.id_argument,
                  status_field=words.status_field, created_field=words.created_field, requests=ordered,
                  cues=cues, **roles(tools) | settings)  # fmt: skip


# --- helpers for a world's answer functions ---------------------------------------------------------
def ok(seen: Seen, tool: str) -> bool:
    """Did ``tool`` answer with a record?"""
    return seen.results.get(tool, ("",))[0] == "ok"


def fields_of(seen: Seen, tool: str) -> dict[str, str]:
    """What ``tool`` answered ({} if it did not answer ok)."""
    status, fields = seen.results.get(tool, ("", {}))
    return fields if status == "ok" else {}


def picked(fields: Mapping[str, str], names: Sequence[str], numbers: Sequence[str] = ()) -> dict:
    """The ``names`` among ``fields``, those in ``numbers`` as floats: what an answer reports."""
    answer: dict = {k: v for k, v in fields.items() if k in names}
    for key in numbers:
        if key in answer:
            answer[key] = float(answer[key])
    return answer


@dataclass(frozen=True)
class WroteAnswer:
    """An answer that says whether a write went through: {id_field: id, field: done | refused}."""

    id_field: str
    tool: str
    field: str
    done: str
    refused: str

    def __call__(self, seen: Seen) -> dict:
        return {self.id_field: seen.record_id, self.field: self.done if ok(seen, self.tool) else self.refused}


@dataclass(frozen=True)
class FieldAnswer:
    """The simplest answer a world can give: the id, and the ``names`` the look-ups found (the fuller
    source's word last, so it wins); ``missing`` for each of ``required`` when nothing was found."""

    id_field: str
    names: tuple[str, ...]
    required: tuple[str, ...] = ()
    missing: str = ""
    numbers: tuple[str, ...] = ()
    tools: tuple[str, ...] = field(default=())  # more tools whose fields it reports, after the look-ups

    def __call__(self, seen: Seen) -> dict:
        found = dict(seen.found_fields())
        for tool in self.tools:
            found |= fields_of(seen, tool)
        answer = {self.id_field: seen.record_id} | picked(found, self.names, self.numbers)
        return answer | {name: self.missing for name in self.required if name not in answer}
