"""Exercise 8 (exercises/build_your_own/ex08_hybrid_retrieval.ipynb): hybrid retrieval within a budget.

``retrieve(query, lessons, k=3, budget_tokens=1228, alpha=0.5, embedder=None) -> list[str]``, lessons
as (text, weight) pairs: relevance = alpha x keyword share + (1 - alpha) x cosine of the embeddings,
score = relevance x weight; best score first (ties keep their order), lessons scoring 0 or less never;
stop at k; take a lesson only if its tokens fit what is left of the budget, skip it otherwise. As
``retrieval.py`` scores, without the faiss index and the candidate pool.

The checker computes the scores itself (``hybrid_scores``), and when an answer matches what a typical
mistake would return (keyword only, alpha the wrong way round, the weight forgotten ...) it says so.
"""

from collections.abc import Sequence
from typing import Any

from ralph_mini.embed import HashingEmbedder, keyword_words
from ralph_mini.exercise.build_track import ALPHA, BUDGET_TOKENS, BUILD_SOLUTIONS, TOP_K
from ralph_mini.exercise.checker import Case, Exercise, Judge, short_repr
from ralph_mini.exercise.messages import Hints, say
from ralph_mini.tokens import count_tokens
from ralph_mini.worlds.orders import words

CACHE_HIT = f"when {words.CACHE} finds the order: skip {words.DATABASE}"
FRESH_PENDING = f"when status is pending and age under 30 min: skip {words.PAYMENT}"
START_CACHE = f"when any task: start with {words.CACHE}"
DB_MISS = f"when {words.DATABASE} finds nothing: skip {words.PAYMENT}"
EMBEDDER = HashingEmbedder()


def hybrid_scores(query: str, texts: Sequence[str], embedder=EMBEDDER) -> tuple[list[float], list[float]]:
    """(keyword share, cosine) of each text against the query: the two halves of relevance."""
    wanted = keyword_words(query)
    keyword = [len(wanted & keyword_words(t)) / len(wanted) if wanted else 0.0 for t in texts]
    vectors = embedder.embed([query, *texts])
    return keyword, [float(c) for c in vectors[1:] @ vectors[0]]


def ranked_within(
    texts: Sequence[str],
    scores: Sequence[float],
    k: int,
    budget: int,
    stop_at_misfit: bool = False,
    floor: float = 0.0,
    ascending: bool = False,
) -> list[str]:
    """Best score first (a stable sort), scores above ``floor`` only, at most k, within ``budget`` tokens.
    The other settings are typical mistakes, for the checker to recognise them."""
    order = sorted(range(len(texts)), key=lambda i: scores[i] if ascending else -scores[i])
    chosen, left = [], budget
    for index in [i for i in order if scores[i] > floor]:
        if len(chosen) == k:
            break
        if count_tokens(texts[index]) <= left:
            chosen.append(texts[index])
            left -= count_tokens(texts[index])
        elif stop_at_misfit:
            break
    return chosen


def hybrid_retrieval(query, lessons, k=TOP_K, budget_tokens=BUDGET_TOKENS, alpha=ALPHA, embedder=EMBEDDER):
    """The rule exercise 8 teaches, written out once."""
    texts, weights = [t for t, _ in lessons], [w for _, w in lessons]
    keyword, cosine = hybrid_scores(query, texts, embedder)
    scores = [(alpha * kw + (1 - alpha) * c) * w for kw, c, w in zip(keyword, cosine, weights, strict=True)]
    return ranked_within(texts, scores, k, budget_tokens)


