"""The indexes behind retrieval, in step with memory (notebook 05).

- ``VectorIndex`` keeps a faiss inner-product index of unit vectors (so scores are cosines), with ids
  mapping back to experiences; add, remove, and a full ``sync`` with a memory. Its ``search`` re-scores
  faiss's candidates exactly, so rankings are the same on every CPU.
- ``LiveLessons`` keeps a ``VectorIndex`` and a keyword index (``embed.KeywordIndex``) equal to the
  memory's live lessons without a sweep per search: each lesson is tokenised and embedded once, when it
  first goes live; a search reads nothing of the lessons indexed, only the status of those not indexed
  (one may have come alive), and a lesson that died while indexed is caught when it turns up as a
  candidate. At 10k-100k live lessons a search costs 1.5-2x the raw faiss search under it, 4-5x with
  half not live (``benchmarks/retrieval_speed.py``), with the results of a full sync before each search.

Left out on purpose: scoring and the budget (``retrieval.py``), approximate indexes (IVF, HNSW; notebook
05 measures where they pay off), and lesson texts edited in place (memory never does that).
"""

import bisect
from collections.abc import Sequence
from datetime import UTC, datetime
from itertools import islice
from operator import attrgetter

import numpy as np

from ralph_mini.embed import Embedder, KeywordIndex, exact_cosine, keyword_words
from ralph_mini.experience import LIVE
from ralph_mini.memory import Experience, Memory, days_since

# faiss threads per search: one query gains nothing from a second at any size; it only spins, taking a
# core from another worker (``benchmarks/retrieval_speed.py --thread-sweep`` measures it).
SEARCH_THREADS = 1

# Scores are compared to this many decimals: below 1e-6 a difference is float rounding noise (a BLAS
# kernel, a thread count), not meaning. So a cosine of 1.9e-9 between unrelated texts is 0, and two
# lessons whose scores agree to 6 decimals are a tie, broken by a stable key (the rule text or id).
SCORE_DECIMALS = 6


def experience_text(experience: Experience) -> str:
    """What gets embedded: the task type, the rule, and what taught it."""
    return f"{experience.task_type.replace('_', ' ')}: {experience.rule}. {experience.failure_reason}"


