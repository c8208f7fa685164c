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
and its recall, are the same on every run.

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

import numpy as np


def clustered_unit_vectors(n: int, dim: int, rng: np.random.Generator, topics: int = 1000) -> np.ndarray:
    """``n`` unit vectors around ``topics`` random centres (float32, shape (n, dim))."""
    centres = rng.standard_normal((topics, dim), dtype=np.float32)
    vectors = centres[rng.integers(0, topics, n)]
    vectors += rng.standard_normal((n, dim), dtype=np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def per_query_seconds(search, probes: np.ndarray) -> float:
    """Median wall seconds of ``search(probe)`` over the probes."""
    times = []
    for probe in probes:
        start = time.perf_counter()
        search(probe)
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def speed_row(n: int, dim: int = 128, k: int = 3, seed: int = 0, timed: int = 20, graded: int = 200) -> dict:
    """One size: median wall seconds per query (``timed`` queries, one at a time) of exact numpy, faiss
    flat, and faiss IVF reading 1, 4 or 16 of its 256 lists; and each IVF setting's recall@k, the share
    of the exact top k it finds, over ``graded`` queries."""
    import faiss

    rng = np.random.default_rng(seed)
    matrix = clustered_unit_vectors(n, dim, rng)
    probes = matrix[rng.integers(0, n, graded)] + 0.05 * rng.standard_normal((graded, dim), dtype=np.float32)
    probes /= np.linalg.norm(probes, axis=1, keepdims=True)  # near a stored lesson, not on it
    flat = faiss.IndexFlatIP(dim)
    flat.add(matrix)
    quantizer = faiss.IndexFlatIP(dim)
    quantizer.add(matrix[rng.choice(n, 256, replace=False)])
    ivf = faiss.IndexIVFFlat(quantizer, dim, 256, faiss.METRIC_INNER_PRODUCT)
    start = time.perf_counter()
    ivf.add(matrix)  # files each vector under its nearest centroid
    row = {"vectors": n, "dim": dim, "IVF build": time.perf_counter() - start}

    def numpy_exact(q):
        scores = matrix @ q
        top = np.argpartition(-scores, k)[:k]
        return top[np.argsort(-scores[top])]

    exact = flat.search(probes, k)[1]
    assert all(list(numpy_exact(q)) == list(e) for q, e in zip(probes[:timed], exact, strict=False))
    row["numpy"] = per_query_seconds(numpy_exact, probes[:timed])
    row["faiss flat"] = per_query_seconds(lambda q: flat.search(q[None, :], k), probes[:timed])
    for nprobe in (1, 4, 16):
        ivf.nprobe = nprobe
        found = ivf.search(probes, k)[1]
        hits = sum(len(set(a) & set(e)) for a, e in zip(found, exact, strict=True))
        row[f"IVF {nprobe}/256"] = per_query_seconds(lambda q: ivf.search(q[None, :], k), probes[:timed])
        row[f"IVF {nprobe}/256 recall@{k}"] = round(hits / (k * graded), 3)
    return row


def speed_table(sizes=(100_000, 1_000_000), dim: int = 128, threads: int = 1, seed: int = 0) -> list[dict]:
    """``speed_row`` for each size, in a fresh process where numpy's BLAS and faiss both use ``threads``."""
    env = os.environ | {
        name: str(threads) for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
    }
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
