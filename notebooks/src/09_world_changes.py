# %% [markdown]
# # 09 · When the world changes
#
# **What you will measure:** the Ralph Loop of notebook 06 outside its comfort zone. Until now the world
# had one request type that never changed. Here the same shop takes five (two of them *write*), asked in
# English and in Chinese, and the world changes on a schedule.
#
# This notebook builds nothing into the loop; it is an instrument. Its question: does what the loop
# learns *hold*, on cases nobody tuned it to and after the world has made a lesson wrong? Every number
# comes from `python -m ralph_mini bench --scenario all` (the same functions,
# `ralph_mini/scenario_bench.py`) or from a cell here that uses them. The short answer: more correct than
# bare ReAct with fewer calls on five of the six changing scenarios; as correct with fewer calls on the
# sixth, a stale source, where one learned shortcut costs one wrong answer before memory drops it; and
# every rule the world made wrong ended within two firings (a moved threshold's before it fired at all).
#
# <!-- zh -->
#
# # 09 · 当世界发生变化
#
# **你将测量什么：** 第 06 本笔记本中的 Ralph 循环（Ralph Loop）离开舒适区之后的表现。到目前为止，世界只有一种请求类型，而且从不变化。在这里，同一家商店要处理五种请求（其中两种是*写*操作），问题既有英文也有中文，而且世界会按计划发生变化。
#
# 本笔记本不往循环里添加任何东西，它是一件测量仪器。它要回答的问题是：循环学到的东西能否*站得住*——在没有人针对其调优过的情形下，以及在世界让某条经验变错之后？每个数字都来自 `python -m ralph_mini bench --scenario all`（同样的函数，`ralph_mini/scenario_bench.py`），或来自这里调用这些函数的单元格。简短的答案：在六个会变化的场景中，有五个比裸 ReAct（bare ReAct）更正确、调用更少；第六个是数据源过时，循环同样正确、调用更少，只是一条学到的捷径在记忆丢弃它之前造成了一个错误答案；而被世界变错的每条规则，都在至多两次触发之内终止（阈值移动的那条甚至在触发之前就终止了）。
#
# > **关于中文版：** 商店世界的场景有意混合英文和中文的问法，并按语言划出留出（held out）窗口，这本身就是实验的一部分，所以本笔记本的任务生成保持原样，中文版与英文版运行的是完全相同的任务，表格和图中的数字也完全相同。只有表头、行标签、打印的说明文字和图的标签换成了中文；经验、规则、工具名、状态和场景名保持原文。

# %%
from collections import Counter
from dataclasses import replace
from datetime import datetime

import pandas as pd
from IPython.display import HTML, display

from ralph_mini import lang
from ralph_mini.held_out_bench import held_out_rows
from ralph_mini.log import run_tags
from ralph_mini.scenario_bench import (
    ARMS,
    BARE,
    FULL,
    arm_row,
    paired_rows,
    pass_k_rows,
    run_arm,
    run_grid,
    window_rows,
)
from ralph_mini.votes import trigger_held
from ralph_mini.widgets import plot_learning_curve, progress
from ralph_mini.worlds.shop import scenarios
from ralph_mini.worlds.shop import words as sw
from ralph_mini.worlds.shop.scenarios import DRIFT, SCENARIOS, build
from ralph_mini.worlds.shop.tasks import RELEVANT_TOOLS

# labels in the reader's language; the shop's tasks stay as they are (mixing English and Chinese is part
# of the experiment, and so are the held-out windows by language)
LANGUAGE = lang.setup()
pd.set_option("display.width", 200, "display.max_columns", 20, "display.max_rows", 200)
pd.set_option("display.max_colwidth", None)  # whole phrasings and rules, never cut with "..."


def folded(df: pd.DataFrame, summary: str) -> HTML:
    """The whole table behind one click: an HTML <details> element (static, so it is saved as is)."""
    return HTML(f"<details><summary>{summary}</summary>{lang.translated(df).to_html(index=False)}</details>")


# %% [markdown]
# ## The wider shop: five request types
#
# Each request type has its tools (a call to any other is a *wrong call*), its *oracle* (a policy that
# knows the rules and the world's current state, though not the data: the calls it makes are the
# fewest a careful agent needs, the yardstick of every "oracle" column below), and a documented naive
# habit of the offline model (`worlds/shop/habits.py`): it refunds without checking the policy, asks the
# slow provider before listing the charges, checks the database before asking the carrier, and cancels
# whatever the shop's record calls pending. Some phrasings, marked *held out*, are never asked where the
# loop learns. The whole phrasing of each, with an example order:
#
# <!-- zh -->
#
# ## 更大的商店：五种请求类型
#
# 每种请求类型都有自己的工具（调用其他任何工具都是*错误调用*）、自己的 *oracle*（理想策略：一种知道规则和世界当前状态、但不知道数据的策略；它做的调用是一个谨慎的智能体所需的最少次数，也是下文所有 "oracle" 列的标尺），以及离线模型一个有文档记录的天真习惯（`worlds/shop/habits.py`）：不查退款政策就退款，先问慢吞吞的支付服务商再列出扣款记录，先查数据库再问承运商，以及商店记录显示为 pending 的订单一律取消。有些问法被标为*留出*（held out），在循环学习的地方从不出现。下面是每种问法的全文，代入了一个示例订单：

# %%
rows = []
for kind, phrasings in sw.PHRASINGS.items():
    for i, text in enumerate(phrasings):
        rows.append({"type": kind, "language": "en" if i in sw.ENGLISH else "zh",
                     "held out": i in sw.HELD_OUT, "phrasing": text.format(id="D012")})  # fmt: skip
print({t: ", ".join(tools) for t, tools in RELEVANT_TOOLS.items()})
pd.DataFrame(rows)

# %% [markdown]
# ## The scenarios, on one clock
#
# - **static**: notebook 06's 50 tasks, one request type, nothing changes;
# - **drift**: 80 tasks of all five types and four changes (the table below);
# - **seasons**: status questions stop for five virtual weeks and come back;
# - **noisy**: memory starts with 13 lessons, 3 of them bad;
# - **rephrased**: the same 15 requests in held-out English, held-out Chinese and trained wordings;
# - **threshold**: the payment provider's settlement lag grows from 30 to 120 minutes at task 21;
# - **stale**: from task 21 the cache shows orders refunded since as paid.
#
# Task *i* is asked at `start + (i-1) x hours`: the prompt's "Current time", the world's `now` and
# memory's clock are the same moment (static keeps notebook 06's fixed prompt time, so its numbers stay
# comparable). Each scenario is read in *windows*, the stretches between its changes. Below the list,
# the drift scenario's four changes and the task from which each holds.
#
# <!-- zh -->
#
# ## 场景，在同一个时钟上
#
# - **static**（静态）：第 06 本笔记本的 50 个任务，一种请求类型，什么都不变；
# - **drift**（漂移）：80 个任务，涵盖全部五种类型，外加四次变化（见下表）；
# - **seasons**（季节）：状态查询停止五个虚拟周，然后回来；
# - **noisy**（噪声）：记忆一开始就有 13 条经验，其中 3 条是坏的；
# - **rephrased**（换说法）：同样的 15 个请求，分别用留出的英文、留出的中文和训练过的措辞提出；
# - **threshold**（阈值）：支付服务商的结算延迟在任务 21 从 30 分钟增长到 120 分钟；
# - **stale**（过时）：从任务 21 起，本地缓存把此后已退款的订单显示为 paid。
#
# 任务 *i* 在 `start + (i-1) x hours` 时刻提出：提示词中的 "Current time"、世界的 `now` 和记忆的时钟是同一时刻（static 保留第 06 本笔记本固定的提示时间，使它的数字仍可比较）。每个场景按*窗口*来读，窗口就是两次变化之间的那一段。列表下方是 drift 场景的四次变化，以及每次变化从哪个任务开始生效。

# %%
for name in SCENARIOS:
    s = build(name)
    print(lang.tr(f"{name:10} {len(s.tasks):3} tasks, every {s.hours_between_tasks} h; windows:",
                  f"{name:10} {len(s.tasks):3} 个任务，每 {s.hours_between_tasks} 小时一个；窗口:"),
          "; ".join(f"{a}-{b} {label}" for label, a, b in s.windows))  # fmt: skip
pd.DataFrame([{"task": c.at, "change": c.name, "state": c.fields} for c in DRIFT])

