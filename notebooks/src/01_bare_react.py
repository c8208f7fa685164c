# %% [markdown]
# # 01 · Bare ReAct: think, act, observe
#
# **What you will build:** the simplest agent that works, a *ReAct* loop, on the order-status task from
# the seed article, and the baseline numbers that every later notebook has to beat.
#
# In ReAct the **Reasoner** (the language model) writes a thought and asks for a tool; the **Actor** (a
# plain Python loop) runs it and hands back what it saw, the *observation*; until a final answer.
#
# The job: a customer asks about an order. The agent has three tools, fast to slow:
#
# | tool | what it is | virtual latency |
# |---|---|---|
# | `query_local_cache` | a fast local cache of recent orders | 0.05 s |
# | `query_database` | the shop's database: every order | 0.8 s |
# | `query_payment_api` | a slow third-party payment provider | 6 s |
#
# Everything runs **offline**: the model is a deterministic simulation (`OfflineModel`) that reads only
# the messages it is sent, exactly like a real model. Set `RALPH_MODEL` (see the README) and the same
# cells run on a real model.
#
# <!-- zh -->
# # 01 · 裸 ReAct：思考、行动、观察
#
# **你将构建：** 能工作的最简单的智能体——一个 *ReAct* 循环，用在原文（seed article）的订单状态任务上；以及之后每个笔记本都要超越的基线数字。
#
# 在 ReAct 中，**推理者**（Reasoner，即语言模型）写下一个想法并请求调用一个工具；**执行者**（Actor，一个普通的 Python 循环）运行这个工具，把它看到的结果，即*观察*（observation），交还给模型；如此往复，直到给出最终答案。
#
# 任务：一位顾客询问一个订单。智能体有三个工具，从快到慢：
#
# | 工具 | 是什么 | 虚拟延迟 |
# |---|---|---|
# | `query_local_cache` | 最近订单的快速本地缓存 | 0.05 s |
# | `query_database` | 商店的数据库：所有订单 | 0.8 s |
# | `query_payment_api` | 一个缓慢的第三方支付服务商 | 6 s |
#
# 一切都**离线**运行：模型是一个确定性的模拟（`OfflineModel`），它只读取发给它的消息，和真实模型完全一样。设置 `RALPH_MODEL`（见 README），同样的单元格就会在真实模型上运行。

# %%
import json

from ralph_mini import lang, model_from_env, run_react, tool
from ralph_mini.measure import by_kind, record, run_suite, summarize
from ralph_mini.widgets import progress, show_trace
from ralph_mini.worlds import orders

LANGUAGE = lang.setup()  # "en" or "zh": the edition's language, for printed text, tables and questions
model = model_from_env(habits=orders.HABITS)  # OfflineModel, unless RALPH_MODEL is set
model

# %% [markdown]
# ## The world and its tools
#
# The order desk is one *world*, a package of its own (`ralph_mini.worlds.orders`): its words, tools,
# tasks and the simulated model's habits there. `orders.make_suite` builds a seeded world of orders,
# with the article's demo data first (A123 paid 99.5, B456 pending 215.0, C789 refunded 66.0), and 50
# questions with their ground truth. A tool is a plain function turned into a visible `Tool` by the
# `@tool` decorator. Besides the three core tools, the world offers six *extended* tools that a naive
# agent may misuse.
#
# <!-- zh -->
# ## 世界与工具
#
# 订单服务台是一个*世界*（world），有自己的包（`ralph_mini.worlds.orders`）：里面有它的用语、工具、任务，以及模拟模型在这个世界里的习惯。`orders.make_suite` 用随机种子生成一个订单世界，最前面是原文的演示数据（A123 已支付 99.5，B456 待处理 215.0，C789 已退款 66.0），以及 50 个问题和它们的标准答案（中文版用中文提问，订单和标准答案与英文版相同）。工具就是一个普通函数，由 `@tool` 装饰器变成一个看得见的 `Tool`。除了三个核心工具，这个世界还提供六个*扩展*工具，天真的智能体可能会误用它们。

