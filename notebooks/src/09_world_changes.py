# %% [markdown]
# # 09 · When the world changes
#
# **What you will measure:** the Ralph Loop of notebook 06 outside its comfort zone. Until now the world
# had one task type that never changed, asked in five English templates. Here the same shop also takes
# refunds under a written policy, "was I charged twice?", delivery questions and cancellations (two of
# them *write*), customers ask in English and in Chinese, and the world changes on a schedule.
#
# This notebook builds nothing into the loop. It is an instrument: five scenarios, ten arms, pass^k.
# It measures the loop's defences of what it learns: a reflector that knows no answers, credit only where
# a rule's trigger held, calls another call made needless counted as waste, decaying votes, lessons made
# invalid by a counterexample or by a tool the world no longer offers, per-type lessons, one lesson
# budget. On every changing scenario the loop is more correct than bare ReAct with fewer calls; it still
# makes more calls than some of its own ablations, and it still pays for what it learns in the first
# tasks of each request type. The
# sections below show where, and the last one reads the numbers. Every number comes from
# `python -m ralph_mini bench --scenario all` (the same functions, `ralph_mini/scenario_bench.py`) or from
# a cell here that uses them.

# %%
from collections import Counter
from dataclasses import replace
from datetime import datetime

import pandas as pd

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
from ralph_mini.widgets import plot_learning_curve
from ralph_mini.worlds.shop import scenarios
from ralph_mini.worlds.shop import words as sw
from ralph_mini.worlds.shop.scenarios import DRIFT, SCENARIOS, build
from ralph_mini.worlds.shop.tasks import RELEVANT_TOOLS

pd.set_option("display.width", 200, "display.max_columns", 20, "display.max_rows", 200)

# %% [markdown]
# ## The wider shop: five request types
#
# Each type has its tools (a call to any other is a *wrong call*), its oracle (a policy that knows the
# rules and the world's current state, not the data) and a documented naive habit of the offline model
# (`worlds/shop/habits.py`): it refunds without checking the policy, asks the slow provider before listing the
# charges, checks the database before asking the carrier, and cancels whatever the shop's record calls
# pending. `get_shipping_status` is now the right tool for one type and a wrong one for another. Some
# phrasings (marked *held out*) are never asked where the loop learns.

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
# Task *i* is asked at `start + (i-1) x hours`: the prompt's "Current time", the world's `now` and
# memory's clock are the same moment (static keeps notebook 06's fixed prompt time, so its numbers stay
# comparable). The drift scenario's changes, at the task where each takes effect:

# %%
for name in SCENARIOS:
    s = build(name)
    print(f"{name:10} {len(s.tasks):3} tasks, every {s.hours_between_tasks} h; windows:",
          "; ".join(f"{a}-{b} {label}" for label, a, b in s.windows))  # fmt: skip
pd.DataFrame([{"task": c.at, "change": c.name, "state": c.fields} for c in DRIFT])

# %% [markdown]
# ## Every arm on every scenario
#
# Ten arms: bare ReAct; the full Ralph Loop and one ablation per mechanism; *long-context* (inject every
# lesson ever learned, of any type and status, past the budget) and *placebo* (inject lessons learned on
# other request types, shuffled; both controls bypass the per-type planner they test). Bare ReAct
# and the full loop also run with model seeds 1-3 for pass^4. This cell takes about 30 s on two cores.

# %%
runs, seeds = run_grid(SCENARIOS, ARMS, k=4, jobs=2)
table = pd.DataFrame([arm_row(runs[(s, arm.name)]) for s in SCENARIOS for arm in ARMS])
table

# %% [markdown]
# ## pass^k: does it succeed every time?
#
# τ-bench's pass^k: each task run with k = 4 model seeds; the chance that all four succeed, averaged
# over tasks. pass^1 is plain accuracy.

# %%
pd.DataFrame(pass_k_rows(seeds, 4))

# %% [markdown]
# ## Learning curves, with the changes marked
#
# Tool calls per task (rolling mean over 5 tasks) and correct answers (rolling share), bare ReAct against
# the full loop, on the drift scenario; the dotted lines are the changes.


# %%
def curves(name: str, value: str):
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
    figure.axes[0].set_title(f"{name}: rolling mean over 5 tasks; dotted: changes")
    return figure


curves("drift", "calls")

# %%
curves("drift", "correct")

# %% [markdown]
# The seasons scenario: order-status questions stop at task 21 (week 3) and come back at task 71, five
# virtual weeks later, longer than memory's 30-day expiry.