# %% [markdown]
# ## Every arm on every scenario
#
# An *arm* is one column of the benchmark: a configuration of the loop, or a control. Ten here:
#
# - **bare ReAct**, which learns nothing, and the **full Ralph Loop**;
# - six *ablations*: the full loop with one mechanism switched off (no reflection, no write threshold,
#   no decay/expiry, keyword retrieval only, no second retrieval, no budget), to see what that mechanism
#   buys;
# - two *controls*, which test whether the agent acts on its lessons at all: **long-context** injects every
#   lesson ever learned, of any type and status, past the budget; **placebo** injects lessons learned on
#   *other* request types, shuffled (both bypass the per-type planner they test).
#
# Every arm runs every scenario with model seed 0; bare ReAct and the full loop also run with seeds 1-3
# (for pass^k, below): 112 runs, in two worker processes, with a progress bar.
#
# <!-- zh -->
#
# ## 每个实验组跑每个场景
#
# 一个*实验组*（arm）就是基准测试中的一列：循环的一种配置，或一个对照。这里共有十个：
#
# - **裸 ReAct**，它什么都不学；以及**完整的 Ralph 循环**；
# - 六个*消融*（ablation）：完整循环关掉一个机制（无反思、无写入阈值、无衰减/过期、仅关键词检索、无第二次检索、无预算），看这个机制带来了什么；
# - 两个*对照*，检验智能体究竟会不会按它的经验行事：**长上下文**（long-context）注入所有学到过的经验，不分类型和状态，也不受预算限制；**安慰剂**（placebo）注入在*其他*请求类型上学到的经验，顺序打乱（两者都绕过了它们所检验的按类型规划器）。
#
# 每个实验组都用模型种子 0 跑每个场景；裸 ReAct 和完整循环还用种子 1-3 各跑一遍（用于下文的 pass^k）：共 112 次运行，分两个工作进程执行，带进度条。

# %%
runs, seeds = run_grid(SCENARIOS, ARMS, k=4, jobs=2, progress=progress)  # seeds: model seeds 0-3, for pass^k
table = pd.DataFrame([arm_row(runs[(name, arm.name)]) for name in SCENARIOS for arm in ARMS])
print(len(table), lang.tr("rows: one per scenario and arm", "行：每个场景与实验组各一行"))

# %% [markdown]
# ### The loop against bare ReAct
#
# The summary: bare ReAct and the full loop, per scenario. The whole table (every arm, with wrong calls
# and virtual seconds) is folded underneath.
#
# <!-- zh -->
#
# ### 循环对裸 ReAct
#
# 摘要：每个场景上的裸 ReAct 与完整循环。完整表格（每个实验组，含错误调用和虚拟秒数）折叠在下面。

# %%
head_to_head = []
for name in SCENARIOS:
    bare, loop = arm_row(runs[(name, BARE.name)]), arm_row(runs[(name, FULL.name)])
    head_to_head.append({
        "scenario": name,
        "tasks": len(runs[(name, BARE.name)].records),
        "correct, bare": bare["correct"],
        "correct, Ralph": loop["correct"],
        "calls/task, bare": bare["calls/task"],
        "calls/task, Ralph": loop["calls/task"],
        "oracle": loop["oracle calls/task"],
        "tokens/task, bare": bare["tokens/task"],
        "tokens/task, Ralph": loop["tokens/task"],
    })  # fmt: skip
display(pd.DataFrame(head_to_head))
folded(table, lang.tr("the whole table: every arm on every scenario (70 rows; click to open)",
                      "完整表格：每个实验组在每个场景上的结果（70 行；点击展开）"))  # fmt: skip

# %% [markdown]
# The loop makes fewer calls than bare ReAct on all seven scenarios (drift 1.46 against 1.68, threshold
# 1.66 against 2.38, stale 1.52 against 2.38) and is more correct on five of the six that change (drift
# 78/80 against 67/80, seasons 88/90 against 78/90, noisy 48/50 against 44/50, rephrased 73/75 against
# 67/75, threshold 48/50 against 47/50); on stale both answer 47/50. It is not cheaper in every
# currency: its tokens/task, reflections included, are higher on drift (3553 against 3417) and seasons
# (4073 against 4020), and so are its virtual seconds per task (9.3 against 8.7, 9.9 against 9.4, in the
# folded table), because reflections are paid for and the loop checks what bare ReAct skips.
#
# Is it ever *behind* bare ReAct for a while? The full loop's correct answers minus bare ReAct's, in
# every 10-task window that starts at task 11 or later (tasks 11-20, 12-21, ...):
#
# <!-- zh -->
#
# 在全部七个场景上，循环的调用都比裸 ReAct 少（drift 1.46 对 1.68，threshold 1.66 对 2.38，stale 1.52 对 2.38），并且在六个会变化的场景中有五个更正确（drift 78/80 对 67/80，seasons 88/90 对 78/90，noisy 48/50 对 44/50，rephrased 73/75 对 67/75，threshold 48/50 对 47/50）；在 stale 上两者都答对 47/50。它并不是在每种成本上都更省：把反思算在内，它的 token/任务在 drift（3553 对 3417）和 seasons（4073 对 4020）上更高，每个任务的虚拟秒数也更高（9.3 对 8.7、9.9 对 9.4，见折叠的表格），因为反思要花钱，而且循环会去核实裸 ReAct 跳过的东西。
#
# 它是否曾有一段时间*落后*于裸 ReAct？下面是每个从任务 11 或更晚开始的 10 任务窗口（任务 11-20、12-21……）中，完整循环的正确答案数减去裸 ReAct 的正确答案数：

# %%
leads = []
for name in SCENARIOS[1:]:
    bare_ok = [r.correct for r in runs[(name, BARE.name)].records]
    loop_ok = [r.correct for r in runs[(name, FULL.name)].records]
    gaps = [sum(loop_ok[i : i + 10]) - sum(bare_ok[i : i + 10]) for i in range(10, len(bare_ok) - 9)]
    leads.append({"scenario": name, "windows": len(gaps), "behind bare ReAct": sum(g < 0 for g in gaps),
                  "smallest lead": min(gaps), "largest lead": max(gaps)})  # fmt: skip
pd.DataFrame(leads)

# %% [markdown]
# Never behind on five scenarios. On stale it is behind by one answer in 10 of the 31 windows: those
# that hold task 25, where a shortcut it had learned (answer from the cache) gave a stale answer that
# bare ReAct, which double-checks the database after a cache hit, did not give (the stale section).
#
# ### Which mechanism bought what
#
# The 70-row table, read one mechanism at a time: correct answers and calls per task, each ablation
# against the full loop's row.
#
# <!-- zh -->
#
# 在五个场景上从未落后。在 stale 上，它在 31 个窗口中的 10 个里落后一个答案：就是包含任务 25 的那些窗口。在任务 25，它学到的一条捷径（直接用缓存作答）给出了一个过时的答案；裸 ReAct 在缓存命中之后还会再查一次数据库，所以没有给出这个答案（见 stale 一节）。
#
# ### 哪个机制带来了什么
#
# 把 70 行的大表一次按一个机制来读：正确答案数和每个任务的调用数，每个消融都与完整循环那一行对比。

# %%
order = [arm.name for arm in ARMS]
correct = table.assign(right=table["correct"].str.split("/").str[0].astype(int))
sizes = ", ".join(str(len(runs[(name, BARE.name)].records)) for name in SCENARIOS)
print(lang.tr(f"correct answers, of {sizes} tasks", f"正确答案数，任务总数分别为 {sizes}"))
display(correct.pivot(index="agent", columns="scenario", values="right").loc[order, list(SCENARIOS)])
print(lang.tr("calls per task", "每个任务的调用数"))
table.pivot(index="agent", columns="scenario", values="calls/task").loc[order, list(SCENARIOS)]

