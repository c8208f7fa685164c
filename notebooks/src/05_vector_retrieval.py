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
#
# <!-- zh -->
# # 05 · 用 faiss 做向量检索，并给进入提示词的内容定个预算
#
# **你将构建：** 一个检索器，即使任务的措辞和经验不同，甚至是用另一种语言写的，它也能找到正确的经验；以及一个注入步骤，它绝不让检索到的经验占用超过模型上下文的 15%（最多三条）。
#
# 笔记本 04 按*标签*查找经验：只要一个智能体用同一套语法写下所有经验，这就够用。真实的记忆里有关于退款、物流、发票……的经验，用多种语言写成，问题的措辞也五花八门。原文把关键词查找换成了向量记忆；我们在一个固定的标注集上衡量这样做换来了什么。

# %%
import pandas as pd

from ralph_mini import lang
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
from ralph_mini.vector_speed import speed_rows

LANGUAGE = lang.setup()
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
#
# <!-- zh -->
# 每条经验还附有一条说明，讲它是从什么里学到的，有英文和中文两个版本（原文作者用中文写作）。标注集为每条经验各问四次：用经验自己的话、改写（paraphrase）、用全新的措辞，以及用中文。

# %%
pd.DataFrame(labelled["queries"][:8])

# %% [markdown]
# ## Why keywords miss
#
# A keyword index splits text on spaces and punctuation and counts shared words. Look at the first
# lesson's text against three phrasings of the same question:
#
# <!-- zh -->
# ## 为什么关键词会漏掉
#
# 关键词索引按空格和标点切分文本，统计共有的词。看看第一条经验的文本，和同一个问题的三种问法：

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
#
# <!-- zh -->
# 改写后的问法和经验没有一个共同的词。中文问题包含了所有要紧的内容，但中文没有空格，所以关键词索引看到的是一个很长的“词”，什么也找不到。
#
# ## 嵌入
#
# 嵌入器把文本变成向量，让相似的文本落在相近的位置；接近程度就是两个向量夹角的余弦。本套件的离线嵌入器无需下载：它把单词、每个单词的字符 3-gram，以及中文的相邻字对哈希进 512 个桶里。它懂的是*拼写*，而不是*含义*：“paid”落在“payment”附近（有共同的 3-gram），“purchase”却不会落在“order”附近。

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
#
# <!-- zh -->
# ## faiss
#
# faiss 把经验向量存进一个索引，并返回最近的那些；在单位向量上，它的精确内积索引给出的就是余弦。检索器的得分是混合的：
#
# $$\text{score} = \underbrace{(0.5\,\text{keyword} + 0.5\,\text{cosine})}_{\text{relevance}} \times \underbrace{\text{confidence} \times \text{decay}}_{\text{weight (notebook 04)}}$$
#
# （得分 = 相关性 × 权重：相关性是关键词得分与余弦各占一半，权重是置信度 × 衰减，见笔记本 04。）
#
# Generative Agents（Park et al., 2023）把近因性、重要性和相关性*相加*。我们*相乘*，这样一条已过期或不被信任的经验，无论看起来多么相关，得分都是零（笔记本 04 的记忆污染）。

# %% [markdown]
# **From scratch: embed, index in faiss, score hybrid, cut to the budget.** Each feature of a text
# (above) adds +1 or -1 to one of 512 buckets picked by a hash, and the vector is scaled to length 1.
# Every lesson is scored by the formula. Then, best first, a lesson goes into the prompt if its line
# still fits in 15% of the context, three at most (the budget is explained below).
#
# <!-- zh -->
# **从零实现：嵌入、用 faiss 建索引、混合打分、按预算截断。** 一段文本的每个特征（见上）给 512 个桶中由哈希选出的那个桶加上 +1 或 -1，然后把向量缩放到长度 1。每条经验都按上面的公式打分。然后从最好的开始，只要一条经验的那一行还能放进上下文的 15%，它就进入提示词，最多三条（预算在下文解释）。

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
#
# <!-- zh -->
# **包里的版本：`retrieval.Retriever.search` 和 `select_within_budget`**：向量逐位相同，在全部 40 个标注问题上得分和顺序都相同，在下面的每种上下文大小下，预算内选中的经验也都相同。它多了这些：一个 faiss 索引，它的 id 随着经验的加入、移除或过期与记忆保持同步（`lesson_index.LiveLessons`）；一个关键词倒排索引；每一侧只取最好的几个候选，而不是所有经验；余弦重新精确计算，在每种 CPU 上结果都一样；以及三种模式：keyword（关键词）、vector（向量）和 hybrid（混合）。