# %%
curves("seasons", "correct")

# %% [markdown]
# ## By window and request type
#
# The drift scenario, bare ReAct and the full loop. *settled after*: how many of the window's tasks came
# before the first one from which every task is correct within 1.2x the oracle's calls ("never" if the
# window's last task is not).

# %%
drift_rows = [row for arm in (BARE, FULL) for row in window_rows(runs[("drift", arm.name)])]
pd.DataFrame(drift_rows)

# %% [markdown]
# The rephrased scenario: the loop learns on tasks 1-30, then (learning frozen) meets the same 15
# requests three times: in held-out English (31-45), held-out Chinese (46-60) and trained phrasings
# (61-75), each copy on its own order with the same state, age and oracle.

# %%
pd.DataFrame(
    [
        row
        for arm in (BARE, FULL)
        for row in window_rows(runs[("rephrased", arm.name)])
        if row["type"] == "all"
    ]
)

# %% [markdown]
# The full loop's rows per request type, every window: where the extra calls are.

# %%
pd.DataFrame(window_rows(runs[("rephrased", FULL.name)]))

# %% [markdown]
# ## The fast loop no longer retries a write
#
# The quick review (`planner.review`) judges completeness per request type (a refund answer needs its
# refund decision, not an order status and an amount), and the loop never runs a write task again: a
# retried refund would refund twice. Count the retries and the writes on the drift scenario:

# %%
full = runs[("drift", FULL.name)]
retried = {}
for result in full.results:
    kind = result.task.task_type
    done = retried.setdefault(kind, {"type": kind, "tasks": 0, "retried": 0, "writes to its order": 0})
    done["tasks"] += 1
    done["retried"] += result.retries > 0
    done["writes to its order"] += len(full.scenario.world.writes_for(result.task.record_id))
pd.DataFrame(list(retried.values()))

# %% [markdown]
# ## The targets, measured on these runs
#
# A task is *on target* when it is correct within 1.2x the oracle's calls. First the drift scenario: per
# window, the full loop's tasks that are not (task number, request type:case, calls/oracle calls, "wrong"
# if the grader rejected it). The target: back on target within 5 tasks after each change. Then the same
# for the arm that writes a rule from a single task (no write threshold).


# %%
def off_target(run, first: int, last: int) -> list[str]:
    """Tasks first..last (1-based) not correct within 1.2x the oracle's calls: 'task kind calls/oracle'."""
    pairs = list(zip(run.scenario.tasks, run.records, strict=True))[first - 1 : last]
    return [
        f"{n} {t.kind} {r.calls}/{r.oracle_calls}{'' if r.correct else ' wrong'}"
        for n, (t, r) in enumerate(pairs, first)
        if not (r.correct and r.calls <= 1.2 * r.oracle_calls)
    ]


for label, first, last in full.scenario.windows:
    print(f"{first}-{last} {label}: {', '.join(off_target(full, first, last)) or 'none'}")
unthresholded = runs[("drift", "no write threshold")]
for label, first, last in full.scenario.windows:
    off = ", ".join(off_target(unthresholded, first, last)) or "none"
    print(f"no write threshold, {first}-{last} {label}: {off}")

# %% [markdown]
# Never below bare ReAct: the full loop's correct answers minus bare ReAct's, in every 10-task window
# that starts at task 11 or later (tasks 11-20, 12-21, ...).

# %%
leads = []
for name in ("drift", "seasons", "noisy", "rephrased"):
    bare_ok = [r.correct for r in runs[(name, BARE.name)].records]
    loop_ok = [r.correct for r in runs[(name, FULL.name)].records]
    gaps = [sum(loop_ok[i : i + 10]) - sum(bare_ok[i : i + 10]) for i in range(10, len(bare_ok) - 9)]
    leads.append({"scenario": name, "windows": len(gaps), "windows behind bare ReAct": sum(g < 0 for g in gaps),
                  "smallest lead": min(gaps), "largest lead": max(gaps)})  # fmt: skip
pd.DataFrame(leads)

# %% [markdown]
# What the drift run's memory holds at the end: every lesson, its status, the task from which it was
# active, and how often it was put into a prompt after the first change (task 21 on).


# %%
def task_at(run, moment: str | None) -> int | None:
    """The task number asked at ``moment`` (memory's clock is the scenario's clock)."""
    if moment is None:
        return None
    hours = (datetime.fromisoformat(moment) - run.scenario.start).total_seconds() / 3600
    return round(hours / run.scenario.hours_between_tasks) + 1


