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

# %%
from collections import Counter
from dataclasses import replace
from datetime import datetime

import pandas as pd
from IPython.display import HTML, display

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

pd.set_option("display.width", 200, "display.max_columns", 20, "display.max_rows", 200)
pd.set_option("display.max_colwidth", None)  # whole phrasings and rules, never cut with "..."


def folded(df: pd.DataFrame, summary: str) -> HTML:
    """The whole table behind one click: an HTML <details> element (static, so it is saved as is)."""
    return HTML(f"<details><summary>{summary}</summary>{df.to_html(index=False)}</details>")


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

# %%
for name in SCENARIOS:
    s = build(name)
    print(f"{name:10} {len(s.tasks):3} tasks, every {s.hours_between_tasks} h; windows:",
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

# %%
runs, seeds = run_grid(SCENARIOS, ARMS, k=4, jobs=2, progress=progress)  # seeds: model seeds 0-3, for pass^k
table = pd.DataFrame([arm_row(runs[(name, arm.name)]) for name in SCENARIOS for arm in ARMS])
print(len(table), "rows: one per scenario and arm")

# %% [markdown]
# ### The loop against bare ReAct
#
# The summary: bare ReAct and the full loop, per scenario. The whole table (every arm, with wrong calls
# and virtual seconds) is folded underneath.

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
folded(table, "the whole table: every arm on every scenario (70 rows; click to open)")

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

# %%
order = [arm.name for arm in ARMS]
correct = table.assign(right=table["correct"].str.split("/").str[0].astype(int))
print(
    "correct answers, of", ", ".join(str(len(runs[(name, BARE.name)].records)) for name in SCENARIOS), "tasks"
)
display(correct.pivot(index="agent", columns="scenario", values="right").loc[order, list(SCENARIOS)])
print("calls per task")
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

# %% [markdown]
# ## pass^k: does it succeed every time?
#
# *pass^k* (from τ-bench) asks whether an agent succeeds *every* time, not just once: each task is run
# with k = 4 model seeds, and pass^k is the chance that all four runs are correct, averaged over tasks.
# pass^1 is plain accuracy.

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

# %% [markdown]
# ## Drift: four changes in 80 tasks
#
# Tool calls per task and the share of correct answers, bare ReAct against the full loop, each a rolling
# mean over 5 tasks; the dotted lines are the four changes (cache gone at 21, refund window 14 days at
# 36, settlement lag 90 min at 51, provider failing at 66).


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
    red = "; red: stale rules end" if marks else ""
    figure.axes[0].set_title(f"{name}: rolling mean over 5 tasks; dotted: changes{red}")
    return figure


curves("drift", "calls")

# %%
curves("drift", "correct")

# %% [markdown]
# By window. *settled after*: how many of the window's tasks came before the first one from which every
# task is *on target*, that is correct within 1.2x the oracle's calls ("never" if the window's last task
# is not). The rows per request type are folded underneath.

# %%
drift_rows = pd.DataFrame([row for arm in (BARE, FULL) for row in window_rows(runs[("drift", arm.name)])])
display(drift_rows[drift_rows["type"] == "all"])
folded(drift_rows, "drift, every window by request type (click to open)")

# %% [markdown]
# Every window after a change is 15/15 for the loop (bare ReAct: 13, 15, 12 and 11 of 15). Only in the
# window where the cache disappears does it make more calls than bare ReAct (1.80 against 1.67): by type
# (folded rows), its refunds look the order up first (1.80 calls, the oracle's), where bare ReAct
# refunds blind (1.00 calls, 4/5 correct).
#
# The target: back on target within 5 tasks of each change. The loop's tasks that are not, per window
# (task, request type:case, calls/oracle calls, "wrong" if the grader rejected it), and the same for
# the arm without the write threshold:


# %%
def off_target(run, first: int, last: int) -> list[str]:
    """Tasks first..last (1-based) not correct within 1.2x the oracle's calls: 'task kind calls/oracle'."""
    pairs = list(zip(run.scenario.tasks, run.records, strict=True))[first - 1 : last]
    return [
        f"{n} {t.kind} {r.calls}/{r.oracle_calls}{'' if r.correct else ' wrong'}"
        for n, (t, r) in enumerate(pairs, first)
        if not (r.correct and r.calls <= 1.2 * r.oracle_calls)
    ]


full = runs[("drift", FULL.name)]
unthresholded = runs[("drift", "no write threshold")]
for label, first, last in full.scenario.windows:
    print(f"{first}-{last} {label}: {', '.join(off_target(full, first, last)) or 'none'}")
    print(f"   no write threshold: {', '.join(off_target(unthresholded, first, last)) or 'none'}")

# %% [markdown]
# Met after the refund window change (last miss at 37, the window's second task) and after the lag
# change (none); missed after the cache disappears (last miss at 32, a fresh pending order, 12 tasks in)
# and after the provider starts failing (75, a delivery for a missing order, 10 tasks in). Each window's
# last miss is the first task of its case since the change, not an old rule the change made wrong, and
# the arm without the write threshold misses the same tasks: no arm learns a case before it meets it.
#
# What the drift run's memory holds at the end: every lesson, its status, the task from which it was
# active, why it ended if it did, and how many prompts of its type carried it from task 21 on.


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
            f"{arm.name}, off target in {change}-{end}:",
            ", ".join(off_target(runs[(name, arm.name)], change, end)) or "none",
        )
    return pd.DataFrame(rows)


