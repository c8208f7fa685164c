"""The indexes behind retrieval, in step with memory (notebook 05).

- ``VectorIndex`` keeps a faiss inner-product index of unit vectors (so scores are cosines), with ids
  mapping back to experiences; add, remove, and a full ``sync`` with a memory. Its ``search`` re-scores
  faiss's candidates exactly, so rankings are the same on every CPU.
- ``LiveLessons`` keeps a ``VectorIndex`` and a keyword index (``embed.KeywordIndex``) equal to the
  memory's live lessons without a sweep per search: each lesson is tokenised and embedded once, when it
  first goes live; a search re-reads only the lessons whose status or last hit was set since the last
  one (memory's ledger, ``experience.LessonChanges``, names them, hand edits included), and a lesson
  that died by the clock while indexed is caught when it turns up as a candidate (checked only once
  the oldest live lesson could have expired). The results of a full sync before each search, at
  1.1-1.5x the raw faiss search under it at 10k-100k lessons, 1.6-1.9x at 10k with half not live
  (on two machines, 2026-12-05; 2.05-2.16x for the code before the last trims), where faiss scans only
  5k and the per-search work is slowed by the caches its scan swept (``benchmarks/retrieval_speed.py``).

Left out on purpose: scoring and the budget (``retrieval.py``), approximate indexes (IVF, HNSW; notebook
05 measures where they pay off), and lesson texts edited in place (memory never does that).
"""

import bisect
from collections.abc import Sequence
from datetime import datetime
from itertools import islice

import numpy as np

from ralph_mini.embed import Embedder, KeywordIndex, keyword_words, rounded_cosines
from ralph_mini.experience import LIVE
from ralph_mini.lesson_dict import LessonDict
from ralph_mini.live_filing import micros
from ralph_mini.memory import Experience, Memory

# faiss threads per search: one query gains nothing from a second at any size; it only spins, taking a
# core from another worker (``benchmarks/retrieval_speed.py --thread-sweep`` measures it).
SEARCH_THREADS = 1
NEVER = 2**62  # an "oldest last hit" when no lesson is live: later than any clock

# Scores are compared to this many decimals: below 1e-6 a difference is float rounding noise (a BLAS
# kernel, a thread count), not meaning. So a cosine of 1.9e-9 between unrelated texts is 0, and two
# lessons whose scores agree to 6 decimals are a tie, broken by a stable key (the rule text or id).
SCORE_DECIMALS = 6

MICROS_PER_DAY = 86_400_000_000  # last hits are kept as microseconds since 1970 (``live_filing.micros``)


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
        """[(experience id, cosine)], best first, ties by id: the same on every CPU. faiss proposes twice
        ``k`` candidates (its float32 sums depend on the BLAS kernel and thread count, so ranks near the
        cut may swap); each is scored exactly (``rounded_cosines``), and the best ``k`` kept."""
        return self.search_and_propose(text, k)[0]

    def search_and_propose(self, text: str, k: int) -> tuple[list[tuple[str, float]], list[str]]:
        """``search``, plus the ids faiss proposed (``LiveLessons`` checks they are all still live)."""
        if not self.ids or k <= 0:
            return [], []
        query = self.embedder.embed([text])[0]
        wanted = min(2 * k, len(self.ids))  # (the vectors come back with the ids, in one call)
        _, keys, vectors = self.on_threads(self.index.search_and_reconstruct, query[None, :], wanted)
        keys, vectors = keys[0], vectors[0]
        if keys[-1] < 0:  # (a flat index fills every place it is asked for: never, unless a NaN)
            keys, vectors = keys[keys >= 0], vectors[keys >= 0]
        proposed = list(map(self.ids.__getitem__, keys.tolist()))
        found = list(zip(proposed, rounded_cosines(query, vectors, SCORE_DECIMALS), strict=True))
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


