# %% [markdown]
# # 11 · Your own world: the same loop at a library's holds desk
#
# **What you will build:** a small world of your own, a library's holds desk, with the kit's public
# API only, and then bare ReAct and the Ralph Loop on it, side by side.
#
# Nothing in the agent (the ReAct loop, the log, the reflector, memory, the Ralph Loop) knows the order
# desk: it takes every word it needs from the world it is given. A world is four things
# (`ralph_mini/world.py` is the contract; `docs/your_own_world.md` says it in prose):
#
# | part | what | the order desk's |
# |---|---|---|
# | words | the record noun, the id argument and pattern, statuses, which fields hold a record's status and creation time, the request types and the fields a complete answer has | `worlds/orders/words.py` |
# | tools | plain functions with `@tool`, declaring their *roles*: `holds_every` (nothing there means nothing anywhere), `lag_min` (a slow source that learns of a record late), `writes`, `statuses`, `core` | `worlds/orders/world.py` |
# | tasks | questions with their truth and the oracle's fewest calls | `worlds/orders/tasks.py` |
# | habits | how the *simulated* model acts there, as data: the roles come from the tools, the rest is a few moves per request type | `worlds/orders/habits.py` |
#
# The kit ships three: the order desk (notebook 01), the wider shop (notebook 09) and a clinic's front
# desk (`worlds/clinic`, 250 lines of code). Here we build a fourth in this notebook.
#
# <!-- zh -->
# # 11 · 你自己的世界：在图书馆的预约服务台运行同一个循环
#
# **你将构建：** 一个属于你自己的小世界——图书馆的预约服务台，只用本套件的公开 API；然后在它上面把裸 ReAct 和 Ralph 循环并排运行。
#
# 智能体里的任何部分（ReAct 循环、日志、反思器、记忆、Ralph 循环）都不认识订单服务台：它需要的每个词，都取自交给它的世界。一个世界由四样东西组成（`ralph_mini/world.py` 是契约；`docs/your_own_world.md` 用文字讲了一遍）：
#
# | 部分 | 内容 | 订单服务台的 |
# |---|---|---|
# | 词汇（words） | 记录的名词、id 参数和 id 的格式、状态、哪些字段存放记录的状态和创建时间、请求类型，以及完整答案包含的字段 | `worlds/orders/words.py` |
# | 工具（tools） | 带 `@tool` 的普通函数，声明各自的*角色*：`holds_every`（这里没有就意味着哪里都没有）、`lag_min`（一个较晚才得知记录的慢速来源）、`writes`、`statuses`、`core` | `worlds/orders/world.py` |
# | 任务（tasks） | 问题，连同它的正确答案和 oracle 所需的最少调用数 | `worlds/orders/tasks.py` |
# | 习惯（habits） | *模拟*模型在这里如何行动，以数据表示：角色来自工具，其余是每种请求类型的几个动作 | `worlds/orders/habits.py` |
#
# 本套件自带三个世界：订单服务台（笔记本 01）、更大的网店（笔记本 09）和诊所前台（`worlds/clinic`，250 行代码）。这里我们在本笔记本中构建第四个。

# %%
import random
from datetime import datetime, timedelta

import pandas as pd

pd.set_option("display.max_colwidth", None)

from ralph_mini import NotFound, OfflineModel, RequestType, Task, Words, grade, lang, run_react, tool
from ralph_mini import offline_habits as oh
from ralph_mini.bench import BARE, RALPH, run_agent
from ralph_mini.measure import windows
from ralph_mini.widgets import plot_learning_curve

LANGUAGE = lang.setup()

# %% [markdown]
# ## 1. The words
#
# A patron asks about a *hold* (a book they reserved). Its status is `ready` (on the holds shelf),
# `in_transit` (coming from another branch), `expired` or `not_found`. Two kinds of request: "is my
# hold ready?" and "which branch do I pick it up at?". Everything the agent will say or check comes from
# this one record: the reflector's prompt, the fields of a complete answer, what an id looks like (so
# that no lesson may name one hold).
#
# <!-- zh -->
# ## 1. 词汇
#
# 读者询问一个*预约*（hold，即他们预约的一本书）。它的状态是 `ready`（在预约书架上）、`in_transit`（正从另一个分馆送来）、`expired` 或 `not_found`。两种请求：“我的预约到了吗？”和“我该去哪个分馆取？”。智能体要说或要检查的一切都来自这一条记录：反思器的提示词、完整答案的字段、id 长什么样（这样就没有经验能点名某一个预约）。
#
# （这个世界只定义了英文问法，所以中文版里的问题仍然是英文。）

