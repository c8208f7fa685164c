# %% [markdown]
# # 10 · Where the name comes from: the outer Ralph loop
#
# **What you will build:** the *other* Ralph loop, the one people find first when they search for the
# name, run on the order desk, with four stops its users wish it had. Then you will put it side by
# side with the in-process Ralph Loop of notebook 06, on the same tasks.
#
# The name comes from Geoffrey Huntley, "Ralph Wiggum as a software engineer" (2025,
# [ghuntley.com/ralph](https://ghuntley.com/ralph)). His technique is one line of shell:
#
# ```bash
# while :; do cat PROMPT.md | agent; done
# ```
#
# Every pass starts a coding agent from a **fresh context** with the **same prompt file**. Nothing
# survives a pass except the files the agent wrote: its notes, its plan, the code. The kit's source
# article builds a different loop under the same name: it reflects on each run and remembers short
# lessons, *inside* one process, around ReAct (notebooks 03 to 06). Same idea at the core, lessons
# kept outside the model's context, but two different machines:
#
# | | in-process Ralph Loop (notebook 06) | outer loop (this notebook) |
# |---|---|---|
# | one run is | one task | one pass over the whole task file |
# | what carries over | the `Memory` object: lessons, candidates, counts, votes, its clock | the notes file, and only what was written into it |
# | who decides to stop | the task list ends | the harness: nothing, in a shell loop |
#
# Users of outer-loop tools report the same failures again and again: loops that do not stop, or run
# far past their cap; a completion phrase that is missed or typed before the work is done; runaway cost.
# So the kit's version, `ralph_mini/outer.py`, has four stops, each a small named function, checked
# after every pass. This notebook fires each one on a task set built to need it.
#
# <!-- zh -->
#
# # 10 · 名字的由来：外层的 Ralph 循环
#
# **你将构建什么：** *另一个* Ralph 循环，也就是人们搜索这个名字时最先找到的那个，让它在订单服务台上运行，并加上它的用户希望它有的四种停止条件。然后你会把它与第 06 本笔记本中进程内的 Ralph 循环并排比较，用的是同样的任务。
#
# 这个名字来自 Geoffrey Huntley 的《Ralph Wiggum as a software engineer》（2025，[ghuntley.com/ralph](https://ghuntley.com/ralph)）。他的技术只有一行 shell：
#
# ```bash
# while :; do cat PROMPT.md | agent; done
# ```
#
# 每一轮都从一个**全新的上下文**、用**同一个提示词文件**启动一个编程智能体。除了智能体写下的文件（它的笔记、它的计划、代码），没有任何东西能活过一轮。本套件所依据的源文章在同一个名字下构建了一个不同的循环：它在 ReAct 外面、在*同一个*进程之内，对每次运行进行反思并记住简短的经验（第 03 到 06 本笔记本）。核心思想相同——经验保存在模型的上下文之外——但这是两台不同的机器：
#
# | | 进程内 Ralph 循环（第 06 本笔记本） | 外循环（本笔记本） |
# |---|---|---|
# | 一次运行是 | 一个任务 | 对整个任务文件的一轮 |
# | 什么会延续下去 | `Memory` 对象：经验、候选、计数、投票、它的时钟 | 笔记文件，而且只有写进去的东西 |
# | 由谁决定停止 | 任务列表结束 | 外层框架：在 shell 循环里，没有谁 |
#
# 外循环工具的用户一再报告同样的失败：循环停不下来，或者远远超出上限；完成短语被漏掉，或者在工作完成之前就被打了出来；成本失控。所以本套件的版本 `ralph_mini/outer.py` 有四种停止条件，每种都是一个有名字的小函数，在每一轮之后检查。本笔记本在专门为它构造的任务集上，逐一触发每种停止条件。

# %%
import inspect
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd

from ralph_mini import lang, model_from_env, run_react
from ralph_mini.bench import RALPH, Agent, run_agent
from ralph_mini.loop import LoopConfig
from ralph_mini.model import ModelReply
from ralph_mini.outer import OuterConfig, decide, pick_tasks, run_outer, side_by_side, write_task_file
from ralph_mini.worlds import orders

LANGUAGE = lang.setup()  # "zh" in notebooks/zh/: tables, labels and questions in Chinese
model = model_from_env(habits=orders.HABITS)
suite = orders.make_suite(n=50, seed=7, language=LANGUAGE)
tools, words = suite.world.tools(), orders.WORDS
workdir = Path(tempfile.mkdtemp(prefix="outer_"))  # the task and notes files of this notebook
pd.set_option("display.max_colwidth", 90)

# %% [markdown]
# ## The loop
#
# Here it is. The `for` over a `range` is the shell's `while :`, with the cap built in; each pass
# re-reads the task file and the notes, runs the Ralph Loop over the tasks from a **fresh memory**
# holding only the notes' lessons, writes the lessons back, and yields one record.
#
# <!-- zh -->
#
# ## 循环
#
# 就是它。对 `range` 的 `for` 就是 shell 的 `while :`，只是内置了上限；每一轮重新读取任务文件和笔记，从一个只装着笔记中经验的**全新记忆**出发，对这些任务运行 Ralph 循环，把经验写回去，并产出一条记录。

# %%
print(inspect.getsource(run_outer))

# %% [markdown]
# The stops are checked in this order, first match wins. None of them reads what the model wrote:
#
# <!-- zh -->
#
# 停止条件按这个顺序检查，第一个匹配的生效。没有一个会去读模型写了什么：

# %%
print(inspect.getsource(decide))

# %% [markdown]
# Their settings, each with the reason for its default:
#
# <!-- zh -->
#
# 它们的设置，每个默认值都附有理由：

# %%
print(inspect.getsource(OuterConfig))

# %% [markdown]
# ## The two files
#
# The task file is the loop's `PROMPT.md`: one task per line. We start with two orders of every kind
# (the first two of each in the suite), twelve tasks.
#
# <!-- zh -->
#
# ## 两个文件
#
# 任务文件就是这个循环的 `PROMPT.md`：每行一个任务。我们从每种订单各取两个开始（套件中每种的前两个），共十二个任务。
#
# 在中文版中，问题用中文提出（同样的订单、同样的正确答案；中文问法见 `ralph_mini/worlds/orders/words.py`）。


# %%
def fresh(name: str, tasks) -> tuple[Path, Path]:
    """A task file for ``tasks`` and an empty notes file, in their own folder."""
    folder = workdir / name
    folder.mkdir()
    write_task_file(folder / "TASKS.md", tasks)
    return folder / "TASKS.md", folder / "NOTES.md"


def passes_table(passes) -> pd.DataFrame:
    return (
        pd.DataFrame(
            {
                "calls": p.calls,
                "correct": f"{p.correct}/{p.tasks}",
                "clean": f"{p.clean}/{p.tasks}",
                "lessons added": len(p.lessons_added),
                "in notes": len(p.lessons),
                "tokens": p.tokens,
                "virtual s": p.virtual_s,
                "decision": p.decision(),
            }
            for p in passes
        )
        .rename_axis("pass")
        .rename(index=lambda i: i + 1)
    )


two_per_kind = pick_tasks(suite.tasks, 0, per_kind=2)
task_file, notes_file = fresh("done", two_per_kind)
print(task_file.read_text())

# %% [markdown]
# ## Stop 1: done, when the grader and a validator say so
#
# "Done" is not a word the model says. It is a check on the work: the grader accepts every answer,
# and `quick_review` (notebook 03) finds no wrong and no redundant call in any run. A task that passes
# both is *clean*.
#
# <!-- zh -->
#
# ## 停止条件 1：完成（done），由评分器和验证器说了算
#
# "完成" 不是模型说出来的一个词，而是对工作的一项检查：评分器接受每一个答案，并且 `quick_review`（第 03 本笔记本）在任何一次运行中都找不到错误调用或多余调用。两项都通过的任务就是*干净的*（clean）。