def _mistakes(query, lessons, k, budget, alpha) -> dict[str, list[str]]:
    """What each typical mistake returns on this case, under the message that names it. The first that
    matches is named: alpha the wrong way round shows only when alpha is not 0.5, so it comes first."""
    texts, weights = [t for t, _ in lessons], [w for _, w in lessons]
    keyword, cosine = hybrid_scores(query, texts)
    counts = [kw * len(keyword_words(query)) for kw in keyword]

    def ranked(kws: Sequence[float], a: float, weighted: bool = True, **how) -> list[str]:
        scores = [
            (a * kw + (1 - a) * c) * (w if weighted else 1)
            for kw, c, w in zip(kws, cosine, weights, strict=True)
        ]
        return ranked_within(texts, scores, how.get("k", k), how.get("budget", budget), **how.get("walk", {}))

    return {
        say("ex8.alpha_reversed", alpha=alpha): ranked(keyword, 1 - alpha),
        say("ex8.keyword_only"): ranked(keyword, 1.0),
        say("ex8.cosine_only"): ranked(keyword, 0.0),
        say("ex8.count_not_share"): ranked(counts, alpha),
        say("ex8.no_weights"): ranked(keyword, alpha, weighted=False),
        say("ex8.zero_scores"): ranked(keyword, alpha, walk={"floor": float("-inf")}),
        say("ex8.stop_at_misfit"): ranked(keyword, alpha, walk={"stop_at_misfit": True}),
        say("ex8.more_than_k", k=k): ranked(keyword, alpha, k=len(texts)),
        say("ex8.over_budget", budget=budget): ranked(keyword, alpha, budget=10**9),
        say("ex8.worst_first"): ranked(keyword, alpha, walk={"ascending": True}),
    }


def _retrieve_judge(query: str, lessons: list, given: list, k: int, budget: int, alpha: float) -> Judge:
    want = hybrid_retrieval(query, given, k, budget, alpha)
    keyword, cosine = hybrid_scores(query, [t for t, _ in given])
    table = ", ".join(
        f"{t[:28]!r}: {(alpha * kw + (1 - alpha) * c) * w:.3f}"
        for (t, w), kw, c in zip(given, keyword, cosine, strict=True)
    )

    def judge(returned: Any) -> str | None:
        if lessons != given:
            return say("ex8.changed_lessons")
        if not isinstance(returned, list):
            return say("ex8.not_a_list", returned=short_repr(returned))
        if any(isinstance(x, tuple) for x in returned):
            return say("ex8.pairs", returned=returned)
        if returned == want:
            return None
        for message, mistaken in _mistakes(query, given, k, budget, alpha).items():
            if returned == mistaken:
                return say("ex8.mistake", returned=returned, want=want, message=message)
        return say("ex8.scores", returned=returned, want=want, table=table)

    return judge


def _case(label: str, query: str, lessons: list, **kwargs) -> Case:
    """``label`` names the case: ``ex8.<label>`` in the message tables."""
    k, budget = kwargs.get("k", TOP_K), kwargs.get("budget_tokens", BUDGET_TOKENS)
    alpha = kwargs.get("alpha", ALPHA)
    given = list(lessons)
    settings = "".join(f", {key}={value}" for key, value in kwargs.items())
    return Case(
        say("ex8.case", label=say(f"ex8.{label}"), query=query, settings=settings),
        args=(query, given),
        kwargs={**kwargs, "embedder": HashingEmbedder()},
        judge=_retrieve_judge(query, given, list(lessons), k, budget, alpha),
    )


def _retrieve_cases() -> list[Case]:
    four = [(CACHE_HIT, 1.0), (FRESH_PENDING, 1.0), (START_CACHE, 1.0), (DB_MISS, 1.0)]
    # a rule sharing a word, two paraphrases sharing spelling (payment/payments), and a far rule
    mixed = [
        (CACHE_HIT, 1.0),
        ("payments and captures of orders", 1.0),
        ("payments captured by providers settle late", 1.0),
        (FRESH_PENDING, 1.0),
    ]
    captured = "Has the payment for order K512 been captured?"
    pending = "Is order B456 pending?"
    return [
        _case("equal_weights", "Is order B456 still pending? It was created minutes ago.", four),
        _case("paraphrases", captured, mixed, k=2),
        _case("paraphrases", captured, mixed, k=2, alpha=0.9),
        _case("weight_0", "order pending payment", [(FRESH_PENDING, 0.0), (CACHE_HIT, 0.5)]),
        _case("down_voted", pending, [(FRESH_PENDING, 0.25), (CACHE_HIT, 1.0)]),
        _case("k_1", pending, four, k=1),
        _case("k_0", pending, four, k=0),
        _case("budget_30", "pending order, nothing in the database", four, budget_tokens=30),
        _case("budget_12", "pending order, nothing in the database", four, budget_tokens=12),
        _case("no_lessons", "What is the status of order A123?", []),
    ]


ex8 = Exercise(
    name="ex8",
    function_name="retrieve",
    solution_file="ex08_hybrid_retrieval.py",
    solutions_dir=BUILD_SOLUTIONS,
    cases=_retrieve_cases,
    hints=Hints("ex8"),
)
