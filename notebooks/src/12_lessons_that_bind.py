# %% [markdown]
# # 12 · Lessons that bind: from advice in the prompt to a check at the tool boundary
#
# **What you will build:** a *guard*: a lesson turned into a check that the agent cannot talk its way
# past. Then you will measure what it costs, on every scenario of notebook 09.
#
# Until now a lesson reached the model as text in its prompt: a *soft* lesson. The offline model obeys
# that text by construction; notebook 08 showed that a real one may not (the tiny Gemma never
# followed *start with query_database*). It is the most common complaint about agent memory: the agent
# writes the lesson down and repeats the mistake. The fix users ask for is a *hard* lesson, a check
# where the agent acts:
#
# | rule form | the guard (`ralph_mini/guards.py`) |
# |---|---|
# | `skip T` | once the trigger held, a call to T is **refused**: the model gets an observation quoting the lesson |
# | `start with T` | the first step offers only T; a first call to anything else is refused, once |
# | `answer` | once the trigger held and a look-up succeeded, a further look-up is refused |
# | `call T` | once the trigger held, an answer before T was called is refused, once |
# | (every run) | an answer given before any look-up is refused, once |
#
# A refusal costs the model a turn, not a tool call: the tool never runs. `LoopConfig(enforce=...)`
# chooses `"prompt"` (the default: lessons as text), `"guard"` (lessons only as checks: the model never
# reads them) or `"both"`.
#
# <!-- zh -->
#
# # 12 · 有约束力的经验：从提示词里的建议到工具边界上的检查
#
# **你将构建什么：** 一个*护栏*（guard）：把一条经验变成智能体无法靠说辞绕过的检查。然后在笔记本 09 的每个场景上测量它的代价。
#
# 到目前为止，经验都是以提示词中的文字到达模型：一条*软*经验。离线模型按构造会服从这些文字；笔记本 08 表明，真实模型未必如此（小型 Gemma 从未遵循 *start with query_database*）。这是对智能体记忆最常见的抱怨：智能体把经验记了下来，却重犯同样的错误。用户想要的解决办法是一条*硬*经验，也就是在智能体行动的地方做检查：
#
# | 规则形式 | 护栏（`ralph_mini/guards.py`） |
# |---|---|
# | `skip T` | 一旦触发条件成立，对 T 的调用会被**拒绝**：模型得到一条引用该经验的观察结果 |
# | `start with T` | 第一步只提供 T；第一次调用其他任何工具会被拒绝，仅一次 |
# | `answer` | 一旦触发条件成立且有一次查询成功，之后的查询会被拒绝 |
# | `call T` | 一旦触发条件成立，在调用 T 之前给出的答案会被拒绝，仅一次 |
# | （每次运行） | 在任何查询之前给出的答案会被拒绝，仅一次 |
#
# 一次拒绝让模型花掉一个回合，而不是一次工具调用：工具根本不会运行。`LoopConfig(enforce=...)` 可以选择 `"prompt"`（默认：经验作为文字；表中记作“提示词”）、`"guard"`（经验只作为检查：模型从不读到它们；表中记作“护栏”）或 `"both"`（表中记作“提示词 + 护栏”）。

# %%
import pandas as pd

from ralph_mini import OfflineModel, grade, lang, run_react
from ralph_mini.adherence import adherence_of_runs, follow_rates
from ralph_mini.guards import Guard, binding
from ralph_mini.log import step_tags
from ralph_mini.prompt_lessons import LessonBudget
from ralph_mini.reflect import reflection_text
from ralph_mini.rules import parse_rule
from ralph_mini.votes import trigger_held
from ralph_mini.worlds import orders

LANGUAGE = lang.setup()
pd.set_option("display.max_colwidth", 100)
suite = orders.make_suite(n=50, seed=7, language=LANGUAGE)
tools, words = suite.world.tools(), orders.WORDS
model = OfflineModel(habits=orders.HABITS)
lesson = "when query_local_cache finds the order: skip query_database"
task = suite.tasks[0]  # A123: paid, in the cache


