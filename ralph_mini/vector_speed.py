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
and its recall, are the same on every run. The vectors are drawn in chunks, each from its own seeded
generator (``Chunk``), and held once at a time (issue 27: the lesson peaked at 1.8 GB when the numpy
matrix, the flat index and the IVF index each held all of them). What the lesson does not time
(drawing the vectors, filing them, grading the recalls) runs on every core.

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
# Work the lesson does not time (drawing the vectors, filing them in IVF lists, grading the recalls) may
# use every core: it is not what the lesson compares, and the lesson waits for it.
SIDE_THREADS = os.cpu_count() or 1


@dataclass(frozen=True)
class Chunk:
    """``CHUNK`` rows of the synthetic vectors, as a recipe: the topic centres (shared by every chunk),
    the topic of each row, and the seed of the chunk's own noise generator. ``vectors()`` draws the very
    same rows every time, in any order and on any thread: the lesson draws them twice (see
    ``speed_row``), each time several chunks side by side."""

    start: int  # the id of the chunk's first row
    centres: np.ndarray  # (topics, dim)
    labels: np.ndarray  # the topic of each row
    noise_seed: int

    def vectors(self) -> np.ndarray:
        """The chunk's unit rows, (rows, dim) float32: each row its topic's centre plus unit noise."""
        noise = np.random.default_rng(self.noise_seed)
        vectors = self.centres[self.labels]
        vectors += noise.standard_normal((len(vectors), self.centres.shape[1]), dtype=np.float32)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def clustered_chunks(n: int, dim: int, rng: np.random.Generator, topics: int = 1000) -> list[Chunk]:
    """``n`` unit vectors around ``topics`` random centres, as recipes of ``CHUNK`` rows: the centres, each
    row's topic and each chunk's noise seed are drawn from ``rng``; the noise itself, the bulk of the
    work, is drawn by each chunk from its own generator, so chunks can be drawn side by side (one
    generator for all of them would draw a million rows one after another)."""
    centres = rng.standard_normal((topics, dim), dtype=np.float32)
    labels = rng.integers(0, topics, n)
    starts = range(0, n, CHUNK)
    seeds = rng.integers(0, 2**63, len(starts)).tolist()
    return [
        Chunk(start, centres, labels[start : start + CHUNK], seed)
        for start, seed in zip(starts, seeds, strict=True)
    ]


def drawn(chunks: list[Chunk], make=Chunk.vectors) -> Iterator:
    """``make(chunk)`` of each chunk, in order, ``SIDE_THREADS`` chunks side by side at a time (numpy lets
    go of the GIL while it draws and multiplies), so only a few chunks are held at once."""
    with ThreadPoolExecutor(SIDE_THREADS) as pool:
        for first in range(0, len(chunks), SIDE_THREADS):
            yield from pool.map(make, chunks[first : first + SIDE_THREADS])


def clustered_unit_vectors(n: int, dim: int, rng: np.random.Generator, topics: int = 1000) -> np.ndarray:
    """All of ``clustered_chunks`` in one array (for small ``n``: it holds every vector)."""
    return np.concatenate(list(drawn(clustered_chunks(n, dim, rng, topics))))


def per_query_seconds(search, probes: np.ndarray) -> tuple[float, list]:
    """Median wall seconds of ``search(probe)`` over the probes, and what each search returned."""
    times, answers = [], []
    for probe in probes:
        start = time.perf_counter()
        answers.append(search(probe))
        times.append(time.perf_counter() - start)
    return float(np.median(times)), answers


def top_k_of_chunk(
    probes: np.ndarray, vectors: np.ndarray, start: int, k: int
) -> tuple[np.ndarray, np.ndarray]:
    """Each probe's ``k`` best scores among one chunk's rows and their ids (rows from ``start``), best
    first, a tie to the lower id: ``k`` passes of ``argmax`` along the rows, each best struck out after
    it is taken (several times faster than partitioning every row of scores)."""
    scores = probes @ vectors.T  # (probes, rows of the chunk)
    rows, ids = np.arange(len(probes)), np.empty((len(probes), k), dtype=np.int64)
    best = np.empty((len(probes), k), dtype=scores.dtype)
    for place in range(k):
        ids[:, place] = scores.argmax(axis=1)
        best[:, place] = scores[rows, ids[:, place]]
        scores[rows, ids[:, place]] = -np.inf
    return best, ids + start


def merged_top_k(per_chunk: list[tuple[np.ndarray, np.ndarray]], k: int) -> np.ndarray:
    """The exact top ``k`` ids of each probe over all chunks, from each chunk's own top ``k``: by score,
    best first, a tie to the lower id (as one ``argmax`` over every row would take them)."""
    scores = np.concatenate([best for best, _ in per_chunk], axis=1)
    ids = np.concatenate([found for _, found in per_chunk], axis=1)
    order = np.lexsort((ids, -scores), axis=1)[:, :k]
    return np.take_along_axis(ids, order, axis=1)


