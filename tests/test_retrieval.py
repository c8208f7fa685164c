"""Retrieval: the embedder, the faiss index against brute force, sync with memory, hybrid quality on
the labelled set above a bar, and a budget that is never exceeded; the scalable index (cached
embeddings, a keyword index, a retriever that follows memory) against its definitions; the speed
lesson's recall."""

from datetime import timedelta

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ralph_mini.clock import FakeClock
from ralph_mini.embed import HashingEmbedder, KeywordIndex, keyword_words
from ralph_mini.memory import Memory, MemoryConfig
from ralph_mini.retrieval import (
    Retriever,
    VectorIndex,
    build_labelled_memory,
    hit_rates,
    injected_tokens,
    keyword_score,
    lesson_tokens,
    load_labelled_set,
    select_within_budget,
)

TYPE = "status"  # the task type every lesson here is learned on (the order desk's)
RULES = [
    "when query_local_cache finds the order: skip query_database",
    "when status is pending and age under 30 min: skip query_payment_api",
    "when query_database finds nothing: skip query_payment_api",
    "when any task: start with query_local_cache",
]


def active_memory(rules=RULES):
    memory = Memory(FakeClock())
    for rule in rules:
        memory.propose(rule, task_id="T1", run_id="R1", task_type=TYPE)
        memory.propose(rule, task_id="T2", run_id="R2", task_type=TYPE)
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
    matrix = embedder.embed([f"{TYPE}: {e.rule}. " for e in memory.active()])  # task type, rule, reason
    for text in texts + [str(rng.random())]:
        query = embedder.embed([text])[0]
        brute = sorted(zip(matrix @ query, [e.id for e in memory.active()], strict=True), reverse=True)
        got = index.search(text, 4)
        assert [i for i, _ in got] == [i for _, i in brute]
        assert np.allclose([s for _, s in got], [s for s, _ in brute], atol=1e-5)


def test_index_follows_memory_add_remove_expire():
    clock = FakeClock()
    waiting = Memory(clock, MemoryConfig(probation=False))
    for rule in RULES[:2]:
        waiting.propose(rule, task_id="T1", run_id="R1", task_type=TYPE)
    index = VectorIndex(HashingEmbedder())
    index.sync(waiting)
    assert len(index) == 0  # candidates are not indexed
    memory = Memory(clock)
    for rule in RULES[:2]:
        memory.propose(rule, task_id="T1", run_id="R1", task_type=TYPE)
    index.sync(memory)  # proposed once, on probation: live, so indexed
    assert {e.status for e in memory.live()} == {"probation"}
    assert set(index.ids.values()) == {e.id for e in memory.live()} and len(index) == 2
    for rule in RULES[:2]:
        memory.propose(rule, task_id="T2", run_id="R2", task_type=TYPE)
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
        _, e = memory.propose(rule, task_id=f"T{i}", run_id="R", task_type=TYPE)
        experiences.append(e)
    chosen = select_within_budget(experiences, context, share, top_k)
    assert injected_tokens(chosen) <= int(share * context)
    assert len(chosen) <= top_k
    positions = [experiences.index(e) for e in chosen]
    assert positions == sorted(set(positions))  # best first, each at most once


def test_budget_skips_a_lesson_that_does_not_fit_and_keeps_looking():
    memory = Memory(FakeClock())
    long_rule = "when any task: start with " + "x" * 400
    ranked = [
        memory.propose(r, task_id="T", run_id="R", task_type=TYPE)[1] for r in (long_rule, RULES[0], RULES[1])
    ]
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


def reference_embedding(embedder: HashingEmbedder, text: str) -> np.ndarray:
    """The embedder's definition, one blake2b per feature, no caches: what ``embed`` must equal."""
    import hashlib

    vector = np.zeros(embedder.dim, dtype=np.float64)
    for feature in embedder.features(text):
        digest = int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest(), "big")
        vector[digest % embedder.dim] += 1.0 if (digest >> 63) & 1 else -1.0
    norm = np.sqrt((vector * vector).sum())
    return (vector / (norm or 1.0)).astype(np.float32)


