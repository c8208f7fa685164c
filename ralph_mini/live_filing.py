"""Memory's live lessons, filed by task type and trigger and by last hit: what a task reads (notebook 04).

Every task asks memory for a few lessons: the live ones of its type whose trigger holds for every task
(``planner.plan``), those whose trigger a step revealed (``Memory.retrieve``), those of its type the
world may have outdated (``Memory.invalidate_unoffered``), and those that expired since the last task
(``Memory.sweep``). Read from a scan of every lesson, a task cost what memory holds: 3.5 ms at 100
lessons, 559 ms at 100k; filed, 2.3 ms and 1.6 ms (``benchmarks/store_speed.py``, ``run_task``, on
2026-12-05). A read costs what it returns: a lesson whose status is live (active or on probation) is
filed under (task type, trigger), and its last hit goes on a heap, so expiry pops the oldest hits until
one is still in date.

Kept in step by memory's ledger (``experience.LessonChanges``): a lesson whose status, last hit,
trigger or task type was set since the last read, by memory or by hand, is filed again; lessons
appended to memory's dict are filed (and watched) at the next read; a dict replaced, or rewritten by a
hand (a lesson swapped in under a key it has, or taken out: ``lesson_dict.LessonDict``), makes it file
everything afresh.

Left out on purpose: dropping the filed lessons past expiry before ``sweep`` flags them (a reader checks
each one's date, as it did when it scanned them all).
"""

import heapq
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from itertools import chain, islice

from ralph_mini.experience import LIVE, Experience, LessonChanges, days_since
from ralph_mini.lesson_dict import LessonDict

EPOCH, MICROSECOND = datetime(1970, 1, 1), timedelta(microseconds=1)  # for ``micros``


