"""Retrieval benchmark for notebook 05: hit rates on the labelled set, injected tokens with and without
the budget, and top-3 query time at 100k lessons (numpy vs faiss; the Python loop measures call overhead).

    python benchmarks/retrieval.py            # the offline hashing embedder
    python benchmarks/retrieval.py --minilm   # also MiniLM (needs requirements-embeddings.txt)
    python benchmarks/retrieval.py --speed-lessons 10000 --speed-queries 5   # a quicker speed line
"""

import argparse
import heapq
import time

import numpy as np

from ralph_mini.clock import FakeClock
from ralph_mini.measure import at_least_one
from ralph_mini.memory import Memory
from ralph_mini.retrieval import (
    Retriever,
    build_labelled_memory,
    hit_rates,
    injected_tokens,
    load_labelled_set,
    select_within_budget,
)


def retrieval_speed(n: int = 100_000, dim: int = 512, k: int = 3, seed: int = 0, queries: int = 5) -> dict:
    """Wall seconds per top-k query over ``n`` random unit vectors: one numpy call per stored vector
    ("python loop": Python's call overhead), one numpy product, faiss's flat index on one thread
    (numpy's BLAS keeps its own thread count here; notebook 05's ``vector_speed.speed_rows`` makes them
    equal).

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


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--minilm", action="store_true", help="also MiniLM (needs requirements-embeddings.txt)"
    )
    parser.add_argument(
        "--speed-lessons", type=at_least_one, default=100_000, help="lessons in the speed test (100k)"
    )
    parser.add_argument(
        "--speed-queries", type=at_least_one, default=20, help="top-3 queries timed (default 20)"
    )
    args = parser.parse_args(argv)
    memory = Memory(FakeClock())
    keys = build_labelled_memory(memory)
    print("hit@3 (hit@1) on 40 labelled questions, 10 per kind")
    tables = {mode: hit_rates(Retriever(memory, mode=mode), keys) for mode in Retriever.MODES}
    if args.minilm:
        from ralph_mini.embed import SentenceTransformerEmbedder

        minilm = SentenceTransformerEmbedder()
        for mode in ("vector", "hybrid"):
            tables[f"MiniLM {mode}"] = hit_rates(Retriever(memory, minilm, mode=mode), keys)
    kinds = list(tables["keyword"])
    print(f"{'kind':<12}" + "".join(f"{mode:>16}" for mode in tables))
    for kind in kinds + ["all"]:
        cells = []
        for mode in tables:
            rows = tables[mode].values() if kind == "all" else [tables[mode][kind]]
            cells.append(f"{sum(r['hit@3'] for r in rows)} ({sum(r['hit@1'] for r in rows)})")
        print(f"{kind:<12}" + "".join(f"{c:>16}" for c in cells))
    retriever = Retriever(memory)
    queries = load_labelled_set()["queries"]
    for context in (8192, 512):
        ranked = [[h.experience for h in retriever.search(q["text"], k=10)] for q in queries]
        free = sum(injected_tokens(r) for r in ranked) / len(ranked)
        capped = sum(injected_tokens(select_within_budget(r, context)) for r in ranked) / len(ranked)
        print(f"context {context}: injected tokens/query without budget {free:.1f}, with budget {capped:.1f}")
    speed = retrieval_speed(n=args.speed_lessons, dim=512, k=3, queries=args.speed_queries)
    for name, seconds in speed.items():
        print(f"{name:>12}: {seconds * 1000:.1f} ms per top-3 query over {args.speed_lessons:,}")
    print(f"faiss vs numpy (exact, same answers): {speed['numpy'] / speed['faiss']:.2f}x; the Python loop is")
    print("one numpy call per stored vector: it measures call overhead, not search")
    print("(notebook 05 compares numpy, faiss flat and faiss IVF at equal threads: vector_speed.speed_rows)")


if __name__ == "__main__":
    main()