# %%
done = list(run_outer(task_file, notes_file, suite.tasks, model, tools, words=words))
passes_table(done)

# %% [markdown]
# Pass 1 is exactly the Ralph Loop of notebook 06 from an empty memory: it answers all twelve
# correctly, wastes calls on three of them, and learns four lessons as it goes. Pass 2 starts from a
# fresh context with those four lessons in the notes, and every run is clean: the check says done,
# and the loop stops. This is what the notes file holds now:
#
# <!-- zh -->
#
# 第 1 轮正是第 06 本笔记本中从空记忆开始的 Ralph 循环：十二个任务全部答对，其中三个浪费了调用，并在过程中学到四条经验。第 2 轮从全新的上下文开始，笔记里有这四条经验，但只有十个任务是干净的，所以完成检查没有通过；这一轮的答案和笔记都与第 1 轮相同，也没有新经验，于是无进展停止（停止条件 3，见下文）结束了循环。
#
# 这里中文版与英文版不同。两个版本的第 1 轮学到的是同样的四条经验；用英文提问时，第 2 轮十二个任务全部干净，检查判定完成，循环停止。用中文提问时，第 2 轮在两个新的 pending 订单（T002、T009）上不干净：检索按问题的措辞给经验排序，对这两个中文问题，"when query_database finds nothing: skip query_payment_api" 排在了 "when query_local_cache finds the order: skip query_database" 前面，后者没能进入提示词的三个名额，智能体就多查了一次数据库。完成检查看的是工作本身，所以它没有放行；下文的命令行运行用的是英文问题，在那里可以看到完成停止生效。笔记文件现在的内容是：

# %%
print(notes_file.read_text())

# %% [markdown]
# Only the rules enter a prompt (and at most three of them, within the one lesson budget, notebooks 05
# and 06); the log of passes is for you. The file grows by one line a pass; the context does not.
#
# ## Stop 2: a completion phrase does not count
#
# Outer-loop tools often stop when the model types a phrase, such as `DONE` or
# `<promise>COMPLETE</promise>`. A model can type it before the work is done. Here is one that does
# nothing else: it claims completion at once, with a guess, and calls no tool. (Asked to reflect, it
# behaves like the offline model.)
#
# <!-- zh -->
#
# 只有规则会进入提示词（而且至多三条，在同一个经验预算之内，见第 05 和 06 本笔记本）；各轮的日志是给你看的。文件每轮增加一行；上下文不会增长。
#
# ## 停止条件 2：完成短语不算数
#
# 外循环工具常常在模型打出某个短语时停止，比如 `DONE` 或 `<promise>COMPLETE</promise>`。模型可能在工作完成之前就打出它。下面这个模型除此之外什么都不做：它立刻宣布完成，给出一个猜测，不调用任何工具。（被要求反思时，它的行为和离线模型一样。）


# %%
class Boaster:
    """Says it is done, calls no tool, guesses "paid". Stateless, like every model in the kit."""

    def complete(self, messages: list[dict], tools: list[dict]) -> ModelReply:
        if not tools:
            return model.complete(messages, tools)
        return ModelReply('DONE <promise>COMPLETE</promise>\nFinal answer: {"status": "paid"}')


boast = run_react(two_per_kind[0], Boaster(), tools)
print(boast.final_text, "|", lang.tr("tool calls:", "工具调用:"), boast.tool_calls)

# %% [markdown]
# A phrase check would have stopped after the very first task. The outer loop never reads the text;
# it asks the grader and the validator:
#
# <!-- zh -->
#
# 短语检查在第一个任务之后就会停下来。外循环从不读这段文字；它问的是评分器和验证器：

# %%
task_file, notes_file = fresh("phrase", two_per_kind)
boasted = list(run_outer(task_file, notes_file, suite.tasks, Boaster(), tools, words=words))
passes_table(boasted)