def steps_table(trace):
    return pd.DataFrame(
        [
            {"step": s.index, "tool": s.tool, "status": s.status, "observation": s.observation}
            for s in trace.steps
        ]
    ).set_index("step")


# %% [markdown]
# ## 1. The same lesson, soft and hard
#
# One task (order A123, in the cache), one lesson, three ways. `binding(enforce, ...)` gives
# `run_react` what each mode needs: a guard built from the run's lessons, and whether they also go in
# the prompt.
#
# <!-- zh -->
#
# ## 1. 同一条经验，软的与硬的
#
# 一个任务（订单 A123，在本地缓存中），一条经验，三种方式。`binding(enforce, ...)` 为 `run_react` 提供每种模式所需的东西：一个由本次运行的经验构建的护栏，以及这些经验是否也放进提示词。

# %%
traces = {}
for enforce in ("prompt", "guard", "both"):
    traces[enforce] = run_react(
        task, model, tools, lessons=[lesson], **binding(enforce, words, task.now, tools)
    )
    calls, turns = traces[enforce].tool_calls, traces[enforce].model_calls
    print(lang.tr(f"{enforce:>6}: {calls} tool call(s), {turns} model turns:",
                  f"{enforce:>6}: {calls} 次工具调用，{turns} 个模型回合:"),
          ", ".join(f"{s.tool} {s.status}" for s in traces[enforce].steps))  # fmt: skip
steps_table(traces["guard"])

# %% [markdown]
# In `"prompt"` mode the offline model reads the lesson and skips the database: one call. In `"guard"`
# mode it never reads it and keeps its habit, double-checking the cache hit: the guard refuses the
# database call and quotes the lesson, and the model answers from the cache. One tool call as well,
# but one model turn more. With `"both"` the model obeys the text and the guard has nothing to do.
#
# ## 2. A guard, from scratch
#
# The whole mechanism for the `skip` form is short. A rule's trigger holds once a step has shown what
# it waits for (`step_tags`: `query_local_cache:found`, `status:pending`...; notebook 04's votes read the
# same tags); a step the guard refused showed nothing. Then a call to a tool the rule skips is refused:
#
# <!-- zh -->
#
# 在 `"prompt"` 模式下，离线模型读到这条经验，跳过了数据库：一次调用。在 `"guard"` 模式下，它从不读到这条经验，保持自己的习惯，对缓存命中再做一次核对：护栏拒绝了数据库调用并引用该经验，模型于是根据缓存作答。同样是一次工具调用，但多了一个模型回合。在 `"both"` 模式下，模型服从文字，护栏无事可做。
#
# ## 2. 从零写一个护栏
#
# `skip` 形式的整个机制很短。一旦某一步显示了规则在等待的内容（`step_tags`：`query_local_cache:found`、`status:pending`……；笔记本 04 的投票读的也是这些标签），规则的触发条件就成立；被护栏拒绝的步骤什么也不显示。此后，对规则要跳过的工具的调用会被拒绝：


# %%
def refuse_skipped(rule_text, tool, steps, now):
    """A refusal for calling ``tool`` after ``steps``, if the rule skips it and its trigger held."""
    rule = parse_rule(rule_text)
    seen = {"any"}
    for step in steps:
        if step.status != "refused":
            seen |= step_tags(step, words, now)
    skipped = {action.tool for action in rule.actions if action.verb == "skip"}
    if tool in skipped and trigger_held(rule, seen):
        return f"refused: the lesson '{rule}' says skip {tool}"
    return None


# %% [markdown]
# Checked against the package's `Guard` on every call of every naive run of the 50-task suite (the
# offline model with no lessons: it double-checks, asks the provider, tries look-alike tools), with
# the four lessons notebook 06 learned:
#
# <!-- zh -->
#
# 在 50 个任务的任务集上，对每次朴素运行（离线模型不带任何经验：它会二次核对、询问支付服务商、尝试名字相似的工具）的每次调用，都用笔记本 06 学到的四条经验与包里的 `Guard` 对照检查：

