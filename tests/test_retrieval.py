"""Retrieval: the embedder, the faiss index against brute force, sync with memory, hybrid quality on
the labelled set above a bar, and a budget that is never exceeded."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ralph_mini.clock import FakeClock
from ralph_mini.embed import HashingEmbedder
from ralph_mini.memory import Memory
from ralph_mini.retrieval import (
    Retriever,
    VectorIndex,
    build_labelled_memory,
    hit_rates,
    injected_tokens,
    keyword_score,
    lesson_tokens,
    select_within_budget,
)

RULES = [
    "when query_local_cache finds the order: skip query_database",
    "when status is pending and age under 30 min: skip query_payment_api",
    "when query_database finds nothing: skip query_payment_api",
    "when any task: start with query_local_cache",
]


def active_memory(rules=RULES):
    memory = Memory(FakeClock())
    for rule in rules:
        memory.propose(rule, task_id="T1", run_id="R1")
        memory.propose(rule, task_id="T2", run_id="R2")
    return memory


def test_hashing_embedder_is_deterministic_unit_and_cjk_aware():
    embedder = HashingEmbedder(dim=64)
    a, b = embedder.embed(["Has order A123 been paid?", "Has order A123 been paid?"])
    assert np.allclose(a, b) and np.isclose(np.linalg.norm(a), 1.0)
    assert embedder.embed(["订单付款"])[0].any()  # Chinese gets features too
    assert "订单" in embedder.features("订单付款") and "<pa" in embedder.features("paid")
    assert not embedder.embed([""])[0].any()


def test_faiss_matches_brute_force_numpy():
    rng = np.random.default_rng(0)
    embedder = HashingEmbedder(dim=128)
    memory = active_memory()
    index = VectorIndex(embedder)
    index.add(memory.active())
    texts = ["cache hit, skip the database", "pending order just created", "order not found anywhere"]
    matrix = embedder.embed([f"order status: {e.rule}. " for e in memory.active()])
    for text in texts + [str(rng.random())]:
        query = embedder.embed([text])[0]
        brute = sorted(zip(matrix @ query, [e.id for e in memory.active()], strict=True), reverse=True)
        got = index.search(text, 4)
        assert [i for i, _ in got] == [i for _, i in brute]
        assert np.allclose([s for _, s in got], [s for s, _ in brute], atol=1e-5)


def test_index_follows_memory_add_remove_expire():
    clock = FakeClock()
    memory = Memory(clock)
    index = VectorIndex(HashingEmbedder())
    for rule in RULES[:2]:
        memory.propose(rule, task_id="T1", run_id="R1")
    index.sync(memory)
    assert len(index) == 0  # candidates are not indexed
    for rule in RULES[:2]:
        memory.propose(rule, task_id="T2", run_id="R2")
    index.sync(memory)
    assert set(index.ids.values()) == {e.id for e in memory.active()} and len(index) == 2
    gone = memory.active()[0]
    gone.status = "removed"
    index.sync(memory)
    assert set(index.ids.values()) == {e.id for e in memory.active()} and len(index) == 1
    clock.advance(days=31)
    index.sync(memory)  # sweep expires the rest
    assert len(index) == 0 and index.search("anything", 3) == []
    index.add(memory.experiences.values())  # rebuild from the file's contents is idempotent by id
    index.add(memory.experiences.values())
    assert len(index) == 2


def test_keyword_score_misses_chinese_and_paraphrase():
    assert keyword_score(
        "Has order K512 been paid?", "checking whether an order has been paid"
    ) == pytest.approx(2 / 3)
    assert keyword_score("订单K512付款了吗？", "查询订单是否已付款") == 0.0
    assert keyword_score("Did the purchase get settled?", "whether an order has been paid") == 0.0


def test_retrieval_quality_on_the_labelled_set():
    memory = Memory(FakeClock())
    keys = build_labelled_memory(memory)
    totals = {}
    for mode in Retriever.MODES:
        table = hit_rates(Retriever(memory, mode=mode), keys)
        totals[mode] = sum(row["hit@3"] for row in table.values())
        assert table["original"]["hit@3"] == 10
        if mode != "keyword":
            assert table["Chinese"]["hit@3"] == 10
    assert totals == {"keyword": 16, "vector": 28, "hybrid": 29}
    assert totals["hybrid"] >= totals["vector"] > totals["keyword"]


def test_expired_lessons_score_zero_however_relevant():
    clock = FakeClock()
    memory = active_memory()
    retriever = Retriever(memory)
    assert retriever.search("cache finds the order, skip the database", 1)[0].experience.rule == RULES[0]
    clock_memory = Memory(clock, experiences=memory.experiences.values())
    clock.advance(days=40)
    assert Retriever(clock_memory).search("cache finds the order, skip the database", 3) == []


@given(
    st.lists(
        st.sampled_from(RULES + ["when any task: start with " + "x" * n for n in (10, 80, 300)]), max_size=12
    ),
    st.integers(0, 4000),
    st.floats(0.0, 1.0),
    st.integers(0, 5),
)
def test_budget_is_never_exceeded(rules, context, share, top_k):
    memory = Memory(FakeClock())
    experiences = []
    for i, rule in enumerate(rules):
        _, e = memory.propose(rule, task_id=f"T{i}", run_id="R")
        experiences.append(e)
    chosen = select_within_budget(experiences, context, share, top_k)
    assert injected_tokens(chosen) <= int(share * context)
    assert len(chosen) <= top_k
    positions = [experiences.index(e) for e in chosen]
    assert positions == sorted(set(positions))  # best first, each at most once


def test_budget_skips_a_lesson_that_does_not_fit_and_keeps_looking():
    memory = Memory(FakeClock())
    long_rule = "when any task: start with " + "x" * 400
    ranked = [memory.propose(r, task_id="T", run_id="R")[1] for r in (long_rule, RULES[0], RULES[1])]
    budget_context = int((lesson_tokens(RULES[0]) + lesson_tokens(RULES[1])) / 0.15) + 1
    assert [e.rule for e in select_within_budget(ranked, budget_context)] == RULES[:2]


def test_openai_embedder_through_the_sdk_offline():
    """The real SDK path, with httpx.MockTransport standing in for the network."""
    import json

    import httpx
    import openai

    from ralph_mini.embed import OpenAIEmbedder

    seen = []

    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        seen.append(body)
        data = [
            {"object": "embedding", "index": i, "embedding": [3.0, 4.0]} for i, _ in enumerate(body["input"])
        ]
        usage = {"prompt_tokens": 1, "total_tokens": 1}
        return httpx.Response(
            200, json={"object": "list", "data": data, "model": body["model"], "usage": usage}
        )

    client = openai.OpenAI(
        api_key="x",
        base_url="http://test/v1",
        http_client=httpx.Client(transport=httpx.MockTransport(handler)),
    )
    embedder = OpenAIEmbedder("nomic-embed-text", dim=2, client=client)
    vectors = embedder.embed(["a", "b"])
    assert seen[0]["model"] == "nomic-embed-text" and seen[0]["input"] == ["a", "b"]
    assert np.allclose(vectors, [[0.6, 0.8], [0.6, 0.8]])
    with pytest.raises(ValueError, match="returned 2-d vectors; pass dim=2"):
        OpenAIEmbedder("m", dim=3, client=client).embed(["a"])


def test_sentence_transformer_embedder_says_how_to_install():
    pytest.importorskip("numpy")
    try:
        import sentence_transformers  # noqa: F401
    except ImportError:
        from ralph_mini.embed import SentenceTransformerEmbedder

        with pytest.raises(ImportError, match="pip install -r requirements-embeddings.txt"):
            SentenceTransformerEmbedder()
    else:
        pytest.skip("sentence-transformers is installed here")


def test_minilm_maps_meaning_when_installed():
    pytest.importorskip(
        "sentence_transformers", reason="optional: pip install -r requirements-embeddings.txt"
    )
    from ralph_mini.embed import SentenceTransformerEmbedder

    embedder = SentenceTransformerEmbedder()
    a, b, c = embedder.embed(
        ["Has my order been paid?", "Did the purchase get settled?", "Reset my password"]
    )
    assert embedder.dim == 384 and float(a @ b) > float(a @ c) + 0.1
