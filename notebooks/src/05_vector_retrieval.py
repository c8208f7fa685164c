# %% [markdown]
# # 05 · Vector retrieval with faiss, and a budget for what goes into the prompt
#
# **What you will build:** a retriever that finds the right lesson even when the task is worded
# differently from the lesson, or written in another language, and an injection step that never lets
# retrieved lessons take more than 15% of the model's context (at most three of them).
#
# Notebook 04 looked lessons up by *tags*: fine while one agent writes every lesson in one grammar. A
# real memory holds lessons about refunds, shipping, invoices..., in several languages, and questions
# come in any wording. The seed article swapped the keyword lookup for a vector memory; we measure what
# that buys on a fixed labelled set.

# %%
import pandas as pd

from ralph_mini.clock import FakeClock
from ralph_mini.embed import HashingEmbedder
from ralph_mini.memory import Memory
from ralph_mini.retrieval import (
    Retriever,
    build_labelled_memory,
    experience_text,
    hit_rates,
    injected_tokens,
    keyword_score,
    load_labelled_set,
    select_within_budget,
)
from ralph_mini.vector_speed import speed_table

labelled = load_labelled_set()
memory = Memory(FakeClock())
keys = build_labelled_memory(memory)
pd.DataFrame(
    [{"lesson": e["key"], "task type": e["task_type"], "rule": e["rule"]} for e in labelled["experiences"]]
)

# %% [markdown]
# Each lesson also carries a note of what taught it, in English and in Chinese (the seed's author wrote
# in Chinese). The labelled set asks for each lesson four times: in the lesson's own words, in a
# paraphrase, in new wording, and in Chinese.

# %%
pd.DataFrame(labelled["queries"][:8])

# %% [markdown]
# ## Why keywords miss
#
# A keyword index splits text on spaces and punctuation and counts shared words. Look at the first
# lesson's text against three phrasings of the same question:

# %%
lesson = next(e for e in memory.active() if keys[e.id] == "status_cache")
print(experience_text(lesson), "\n")
for query in [
    "Has order K512 been paid? Check its status and amount.",
    "Did the purchase K512 get settled?",
    "订单K512付款了吗？",
]:
    print(f"{keyword_score(query, experience_text(lesson)):.2f}  {query}")

# %% [markdown]
# The paraphrase shares no word. The Chinese question shares everything that matters, but Chinese has
# no spaces, so the keyword index sees one long "word" and finds nothing.
#
# ## Embeddings
#
# An embedder turns text into a vector so that similar texts land close together; closeness is the
# cosine of the angle between them. The kit's offline embedder needs no download: it hashes words,
# character 3-grams of each word, and pairs of Chinese characters into 512 buckets. It knows
# *spelling*, not *meaning*: "paid" lands near "payment" (shared 3-grams), "purchase" does not land
# near "order".

# %%
embedder = HashingEmbedder()
print(embedder.features("订单K512付款了吗？"))
texts = [
    "Has order K512 been paid?",
    "checking whether an order has been paid",
    "Did the purchase get settled?",
    "订单付款了吗",
    "查询订单是否已付款",
]
vectors = embedder.embed(texts)
pd.DataFrame(vectors @ vectors.T, index=texts, columns=range(len(texts))).round(2)

# %% [markdown]
# ## faiss
#
# faiss keeps the lesson vectors in an index and returns the nearest ones; its exact inner-product
# index over unit vectors gives cosines. The retriever's score is hybrid:
#
# $$\text{score} = \underbrace{(0.5\,\text{keyword} + 0.5\,\text{cosine})}_{\text{relevance}} \times \underbrace{\text{confidence} \times \text{decay}}_{\text{weight (notebook 04)}}$$
#
# Generative Agents (Park et al., 2023) *add* recency, importance and relevance. We *multiply*, so that
# an expired or distrusted lesson scores zero however relevant it looks (notebook 04's pollution).