# %% [markdown]
# - **Reflection** buys all of the learning: with it off, the rows equal bare ReAct's everywhere except
#   noisy, where the seeded lessons alone give 44/50 at 1.56 calls; reflection adds four correct answers
#   (48/50) for a few calls more (1.60 calls/task).
# - **The second retrieval** (lessons fetched mid-run, only those whose whole trigger held in what a step
#   showed) is the mechanism that pays most: without it the loop makes more calls on all seven scenarios
#   (noisy 1.90 against 1.60, drift 1.60 against 1.46) and is less correct on four (drift 76, seasons 87,
#   noisy 46, rephrased 71).
# - **The write threshold** now costs little: with probation, a rule proposed once is injected at once
#   anyway, so the ablation ties the full loop in calls and correct answers on six scenarios. Only on
#   noisy does it differ: fewer calls (1.56 against 1.60) at one answer less (47/50 against 48/50). What a
#   rule on probation may not do is invalidate other rules; the noisy section shows why that matters.
# - **The budget** (at most 3 lessons and 15% of the context) costs calls on noisy (1.56 without it
#   against 1.60) and threshold (1.62 against 1.66), at the same correctness: there many status lessons
#   compete for three slots (ten good ones are seeded on noisy), and the one that would skip a double
#   check is not always among them (threshold tasks 33 and 34). Elsewhere it changes only tokens (static
#   2822 against 2888 without it, in the folded table).
# - **Vector retrieval** buys nothing measurable: keyword-only has the same correct answers on all seven
#   and the same calls on six. On threshold it is cheaper (1.62 against 1.66): at tasks 33 and 34 the
#   full loop's three slots held "when query_database finds nothing: ...", not the cache-hit rule that
#   would have saved a call (the walks in the threshold section). With lessons kept per type, each
#   request type has few candidates to rank.
# - **Decay and expiry** save calls only on noisy (1.64 without them against 1.60) and cost them on
#   seasons (1.66 against 1.68): status lessons that were still right expired during the five-week gap
#   (the seasons section). They do nothing on threshold (1.66 both ways): memory ends the outdated rule
#   from the lag the tool declares, and in its 12 days nothing goes stale or expires.
# - **The controls**: long-context falls to 42/80, 45/90, 34/75, 32/50 and 32/50 on drift, seasons,
#   rephrased, threshold and stale; on static, where every lesson is of the one type, it ties the full
#   loop (50/50, 1.62 calls). Placebo is below bare ReAct on noisy (42 against 44), rephrased (66 against
#   67), threshold (44 against 47) and stale (43 against 47). The agent does act on its lessons, and a
#   lesson of the wrong type mostly hurts (the last section shows where).
#
# <!-- zh -->
#
# - **反思**带来了全部的学习：关掉它，各行在所有场景上都与裸 ReAct 相同，只有 noisy 例外——在那里，预置的经验本身就给出 44/50、1.56 次调用；反思再多带来四个正确答案（48/50），代价是多几次调用（1.60 次调用/任务）。
# - **第二次检索**（在运行中途取回经验，只取整个触发条件都在某一步所显示的内容中成立的那些）是回报最大的机制：没有它，循环在全部七个场景上调用都更多（noisy 1.90 对 1.60，drift 1.60 对 1.46），并在四个场景上正确更少（drift 76，seasons 87，noisy 46，rephrased 71）。
# - **写入阈值**现在代价很小：有了试用期，只提出过一次的规则也会立刻被注入，所以这个消融在六个场景上的调用数和正确答案数都与完整循环持平。只有在 noisy 上不同：调用更少（1.56 对 1.60），但少一个正确答案（47/50 对 48/50）。处于试用期的规则不能做的事，是让其他规则失效；noisy 一节说明了为什么这很重要。
# - **预算**（最多 3 条经验、不超过上下文的 15%）在 noisy（无预算 1.56 对 1.60）和 threshold（1.62 对 1.66）上多花了调用，正确率相同：在那里，许多状态类经验争夺三个名额（noisy 上预置了十条好经验），而能省掉一次重复核查的那条并不总在其中（threshold 的任务 33 和 34）。在其他场景上它只影响 token（static 上 2822，无预算时 2888，见折叠的表格）。
# - **向量检索**没有带来可测量的收益：仅关键词检索在全部七个场景上正确答案数相同，在六个场景上调用数也相同。在 threshold 上它反而更省（1.62 对 1.66）：在任务 33 和 34，完整循环的三个名额里放的是 "when query_database finds nothing: ..."，而不是能省一次调用的缓存命中规则（见 threshold 一节中的逐步回放）。经验按类型分开存放之后，每种请求类型需要排序的候选都很少。
# - **衰减和过期**只在 noisy 上节省调用（没有它们时 1.64，完整循环 1.60），在 seasons 上反而多花调用（没有它们时 1.66，完整循环 1.68）：仍然正确的状态类经验在五周的空档中过期了（见 seasons 一节）。它们在 threshold 上毫无作用（两种情况都是 1.66）：记忆根据工具声明的延迟来终止过时的规则，而在这个场景的 12 天里，没有什么东西变得陈旧或过期。
# - **对照组**：长上下文在 drift、seasons、rephrased、threshold 和 stale 上分别跌到 42/80、45/90、34/75、32/50 和 32/50；在 static 上，所有经验都属于同一种类型，它与完整循环持平（50/50，1.62 次调用）。安慰剂在 noisy（42 对 44）、rephrased（66 对 67）、threshold（44 对 47）和 stale（43 对 47）上低于裸 ReAct。智能体确实会按它的经验行事，而类型不对的经验大多有害（最后一节说明害在哪里）。

# %% [markdown]
# ## pass^k: does it succeed every time?
#
# *pass^k* (from τ-bench) asks whether an agent succeeds *every* time, not just once: each task is run
# with k = 4 model seeds, and pass^k is the chance that all four runs are correct, averaged over tasks.
# pass^1 is plain accuracy.
#
# <!-- zh -->
#
# ## pass^k：它每次都能成功吗？
#
# *pass^k*（来自 τ-bench）问的是智能体是否*每次*都成功，而不只是成功一次：每个任务用 k = 4 个模型种子运行，pass^k 是四次运行全部正确的概率，再对所有任务取平均。pass^1 就是普通的准确率。

# %%
pass_k = pd.DataFrame(pass_k_rows(seeds, 4))
pass_k["calls, seeds 0-3"] = [
    ", ".join(str(sum(r.calls for r in run.records)) for run in seeds[(s, agent)])
    for s, agent in zip(pass_k["scenario"], pass_k["agent"], strict=True)
]
pass_k

# %% [markdown]
# pass^4 equals pass^1 for both agents on every scenario. The seeds do change the runs (the total calls
# of each seed, last column, differ in every row but the full loop's on noisy), but never a task's
# verdict, so on these scenarios pass^k separates nothing.
#
# <!-- zh -->
#
# 在每个场景上，两个智能体的 pass^4 都等于 pass^1。种子确实改变了运行（每个种子的总调用数，即最后一列，除了完整循环在 noisy 上那一行之外，每一行都各不相同），但从未改变任何一个任务的判定，所以在这些场景上 pass^k 区分不出任何东西。

# %% [markdown]
# ## Drift: four changes in 80 tasks
#
# Tool calls per task and the share of correct answers, bare ReAct against the full loop, each a rolling
# mean over 5 tasks; the dotted lines are the four changes (cache gone at 21, refund window 14 days at
# 36, settlement lag 90 min at 51, provider failing at 66).
#
# <!-- zh -->
#
# ## Drift：80 个任务中的四次变化
#
# 每个任务的工具调用数和正确答案的比例，裸 ReAct 对完整循环，每条曲线都是最近 5 个任务的滑动平均；点线标出四次变化（任务 21 缓存消失，36 退款期限改为 14 天，51 结算延迟改为 90 分钟，66 支付服务商开始出故障）。


# %%
def curves(name: str, value: str, marks: tuple[int, ...] = ()):
    """Bare ReAct and the full loop on scenario ``name``: ``value`` ('calls' or 'correct') per task, as a
    rolling mean over 5 tasks; dotted lines at the world's changes, dashed red at ``marks``."""
    scenario = runs[(name, FULL.name)].scenario
    series = {
        arm.name: [float(getattr(r, value)) for r in runs[(name, arm.name)].records] for arm in (BARE, FULL)
    }
    oracle = [t.oracle_calls for t in scenario.tasks] if value == "calls" else None
    figure = plot_learning_curve(
        series, oracle=oracle, ylabel="tool calls per task" if value == "calls" else "share correct"
    )
    for change in scenario.changes:
        figure.axes[0].axvline(change.at, color="grey", linestyle=":")
    for task in marks:
        figure.axes[0].axvline(task, color="tab:red", linestyle="--", linewidth=0.8)
    red = lang.tr("; red: stale rules end", "；红线：过时规则终止") if marks else ""
    figure.axes[0].set_title(
        lang.tr(
            f"{name}: rolling mean over 5 tasks; dotted: changes{red}",
            f"{name}：最近 5 个任务的滑动平均；点线：变化{red}",
        )
    )
    return figure


curves("drift", "calls")

# %%
curves("drift", "correct")