# %%
lessons06 = [
    "when query_local_cache finds the order: skip query_database",
    "when status is pending and age under 30 min: skip query_payment_api",
    "when any task: start with query_local_cache",
    "when query_database finds nothing: skip query_payment_api",
]
naive = [run_react(t, model, tools) for t in suite.tasks]
compared = agreed = refused = 0
for trace in naive:
    skip_only = Guard.of([x for x in lessons06 if " skip " in x], words, trace.task.now, tools)
    for n, step in enumerate(trace.steps):
        ours = [
            refuse_skipped(x, step.tool, trace.steps[:n], trace.task.now) for x in lessons06 if " skip " in x
        ]
        theirs = skip_only.check_call(step.tool, trace.steps[:n])
        compared += 1
        agreed += (next((r for r in ours if r), None) is None) == (theirs is None)
        refused += theirs is not None
print(lang.tr(f"{compared} calls checked, {refused} refused by the package's guard; the two agree on {agreed}",
              f"检查了 {compared} 次调用，包里的护栏拒绝了 {refused} 次；两者在 {agreed} 次上一致"))  # fmt: skip

# %% [markdown]
# The package's version (`guards.Guard`) adds the other forms of the table above, the refusal of an
# answer given blind, and the first turn's narrowing; `react.run_react(guard=...)` asks it before each
# call and each answer, and logs what it refused as a step with status `refused`. Read `guards.py`
# next to this notebook; the exercise `exercises/build_your_own/ex11_guard.ipynb` has you write the
# `skip` and `answer` forms yourself.
#
# ## 3. What a guard refused, the loop sees
#
# A refused step is in the trace and in the log like any other, so the reflector and the votes see it.
# The log line of the refusal in section 1:
#
# <!-- zh -->
#
# 包里的版本（`guards.Guard`）加上了上表中的其他形式、对盲答的拒绝，以及第一轮的工具收窄；`react.run_react(guard=...)` 在每次调用和每个答案之前询问它，并把它拒绝的内容记录为一个状态为 `refused` 的步骤。请对照本笔记本阅读 `guards.py`；练习 `exercises/build_your_own/ex11_guard.ipynb`（中文版在 `exercises/zh/` 下）让你自己写出 `skip` 和 `answer` 两种形式。
#
# ## 3. 护栏拒绝了什么，循环都看得到
#
# 被拒绝的步骤和其他步骤一样出现在轨迹和日志中，所以反思器和投票都能看到它。第 1 节中那次拒绝的日志行：

# %%
print(
    next(
        line
        for line in reflection_text(traces["guard"], "R001", correct=True).splitlines()
        if "refused" in line
    )
)

# %% [markdown]
# A guard is only as good as its lesson. When the world changes and the lesson goes stale, the guard
# refuses the call the run needed, as firmly as it refused a wasted one before. The votes of notebook 04
# treat a refused call as *withheld*: a wrong answer after it counts against the rule, and the rule,
# once voted out or invalidated, leaves the next run's lessons, and its guard with them (guards are
# built per run from the lessons the run carries).
#
# ## 4. Is a lesson followed? Measure it
#
# `adherence(trace, lessons, ...)` checks, for every lesson whose trigger held in a run, whether the run
# did what it says (*skip T*: T not called after the trigger; *start with T*: the first call is T;
# *call T*: T called; *answer*: no further look-up). Over the suite, with the four lessons, per mode:
#
# <!-- zh -->
#
# 护栏的好坏取决于它的经验。当世界发生变化、经验变得过时，护栏会拒绝运行所需要的调用，就像它先前拒绝一次浪费的调用那样坚决。笔记本 04 的投票把被拒绝的调用视为*被扣下*（withheld）：之后出现的错误答案会计为对这条规则不利的证据；规则一旦被投票淘汰或失效，就会离开下一次运行的经验，它的护栏也随之离开（护栏按每次运行、根据该运行携带的经验构建）。
#
# ## 4. 经验被遵循了吗？测量它
#
# `adherence(trace, lessons, ...)` 对一次运行中触发条件成立的每条经验，检查这次运行是否做了经验所说的事（*skip T*：触发之后没有调用 T；*start with T*：第一次调用是 T；*call T*：调用了 T；*answer*：没有进一步的查询）。在整个任务集上，使用这四条经验，按模式统计：

