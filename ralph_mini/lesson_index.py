"""The indexes behind retrieval, in step with memory (notebook 05).

- ``VectorIndex`` keeps a faiss inner-product index of unit vectors (so scores are cosines), with ids
  mapping back to experiences; add, remove, and a full ``sync`` with a memory. Its ``search`` re-scores
  faiss's candidates exactly, so rankings are the same on every CPU.
- ``LiveLessons`` keeps a ``VectorIndex`` and a keyword index (``embed.KeywordIndex``) equal to the
  memory's live lessons without a sweep per search: each lesson is tokenised and embedded once, when it
  first goes live; each search compares two fields per lesson with what it saw the last time and
  re-reads only what changed. At 100k lessons that is what keeps a search near the raw faiss search
  (``benchmarks/retrieval_speed.py``).

Left out on purpose: scoring and the budget (``retrieval.py``), approximate indexes (IVF, HNSW; notebook
05 measures where they pay off), and lesson texts edited in place (memory never does that).
"""

import bisect
import math
from collections.abc import Sequence
from datetime import UTC, datetime
from operator import attrgetter

import numpy as np

from ralph_mini.embed import Embedder, KeywordIndex, keyword_words
from ralph_mini.memory import Experience, Memory

# Scores are compared to this many decimals: below 1e-6 a difference is float rounding noise (a BLAS
# kernel, a thread count), not meaning. So a cosine of 1.9e-9 between unrelated texts is 0, and two
# lessons whose scores agree to 6 decimals are a tie, broken by a stable key (the rule text or id).
SCORE_DECIMALS = 6


def experience_text(experience: Experience) -> str:
    """What gets embedded: the task type, the rule, and what taught it."""
    return f"{experience.task_type.replace('_', ' ')}: {experience.rule}. {experience.failure_reason}"


class VectorIndex:
    """A faiss ``IndexIDMap2(IndexFlatIP)``: exact cosine search, ids mapped back to experience ids."""

    def __init__(self, embedder: Embedder):
        import faiss  # here, not at the top: notebooks before 05 never pay for loading it

        self.embedder = embedder
        self.index = faiss.IndexIDMap2(faiss.IndexFlatIP(embedder.dim))
        self.ids: dict[int, str] = {}  # faiss int64 id -> experience id

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
        if len(self) == 0 or k <= 0:
            return []
        query = self.embedder.embed([text])[0]
        _, keys = self.index.search(query[None, :], min(2 * k, len(self)))
        found = [
            (self.ids[int(key)], round(exact_cosine(query, self.index.reconstruct(int(key))), SCORE_DECIMALS))
            for key in keys[0]
            if key >= 0
        ]
        found.sort(key=lambda pair: (-pair[1], pair[0]))
        return found[:k]


def exact_cosine(a: np.ndarray, b: np.ndarray) -> float:
    """The inner product of two unit vectors, identical on every machine: each float32 product is exact
    in float64, and ``math.fsum`` adds them exactly, in any order (a BLAS kernel sums in its own order)."""
    return math.fsum((a.astype(np.float64) * b.astype(np.float64)).tolist())


def faiss_id(experience_id: str) -> int:
    """Experience ids are 12 hex digits: 48 bits, a valid faiss int64 id."""
    return int(experience_id, 16)


# What a search compares to see whether a lesson changed since the last search: the fields liveness reads.
LIVENESS_FIELDS = attrgetter("status", "last_hit_at")