# %%
STATUSES = ("ready", "in_transit", "expired", "not_found")
PROMPT = """You are the holds desk of a city library.
Current time: {now}.

Answer the patron's question about one hold. Use the tools, one call at a time, and read each result.
Hold statuses are: ready, in_transit, expired, not_found. If the interlibrary network reports
transfer=arrived, the hold is ready.
When you are done, reply without a tool call and end with one line:
- status: Final answer: {{"hold_id": "...", "status": "..."}}
- branch: Final answer: {{"hold_id": "...", "branch": "..."}}"""

WORDS = Words(
    job="a library's holds desk: is a hold ready, and where to pick it up",
    noun="hold",
    id_argument="hold_id",
    id_pattern=r"(?<![A-Za-z0-9])(H\d{5})(?![0-9])",
    statuses=STATUSES,
    missing="not_found",
    requests=(
        RequestType("status", ("status",), ("Is my hold {id} ready?", "What is the status of hold {id}?")),
        RequestType("branch", ("branch",), ("Which branch do I pick up hold {id} at?",), cues=("branch",)),
    ),
    created_field="placed_at",
    fields=("status", "placed_at", "branch", "title", "transfer"),
    id_formats={"hold id": r"\bH\d{5}\b"},
)
WORDS.request("branch")

# %% [markdown]
# ## 2. The tools, and the roles they declare
#
# Three look-ups, fast to slow, as in the order desk, and one tool that only sounds right:
#
# - `check_holds_shelf` answers at once but knows only holds already on the shelf (the fast source);
# - `query_catalogue` holds every hold, with its branch: `holds_every=True`;
# - `ask_interlibrary` knows whether a hold in transit has arrived, but learns of a hold an hour after it
#   was placed: `lag_min=60`;
# - `search_events` lists the library's events: a look-alike.
#
# The agent never reads a tool's name for its meaning: the reflector reads the roles (they are written
# into its prompt), the fast loop knows that nothing in the catalogue means nothing anywhere, and the
# simulated model's habits are defined on them.
#
# <!-- zh -->
# ## 2. 工具，以及它们声明的角色
#
# 三个查询工具，从快到慢，和订单服务台一样；还有一个只是听起来对路的工具：
#
# - `check_holds_shelf` 立即答复，但只知道已经放上预约书架的预约（快速来源）；
# - `query_catalogue` 存有每一个预约及其分馆：`holds_every=True`；
# - `ask_interlibrary` 知道一个在途的预约是否已经送到，但要在预约提交一小时后才得知它：`lag_min=60`；
# - `search_events` 列出图书馆的活动：一个似是而非的工具。
#
# 智能体从不根据工具的名字去理解它的含义：反思器读取的是角色（它们被写进反思器的提示词），快循环知道目录里没有就意味着哪里都没有，模拟模型的习惯也是基于角色定义的。

# %%
NOW = datetime(2025, 9, 1, 10, 0)


def make_tools(holds: dict) -> list:
    @tool(latency_s=0.05, statuses=STATUSES)
    def check_holds_shelf(hold_id: str) -> dict:
        """The holds shelf at the desk: fast, but lists only holds waiting there now.

        Args:
            hold_id: The hold id, for example "H20417".
        """
        found = holds.get(hold_id.upper())
        if found is None or found["status"] != "ready":
            raise NotFound(f"hold {hold_id} is not on the shelf")
        return {"status": "ready", "placed_at": found["placed_at"]}

    @tool(latency_s=0.6, statuses=STATUSES, holds_every=True)
    def query_catalogue(hold_id: str) -> dict:
        """The library's catalogue: every hold, with its branch and title. Slower.

        Args:
            hold_id: The hold id, for example "H20417".
        """
        found = holds.get(hold_id.upper())
        if found is None:
            raise NotFound(f"no hold {hold_id}")
        return {k: found[k] for k in ("status", "placed_at", "branch", "title")}

    @tool(latency_s=5.0, lag_min=60)
    def ask_interlibrary(hold_id: str) -> dict:
        """The interlibrary network (slow): where a hold in transit is. It learns of a hold about an hour
        after it is placed.

        Args:
            hold_id: The hold id, for example "H20417".
        """
        found = holds.get(hold_id.upper())
        placed = datetime.strptime(found["placed_at"], "%Y-%m-%d %H:%M") if found else NOW
        if found is None or found.get("transfer") is None or NOW - placed < timedelta(minutes=60):
            raise NotFound(f"the network has no transfer for hold {hold_id}")
        return {"transfer": found["transfer"]}

    @tool(latency_s=0.4, core=False)
    def search_events(query: str) -> dict:
        """Search the library's events (readings, workshops).

        Args:
            query: Words to search for.
        """
        return {"best_match": "Poetry night, Thursday 19:00"}

    return [check_holds_shelf, query_catalogue, ask_interlibrary, search_events]


