"""Vector retrieval with faiss, hybrid scoring, and a budgeted injection (notebook 05).

Embeddings (``embed.py``) put similar text near each other; this module finds the lessons nearest to a
task and decides which of them fit in the prompt.

- ``VectorIndex`` keeps a faiss inner-product index of unit vectors (so scores are cosines), with ids
  mapping back to experiences; add, remove, and sync with a memory.
- ``Retriever.search`` is hybrid: keyword candidates first, vector candidates second, then

      score = relevance x weight,   relevance = 0.5 x keyword overlap + 0.5 x cosine,
      weight = confidence x decay   (memory.py; 0 for candidates, removed or expired rules)

  Generative Agents (Park et al., 2023) *add* min-max-normalised recency, importance and relevance.
  We *multiply*, so that an expired or distrusted lesson scores 0 however relevant it looks: the
  seed's pollution lesson says a bad lesson must not get in at all, not merely rank lower.
- ``select_within_budget``: the first injection takes at most ``injection_budget`` (15%) of the
  model's context and at most ``top_k`` (3) experiences, best first, skipping any that do not fit.

Left out on purpose: approximate indexes (IVF, HNSW): exact search over 100k lessons is already fast.
"""

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources

import numpy as np

from ralph_mini.embed import STOPWORDS, Embedder, HashingEmbedder
from ralph_mini.memory import Experience, Memory
from ralph_mini.model import count_tokens
from ralph_mini.rules import bullets

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
        if not new:
            return
        vectors = self.embedder.embed([experience_text(e) for e in new])
        keys = np.array([faiss_id(e.id) for e in new], dtype=np.int64)
        self.index.add_with_ids(vectors, keys)
        self.ids.update({faiss_id(e.id): e.id for e in new})

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


def keyword_words(text: str) -> set[str]:
    """Words as a simple keyword index sees them: split on spaces and punctuation.

    Chinese has no spaces, so '订单K512付款了吗' is one 'word' and matches nothing: that is the point.
    """
    return {w for w in re.findall(r"\w+", text.lower()) if w not in STOPWORDS and len(w) > 1}


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
    """Keyword, vector or hybrid search over a memory's active experiences."""

    MODES = ("keyword", "vector", "hybrid")

    def __init__(
        self, memory: Memory, embedder: Embedder | None = None, mode: str = "hybrid", candidates: int = 10
    ):
        if mode not in self.MODES:
            raise ValueError(f"mode={mode!r}: use one of {', '.join(self.MODES)}")
        self.memory, self.mode, self.candidates = memory, mode, candidates
        self.index = VectorIndex(embedder or HashingEmbedder())

    def search(self, query: str, k: int = 3) -> list[Scored]:
        self.index.sync(self.memory)
        by_id = {e.id: e for e in self.memory.live()}
        cosines = dict(self.index.search(query, self.candidates)) if self.mode != "keyword" else {}
        keywords = {i: keyword_score(query, experience_text(e)) for i, e in by_id.items()}
        if self.mode == "keyword":
            pool = [i for i, s in keywords.items() if s > 0]
        elif self.mode == "vector":
            pool = list(cosines)
        else:  # keyword candidates first, vector candidates second
            best_words = sorted(keywords.items(), key=lambda kv: (-kv[1], by_id[kv[0]].rule))
            pool = [i for i, s in best_words if s > 0][: self.candidates]
            pool += [i for i in cosines if i not in pool]
        scored = [self.scored(by_id[i], keywords[i], cosines.get(i, 0.0)) for i in pool if i in by_id]
        scored = [s for s in scored if s.score > 0]
        scored.sort(key=lambda s: (-s.score, s.experience.rule))
        return scored[:k]

    def scored(self, experience: Experience, keyword: float, cosine: float) -> Scored:
        relevance = {"keyword": keyword, "vector": cosine, "hybrid": 0.5 * keyword + 0.5 * cosine}[self.mode]
        return Scored(experience, keyword, cosine, self.memory.weight(experience), relevance)


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