def lessons(run, since: int = 1) -> pd.DataFrame:
    """Every experience in the run's memory; 'used' counts the prompts of its own task type, from task
    ``since`` on, that carried it (memory keeps one row per task type and rule; a prompt holds rule texts)."""
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
                f"used from task {since}": sum(
                    e.rule in r.injected or e.rule in r.trace.added_lessons
                    for r in later
                    if r.task.task_type == e.task_type
                ),
            }
            for e in run.memory.experiences.values()
        ]  # fmt: skip
    ).to_string(max_colwidth=75)


print(lessons(full, since=21))

# %% [markdown]
# **Noisy memory.** The harm target compares the noisy start (10 good lessons, 3 bad: 2 active, 1
# candidate) with a clean one: the same 50 tasks, the same 10 good lessons, no bad ones. The bench has no
# such arm, so this cell adds the clean scenario to `scenarios.BUILDERS` under its own name and runs the
# full loop on it (a second or two).

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
bad = lessons(noisy).splitlines()
print("\n".join([bad[0], *[line for line in bad[1:] if any(rule in line for rule in scenarios.BAD_LESSONS)]]))

# %% [markdown]
# **What the write threshold keeps out.** The third bad lesson, "when status is pending and age over
# 400 min: skip query_payment_api", was proposed once, by one odd task of the earlier deployment. With
# the threshold it stays a candidate. Without it (the no-write-threshold arm) it is active from that
# one proposal, and, being narrower than two active rules with the opposite action, it is a
# counterexample to both: it invalidates the bad "any task: call query_payment_api", and the *good*
# "... age over 30 min: call query_payment_api", before the first task. Task 3, a stale pending order,
# then meets "when status is pending: answer" instead and is answered wrong; the good rule is back only
# when that task's reflection confirms it again:

# %%
unguarded = runs[("noisy", "no write threshold")]
print(lessons(unguarded).splitlines()[0])
print(
    "\n".join(
        line for line in lessons(unguarded).splitlines()[1:] if "pending" in line or "any task: call" in line
    )
)
print("task 3:", "correct" if unguarded.records[2].correct else "wrong", "without the threshold;",
      "correct" if noisy.records[2].correct else "wrong", "with it")  # fmt: skip

# %% [markdown]
# **Seasons.** Order-status questions come back at task 71. Their calls against the oracle's, and the
# status lessons' history (expired after 30 days without a hit, active again from the task shown):

# %%
season = runs[("seasons", FULL.name)]
back = [(n, r) for n, (t, r) in enumerate(zip(season.scenario.tasks, season.records, strict=True), 1)
        if n >= 71 and t.task_type == "status"]  # fmt: skip
print(
    "status tasks from 71, task: calls/oracle:",
    ", ".join(f"{n}: {r.calls}/{r.oracle_calls}" for n, r in back),
)
print(lessons(season, since=71))
pd.DataFrame([row for row in window_rows(season) if row["type"] == "status"])

# %% [markdown]
# **Rephrased.** The target: held-out phrasings within 5% of the canonical calls/task, same
# correctness. The same 15 requests in each wording, so the rows compare like with like
# (`scenario_bench.paired_rows`; "calls vs trained" is the wording's calls over the trained wording's):

# %%
pd.DataFrame([row for arm in (BARE, FULL) for row in paired_rows(runs[("rephrased", arm.name)])])

# %% [markdown]
# **Static.** The target: still within 1.05x the oracle's calls in tasks 21-50.

# %%
pd.DataFrame([row for row in window_rows(runs[("static", FULL.name)]) if row["type"] == "all"])

