"""How fast is nearest-lesson search? Exact numpy against faiss at 100k vectors (notebook 05).

A Python loop, one numpy call per stored vector, measures *call overhead*, not arithmetic; numpy's one
matrix-vector product and faiss's flat index do the same exact search in C. The three must return the
same top-k ids (asserted), so only speed is compared.

Left out on purpose: approximate indexes (IVF, HNSW), which trade recall for speed at millions of
vectors; at the kit's sizes exact search is already fast.
"""

import heapq
import time

import faiss
import numpy as np


def retrieval_speed(n: int = 100_000, dim: int = 512, k: int = 3, seed: int = 0, queries: int = 5) -> dict:
    """Wall seconds per top-k query over ``n`` synthetic unit vectors: a Python loop, numpy, faiss.

    The three must agree on the top-k ids (asserted), so the comparison is of speed alone.
    """
    faiss.omp_set_num_threads(1)  # one query gains nothing from threads; on 2 busy cores they only contend
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