# %% [markdown]
# **From scratch: embed, index in faiss, score hybrid, cut to the budget.** Each feature of a text
# (above) adds +1 or -1 to one of 512 buckets picked by a hash, and the vector is scaled to length 1.
# Every lesson is scored by the formula. Then, best first, a lesson goes into the prompt if its line
# still fits in 15% of the context, three at most (the budget is explained below).

# %%
# from scratch: embed, index in faiss, score hybrid, cut to the budget
import hashlib

import faiss
import numpy as np

from ralph_mini.model import count_tokens


def embed(text, dim=512):
    vector = np.zeros(dim)
    for feature in embedder.features(text):  # words, 3-grams of words, pairs of Chinese characters
        digest = int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest(), "big")
        vector[digest % dim] += 1 if digest >> 63 else -1  # the bucket, and a sign from the top bit
    return (vector / (np.linalg.norm(vector) or 1)).astype(np.float32)


lessons = memory.active()
index = faiss.IndexFlatIP(512)  # inner product; of unit vectors, that is the cosine
index.add(np.stack([embed(experience_text(lesson)) for lesson in lessons]))


def search_by_hand(query, k=3):
    cosines, rows = index.search(embed(query)[None, :], len(lessons))  # every lesson, nearest first
    scored = []
    for cosine, row in zip(cosines[0], rows[0], strict=True):
        lesson = lessons[row]
        relevance = 0.5 * keyword_score(query, experience_text(lesson)) + 0.5 * float(cosine)
        score = round(relevance * memory.weight(lesson), 6)  # 6 decimals: below that is float noise
        if score > 0:
            scored.append((-score, lesson.rule, lesson))  # best first; a tie goes by the rule's text
    return [(-minus, lesson) for minus, _, lesson in sorted(scored)[:k]]


def cut_to_budget(ranked, context_tokens=8192, share=0.15, top_k=3):
    budget, chosen, used = int(share * context_tokens), [], 0
    for lesson in ranked:
        cost = count_tokens(f"- {lesson.rule}\n")  # the lesson's line in the prompt
        if len(chosen) < top_k and used + cost <= budget:
            chosen.append(lesson)
            used += cost
    return chosen


for score, lesson in search_by_hand("我的快递到哪里了？"):
    print(f"{score:.3f}  {lesson.rule}")

# %% [markdown]
# **The package's version: `retrieval.Retriever.search` and `select_within_budget`**: the same vectors
# to the bit, the same scores and order on all 40 labelled questions, the same lessons within the
# budget at every context size below. What it adds: a faiss index with ids kept in step with memory as
# lessons come, go or expire (`lesson_index.LiveLessons`); an inverted keyword index; the best few
# candidates of each side instead of every lesson; cosines re-scored exactly, the same on every CPU;
# and three modes, keyword, vector and hybrid.

# %%
retriever = Retriever(memory, embedder, mode="hybrid")
for hit in retriever.search("我的快递到哪里了？", k=3):
    print(
        f"{hit.score:.3f} = ({hit.keyword:.2f} kw, {hit.cosine:.2f} cos) x {hit.weight:.2f}  {hit.experience.rule}"
    )
same_vectors = np.array_equal(
    np.stack([embed(experience_text(e)) for e in lessons]),
    embedder.embed([experience_text(e) for e in lessons]),
)
same_ranking = same_budget = 0
for query in labelled["queries"]:
    by_hand = search_by_hand(query["text"], k=10)
    package = retriever.search(query["text"], k=10)
    same_ranking += [(round(s, 6), e.id) for s, e in by_hand] == [
        (round(h.score, 6), h.experience.id) for h in package
    ]
    same_budget += all(
        cut_to_budget([e for _, e in by_hand], n) == select_within_budget([h.experience for h in package], n)
        for n in (8192, 512, 200)
    )
print(f"\nsame vectors: {same_vectors}; same scores and order on {same_ranking} of 40 questions,")
print(f"same lessons within the budget (8k, 512 and 200 tokens of context) on {same_budget} of 40")

# %% [markdown]
# ## Retrieval quality: keyword vs vector vs hybrid
#
# Forty questions, ten lessons; a hit when the expected lesson is in the top 3 (and, stricter, first).