# %%
import pandas as pd  # imported where the first table is drawn, so the first cell opens fast

suite = orders.make_suite(n=50, seed=7, language=LANGUAGE)
tools = suite.world.tools()
pd.DataFrame(
    [
        {"tool": t.name, "core": t.core, "latency s": t.latency_s, "description": t.description[:70]}
        for t in tools
    ]
)

# %% [markdown]
# The model never sees Python: it sees a JSON schema per tool, built from the type hints and the
# `Args:` section of the docstring. This is exactly what goes into the `tools=[...]` field of an
# OpenAI chat-completions request:
#
# <!-- zh -->
# 模型从来看不到 Python 代码：它看到的是每个工具的一份 JSON schema，由类型提示和文档字符串中的 `Args:` 部分生成。这正是 OpenAI chat-completions 请求中 `tools=[...]` 字段里的内容：

# %%
print(json.dumps(tools[0].schema(), indent=2))


# %% [markdown]
# Writing a tool of your own takes a type hint per parameter and one `Args:` line each. `@tool` refuses
# to guess: a missing hint, an unsupported type or an undocumented parameter is an error at once.
#
# <!-- zh -->
# 自己写一个工具，只需要给每个参数一个类型提示，并为每个参数写一行 `Args:` 说明。`@tool` 不做猜测：缺少类型提示、类型不受支持、参数没有说明，都会立即报错。


# %%
@tool(latency_s=0.3, core=False)
def loyalty_points(customer_id: str) -> dict:
    """Loyalty points of a customer.

    Args:
        customer_id: The customer id, for example "CUST-0042".
    """
    return {"customer_id": customer_id, "points": 120}


loyalty_points.schema()["function"]["parameters"]

# %% [markdown]
# ## One task, step by step
#
# The first question is about A123. Before using the kit's agent, write the loop yourself.
#
# **From scratch: the ReAct loop.** The conversation is a list of messages, starting with the system
# prompt and the question. Each turn the model replies with a thought and a tool call, or a final
# answer. The loop runs the tool and appends the observation as a `tool` message answering that call:
# one short line (`4 fields: status=paid, ...`), not raw JSON, to keep the context small. It stops at
# `Final answer:`, or after `max_steps` turns.
#
# <!-- zh -->
# ## 一个任务，一步一步来
#
# 第一个问题是关于 A123 的。在使用本套件的智能体之前，先自己写出这个循环。
#
# **从零开始：ReAct 循环。** 对话是一个消息列表，以系统提示词和问题开头。每一轮，模型回复一个想法加一个工具调用，或者给出最终答案。循环运行这个工具，把观察作为一条 `tool` 消息追加到对话中，作为对这次调用的回答：只是简短的一行（`4 fields: status=paid, ...`），而不是原始 JSON，以保持上下文短小。遇到 `Final answer:` 时停止，或者在 `max_steps` 轮之后停止。

# %%
# from scratch: the ReAct loop
import json

from ralph_mini.tools import NotFound


def react_by_hand(question, system_prompt, model, tools, max_steps=8):
    by_name = {t.name: t for t in tools}
    schemas = [t.schema() for t in tools]  # what the model reads about each tool
    messages = [{"role": "system", "content": system_prompt}, {"role": "user", "content": question}]
    for _ in range(max_steps):
        reply = model.complete(messages, schemas)  # think: a thought, then a tool call or an answer
        messages.append(reply.to_message())
        if not reply.tool_calls:  # no call: it should be the answer
            _, marker, answer = (reply.content or "").partition("Final answer:")
            if marker:
                return json.loads(answer), messages
            messages.append({"role": "user", "content": "Call a tool or give the final answer."})
        for call in reply.tool_calls:  # act: run each tool the model asked for
            try:
                fields = by_name[call.name].function(**json.loads(call.arguments))
                shown = ", ".join(f"{key}={value}" for key, value in fields.items())
                observation = f"ok: {len(fields)} fields: {shown}"
            except NotFound as err:
                observation = f"not_found: {err}"
            # observe: the result goes back into the conversation, as the answer to this call
            messages.append({"role": "tool", "tool_call_id": call.id, "content": observation})
    return None, messages