class LiveLessons:
    """Both indexes (keyword words, vectors) of a memory's live lessons: active, not past expiry.

    Slot i is the i-th experience of ``memory.experiences``. Memory never deletes and only appends, so a
    slot keeps its lesson and slot order is memory order, the order the old full scan broke ties in (a
    hand that swaps or takes out a lesson, ``lesson_dict``, makes the retriever start afresh).
    A lesson is tokenised and embedded once, when it first goes live. Keeping in step costs what changed,
    not what memory holds:

    - every search (``follow``) takes in appended lessons and re-reads the lessons whose status or last
      hit was set since the last search, by memory or by hand: memory's ledger (``memory.changes``) names
      them. Only a clock moved back (or a longer expiry) makes it re-test the active lessons left out;
    - a lesson that died by the clock while indexed still weighs 0, so it can only matter by taking a
      candidate's place: the retriever checks its candidates (``any_dead``) and, if one died, ``resync``
      re-reads every lesson, as a full ``VectorIndex.sync`` would.

    It reads memory and never changes a lesson (it asks each to report to memory's ledger: ``watch``).
    """

    def __init__(self, embedder: Embedder):
        self.vectors = VectorIndex(embedder)
        self.keywords = KeywordIndex()
        self.lessons: list[Experience] = []  # memory.experiences.values(), as appended
        self.slot_of: dict[str, int] = {}  # experience id -> slot, for every lesson appended
        self.seen: list[tuple[str, str] | None] = []  # (status, last_hit_at) per slot, as last read
        self.active = np.zeros(0, dtype=bool)
        self.last_hit = np.zeros(0, dtype=np.int64)  # microseconds since 1970, UTC; 0 unless active
        self.live = np.zeros(0, dtype=bool)  # in both indexes now
        self.oldest_hit = NEVER  # at most the earliest last hit of a live lesson (``any_dead``)
        self.clock_seen: tuple[datetime, float] | None = None  # (now, expire_after_days) last judged at
        self.read_upto, self.source, self.rewrites = 0, None, 0  # memory.changes.count; its dict, rewrites
        self.slots: dict[str, int] = {}  # experience id -> slot, once tokenised
        self.by_rule: list[tuple[str, int]] = []  # tokenised (rule, slot), sorted: the tie order
        self.rank = np.zeros(0, dtype=np.int64)  # slot -> 1 + its place in by_rule (0: not tokenised)
        self.live_count = 0  # live slots (each tokenised: fewer than len(by_rule) when some died)
        self.stash: dict[int, np.ndarray] = {}  # vectors taken out of faiss, kept for a comeback

    def follow(self, memory: Memory) -> bool:
        """Every search: take in appended lessons, re-read those changed. False if memory's dict was
        replaced, or a hand swapped a lesson in or took one out (``reads``): then start afresh."""
        if not self.reads(memory.experiences):
            return False
        size, known = len(memory.experiences), len(self.lessons)
        if size > known:  # (islice walks the known lessons too: only when there are new ones)
            self.append(list(islice(memory.experiences.values(), known, None)), memory)
        changed = {self.slot_of[i] for i in memory.changes.since(self.read_upto) if i in self.slot_of}
        changed.update(range(known, size))
        clock = memory.clock(), memory.config.expire_after_days
        if clock[0] < self.clock_seen[0] or clock[1] > self.clock_seen[1]:  # an expired one may be back
            changed.update(np.flatnonzero(self.active & ~self.live).tolist())
        self.read_upto, self.clock_seen = memory.changes.count, clock  # the left-out are dead at this clock
        if changed:
            self.update(sorted(changed), clock)
        return True

    def live_at(self, slots: np.ndarray, now: datetime, expire_after_days: float) -> np.ndarray:
        """Memory.live's test, for many slots at once: active and days_since <= expire_after_days.
        Microseconds over microseconds per day is one correctly rounded division, as in
        timedelta / timedelta, so the days are the very floats ``days_since`` gives."""
        days = (micros(now) - self.last_hit[slots]) / MICROS_PER_DAY
        return self.active[slots] & (days <= expire_after_days)

    def resync(self, memory: Memory) -> bool:
        """Re-read every lesson. False if memory was rebuilt, not appended to (then start afresh)."""
        if self.lessons and not self.reads(memory.experiences):
            return False
        self.append(list(islice(memory.experiences.values(), len(self.lessons), None)), memory)
        self.read_upto, self.oldest_hit = memory.changes.count, NEVER  # (every live one is read again)
        self.source, self.rewrites = memory.experiences, memory.experiences.rewrites
        self.update(list(range(len(self.lessons))), (memory.clock(), memory.config.expire_after_days))
        return True

    def reads(self, lessons: LessonDict) -> bool:
        """Is ``lessons`` the dict the slots were read from, only appended to since (``lesson_dict``)?"""
        return lessons is self.source and lessons.rewrites == self.rewrites

    def append(self, lessons: list[Experience], memory: Memory) -> None:
        """Take in lessons appended to memory; from now on each reports its changes to memory's ledger."""
        grow = len(lessons)
        for lesson in lessons:
            lesson.watch(memory.changes)
        self.slot_of.update((e.id, slot) for slot, e in enumerate(lessons, len(self.lessons)))
        self.lessons += lessons
        self.seen += [None] * grow
        self.active = np.concatenate([self.active, np.zeros(grow, dtype=bool)])
        self.last_hit = np.concatenate([self.last_hit, np.zeros(grow, dtype=np.int64)])
        self.live = np.concatenate([self.live, np.zeros(grow, dtype=bool)])
        self.rank = np.concatenate([self.rank, np.zeros(grow, dtype=np.int64)])

    def update(self, slots: list[int], clock: tuple[datetime, float]) -> None:
        """Re-read these slots at ``clock`` (now, expire_after_days); take out those no longer live, then
        put in those now live (in slot order: the order ``VectorIndex.sync`` adds them)."""
        self.clock_seen = clock  # every lesson left out is not live at this clock
        fields = [(e.status, e.last_hit_at) for e in map(self.lessons.__getitem__, slots)]
        for slot, (status, last_hit) in zip(slots, fields, strict=True):
            if (status, last_hit) != self.seen[slot]:
                self.seen[slot] = status, last_hit
                self.active[slot] = status in LIVE
                if self.active[slot]:
                    self.last_hit[slot] = micros(datetime.fromisoformat(last_hit))
        index = np.array(slots, dtype=np.int64)
        live, was = self.live_at(index, *clock), self.live[index]
        gone, new, alive = index[was & ~live].tolist(), index[live & ~was].tolist(), index[live]
        self.take_out(gone)
        self.put_in(new)
        self.live[index], self.live_count = live, self.live_count + len(new) - len(gone)
        if len(alive):  # one read live may have an earlier last hit than any before (a hand edit)
            self.oldest_hit = min(self.oldest_hit, int(self.last_hit[alive].min()))

    def any_dead(self, slots: Sequence[int], memory: Memory) -> bool:
        """Has one of these indexed lessons died by the clock since it was read? (``Memory.live``'s test;
        what was set on them since, ``follow`` has just read from memory's ledger)"""
        now, expiry = memory.clock(), memory.config.expire_after_days
        if (micros(now) - self.oldest_hit) / MICROS_PER_DAY <= expiry:  # none live is that old
            return False
        return not self.live_at(np.array(slots, dtype=np.int64), now, expiry).all()

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
            self.rank[[s for _, s in self.by_rule]] = np.arange(1, len(self.by_rule) + 1)
            return
        for slot in fresh:
            place = bisect.bisect(self.by_rule, (self.lessons[slot].rule, slot))
            self.by_rule.insert(place, (self.lessons[slot].rule, slot))
            self.rank[self.rank > place] += 1
            self.rank[slot] = place + 1

    def keyword_counts(self, wanted: set[str]) -> np.ndarray:
        """Per slot: how many of the query's words the live lesson has (0 for the rest)."""
        counts = self.keywords.counts(wanted, len(self.lessons))  # only tokenised lessons have words
        if self.live_count < len(self.by_rule):  # some of those died since: their words do not count
            counts *= self.live
        return counts

    def best_by_words(self, counts: np.ndarray, m: int) -> list[int]:
        """The ``m`` slots sharing most words, ties by rule then memory order (the old full sort).

        One key per slot orders them all: rank - count x (R + 2), with R tokenised lessons and rank
        1..R their (rule, slot) order, is negative only for a slot sharing a word, lower for more
        words, then for a lower rank; a slot not tokenised has 0, a tokenised one sharing nothing more.
        Two passes over every slot are cheaper than picking out the slots that share a word first, when
        most do (a task type's words are in every lesson of that type)."""
        if m <= 0:
            return []
        keys = self.rank - counts * (len(self.by_rule) + 2)
        best = np.argpartition(keys, m - 1)[:m] if len(keys) > m else np.arange(len(keys))
        best = best[keys[best] < 0]
        return best[np.argsort(keys[best], kind="stable")].tolist()