# %% [markdown]
# By window. *settled after*: how many of the window's tasks came before the first one from which every
# task is *on target*, that is correct within 1.2x the oracle's calls ("never" if the window's last task
# is not). The rows per request type are folded underneath.
#
# <!-- zh -->
#
# 按窗口来看。*稳定前任务数*（settled after）：窗口中排在第一个"从它开始每个任务都*达标*"的任务之前的任务有几个；达标是指在 oracle 调用数的 1.2 倍以内答对（如果窗口的最后一个任务也不达标，就记为 "never"）。按请求类型分的行折叠在下面。

# %%
drift_rows = pd.DataFrame([row for arm in (BARE, FULL) for row in window_rows(runs[("drift", arm.name)])])
display(drift_rows[drift_rows["type"] == "all"])
folded(
    drift_rows,
    lang.tr("drift, every window by request type (click to open)", "drift：每个窗口按请求类型（点击展开）"),
)

# %% [markdown]
# Every window after a change is 15/15 for the loop (bare ReAct: 13, 15, 12 and 11 of 15). Only in the
# window where the cache disappears does it make more calls than bare ReAct (1.80 against 1.67): by type
# (folded rows), its refunds look the order up first (1.80 calls, the oracle's), where bare ReAct
# refunds blind (1.00 calls, 4/5 correct).
#
# The target: back on target within 5 tasks of each change. The loop's tasks that are not, per window
# (task, request type:case, calls/oracle calls, "wrong" if the grader rejected it), and the same for
# the arm without the write threshold:
#
# <!-- zh -->
#
# 变化之后的每个窗口，循环都是 15/15（裸 ReAct：15 个中分别答对 13、15、12 和 11 个）。只有在缓存消失的那个窗口里，它的调用比裸 ReAct 多（1.80 对 1.67）：按类型看（折叠的行），它退款之前会先查订单（1.80 次调用，正是 oracle 的次数），而裸 ReAct 盲目退款（1.00 次调用，5 个中答对 4 个）。
#
# 目标：每次变化后 5 个任务之内回到达标状态。下面列出循环在每个窗口中未达标的任务（任务、请求类型:情形、调用数/oracle 调用数，被评分器拒绝的标 "错误"），以及无写入阈值实验组的同样信息：


# %%
def off_target(run, first: int, last: int) -> list[str]:
    """Tasks first..last (1-based) not correct within 1.2x the oracle's calls: 'task kind calls/oracle'."""
    pairs = list(zip(run.scenario.tasks, run.records, strict=True))[first - 1 : last]
    return [
        f"{n} {t.kind} {r.calls}/{r.oracle_calls}{'' if r.correct else lang.tr(' wrong', ' 错误')}"
        for n, (t, r) in enumerate(pairs, first)
        if not (r.correct and r.calls <= 1.2 * r.oracle_calls)
    ]


full = runs[("drift", FULL.name)]
unthresholded = runs[("drift", "no write threshold")]
for label, first, last in full.scenario.windows:
    none = lang.tr("none", "无")
    print(f"{first}-{last} {label}: {', '.join(off_target(full, first, last)) or none}")
    print(
        f"   {lang.label('no write threshold')}: {', '.join(off_target(unthresholded, first, last)) or none}"
    )

# %% [markdown]
# Met after the refund window change (last miss at 37, the window's second task) and after the lag
# change (none); missed after the cache disappears (last miss at 32, a fresh pending order, 12 tasks in)
# and after the provider starts failing (75, a delivery for a missing order, 10 tasks in). Each window's
# last miss is the first task of its case since the change, not an old rule the change made wrong, and
# the arm without the write threshold misses the same tasks: no arm learns a case before it meets it.
#
# What the drift run's memory holds at the end: every lesson, its status, the task from which it was
# active, why it ended if it did, and how many prompts of its type carried it from task 21 on.
#
# <!-- zh -->
#
# 退款期限变化之后（最后一次未达标在任务 37，即该窗口的第二个任务）和延迟变化之后（没有未达标）都达到了目标；缓存消失之后（最后一次未达标在 32，一个新的 pending 订单，进入窗口后第 12 个任务）和支付服务商开始出故障之后（75，一个查询不存在订单的配送问题，进入窗口后第 10 个任务）没有达到。每个窗口的最后一次未达标，都是该情形在变化之后第一次出现的任务，而不是一条被变化变错的旧规则；无写入阈值的实验组也恰好在同样的任务上未达标：没有哪个实验组能在遇到一种情形之前就学会它。
#
# drift 运行结束时记忆里有什么：每条经验、它的状态、它从哪个任务起生效、如果终止了是为什么，以及从任务 21 起有多少个同类型任务的提示词带上了它。


# %%
def task_at(run, moment: str | None) -> int | None:
    """The task number asked at ``moment`` (memory's clock is the scenario's clock)."""
    if moment is None:
        return None
    hours = (datetime.fromisoformat(moment) - run.scenario.start).total_seconds() / 3600
    return round(hours / run.scenario.hours_between_tasks) + 1


def lessons(run, since: int = 1) -> pd.DataFrame:
    """Every experience in the run's memory; 'used' counts the prompts of its own task type, from task
    ``since`` on, that carried it (memory keeps one row per task type and rule)."""
    later = run.results[since - 1 :]
    return pd.DataFrame(
        [
            {
                "status": e.status,
                "type": e.task_type,
                "rule": e.rule,
                "active from": task_at(run, e.valid_from) or "-",
                "invalid from": task_at(run, e.invalid_from) or "-",
                "validations": e.validations,
                "failures": e.failures,
                "why it ended": e.status_reason if e.invalid_from else "",
                f"used from task {since}": sum(
                    e.rule in r.injected for r in later if r.task.task_type == e.task_type
                ),
            }
            for e in run.memory.experiences.values()
        ]  # fmt: skip
    )


lessons(full, since=21)

# %% [markdown]
# "when any task: start with query_local_cache" is invalid from task 22, the first status question after
# the cache disappears, because the world no longer offers the tool it sends the agent to (target: within
# 10 tasks). The cancel type's "... age over 30 min: call query_payment_api" is invalid from 55, the
# first cancellation after the lag moved to 90 minutes, and memory wrote "... age over 90 min: ..." in
# its place (how: the threshold section). Neither fired after its change; no lesson here has a failure.
#
# The fast loop never runs a write task again (a retried refund would refund twice), and it judges a
# run's completeness per request type. Per type, the tasks, those retried, and the writes to their order:
#
# <!-- zh -->
#
# "when any task: start with query_local_cache" 从任务 22 起失效，那是缓存消失后的第一个状态查询，因为世界不再提供它让智能体去调用的那个工具（目标：10 个任务以内）。cancel 类型的 "... age over 30 min: call query_payment_api" 从 55 起失效，那是延迟变为 90 分钟后的第一个取消请求，记忆在它的位置写下了 "... age over 90 min: ..."（怎么做到的，见 threshold 一节）。这两条规则在各自的变化之后都没有触发过；这里没有一条经验有失败记录。
#
# 快循环从不重跑写任务（重试一次退款就会退两次款），而且它按请求类型判断一次运行是否完整。按类型列出：任务数、其中被重试的任务数，以及对其订单的写入次数：

# %%
retried = {}
for result in full.results:
    kind = result.task.task_type
    row = retried.setdefault(kind, {"type": kind, "tasks": 0, "retried": 0, "writes to its order": 0})
    row["tasks"] += 1
    row["retried"] += result.retries > 0
    row["writes to its order"] += len(full.scenario.world.writes_for(result.task.record_id))
pd.DataFrame(list(retried.values()))