def walk(run, n: int) -> str:
    """Task ``n``: the order's age, each call with its status, the answer's status against the truth, the
    lessons in its prompt, and what its reflection (if any) found and proposed."""
    result = run.results[n - 1]
    seen = run_tags(result.trace.steps, run.scenario.world.words, result.task.now)
    age = "".join(f", {tag.split(':')[2]} min old" for tag in seen if tag.startswith("age:pending:"))
    calls = " -> ".join(f"{step.tool} ({step.status})" for step in result.trace.steps)
    said, truth = (result.trace.answer or {}).get("status"), result.task.expected.get("status")
    lines = [f"task {n}, {result.task.kind}{age}, oracle {result.task.oracle_calls} calls: {calls}; "
             f"said {said}, truth {truth}: {'correct' if result.correct else 'WRONG'}",
             f"    lessons in its prompt: {'; '.join(result.injected)}"]  # fmt: skip
    for reflection in result.reflections:
        found = "; ".join(reflection.ineffective) or "no ineffective step"
        lines.append(f"    reflection: {found} -> {'; '.join(reflection.rules) or 'no rule'}")
    return "\n".join(lines)


threshold = runs[("threshold", FULL.name)]
stale_rules = went_stale(threshold, 21)
curves("threshold", "calls", marks=tuple(stale_rules["invalid from"]))

# %% [markdown]
# The rule that went stale (task numbers; the reason memory recorded; the tasks from the change to its
# end at which it fired, target: within two), then the rules first proposed since the change:

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

# %%
cost("threshold", 21, 35)

# %% [markdown]
# In 21-35 the loop gave no wrong answer and made 26 calls against the oracle's 22 (one over at 23 and 24,
# charges questions unrelated to the change, and at 31, 33 and 34; one under at 30, a blind cancellation
# that happened to be allowed); bare ReAct made 35, also with no wrong answer. In 36-50 the loop made 24
# calls against 23 with 1 wrong answer (the cancellation at 39, which bare ReAct also got wrong); bare
# ReAct 34 calls and 2 wrong answers.

# %% [markdown]
# ## A source that goes stale
#
# **The change.** The same 50 draws. Until task 20 the local cache is a faithful copy, and the loop
# learns to trust it: "when any task: start with query_local_cache", "when query_local_cache finds the
# order: skip query_database". From task 21 the cache still answers, but an order refunded since shows
# there as paid. Nothing fails and no tool disappears: the rules simply start giving wrong answers. The
# share of correct answers, with the change (dotted) and the end of the stale rules (red):

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

# %%
learned_since(stale, 21)

# %% [markdown]
# "when any task: start with query_database" took over for status questions from task 25 on. Since the
# cache went stale the oracle reads the database alone, so this is the oracle's own plan.
#
# The cost:

# %%
cost("stale", 21, int(stale_rules["invalid from"].max()))

# %% [markdown]
# One wrong answer, at 25, that bare ReAct did not give (it checked the database after the cache, 2
# calls). That is the whole price of having learned the shortcut, and it is why the loop is behind bare
# ReAct by one answer in the 10-task windows that hold task 25. Over tasks 21-25 the loop still made fewer
# calls (8 against 10; oracle 6). From task 26 on it made exactly the oracle's 35 calls, with 1 wrong
# answer (the cancellation at 39, from whose rejection the cancel type learned a rule, in the table
# above); bare ReAct made 59 calls and 2 wrong answers. Over the scenario both answer 47/50.

# %% [markdown]
# ## Seasons: a request type that goes away and comes back
#
# Nine virtual weeks, 16.8 hours between tasks. Order-status questions stop at task 21 (week 3) and come
# back at task 71, five weeks later: longer than memory's 30-day expiry, so lessons not used in that time
# expire. The target: the returning type within 1.2x the oracle's calls within 3 tasks.

# %%
curves("seasons", "correct")

# %%
season = runs[("seasons", FULL.name)]
back = [(n, r) for n, (t, r) in enumerate(zip(season.scenario.tasks, season.records, strict=True), 1)
        if n >= 71 and t.task_type == "status"]  # fmt: skip
print(
    "status tasks from 71, task: calls/oracle:",
    ", ".join(f"{n}: {r.calls}/{r.oracle_calls}" for n, r in back),
)
pd.DataFrame([row for row in window_rows(season) if row["type"] == "status"])

