"""What a world gives the agent: its words, its tools, its tasks and how they are graded (notebook 01).

The agent (the ReAct loop, the log, the reflector, memory, retrieval, the Ralph Loop) is generic: it
knows no order, ticket or appointment. Everything that does lives in a *world*, one package of its own
under ``ralph_mini/worlds/``: the order desk of notebook 01 (``worlds/orders``), the wider shop of
notebook 09 (``worlds/shop``) and a clinic's front desk (``worlds/clinic``) ship with the kit, and
``docs/your_own_world.md`` builds another. This module is the contract between the two sides:

- ``Words``: every word of a world the agent may need, and nothing else: the record noun ("order"),
  the argument that names a record, what an id looks like, the statuses, which fields carry a record's
  status and creation time, the request types with the fields a complete answer has. The loop, the
  reflector's prompt, the instance filter and the log's tags all read them from here;
- ``Task``: one question, its type, its truth and the oracle's calls. Generic, so a store resumes any
  world's tasks; a world that grades the world's final state too hands the task a ``check``;
- ``grade``: the grader, field by field, then the task's ``check``;
- ``World``: what a world object offers the agent: its ``words`` and its ``tools()`` as they are now.

A world package also holds its tools (``@tool``, with the roles the agent reads: ``writes``,
``statuses``, ``holds_every``, ``lag_min``), its task generator and the simulated model's habits there,
as data (``offline.Habits``). Nothing here names a world's word.

Left out on purpose: a registry of worlds (a world is a package you import and pass along), and
worlds with more than one record per question.
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import lru_cache, partial
from typing import Protocol

from ralph_mini.lang import in_language as in_language  # re-exported: a make_suite asks in one language
from ralph_mini.tools import Tool

TIME_FORMAT = "%Y-%m-%d %H:%M"  # a task's current time, and every time a tool returns


@lru_cache(maxsize=4096)
def parse_time(text: str) -> datetime:
    """'2025-03-10 12:00' -> datetime, or ValueError. Cached: ``strptime`` is slow next to a look-up, and
    the same few times are read on every model turn: the task's 'now', each record's creation time."""
    return datetime.strptime(text, TIME_FORMAT)


def time_since(stamp: str, now: datetime) -> timedelta | None:
    """From a time as a record or a log writes it (``TIME_FORMAT``) to ``now``; None if ``stamp`` is not
    one (a log line cut at its length limit, a field that holds something else)."""
    try:
        return now - parse_time(stamp.strip())
    except ValueError:
        return None


@dataclass(frozen=True)
class RequestType:
    """One kind of request a world takes: 'status', 'refund', 'reschedule' ...

    ``answer_fields``: what a complete answer has (the fast loop retries a run without them);
    ``phrasings``: how people ask, '{id}' marking the record's id; ``cues``: words that tell this
    request apart from the others (the simulated model reads the type this way; () for the world's
    default request); ``writes``: a correct reply may change the world.
    """

    name: str
    answer_fields: tuple[str, ...]
    phrasings: tuple[str, ...] = ()
    cues: tuple[str, ...] = ()
    writes: bool = False


@dataclass(frozen=True)
class Words:
    """Every word of one world the agent needs. A rule says 'TOOL finds the {noun}'; a record's status
    is its field ``status_field`` and its age the minutes since ``created_field``; ``missing`` is the
    answer value that says there is no such record."""

    job: str  # what the agent does, for the prompts: "answers questions about orders of an online shop"
    noun: str  # one word: "order"
    id_argument: str  # the tool argument that names a record: "order_id"
    id_pattern: str  # a record id in running text, as one regex group: r"(?<![A-Za-z0-9])([A-Z]\d{3})..."
    statuses: tuple[str, ...]  # every status a record may have
    missing: str  # the answer value for "no such record": "not_found"
    requests: tuple[RequestType, ...]  # the first is the world's default request
    created_field: str  # the field with a record's creation time: its age is counted from it
    fields: tuple[str, ...] = ()  # the field names its tools return (a reflection item may name them)
    status_field: str = "status"  # the field with a record's status ('status is W' in a rule)
    id_formats: Mapping[str, str] = field(default_factory=dict)  # named id formats, for the instance filter
    answer_schema: dict | None = None  # the final answer as a JSON schema (for models that fill one)

    def __post_init__(self) -> None:
        if not self.noun.isidentifier() or not self.noun.islower():
            raise ValueError(f"Words.noun must be one lower-case word, got {self.noun!r}: e.g. 'ticket'")
        if not self.requests:
            raise ValueError("Words.requests is empty: a world takes at least one RequestType")

    def request(self, name: str) -> RequestType:
        """The request type called ``name``, or a ValueError listing the world's types."""
        for request in self.requests:
            if request.name == name:
                return request
        known = ", ".join(r.name for r in self.requests)
        raise ValueError(f"unknown task type {name!r} for this world: its request types are {known}")

    def vocabulary(self) -> tuple[str, ...]:
        """The world's own words besides its tool names: never an instance, never foreign to a lesson."""
        names = (self.noun, self.id_argument, self.status_field, self.created_field, self.missing)
        return tuple(dict.fromkeys((*names, *self.statuses, *self.fields)))