def exact_part(
    chunks: list[Chunk], dim: int, k: int, rng: np.random.Generator, timed: int, graded: int
) -> dict:
    """The timed exact searches: numpy's product and faiss's flat index, each on the first ``timed``
    probes, with the ``graded`` probes and IVF's 256 centroids drawn from ``rng``.

    The vectors are drawn straight into the flat index's memory, and numpy reads them there (a view,
    not a copy), so the million vectors are held once; the index and the view are gone when this
    returns. What the flat index searches is what ``flat.add`` of the same vectors would hold.
    """
    import faiss

    n = sum(len(chunk.labels) for chunk in chunks)
    flat = faiss.IndexFlatIP(dim)
    flat.codes.resize(n * dim * 4)  # sized once: adding chunk by chunk would grow it by doubling, and
    flat.ntotal = n  # each doubling briefly holds the old and the new copy (0.4 GB more at a million)
    matrix = faiss.rev_swig_ptr(flat.get_xb(), n * dim).reshape(n, dim)  # valid while ``flat`` lives
    for chunk, vectors in zip(chunks, drawn(chunks), strict=True):  # into the index's own memory
        matrix[chunk.start : chunk.start + len(vectors)] = vectors
    probes = matrix[rng.integers(0, n, graded)] + 0.05 * rng.standard_normal((graded, dim), dtype=np.float32)
    probes /= np.linalg.norm(probes, axis=1, keepdims=True)  # near a stored lesson, not on it
    centroids = matrix[rng.choice(n, 256, replace=False)]  # a seeded sample, copied out

    def numpy_exact(q):
        scores = matrix @ q
        top = np.argpartition(-scores, k)[:k]
        return top[np.argsort(-scores[top])]

    numpy_s, by_numpy = per_query_seconds(numpy_exact, probes[:timed])
    flat_s, by_flat = per_query_seconds(lambda q: flat.search(q[None, :], k)[1][0], probes[:timed])
    return {"numpy": numpy_s, "faiss flat": flat_s, "probes": probes, "centroids": centroids,
            "answers": list(zip(by_numpy, by_flat, strict=True))}  # fmt: skip


def filed_and_graded(chunks: list[Chunk], dim: int, probes: np.ndarray, centroids: np.ndarray, k: int):
    """The IVF index (256 lists around ``centroids``) filled with the vectors drawn again, and the exact
    top ``k`` of every probe, graded chunk by chunk while each chunk is at hand. Returns (index, seconds
    of filing, exact top k). Only the filing is timed; drawing and grading run side by side, untimed."""
    import faiss

    quantizer = faiss.IndexFlatIP(dim)
    quantizer.add(centroids)
    ivf = faiss.IndexIVFFlat(quantizer, dim, 256, faiss.METRIC_INNER_PRODUCT)
    timed_threads, filing, graded = faiss.omp_get_max_threads(), 0.0, []
    faiss.omp_set_num_threads(SIDE_THREADS)  # filing is not what is compared: every core may help

    def draw_and_grade(chunk: Chunk) -> tuple[np.ndarray, tuple]:
        vectors = chunk.vectors()
        return vectors, top_k_of_chunk(probes, vectors, chunk.start, k)

    for vectors, top in drawn(chunks, draw_and_grade):
        graded.append(top)
        start = time.perf_counter()
        ivf.add(vectors)  # files each vector under its nearest centroid
        filing += time.perf_counter() - start
    faiss.omp_set_num_threads(timed_threads)
    return ivf, filing, merged_top_k(graded, k)


def speed_row(n: int, dim: int = 128, k: int = 3, seed: int = 0, timed: int = 10, graded: int = 200) -> dict:
    """One size: median wall seconds per query (``timed`` queries, one at a time) of exact numpy, faiss
    flat, and faiss IVF reading 1, 4 or 16 of its 256 lists; and each IVF setting's recall@k, the share
    of the exact top k it finds, over ``graded`` queries. (Ten timed queries each: at a million vectors
    an exact query takes tens of milliseconds, and the lesson reads a median, not a tail.)

    Why the vectors are drawn twice: the flat index and the IVF index each hold a copy of all of them
    (512 MB each at a million), so the IVF is filled after the flat index is freed, from the same
    recipes drawn again (``Chunk``), and the peak memory is one copy, not three.
    """
    import faiss

    rng = np.random.default_rng(seed)
    chunks = clustered_chunks(n, dim, rng)
    timed_part = exact_part(chunks, dim, k, rng, timed, graded)
    probes = timed_part["probes"]
    ivf, filing, exact = filed_and_graded(chunks, dim, probes, timed_part["centroids"], k)
    for (numpy_ids, flat_ids), ids in zip(timed_part["answers"], exact, strict=False):  # the same answers
        assert list(numpy_ids) == list(flat_ids) and set(numpy_ids) == set(ids)
    row = {
        "vectors": n,
        "dim": dim,
        "IVF build": filing,
        "IVF build threads": SIDE_THREADS,
        "numpy": timed_part["numpy"],
        "faiss flat": timed_part["faiss flat"],
    }
    timed_threads = faiss.omp_get_max_threads()
    for nprobe in (1, 4, 16):
        ivf.nprobe = nprobe
        faiss.omp_set_num_threads(SIDE_THREADS)  # grading the recall, all probes at once: untimed
        found = ivf.search(probes, k)[1]
        faiss.omp_set_num_threads(timed_threads)  # the timed queries, as the exact ones: on ``threads``
        hits = sum(len(set(a) & set(e)) for a, e in zip(found, exact, strict=True))
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