def test_cached_batched_embedding_is_bit_identical_to_its_definition():
    texts = [q["text"] for q in load_labelled_set()["queries"]] + [
        "",
        "订单订单 订",
        "ｆｕｌｌ Ａ１２３ café",
    ]
    for dim in (16, 512):
        embedder = HashingEmbedder(dim)
        got = embedder.embed(texts + texts, batch=7)  # twice: the second pass reads the cache
        want = np.stack([reference_embedding(embedder, t) for t in texts + texts])
        assert got.tobytes() == want.tobytes()
        alone = np.concatenate([embedder.embed([t]) for t in texts])  # one text: ``embed_one``
        assert alone.shape == (len(texts), dim) and alone.tobytes() == want[: len(texts)].tobytes()


def test_keyword_index_counts_shared_words():
    texts = ["order has been paid", "refund the order", "订单K512付款了吗"]
    index = KeywordIndex()
    index.add([0, 1, 2], [keyword_words(t) for t in texts])
    query = "Has order K512 been paid?"
    counts = index.counts(keyword_words(query), 3)
    assert [c / len(keyword_words(query)) for c in counts] == [keyword_score(query, t) for t in texts]


def test_a_long_lived_retriever_answers_as_a_fresh_one_and_never_changes_memory():
    """Lessons proposed, confirmed, removed, refreshed, expired by the clock and revived: after every
    change a retriever that has followed memory all along ranks exactly as one built from scratch."""
    import random
    from dataclasses import asdict

    rng = random.Random(0)
    clock = FakeClock()
    memory = Memory(clock)
    keys = build_labelled_memory(memory)
    queries = [q["text"] for q in load_labelled_set()["queries"]][::4] + ["", "skip the database"]
    followers = {mode: Retriever(memory, mode=mode, candidates=3) for mode in Retriever.MODES}
    for step in range(40):
        lessons = list(memory.experiences.values())
        change = step % 5
        if change == 0:
            rule = rng.choice(RULES + [f"when status is state{rng.randrange(9)}: skip tool_{step}"])
            memory.propose(
                rule, task_id=f"T{rng.randrange(3)}", run_id="R", failure_reason="order paid", task_type=TYPE
            )
        elif change == 1:
            rng.choice(lessons).status = rng.choice(["active", "removed", "candidate"])
        elif change == 2:
            clock.advance(days=rng.choice([-6, 4, 12]))
        elif change == 3:
            memory.record_hits(rng.sample(lessons, 2))
        else:
            memory.sweep()
        before = [asdict(e) for e in memory.experiences.values()]
        for mode, follower in followers.items():
            fresh = Retriever(memory, mode=mode, candidates=3)
            for query in queries:
                assert follower.search(query, 5) == fresh.search(query, 5), (step, mode, query)
        assert [asdict(e) for e in memory.experiences.values()] == before  # a search reads, never writes
    assert keys  # the labelled lessons were there all along


