"""Reference solution for exercises/build_your_own/ex08_hybrid_retrieval.ipynb (instructor only)."""

from ralph_mini.embed import Embedder, HashingEmbedder, keyword_words
from ralph_mini.exercise.build_your_own import ALPHA, BUDGET_TOKENS, TOP_K
from ralph_mini.model import count_tokens


def retrieve(
    query: str,
    lessons: list[tuple[str, float]],
    k: int = TOP_K,
    budget_tokens: int = BUDGET_TOKENS,
    alpha: float = ALPHA,
    embedder: Embedder | None = None,
) -> list[str]:
    """The lessons to inject for ``query``: best (relevance x weight) first, at most k, within the budget."""
    if not lessons:
        return []
    texts = [text for text, _ in lessons]
    vectors = (embedder or HashingEmbedder()).embed([query, *texts])  # unit rows: dot product = cosine
    cosines = vectors[1:] @ vectors[0]
    wanted = keyword_words(query)
    scores = []
    for (text, weight), cosine in zip(lessons, cosines, strict=True):
        keyword = len(wanted & keyword_words(text)) / len(wanted) if wanted else 0.0
        scores.append((alpha * keyword + (1 - alpha) * float(cosine)) * weight)
    chosen, left = [], budget_tokens
    for index in sorted(range(len(texts)), key=lambda i: -scores[i]):  # stable: ties keep their order
        if len(chosen) == k or scores[index] <= 0:
            break
        tokens = count_tokens(texts[index])
        if tokens <= left:  # one that does not fit is skipped; a shorter one may still fit
            chosen.append(texts[index])
            left -= tokens
    return chosen