# %%
retriever = Retriever(memory, embedder, mode="hybrid")
kw, cos = lang.tr("kw", "关键词"), lang.tr("cos", "余弦")
for hit in retriever.search("我的快递到哪里了？", k=3):
    print(
        f"{hit.score:.3f} = ({hit.keyword:.2f} {kw}, {hit.cosine:.2f} {cos}) x {hit.weight:.2f}  {hit.experience.rule}"
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
print(
    lang.tr(
        f"\nsame vectors: {same_vectors}; same scores and order on {same_ranking} of 40 questions,",
        f"\n向量相同: {same_vectors}；40 个问题中有 {same_ranking} 个得分和顺序相同，",
    )
)
print(
    lang.tr(
        f"same lessons within the budget (8k, 512 and 200 tokens of context) on {same_budget} of 40",
        f"预算内选中的经验相同（上下文 8k、512 和 200 token）：40 个中有 {same_budget} 个",
    )
)

# %% [markdown]
# ## Retrieval quality: keyword vs vector vs hybrid
#
# Forty questions, ten lessons; a hit when the expected lesson is in the top 3 (and, stricter, first).
#
# <!-- zh -->
# ## 检索质量：关键词 vs 向量 vs 混合
#
# 四十个问题，十条经验；期望的那条经验出现在前 3 名即算命中（更严格的标准：排第一）。

# %%
quality = {}
for mode in Retriever.MODES:
    for kind, row in hit_rates(Retriever(memory, embedder, mode=mode), keys).items():
        hits, first = f"{row['hit@3']}/{row['queries']}", row["hit@1"]
        quality.setdefault(kind, {})[mode] = lang.tr(f"{hits} ({first} first)", f"{hits}（{first} 个排第一）")
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
#
# <!-- zh -->
# 在拼写承载含义的地方，向量胜出：中文问题从 10 个命中 0 个变成 10 个全部命中。改写对哈希嵌入器来说仍然很难：“purchase got settled”和“order has been paid”没有共同的拼写。训练过的嵌入器映射的是含义（`Retriever(memory, embedder=...)`）。
#
# <details><summary>用 MiniLM 测得，在本笔记本之外（本笔记本必须能在没有 torch 的环境下运行）</summary>
#
# `python benchmarks/retrieval.py --minilm`，使用 `requirements-embeddings.txt` 中的 all-MiniLM-L6-v2，在同样的 40 个问题上（前 3 名）：
#
# | 类型 | 哈希 向量 | 哈希 混合 | MiniLM 向量 | MiniLM 混合 |
# |---|---|---|---|---|
# | 原话 | 10 | 10 | 10 | 10 |
# | 改写 | 3 | 4 | 10 | 9 |
# | 新说法 | 5 | 5 | 9 | 9 |
# | 中文 | 10 | 10 | 5 | 5 |
# | 全部 | 28 | 29 | 34 | 33 |
#
# 在改写上，含义胜过拼写；但 MiniLM 是用英文训练的：在中文上，哈希嵌入器胜出。要按你的经验和任务所用的语言来挑选嵌入器。
#
# </details>
#
# ## 给注入定个预算
#
# 检索到的经验会进入提示词，而那里的每个 token，在任务的每一次调用中都要付费。原文的做法：最多占模型上下文的 15%，最多三条经验。本套件让*每一个*提示词都遵守这个预算，包括 Ralph 循环在运行中途的第二次检索（`react.LessonBudget`，笔记本 06）。token 由 `count_tokens` 计数：大约每 4 个 ASCII 字符算一个 token，每个 CJK 字符算一个。
#
# 没有预算时，检索器会注入每一条得分为正的经验：

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
# use. So both get the *same* number here, one thread: `speed_rows` measures in a fresh Python process
# where the thread count is fixed before numpy and faiss load. (A plain Python loop over the vectors,
# one numpy call per row, would mostly measure Python's call overhead, not search.)
#
# The third contender is *approximate*: an IVF index files each vector under the nearest of 256
# centroids, and a query reads only the few lists nearest to it. That reads a small share of the
# vectors and misses some true neighbours; **recall@3** is the share of the exact top 3 it still finds.
#
# The vectors are synthetic and seeded: clustered around 1,000 topics, 128 dimensions, so that a million
# of them take 512 MB (at the hashing embedder's 512 dimensions they would take 2 GB). They are held
# once: faiss's flat search here is `faiss.knn`, the function a flat index (`IndexFlatIP`) runs when it
# searches, reading the very array numpy reads. Times are wall-clock on this machine and vary from run
# to run; the recalls do not (fixed seed, fixed index).
#
# <!-- zh -->
# 上下文很大时，起作用的是预算中“三条经验”这一部分；上下文很小时（一个很小的本地模型只有 2,048 个 token 甚至更少），起作用的是 15% 这一部分。无论哪种情况，注入量都有上限。
#
# ## 速度：faiss 什么时候划算？
#
# 精确搜索在每次查询时把存储的每个向量都读一遍。numpy 的矩阵-向量乘积和 faiss 的平面（flat）索引做的正是这件事，都在 C 里完成；哪个更快，主要取决于各自能用多少个线程。所以这里给两者*相同*的线程数：一个线程。`speed_rows` 在一个全新的 Python 进程中测量，线程数在 numpy 和 faiss 加载之前就已固定。（用普通的 Python 循环遍历向量、每行调用一次 numpy，测到的主要是 Python 的调用开销，而不是搜索。）
#
# 第三个参赛者是*近似*搜索：IVF 索引把每个向量归到 256 个质心中最近的那个名下，查询只读取离它最近的几个列表。这样只读取一小部分向量，也会漏掉一些真正的近邻；**recall@3** 是它仍能找到的精确前 3 名所占的比例。
#
# 这些向量是合成的、种子固定：围绕 1,000 个主题聚类，128 维，所以一百万个向量占 512 MB（如果是哈希嵌入器的 512 维，会占 2 GB）。它们只存一份：这里 faiss 的平面搜索是 `faiss.knn`，也就是平面索引（`IndexFlatIP`）搜索时运行的那个函数，读的正是 numpy 读的那个数组。时间是本机上的墙钟时间（输出中标为 wall），每次运行都不一样；召回率不会变（固定种子，固定索引）。

# %%
from ralph_mini.widgets import progress


def show(label: str, seconds: float, recall: float | None = None) -> None:
    """One timed line: what searched, its wall-clock time per query, and the recall if approximate."""
    tail = "" if recall is None else f"   recall@3 {recall:.3f}"
    print(f"  {label:34}  wall {seconds * 1000:.2f} ms{tail}")  # "wall": varies from run to run


SIZES = (100_000, 1_000_000)
for row in progress(speed_rows(SIZES, dim=128, threads=1), lang.tr("sizes", "规模"), total=len(SIZES)):
    vectors, dim = f"{row['vectors']:,}", row["dim"]
    print(
        lang.tr(
            f"{vectors} vectors x {dim} dims, 1 thread each, one top-3 query at a time:",
            f"{vectors} 个向量 x {dim} 维，各用 1 个线程，每次一个 top-3 查询:",
        )
    )
    show(lang.tr("exact   numpy product", "精确  numpy 矩阵乘积"), row["numpy"])
    show(lang.tr("exact   faiss flat index", "精确  faiss 平面索引"), row["faiss flat"])
    for lists in (1, 4, 16):
        ivf = lang.tr(
            f"approx  faiss IVF, {lists:>2} of 256 lists", f"近似  faiss IVF 查 {lists:>2}/256 个列表"
        )
        show(ivf, row[f"IVF {lists}/256"], row[f"IVF {lists}/256 recall@3"])
    speedup, filing = f"wall {row['faiss flat'] / row['IVF 16/256']:.0f}x", f"wall {row['IVF build']:.1f} s"
    print(
        lang.tr(
            f"  IVF with 16 lists against the flat index: {speedup} faster",
            f"  查 16 个列表的 IVF 对比平面索引：快 {speedup}",
        )
    )
    print(
        lang.tr(
            f"  (filing the vectors into the IVF lists, on every core, took {filing})\n",
            f"  （把向量归入 IVF 列表（用上所有核心）用时 {filing}）\n",
        )
    )

# %% [markdown]
# Read it this way:
#
# - **Exact search: numpy and faiss are in the same league** at equal threads. They do the same
#   arithmetic over the same bytes; a million 128-dimensional vectors is half a gigabyte to read per
#   query, whoever reads it.
# - **faiss pays off with an approximate index, and only at scale.** Reading 16 of 256 lists reads a
#   sixteenth of the vectors and is about that much faster than the flat index, but on these vectors it
#   finds only seven to eight in ten of the true top 3 (recall@3 0.692 at 100k, 0.783 at 1M); one list
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
#
# <!-- zh -->
# 这样来读：
#
# - **精确搜索：线程数相同时，numpy 和 faiss 不相上下。** 它们对同样的字节做同样的算术；一百万个 128 维向量，每次查询要读半个 GB，不管谁来读。
# - **faiss 要靠近似索引才划算，而且只在规模大时。** 读取 256 个列表中的 16 个，就只读了十六分之一的向量，比平面索引快的倍数也差不多如此；但在这些向量上，它只能找到真正前 3 名中的十分之七到十分之八（100k 时 recall@3 为 0.692，1M 时为 0.783）；只读一个列表还要更快，但找到的不到一半。在 100k 时，一次精确查询已经要几毫秒；到一百万时要几十毫秒，这时近似索引才开始配得上它漏掉的那些近邻。这笔交易值不值，取决于你有多少向量，以及漏掉一个近邻的代价是什么。对经验记忆来说，漏掉一条经验就是再犯一次同样的错，而本套件的记忆只有几百条经验，而不是几百万条：它用精确搜索。
# - **本套件用 faiss 做的**，是一个随着记忆变化、按 id 增删经验的索引（`VectorIndex`），它与记忆保持同步，而无需在每次搜索时重读每一条经验（`LiveLessons`）。`python benchmarks/retrieval_speed.py` 在 1 万和 10 万条经验的规模下，测量完整的 `Retriever.search`，并与它底层的原始 faiss 搜索对比。
#
# ## 有何变化

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
            lang.tr("n/a", "不适用"),
        ],
        "vector": [
            f"{totals['vector']}/40",
            f"{chinese['vector']}/10",
            f"{rows[0]['no budget: tokens/query']}{lang.tr(' (no budget)', '（无预算）')}",
        ],
        "hybrid + budget": [
            f"{totals['hybrid']}/40",
            f"{chinese['hybrid']}/10",
            f"{rows[0]['budget: tokens/query']}{lang.tr(' (at most 3 lessons, 15%)', '（最多 3 条经验，15%）')}",
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
#
# <!-- zh -->
# 循环在这个排序之上还加了一点（笔记本 06，`planner.py`）：一条经验只会被注入到与学到它时同类型的任务里，而且该类型中对每个任务都成立的经验排在前面，所以一条只是*听起来*像这个问题的经验，既不能占掉另一类型经验的位置，也不能把真正适用的那条挤出前 3 名。
#
# 笔记本 06 把这一切组合起来：在 50 个任务的测试集上，完整的 Ralph 循环对比裸 ReAct。