def test_the_slots_sharing_most_words_are_those_of_the_full_sort():
    """``best_by_words`` picks by one key per slot; it equals sorting every live slot sharing a word by
    (words shared, rule, memory order), for counts where none, a few or every slot shares a word, with
    lessons never live (not tokenised) and lessons live once, then removed, among them."""
    import random
    from dataclasses import replace

    from ralph_mini.memory import Experience

    stamp = FakeClock()().isoformat(timespec="minutes")
    first = Experience(id="0" * 12, rule="", task_type=TYPE, trigger="any", tools=[], result="",
                       failure_reason="", created_at=stamp, last_hit_at=stamp)  # fmt: skip
    lessons = [
        replace(
            first,
            id=f"{i:012x}",
            rule=f"when status is state{i % 7}: skip tool_{i % 5}",
            status="candidate" if i % 4 == 0 else "active",
        )
        for i in range(60)
    ]
    memory = Memory(FakeClock(), experiences=lessons)
    retriever = Retriever(memory)
    retriever.search("status", 3)  # index the live ones
    for lesson in lessons[1::9]:
        lesson.status = "removed"  # tokenised, no longer live
    retriever.search("status", 3)
    live, rng = retriever.lessons.live, random.Random(0)
    assert 0 < live.sum() < len(lessons) and (retriever.lessons.rank > 0).sum() > live.sum()
    for share in (0.0, 0.1, 0.5, 1.0):
        for _ in range(20):
            counts = np.array([rng.randint(1, 3) if rng.random() < share else 0 for _ in lessons]) * live
            for m in (1, 3, 10, 100):  # (a slot not live shares nothing: ``keyword_counts``)
                sharing = np.flatnonzero(counts).tolist()
                want = sorted(sharing, key=lambda s: (-counts[s], lessons[s].rule, s))
                assert retriever.lessons.best_by_words(counts, m) == want[:m]


def test_a_search_rereads_only_the_lessons_changed_since_the_last(monkeypatch):
    """The live-lesson filter costs what changed, not what memory holds: a hand edit, a hit, a removal
    each make the next search re-read that lesson alone; a search after nothing changed re-reads none."""
    from ralph_mini.lesson_index import LiveLessons

    memory = active_memory()
    for i in range(40):
        memory.propose(f"when status is state{i}: skip tool_{i}", task_id="T1", run_id="R", task_type=TYPE)
    retriever = Retriever(memory)
    retriever.search("pending order", 3)
    reread = []
    update = LiveLessons.update
    monkeypatch.setattr(
        LiveLessons, "update", lambda self, slots, clock: (reread.append(slots), update(self, slots, clock))
    )
    lessons = list(memory.experiences.values())
    retriever.search("pending order", 3)
    lessons[7].status = "removed"  # by hand: memory's operations are not the only writers
    retriever.search("pending order", 3)
    memory.record_hits([lessons[3], lessons[5]])
    retriever.search("pending order", 3)
    memory.propose("when status is paid: skip tool_x", task_id="T9", run_id="R", task_type=TYPE)
    retriever.search("pending order", 3)
    assert reread == [[7], [3, 5], [len(lessons)]]  # the first search, after no change: none
    assert retriever.search("pending order", 3) == Retriever(memory).search("pending order", 3)


def test_a_search_finds_what_a_fresh_retriever_finds_after_lessons_swapped_or_replaced_by_hand():
    """Lessons put in, swapped or taken out of memory's dict by hand (no field set says so): each search
    agrees with a retriever that reads memory afresh."""
    import dataclasses

    memory = active_memory()
    retriever, query = Retriever(memory), "pending order"
    retriever.search(query, 3)
    lessons = list(memory.experiences.values())
    lessons[0].status = "removed"
    retriever.search(query, 3)
    edits = [
        lambda: memory.experiences.__setitem__(lessons[0].id, dataclasses.replace(lessons[0], status="active",
                                               rule="when status is pending: skip query_payment_api")),
        lambda: memory.experiences.__setitem__(lessons[1].id, dataclasses.replace(lessons[1], status="removed")),
        lambda: (memory.experiences.pop(lessons[2].id),
                 memory.experiences.update({"f" * 12: dataclasses.replace(lessons[2], id="f" * 12,
                                                                          rule="when any task: answer")})),
    ]  # fmt: skip
    for edit in edits:
        edit()
        found = [(s.experience.id, s.experience.rule) for s in retriever.search(query, 5)]
        assert found == [(s.experience.id, s.experience.rule) for s in Retriever(memory).search(query, 5)]


