"""How fast is nearest-lesson search, and when does faiss pay off? (notebook 05)

Exact search is the same arithmetic however it is written: numpy's matrix-vector product and faiss's
flat index both read every stored vector once per query, in C. Which one wins depends mostly on how
many threads each may use, so ``speed_table`` gives both the *same* number: it runs the measurement in
a fresh Python process with the thread count fixed before numpy and faiss load (a BLAS library reads
its thread count once, when it loads). faiss pays off elsewhere:

- an *approximate* index (here IVF: each vector filed under the nearest of 256 centroids; a query
  reads only the ``nprobe`` lists nearest to it) reads a small share of the vectors, at some loss of
  recall: a dial between speed and the share of true neighbours found;
- an index that adds and removes vectors by id, which is what the kit uses it for (``lesson_index.py``).

The vectors are synthetic, seeded, and clustered (like embeddings of lessons on a few topics), 128
dimensions so that a million of them take 512 MB (at the hashing embedder's 512 dimensions they would
take 2 GB). The IVF centroids are a seeded sample of the vectors (no k-means training), so the index,
and its recall, are the same on every run. The vectors are drawn in chunks and held once at a time
(issue 27: the lesson peaked at 1.8 GB when the numpy matrix, the flat index and the IVF index each
held all of them; now under 0.8 GB, with the same vectors and the same recalls). What the lesson does
not time (drawing the vectors again, filing them, grading the recalls) runs on every core.

``retrieval_speed`` is the older single-process check: its "python loop" makes one numpy call per
stored vector, so it measures Python's call overhead, not search.

Left out on purpose: HNSW (minutes to build a million here) and product quantisation.
"""

import heapq
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

CHUNK = 50_000  # vectors drawn and filed at a time: 25 MB at 128 dimensions, not the whole 512 MB
# Work the lesson does not time (drawing the vectors again, filing them in IVF lists, grading the
# recalls) may use every core: filing a million vectors takes 6.8 s on 1 of 2 cores, 3.1 on both.
SIDE_THREADS = os.cpu_count() or 1


@dataclass(frozen=True)
class Chunk:
    """A chunk of ``clustered_chunks`` as a recipe: its rows' topic centres and the noise generator's
    state when the chunk was drawn. ``vectors()`` draws the very same rows again, in any order and on
    any thread, so a second pass over a million vectors need not wait for the chunks before it."""

    centres: np.ndarray  # (topics, dim), shared by every chunk
    labels: np.ndarray  # the topic of each row
    noise: dict  # the bit generator's state before this chunk's noise

    def vectors(self, rng: np.random.Generator | None = None) -> np.ndarray:
        """The chunk's unit rows, its noise drawn from ``rng`` (which it advances) or, by default, from
        a generator of its own set to the recorded state (the same draws)."""
        if rng is None:
            rng = np.random.Generator(getattr(np.random, self.noise["bit_generator"])())
            rng.bit_generator.state = self.noise
        vectors = self.centres[self.labels]
        vectors += rng.standard_normal((len(vectors), self.centres.shape[1]), dtype=np.float32)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def clustered_chunks(n: int, dim: int, rng: np.random.Generator, topics: int = 1000,
                     recipes: list[Chunk] | None = None) -> Iterator[np.ndarray]:  # fmt: skip
    """``n`` unit vectors around ``topics`` random centres, ``CHUNK`` rows at a time (float32, (rows, dim));
    with ``recipes``, each chunk's ``Chunk`` is appended to it, to draw the chunk again later.

    The draws are those of one call for all ``n`` rows, in the same order (centres, topic of each row,
    then the noise row by row), so the vectors and ``rng`` afterwards do not depend on ``CHUNK``; only
    a chunk and its temporaries are ever held, not ``n`` x ``dim`` three times over.
    """
    centres = rng.standard_normal((topics, dim), dtype=np.float32)
    labels = rng.integers(0, topics, n)
    for start in range(0, n, CHUNK):
        chunk = Chunk(centres, labels[start : start + CHUNK], rng.bit_generator.state)
        if recipes is not None:
            recipes.append(chunk)
        yield chunk.vectors(rng)


def clustered_unit_vectors(n: int, dim: int, rng: np.random.Generator, topics: int = 1000) -> np.ndarray:
    """All of ``clustered_chunks`` in one array (for small ``n``: it holds every vector)."""
    return np.concatenate(list(clustered_chunks(n, dim, rng, topics)))