class World(Protocol):
    """What the agent takes from a world object: its words and its tools as they are now (a world that
    changes, notebook 09, may offer other tools or describe them otherwise from one task to the next)."""

    words: Words

    def tools(self, core_only: bool = False) -> list[Tool]: ...


@dataclass(frozen=True)
class Task:
    """One question for the agent, with what a correct answer must say and the oracle's call count.

    ``prompt`` is the world's system prompt at the task's time ``now``; ``relevant_tools`` are the tools
    the question is about (a call to another one is a wrong call; () accepts every tool); ``kind`` is the
    world's finer label for tables ('paid_cached'); ``check``, when the world gives one, says what the
    world's final state has wrong after the run ({field: (expected, got)}). It is not saved: a resumed
    run never grades a finished task again.
    """

    task_id: str
    question: str
    task_type: str
    expected: dict
    oracle_calls: int
    prompt: str
    now: str
    relevant_tools: tuple[str, ...] = ()
    kind: str = ""
    record_id: str = ""
    phrasing: int = 0  # which of the request type's phrasings asked it
    check: Callable[[], dict] | None = field(default=None, compare=False, repr=False)

    @property
    def system_prompt(self) -> str:
        """What ``run_react`` sends first."""
        return self.prompt

    def world_problems(self) -> dict:
        return self.check() if self.check else {}


@dataclass
class Suite:
    """A world and the tasks asked in it (a world package's ``make_suite(n, seed)`` returns one)."""

    world: World
    tasks: list[Task]


@dataclass(frozen=True)
class Grade:
    correct: bool
    wrong_fields: dict  # field -> (expected, got)
    judged: bool = True  # False: the task carries no truth to judge by (no votes, no lessons from it)

    def explain(self) -> str:
        if not self.judged:
            return "not judged: the task has no truth to compare with"
        if self.correct:
            return "correct"
        return "; ".join(f"{k}: expected {e!r}, got {g!r}" for k, (e, g) in self.wrong_fields.items())


def expected_writes(writes: list[tuple[str, str]], record_id: str, expected: tuple) -> Callable[[], dict]:
    """A task's ``check`` for a world that records each write as (tool, record id) in ``writes``: after
    the run, the writes to this record must be exactly ``expected`` (nothing, or one refund...)."""
    return partial(_wrong_writes, writes, record_id, tuple(expected))


def _wrong_writes(writes: list[tuple[str, str]], record_id: str, expected: tuple) -> dict:
    written = tuple(w for w in writes if w[1] == record_id)
    return {} if written == expected else {"writes": (expected, written)}


def grade(task: Task, answer: dict | None) -> Grade:
    """Check the answer field by field (numbers within a cent, text case-insensitive, extra fields
    ignored), then the world's final state (``Task.check``). A task with no truth, or a field whose
    truth is unknown (None), cannot be judged: ``judged=False``, and nothing is learned from it."""
    if not task.expected or any(value is None for value in task.expected.values()):
        return Grade(correct=False, wrong_fields={}, judged=False)
    answer = answer or {}
    wrong = {k: (want, answer.get(k)) for k, want in task.expected.items() if not same(want, answer.get(k))}
    wrong.update(task.world_problems())
    return Grade(correct=not wrong, wrong_fields=wrong)


def same(expected: object, got: object) -> bool:
    """Equal for grading: a number within a cent (numbers or numeric strings), text case-insensitive.

    same(99.5, '99.50') -> True; same('paid', 'PAID ') -> True; same('paid', True) -> False."""
    if got is None or isinstance(got, bool):
        return False
    if isinstance(expected, int | float) and not isinstance(expected, bool):
        try:
            return abs(float(got) - float(expected)) < 0.01
        except (TypeError, ValueError):
            return False
    return str(got).strip().lower() == str(expected).lower()
