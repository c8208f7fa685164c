"""Does retrieval scale? ``Retriever.search`` against the raw faiss search under it, at 10k and 100k lessons.

    python benchmarks/retrieval_speed.py                 # 10k and 100k lessons, faiss on 1 thread
    python benchmarks/retrieval_speed.py --sizes 1000 10000 --threads 2
    python benchmarks/retrieval_speed.py --not-live 0.5  # half the lessons candidates, not yet live
    python benchmarks/retrieval_speed.py --thread-sweep 10 1000 10000 100000  # 1 thread against 2

For each size it builds a memory of synthetic live lessons (grammar rules with distinct tools, statuses
and ages, task types, and a failure note drawn from a 3,000-word vocabulary), then prints

- build: seconds from an empty ``Retriever`` to its first answer (tokenise, embed and index every
  lesson once);
- first pass: median milliseconds per ``Retriever.search(query, k=3)`` (hybrid mode, the kit's default)
  over the first pass of the queries, where each candidate lesson is weighed for the first time and its
  rule's instance check runs (once per lesson: ``Experience.names_an_instance``), as after a load;
- search: the same over the later passes (all passes with ``--repeats 1``);
- raw faiss: median milliseconds per ``IndexFlatIP.search`` of the same query vector over the same
  vectors, asking for the 2 x 10 candidates the retriever asks for, over the same passes as search;
- the ratio search / raw faiss (the target is <= 2).

Lessons not live (candidates, removed, expired) are not re-read by a search unless memory's ledger of
changes names them (``LiveLessons.follow``); ``--not-live`` shows what they still cost, and ``--changed N``
what a search costs when N lessons were hit since the last one (as after a task: they are re-read). On 2 cores
(search / raw faiss, 10k / 100k lessons): all live 1.68x / 1.12x, half not live 2.41x / 1.18x, against
2.15x / 1.24x and 4.14x / 3.10x when every search re-read them (the commit before the ledger); half not
live with 5 lessons hit before each search, 2.68x / 1.40x. On 2026-12-05, the code before and after the
per-search trims (the query embedded in fewer array operations, faiss's ids and vectors in one call,
the words' best slots by one key, the candidates' expiry checked only once one could have expired),
run in turn: all live 1.49x / 1.15x to 1.29x / 1.15x; half not live 2.05-2.16x / 1.32x to
1.64-1.79x / 1.26x.

Both searches run on the same number of faiss threads (``--threads``, default 1, what the loop uses:
``lesson_index.SEARCH_THREADS``). ``--thread-sweep`` prints where threads would start to gain: the
faiss search under ``VectorIndex`` (one query, 20 candidates, the kit's 512-d vectors) on 1 and on 2
threads, per index size. On 2 cores, under load (ms, 1 / 2 threads): 10 lessons 0.005 / 0.006, 1k
0.040 / 0.038, 10k 0.52 / 1.09, 100k 8.0 / 15.1, 300k 22 / 45: nowhere worth a core. faiss scans for a
single query on one thread; the second thread only maps the ids back, then spins, taking a core from
whatever else runs (the other worker of ``bench --scenario all --jobs 2``).

Times are wall-clock medians over 60 queries x ``--repeats``; each query is timed for both searches back
to back, so both see the same load. They vary from run to run.
"""

import argparse
import hashlib
import random
import time
from datetime import datetime, timedelta
from statistics import median

import faiss

from ralph_mini.clock import FakeClock
from ralph_mini.embed import HashingEmbedder
from ralph_mini.measure import at_least_one
from ralph_mini.memory import Experience, Memory
from ralph_mini.retrieval import Retriever, VectorIndex

STATUSES = [f"state{i}" for i in range(60)]
TASK_TYPES = [f"task_kind_{i}" for i in range(25)]


def synthetic_memory(n: int, seed: int = 0, not_live: float = 0.0) -> tuple[Memory, list[str]]:
    """``n`` lessons with distinct rules, a share ``not_live`` of them still candidates, the rest live;
    and 60 queries in the same vocabulary (seeded)."""
    rng = random.Random(seed)
    clock = FakeClock()
    vocabulary = [f"w{rng.getrandbits(40):x}" for _ in range(3000)] + "order payment refund cache".split()
    lessons = []
    for i in range(n):
        status, tool, minutes = STATUSES[i % 60], f"tool_{(i // 60) % 40}", 1 + i // 2400
        rule = f"when status is {status} and age under {minutes} min: skip {tool}"
        stamp = clock() - timedelta(minutes=rng.randrange(20 * 24 * 60))
        lessons.append(
            Experience(
                id=hashlib.sha256(rule.encode()).hexdigest()[:12],
                rule=rule,
                task_type=rng.choice(TASK_TYPES),
                trigger=f"status:{status}",
                tools=[tool],
                result="saves calls",
                failure_reason=" ".join(rng.choices(vocabulary, k=rng.randint(4, 12))),
                created_at=stamp.isoformat(timespec="minutes"),
                last_hit_at=stamp.isoformat(timespec="minutes"),
                confirmations=rng.randint(2, 6),
                status="candidate" if rng.random() < not_live else "active",
            )
        )
    queries = [
        f"{rng.choice(TASK_TYPES).replace('_', ' ')} {rng.choice(STATUSES)} "
        + " ".join(rng.choices(vocabulary, k=rng.randint(1, 4)))
        for _ in range(60)
    ]
    return Memory(clock, experiences=lessons), queries