# %% [markdown]
# 13/13 correct. The first status question back (71) makes 3 calls against 1, the next (72) is on
# target; one later relapse (80: 3 against 2) puts the status row's "settled after" at 7 of 13 tasks. The
# status lessons at the end (expired: not hit for 30 days; "active from" is when each came back):

# %%
status_lessons = lessons(season, since=71)
status_lessons[status_lessons["type"] == "status"]

# %% [markdown]
# Three came back, from tasks 71 and 80; two are still expired, "... age over 30 min: call
# query_payment_api" among them. They were still right: this is where decay and expiry cost calls (the
# no-decay/expiry arm: 1.66 calls against the full loop's 1.68 on seasons). Expiry guards against a world
# that changed while nobody looked; here it had not.

# %% [markdown]
# ## Noisy memory: bad lessons at the start
#
# The run starts from a memory an earlier deployment filled: 10 good status lessons and 3 bad ones, an
# over-general one ("when any task: call query_payment_api"), a wrong one ("when status is pending:
# answer"), both active, and a special case proposed once ("... age over 400 min: skip
# query_payment_api"). The harm target compares it with a clean start: the same 50 tasks, the same 10
# good lessons, no bad ones. The bench has no such arm, so this cell adds the clean scenario to
# `scenarios.BUILDERS` under its own name and runs the full loop on it (a fraction of a second).

# %%
scenarios.BUILDERS["noisy, good lessons only"] = lambda seed=7: replace(
    scenarios.noisy(seed), seed_lessons=[(rule, 2) for rule in scenarios.GOOD_LESSONS]
)
noisy, clean = runs[("noisy", FULL.name)], run_arm("noisy, good lessons only", FULL)
pd.DataFrame([arm_row(noisy) | {"memory at start": "10 good + 3 bad"},
              arm_row(clean) | {"memory at start": "10 good"}])  # fmt: skip

# %%
harm_points = 100 * (sum(r.correct for r in clean.records) - sum(r.correct for r in noisy.records)) / 50
extra_calls = sum(r.calls for r in noisy.records) / sum(r.calls for r in clean.records) - 1
print(f"harm of the bad lessons: {harm_points:+.0f} points of correctness, {100 * extra_calls:+.1f}% calls")
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

# %%
unguarded = runs[("noisy", "no write threshold")]
shown = lessons(unguarded)
display(shown[shown["rule"].str.contains("pending|any task: call")])
print("without the threshold:", walk(unguarded, 3))
print("with it:", walk(noisy, 3))

# %% [markdown]
# ## Rephrased: wordings the loop never learned from
#
# The loop learns on tasks 1-30, then, learning frozen, meets the same 15 requests three times: in
# held-out English (31-45), held-out Chinese (46-60) and trained phrasings (61-75), each copy about its
# own order with the same state, age and oracle. The rows per request type are folded underneath.

# %%
rephrased_rows = [row for arm in (BARE, FULL) for row in window_rows(runs[("rephrased", arm.name)])]
display(pd.DataFrame([row for row in rephrased_rows if row["type"] == "all"]))
folded(
    pd.DataFrame(window_rows(runs[("rephrased", FULL.name)])), "the full loop by request type (click to open)"
)

# %% [markdown]
# The target: held-out wordings within 5% of the trained wordings' calls, same correctness. The same 15
# requests in each wording, so the rows compare like with like (`scenario_bench.paired_rows`; "calls vs
# trained" is the wording's calls over the trained wording's):

# %%
pd.DataFrame([row for arm in (BARE, FULL) for row in paired_rows(runs[("rephrased", arm.name)])])

# %% [markdown]
# Met: 1.67 calls/task in each wording (1.000x), 15/15 correct in each. Bare ReAct, which learns nothing,
# misses it in Chinese (2.33 against 2.13, 1.094x): the lessons close the gap the wording opens.

# %% [markdown]
# ## Static: notebook 06's suite
#
# The target: still within 1.05x the oracle's calls in tasks 21-50.

# %%
pd.DataFrame([row for row in window_rows(runs[("static", FULL.name)]) if row["type"] == "all"])

# %% [markdown]
# Met: 1.5 calls/task against the oracle's 1.50 in tasks 21-50, 30/30 correct.

# %% [markdown]
# ## The controls: lessons of the wrong type
#
# Lessons are kept per request type, and the planner injects only the task's own type. The long-context
# control drops both; where its 88 wrong calls on drift go (calls to a tool that is not one of the
# request type's, by type and tool, in every run it paid for, the fast loop's discarded ones included):

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
#   costs one wrong answer that bare ReAct does not give, and both end at 47/50.
# - The loop is still not the best arm everywhere: keyword retrieval, no budget and no decay/expiry are
#   each cheaper somewhere (threshold, noisy, seasons), at the same correctness.
#
# Notebook 06 stays the capstone on the static scenario; notebook 10 is where the name comes from.