# %%
budget = LessonBudget(max_lessons=4)  # all four lessons in every run (the default carries three)
rows = []
for enforce in ("prompt", "guard", "both"):
    runs = [run_react(t, model, tools, lessons=lessons06, budget=budget, **binding(enforce, words, t.now, tools))
            for t in suite.tasks]  # fmt: skip
    [followed] = follow_rates(adherence_of_runs(((r, lessons06) for r in runs), words, tools))[-1:]
    rows.append({
        "mode": enforce,
        "correct": f"{sum(grade(r.task, r.answer).correct for r in runs)}/{len(runs)}",
        "tool calls/task": round(sum(r.tool_calls for r in runs) / len(runs), 2),
        "model turns/task": round(sum(r.model_calls for r in runs) / len(runs), 2),
        "refusals": sum(s.status == "refused" for r in runs for s in r.steps),
        **{k: v for k, v in followed.items() if k != "rule form"},
    })  # fmt: skip
pd.DataFrame(rows).set_index("mode")

# %% [markdown]
# All three modes make the same tool calls, answer the same, and follow every lesson whose trigger held.
# What differs is where the following comes from. In `"prompt"` the model reads the lessons and obeys
# them. In `"guard"` it never reads them and keeps its habits, and the guard turns each habit back at the
# boundary: every refusal is one more model turn (and its tokens), with no tool call. With `"both"`,
# the model obeys the text and the guard never has to act. On the offline model a guard adds nothing
# but turns, because this model obeys what it reads by construction. Guards are for a model that does
# not: notebook 08 runs them on the tiny Gemma.
#
# ## 5. What enforcing costs, on every scenario
#
# `python -m ralph_mini bench --enforce all` runs bare ReAct and the full Ralph Loop in each mode
# through every scenario of notebook 09 (model seed 0). *Refusals* count the steps a guard turned back,
# in every run of every task; *lessons followed* is the follow rate of section 4; *tasks to recover* is,
# for each change of the world, how many tasks after it came before the first from which every task is
# right within 1.2x the oracle's calls ("never": the last one is not).
#
# <!-- zh -->
#
# 三种模式做出相同的工具调用，给出相同的答案，并且遵循了每条触发条件成立的经验。不同之处在于遵循从何而来。在 `"prompt"` 中，模型读到经验并服从它们。在 `"guard"` 中，模型从不读到它们，保持自己的习惯，护栏在边界上把每个习惯挡回去：每次拒绝都多一个模型回合（以及它的 token），却没有工具调用。在 `"both"` 中，模型服从文字，护栏从不需要出手。在离线模型上，护栏除了增加回合之外什么也没带来，因为这个模型按构造会服从它读到的内容。护栏是为不服从的模型准备的：笔记本 08 在小型 Gemma 上运行了它们。
#
# ## 5. 强制执行的代价，在每个场景上
#
# `python -m ralph_mini bench --enforce all` 让裸 ReAct 和完整的 Ralph 循环以每种模式跑遍笔记本 09 的每个场景（模型种子 0）。*拒绝次数*统计被护栏退回的步骤，计入每个任务的每次运行；*经验遵循率*是第 4 节的遵循率；*恢复所需任务数*的含义是：对世界的每次变化，变化之后要经过多少个任务，才到达这样一个任务：从它开始，每个任务都以不超过 oracle（理想策略）1.2 倍的调用次数答对（“never”：到最后一个任务也没有做到）。