class VectorIndex:
    """A faiss ``IndexIDMap2(IndexFlatIP)``: exact cosine search, ids mapped back to experience ids."""

    def __init__(self, embedder: Embedder, threads: int | None = SEARCH_THREADS):
        import faiss  # here, not at the top: notebooks before 05 never pay for loading it

        self.embedder, self.threads = embedder, threads  # threads: None leaves faiss's own setting
        self.index = faiss.IndexIDMap2(faiss.IndexFlatIP(embedder.dim))
        self.ids: dict[int, str] = {}  # faiss int64 id -> experience id
        self.omp = faiss.omp_get_max_threads, faiss.omp_set_num_threads

    def __len__(self) -> int:
        return self.index.ntotal

    def add(self, experiences: Sequence[Experience]) -> None:
        new = [e for e in experiences if faiss_id(e.id) not in self.ids]
        if new:
            self.add_vectors([e.id for e in new], self.embedder.embed([experience_text(e) for e in new]))

    def add_vectors(self, experience_ids: Sequence[str], vectors: np.ndarray) -> None:
        """Add vectors already embedded (``LiveLessons`` embeds each lesson once)."""
        keys = np.array([faiss_id(i) for i in experience_ids], dtype=np.int64)
        self.index.add_with_ids(np.ascontiguousarray(vectors, dtype=np.float32), keys)
        self.ids.update(zip(keys.tolist(), experience_ids, strict=True))

    def remove(self, experience_ids: Sequence[str]) -> None:
        keys = [faiss_id(i) for i in experience_ids if faiss_id(i) in self.ids]
        if keys:
            self.index.remove_ids(np.array(keys, dtype=np.int64))
            for key in keys:
                del self.ids[key]

    def sync(self, memory: Memory) -> None:
        """Index exactly the live experiences of ``memory`` (active, not past expiry): add the new,
        remove the gone. It reads memory and never changes it."""
        active = {e.id: e for e in memory.live()}
        self.remove([i for i in self.ids.values() if i not in active])
        self.add(list(active.values()))

    def search(self, text: str, k: int) -> list[tuple[str, float]]:
        """[(experience id, cosine)], best first, ties by id: the same on every CPU.

        faiss proposes twice ``k`` candidates (its float32 sums depend on the BLAS kernel and thread
        count, so ranks near the cut may swap); each is then scored exactly (``exact_cosine``),
        rounded to ``SCORE_DECIMALS``, and the best ``k`` kept.
        """
        return self.search_and_propose(text, k)[0]

    def search_and_propose(self, text: str, k: int) -> tuple[list[tuple[str, float]], list[str]]:
        """``search``, plus the ids faiss proposed (``LiveLessons`` checks they are all still live)."""
        if len(self) == 0 or k <= 0:
            return [], []
        query = self.embedder.embed([text])[0]
        _, keys = self.on_threads(self.index.search, query[None, :], min(2 * k, len(self)))
        proposed = [self.ids[int(key)] for key in keys[0] if key >= 0]
        vectors = self.index.reconstruct_batch(np.array([faiss_id(i) for i in proposed], dtype=np.int64))
        found = [
            (i, round(exact_cosine(query, vector), SCORE_DECIMALS))
            for i, vector in zip(proposed, vectors, strict=True)
        ]
        found.sort(key=lambda pair: (-pair[1], pair[0]))
        return found[:k], proposed

    def on_threads(self, search, *args):
        """``search(*args)`` on ``self.threads`` threads; the process's setting restored after."""
        get, set_threads = self.omp
        before = get()
        set_threads(self.threads or before)
        found = search(*args)
        set_threads(before)
        return found


def faiss_id(experience_id: str) -> int:
    """Experience ids are 12 hex digits: 48 bits, a valid faiss int64 id."""
    return int(experience_id, 16)


# What a search reads of each lesson not indexed: the fields that decide whether it is live.
STATUS, LAST_HIT = attrgetter("status"), attrgetter("last_hit_at")


