"""Retrieval benchmark for notebook 05: hit rates on the labelled set, injected tokens with and without
the budget, and top-3 query time at 100k lessons (numpy vs faiss; the Python loop measures call overhead).

    python benchmarks/retrieval.py            # the offline hashing embedder
    python benchmarks/retrieval.py --minilm   # also MiniLM (needs requirements-embeddings.txt)
"""

import sys

from ralph_mini.clock import FakeClock
from ralph_mini.memory import Memory
from ralph_mini.retrieval import (
    Retriever,
    build_labelled_memory,
    hit_rates,
    injected_tokens,
    load_labelled_set,
    select_within_budget,
)
from ralph_mini.vector_speed import retrieval_speed


def main() -> None:
    memory = Memory(FakeClock())
    keys = build_labelled_memory(memory)
    print("hit@3 (hit@1) on 40 labelled questions, 10 per kind")
    tables = {mode: hit_rates(Retriever(memory, mode=mode), keys) for mode in Retriever.MODES}
    if "--minilm" in sys.argv:
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
    speed = retrieval_speed(n=100_000, dim=512, k=3, queries=20)
    for name, seconds in speed.items():
        print(f"{name:>12}: {seconds * 1000:.1f} ms per top-3 query over 100k")
    print(f"faiss vs numpy (exact, same answers): {speed['numpy'] / speed['faiss']:.2f}x; the Python loop is")
    print("one numpy call per stored vector: it measures call overhead, not search")
    print("(notebook 05 compares numpy, faiss flat and faiss IVF at equal threads: vector_speed.speed_table)")


if __name__ == "__main__":
    main()