def per_query_seconds(search, probes: np.ndarray) -> tuple[float, list]:
    """Median wall seconds of ``search(probe)`` over the probes, and what each search returned."""
    times, answers = [], []
    for probe in probes:
        start = time.perf_counter()
        answers.append(search(probe))
        times.append(time.perf_counter() - start)
    return float(np.median(times)), answers


def exact_top_k(matrix: np.ndarray, probes: np.ndarray, k: int, block: int = 20) -> np.ndarray:
    """Every probe's exact top ``k`` ids, best first (shape (probes, k)): numpy's product, ``block``
    probes at a time (200 probes' scores against a million vectors take 800 MB), blocks side by side on
    ``SIDE_THREADS`` (numpy lets go of the GIL in its product, so the threads share the cores).

    Why not the flat index's batch search, or ``argpartition``: the same answers, but numpy's matrix
    product is about twice as fast on one thread, and ``k`` passes of ``argmax`` (each best score
    struck out after it is taken) are several times faster than partitioning a million scores. This is
    the grading, not what the lesson times.
    """

    def top_of(start: int) -> list[list[int]]:
        found = []
        for scores in probes[start : start + block] @ matrix.T:  # each row: one probe's n scores
            best = []
            for _ in range(k):
                best.append(int(scores.argmax()))
                scores[best[-1]] = -np.inf
            found.append(best)
        return found

    with ThreadPoolExecutor(SIDE_THREADS) as pool:
        blocks = pool.map(top_of, range(0, len(probes), block))
        return np.array([best for found in blocks for best in found]).reshape(len(probes), k)


def exact_part(n: int, dim: int, k: int, rng: np.random.Generator, timed: int, graded: int) -> dict:
    """The exact searches: numpy's product and faiss's flat index, timed, and the exact top k of every
    probe (the answers IVF is graded against), with the probes and IVF's centroids drawn from ``rng``.

    The vectors are written straight into the flat index's memory, and numpy reads them there (a view,
    not a copy), so the million vectors are held once; the index and the view are gone when this
    returns. What the flat index searches is what ``flat.add`` of the same vectors would hold.
    """
    import faiss

    flat = faiss.IndexFlatIP(dim)
    flat.codes.resize(n * dim * 4)  # sized once: adding chunk by chunk would grow it by doubling, and
    flat.ntotal = n  # each doubling briefly holds the old and the new copy (0.4 GB more at a million)
    matrix = faiss.rev_swig_ptr(flat.get_xb(), n * dim).reshape(n, dim)  # valid while ``flat`` lives
    start, recipes = 0, []
    for vectors in clustered_chunks(n, dim, rng, recipes=recipes):  # into the index's own memory
        matrix[start : start + len(vectors)] = vectors
        start += len(vectors)
    probes = matrix[rng.integers(0, n, graded)] + 0.05 * rng.standard_normal((graded, dim), dtype=np.float32)
    probes /= np.linalg.norm(probes, axis=1, keepdims=True)  # near a stored lesson, not on it
    centroids = matrix[rng.choice(n, 256, replace=False)]  # a seeded sample, copied out

    def numpy_exact(q):
        scores = matrix @ q
        top = np.argpartition(-scores, k)[:k]
        return top[np.argsort(-scores[top])]

    numpy_s, by_numpy = per_query_seconds(numpy_exact, probes[:timed])
    flat_s, by_flat = per_query_seconds(lambda q: flat.search(q[None, :], k)[1][0], probes[:timed])
    exact = exact_top_k(matrix, probes, k)
    for numpy_ids, flat_ids, ids in zip(by_numpy, by_flat, exact, strict=False):  # the same answers
        assert list(numpy_ids) == list(flat_ids) and set(numpy_ids) == set(ids)
    return {"numpy": numpy_s, "faiss flat": flat_s, "probes": probes, "exact": exact, "centroids": centroids,
            "recipes": recipes}  # fmt: skip