# %%
from ralph_mini.enforce_bench import cost_table, mode_arms, run_modes
from ralph_mini.widgets import progress

runs = run_modes(progress=progress)  # 28 runs in two worker processes; kept for the timeline below
table = pd.DataFrame(cost_table(runs)).set_index(["scenario", "agent"])
table

# %% [markdown]
# How to read it, mode by mode:
#
# - **both** answers as `"prompt"` does on all seven scenarios, within 0.02 calls a task, with at
#   most three refusals. The offline model does what it reads, so the guard catches only what the text
#   does not cover, such as an answer given before any look-up.
# - **guard** alone, with a model that never reads the lessons, makes the same calls on static and
#   threshold and loses correct answers on five of the six scenarios that change, for 25 to 44
#   refusals each. A guard can refuse but cannot act. A *call T* lesson can only send an answer back
#   once, and a model that never read it answers the same way again. A *start with T* lesson offers a
#   tool that the model's habits do not take before it has found the record. Its "follow rate" is the
#   share of lessons the guard could hold it to (83% to 100%).
# - **Recovery.** A guard enforces a stale rule as firmly as a good one. After the last change in drift,
#   and after the cache goes stale in stale, guard-only never settles. The timeline of the cache
#   shortcut in stale shows why:
#
# <!-- zh -->
#
# 逐个模式来解读：
#
# - **both**（提示词 + 护栏）在全部七个场景上的答题结果与 `"prompt"` 相同，每任务调用次数相差不超过 0.02，拒绝最多三次。离线模型照它读到的去做，所以护栏只捕捉文字没有涵盖的情况，比如在任何查询之前给出的答案。
# - 单独的 **guard**（护栏），配上一个从不读取经验的模型，在 static（静态）和 threshold（阈值）上调用相同，而在六个会变化的场景中有五个丢掉了正确答案，每个场景拒绝 25 到 44 次。护栏能拒绝，却不能行动。一条 *call T* 经验只能把答案退回一次，而从没读过它的模型会以同样的方式再答一次。一条 *start with T* 经验提供了一个工具，可模型的习惯在找到记录之前不会去用它。它的“遵循率”是护栏能约束它遵守的经验所占的比例（83% 到 100%）。
# - **恢复。** 护栏执行一条过时的规则，和执行一条好规则一样坚决。在 drift（漂移）的最后一次变化之后，以及在 stale（过时）中本地缓存变得过时之后，只用护栏的模式始终没有稳定下来。stale 中缓存捷径的时间线说明了原因：

# %%
shortcut = "when query_local_cache finds the order: skip query_database"
timeline = []
for arm in mode_arms()[1:]:
    run = runs[("stale", arm.name)]  # the run the table above made
    for number, result in enumerate(run.results, 1):
        for note in result.memory_notes:
            what = note.split(":")[0]
            if shortcut in note and number > 20 and what in ("invalidated", "written"):
                timeline.append(
                    {"mode": arm.name, "task": number, "memory": what, "run correct": result.correct}
                )
pd.DataFrame(timeline).set_index(["mode", "task"])