def timed(search, argument) -> float:
    start = time.perf_counter()
    search(argument)
    return time.perf_counter() - start


def measure(n: int, repeats: int, not_live: float, threads: int = 1, changed: int = 0) -> dict:
    """Build, then time each query twice in a row, raw faiss and retriever, so both see the same load.
    ``changed``: lessons hit (``Memory.record_hits``) before each search, which that search re-reads."""
    memory, queries = synthetic_memory(n, not_live=not_live)
    lessons, rng = list(memory.experiences.values()), random.Random(1)
    start = time.perf_counter()
    retriever = Retriever(memory)
    retriever.search(queries[0], k=3)
    build = time.perf_counter() - start
    retriever.index.threads = threads  # the loop's searches run on SEARCH_THREADS; here, on --threads
    inner = faiss.downcast_index(retriever.index.index.index)  # the IndexFlatIP inside the id map
    flat = faiss.IndexFlatIP(inner.d)
    flat.add(inner.reconstruct_n(0, inner.ntotal))
    vectors = retriever.index.embedder.embed(queries)
    k = 2 * retriever.candidates  # what the retriever asks faiss for
    raw, ours = [], []
    for _ in range(repeats):
        for query, vector in zip(queries, vectors, strict=True):
            raw.append(timed(lambda v: flat.search(v[None, :], k), vector))
            memory.record_hits(rng.sample(lessons, changed))
            ours.append(timed(lambda q: retriever.search(q, k=3), query))
    later = slice(len(queries), None) if repeats > 1 else slice(None)  # the first pass apart
    return {
        "build s": build,
        "first pass ms": 1000 * median(ours[: len(queries)]),
        "search ms": 1000 * median(ours[later]),
        "raw faiss ms": 1000 * median(raw[later]),
    }


def thread_sweep(sizes: list[int], repeats: int) -> None:
    """Median ms per one-query faiss search under ``VectorIndex``, on 1 and on 2 threads, per size;
    the two thread counts take turns by blocks of 10 queries, so both see the same load (query by query,
    each 2-thread search would pay for waking its second thread: up to 8 ms on a loaded machine)."""
    import numpy as np

    print(f"faiss {faiss.__version__}, one query, 20 candidates; ms per search (median)")
    print(f"{'lessons':>8} {'1 thread':>9} {'2 threads':>10} {'2 / 1':>7}")
    rng = np.random.default_rng(0)
    for n in sizes:
        index = VectorIndex(HashingEmbedder())
        vectors = rng.standard_normal((n, index.embedder.dim)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        index.add_vectors([f"{i:012x}" for i in range(n)], vectors)
        queries = vectors[rng.integers(0, n, 20 * repeats)]
        times: dict[int, list[float]] = {1: [], 2: []}
        for block in np.split(queries, 2 * repeats):  # blocks of 10 queries, 1 and 2 threads in turn
            for threads in (1, 2):
                index.threads = threads
                index.on_threads(index.index.search, block[:1], 20)  # wake the second thread first
                times[threads] += [timed(lambda q, i=index: i.on_threads(i.index.search, q[None], 20), query)
                                   for query in block]  # fmt: skip
        one, two = 1000 * median(times[1]), 1000 * median(times[2])
        print(f"{n:>8} {one:>9.3f} {two:>10.3f} {two / one:>6.2f}x")


def share(text: str) -> float:
    """A share of the lessons, from 0 to under 1 (all of them not live would leave nothing to search)."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: write a share from 0 to under 1, e.g. 0.5")
    return value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=at_least_one, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--threads", type=at_least_one, default=1, help="faiss threads, the same for both")
    parser.add_argument("--repeats", type=at_least_one, default=3, help="passes over the 60 queries")
    parser.add_argument(
        "--not-live", type=share, default=0.0, help="share of lessons left as candidates (never live)"
    )
    parser.add_argument("--changed", type=int, default=0, help="lessons hit before each search")
    parser.add_argument("--thread-sweep", type=at_least_one, nargs="+", metavar="SIZE",
                        help="instead: 1 against 2 faiss threads per search, at these sizes")  # fmt: skip
    args = parser.parse_args()
    if not 0 <= args.changed <= min(args.sizes):
        parser.error(f"--changed {args.changed}: write a number of lessons from 0 to the smallest size")
    if args.thread_sweep:
        return thread_sweep(args.thread_sweep, args.repeats)
    faiss.omp_set_num_threads(args.threads)
    print(f"faiss {faiss.__version__} on {args.threads} thread(s), {datetime.now():%Y-%m-%d %H:%M}", end="")
    print(f", {args.not_live:.0%} of lessons not live, {args.changed} hit before each search")
    heads = [("lessons", 8), ("build s", 8), ("first pass ms", 14), ("search ms", 10), ("raw faiss ms", 13)]
    print(" ".join(f"{head:>{width}}" for head, width in [*heads, ("search / faiss", 15)]))
    for n in args.sizes:
        row = measure(n, args.repeats, args.not_live, args.threads, args.changed)
        ratio = row["search ms"] / row["raw faiss ms"]
        times = f"{row['build s']:>8.2f} {row['first pass ms']:>14.2f} {row['search ms']:>10.2f}"
        print(f"{n:>8} {times} {row['raw faiss ms']:>13.2f} {ratio:>14.2f}x")


if __name__ == "__main__":
    main()