class LiveLessons:
    """Both indexes (keyword words, vectors) of a memory's live lessons: active, not past expiry.

    Slot i is the i-th experience of ``memory.experiences``. Memory never deletes and only appends, so a
    slot keeps its lesson and slot order is memory order, the order the old full scan broke ties in.
    A lesson is tokenised and embedded once, when it first goes live. Keeping in step costs little:

    - every search (``follow``) takes in appended lessons and compares two fields of each lesson *not*
      indexed with the last look (one may have come alive): the one read that grows with memory, 7 ms
      for 50k such lessons on a loaded core (memory says nothing of what changed); none for the indexed;
    - a lesson that died while indexed (removed, expired) still weighs 0, so it can only matter by
      taking a candidate's place: the retriever checks its candidates (``any_dead``) and, if one died,
      ``resync`` re-reads every lesson, as a full ``VectorIndex.sync`` would.

    It reads memory and never changes it.
    """

    def __init__(self, embedder: Embedder):
        self.vectors = VectorIndex(embedder)
        self.keywords = KeywordIndex()
        self.lessons: list[Experience] = []  # memory.experiences.values(), as appended
        self.seen: list[tuple[str, str] | None] = []  # (status, last_hit_at) per slot, as last read
        self.active = np.zeros(0, dtype=bool)
        self.last_hit = np.zeros(0, dtype="datetime64[us]")  # UTC; NaT unless active
        self.live = np.zeros(0, dtype=bool)  # in both indexes now
        self.clock_seen: tuple[datetime, float] | None = None  # (now, expire_after_days) last used
        self.slots: dict[str, int] = {}  # experience id -> slot, once tokenised
        self.by_rule: list[tuple[str, int]] = []  # tokenised (rule, slot), sorted: the tie order
        self.rank = np.zeros(0, dtype=np.int64)  # slot -> its place in by_rule (-1: not tokenised)
        self.stash: dict[int, np.ndarray] = {}  # vectors taken out of faiss, kept for a comeback
        self.watched: tuple[list, np.ndarray] | None = None  # not indexed; slots of the active ones
        self.watched_seen: tuple = (None,) * 4  # their statuses, last hits, and the clock at the last look

    def follow(self, memory: Memory) -> bool:
        """Every search: take in appended lessons, re-read those not indexed. False if memory shrank."""
        size = len(memory.experiences)
        if size < len(self.lessons):
            return False
        if size > len(self.lessons):
            self.append(list(islice(memory.experiences.values(), len(self.lessons), None)))
        looked = self.look(memory)
        if looked != self.watched_seen and (looked[:2] != self.watched_seen[:2] or self.alive(looked)):
            self.update(np.flatnonzero(~self.live).tolist(), memory)  # one has come alive: take it in
            self.watched = None
            looked = self.look(memory)
        self.watched_seen = looked
        return True

    def look(self, memory: Memory) -> tuple:
        """What decides whether a lesson not indexed comes alive: the statuses of all, the last hits of
        those active (expired by the clock), and the clock."""
        if self.watched is None:
            slots = np.flatnonzero(~self.live)
            active = slots[self.active[slots]]
            self.watched = list(map(self.lessons.__getitem__, slots.tolist())), active
            self.watched_seen = None, None, None, None
        statuses = list(map(STATUS, self.watched[0]))
        last_hits = list(map(LAST_HIT, map(self.lessons.__getitem__, self.watched[1].tolist())))
        return statuses, last_hits, memory.clock(), memory.config.expire_after_days

    def alive(self, looked: tuple) -> bool:
        """Only the clock moved: is one of the active lessons not indexed within expiry now?"""
        return bool(self.live_at(self.watched[1], looked[2], looked[3]).any())

    def live_at(self, slots: np.ndarray, now: datetime, expire_after_days: float) -> np.ndarray:
        """Memory.live's test, for many slots at once: active and days_since <= expire_after_days.
        Microseconds over microseconds per day is one correctly rounded division, as in
        timedelta / timedelta, so the days are the very floats ``days_since`` gives."""
        days = (np.datetime64(utc(now), "us") - self.last_hit[slots]).astype(np.int64) / 86_400_000_000
        return self.active[slots] & (days <= expire_after_days)

    def resync(self, memory: Memory) -> bool:
        """Re-read every lesson. False if memory was rebuilt, not appended to (then start afresh)."""
        lessons = list(memory.experiences.values())
        if lessons[: len(self.lessons)] != self.lessons:
            return False
        self.append(lessons[len(self.lessons) :])
        self.update(list(range(len(self.lessons))), memory, everything=True)
        return True

    def append(self, lessons: list[Experience]) -> None:
        grow = len(lessons)
        self.lessons += lessons
        self.watched = None if grow else self.watched
        self.seen += [None] * grow
        self.active = np.concatenate([self.active, np.zeros(grow, dtype=bool)])
        self.last_hit = np.concatenate([self.last_hit, np.full(grow, np.datetime64("NaT", "us"))])
        self.live = np.concatenate([self.live, np.zeros(grow, dtype=bool)])
        self.rank = np.concatenate([self.rank, np.full(grow, -1, dtype=np.int64)])

    def update(self, slots: list[int], memory: Memory, everything: bool = False) -> None:
        """Re-read these slots; take out those no longer live, then put in those now live (in slot
        order: the order ``VectorIndex.sync`` adds them)."""
        clock_seen = (memory.clock(), memory.config.expire_after_days)
        fields = [(e.status, e.last_hit_at) for e in map(self.lessons.__getitem__, slots)]
        changed = [(s, f) for s, f in zip(slots, fields, strict=True) if f != self.seen[s]]
        if not changed and clock_seen == self.clock_seen and not everything:
            return  # the same fields at the same time: the same liveness
        for slot, (status, last_hit) in changed:
            self.seen[slot] = status, last_hit
            self.active[slot] = status in LIVE
            if self.active[slot]:
                self.last_hit[slot] = utc(datetime.fromisoformat(last_hit))
        index = np.array(slots, dtype=np.int64)
        live, was = self.live_at(index, *clock_seen), self.live[index]
        self.take_out(index[was & ~live].tolist())
        self.put_in(index[live & ~was].tolist())
        if (was != live).any():
            self.watched = None  # the lessons not indexed are others now
        self.live[index] = live
        self.clock_seen = clock_seen

    def any_dead(self, slots: Sequence[int], memory: Memory) -> bool:
        """Has one of these indexed lessons died since it was read? (``Memory.live``'s test, read now)"""
        now, expire = memory.clock(), memory.config.expire_after_days
        lessons = map(self.lessons.__getitem__, slots)
        return any(e.status not in LIVE or days_since(e.last_hit_at, now) > expire for e in lessons)

    def take_out(self, slots: list[int]) -> None:
        if slots:
            ids = [self.lessons[s].id for s in slots]
            keys = np.array([faiss_id(i) for i in ids], dtype=np.int64)
            self.stash.update(zip(slots, self.vectors.index.reconstruct_batch(keys), strict=True))
            self.vectors.remove(ids)

    def put_in(self, slots: list[int]) -> None:
        texts = {s: experience_text(self.lessons[s]) for s in slots if s not in self.stash}
        fresh = [s for s in texts if self.lessons[s].id not in self.slots]
        self.slots.update((self.lessons[s].id, s) for s in fresh)
        self.keywords.add(fresh, [keyword_words(texts[s]) for s in fresh])
        self.place(fresh)
        if not slots:
            return
        todo = list(texts)
        matrix = self.vectors.embedder.embed(list(texts.values()))
        if len(todo) < len(slots):  # some come back: their vectors were kept when they left
            vectors = dict(zip(todo, matrix, strict=True)) | {
                s: self.stash.pop(s) for s in slots if s in self.stash
            }
            matrix = np.stack([vectors[s] for s in slots])
        self.vectors.add_vectors([self.lessons[s].id for s in slots], matrix)

    def place(self, fresh: list[int]) -> None:
        """Give new lessons their place in (rule, slot) order, so a tie is broken by one number."""
        if len(fresh) > 64:  # many at once (the first search): sort them all
            self.by_rule = sorted(self.by_rule + [(self.lessons[s].rule, s) for s in fresh])
            self.rank[[s for _, s in self.by_rule]] = np.arange(len(self.by_rule))
            return
        for slot in fresh:
            place = bisect.bisect(self.by_rule, (self.lessons[slot].rule, slot))
            self.by_rule.insert(place, (self.lessons[slot].rule, slot))
            self.rank[self.rank >= place] += 1
            self.rank[slot] = place

    def keyword_counts(self, wanted: set[str]) -> np.ndarray:
        """Per slot: how many of the query's words the live lesson has (0 for the rest)."""
        return self.keywords.counts(wanted, len(self.lessons)) * self.live

    def best_by_words(self, counts: np.ndarray, m: int) -> list[int]:
        """The ``m`` slots sharing most words, ties by rule then memory order (the old full sort)."""
        hits = np.flatnonzero(counts)
        if m <= 0:
            return []
        if len(hits) > m:
            keys = counts[hits] * (len(self.by_rule) + 1) - self.rank[hits]
            hits = hits[np.argpartition(-keys, m - 1)[:m]]
        return sorted(hits.tolist(), key=lambda s: (-counts[s], self.rank[s]))


def utc(moment: datetime) -> datetime:
    """A naive time as it is; an aware one in UTC, made naive (numpy's datetime64 has no time zone)."""
    return moment.astimezone(UTC).replace(tzinfo=None) if moment.tzinfo else moment