# %%
quality = {}
for mode in Retriever.MODES:
    for kind, row in hit_rates(Retriever(memory, embedder, mode=mode), keys).items():
        quality.setdefault(kind, {})[mode] = f"{row['hit@3']}/{row['queries']} ({row['hit@1']} first)"
quality_table = pd.DataFrame(quality).T
quality_table.loc["all"] = [
    f"{sum(r['hit@3'] for r in hit_rates(Retriever(memory, embedder, mode=m), keys).values())}/40"
    for m in Retriever.MODES
]
quality_table

# %% [markdown]
# Vectors win where spelling carries the meaning: Chinese goes from 0 to 10 of 10. Paraphrases stay hard
# for a hashing embedder: "purchase got settled" and "order has been paid" share no spelling. A trained
# embedder maps meaning (`Retriever(memory, embedder=...)`).
#
# <details><summary>Measured with MiniLM, outside this notebook (it must run without torch)</summary>
#
# `python benchmarks/retrieval.py --minilm`, all-MiniLM-L6-v2 from `requirements-embeddings.txt`, on the
# same 40 questions (top 3):
#
# | kind | hashing vector | hashing hybrid | MiniLM vector | MiniLM hybrid |
# |---|---|---|---|---|
# | original | 10 | 10 | 10 | 10 |
# | paraphrase | 3 | 4 | 10 | 9 |
# | new wording | 5 | 5 | 9 | 9 |
# | Chinese | 10 | 10 | 5 | 5 |
# | all | 28 | 29 | 34 | 33 |
#
# Meaning beats spelling on paraphrases, but MiniLM was trained on English: on Chinese the hashing
# embedder wins. Pick the embedder for the language your lessons and tasks are written in.
#
# </details>
#
# ## A budget for the injection
#
# Retrieved lessons go into the prompt, and every token there is paid for on every call of the task.
# The seed: at most 15% of the model's context and at most three lessons. The kit holds *every* prompt
# to that budget, the Ralph Loop's mid-run second retrieval included (`react.LessonBudget`, notebook
# 06). Tokens are counted by `count_tokens`: about 4 ASCII characters a token, one per CJK character.
#
# Without a budget, a retriever injects every lesson with a positive score:

# %%
rows = []
for context in (8192, 512, 200):
    unbudgeted, budgeted = [], []
    for query in labelled["queries"]:
        ranked = [hit.experience for hit in retriever.search(query["text"], k=10)]
        unbudgeted.append(injected_tokens(ranked))
        chosen = select_within_budget(ranked, context_tokens=context, injection_budget=0.15, top_k=3)
        budgeted.append(injected_tokens(chosen))
    rows.append(
        {
            "context tokens": context,
            "budget (15%)": int(0.15 * context),
            "no budget: tokens/query": round(sum(unbudgeted) / len(unbudgeted), 1),
            "budget: tokens/query": round(sum(budgeted) / len(budgeted), 1),
            "budget: max tokens": max(budgeted),
        }
    )
pd.DataFrame(rows)

# %% [markdown]
# With a large context the budget's "three lessons" part does the work; with a small context (a tiny
# local model has 2,048 tokens or fewer) the 15% part does. Either way the injection is bounded.
#
# ## Speed: when does faiss pay off?
#
# Exact search reads every stored vector once per query. numpy's matrix-vector product and faiss's
# flat index do exactly that, in C; which one is faster depends mostly on how many threads each may
# use. So both get the *same* number here, one thread: `speed_table` measures in a fresh Python process
# where the thread count is fixed before numpy and faiss load. (A plain Python loop over the vectors,
# one numpy call per row, would mostly measure Python's call overhead, not search.)
#
# The third contender is *approximate*: an IVF index files each vector under the nearest of 256
# centroids, and a query reads only the few lists nearest to it. That reads a small share of the
# vectors and misses some true neighbours; **recall@3** is the share of the exact top 3 it still finds.
#
# The vectors are synthetic and seeded: clustered around 1,000 topics, 128 dimensions, so that a million
# of them take 512 MB (at the hashing embedder's 512 dimensions they would take 2 GB). Times are
# wall-clock on this machine and vary from run to run; the recalls do not (fixed seed, fixed index).

