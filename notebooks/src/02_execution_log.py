# %% [markdown]
# # 02 · The execution log: see where the time goes
#
# **What you will build:** a logger around the bare ReAct agent from notebook 01 that writes one
# compact record per step (run, step, tool, arguments, status, latency, what came back) to a JSON Lines
# file, and the query that finds the wasted calls in it.
#
# Why: the seed article found that a reflector fed the whole chat transcript gives vague advice, while
# one fed a *compact step log* gives specific rules. The session to log: notebook 01's 50 tasks.
#
# <!-- zh -->
# # 02 · 执行日志：看清时间花在哪里
#
# **你将构建：** 给笔记本 01 的裸 ReAct 智能体套上一个日志记录器，每一步写一条紧凑的记录（运行、步、工具、参数、状态、耗时、返回了什么）到一个 JSON Lines 文件；以及在日志中找出浪费调用的查询。
#
# 为什么：原文发现，把整段聊天记录喂给反思器，它给出的是含糊的建议；而喂给它*紧凑的步骤日志*，它给出的是具体的规则。要记录的会话：笔记本 01 的 50 个任务。

# %%
from pathlib import Path

import pandas as pd

from ralph_mini import grade, lang, model_from_env
from ralph_mini.log import append_run, load_log, log_run, step_rows
from ralph_mini.measure import run_suite
from ralph_mini.waste import run_waste
from ralph_mini.widgets import progress
from ralph_mini.worlds import orders

LANGUAGE = lang.setup()  # "en" or "zh": the edition's language, for printed text, tables and questions
pd.set_option("display.max_colwidth", 120)  # show a log record's whole observation
model = model_from_env(habits=orders.HABITS)
suite = orders.make_suite(n=50, seed=7, language=LANGUAGE)
tools = suite.world.tools()
traces = run_suite(suite.tasks, model, tools, progress=progress)

# %% [markdown]
# ## Log a session
#
# **From scratch: the step log.** One JSON object per line, one line per step of every run: which run,
# which step, the tool and its arguments, the status, the step's cost in virtual seconds (the tool's
# time plus the model's turn that chose it) and the observation. Reading it back is one `json.loads` a
# line.
#
# <!-- zh -->
# ## 记录一次会话
#
# **从零开始：步骤日志。** 每行一个 JSON 对象，每次运行的每一步占一行：哪次运行、第几步、工具及其参数、状态、这一步以虚拟秒计的开销（工具的时间加上选择这次调用的那一轮模型时间），以及观察。读回来只需每行一次 `json.loads`。

# %%
# from scratch: the step log
import json


def write_log(path, traces):
    path.parent.mkdir(exist_ok=True)
    with open(path, "w", encoding="utf-8") as file:
        for number, trace in enumerate(traces, 1):
            for step in trace.steps:
                row = {
                    "run_id": f"R{number:03d}",
                    "step": step.index,
                    "tool": step.tool,
                    "args": step.arguments,
                    "status": step.status,
                    "latency_s": round(step.tool_latency_s + step.model_latency_s, 3),
                    "observation": step.observation,
                }
                file.write(json.dumps(row) + "\n")


def read_log(path):
    with open(path, encoding="utf-8") as file:
        return [json.loads(line) for line in file]


scratch_path = Path("runs/scratch-02.jsonl")
write_log(scratch_path, traces)
rows = read_log(scratch_path)
print(
    lang.tr(
        f"{len(rows)} lines in {scratch_path}; the first two:", f"{scratch_path} 共 {len(rows)} 行，前两行:"
    )
)
print(*scratch_path.read_text().splitlines()[:2], sep="\n")

# %% [markdown]
# **The package's version: `log.log_run`, `append_run`, `load_log`**: the same steps, tools, statuses
# and seconds. It adds a `run` line per run (question, time, answer, the grader's verdict, cost), so a
# reflector can read a run from the log alone; shorter arguments and observations; tokens; appending,
# never rewriting; and a loader that names the file and line of a bad line.
#
# <!-- zh -->
# **包里的版本：`log.log_run`、`append_run`、`load_log`**：步骤、工具、状态和秒数都一样。它还增加了：每次运行一行 `run` 记录（问题、时间、答案、评分器的判定、开销），这样反思器只读日志就能了解一次运行；更短的参数和观察；token 数；只追加、从不重写；以及一个加载器，遇到坏行时会指出是哪个文件的哪一行。