def test_a_clock_moved_back_brings_back_lessons_expired_by_it():
    """Only a clock moved back (or a longer expiry) can revive a lesson no one touched: the follower
    re-tests the active lessons it left out then, and answers as a fresh retriever."""
    clock = FakeClock()
    memory = Memory(clock, MemoryConfig(expire_after_days=10))
    memory.propose(RULES[1], task_id="T1", run_id="R", task_type=TYPE)
    memory.propose(RULES[1], task_id="T2", run_id="R", task_type=TYPE)
    follower = Retriever(memory)
    assert follower.search("pending order age", 3)
    clock.advance(days=11)  # expired by the clock, not swept: still 'active'
    assert follower.search("pending order age", 3) == []
    clock.advance(days=-5)
    assert follower.search("pending order age", 3) == Retriever(memory).search("pending order age", 3) != []


def test_a_lesson_dying_by_the_clock_gives_its_candidate_place_back():
    """A search skips the per-candidate expiry check while no live lesson can have expired (the oldest
    last hit it read is within expiry). A last hit set back by hand is read too: when the clock then
    passes that lesson's expiry, the lesson behind it is found, as by a fresh retriever."""
    clock = FakeClock()
    memory = Memory(clock, MemoryConfig(expire_after_days=10))
    for rule in RULES[1:3]:
        for task in ("T1", "T2"):
            memory.propose(rule, task_id=task, run_id="R", task_type=TYPE)
    query = "pending order age under 30 min skip the payment api"
    follower = Retriever(memory, candidates=1)
    best, behind = follower.search(query, 3)[0].experience, RULES[2]
    assert best.rule == RULES[1]
    best.last_hit_at = (clock() - timedelta(days=8)).isoformat(timespec="minutes")  # by hand: still live
    assert [s.experience for s in follower.search(query, 3)] == [best]
    clock.advance(days=3)  # best is 11 days old: expired by the clock, not swept
    assert [s.experience.rule for s in follower.search(query, 3)] == [behind]
    assert follower.search(query, 3) == Retriever(memory, candidates=1).search(query, 3)


def test_the_ledger_of_changes_is_invisible_to_records_and_copies():
    """A lesson reports to memory's ledger without a field: asdict, equality, copies and pickles are
    as before, and a copy taken with its memory reports to the copied ledger."""
    import copy
    import pickle
    from dataclasses import asdict

    memory = active_memory()
    Retriever(memory).search("pending", 3)  # the follower makes every lesson report to memory.changes
    lesson = next(iter(memory.experiences.values()))
    assert "_watchers" not in asdict(lesson) and copy.copy(lesson) == lesson
    assert pickle.loads(pickle.dumps(lesson)) == lesson
    twin, before = copy.deepcopy(memory), memory.changes.count
    next(iter(twin.experiences.values())).status = "removed"
    assert twin.changes.since(before) == [lesson.id] and memory.changes.count == before  # each its own


def test_speed_rows_grade_the_approximate_index_against_exact_search():
    from ralph_mini.vector_speed import speed_row, speed_rows

    (row,) = speed_rows(sizes=(3000,), dim=16)
    assert row["vectors"] == 3000 and all(row[name] > 0 for name in ("numpy", "faiss flat", "IVF 16/256"))
    recalls = [row[f"IVF {lists}/256 recall@3"] for lists in (1, 4, 16)]
    assert 0 <= recalls[0] <= recalls[1] <= recalls[2] <= 1  # more lists read, more neighbours found
    assert [speed_row(3000, 16)[f"IVF {n}/256 recall@3"] for n in (1, 4, 16)] == recalls  # seeded


def test_speed_rows_hands_each_size_over_as_it_is_measured_and_stops_its_worker_when_left(monkeypatch):
    from ralph_mini import vector_speed

    workers = []
    popen = vector_speed.subprocess.Popen
    monkeypatch.setattr(
        vector_speed.subprocess, "Popen", lambda *a, **kw: workers.append(popen(*a, **kw)) or workers[-1]
    )
    rows = vector_speed.speed_rows(sizes=(3000, 200_000), dim=16)
    assert next(rows)["vectors"] == 3000 and workers[0].poll() is None  # the worker goes on to 200,000
    rows.close()  # the caller wants no more: the worker is stopped, not waited for
    assert workers[0].returncode == -9 and workers[0].stdout.closed
    assert [row["vectors"] for row in vector_speed.speed_rows(sizes=(1000, 2000), dim=8)] == [1000, 2000]


