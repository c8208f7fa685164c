"""How fast is nearest-lesson search, and when does faiss pay off? (notebook 05)

Exact search is the same arithmetic however it is written: numpy's matrix-vector product and faiss's
flat index both read every stored vector once per query, in C. Which one wins depends mostly on how
many threads each may use, so ``speed_rows`` gives both the *same* number: it runs the measurement in
a fresh Python process with the thread count fixed before numpy and faiss load (a BLAS library reads
its thread count once, when it loads). faiss pays off elsewhere:

- an *approximate* index (here IVF: each vector filed under the nearest of 256 centroids; a query
  reads only the ``nprobe`` lists nearest to it) reads a small share of the vectors, at some loss of
  recall: a dial between speed and the share of true neighbours found;
- an index that adds and removes vectors by id, which is what the kit uses it for (``lesson_index.py``).

The vectors are synthetic, seeded, and clustered (like embeddings of lessons on a few topics), 128
dimensions so that a million of them take 512 MB (at the hashing embedder's 512 dimensions they would
take 2 GB). The IVF centroids are a seeded sample of the vectors (no k-means training), so the index,
and its recall, are the same on every run. The vectors are drawn once, in chunks side by side, each
from its own seeded generator (``Chunk``), and held about once (``held_once``; issue 27: the lesson
peaked at 1.8 GB when the numpy matrix, the flat index and the IVF index each held all of them).
What the lesson does not time (drawing, filing in the IVF lists, grading the recalls) uses every core.

Left out on purpose: HNSW (minutes to build a million here) and product quantisation.
"""

