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

# %%
import pandas as pd

from ralph_mini import OfflineModel, grade, run_react
from ralph_mini.adherence import adherence_of_runs, follow_rates
from ralph_mini.guards import Guard, binding
from ralph_mini.log import step_tags
from ralph_mini.prompt_lessons import LessonBudget
from ralph_mini.reflect import reflection_text
from ralph_mini.rules import parse_rule
from ralph_mini.votes import trigger_held
from ralph_mini.worlds import orders

pd.set_option("display.max_colwidth", 100)
suite = orders.make_suite(n=50, seed=7)
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

# %%
traces = {}
for enforce in ("prompt", "guard", "both"):
    traces[enforce] = run_react(
        task, model, tools, lessons=[lesson], **binding(enforce, words, task.now, tools)
    )
    print(f"{enforce:>6}: {traces[enforce].tool_calls} tool call(s), {traces[enforce].model_calls} model turns:",
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
print(f"{compared} calls checked, {refused} refused by the package's guard; the two agree on {agreed}")

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

# %%
table.loc[
    [
        (s, a)
        for s in ("drift", "stale")
        for a in ("Ralph Loop, prompt", "Ralph Loop, guard", "Ralph Loop, both")
    ],
    ["correct", "calls/task", "refusals", "lessons followed", "tasks to recover"],
]