def test_speed_rows_says_what_failed_in_its_worker():
    from ralph_mini.vector_speed import speed_rows

    with pytest.raises(RuntimeError, match=r"(?s)ralph_mini.vector_speed 16 0 -5 failed:.*Traceback"):
        list(speed_rows(sizes=(-5,), dim=16))


@given(
    st.integers(0, 2**32 - 1),
    st.integers(1, 64),
    st.integers(0, 8),
    st.sampled_from([0.0, 0.5, 1.0]),
)
def test_rounded_cosines_are_the_exact_cosines_rounded(seed, dim, decimals, zeros):
    """The fast path (one float64 product, a rounding it cannot change) gives what the exact sum gives,
    for every row: at 0 (its sign), for orthogonal and for equal vectors (boundaries: the next test)."""
    from ralph_mini.embed import exact_cosine, normalize, rounded_cosines

    rng = np.random.default_rng(seed)
    raw = rng.integers(-3, 4, size=(12, dim)).astype(np.float32)
    raw[rng.random(12) < zeros / 2] = 0  # some all-zero rows: cosine 0
    vectors = normalize(raw)
    query = vectors[0] if seed % 2 else normalize(rng.standard_normal((1, dim)).astype(np.float32))[0]
    expected = [round(exact_cosine(query, row), decimals) for row in vectors]
    assert rounded_cosines(query, vectors, decimals) == expected
    assert [str(x) for x in rounded_cosines(query, vectors, decimals)] == [str(x) for x in expected]


def test_a_cosine_near_a_rounding_boundary_is_left_to_the_exact_sum():
    """Another CPU's float64 product may differ in the last places: a value that error could round
    either way, or to 0 of either sign, is not settled by it."""
    from ralph_mini.embed import settled

    assert settled(np.array([0.73, -0.73]), 1e-12, 1) == [0.7, -0.7]
    assert settled(np.array([0.25 + 1e-13]), 1e-12, 1) == [None]  # 0.2 or 0.3, depending on the last bits
    assert settled(np.array([0.0000004, 1e-15]), 1e-12, 6) == [None, None]  # 0.0 or -0.0
    assert settled(np.array([0.1234565, 0.12345651]), 1e-12, 6) == [None, 0.123457]


@given(st.floats(-1, 1), st.integers(0, 8), st.sampled_from([0.0, 1e-12, 1e-9]))
def test_a_settled_value_is_what_python_rounds_it_to_within_the_slack(value, decimals, slack):
    """Settled in array operations means: every value within ``slack`` rounds (Python's ``round``) to
    it, and it is not 0."""
    from ralph_mini.embed import settled

    (found,) = settled(np.array([value]), slack, decimals)
    if found is not None:
        assert found != 0 and str(found) == str(round(value, decimals))
        assert round(value - slack, decimals) == found == round(value + slack, decimals)


def test_the_retrieval_benchmark_answers_help_and_prints_a_ratio_per_size():
    """``benchmarks/retrieval_speed.py`` is what the README's search / raw faiss figures come from."""
    import subprocess
    import sys
    from pathlib import Path

    script = str(Path(__file__).parents[1] / "benchmarks" / "retrieval_speed.py")
    helped = subprocess.run([sys.executable, script, "--help"], capture_output=True, text=True, check=True)
    assert "--not-live" in helped.stdout and "--changed" in helped.stdout
    ran = subprocess.run(
        [sys.executable, script, "--sizes", "300", "--repeats", "1", "--not-live", "0.5", "--changed", "3"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "50% of lessons not live, 3 hit before each search" in ran.stdout
    (row,) = [line.split() for line in ran.stdout.splitlines() if line.split()[:1] == ["300"]]
    assert row[-1].endswith("x") and float(row[-1][:-1]) > 0