# %%
log_path = Path("runs/session-02.jsonl")
log_path.unlink(missing_ok=True)
for number, trace in enumerate(traces, 1):
    append_run(log_path, *log_run(trace, f"R{number:03d}", grade(trace.task, trace.answer).correct))
records, runs = load_log(log_path)
print(
    lang.tr(
        f"{len(records)} steps in {len(runs)} runs; the first two lines:",
        f"{len(runs)} 次运行共 {len(records)} 步，前两行:",
    )
)
print(*log_path.read_text().splitlines()[:2], sep="\n")
keys = ("run_id", "step", "tool", "status", "latency_s")
same = [tuple(getattr(r, k) for k in keys) for r in records] == [tuple(row[k] for k in keys) for row in rows]
print(
    lang.tr(
        "\nsame runs, steps, tools, statuses and seconds as by hand:",
        "\n运行、步、工具、状态和秒数都与手写版相同:",
    ),
    same,
)

# %% [markdown]
# ## Find the waste by eye
#
# One run, as a table:
#
# <!-- zh -->
# ## 用眼睛找浪费
#
# 一次运行，以表格展示：

# %%
steps = pd.DataFrame(step_rows(records))
run = runs[1]
print(
    lang.tr(
        f"run {run.run_id} at {run.now}: {run.question}", f"运行 {run.run_id}（{run.now}）：{run.question}"
    )
)
steps[steps.run_id == "R002"]

# %% [markdown]
# Order B456 was created at 11:48 and asked about at 12:00: 12 minutes old. Step 1 asked the shipping
# service about a payment. Step 3 asked the database what the cache had just said. Step 4 waited on the
# payment provider for an order too new to be there: 6 s for the provider (notebook 01's tool table),
# and the rest of the step's 8.3 s is the model's turn. One call in four was needed.
#
# ## Find the waste by query
#
# By eye works for one run; for fifty, ask the log.
#
# **From scratch: the query that finds the waste.** Three questions, each about a step and the one
# before it in the same run: a wrong call; the database asked right after the cache found the order;
# the payment provider finding nothing.
#
# <!-- zh -->
# 订单 B456 创建于 11:48，在 12:00 被询问：才 12 分钟。第 1 步向物流服务询问付款情况。第 3 步又去问数据库缓存刚刚说过的内容。第 4 步为一个太新、服务商那里根本还不可能有的订单等待支付服务商：服务商本身占 6 秒（笔记本 01 的工具表），这一步 8.3 秒中的其余部分是模型的那一轮。四次调用中只有一次是必要的。
#
# ## 用查询找浪费
#
# 一次运行可以用眼睛看；五十次，就得去问日志。
#
# **从零开始：找出浪费的查询。** 三个问题，每个问题都关于某一步以及同一次运行中它的前一步：一次错误调用；缓存刚找到订单，紧接着又查数据库；支付服务商什么也没找到。


# %%
# from scratch: the query that finds the waste
def find_waste(rows):
    """{(run_id, step): why} for every wasted call, read from the log alone."""
    wasted, previous = {}, None
    for row in rows:
        if previous is not None and previous["run_id"] != row["run_id"]:
            previous = None  # a new run: no step before this one
        key = (row["run_id"], row["step"])
        after_cache_hit = previous and previous["tool"] == "query_local_cache" and previous["status"] == "ok"
        if row["status"] in ("wrong_tool", "bad_args", "error", "bad_reply"):
            wasted[key] = lang.tr("wrong tool or bad arguments", "用错工具或参数有误")
        elif row["tool"] == "query_database" and after_cache_hit:
            wasted[key] = lang.tr("database after a cache hit", "缓存命中后又查数据库")
        elif row["tool"] == "query_payment_api" and row["status"] == "not_found":
            wasted[key] = lang.tr("payment API found nothing", "支付 API 什么也没查到")
        previous = row
    return wasted


wasted = find_waste(rows)
seconds = {(row["run_id"], row["step"]): row["latency_s"] for row in rows}
for why in sorted(set(wasted.values())):
    calls = [key for key, reason in wasted.items() if reason == why]
    total = sum(seconds[key] for key in calls)
    print(
        lang.tr(
            f"{why:28} {len(calls):3} calls {total:6.1f} virtual s",
            f"{len(calls):3} 次调用 虚拟 {total:6.1f} 秒  {why}",
        )
    )