# %% [markdown]
# In every mode the shortcut goes at task 25, voted out by the first wrong answer it could have caused
# (the cache now shows a refunded order as paid). In `"prompt"` and `"both"` it stays out. In `"guard"`
# it comes back: the model never read it, so it kept double-checking the cache, and every double-check
# where the cache happened to be right confirmed the shortcut again. It was written back two tasks
# later, and the guard refused the database on the next refunded order. The mechanism that unlearns is
# the same in every mode; what differs is the evidence the model's habits keep feeding it.
#
# ## 6. Turning a lesson into a check, for your own agent
#
# 1. **Give lessons a grammar.** A check needs to know what a lesson forbids and when; free text cannot
#    be enforced. The kit's micro-prompt grammar (`rules.py`) is one; any fixed set of forms will do.
# 2. **Check where the agent acts**: before a tool runs and before an answer is accepted. Refuse with an
#    observation that quotes the lesson, so the model (and a person reading the log) knows why.
# 3. **Refuse; do not act for the model.** A guard can stop a call or an answer; it cannot make the
#    model call a tool (a `call T` lesson can only send an answer back once).
# 4. **Build the checks from the lessons each run carries**, so a lesson voted out or invalidated stops
#    binding at once, and log every refusal where your reflection and your votes can see it.
# 5. **Measure both sides**: the follow rate tells whether you need guards at all; the refusals and the
#    recovery after a change tell what they cost.
#
# ## What changed
#
# - A lesson can bind in two ways: as text the model may follow (soft), or as a check at the tool
#   boundary (hard: `LoopConfig(enforce="guard" | "both")`). A guard refuses with the lesson's words,
#   costs a model turn and no tool call, and lifts when its lesson is voted out.
# - Whether you need guards is a measurement: the follow rate. The offline model's is 100% when its
#   lessons agree, so on it guards change nothing but turns. Notebook 08 measures the tiny Gemma.
# - Guards alone cannot make a model act, and they enforce a stale lesson as firmly as a good one. Use
#   them with the prompt (`"both"`), which answered as well as `"prompt"` on every scenario here.
#
# <!-- zh -->
#
# 在每种模式下，这条捷径都在任务 25 被移除：它可能导致的第一个错误答案就把它投票淘汰了（本地缓存现在把一个已退款的订单显示为已支付）。在 `"prompt"` 和 `"both"` 中，它没有再回来。在 `"guard"` 中它回来了：模型从没读过它，所以一直对缓存做二次核对，而每一次缓存恰好正确的二次核对，都再次确认了这条捷径。两个任务之后它又被写回，护栏在下一个已退款的订单上拒绝了数据库。负责“忘掉”的机制在每种模式下都一样；不同的是模型的习惯不断喂给它的证据。
#
# ## 6. 为你自己的智能体把经验变成检查
#
# 1. **给经验一套语法。** 检查需要知道一条经验禁止什么、何时禁止；自由文本无法强制执行。本套件的微提示（micro-prompt）语法（`rules.py`）就是一种；任何固定的一组形式都可以。
# 2. **在智能体行动的地方检查**：在工具运行之前，以及在答案被接受之前。拒绝时返回一条引用该经验的观察结果，让模型（以及阅读日志的人）知道原因。
# 3. **只拒绝，不替模型行动。** 护栏可以阻止一次调用或一个答案；它不能让模型去调用某个工具（一条 `call T` 经验只能把答案退回一次）。
# 4. **根据每次运行携带的经验构建检查**，这样被投票淘汰或失效的经验会立即停止约束；并把每次拒绝记录在你的反思和投票看得到的地方。
# 5. **两方面都要测量**：遵循率告诉你是否需要护栏；拒绝次数和变化之后的恢复情况告诉你护栏的代价。
#
# ## 改变了什么
#
# - 一条经验可以用两种方式起约束作用：作为模型可能遵循的文字（软），或者作为工具边界上的检查（硬：`LoopConfig(enforce="guard" | "both")`）。护栏用经验的原话拒绝，花费一个模型回合而不花费工具调用，并在它的经验被投票淘汰时解除。
# - 是否需要护栏，要靠测量：看遵循率。离线模型在经验彼此一致时遵循率为 100%，所以在它身上，护栏除了回合数什么也不改变。笔记本 08 测量了小型 Gemma。
# - 单靠护栏无法让模型行动，而且它执行过时经验和执行好经验一样坚决。把护栏和提示词一起使用（`"both"`），在这里的每个场景上，它的答题结果都和 `"prompt"` 一样好。

# %%
table.loc[
    [
        (s, a)
        for s in ("drift", "stale")
        for a in ("Ralph Loop, prompt", "Ralph Loop, guard", "Ralph Loop, both")
    ],
    ["correct", "calls/task", "refusals", "lessons followed", "tasks to recover"],
]
