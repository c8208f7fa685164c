"""Worker processes that share the cores: the benchmarks of notebooks 06, 09 and 12 run their arms here.

``in_workers(func, items, workers)`` is ``map`` over a pool of ``workers`` processes (or none, for one),
in order. Each worker cuts faiss's OpenMP threads to its share of the cores (``worker_threads``): two
workers on 2 cores that each let faiss start 2 threads would spin a spare thread against the other
worker's core (``benchmarks/retrieval_speed.py --thread-sweep``: a second thread never helps one query).

What a worker returns travels back pickled, and the parent reads it on the cores the workers share: so
a job returns what its caller needs, not everything it made (``scenario_bench.summary_job``).
"""

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import nullcontext


def in_workers(func: Callable, items: Sequence, workers: int = 1, progress: Callable | None = None,
               chunksize: int = 1) -> list:  # fmt: skip
    """``func`` of each item, in order: here, or in ``workers`` processes sharing the cores
    (``worker_threads``); ``progress`` wraps the results as they finish (a bar)."""
    share = (max(1, (os.cpu_count() or 1) // workers),)  # faiss threads per worker
    pool = ProcessPoolExecutor(workers, initializer=worker_threads, initargs=share) if workers > 1 else None
    with pool or nullcontext():
        done = pool.map(func, items, chunksize=chunksize) if pool else map(func, items)
        return list(progress(done, "arm runs", total=len(items)) if progress else done)


def worker_threads(threads: int) -> None:
    """A worker's setup: faiss's OpenMP threads cut to its share of the cores, so ``jobs`` workers never
    run more threads than there are cores (a spinning spare thread costs the other worker its core)."""
    import faiss

    faiss.omp_set_num_threads(threads)