# %% [markdown]
# Twelve claims of completion per pass, no correct answer, so not done. The grader's rejections and the
# answers given without a look-up start reflections (notebook 06), so pass 1 does write a lesson into
# the notes; but this model reads no lesson, pass 2 gives the same answers and adds nothing, and the
# next stop ends it.
#
# ## Stop 3: no progress
#
# A pass that gives the same answers as the pass before, leaves the notes as they were and adds no
# lesson has taught the loop nothing, and with a deterministic model the next pass would be the same
# pass again. The clearest case is an agent that cannot learn: the Ralph Loop with its reflector
# switched off (notebook 06's "no reflector" ablation), on the first eight tasks of the suite.
#
# <!-- zh -->
#
# 每轮十二次宣布完成，没有一个正确答案，所以没有完成。评分器的拒绝和没有查询就给出的答案会引发反思（第 06 本笔记本），所以第 1 轮确实往笔记里写了一条经验；但这个模型不读任何经验，第 2 轮给出同样的答案，什么也没有增加，下一个停止条件结束了它。
#
# ## 停止条件 3：没有进展
#
# 如果一轮给出的答案与上一轮相同，笔记原封不动，也没有新增经验，那么它什么也没教给循环；而对一个确定性的模型来说，下一轮只会是同一轮的重演。最清楚的例子是一个不会学习的智能体：关掉反思器的 Ralph 循环（第 06 本笔记本的 "no reflector" 消融），在套件的前八个任务上运行。

# %%
never_learns = Agent("no reflector", loop=LoopConfig(reflect=False))
task_file, notes_file = fresh("never_learns", suite.tasks[:8])
stuck = list(run_outer(task_file, notes_file, suite.tasks, model, tools, words=words, agent=never_learns))
passes_table(stuck)

# %% [markdown]
# The full Ralph Loop on the same eight tasks learns, and still stops here, one task short:
#
# <!-- zh -->
#
# 在同样的八个任务上，完整的 Ralph 循环会学习，但还是在这里停下，差一个任务：

# %%
task_file, notes_file = fresh("first_eight", suite.tasks[:8])
short = list(run_outer(task_file, notes_file, suite.tasks, model, tools, words=words))
passes_table(short)

# %% [markdown]
# Why one task short: T002 is the only *fresh* pending order among the eight, and its lesson
# ("when status is pending and age under 30 min: skip query_payment_api") is proposed once. On
# probation (notebook 04) memory injects it at once, but it becomes a lesson only when a later run
# where it applies validates it, and no later task among the eight is a fresh pending order. The notes
# carry lessons, not rules on probation, so each pass proposes it again from nothing. Running the same
# task again is no validation either, and rightly so: it is the same evidence twice. The in-process
# loop over the whole suite validates it at the second fresh pending order; the outer loop only ever
# sees this file.
#
# ## Stop 4: the cap
#
# Now a task set that cannot be solved: three stale pending orders, with the payment provider (the
# only source of their true status) withheld from the agent. Every answer says "pending" and is
# wrong. Watch the notes:
#
# <!-- zh -->
#
# 为什么差一个任务：T002 是这八个任务中唯一一个*新的* pending 订单，它的经验（"when status is pending and age under 30 min: skip query_payment_api"）只被提出过一次。处于试用期时（第 04 本笔记本），记忆会立即注入它，但只有当后面某次适用它的运行验证了它，它才会成为一条经验，而这八个任务中后面再没有新的 pending 订单。笔记记录的是经验，不是试用期的规则，所以每一轮都从零开始重新提出它。把同一个任务再跑一遍也不算验证，这是对的：那只是同样的证据出现两次。对整个套件运行的进程内循环，会在第二个新的 pending 订单上验证它；外循环永远只看得到这个文件。
#
# ## 停止条件 4：上限
#
# 现在换一个无法解决的任务集：三个过时的 pending 订单，而支付服务商（它们真实状态的唯一来源）对智能体不可用。每个答案都说 "pending"，而且都是错的。注意看笔记：