# %%
from ralph_mini.widgets import progress

for size in progress((100_000, 1_000_000), "sizes"):  # one fresh process per size
    row = speed_table(sizes=(size,), dim=128, threads=1)[0]
    print(f"{row['vectors']:,} vectors x {row['dim']} dims, 1 thread each, one top-3 query at a time:")
    print(f"  exact   numpy product               wall {row['numpy'] * 1000:.2f} ms")
    print(f"  exact   faiss flat index            wall {row['faiss flat'] * 1000:.2f} ms")
    for lists in (1, 4, 16):
        ms, recall = row[f"IVF {lists}/256"] * 1000, row[f"IVF {lists}/256 recall@3"]
        print(f"  approx  faiss IVF, {lists:>2} of 256 lists  wall {ms:.2f} ms   recall@3 {recall:.3f}")
    speedup = row["faiss flat"] / row["IVF 16/256"]
    print(f"  IVF with 16 lists against the flat index: wall {speedup:.0f}x faster")
    print(f"  (filing the vectors into the IVF lists took wall {row['IVF build']:.1f} s)\n")

# %% [markdown]
# Read it this way:
#
# - **Exact search: numpy and faiss are in the same league** at equal threads. They do the same
#   arithmetic over the same bytes; a million 128-dimensional vectors is half a gigabyte to read per
#   query, whoever reads it.
# - **faiss pays off with an approximate index, and only at scale.** Reading 16 of 256 lists reads a
#   sixteenth of the vectors and is about that much faster than the flat index, but on these vectors it
#   finds only about three quarters of the true top 3 (recall@3 0.750 at 100k, 0.787 at 1M); one list
#   is faster still and finds fewer than half. At 100k an exact query already takes milliseconds; at a
#   million, tens of them, and that is where the approximate index starts to earn its misses. Whether
#   the trade is worth it depends on how many vectors you have and what a missed neighbour costs. For a lesson memory, a missed lesson is a repeated mistake, and the kit's memories hold
#   hundreds of lessons, not millions: it searches exactly.
# - **What the kit uses faiss for** is an index that adds and removes lessons by id as memory changes
#   (`VectorIndex`), kept in step without re-reading every lesson on every search (`LiveLessons`).
#   `python benchmarks/retrieval_speed.py` measures the whole `Retriever.search` against the raw faiss
#   search under it at 10k and 100k lessons.
#
# ## What changed

# %%
totals = {
    m: sum(r["hit@3"] for r in hit_rates(Retriever(memory, embedder, mode=m), keys).values())
    for m in Retriever.MODES
}
chinese = {
    m: hit_rates(Retriever(memory, embedder, mode=m), keys)["Chinese"]["hit@3"] for m in Retriever.MODES
}
pd.DataFrame(
    {
        "keyword (notebook 04)": [
            f"{totals['keyword']}/40",
            f"{chinese['keyword']}/10",
            "n/a",
        ],
        "vector": [
            f"{totals['vector']}/40",
            f"{chinese['vector']}/10",
            f"{rows[0]['no budget: tokens/query']} (no budget)",
        ],
        "hybrid + budget": [
            f"{totals['hybrid']}/40",
            f"{chinese['hybrid']}/10",
            f"{rows[0]['budget: tokens/query']} (at most 3 lessons, 15%)",
        ],
    },
    index=["right lesson in top 3", "... for Chinese questions", "tokens injected per query (8k context)"],
)

# %% [markdown]
# One thing the loop adds on top of this ranking (notebook 06, `planner.py`): a lesson is injected only
# into tasks of the type it was learned on, and the lessons of that type that hold for every task come
# first, so a lesson that merely *sounds* like the question can neither take another type's slot nor
# push the one that applies out of the top 3.
#
# Notebook 06 puts it all together: the full Ralph Loop against bare ReAct on the 50-task suite.