import json
import mmap
import os
import subprocess
import sys
import tempfile
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
    same rows every time, in any order and on any thread, so several chunks are drawn side by side."""

    start: int  # the id of the chunk's first row
    centres: np.ndarray  # (topics, dim)
    labels: np.ndarray  # the topic of each row
    noise_seed: int

    def vectors(self, out: np.ndarray | None = None) -> np.ndarray:
        """The chunk's unit rows, (rows, dim) float32, into ``out`` if given: topic centre + unit noise."""
        noise = np.random.default_rng(self.noise_seed)
        vectors = np.take(self.centres, self.labels, axis=0, out=out)
        vectors += noise.standard_normal(vectors.shape, dtype=np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors


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


def draw_into(matrix: np.ndarray, chunks: list[Chunk]) -> None:
    """Each chunk's rows drawn straight into its rows of ``matrix``, ``SIDE_THREADS`` chunks side by side
    (numpy lets go of the GIL while it draws), so no chunk is held anywhere else."""
    with ThreadPoolExecutor(SIDE_THREADS) as pool:
        list(pool.map(lambda chunk: chunk.vectors(out=matrix[rows_of(chunk)]), chunks))


def clustered_unit_vectors(n: int, dim: int, rng: np.random.Generator, topics: int = 1000) -> np.ndarray:
    """All of ``clustered_chunks`` in one array (for small ``n``: it holds every vector)."""
    matrix = np.empty((n, dim), dtype=np.float32)
    draw_into(matrix, clustered_chunks(n, dim, rng, topics))
    return matrix


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


def held_once(chunks: list[Chunk], dim: int) -> tuple[mmap.mmap, np.ndarray]:
    """Every chunk drawn into one (rows, dim) float32 matrix, in memory the lesson maps itself (``mmap``)
    so that it can give the pages back chunk by chunk once the IVF index holds a copy (``give_back``).
    numpy, faiss's flat search and the IVF's filing all read this one copy."""
    n = sum(len(chunk.labels) for chunk in chunks)
    memory = private_memory(n * dim * 4)
    matrix = np.frombuffer(memory, dtype=np.float32).reshape(n, dim)
    draw_into(matrix, chunks)
    return memory, matrix


def private_memory(size: int) -> mmap.mmap:
    """``size`` bytes of memory of this process alone. Private, because a page of shared memory (what
    ``mmap.mmap(-1, size)`` maps on Linux) that is given back stays in the system's memory all the same."""
    private = {"flags": mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS} if hasattr(mmap, "MAP_PRIVATE") else {}
    return mmap.mmap(-1, size, **private)


def rows_of(chunk: Chunk) -> slice:
    return slice(chunk.start, chunk.start + len(chunk.labels))


def give_back(memory: mmap.mmap, matrix: np.ndarray, rows: slice) -> None:
    """The whole pages under ``rows`` back to the system (``MADV_DONTNEED``: no longer needed, freed at
    once); where the call is missing, they stay until the matrix goes."""
    page, row_bytes = mmap.PAGESIZE, matrix.itemsize * matrix.shape[1]
    first, end = -(-rows.start * row_bytes // page) * page, rows.stop * row_bytes // page * page
    if end > first and hasattr(mmap, "MADV_DONTNEED"):
        memory.madvise(mmap.MADV_DONTNEED, first, end - first)


def exact_part(matrix: np.ndarray, k: int, rng: np.random.Generator, timed: int, graded: int) -> dict:
    """The timed exact searches: numpy's product and faiss's flat search, each on the first ``timed``
    probes, with the ``graded`` probes and IVF's 256 centroids drawn from ``rng``.

    faiss's flat search is ``faiss.knn``: the very function ``IndexFlatIP.search`` runs, over the
    vectors where they are (an ``IndexFlatIP`` would hold a second copy, half a gigabyte at a million).
    """
    import faiss

    n, dim = matrix.shape
    probes = matrix[rng.integers(0, n, graded)] + 0.05 * rng.standard_normal((graded, dim), dtype=np.float32)
    probes /= np.linalg.norm(probes, axis=1, keepdims=True)  # near a stored lesson, not on it
    centroids = matrix[rng.choice(n, 256, replace=False)]  # a seeded sample, copied out

    def numpy_exact(q):
        scores = matrix @ q
        top = np.argpartition(-scores, k)[:k]
        return top[np.argsort(-scores[top])]

    def faiss_flat(q):
        return faiss.knn(q[None, :], matrix, k, metric=faiss.METRIC_INNER_PRODUCT)[1][0]

    numpy_s, by_numpy = per_query_seconds(numpy_exact, probes[:timed])
    flat_s, by_flat = per_query_seconds(faiss_flat, probes[:timed])
    return {"numpy": numpy_s, "faiss flat": flat_s, "probes": probes, "centroids": centroids,
            "answers": list(zip(by_numpy, by_flat, strict=True))}  # fmt: skip


def filed_and_graded(
    chunks: list[Chunk],
    memory: mmap.mmap,
    matrix: np.ndarray,
    probes: np.ndarray,
    centroids: np.ndarray,
    k: int,
) -> tuple:
    """The exact top ``k`` of every probe, graded chunk by chunk on every core; then the IVF index (256
    lists around ``centroids``) filled chunk by chunk, each chunk's pages given back once it holds them.
    Returns (index, seconds of filing, exact top k); only the filing is timed.

    Filing finds each vector's nearest centroid, on every core with numpy (``nearest_lists``; faiss's
    BLAS, loaded with one thread for the timed searches, keeps one for good), then faiss stores it there
    (``add_core``: what ``ivf.add`` does once it has found the centroids itself)."""
    import faiss

    quantizer = faiss.IndexFlatIP(matrix.shape[1])
    quantizer.add(centroids)
    ivf = faiss.IndexIVFFlat(quantizer, matrix.shape[1], 256, faiss.METRIC_INNER_PRODUCT)

    def grade(chunk: Chunk) -> tuple:
        return top_k_of_chunk(probes, matrix[rows_of(chunk)], chunk.start, k)

    def assign(chunk: Chunk) -> np.ndarray:
        return nearest_lists(matrix[rows_of(chunk)], centroids)

    with ThreadPoolExecutor(SIDE_THREADS) as pool:  # (map hands out every chunk at once, in order)
        exact = merged_top_k(list(pool.map(grade, chunks)), k)  # before any page goes back
        start = time.perf_counter()
        for chunk, lists in zip(chunks, pool.map(assign, chunks), strict=True):  # 400 kB a chunk
            rows = matrix[rows_of(chunk)]
            ivf.add_core(len(rows), faiss.swig_ptr(rows), None, faiss.swig_ptr(lists))  # ids in order
            give_back(memory, matrix, rows_of(chunk))
        filing = time.perf_counter() - start
    return ivf, filing, exact


def nearest_lists(vectors: np.ndarray, centroids: np.ndarray) -> np.ndarray:
    """The IVF list of each vector: its nearest centroid by inner product, a tie to the lower list (as
    faiss's flat quantizer takes it). One row of scores per vector: the best is found along a row."""
    return (vectors @ centroids.T).argmax(axis=1).astype(np.int64)


def speed_row(n: int, dim: int = 128, k: int = 3, seed: int = 0, timed: int = 10, graded: int = 200) -> dict:
    """One size: median wall seconds per query (``timed`` queries, one at a time) of exact numpy, faiss
    flat, and faiss IVF reading 1, 4 or 16 of its 256 lists; and each IVF setting's recall@k, the share
    of the exact top k it finds, over ``graded`` queries. (Ten timed queries each: at a million vectors
    an exact query takes tens of milliseconds, and the lesson reads a median, not a tail.)

    The vectors are held about once: the IVF index takes its copy chunk by chunk as their pages go back
    (``held_once``), so a million of them peak near 512 MB, not the 1 GB of two copies."""
    import faiss

    rng = np.random.default_rng(seed)
    chunks = clustered_chunks(n, dim, rng)
    memory, matrix = held_once(chunks, dim)
    timed_part = exact_part(matrix, k, rng, timed, graded)
    probes = timed_part["probes"]
    ivf, filing, exact = filed_and_graded(chunks, memory, matrix, probes, timed_part["centroids"], k)
    del matrix  # the last view: the mapping goes with ``memory`` when this returns
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


def speed_rows(sizes=(100_000, 1_000_000), dim: int = 128, threads: int = 1, seed: int = 0) -> Iterator[dict]:
    """``speed_row`` for each size, each as soon as it is measured, from one fresh process where numpy's
    BLAS and faiss both use ``threads`` (one for every size: each more would load numpy and faiss again)."""
    env = os.environ | {
        name: str(threads) for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
    }
    # The IVF index grows 256 lists by doubling; with glibc's default, their outgrown copies stay in the
    # heap (0.2 GB at a million vectors). Above 256 kB, a block is its own mapping, given back when freed.
    env["MALLOC_MMAP_THRESHOLD_"] = str(256 * 1024)
    command = [sys.executable, "-m", "ralph_mini.vector_speed", str(dim), str(seed), *map(str, sizes)]
    with tempfile.TemporaryFile("w+") as errors:  # a file, not a pipe: a full pipe would stall the worker
        worker = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=errors, text=True)
        try:
            yield from (json.loads(line) for line in worker.stdout)  # one line per size, as it finishes
            worker.wait()
        finally:  # stopped early (an interrupt, an error): the rest is not wanted, so the worker stops too
            worker.kill()
            worker.wait()
            worker.stdout.close()
        if worker.returncode != 0:
            errors.seek(0)
            raise RuntimeError(f"{' '.join(command)} failed:\n{errors.read()[-2000:]}")


if __name__ == "__main__":  # speed_rows' worker: python -m ralph_mini.vector_speed DIM SEED SIZE...
    import faiss

    faiss.omp_set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    dim, seed, *sizes = map(int, sys.argv[1:])
    for n in sizes:
        print(json.dumps(speed_row(n, dim, seed=seed)), flush=True)  # a row as soon as it is measured
