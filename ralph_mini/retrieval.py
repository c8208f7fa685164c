"""Vector retrieval with faiss, hybrid scoring, and a budgeted injection (notebook 05).

Embeddings (``embed.py``) put similar text near each other; this module finds the lessons nearest to a
task and decides which of them fit in the prompt.

- ``lesson_index.py`` keeps the live lessons in a faiss index (``VectorIndex``) and a keyword index,
  each lesson tokenised once, kept in step with memory without a sweep per search (``LiveLessons``).
- ``Retriever.search`` is hybrid: keyword candidates first, vector candidates second, then

      score = relevance x weight,   relevance = 0.5 x keyword overlap + 0.5 x cosine,
      weight = confidence x decay   (memory.py; 0 for candidates, removed or expired rules)

  Generative Agents (Park et al., 2023) *add* min-max-normalised recency, importance and relevance.
  We *multiply*, so that an expired or distrusted lesson scores 0 however relevant it looks: the
  seed's pollution lesson says a bad lesson must not get in at all, not merely rank lower.
- ``select_within_budget``: the first injection takes at most ``injection_budget`` (15%) of the
  model's context and at most ``top_k`` (3) experiences, best first, skipping any that do not fit.

Left out on purpose: approximate indexes (IVF, HNSW): exact search over 100k lessons is already fast;
notebook 05 measures where they pay off.
"""

import json
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources

import numpy as np

from ralph_mini.embed import Embedder, HashingEmbedder, keyword_words
from ralph_mini.lesson_index import (  # noqa: F401 (re-exported: notebook 05 and the tests read them here)
    SCORE_DECIMALS,
    LiveLessons,
    VectorIndex,
    experience_text,
    faiss_id,
)
from ralph_mini.memory import Experience, Memory
from ralph_mini.rules import bullets
from ralph_mini.tokens import count_tokens


def keyword_score(query: str, text: str) -> float:
    """Share of the query's content words found in the text: 0..1. Misses paraphrases and Chinese."""
    wanted = keyword_words(query)
    return len(wanted & keyword_words(text)) / len(wanted) if wanted else 0.0


@dataclass(frozen=True)
class Scored:
    experience: Experience
    keyword: float
    cosine: float  # 0 in keyword mode, where no vector is computed
    weight: float
    relevance: float  # by mode: keyword, cosine, or 0.5 x keyword + 0.5 x cosine

    @property
    def score(self) -> float:
        return self.relevance * self.weight


class Retriever:
    """Keyword, vector or hybrid search over a memory's live experiences."""

    MODES = ("keyword", "vector", "hybrid")

    def __init__(
        self, memory: Memory, embedder: Embedder | None = None, mode: str = "hybrid", candidates: int = 10
    ):
        if mode not in self.MODES:
            raise ValueError(f"mode={mode!r}: use one of {', '.join(self.MODES)}")
        self.memory, self.mode, self.candidates = memory, mode, candidates
        self.lessons = LiveLessons(embedder or HashingEmbedder())

    @property
    def index(self) -> VectorIndex:
        return self.lessons.vectors

    def search(self, query: str, k: int = 3) -> list[Scored]:
        self.keep_in_step()
        wanted = keyword_words(query)
        pool, counts, cosines, checked = self.pool(wanted, query)
        if self.lessons.any_dead(checked, self.memory):  # one died while indexed: re-read them all
            self.keep_in_step(everything=True)
            pool, counts, cosines, _ = self.pool(wanted, query)
        now, lessons, ranked = self.memory.clock(), self.lessons.lessons, []
        for slot in pool:  # (each candidate weighed, a ``Scored`` made only for the k returned)
            experience = lessons[slot]
            keyword = int(counts[slot]) / len(wanted) if wanted else 0.0
            cosine = cosines.get(experience.id, 0.0)
            relevance, weight = self.relevance(keyword, cosine), self.memory.weight(experience, now)
            if relevance * weight > 0:
                ranked.append(
                    (-(relevance * weight), experience.rule, (experience, keyword, cosine, weight, relevance))
                )
        ranked.sort(key=lambda found: found[:2])  # by score, then rule; stable: then pool order
        return [Scored(*fields) for _, _, fields in ranked[:k]]

    def keep_in_step(self, everything: bool = False) -> None:
        everything = everything or self.lessons.clock_seen is None  # the first search reads everything
        kept = self.lessons.resync(self.memory) if everything else self.lessons.follow(self.memory)
        if not kept:  # memory was rebuilt, not appended to: index it afresh
            self.lessons = LiveLessons(self.index.embedder)
            self.lessons.resync(self.memory)

    def pool(self, wanted: set[str], query: str) -> tuple[list[int], np.ndarray, dict[str, float], list[int]]:
        """The candidate slots, in the order the mode takes them; words shared per slot; cosines; and
        the slots whose liveness decides the pool (keyword candidates and all that faiss proposed)."""
        counts = self.lessons.keyword_counts(wanted)
        if self.mode == "keyword":  # every lesson sharing a word: a dead one weighs 0 and drops out
            return np.flatnonzero(counts).tolist(), counts, {}, []
        found, proposed = self.index.search_and_propose(query, self.candidates)
        slot, cosines = self.lessons.slots, dict(found)
        pool = [] if self.mode == "vector" else self.lessons.best_by_words(counts, self.candidates)
        checked = pool + [slot[i] for i in proposed]
        pool += [slot[i] for i in cosines if slot[i] not in pool]  # keyword candidates first
        return pool, counts, cosines, checked

    def relevance(self, keyword: float, cosine: float) -> float:
        if self.mode == "hybrid":
            return 0.5 * keyword + 0.5 * cosine
        return keyword if self.mode == "keyword" else cosine