# %% [markdown]
# **The long-context control.** Where its wrong calls on the drift scenario go: calls to a tool that is
# not one of the request type's tools, by type and tool (in every run, those the fast loop discarded
# included, as the table counts them):

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
# ## What the numbers say
#
# Read from the cells above (the scenario x arm table unless another cell is named).
#
# **Full loop against bare ReAct.** On every changing scenario the full loop is more correct with fewer
# calls: drift 78/80 against 67/80 (1.55 against 1.68 calls/task), seasons 88/90 against 78/90 (1.73
# against 1.97), noisy 48/50 against 44/50 (1.64 against 1.96), rephrased 73/75 against 67/75 (1.80
# against 2.08); static is 50/50 for both, 1.70 against 2.82 calls. In no 10-task window from task 11 on
# is the loop behind bare ReAct in correct answers (smallest lead 0 on all four changing scenarios), and
# on drift it is at least as correct in every window and type of the per-window table. It is not cheaper
# everywhere: tokens/task are higher than bare ReAct's on drift (3740 against 3417), seasons (4195
# against 4020) and noisy (4016 against 4010), and virtual seconds/task on all four (drift 10.1 against
# 8.7), because reflections are paid for and because the loop checks what bare ReAct skips. In drift's
# 21-35 window it even makes more calls (1.93 against 1.67): its refunds look the order up first (1.80
# calls, the oracle's), bare ReAct refunds blind (1.00 calls, 4/5 correct).
#
# **Which mechanism bought what** (each ablation against the full row):
# - *Reflection* bought all of the learning: with it off, the rows equal bare ReAct's on drift, seasons
#   and rephrased. On noisy the seeded lessons alone give 44/50 and 1.56 calls (both active bad ones
#   are invalidated there too, by the votes alone); reflection adds four correct answers (48/50) for
#   0.08 calls/task more.
# - *Counterexamples that prove themselves* clean the noisy memory of both active bad lessons. A
#   narrower rule whose action opposes a wider one's shows a case where the wider one is wrong; now that
#   lessons are kept per task type, it does so when a run validates it, not only when a reflection
#   proposes it: "when status is paid: skip query_payment_api", validated at task 1, invalidates "when
#   any task: call query_payment_api"; "... age over 30 min: call query_payment_api", validated at task
#   3, invalidates "when status is pending: answer" (noisy memory table).
# - *Per-type lessons* are what the two controls take away. Long-context (every lesson, any type or
#   status, past the budget) falls to 42/80, 45/90 and 34/75 on drift, seasons and rephrased, with
#   88-95 wrong calls: on drift 87 of its 88 wrong calls are `get_shipping_status` called on requests
#   that are not deliveries (57 of them on status questions), sent there by the delivery lesson "when any
#   task: start with get_shipping_status". 36 of those 88 are in runs the fast loop discarded: 18 status
#   questions answered "not_found" straight after the delivery tool, on the delivery lesson's "answer",
#   with no look-up, which the quick review does not accept; each is retried twice, and answered the same
#   way. Placebo (another type's lessons) is below bare ReAct on drift (66/80 against 67/80, 19 wrong
#   calls), below it on noisy (43/50 against 44/50), level on rephrased (67/75) and above it on seasons (84/90 against
#   78/90, with 17 wrong calls). So the agent does act on its lessons, and a lesson of the wrong type
#   mostly hurts.
# - *The write threshold* costs calls on every scenario (below) and buys one correct answer, on noisy
#   (48/50 against 47/50): it keeps a one-off special case out of memory (the cell after the noisy
#   table shows how).
# - *The second retrieval* saves calls on every scenario (drift 1.55 against 1.65 without it, seasons
#   1.73 against 1.81, noisy 1.64 against 1.90, rephrased 1.80 against 1.87, static 1.70 against 1.78)
#   and correct answers on the four changing ones (one each on drift, seasons and rephrased, two on
#   noisy). It keeps only lessons whose whole trigger held in what the step showed (the age included),
#   the most specific trigger first.
# - *The budget* changes nothing on drift, seasons, rephrased and static but tokens (static 2969 against
#   3021 without it). On noisy it costs: without it the loop makes 1.60 calls against 1.64 at the same
#   48/50 and fewer tokens (4006 against 4016). Ten status lessons compete there for three slots, and the one that
#   would skip the double check is not always among them.
# - *Vector retrieval* buys nothing measurable: keyword-only retrieval has the same correct answers and
#   the same calls on all five scenarios, and a few tokens fewer on three (drift 3736 against 3740). With
#   lessons kept per type, each request type has only a few candidates to rank.
# - *Decay and expiry* change nothing on static, and no call on drift and rephrased. On noisy they save
#   a little (1.64 against 1.68 calls without them). On seasons they cost a little: no decay/expiry
#   makes 1.72 calls and 2 wrong calls against 1.73 and 3; in the full run status lessons that had been
#   in use before the gap expired during it and were active again only from tasks 71 and 80 (seasons
#   memory above), and one, "... age over 30 min: call query_payment_api", stayed expired.
#
# **Where the loop still loses.**
# - *To the no-write-threshold ablation, in calls, on every scenario*: static 1.62 against 1.70, drift
#   1.46 against 1.55, seasons 1.68 against 1.73, noisy 1.56 against 1.64, rephrased 1.68 against 1.80,
#   with fewer tokens too. It is as correct on drift, seasons, rephrased and static, and one answer less
#   correct on noisy (47/50 against 48/50). A rule learned from a rejected answer is now written at once
#   (so the first wrong refund teaches the lesson, where it took two wrong ones before), but a rule that
#   only saves one call waits for a second task to confirm it, and the rarer request types meet few
#   tasks. What the threshold exists to keep out, a rule written from one misleading task, occurs once
#   here, and there it earns its keep: the noisy memory's special case (next cell).
# - *To long-context, on static*: with one request type, "every lesson" is all the right type, and it
#   makes 1.62 calls and 2888 tokens/task against the full loop's 1.70 and 2969, at 50/50 for both.
#   Everywhere else it is far less correct; on noisy it makes 2.42 calls and 6267 tokens/task for 47/50.
# - *On the first tasks of each request type or case*, which is where every off-target drift task is
#   (cell above): status questions about a missing order (22, 24) or a fresh pending one (32, 42) take a
#   call more than the oracle (32 two more: it first tries `get_order_history`) until "when
#   query_database finds nothing: skip query_payment_api" is active (from task 24) and "... age under 30
#   min: skip query_payment_api" is (from task 42); a Chinese status question (26) first tries
#   `get_order_history`; charges questions 37 and 38 (the first since task 10) and deliveries 21 and 45
#   take one extra call each until their rules are active (from 38 and 45).
#
# **The targets the loop was built to meet, as far as these outputs measure them.**
# - *drift, correct again after each change*: met; every post-change window is 15/15. *Calls within 1.2x
#   the oracle within 5 tasks*: met after the settlement-lag change (no task off target) and after the
#   provider failure (on target until task 75, a delivery for a missing order); not met after the cache
#   disappears (last off-target task 32, 12 tasks in) or the refund window change (last one 45, 10 tasks
#   in). Those late misses are kinds the loop had not learned yet (above), not old rules the change made
#   wrong: no lesson in the drift memory has a single failure. Without the write threshold the target is
#   met after the refund window change too (last off-target task 37), but not after the cache
#   disappears (32, a fresh pending order, the first since the change): no arm learns a case before
#   it has met it.
# - *drift, the invalidated rule inactive within 10 tasks*: met. "when any task: start with
#   query_local_cache" is invalid from task 22, the first status question after the cache disappears,
#   because the world no longer offers the tool it sends the agent to (drift memory table).
# - *never below bare ReAct in any 10-task window after task 10*: met on all four changing scenarios.
# - *noisy, harm against a clean memory*: met; 48/50 with the bad lessons and without them (0 points),
#   and 1.2% more calls (1.64 against 1.62; target 5%). *Every bad lesson inactive within 10 tasks*: met.
#   The over-general one is invalid from task 1 and the wrong one, "when status is pending: answer", from
#   task 3 (counterexamples that proved themselves, above); the special case never leaves candidacy.
# - *seasons, the returning type within 1.2x the oracle within 3 tasks*: the first status question back
#   (71) makes 3 calls against 1, the second (72) is on target; one later relapse (80: 3 against 2,
#   a first call to the docs before "start with query_local_cache" was active again) puts the status
#   row's "settled after" at 7 of 13 tasks. 13/13 correct.
# - *rephrased, held-out wordings within 5% of the canonical calls, same correctness*: met. The same 15
#   requests take 1.80 calls/task in held-out English, in held-out Chinese (1.000x) and in the trained
#   wordings, 15/15 correct in each. Bare ReAct, which learns nothing, misses it in Chinese (2.33
#   against 2.13, 1.094x); the lessons close the gap the wording opens.
# - *static, within 1.05x the oracle in tasks 21-50*: met, 1.53 against 1.50 calls (1.02x).
# - *full >= every ablation on every scenario*: not met, in calls: no write threshold everywhere, no
#   budget on noisy, no decay/expiry on seasons (above); and in correct answers to none.
# - *full >= long-context in tokens at equal correctness*: met where they are equal except static (above).
#
# **pass^4** equals pass^1 for both agents on every scenario: the four model seeds give each task the same
# verdict, so on these scenarios pass^k separates nothing.
#
# Notebook 06 stays the capstone on the static scenario.