# %% [markdown]
# ## A threshold that moves
#
# **The change.** 50 tasks, most of them status questions. Until task 20 the payment provider settles an
# order 30 minutes after it is placed, and the loop learns "when status is pending and age over 30 min:
# call query_payment_api". From task 21 the lag is 120 minutes, so for an order 30 to 120 minutes old
# that rule would send the agent to a provider that knows nothing of it yet.
#
# How memory notices: each tool declares its lag (`lag_min`), and after every run memory holds the live
# rules of the run's type against the tools the world now offers (`Memory.invalidate_unoffered(offered,
# task_type, lags)`). A rule whose age threshold no longer fits the declared lag is *outdated*
# (`rule_forms.outdated`): memory ends it and writes the same rule with the new number
# (`rule_forms.replace_minutes`), no vote needed. A rule *fires* when it is in the prompt and its whole
# trigger holds in what the run saw. The helpers below read a run's memory for the rules that went stale,
# the rules learned since, and what the change cost; the curve marks the change (dotted) and the stale
# rule's end (red).
#
# <!-- zh -->
#
# ## 会移动的阈值
#
# **变化。** 50 个任务，大多是状态查询。到任务 20 为止，支付服务商在订单下单 30 分钟后完成结算，循环学到 "when status is pending and age over 30 min: call query_payment_api"。从任务 21 起延迟变为 120 分钟，所以对于下单 30 到 120 分钟的订单，这条规则会把智能体送到一个对该订单还一无所知的服务商那里。
#
# 记忆如何察觉：每个工具都声明自己的延迟（`lag_min`），每次运行之后，记忆会用世界当前提供的工具来核对该运行所属类型下仍然有效的规则（`Memory.invalidate_unoffered(offered, task_type, lags)`）。年龄阈值与声明的延迟不再相符的规则就*过时*了（`rule_forms.outdated`）：记忆终止它，并写下同一条规则、换上新的数字（`rule_forms.replace_minutes`），无需投票。一条规则在提示词中、并且它的整个触发条件在运行所见的内容中成立时，它就*触发*了。下面的辅助函数从一次运行的记忆中读出：变得过时的规则、此后学到的规则，以及这次变化的代价；曲线标出变化（点线）和过时规则的终止（红线）。


# %%
def fired(run, n: int, e) -> bool:
    """Was rule ``e`` in task ``n``'s prompt, with its whole trigger holding in what the run saw?"""
    result = run.results[n - 1]
    seen = run_tags(result.trace.steps, run.scenario.world.words, result.task.now)
    return result.task.task_type == e.task_type and e.rule in result.injected and trigger_held(e.parsed, seen)


def went_stale(run, change: int) -> pd.DataFrame:
    """The rules active when the world changed (task ``change``) that memory later ended: when, why, and
    the tasks from the change to their end at which they fired, and at which a run voted them down."""
    rows = []
    for e in run.memory.experiences.values():
        start, end = task_at(run, e.valid_from), task_at(run, e.invalid_from)
        if start is None or end is None or not start < change <= end:
            continue
        firings = [n for n in range(change, end + 1) if fired(run, n, e)]
        down = [n for n in firings if any(note.startswith(f"down-voted: {e.rule} (")
                                          for note in run.results[n - 1].memory_notes)]  # fmt: skip
        rows.append({"type": e.task_type, "rule": e.rule, "active from": start, "invalid from": end,
                     "reason": e.status_reason, "fired at": firings, "voted down at": down,
                     "last votes": e.recent or "-"})  # fmt: skip
    return pd.DataFrame(rows)


def learned_since(run, change: int) -> pd.DataFrame:
    """Rules first proposed at or after task ``change``: the ones that took over."""
    return pd.DataFrame(
        [
            {
                "type": e.task_type,
                "rule": e.rule,
                "proposed at": task_at(run, e.created_at),
                "status": e.status,
                "active from": task_at(run, e.valid_from) or "-",
                "why": e.status_reason,
            }
            for e in run.memory.experiences.values()
            if task_at(run, e.created_at) >= change
        ]  # fmt: skip
    )


def cost(name: str, change: int, end: int) -> pd.DataFrame:
    """Bare ReAct and the full loop from the change to task ``end``, and after it."""
    rows = []
    for arm in (BARE, FULL):
        records = runs[(name, arm.name)].records
        for first, last in ((change, end), (end + 1, len(records))):
            chunk = records[first - 1 : last]
            calls, oracle = sum(r.calls for r in chunk), sum(r.oracle_calls for r in chunk)
            wrong = sum(not r.correct for r in chunk)
            rows.append({"agent": arm.name, "tasks": f"{first}-{last}", "wrong answers": wrong,
                         "calls": calls, "oracle calls": oracle,
                         "calls over the oracle": calls - oracle})  # fmt: skip
        print(
            lang.tr(
                f"{arm.name}, off target in {change}-{end}:",
                f"{lang.label(arm.name)}，{change}-{end} 中未达标:",
            ),
            ", ".join(off_target(runs[(name, arm.name)], change, end)) or lang.tr("none", "无"),
        )
    return pd.DataFrame(rows)


def walk(run, n: int) -> str:
    """Task ``n``: the order's age, each call with its status, the answer's status against the truth, the
    lessons in its prompt, and what its reflection (if any) found and proposed."""
    result = run.results[n - 1]
    seen = run_tags(result.trace.steps, run.scenario.world.words, result.task.now)
    ages = [tag.split(":")[2] for tag in seen if tag.startswith("age:pending:")]
    age = "".join(lang.tr(f", {minutes} min old", f"，下单已 {minutes} 分钟") for minutes in ages)
    calls = " -> ".join(f"{step.tool} ({step.status})" for step in result.trace.steps)
    said, truth = (result.trace.answer or {}).get("status"), result.task.expected.get("status")
    verdict = lang.tr("correct", "正确") if result.correct else lang.tr("WRONG", "错误")
    oracle = result.task.oracle_calls
    lines = [lang.tr(f"task {n}, {result.task.kind}{age}, oracle {oracle} calls: {calls}; "
                     f"said {said}, truth {truth}: {verdict}",
                     f"任务 {n}，{result.task.kind}{age}，oracle {oracle} 次调用：{calls}；"
                     f"回答 {said}，实际 {truth}：{verdict}"),
             lang.tr("    lessons in its prompt: ", "    提示词中的经验：") + "; ".join(result.injected)]  # fmt: skip
    for reflection in result.reflections:
        found = "; ".join(reflection.ineffective) or lang.tr("no ineffective step", "没有无效步骤")
        rules = "; ".join(reflection.rules) or lang.tr("no rule", "无规则")
        lines.append(lang.tr(f"    reflection: {found} -> {rules}", f"    反思：{found} -> {rules}"))
    return "\n".join(lines)


threshold = runs[("threshold", FULL.name)]
stale_rules = went_stale(threshold, 21)
curves("threshold", "calls", marks=tuple(stale_rules["invalid from"]))

# %% [markdown]
# The rule that went stale (task numbers; the reason memory recorded; the tasks from the change to its
# end at which it fired, target: within two), then the rules first proposed since the change:
#
# <!-- zh -->
#
# 变得过时的规则（任务编号；记忆记录的原因；从变化到它终止之间它触发过的任务，目标：两次以内），然后是变化之后首次提出的规则：

# %%
display(stale_rules)
learned_since(threshold, 21)

# %% [markdown]
# The 30-minute rule ended at task 22 without firing: 22, the first status question since the change,
# was about an order 19 minutes old. After that run memory found the rule outdated and wrote "... age
# over 120 min: call query_payment_api" in its place, active at once, its reason saying what it was
# renumbered from. No wasted call, no wrong answer. Proposed later: "... age under 120 min: skip
# query_payment_api" (at 31, active from 34, when it ended "... under 30 min: skip ...", the same rule
# with another threshold), and, from a cancellation the grader rejected at 39, the cancel type's own
# 120-minute rule (that type had no lesson to renumber).
#
# Does the agent now behave right? Every status question about a pending order since the change
# ("pending_stale" is the task generator's name for over 30 minutes):
#
# <!-- zh -->
#
# 30 分钟的那条规则在任务 22 终止，而且一次都没有触发：22 是变化后的第一个状态查询，问的是一个下单 19 分钟的订单。那次运行之后，记忆发现这条规则已经过时，在它的位置写下 "... age over 120 min: call query_payment_api"，立即生效，原因一栏写明了它是由哪条规则改号（renumbered）而来。没有浪费一次调用，也没有错误答案。后来提出的规则有："... age under 120 min: skip query_payment_api"（在 31 提出，从 34 起生效，同时终止了 "... under 30 min: skip ..."，两者是同一条规则、阈值不同），以及从 39 一次被评分器拒绝的取消中学到的、cancel 类型自己的 120 分钟规则（该类型之前没有可以改号的经验）。
#
# 现在智能体的行为对了吗？下面是变化之后每个关于 pending 订单的状态查询（"pending_stale" 是任务生成器对下单超过 30 分钟的叫法）：

# %%
for n, task in enumerate(threshold.scenario.tasks[20:], 21):
    if task.kind.startswith("status:pending"):
        print(walk(threshold, n))