print(lang.tr(f"{len(wasted)} of {len(rows)} calls wasted", f"{len(rows)} 次调用中浪费了 {len(wasted)} 次"))

# %% [markdown]
# **The package's version: `waste.run_waste`**, the one definition of waste the Ralph Loop uses: the
# same calls. It spells no tool name, so it works in any world: it judges a run from its steps and
# answer (a look-up that brought nothing the answer used, or whose values another call also gave; a
# "not found" after the tool that holds every order found nothing).
#
# <!-- zh -->
# **包里的版本：`waste.run_waste`**，这是 Ralph 循环使用的唯一一个“浪费”定义：找出的调用相同。它不写死任何工具名，因此适用于任何世界：它根据一次运行的各步和答案来判断（一次查询带回的东西答案都没有用上，或者它的值另一次调用也给出了；保存所有订单的那个工具已经什么也没找到之后，又得到一个 "not found"）。

# %%
complete = [t.name for t in tools if t.holds_every]  # the database: it holds every order
package = {(f"R{n:03d}", i) for n, trace in enumerate(traces, 1) for i in run_waste(trace, complete=complete)}
same = package == set(wasted)
print(
    lang.tr(
        f"by hand {len(wasted)} wasted calls, package {len(package)}; the same calls: {same}",
        f"手写版找到 {len(wasted)} 次浪费的调用，包找到 {len(package)} 次；是同一批调用: {same}",
    )
)

# %% [markdown]
# ## What changed: where the time goes
#
# The log turns "the agent feels slow" into a table: per tool, calls, virtual time and waste. A step's
# `latency_s` is the *tool's* time plus the *model's* turn that chose the call, so we add the two parts
# from the traces as columns `tool_s` and `model_s`.
#
# <!-- zh -->
# ## 有何变化：时间花在哪里
#
# 日志把“智能体感觉很慢”变成了一张表：按工具列出调用次数、虚拟时间和浪费。一步的 `latency_s`（表中的“耗时（秒）”）是*工具*的时间加上选择这次调用的那一轮*模型*时间，所以我们从轨迹中取出这两部分，加上 `tool_s` 和 `model_s` 两列（表中的“工具秒数”和“模型秒数”）。

# %%
steps["tool_s"] = [s.tool_latency_s for t in traces for s in t.steps]  # same order as the log
steps["model_s"] = [s.model_latency_s for t in traces for s in t.steps]
steps["wasted"] = [(run, step) in wasted for run, step in zip(steps.run_id, steps.step, strict=True)]
per_tool = steps.groupby("tool").agg(
    calls=("step", "size"),
    virtual_s=("latency_s", "sum"),
    tool_s=("tool_s", "sum"),
    model_s=("model_s", "sum"),
    wasted_calls=("wasted", "sum"),
)
per_tool["wasted share of time"] = (
    steps[steps.wasted].groupby("tool").latency_s.sum().reindex(per_tool.index).fillna(0) / per_tool.virtual_s
).round(2)
per_tool.round(1).sort_values("virtual_s", ascending=False)

# %% [markdown]
# Almost half of all calls were waste (65 of 141), and half of the slow provider's time went to calls
# that found nothing.
#
# Read `tool_s` and `model_s` before blaming a tool. The cache's 50 calls cost 107.6 virtual seconds,
# but only 2.5 s of that is the cache (0.05 s a call); 105.1 s is the model's turns that chose it. The
# payment provider is the opposite: 144.0 of its 198.8 s is the provider itself. So a wasted cache or
# database call still costs a model turn, and a rule that removes a call saves that turn too.
#
# Notebook 03 hands this log to a *reflector* and asks it to write the rules that would have avoided
# the waste.
#
# <!-- zh -->
# 几乎一半的调用都是浪费（141 次中有 65 次），缓慢的支付服务商有一半的时间花在了什么也没找到的调用上。
#
# 在责怪某个工具之前，先看 `tool_s` 和 `model_s`。缓存的 50 次调用花了 107.7 虚拟秒，但其中只有 2.5 秒是缓存本身（每次 0.05 秒）；105.2 秒是选择调用它的那些模型轮次。支付服务商正好相反：它的 198.9 秒中有 144.0 秒是服务商本身。所以，一次浪费的缓存或数据库调用仍然要花掉一轮模型时间，而一条省掉某次调用的规则也会省下那一轮。
#
# 笔记本 03 会把这份日志交给一个*反思器*（reflector），让它写出本可以避免这些浪费的规则。