[(t.name, t.holds_every, t.lag_min, t.core) for t in make_tools({})]

# %% [markdown]
# ## 3. Tasks, with their truth and the oracle
#
# Each task carries what a correct answer must say and the fewest calls a policy needs that knows the
# rules but not the data: the shelf first (the catalogue on a miss), the network for a hold in transit
# placed over an hour ago; the catalogue alone for a branch. `grade` (the kit's) compares field by field.
#
# <!-- zh -->
# ## 3. 任务，连同正确答案和 oracle
#
# 每个任务都带着正确答案必须说出的内容，以及一个懂规则但不知道数据的策略所需的最少调用数：先查书架（没找到再查目录），对提交超过一小时的在途预约再问馆际网络；问分馆时只查目录。`grade`（本套件的）逐字段比较。

# %%
KINDS = {"ready": 0.35, "expired": 0.15, "transit_fresh": 0.15, "transit_stale": 0.2, "missing": 0.15}


def make_suite(n: int, seed: int) -> tuple[list[Task], list]:
    rng, holds, tasks = random.Random(seed), {}, []
    for number in range(1, n + 1):
        kind = rng.choices(list(KINDS), weights=list(KINDS.values()))[0]
        hold_id = f"H{rng.randint(10000, 99999)}"
        fresh = kind == "transit_fresh"
        placed = NOW - timedelta(minutes=rng.randint(5, 50) if fresh else rng.randint(90, 5000))
        arrived = kind == "transit_stale" and rng.random() < 0.6
        if kind != "missing":
            status = "ready" if kind == "ready" else "expired" if kind == "expired" else "in_transit"
            holds[hold_id] = {"status": status, "placed_at": placed.strftime("%Y-%m-%d %H:%M"),
                              "branch": rng.choice(["Central", "Riverside", "Old Town"]), "title": "a book",
                              "transfer": ("arrived" if arrived else "on_the_way") if "transit" in kind else None}  # fmt: skip
        task_type = "branch" if rng.random() < 0.3 else "status"
        if task_type == "branch":
            truth, oracle = {"branch": holds[hold_id]["branch"] if kind != "missing" else "not_found"}, 1
        else:
            truth = {"status": "not_found" if kind == "missing" else "ready" if arrived else holds[hold_id]["status"]}
            oracle = 1 if kind == "ready" else 3 if kind == "transit_stale" else 2
        phrasings = WORDS.request(task_type).phrasings
        tasks.append(Task(f"T{number:03d}", rng.choice(phrasings).format(id=hold_id), task_type, truth, oracle,
                          PROMPT.format(now=NOW.strftime("%Y-%m-%d %H:%M")), NOW.strftime("%Y-%m-%d %H:%M"),
                          kind=kind, record_id=hold_id))  # fmt: skip
    return tasks, make_tools(holds)


tasks, tools = make_suite(50, seed=7)
pd.DataFrame([{"task": t.task_id, "question": t.question, "type": t.task_type, "truth": t.expected,
               "oracle calls": t.oracle_calls} for t in tasks[:5]])  # fmt: skip

# %% [markdown]
# ## 4. How the simulated model acts here: habits, as data
#
# The offline model is one generic program. What it does at this desk is data: for a status question a
# *thorough* look-up (the seed article's naive habits, defined on the roles: it double-checks the
# catalogue after the shelf found the hold, and asks the slow network about every hold in transit and
# about holds the catalogue does not have), sometimes tempted first by a look-alike tool; for a branch
# question, the shelf first (it lists no branches), then the catalogue. How it reads its answer off the
# observations is the one small function a world gives per request type.
#
# <!-- zh -->
# ## 4. 模拟模型在这里如何行动：习惯，以数据表示
#
# 离线模型是一个通用程序。它在这个服务台做什么，由数据决定：对状态问题，做一次*彻底的*查询（原文中的朴素习惯，基于角色定义：书架找到预约后，它还会去目录再核对一遍；对每一个在途的预约，以及目录里没有的预约，都去问缓慢的馆际网络），有时还会先被一个似是而非的工具吸引；对分馆问题，先查书架（书架不列分馆），再查目录。它如何从观察中读出答案，是世界为每种请求类型提供的那一个小函数。


# %%
def status_answer(seen) -> dict:
    answer = oh.FieldAnswer("hold_id", ("status",), ("status",), "not_found")(seen)
    if answer["status"] == "in_transit" and oh.fields_of(seen, "ask_interlibrary").get("transfer") == "arrived":
        answer["status"] = "ready"
    return answer