# %% [markdown]
# All six answers are right. Under 30 minutes (22, 37) the agent makes the oracle's one call; past 120
# (33, 47) the renumbered rule sends it to the provider, which knows the order. Calls were lost on the
# case the change created, 30 to 120 minutes. At 31 (63 minutes) no rule covered it: renumbering replaces
# a rule that became wrong, it does not widen "under 30 min: skip", still true, only narrow. The model's
# habit (ask the provider about every pending order) wasted a call, and the reflection proposed "under
# 120 min: skip query_payment_api", which kept the agent from the provider at 34. The database checks at
# 33 and 34 are the budget's: the cache-hit rule that skips them was not among the prompt's three
# lessons (the no-budget arm makes neither).
#
# What the change cost, in its window (21-35) and after, bare ReAct against the full loop (first the
# window's tasks not on target):
#
# <!-- zh -->
#
# 六个答案全部正确。在 30 分钟以内（22、37），智能体只做 oracle 的那一次调用；超过 120 分钟（33、47），改号后的规则把它送到服务商那里，服务商知道这个订单。损失调用的是这次变化新造成的情形：30 到 120 分钟之间。在 31（63 分钟），没有规则覆盖它：改号替换的是变错了的规则，它不会放宽仍然正确的 "under 30 min: skip"，只会收窄。模型的习惯（每个 pending 订单都去问服务商）浪费了一次调用，反思提出了 "under 120 min: skip query_payment_api"，这条规则在 34 让智能体没有去找服务商。33 和 34 的数据库查询要算在预算头上：能跳过它们的缓存命中规则不在提示词的三条经验之中（无预算实验组两次都没有查数据库）。
#
# 这次变化在它的窗口（21-35）之内和之后付出了什么代价，裸 ReAct 对完整循环（先列出窗口中未达标的任务）：

# %%
cost("threshold", 21, 35)

# %% [markdown]
# In 21-35 the loop gave no wrong answer and made 26 calls against the oracle's 22 (one over at 23 and 24,
# charges questions unrelated to the change, and at 31, 33 and 34; one under at 30, a blind cancellation
# that happened to be allowed); bare ReAct made 35, also with no wrong answer. In 36-50 the loop made 24
# calls against 23 with 1 wrong answer (the cancellation at 39, which bare ReAct also got wrong); bare
# ReAct 34 calls and 2 wrong answers.
#
# <!-- zh -->
#
# 在 21-35 中，循环没有给出错误答案，做了 26 次调用，oracle 为 22 次（在 23 和 24 各多一次，那是与这次变化无关的扣款问题，在 31、33 和 34 也各多一次；在 30 少一次，那是一次恰好被允许的盲目取消）；裸 ReAct 做了 35 次调用，同样没有错误答案。在 36-50 中，循环做了 24 次调用，oracle 为 23 次，有 1 个错误答案（39 的取消，裸 ReAct 也答错了）；裸 ReAct 34 次调用、2 个错误答案。

# %% [markdown]
# ## A source that goes stale
#
# **The change.** The same 50 draws. Until task 20 the local cache is a faithful copy, and the loop
# learns to trust it: "when any task: start with query_local_cache", "when query_local_cache finds the
# order: skip query_database". From task 21 the cache still answers, but an order refunded since shows
# there as paid. Nothing fails and no tool disappears: the rules simply start giving wrong answers. The
# share of correct answers, with the change (dotted) and the end of the stale rules (red):
#
# <!-- zh -->
#
# ## 变得过时的数据源
#
# **变化。** 同样的 50 次抽取。到任务 20 为止，本地缓存是忠实的副本，循环学会了信任它："when any task: start with query_local_cache"，"when query_local_cache finds the order: skip query_database"。从任务 21 起缓存仍然会回答，但此后被退款的订单在那里显示为 paid。没有什么出故障，也没有工具消失：规则只是开始给出错误答案。下图是正确答案的比例，标出了变化（点线）和过时规则的终止（红线）：

# %%
stale = runs[("stale", FULL.name)]
stale_rules = went_stale(stale, 21)
curves("stale", "correct", marks=tuple(stale_rules["invalid from"]))

# %%
display(stale_rules)
for n in sorted({n for firings in stale_rules["fired at"] for n in firings}):
    print(walk(stale, n))

# %% [markdown]
# Both stale rules ended at task 25, each after two firings (22 and 25), within the target of two. At 22
# the cache was still right about a fresh pending order. At 25 it showed a refunded order as paid, and
# the agent, told to skip the database, said paid: wrong. A wrong answer a rule could have caused is
# enough to end it, so "when query_local_cache finds the order: skip query_database" was invalid at
# once. The reflection on the rejected answer saw that the tool holding every order was never asked and
# proposed "when any task: start with query_database" (printed under task 25), written at once, as a
# rule that fixes a rejected answer is. It contradicts "start with query_local_cache", which ended with
# it, though no vote had gone against that rule (its last votes: `+++`).
#
# <!-- zh -->
#
# 两条过时规则都在任务 25 终止，各自触发了两次（22 和 25），在两次的目标以内。在 22，缓存对一个新的 pending 订单仍然是对的。在 25，它把一个已退款的订单显示为 paid，而智能体被告知跳过数据库，于是回答 paid：错了。一条规则可能造成的一个错误答案就足以终止它，所以 "when query_local_cache finds the order: skip query_database" 立即失效。对这个被拒答案的反思发现，持有每个订单的那个工具从未被调用，于是提出 "when any task: start with query_database"（打印在任务 25 下面），并立即写入，修正被拒答案的规则都是这样处理的。它与 "start with query_local_cache" 相矛盾，后者因此一同终止，尽管从没有哪一票投过它的反对票（它最近的投票：`+++`）。

# %%
learned_since(stale, 21)

# %% [markdown]
# "when any task: start with query_database" took over for status questions from task 25 on. Since the
# cache went stale the oracle reads the database alone, so this is the oracle's own plan.
#
# The cost:
#
# <!-- zh -->
#
# 从任务 25 起，"when any task: start with query_database" 接管了状态查询。缓存过时之后，oracle 只读数据库，所以这正是 oracle 自己的做法。
#
# 代价：

# %%
cost("stale", 21, int(stale_rules["invalid from"].max()))

# %% [markdown]
# One wrong answer, at 25, that bare ReAct did not give (it checked the database after the cache, 2
# calls). That is the whole price of having learned the shortcut, and it is why the loop is behind bare
# ReAct by one answer in the 10-task windows that hold task 25. Over tasks 21-25 the loop still made fewer
# calls (8 against 10; oracle 6). From task 26 on it made exactly the oracle's 35 calls, with 1 wrong
# answer (the cancellation at 39, from whose rejection the cancel type learned a rule, in the table
# above); bare ReAct made 59 calls and 2 wrong answers. Over the scenario both answer 47/50.
#
# <!-- zh -->
#
# 一个错误答案，在任务 25，裸 ReAct 没有给出（它查完缓存又查了数据库，2 次调用）。这就是学会这条捷径的全部代价，也是循环在包含任务 25 的那些 10 任务窗口中落后裸 ReAct 一个答案的原因。在任务 21-25 中，循环的调用仍然更少（8 对 10；oracle 6）。从任务 26 起，它的调用数恰好等于 oracle 的 35 次，有 1 个错误答案（39 的取消，cancel 类型从这次被拒中学到了一条规则，见上表）；裸 ReAct 做了 59 次调用、2 个错误答案。整个场景下来，两者都答对 47/50。

# %% [markdown]
# ## Seasons: a request type that goes away and comes back
#
# Nine virtual weeks, 16.8 hours between tasks. Order-status questions stop at task 21 (week 3) and come
# back at task 71, five weeks later: longer than memory's 30-day expiry, so lessons not used in that time
# expire. The target: the returning type within 1.2x the oracle's calls within 3 tasks.
#
# <!-- zh -->
#
# ## Seasons：一种请求类型消失后又回来
#
# 九个虚拟周，任务间隔 16.8 小时。订单状态查询在任务 21（第 3 周）停止，在任务 71 回来，中间隔了五周：比记忆 30 天的过期期限还长，所以这段时间没有用到的经验会过期。目标：回来的类型在 3 个任务之内回到 oracle 调用数的 1.2 倍以内。

# %%
curves("seasons", "correct")

# %%
season = runs[("seasons", FULL.name)]
back = [(n, r) for n, (t, r) in enumerate(zip(season.scenario.tasks, season.records, strict=True), 1)
        if n >= 71 and t.task_type == "status"]  # fmt: skip
print(
    lang.tr("status tasks from 71, task: calls/oracle:", "任务 71 起的状态查询，任务: 调用/oracle:"),
    ", ".join(f"{n}: {r.calls}/{r.oracle_calls}" for n, r in back),
)
pd.DataFrame([row for row in window_rows(season) if row["type"] == "status"])