# %%
stale = [t for t in suite.tasks if t.kind == "pending_stale"][:3]
no_provider = [t for t in tools if t.name != "query_payment_api"]


def notes_table(passes):
    """The passes table, with the notes each pass ended with."""
    notes = [", ".join(p.lessons) or "-" for p in passes]
    return passes_table(passes).join(pd.Series(notes, index=range(1, len(passes) + 1), name="notes"))


task_file, notes_file = fresh("unsolvable", stale)
unsolved = list(run_outer(task_file, notes_file, suite.tasks, model, no_provider, words=words))
notes_table(unsolved)

# %% [markdown]
# Pass 1 learns "start with the database", the source that holds every order (the grader rejected
# answers read from a partial source, so the lesson is written at once, notebook 04). It is kept: a
# rule that only adds a look-up cannot have made the answer wrong,
# so the wrong answers do not vote it out. Pass 2 gives the same answers with the same notes, and the
# no-progress stop ends it. The cap did not have to fire.
#
# It is still needed. A loop that *changes* without making progress (a lesson learned, voted out,
# learned again, every other pass) slips past a check that compares each pass with the one before;
# so does a model that words its answers differently each time. The cap is the backstop for
# everything the other stops miss: `OuterConfig.max_passes` = 5 passes. It is the one stop that needs
# no judgement, which is why it is the `range` itself and not a check a bug could skip. With the
# no-progress stop switched off (`--keep-going` on the command line), the same set runs to it:
#
# <!-- zh -->
#
# 第 1 轮学到 "start with the database"，即持有每个订单的那个数据源（评分器拒绝了从不完整数据源读出的答案，所以这条经验立即写入，见第 04 本笔记本）。它被保留下来：一条只是多加一次查询的规则，不可能是答案出错的原因，所以错误答案不会把它投出去。第 2 轮用同样的笔记给出同样的答案，无进展停止结束了它。上限不必触发。
#
# 但上限仍然是必需的。一个*在变化*却没有进展的循环（一条经验学到、被投掉、再学到，每隔一轮一次）能溜过一个只比较相邻两轮的检查；一个每次换种说法给出答案的模型也一样。上限是兜底，接住其他停止条件漏掉的一切：`OuterConfig.max_passes` = 5 轮。它是唯一一个不需要判断的停止条件，这就是为什么它就是 `range` 本身，而不是一个可能被 bug 跳过的检查。把无进展停止关掉（命令行上的 `--keep-going`），同一个任务集就会一直跑到上限：

# %%
task_file, notes_file = fresh("capped", stale)
capped = list(
    run_outer(
        task_file,
        notes_file,
        suite.tasks,
        model,
        no_provider,
        words=words,
        config=OuterConfig(stop_on_no_progress=False),
    )
)
notes_table(capped)

# %% [markdown]
# ## The budget: tokens and virtual seconds
#
# Each pass re-runs every task, so cost grows with every pass. The budget stops the loop before a
# pass it cannot pay for: when what is spent plus one more pass like the last would go over. Here the
# done task set again, with 60,000 tokens, then with 200 virtual seconds:
#
# <!-- zh -->
#
# ## 预算：token 和虚拟秒数
#
# 每一轮都要把每个任务重跑一遍，所以成本随轮数增长。预算会在循环付不起下一轮之前把它停下：当已花费的加上再来一轮（像上一轮那样）会超出预算时。这里再次使用停止条件 1 那一节的任务集，先给 60,000 个 token，再给 200 虚拟秒：

# %%
budget_rows = []
for budget in ({"max_tokens": 60_000}, {"max_virtual_s": 200.0}):
    task_file, notes_file = fresh(f"budget_{next(iter(budget))}", two_per_kind)
    spent = list(
        run_outer(task_file, notes_file, suite.tasks, model, tools, words=words, config=OuterConfig(**budget))
    )
    budget_rows += [{"budget": str(budget), "passes": len(spent), "decision": spent[-1].decision()}]
