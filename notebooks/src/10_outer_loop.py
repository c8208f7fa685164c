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

# %%
import inspect
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd

from ralph_mini import model_from_env, run_react
from ralph_mini.bench import RALPH, Agent, run_agent
from ralph_mini.loop import LoopConfig
from ralph_mini.model import ModelReply
from ralph_mini.outer import OuterConfig, decide, pick_tasks, run_outer, side_by_side, write_task_file
from ralph_mini.worlds import orders

model = model_from_env(habits=orders.HABITS)
suite = orders.make_suite(n=50, seed=7)
tools, words = suite.world.tools(), orders.WORDS
workdir = Path(tempfile.mkdtemp(prefix="outer_"))  # the task and notes files of this notebook
pd.set_option("display.max_colwidth", 90)

# %% [markdown]
# ## The loop
#
# Here it is. The `for` over a `range` is the shell's `while :`, with the cap built in; each pass
# re-reads the task file and the notes, runs the Ralph Loop over the tasks from a **fresh memory**
# holding only the notes' lessons, writes the lessons back, and yields one record.

# %%
print(inspect.getsource(run_outer))

# %% [markdown]
# The stops are checked in this order, first match wins. None of them reads what the model wrote:

# %%
print(inspect.getsource(decide))

# %% [markdown]
# Their settings, each with the reason for its default:

# %%
print(inspect.getsource(OuterConfig))

# %% [markdown]
# ## The two files
#
# The task file is the loop's `PROMPT.md`: one task per line. We start with two orders of every kind
# (the first two of each in the suite), twelve tasks.


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

# %%
done = list(run_outer(task_file, notes_file, suite.tasks, model, tools, words=words))
passes_table(done)

# %% [markdown]
# Pass 1 is exactly the Ralph Loop of notebook 06 from an empty memory: it answers all twelve
# correctly, wastes calls on three of them, and learns four lessons as it goes. Pass 2 starts from a
# fresh context with those four lessons in the notes, and every run is clean: the check says done,
# and the loop stops. This is what the notes file holds now:

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


# %%
class Boaster:
    """Says it is done, calls no tool, guesses "paid". Stateless, like every model in the kit."""

    def complete(self, messages: list[dict], tools: list[dict]) -> ModelReply:
        if not tools:
            return model.complete(messages, tools)
        return ModelReply('DONE <promise>COMPLETE</promise>\nFinal answer: {"status": "paid"}')


boast = run_react(two_per_kind[0], Boaster(), tools)
print(boast.final_text, "|", "tool calls:", boast.tool_calls)

# %% [markdown]
# A phrase check would have stopped after the very first task. The outer loop never reads the text;
# it asks the grader and the validator:

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

# %%
never_learns = Agent("no reflector", loop=LoopConfig(reflect=False))
task_file, notes_file = fresh("never_learns", suite.tasks[:8])
stuck = list(run_outer(task_file, notes_file, suite.tasks, model, tools, words=words, agent=never_learns))
passes_table(stuck)

# %% [markdown]
# The full Ralph Loop on the same eight tasks learns, and still stops here, one task short:

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