# %% [markdown]
# 13/13 correct. The first status question back (71) makes 3 calls against 1, the next (72) is on
# target; one later relapse (80: 3 against 2) puts the status row's "settled after" at 7 of 13 tasks. The
# status lessons at the end (expired: not hit for 30 days; "active from" is when each came back):
#
# <!-- zh -->
#
# 13/13 正确。回来后的第一个状态查询（71）做了 3 次调用，oracle 为 1 次；下一个（72）就达标了；后来又有一次反复（80：3 对 2），使状态那一行的 "稳定前任务数" 为 13 个任务中的 7 个。最后的状态类经验如下（expired：30 天没有命中；"生效自" 是每条经验恢复的时间）：

# %%
status_lessons = lessons(season, since=71)
status_lessons[status_lessons["type"] == "status"]

# %% [markdown]
# Three came back, from tasks 71 and 80; two are still expired, "... age over 30 min: call
# query_payment_api" among them. They were still right: this is where decay and expiry cost calls (the
# no-decay/expiry arm: 1.66 calls against the full loop's 1.68 on seasons). Expiry guards against a world
# that changed while nobody looked; here it had not.
#
# <!-- zh -->
#
# 有三条恢复了，分别在任务 71 和 80；两条仍然是过期状态，其中包括 "... age over 30 min: call query_payment_api"。它们其实仍然正确：这就是衰减和过期多花调用的地方（无衰减/过期实验组在 seasons 上 1.66 次调用，完整循环 1.68）。过期防范的是一个在没人注意时发生了变化的世界；而在这里，世界并没有变。

# %% [markdown]
# ## Noisy memory: bad lessons at the start
#
# The run starts from a memory an earlier deployment filled: 10 good status lessons and 3 bad ones, an
# over-general one ("when any task: call query_payment_api"), a wrong one ("when status is pending:
# answer"), both active, and a special case proposed once ("... age over 400 min: skip
# query_payment_api"). The harm target compares it with a clean start: the same 50 tasks, the same 10
# good lessons, no bad ones. The bench has no such arm, so this cell adds the clean scenario to
# `scenarios.BUILDERS` under its own name and runs the full loop on it (a fraction of a second).
#
# <!-- zh -->
#
# ## 噪声记忆：一开始就有坏经验
#
# 这次运行从一份由之前某次部署填充的记忆开始：10 条好的状态类经验和 3 条坏的——一条过于泛化的（"when any task: call query_payment_api"）、一条错误的（"when status is pending: answer"），两者都是 active 状态，还有一条只提出过一次的特例（"... age over 400 min: skip query_payment_api"）。危害目标把它与干净的开始作比较：同样的 50 个任务，同样的 10 条好经验，没有坏经验。基准测试没有这样的实验组，所以这个单元格把这个干净的场景以它自己的名字加入 `scenarios.BUILDERS`，并在上面运行完整循环（不到一秒）。

# %%
scenarios.BUILDERS["noisy, good lessons only"] = lambda seed=7: replace(
    scenarios.noisy(seed), seed_lessons=[(rule, 2) for rule in scenarios.GOOD_LESSONS]
)
noisy, clean = runs[("noisy", FULL.name)], run_arm("noisy, good lessons only", FULL)
pd.DataFrame([arm_row(noisy) | {"memory at start": lang.tr("10 good + 3 bad", "10 条好经验 + 3 条坏经验")},
              arm_row(clean) | {"memory at start": lang.tr("10 good", "10 条好经验")}])  # fmt: skip

# %%
harm_points = 100 * (sum(r.correct for r in clean.records) - sum(r.correct for r in noisy.records)) / 50
extra_calls = sum(r.calls for r in noisy.records) / sum(r.calls for r in clean.records) - 1
harm, extra = f"{harm_points:+.0f}", f"{100 * extra_calls:+.1f}%"
print(lang.tr(f"harm of the bad lessons: {harm} points of correctness, {extra} calls",
              f"坏经验的危害：正确率 {harm} 个百分点，调用 {extra}"))  # fmt: skip
bad = lessons(noisy)
bad[bad["rule"].isin(scenarios.BAD_LESSONS)]

# %% [markdown]
# No harm in correctness (48/50 both ways) and 1.3% more calls (1.60 against 1.58; target: within 5%).
# Every bad lesson is out of play within 10 tasks: the over-general one is invalid from task 1 and the
# wrong one from task 3, each contradicted by a narrower rule with the opposite action that proved itself
# in a run (a *counterexample*: "when status is paid: skip query_payment_api" validated at task 1 shows a
# task where "any task: call query_payment_api" is wrong). The special case stays on probation and is
# never injected.
#
# **What the write threshold keeps out.** On probation a rule is injected, but it contradicts nothing.
# Without the threshold (the no-write-threshold arm) the special case is active from its single proposal,
# and being narrower than two active rules with the opposite action it invalidates both before the first
# task: the bad "any task: call query_payment_api" (below, why it ended), and the *good* "... age over 30
# min: call query_payment_api". So task 3, a pending order older than 30 minutes, meets "when status is
# pending: answer" instead and is answered wrong, which ends that rule (its "why it ended"); the
# reflection on it proposes the good rule again, active from task 3:
#
# <!-- zh -->
#
# 正确率没有受损（两种情况都是 48/50），调用多了 1.3%（1.60 对 1.58；目标：5% 以内）。每条坏经验都在 10 个任务以内出局：过于泛化的那条从任务 1 起失效，错误的那条从任务 3 起失效，各自被一条行动相反、并在一次运行中证明了自己的更窄的规则所反驳（一个*反例*：在任务 1 得到验证的 "when status is paid: skip query_payment_api"，给出了一个 "any task: call query_payment_api" 会出错的任务）。那条特例一直处于试用期，从未被注入。
#
# **写入阈值挡住了什么。** 处于试用期的规则会被注入，但它不会反驳任何规则。没有阈值时（无写入阈值实验组），那条特例在唯一一次提出之后就是 active 的，而且由于它比两条行动相反的 active 规则更窄，它在第一个任务之前就让两者都失效了：坏的 "any task: call query_payment_api"（它为什么终止，见下表），以及*好的* "... age over 30 min: call query_payment_api"。于是任务 3，一个下单超过 30 分钟的 pending 订单，遇到的是 "when status is pending: answer"，被答错了，这也终止了那条规则（见它的 "终止原因"）；对它的反思再次提出了那条好规则，从任务 3 起生效：

# %%
unguarded = runs[("noisy", "no write threshold")]
shown = lessons(unguarded)
display(shown[shown["rule"].str.contains("pending|any task: call")])
print(lang.tr("without the threshold:", "没有阈值时:"), walk(unguarded, 3))
print(lang.tr("with it:", "有阈值时:"), walk(noisy, 3))

# %% [markdown]
# ## Rephrased: wordings the loop never learned from
#
# The loop learns on tasks 1-30, then, learning frozen, meets the same 15 requests three times: in
# held-out English (31-45), held-out Chinese (46-60) and trained phrasings (61-75), each copy about its
# own order with the same state, age and oracle. The rows per request type are folded underneath.
#
# <!-- zh -->
#
# ## Rephrased：循环从未从中学习过的措辞
#
# 循环在任务 1-30 上学习，然后冻结学习，把同样的 15 个请求再遇到三次：用留出的英文（31-45）、留出的中文（46-60）和训练过的问法（61-75），每个副本都针对它自己的订单，状态、下单时长和 oracle 都相同。按请求类型分的行折叠在下面。

# %%
rephrased_rows = [row for arm in (BARE, FULL) for row in window_rows(runs[("rephrased", arm.name)])]
display(pd.DataFrame([row for row in rephrased_rows if row["type"] == "all"]))
folded(
    pd.DataFrame(window_rows(runs[("rephrased", FULL.name)])),
    lang.tr("the full loop by request type (click to open)", "完整循环，按请求类型（点击展开）"),
)

# %% [markdown]
# The target: held-out wordings within 5% of the trained wordings' calls, same correctness. The same 15
# requests in each wording, so the rows compare like with like (`scenario_bench.paired_rows`; "calls vs
# trained" is the wording's calls over the trained wording's):
#
# <!-- zh -->
#
# 目标：留出措辞的调用数在训练措辞的 5% 以内，正确率相同。每种措辞都是同样的 15 个请求，所以这些行是同类相比（`scenario_bench.paired_rows`；"调用比（相对训练说法）" 是该措辞的调用数除以训练措辞的调用数）：

# %%
pd.DataFrame([row for arm in (BARE, FULL) for row in paired_rows(runs[("rephrased", arm.name)])])