def lesson_tokens(rule: str) -> int:
    """Tokens one injected lesson adds to the prompt: its bullet line."""
    return count_tokens(bullets([rule]) + "\n")


def select_within_budget(
    ranked: Sequence[Experience], context_tokens: int, injection_budget: float = 0.15, top_k: int = 3
) -> list[Experience]:
    """Best first; take a lesson if it fits the remaining budget, skip it if not; stop at ``top_k``.

    budget = floor(injection_budget x context_tokens). Never exceeds it (property-tested).
    """
    budget = int(injection_budget * context_tokens)
    chosen, used = [], 0
    for experience in ranked:
        if len(chosen) == top_k:
            break
        if experience in chosen:
            continue
        cost = lesson_tokens(experience.rule)
        if used + cost <= budget:
            chosen.append(experience)
            used += cost
    return chosen


def injected_tokens(experiences: Sequence[Experience]) -> int:
    return sum(lesson_tokens(e.rule) for e in experiences)


def load_labelled_set() -> dict:
    """The fixed labelled set of notebook 05: experiences of several task types and query phrasings."""
    return json.loads(resources.files("ralph_mini").joinpath("data/retrieval_set.json").read_text("utf-8"))


def make_planner(
    retriever: Retriever, context_tokens: int = 8192, injection_budget: float = 0.15, top_k: int = 3
):
    """The loop's first retrieval: search with the task's question, then fit the budget."""

    def plan(task, memory: Memory) -> list[Experience]:
        ranked = [s.experience for s in retriever.search(task.question, k=retriever.candidates)]
        return select_within_budget(ranked, context_tokens, injection_budget, top_k)

    return plan


def build_labelled_memory(memory: Memory) -> dict[str, str]:
    """Fill ``memory`` with the labelled set's lessons (each confirmed twice, so active).

    Returns {experience id: key} to grade retrieval against the queries' ``expected`` keys.
    """
    keys = {}
    for item in load_labelled_set()["experiences"]:
        for task_id in ("L1", "L2"):
            _, experience = memory.propose(
                item["rule"],
                task_id=task_id,
                run_id=task_id,
                failure_reason=item["about"],
                task_type=item["task_type"],
            )
        keys[experience.id] = item["key"]
    return keys


def hit_rates(retriever: Retriever, keys: dict[str, str], k: int = 3) -> dict[str, dict[str, int]]:
    """{query kind: {'hit@1': n, 'hit@k': n, 'queries': n}} on the labelled set."""
    table: dict[str, dict[str, int]] = {}
    for query in load_labelled_set()["queries"]:
        found = [keys.get(s.experience.id) for s in retriever.search(query["text"], k)]
        row = table.setdefault(query["kind"], {"hit@1": 0, f"hit@{k}": 0, "queries": 0})
        row["hit@1"] += query["expected"] in found[:1]
        row[f"hit@{k}"] += query["expected"] in found
        row["queries"] += 1
    return table