class LiveLessons:
    """Both indexes (keyword words, vectors) of a memory's live lessons: active, not past expiry.

    Slot i is the i-th experience of ``memory.experiences``. Memory never deletes, so a slot keeps its
    lesson and slot order is memory order, the order the old full scan broke ties in. A lesson is
    tokenised and embedded once, when it first goes live. ``follow`` reads two fields per lesson and
    re-reads only the lessons whose fields changed; removing and adding vectors happens in the order a
    full ``VectorIndex.sync`` would use, so faiss holds the same vectors in the same order.
    It reads memory and never changes it.
    """

    def __init__(self, embedder: Embedder):
        self.vectors = VectorIndex(embedder)
        self.keywords = KeywordIndex()
        self.lessons: list[Experience] = []  # memory.experiences.values() as last followed
        self.fields: list[tuple[str, str]] = []  # (status, last_hit_at) per slot, as last seen
        self.active = np.zeros(0, dtype=bool)
        self.last_hit = np.zeros(0, dtype="datetime64[us]")  # UTC; NaT unless active
        self.live = np.zeros(0, dtype=bool)  # in both indexes now
        self.clock_seen: tuple[datetime, float] | None = None  # (now, expire_after_days) last used
        self.slots: dict[str, int] = {}  # experience id -> slot, once tokenised
        self.by_rule: list[tuple[str, int]] = []  # tokenised (rule, slot), sorted: the tie order
        self.rank = np.zeros(0, dtype=np.int64)  # slot -> its place in by_rule
        self.stash: dict[int, np.ndarray] = {}  # vectors taken out of faiss, kept for a comeback

    def follow(self, memory: Memory) -> bool:
        """Bring the indexes in step with ``memory``; False if memory was rebuilt, not appended to."""
        lessons = list(memory.experiences.values())
        if lessons[: len(self.lessons)] != self.lessons:
            return False
        fields = list(map(LIVENESS_FIELDS, lessons))
        clock_seen = (memory.clock(), memory.config.expire_after_days)
        if fields == self.fields and clock_seen == self.clock_seen:
            return True
        old, grow = self.fields, len(fields) - len(self.fields)
        self.active = np.concatenate([self.active, np.zeros(grow, dtype=bool)])
        self.last_hit = np.concatenate([self.last_hit, np.full(grow, np.datetime64("NaT", "us"))])
        self.live = np.concatenate([self.live, np.zeros(grow, dtype=bool)])
        self.rank = np.concatenate([self.rank, np.zeros(grow, dtype=np.int64)])
        changed = [i for i, pair in enumerate(zip(fields, old, strict=False)) if pair[0] != pair[1]]
        for slot in changed + list(range(len(old), len(fields))):
            status, last_hit = fields[slot]
            self.active[slot] = status == "active"
            self.last_hit[slot] = utc(datetime.fromisoformat(last_hit)) if status == "active" else None
        # Memory.live's test, for every slot at once: days_since <= expire_after_days. Microseconds
        # over microseconds per day is one correctly rounded division, as in timedelta / timedelta.
        days = (np.datetime64(utc(clock_seen[0]), "us") - self.last_hit).astype(np.int64) / 86_400_000_000
        live = self.active & (days <= clock_seen[1])
        self.lessons, self.fields, self.clock_seen = lessons, fields, clock_seen
        self.take_out(np.flatnonzero(self.live & ~live).tolist())
        self.put_in(np.flatnonzero(live & ~self.live).tolist())
        self.live = live
        return True

    def take_out(self, slots: list[int]) -> None:
        if slots:
            ids = [self.lessons[s].id for s in slots]
            keys = np.array([faiss_id(i) for i in ids], dtype=np.int64)
            self.stash.update(zip(slots, self.vectors.index.reconstruct_batch(keys), strict=True))
            self.vectors.remove(ids)

    def put_in(self, slots: list[int]) -> None:
        fresh = [s for s in slots if self.lessons[s].id not in self.slots]
        for slot in fresh:
            self.slots[self.lessons[slot].id] = slot
            self.keywords.add(slot, keyword_words(experience_text(self.lessons[slot])))
        self.place(fresh)
        if not slots:
            return
        todo = [s for s in slots if s not in self.stash]
        embedded = self.vectors.embedder.embed([experience_text(self.lessons[s]) for s in todo])
        vectors = dict(zip(todo, embedded, strict=True)) | {
            s: self.stash.pop(s) for s in slots if s not in todo
        }
        matrix = embedded if len(todo) == len(slots) else np.stack([vectors[s] for s in slots])
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