pd.DataFrame(budget_rows)

# %% [markdown]
# The first pass always runs (there is no estimate before it), so a budget smaller than one pass is
# overshot by that pass. Passes get cheaper as lessons accrue, so "one more pass like the last" errs
# on the safe side.
#
# ## From the command line
#
# `python -m ralph_mini outer` runs the same loop offline and prints one line per pass, then the cost
# next to the in-process loop. It writes `runs/outer/TASKS.md` and `runs/outer/NOTES.md` under the
# folder it runs in (here, this notebook's temporary folder).
#
# <!-- zh -->
#
# 第一轮总是会运行（在它之前没有任何估计），所以比一轮还小的预算会被这一轮超出。随着经验积累，每一轮会变得更便宜，所以 "再来一轮像上一轮那样" 的估计是偏保守的。
#
# ## 从命令行运行
#
# `python -m ralph_mini outer` 离线运行同一个循环，每轮打印一行，然后打印与进程内循环的成本对比。它会在运行所在的文件夹下写入 `runs/outer/TASKS.md` 和 `runs/outer/NOTES.md`（在这里，就是本笔记本的临时文件夹）。
#
# 命令行不读笔记本的版本语言：它总是用英文提问，输出也是英文。因此它的数字是英文版的，正好可以看到上面中文版没有出现的情形：第 2 轮全部干净，完成停止生效。

# %%
cli = subprocess.run(
    [sys.executable, "-m", "ralph_mini", "outer", "--per-kind", "2"],
    capture_output=True,
    text=True,
    cwd=workdir,
    timeout=300,
)
print(cli.stdout or cli.stderr)

# %% [markdown]
# ## Side by side with the in-process Ralph Loop
#
# The same tasks, the same offline model, the same tools, the same agent configuration (`RALPH`):
# once as notebook 06 runs it, each task once with the memory kept in the process, and once as the
# outer loop, pass after pass until a stop fires.
#
# <!-- zh -->
#
# ## 与进程内 Ralph 循环并排比较
#
# 同样的任务、同样的离线模型、同样的工具、同样的智能体配置（`RALPH`）：一次按第 06 本笔记本的方式运行，每个任务跑一次，记忆保存在进程中；一次作为外循环，一轮接一轮，直到某个停止条件触发。

# %%
scenarios = {
    "two per kind": (two_per_kind, tools, done),
    "T001-T008": (suite.tasks[:8], tools, short),
    "unsolvable": (stale, no_provider, unsolved),
}
rows = []
for name, (tasks, agent_tools, passes) in scenarios.items():
    _, _, in_process = run_agent(RALPH, tasks, model, agent_tools, words=words)
    rows += [{"tasks": name, **row} for row in side_by_side(passes, in_process)]
compare = pd.DataFrame(rows).set_index(["tasks", "agent"])
compare

# %% [markdown]
# The outer loop's cost as a multiple of the in-process loop's, on each task set:
#
# <!-- zh -->
#
# 在每个任务集上，外循环的成本是进程内循环的多少倍：

# %%
cost = ["calls", "tokens", "virtual s"]
(
    compare.xs("outer loop", level="agent")[cost] / compare.xs("in-process Ralph Loop", level="agent")[cost]
).round(2)

