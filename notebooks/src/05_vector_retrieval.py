# %% [markdown]
# # 05 · Vector retrieval with faiss, and a budget for what goes into the prompt
#
# **What you will build:** a retriever that finds the right lesson even when the task is worded
# differently from the lesson, or written in another language, and an injection step that never lets
# retrieved lessons take more than 15% of the model's context (at most three of them).
#
# Notebook 04 looked lessons up by *tags*. That worked because one agent, doing one kind of task,
# wrote every lesson in one grammar. A real memory holds lessons about refunds, shipping, invoices,
# passwords..., written by several people in several languages, and questions arrive in any wording.
# The seed article's next step was to swap the keyword lookup for a vector memory. We measure what that
# buys, honestly, on a fixed labelled set.

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
# faiss keeps the lesson vectors in an index and returns the nearest ones. We use its exact
# inner-product index over unit vectors (inner product of unit vectors = cosine), with ids that map
# back to experiences. `VectorIndex.sync(memory)` keeps it equal to the memory's *active* lessons:
# new ones are added, removed or expired ones taken out.
#
# The retriever's final score is hybrid, with keyword candidates first and vector candidates second:
#
# $$\text{score} = \underbrace{(0.5\,\text{keyword} + 0.5\,\text{cosine})}_{\text{relevance}} \times \underbrace{\text{confidence} \times \text{decay}}_{\text{weight (notebook 04)}}$$
#
# Generative Agents (Park et al., 2023) rank memories by the *sum* recency + importance + relevance.
# We *multiply*, so that an expired or distrusted lesson scores zero however relevant it looks: the
# pollution lesson of notebook 04 says a bad lesson must not get in at all, not merely rank lower.

# %%
retriever = Retriever(memory, embedder, mode="hybrid")
for hit in retriever.search("我的快递到哪里了？", k=3):
    print(
        f"{hit.score:.3f} = ({hit.keyword:.2f} kw, {hit.cosine:.2f} cos) x {hit.weight:.2f}  {hit.experience.rule}"
    )

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
# Vectors win where spelling carries the meaning: Chinese goes from 0 to 10 of 10. Paraphrases and new
# wording stay hard for a hashing embedder, because "purchase got settled" and "order has been paid"
# share no spelling. A trained embedding model (the optional `SentenceTransformerEmbedder`, or
# `OpenAIEmbedder` against any OpenAI-compatible `/v1/embeddings`) maps meaning, not spelling; plug one
# in with `Retriever(memory, embedder=...)` and rerun this cell. Hybrid keeps keyword hits and adds the
# vector ones.
#
# We did, outside this notebook (it must run without torch): `python benchmarks/retrieval.py --minilm`
# with all-MiniLM-L6-v2 from `requirements-embeddings.txt`, on the same 40 questions (top 3):
#
# | kind | hashing vector | hashing hybrid | MiniLM vector | MiniLM hybrid |
# |---|---|---|---|---|
# | original | 10 | 10 | 10 | 10 |
# | paraphrase | 3 | 4 | 10 | 9 |
# | new wording | 5 | 5 | 9 | 9 |
# | Chinese | 10 | 10 | 5 | 5 |
# | all | 28 | 29 | 34 | 33 |
#
# Meaning beats spelling on paraphrases, but MiniLM was trained on English: on Chinese the spelling-only
# hashing embedder wins. Pick the embedder for the language your lessons and tasks are written in.
#
# ## A budget for the injection
#
# Retrieved lessons go into the prompt, and every token there is paid for on every call of the task.
# The seed: the first injection takes at most 15% of the model's context and at most three lessons; a
# second retrieval only when the agent asks for more (the Ralph Loop does one, mid-run, when an
# observation reveals a situation memory knows about). The kit holds *every* prompt to that budget, the
# second retrieval's included: the lessons already in the prompt count against it
# (`react.LessonBudget`, notebook 06). Tokens are counted by one function, `count_tokens` (about 4 ASCII
# characters a token, one per CJK character).
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
for row in speed_table(sizes=(100_000, 1_000_000), dim=128, threads=1):
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