class LiveFiling:
    """The lessons of one memory whose status is live, by (task type, trigger), in memory's order."""

    def __init__(self) -> None:
        self.source: LessonDict | None = None  # memory's dict, as filed
        self.ledger: LessonChanges | None = None
        self.read_upto, self.rewrites = 0, 0  # the ledger's count and the dict's rewrites when last read
        self.lessons: list[Experience] = []  # slot -> lesson; slot order is memory's order
        self.slot_of: dict[str, int] = {}  # lesson id -> slot
        self.place: dict[int, tuple[str, str]] = {}  # slot -> (task type, trigger), for the filed ones
        self.by_type: dict[str, dict[str, dict[int, None]]] = {}  # task type -> trigger -> slots
        self.by_trigger: dict[str, dict[str, None]] = {}  # trigger -> the task types filed under it
        self.hits: list[tuple[float, int, str]] = []  # heap: (last hit in µs, slot, last_hit_at as filed)
        self.stamps: dict[int, str] = {}  # slot -> the last hit of its newest heap entry

    def of(self, lessons: LessonDict, ledger: LessonChanges, task_type: str | None = None,
           triggers: Iterable[str] | None = None) -> list[Experience]:  # fmt: skip
        """The filed lessons of ``task_type`` (None: every type) whose trigger is among ``triggers``
        (None: any trigger; then a task type is needed), in memory's order."""
        self.follow(lessons, ledger)
        if task_type is not None:
            shelf = self.by_type.get(task_type, {})
            found = shelf.values() if triggers is None else [shelf[t] for t in once(triggers) if t in shelf]
        else:
            found = [self.by_type[k][t] for t in once(triggers or ()) for k in self.by_trigger.get(t, ())]
        return [self.lessons[s] for s in sorted(chain.from_iterable(found))]

    def expired(self, lessons: LessonDict, ledger: LessonChanges, now: datetime,
                expire_after_days: float) -> list[Experience]:  # fmt: skip
        """The filed lessons past expiry at ``now`` (``days_since`` their last hit), in memory's order:
        the oldest hits first, until one is in date. A heap entry whose lesson was hit or left since is
        dropped on the way (the lesson was pushed again if it is still filed)."""
        self.follow(lessons, ledger)
        due: set[int] = set()
        while self.hits:
            _, slot, stamp = self.hits[0]
            lesson = self.lessons[slot]
            if slot in self.place and lesson.last_hit_at == stamp:
                if days_since(stamp, now) <= expire_after_days:
                    break
                due.add(slot)
            heapq.heappop(self.hits)
        return [self.lessons[s] for s in sorted(due)]

    def follow(self, lessons: LessonDict, ledger: LessonChanges) -> None:
        """File what changed since the last read: appended lessons, and those the ledger names."""
        same = lessons is self.source and ledger is self.ledger and lessons.rewrites == self.rewrites
        if same and ledger.count == self.read_upto and len(lessons) == len(self.lessons):
            return None  # nothing changed: the common case, so it is checked first
        if not same or len(lessons) < len(self.lessons):
            return self.refile(lessons, ledger)
        if len(lessons) > len(self.lessons):  # (islice walks the known ones too: only when there are new)
            for lesson in islice(lessons.values(), len(self.lessons), None):
                self.append(lesson, ledger)
        for lesson_id in ledger.since(self.read_upto):
            if lesson_id in self.slot_of:
                self.file(self.slot_of[lesson_id])
        self.read_upto = ledger.count
        if len(self.hits) > 2 * len(self.place) + 64:  # mostly entries of lessons hit since: start afresh
            self.hits = [self.hit(s) for s in self.place]
            heapq.heapify(self.hits)

    def refile(self, lessons: LessonDict, ledger: LessonChanges) -> None:
        self.__init__()
        self.source, self.ledger, self.read_upto = lessons, ledger, ledger.count
        self.rewrites = lessons.rewrites
        for lesson in lessons.values():
            self.append(lesson, ledger)

    def append(self, lesson: Experience, ledger: LessonChanges) -> None:
        lesson.watch(ledger)  # from now on its changes reach the ledger, a hand's included
        self.slot_of[lesson.id] = len(self.lessons)
        self.lessons.append(lesson)
        self.file(len(self.lessons) - 1)

    def file(self, slot: int) -> None:
        """File the lesson where it belongs now: off its old shelf, onto its new one if it is live, and its
        last hit on the heap if that moved (an entry left behind is dropped when it comes up)."""
        lesson, old = self.lessons[slot], self.place.get(slot)
        new = (lesson.task_type, lesson.trigger) if lesson.status in LIVE else None
        if old != new:
            if old:
                del self.by_type[old[0]][old[1]][slot], self.place[slot]
            if new:
                self.place[slot] = new
                self.by_type.setdefault(new[0], {}).setdefault(new[1], {})[slot] = None
                self.by_trigger.setdefault(new[1], {})[new[0]] = None
        if new and (old is None or self.stamps.get(slot) != lesson.last_hit_at):
            self.stamps[slot] = lesson.last_hit_at
            heapq.heappush(self.hits, self.hit(slot))

    def hit(self, slot: int) -> tuple[float, int, str]:
        """A heap entry: the lesson's last hit in µs; one that does not read as a time comes first, so
        ``expired`` reads it at once (and ``days_since`` says what is wrong with it)."""
        stamp = self.lessons[slot].last_hit_at
        return stamp_micros(stamp) if isinstance(stamp, str) else float("-inf"), slot, stamp


def once(triggers: Iterable[str]) -> Iterable[str]:
    """Each trigger once (a set already is): a lesson is on one shelf, and must be read once."""
    return triggers if isinstance(triggers, set | frozenset) else dict.fromkeys(triggers)


@lru_cache(maxsize=1024)  # a task stamps every lesson it used with one time: it is read once
def stamp_micros(stamp: str) -> float:
    try:
        return micros(datetime.fromisoformat(stamp))
    except ValueError:
        return float("-inf")


def micros(moment: datetime) -> int:
    """Microseconds from 1970 to ``moment``, in UTC if it is aware (as it is if naive): a Python int,
    which is cheaper to make than a numpy ``datetime64`` and subtracts as exactly."""
    return (utc(moment) - EPOCH) // MICROSECOND


def utc(moment: datetime) -> datetime:
    """A naive time as it is; an aware one in UTC, made naive (so that the two kinds subtract)."""
    return moment.astimezone(UTC).replace(tzinfo=None) if moment.tzinfo else moment


def live_in_date(lessons: Iterable[Experience], now: datetime, expire_after_days: float) -> list[Experience]:
    """Those live at ``now``: status active or on probation, and not past expiry."""
    return [e for e in lessons if e.status in LIVE and days_since(e.last_hit_at, now) <= expire_after_days]