HABITS = oh.habits_for(
    WORDS,
    tools,
    {
        "status": oh.RequestHabit((oh.LookUp(thorough=True),), status_answer, tempted_by=("search_events",)),
        "branch": oh.RequestHabit(
            (oh.LookUp(), oh.Move("query_catalogue", oh.FOUND, "The shelf lists no branches; the catalogue will.")),
            oh.FieldAnswer("hold_id", ("branch",), ("branch",), "not_found"),
        ),
    },
    waiting=("in_transit",),
)
print(lang.tr(f"fast: {HABITS.fast}, full: {HABITS.full}, lagging: {HABITS.lagging}",
              f"快速来源: {HABITS.fast}，完整来源: {HABITS.full}，滞后来源: {HABITS.lagging}"))  # fmt: skip
model = OfflineModel(seed=0, habits=HABITS)
trace = run_react(tasks[0], model, tools)
for step in trace.steps:
    print(f"{step.tool}({step.arguments}) -> {step.status}: {step.thought}")
print(trace.answer, grade(tasks[0], trace.answer).explain())

# %% [markdown]
# The roles were read from the tools, not from their names. Everything above is the world; everything
# below is the kit's agent, unchanged.
#
# ## 5. Bare ReAct against the Ralph Loop
#
# The same benchmark as notebook 06: the same 50 tasks, bare ReAct from scratch on each, the Ralph Loop
# from an empty memory, six virtual hours between tasks. `words=WORDS` is all the loop is told about the
# world; the tools bring their roles.
#
# <!-- zh -->
# 角色是从工具中读出来的，而不是从它们的名字。上面的一切都是世界；下面的一切都是本套件的智能体，一行未改。
#
# ## 5. 裸 ReAct 对比 Ralph 循环
#
# 和笔记本 06 同样的基准测试：同样的 50 个任务，裸 ReAct 在每个任务上都从零开始，Ralph 循环从一个空记忆开始，任务之间相隔六个虚拟小时。`words=WORDS` 是循环对这个世界所知的全部；工具自带它们的角色。

# %%
bare_tasks, bare_tools = make_suite(50, seed=7)  # a fresh world for each agent
bare, _, _ = run_agent(BARE, bare_tasks, model, bare_tools, words=WORDS)
ralph_tasks, ralph_tools = make_suite(50, seed=7)
ralph, memory, results = run_agent(RALPH, ralph_tasks, model, ralph_tools, words=WORDS)
pd.DataFrame(windows(bare, "bare ReAct") + windows(ralph, "Ralph Loop")).set_index(["agent", "tasks"])

# %%
plot_learning_curve({lang.tr("bare ReAct", "裸 ReAct"): [r.calls for r in bare],
                     lang.tr("Ralph Loop", "Ralph 循环"): [r.calls for r in ralph]},
                    oracle=[t.oracle_calls for t in tasks])  # fmt: skip

# %% [markdown]
# What the loop learned speaks the library's words only: its rules name the desk's tools and statuses,
# per request type, and none names one hold.
#
# <!-- zh -->
# 循环学到的东西只用图书馆的词汇：它的规则点名的是服务台的工具和状态，按请求类型区分，没有一条点名某一个预约。

# %%
pd.DataFrame([{"type": e.task_type, "rule": e.rule, "status": e.status, "confirmations": e.confirmations}
              for e in memory.experiences.values()])  # fmt: skip

# %% [markdown]
# ## What changed
#
# A new domain took one set of words, four tools with their roles, a task generator with its truth, and
# the simulated model's habits as data: no line of the agent. The loop found the same kinds of lessons
# it found at the order desk (skip the double-check after the fast source found the record, leave a hold
# placed minutes ago alone, start a branch question with the catalogue) because they follow from the
# roles, not from the names.
#
# To bring your own: copy `ralph_mini/worlds/clinic/` (250 lines of code, three request types, one that
# writes under a written policy), rename, and run `python -m ralph_mini bench --world` on it after
# adding it to `bench.WORLDS`. With a real model, drop the habits: they only drive the simulated one.
#
# <!-- zh -->
# ## 有何变化
#
# 一个新领域只需要一套词汇、四个带角色的工具、一个带正确答案的任务生成器，以及以数据表示的模拟模型习惯：智能体一行都不用改。循环找到的经验，和它在订单服务台找到的是同一类（快速来源找到记录后跳过复查、别去管几分钟前才提交的预约、分馆问题从目录开始），因为这些经验来自角色，而不是名字。
#
# 要带来你自己的世界：复制 `ralph_mini/worlds/clinic/`（250 行代码，三种请求类型，其中一种会按成文的政策写入），改名，把它加进 `bench.WORLDS` 后，对它运行 `python -m ralph_mini bench --world`。换成真实模型时，去掉习惯：它们只驱动模拟模型。