task = suite.tasks[0]
answer, messages = react_by_hand(task.question, task.system_prompt, model, tools)
for message in messages:  # the system prompt, the question, then thought, call, observation ...
    print(f"{message['role']:>9}: {message['content']}")
    for call in message.get("tool_calls", []):
        print(f"{'':>11}-> {call['function']['name']}({call['function']['arguments']})")

# %% [markdown]
# Read the thoughts: the model finds the order in the cache, and then queries the database anyway, "to
# confirm accuracy". That is the first naive habit the seed article saw in real models.
#
# **The package's version: `react.run_react`**, on the same task and then on all 50: the same
# conversation, message for message. What it adds: each step as a `Step` record with a status
# (`wrong_tool`: a tool the question is not about), virtual seconds and tokens; a made-up tool name,
# arguments that are not JSON, a tool that raises or hangs, each turned into an observation (the hand
# loop crashes with a `KeyError` on a made-up name); a stop after `max_pitfall_depth` wrong calls or a
# repeated call; lessons in the prompt within a budget (notebooks 04-06). No fault occurs on these
# tasks, so the conversations are the same; notebook 07 shows each fault.
#
# <!-- zh -->
# 读一读这些想法：模型在缓存里找到了订单，却还是去查了数据库，“以确认准确性”（to confirm accuracy）。这是原文在真实模型身上看到的第一个天真习惯。
#
# **包里的版本：`react.run_react`**，先在同一个任务上运行，再在全部 50 个任务上运行：对话完全相同，逐条消息一致。它多做了这些事：把每一步记成一条 `Step` 记录，带有状态（`wrong_tool`：问题与之无关的工具）、虚拟秒数和 token 数；把编造的工具名、不是 JSON 的参数、抛出异常或卡住的工具，各自变成一条观察（手写循环遇到编造的工具名会因 `KeyError` 崩溃）；在 `max_pitfall_depth` 次错误调用或一次重复调用之后停止；在预算之内把经验放进提示词（笔记本 04-06）。这些任务上不会出现任何故障，所以对话相同；笔记本 07 会逐一展示每种故障。

# %%
trace = run_react(task, model, tools)
for step in trace.steps:
    tool_s, model_s = step.tool_latency_s, step.model_latency_s
    print(
        f"{step.index}. {step.tool} -> {step.status}: "
        + lang.tr(f"{tool_s} s tool, {model_s} s model", f"工具 {tool_s} 秒，模型 {model_s} 秒")
    )
print(
    lang.tr("same conversation as by hand:", "与手写版的对话相同:"),
    trace.messages == messages,
    lang.tr("| same answer:", "| 答案相同:"),
    trace.answer == answer,
)
same = sum(
    react_by_hand(t.question, t.system_prompt, model, tools)[1] == run_react(t, model, tools).messages
    for t in suite.tasks
)
n = len(suite.tasks)
print(lang.tr(f"identical conversations on {same} of {n} tasks", f"{n} 个任务中有 {same} 个对话完全相同"))

# %% [markdown]
# The second question is about B456, created twelve minutes ago and still pending. Two more habits
# show: the model starts with a tool that merely *sounds* right, and it asks the slow payment provider
# about a pending order that is far too new to be there (the tool's own description says payments
# appear after about 30 minutes).
#
# <!-- zh -->
# 第二个问题是关于 B456 的：它创建于十二分钟前，仍处于待处理（pending）状态。这里又出现了两个习惯：模型一开始先用一个只是*听起来*对的工具；它还去问缓慢的支付服务商一个待处理订单，而这个订单太新了，服务商那里根本还不可能有它（这个工具自己的描述就说，付款大约 30 分钟后才会出现）。

# %%
trace = run_react(suite.tasks[1], model, tools)
for step in trace.steps:
    print(f"{step.index}. {step.tool}({step.arguments}) -> {step.status:<10} {step.observation[:70]}")