# %% [markdown]
# What is the same: the lessons live outside the model's context, in the micro-prompt grammar, and
# only the retrieved few enter a prompt. The first pass of the outer loop *is* the in-process loop
# (same calls, same tokens), because both start from an empty memory.
#
# What differs:
#
# - **who decides to stop.** The in-process loop stops when the task list ends, clean or not. The
#   outer loop stops on a check of the work (done), a budget, a pass that changed nothing, or the cap.
# - **what carries over.** The in-process memory keeps candidates, counts and votes; the notes
#   keep lessons only. That is why the outer loop cannot finish T001-T008 (a rule on probation is
#   forgotten every pass): a lesson seen in one task never reaches the notes.
# - **what it costs.** Every pass pays for every task again. On the twelve tasks it can finish, the
#   outer loop buys a fully clean last pass for 1.80 times the in-process loop's calls, 1.82 times its
#   tokens and 1.71 times its virtual seconds; on T001-T008, 1.81 to 1.86 times, for 7 of 8 clean. On
#   the unsolvable set the no-progress stop ends it after two passes, at 1.60 to 1.76 times the cost,
#   where it started; with that stop switched off the cap lets it run five passes (17 calls against 5).
#
# Where it does not help, plainly: on the order desk a task is answered once, and the in-process loop
# gets the same lessons while doing useful work. The outer loop earns its cost where the work is
# *one* job redone until a check passes (Huntley's case: a program and its tests), and only with its
# stops.
#
# ## What changed
#
# Each stop, on the task set built to need it:
#
# <!-- zh -->
#
# 相同之处：经验都保存在模型的上下文之外，采用微提示（micro-prompt）语法，只有检索出的少数几条进入提示词。外循环的第一轮*就是*进程内循环（同样的调用，同样的 token），因为两者都从空记忆开始。
#
# 不同之处：
#
# - **由谁决定停止。** 进程内循环在任务列表结束时停止，不管干净与否。外循环在以下情况停止：对工作的检查通过（完成）、预算、一轮什么都没改变，或者上限。
# - **什么会延续下去。** 进程内的记忆保存候选、计数和投票；笔记只保存经验。这就是外循环无法完成 T001-T008 的原因（试用期的规则每一轮都会被忘掉）：只在一个任务中出现过的经验，永远到不了笔记里。
# - **它的代价。** 每一轮都要为每个任务再付一次钱。在十二个任务上，外循环花了进程内循环 1.88 倍的调用、1.91 倍的 token 和 1.82 倍的虚拟秒数，最后一轮却只有 10/12 干净（进程内循环 9/12），因为在中文版中它停在了无进展上（英文版中它在这里换来了完全干净的最后一轮）；在 T001-T008 上是 1.81 到 1.86 倍，换来 8 个中 7 个干净。在无解的任务集上，无进展停止在两轮后结束了它，代价是 1.60 到 1.75 倍，而结果仍停在原地；关掉这个停止条件后，上限让它跑满五轮（17 次调用，进程内 5 次）。
#
# 直说它不适用的地方：在订单服务台上，一个任务只需回答一次，而进程内循环在做有用工作的同时就得到了同样的经验。外循环值得它的成本的地方，是那种把*一件*工作反复重做、直到某项检查通过的场合（Huntley 的情形：一个程序和它的测试），而且前提是要有这些停止条件。
#
# ## 变化了什么
#
# 每种停止条件，都在为它构造的任务集上（在中文版中，"完成" 那一行是由无进展停止结束的，原因见停止条件 1 一节）：

# %%
shutil.rmtree(workdir)  # the temporary task and notes files: everything above is in memory
stops = {
    "done": done,
    "a typed 'COMPLETE'": boasted,
    "no progress (no reflector)": stuck,
    "no progress (T001-T008)": short,
    "no progress (unsolvable)": unsolved,
    "cap (unsolvable, no-progress stop off)": capped,
}
pd.DataFrame(
    {
        "task set": name,
        "passes": len(passes),
        "stopped by": passes[-1].stop,
        "last pass clean": f"{passes[-1].clean}/{passes[-1].tasks}",
        "calls, all passes": sum(p.calls for p in passes),
        "tokens, all passes": sum(p.tokens for p in passes),
        "virtual s, all passes": round(sum(p.virtual_s for p in passes), 1),
    }
    for name, passes in stops.items()
).set_index("task set")