# %% [markdown]
# Met: 1.67 calls/task in each wording (1.000x), 15/15 correct in each. Bare ReAct, which learns nothing,
# misses it in Chinese (2.33 against 2.13, 1.094x): the lessons close the gap the wording opens.
#
# <!-- zh -->
#
# 达到了：每种措辞都是 1.67 次调用/任务（1.000 倍），每种都 15/15 正确。什么都不学的裸 ReAct 在中文上没有达到（2.33 对 2.13，1.094 倍）：经验弥合了措辞带来的差距。

# %% [markdown]
# ## Static: notebook 06's suite
#
# The target: still within 1.05x the oracle's calls in tasks 21-50.
#
# <!-- zh -->
#
# ## Static：第 06 本笔记本的任务集
#
# 目标：在任务 21-50 中仍然在 oracle 调用数的 1.05 倍以内。

# %%
pd.DataFrame([row for row in window_rows(runs[("static", FULL.name)]) if row["type"] == "all"])

# %% [markdown]
# Met: 1.5 calls/task against the oracle's 1.50 in tasks 21-50, 30/30 correct.
#
# <!-- zh -->
#
# 达到了：任务 21-50 中 1.5 次调用/任务，oracle 为 1.50，30/30 正确。

# %% [markdown]
# ## The controls: lessons of the wrong type
#
# Lessons are kept per request type, and the planner injects only the task's own type. The long-context
# control drops both; where its 88 wrong calls on drift go (calls to a tool that is not one of the
# request type's, by type and tool, in every run it paid for, the fast loop's discarded ones included):
#
# <!-- zh -->
#
# ## 对照组：类型不对的经验
#
# 经验按请求类型分开存放，规划器只注入本任务所属类型的经验。长上下文对照把这两点都去掉了；它在 drift 上的 88 次错误调用都去了哪里（调用了不属于该请求类型的工具，按类型和工具统计，计入它付过费的每一次运行，包括快循环丢弃的那些）：

# %%
flooded = Counter(
    (result.task.task_type, step.tool)
    for result in runs[("drift", "long-context")].results
    for trace in [*result.discarded, result.trace]
    for step in trace.steps
    if step.status == "wrong_tool"
)
pd.DataFrame([{"type": kind, "wrong tool": tool, "calls": n} for (kind, tool), n in flooded.most_common()])

# %% [markdown]
# 87 of the 88 are `get_shipping_status`, 57 of them on status questions: the delivery lesson "when any
# task: start with get_shipping_status", right for deliveries, sends every other type to the carrier.
# That is what per-type lessons prevent.
#
# <!-- zh -->
#
# 88 次中有 87 次是 `get_shipping_status`，其中 57 次出现在状态查询上：配送类经验 "when any task: start with get_shipping_status" 对配送是对的，却把其他每种类型都送到了承运商那里。按类型存放经验，防止的正是这种情况。

# %% [markdown]
# ## Drifts nobody tuned on
#
# The seven scenarios are the kit's evaluation set, and the mechanisms were worked on while watching
# them, threshold and stale included once they had run. So six more drifts were written later, apart from
# all seven, and nothing was changed to make them pass (`scenarios.HELD_OUT_DRIFTS`): other change times
# and sizes, a settlement lag that shrinks, a cache that comes back, a cache that goes stale and then
# vanishes, two or three changes in one run. Each is 60 tasks of drift's mix from an empty memory, here on
# five suite seeds (`held_out_bench.held_out_rows`; `python benchmarks/held_out_drifts.py` runs twenty):
#
# <!-- zh -->
#
# ## 没有人针对其调优过的漂移
#
# 这七个场景是本套件的评测集，而各个机制正是看着它们改出来的，threshold 和 stale 在跑过之后也不例外。所以后来又另写了六种漂移，与这七个场景都无关，也没有为了让它们通过而修改任何东西（`scenarios.HELD_OUT_DRIFTS`）：别的变化时刻和幅度、变短的结算延迟、恢复上线的缓存、先过时再消失的缓存、一次运行中的两三处变化。每种都是 drift 的任务组合中的 60 个任务，从空记忆开始，这里用五个测试集种子（`held_out_bench.held_out_rows`；`python benchmarks/held_out_drifts.py` 用二十个）：

# %%
pd.DataFrame(held_out_rows(range(7, 12), jobs=2))  # five suite seeds, two worker processes

# %% [markdown]
# On every one the loop answers more tasks right than bare ReAct (287-291 of 300 against 259-267) with
# 17-24% fewer calls, and it lost no seed here; over twenty seeds it answers fewer right than bare ReAct in 1 run of 120 (cache
# stale, then gone: its cache shortcut, as on stale). What it learned on the seven carried over.
#
# <!-- zh -->
#
# 在每一种漂移上，循环答对的任务都比裸 ReAct 多（300 个中答对 287-291 个，裸 ReAct 为 259-267 个），调用少 17-24%，这里没有落败的种子；在二十个种子上，120 次运行中只有 1 次答对的比裸 ReAct 少（先过时再消失的缓存：和 stale 一样，是它的缓存捷径）。它在七个场景上学到的东西迁移过来了。

# %% [markdown]
# ## What changed
#
# - Memory holds a rule against the lags the tools declare: when a lag moves, a rule about the old number
#   is outdated and memory writes it renumbered (`rule_forms.outdated`). The threshold scenario's
#   30-minute rule and drift's cancel rule ended that way without firing. Two of a rule's last three
#   votes down, or one wrong answer it could have caused, end it whatever its past (stale: the cache-hit
#   rule at its first wrong answer).
# - A rule proposed once is on probation: injected at once, ended by its first down-vote, made active by
#   its first validated run, and unable to invalidate anything. So the write threshold no longer makes
#   the loop wait unseen for a second task (the no-write-threshold arm ties it in calls on six of seven
#   scenarios), and it still keeps a one-off special case from knocking out good rules (noisy).
# - The same rule with a new threshold replaces the old (`rule_forms.renumbered`); a rejected answer
#   after trusting a partial source teaches "start with" the source that holds every record (stale).
# - Two scenarios test that learning holds on cases nobody tuned it to: a threshold that moves and a source
#   that goes stale. On both the loop makes far fewer calls than bare ReAct; on stale its learned shortcut
#   costs one wrong answer that bare ReAct does not give, and both end at 47/50. Six drifts written later,
#   apart from all seven, agree: more right answers and fewer calls than bare ReAct on each.
# - The loop is still not the best arm everywhere: keyword retrieval, no budget and no decay/expiry are
#   each cheaper somewhere (threshold, noisy, seasons), at the same correctness.
#
# Notebook 06 stays the capstone on the static scenario; notebook 10 is where the name comes from.
#
# <!-- zh -->
#
# ## 变化了什么
#
# - 记忆用工具声明的延迟来核对规则：延迟一变，关于旧数字的规则就过时了，记忆会把它改号重写（`rule_forms.outdated`）。threshold 场景的 30 分钟规则和 drift 的 cancel 规则都是这样终止的，没有触发过。一条规则最近三票中有两票反对，或者出现一个它可能造成的错误答案，都会终止它，不管它过去表现如何（stale：缓存命中规则在它的第一个错误答案时就终止了）。
# - 只提出过一次的规则处于试用期：立即注入，第一张反对票就终止它，第一次验证通过的运行让它转为 active，而且它不能让任何规则失效。因此写入阈值不再让循环在看不见的地方干等第二个任务（无写入阈值实验组在七个场景中的六个上与它调用数持平），同时仍能阻止一次性的特例把好规则挤掉（noisy）。
# - 同一条规则换上新阈值就替换旧的（`rule_forms.renumbered`）；信任了不完整的数据源之后被拒的答案，会教会智能体 "start with" 那个持有每条记录的数据源（stale）。
# - 两个场景检验学习在没有人针对其调优过的情形下是否站得住：一个会移动的阈值，和一个会过时的数据源。在两者上，循环的调用都远少于裸 ReAct；在 stale 上，它学到的捷径付出了一个裸 ReAct 没有给出的错误答案，两者最终都是 47/50。后来另写的六种漂移与这七个场景都无关，结论一致：每一种上都比裸 ReAct 答对得多、调用得少。
# - 循环仍然不是处处最好的实验组：仅关键词检索、无预算和无衰减/过期各自在某处更省（threshold、noisy、seasons），正确率相同。
#
# 第 06 本笔记本仍然是 static 场景上的集大成之作；第 10 本笔记本讲的是这个名字的由来。