def speed_row(n: int, dim: int = 128, k: int = 3, seed: int = 0, timed: int = 20, graded: int = 200) -> dict:
    """One size: median wall seconds per query (``timed`` queries, one at a time) of exact numpy, faiss
    flat, and faiss IVF reading 1, 4 or 16 of its 256 lists; and each IVF setting's recall@k, the share
    of the exact top k it finds, over ``graded`` queries.

    Why the vectors are drawn twice: the flat index and the IVF index each hold a copy of all of them
    (512 MB each at a million), so the IVF is filled after the flat index is freed, from the same draws
    again (``Chunk``: a few chunks at a time, side by side), and the peak memory is one copy, not three.
    """
    import faiss

    exact = exact_part(n, dim, k, np.random.default_rng(seed), timed, graded)
    quantizer = faiss.IndexFlatIP(dim)
    quantizer.add(exact["centroids"])
    ivf = faiss.IndexIVFFlat(quantizer, dim, 256, faiss.METRIC_INNER_PRODUCT)
    build, timed_threads = 0.0, faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(SIDE_THREADS)  # filing is not what is compared: every core may help
    recipes = exact["recipes"]
    with ThreadPoolExecutor(SIDE_THREADS) as pool:
        for first in range(0, len(recipes), SIDE_THREADS):
            drawn = list(pool.map(Chunk.vectors, recipes[first : first + SIDE_THREADS]))
            start = time.perf_counter()  # only the filing is timed, not the drawing
            for vectors in drawn:
                ivf.add(vectors)  # files each vector under its nearest centroid
            build += time.perf_counter() - start
    row = {
        "vectors": n,
        "dim": dim,
        "IVF build": build,
        "IVF build threads": SIDE_THREADS,
        "numpy": exact["numpy"],
        "faiss flat": exact["faiss flat"],
    }
    probes = exact["probes"]
    for nprobe in (1, 4, 16):
        ivf.nprobe = nprobe
        faiss.omp_set_num_threads(SIDE_THREADS)  # grading the recall, all probes at once: untimed
        found = ivf.search(probes, k)[1]
        faiss.omp_set_num_threads(timed_threads)  # the timed queries, as the exact ones: on ``threads``
        hits = sum(len(set(a) & set(e)) for a, e in zip(found, exact["exact"], strict=True))
        row[f"IVF {nprobe}/256"] = per_query_seconds(lambda q: ivf.search(q[None, :], k), probes[:timed])[0]
        row[f"IVF {nprobe}/256 recall@{k}"] = round(hits / (k * graded), 3)
    return row


def speed_table(sizes=(100_000, 1_000_000), dim: int = 128, threads: int = 1, seed: int = 0) -> list[dict]:
    """``speed_row`` for each size, in a fresh process where numpy's BLAS and faiss both use ``threads``."""
    env = os.environ | {
        name: str(threads) for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
    }
    # The IVF index grows 256 lists by doubling; with glibc's default, their outgrown copies stay in
    # the heap (0.2 GB at a million vectors). Above 256 kB, a block is its own mapping, given back when
    # freed.
    env["MALLOC_MMAP_THRESHOLD_"] = str(256 * 1024)
    command = [sys.executable, "-m", "ralph_mini.vector_speed", str(dim), str(seed), *map(str, sizes)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout)


def retrieval_speed(n: int = 100_000, dim: int = 512, k: int = 3, seed: int = 0, queries: int = 5) -> dict:
    """Wall seconds per top-k query over ``n`` random unit vectors: one numpy call per stored vector
    ("python loop": Python's call overhead), one numpy product, faiss's flat index on one thread
    (numpy's BLAS keeps its own thread count here; ``speed_table`` makes them equal).

    The three must agree on the top-k ids (asserted), so the comparison is of speed alone.
    """
    import faiss

    faiss.omp_set_num_threads(1)
    rng = np.random.default_rng(seed)
    matrix = rng.standard_normal((n, dim)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    index = faiss.IndexFlatIP(dim)
    index.add(matrix)
    noise = 0.1 * rng.standard_normal((queries, dim)).astype(np.float32)
    probes = matrix[rng.integers(0, n, queries)] + noise  # near a stored lesson, not on it

    def python_loop(q):
        return [i for _, i in heapq.nlargest(k, ((float(row @ q), i) for i, row in enumerate(matrix)))]

    def numpy_brute(q):
        scores = matrix @ q
        top = np.argpartition(-scores, k)[:k]
        return [int(i) for i in top[np.argsort(-scores[top])]]

    def faiss_search(q):
        return [int(i) for i in index.search(q[None, :], k)[1][0]]

    timings = {}
    for name, search in (("python loop", python_loop), ("numpy", numpy_brute), ("faiss", faiss_search)):
        start = time.perf_counter()
        results = [search(q) for q in probes]
        timings[name] = (time.perf_counter() - start) / queries
        timings[f"{name} ids"] = results
    assert timings["python loop ids"] == timings["numpy ids"] == timings["faiss ids"], "searches disagree"
    return {name: timings[name] for name in ("python loop", "numpy", "faiss")}


if __name__ == "__main__":  # speed_table's worker: python -m ralph_mini.vector_speed DIM SEED SIZE...
    import faiss

    faiss.omp_set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    dim, seed, *sizes = map(int, sys.argv[1:])
    print(json.dumps([speed_row(n, dim, seed=seed) for n in sizes]))