oracle = suite.tasks[1].oracle_calls
calls, wrong, seconds = trace.tool_calls, trace.wrong_calls, trace.latency_s
print(
    lang.tr(
        f"\n{calls} tool calls (the oracle needs {oracle}), {wrong} wrong, {seconds:.1f} s virtual",
        f"\n{calls} 次工具调用（oracle 只需 {oracle} 次），{wrong} 次错误，虚拟 {seconds:.1f} 秒",
    )
)

# %% [markdown]
# The same run as a table (the wrong call on red), and as a stepper: click **Next** to walk through
# it one step at a time, thought, tool call and observation.
#
# <!-- zh -->
# 同一次运行，先以表格展示（错误调用标红），再以步进器展示：点击 **下一步**，一步一步地查看这次运行，每一步包括想法、工具调用和观察。

# %%
show_trace(trace)

# %% [markdown]
# ## The whole suite: the baseline
#
# Now all 50 tasks, each run independently: the agent remembers nothing from one task to the next.
# The *oracle* is the fewest calls a policy that knows the rules (but not the data) needs: 1 for a
# cached order, 2 when it must go further. Virtual seconds add the model's simulated thinking time to
# the tools' latencies.
#
# <!-- zh -->
# ## 整套任务：基线
#
# 现在运行全部 50 个任务，每个任务独立运行：智能体不会把上一个任务中的任何东西带到下一个任务。*oracle*（理想策略）是一个知道规则（但不知道数据）的策略所需的最少调用次数：缓存中有的订单为 1 次，必须进一步查询时为 2 次。虚拟秒数是工具的延迟加上模型的模拟思考时间。

# %%
traces = run_suite(suite.tasks, model, tools, progress=progress)
records = [record(t) for t in traces]
baseline = summarize(records, lang.tr("bare ReAct, all 9 tools", "裸 ReAct，全部 9 个工具"))
pd.DataFrame(by_kind(records))

# %% [markdown]
# Cached orders need one call but get two; pending orders need one or two but get three or more;
# missing orders get a pointless call to the payment provider. Every answer is still correct: the
# waste is in time and money, not in accuracy.
#
# ## A long tool list hurts
#
# The article saw tool-choice accuracy rise when only the core tools were shown first. Same tasks,
# same model, only the three core tools in the prompt:
#
# <!-- zh -->
# 缓存中有的订单只需 1 次调用，却用了约 2 次；待处理订单需要 1 到 2 次，却用了 3 次以上；不存在的订单还会白白调用一次支付服务商。但每个答案仍然正确：浪费的是时间和金钱，而不是准确性。
#
# ## 工具列表太长有害
#
# 原文发现，先只给出核心工具时，工具选择的准确率会上升。同样的任务、同样的模型，提示词里只放三个核心工具：

# %%
core_tools = suite.world.tools(core_only=True)
core_records = [record(t) for t in run_suite(suite.tasks, model, core_tools, progress=progress)]
core_only = summarize(core_records, lang.tr("bare ReAct, 3 core tools", "裸 ReAct，3 个核心工具"))
pd.DataFrame([baseline, core_only])[["agent", "wrong calls", "tasks with a wrong call", "tokens/task"]]

# %% [markdown]
# With three tools the look-alike tools cannot tempt the model, and every prompt is shorter. Later
# lessons keep the long list and teach the agent to avoid the trap instead.
#
# ## What changed: the baseline numbers
#
# This table is the bar for the rest of the kit: about twice the oracle's calls, and with the full
# tool list, some wrong calls. Notebook 06 puts the Ralph Loop next to it.
#
# <!-- zh -->
# 只有三个工具时，那些看起来相似的工具就无法诱惑模型，而且每个提示词都更短。后面的课程会保留完整的长列表，转而教智能体避开这个陷阱。
#
# ## 有何变化：基线数字
#
# 这张表是本套件其余部分的标杆：调用次数约为 oracle 的两倍；使用完整工具列表时，还有一些错误调用。笔记本 06 会把 Ralph 循环（Ralph Loop）放在它旁边比较。

# %%
pd.DataFrame([baseline, core_only]).set_index("agent").T
