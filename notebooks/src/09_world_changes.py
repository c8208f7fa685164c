# %% [markdown]
# # 09 · When the world changes
#
# **What you will measure:** the Ralph Loop of notebook 06 outside its comfort zone. Until now the world
# had one task type that never changed, asked in five English templates. Here the same shop also takes
# refunds under a written policy, "was I charged twice?", delivery questions and cancellations (two of
# them *write*), customers ask in English and in Chinese, and the world changes on a schedule.
#
# This notebook builds nothing into the loop. It is an instrument: five scenarios, ten arms, pass^k.
# It measures the loop of issue 16 ("learning that holds up": a reflector that knows no answers, credit
# only where a rule's trigger held, decaying votes, per-type lessons, one lesson budget). On every
# changing scenario that loop is now more correct than bare ReAct with fewer calls; it still loses to one
# of its own ablations, and it still pays for what it learns in the first tasks of each request type. The
# sections below show where, and the last one reads the numbers. Every number comes from
# `python -m ralph_mini bench --scenario all` (the same functions, `ralph_mini/scenario_bench.py`) or from
# a cell here that uses them.

# %%
from collections import Counter
from dataclasses import replace
from datetime import datetime

import pandas as pd

from ralph_mini import scenarios
from ralph_mini import shop_words as sw
from ralph_mini.scenario_bench import ARMS, BARE, FULL, arm_row, pass_k_rows, run_arm, run_grid, window_rows
from ralph_mini.scenarios import DRIFT, SCENARIOS, build, task_type
from ralph_mini.shop_tasks import RELEVANT_TOOLS
from ralph_mini.widgets import plot_learning_curve

pd.set_option("display.width", 200, "display.max_columns", 20, "display.max_rows", 200)

# %% [markdown]
# ## The wider shop: five request types
#
# Each type has its tools (a call to any other is a *wrong call*), its oracle (a policy that knows the
# rules and the world's current state, not the data) and a documented naive habit of the offline model
# (`offline_shop.py`): it refunds without checking the policy, asks the slow provider before listing the
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
# The rephrased scenario: the loop learns on tasks 1-30, then (learning frozen) meets held-out English
# and Chinese phrasings, and trained phrasings as a control.

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
# `reflect.quick_review` now judges completeness per request type (a refund answer needs its refund
# decision, not an order status and an amount), and the loop never runs a write task again: a retried
# refund would refund twice. Count the retries and the writes on the drift scenario:

# %%
full = runs[("drift", FULL.name)]
retried = {}
for result in full.results:
    kind = result.task.task_type
    done = retried.setdefault(kind, {"type": kind, "tasks": 0, "retried": 0, "writes to its order": 0})
    done["tasks"] += 1
    done["retried"] += result.retries > 0
    done["writes to its order"] += len(full.scenario.world.writes_for(result.task.order_id))
pd.DataFrame(list(retried.values()))

# %% [markdown]
# ## Issue 16's targets, measured on these runs
#
# A task is *on target* when it is correct within 1.2x the oracle's calls. First the drift scenario: per
# window, the full loop's tasks that are not (task number, request type:case, calls/oracle calls, "wrong"
# if the grader rejected it). The target: back on target within 5 tasks after each change. Last line: the
# first window again, for the arm that writes a rule from a single task (no write threshold).


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
print("no write threshold, 1-20:", ", ".join(off_target(runs[("drift", "no write threshold")], 1, 20)))

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
    """Every experience in the run's memory; 'used' counts prompts from task ``since`` on that carried it."""
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
                    e.rule in r.injected or e.rule in r.trace.added_lessons for r in later
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
# **Seasons.** Order-status questions come back at task 71. Their calls against the oracle's, and the
# status lessons' history (expired after 30 days without a hit, active again from the task shown):

# %%
season = runs[("seasons", FULL.name)]
back = [(n, r) for n, (t, r) in enumerate(zip(season.scenario.tasks, season.records, strict=True), 1)
        if n >= 71 and task_type(t) == "status"]  # fmt: skip
print(
    "status tasks from 71, task: calls/oracle:",
    ", ".join(f"{n}: {r.calls}/{r.oracle_calls}" for n, r in back),
)
print(lessons(season, since=71))
pd.DataFrame([row for row in window_rows(season) if row["type"] == "status"])

# %% [markdown]
# **Rephrased.** The target is "held-out phrasings within 5% of the canonical calls/task". The windows
# hold different tasks (a held-out window is not the same tasks asked in trained words), so the nearest
# this run gives is each window's calls against its own oracle:

# %%
pd.DataFrame(
    [
        {"agent": row["agent"], "window": row["window"], "calls/task": row["calls/task"],
         "oracle calls/task": row["oracle calls/task"],
         "x oracle": round(row["calls/task"] / row["oracle calls/task"], 2), "correct": row["correct"]}
        for arm in (BARE, FULL)
        for row in window_rows(runs[("rephrased", arm.name)])
        if row["type"] == "all"
    ]
)  # fmt: skip

# %% [markdown]
# **Static.** The target: still within 1.05x the oracle's calls in tasks 21-50.

# %%
pd.DataFrame([row for row in window_rows(runs[("static", FULL.name)]) if row["type"] == "all"])

# %% [markdown]
# **The long-context control.** Where its wrong calls on the drift scenario go: calls to a tool that is
# not one of the request type's tools, by type and tool:

# %%
flooded = Counter(
    (result.task.task_type, step.tool)
    for result in runs[("drift", "long-context")].results
    for step in result.trace.steps
    if step.status == "wrong_tool"
)
pd.DataFrame([{"type": kind, "wrong tool": tool, "calls": n} for (kind, tool), n in flooded.most_common()])

# %% [markdown]
# ## What the numbers say
#
# Read from the cells above (the scenario x arm table unless another cell is named).
#
# **Full loop against bare ReAct.** On every changing scenario the full loop is more correct with fewer
# calls: drift 77/80 against 67/80 (1.54 against 1.68 calls/task), seasons 88/90 against 78/90 (1.72
# against 1.97), noisy 47/50 against 44/50 (1.80 against 1.96), rephrased 72/75 against 65/75 (1.80
# against 1.97); static is 50/50 for both, 1.70 against 2.82 calls. In no 10-task window from task 11 on
# is the loop behind bare ReAct in correct answers (smallest lead 0 on all four changing scenarios), and
# on drift it is at least as correct in every window and type of the per-window table. It is not cheaper
# everywhere: tokens/task are higher than bare ReAct's on drift (3683 against 3416), seasons (4142
# against 4015) and noisy (4162 against 4005), and virtual seconds/task on all four (drift 10.0 against
# 8.7), because reflections are paid for and because the loop checks what bare ReAct skips. In drift's
# 21-35 window it even makes more calls (1.87 against 1.67): its refunds look the order up first (1.80
# calls, the oracle's), bare ReAct refunds blind (1.00 calls, 4/5 correct).
#
# **Which mechanism bought what** (each ablation against the full row):
# - *Reflection* bought all of the learning: with it off, the rows equal bare ReAct's on drift, seasons
#   and rephrased. On noisy the seeded lessons alone give 44/50 and 1.72 calls; reflection adds three
#   correct answers (47/50) for 0.08 calls/task more.
# - *Per-type lessons* are what the two controls take away, and both now do much worse. Long-context
#   (every lesson, any type or status, past the budget) falls to 39/80, 45/90 and 35/75 on drift, seasons
#   and rephrased, with 110-115 wrong calls: on drift 114 of its 115 wrong calls are `get_shipping_status`
#   called on requests that are not deliveries (84 of them on status questions), sent there by the
#   delivery lesson "when any task: start with get_shipping_status". Placebo (another type's lessons) is
#   below bare ReAct on drift (64/80 against 67/80, 22 wrong calls), one task above it on seasons (79/90
#   against 78/90) and level with it on noisy and rephrased (44/50, 65/75); on rephrased it makes fewer
#   calls than the oracle (1.43 against 1.55) and is still wrong on 10 tasks.
#   So the agent does act on its lessons, and a lesson of the wrong type hurts.
# - *The second retrieval* saves calls on every scenario but noisy (drift 1.54 against 1.65 without it,
#   seasons 1.72 against 1.84, rephrased 1.80 against 1.89, static 1.70 against 1.78) and one correct
#   answer on noisy and on rephrased.
# - *The budget* changes neither calls nor correctness here; it saves tokens (noisy 4162 against 4271,
#   static 2975 against 3011).
# - *Vector retrieval* buys nothing measurable: keyword-only retrieval has the same calls, wrong calls and
#   correct answers on all five scenarios and 0-9 fewer tokens/task. With lessons kept per type, each
#   request type has only a few candidates to rank.
# - *Decay and expiry* change nothing on drift, noisy and rephrased (tokens/task within 1). On seasons
#   they cost a little: no decay/expiry makes 1.70 calls and 2 wrong calls against 1.72 and 3. In the
#   full run two status lessons that had been in use before the gap expired during it and were active
#   again only from tasks 71 and 80 (seasons memory above). On static they save a little (1.70 against
#   1.72 calls).
#
# **Where the loop still loses.**
# - *To the no-write-threshold ablation, on every changing scenario*: drift 78/80 and 1.46 calls against
#   77/80 and 1.54; seasons 88/90 both, 1.68 against 1.72; noisy 48/50 against 47/50, 1.76 against 1.80;
#   rephrased 73/75 against 72/75, 1.68 against 1.80; and fewer tokens everywhere (static too: 1.62 against
#   1.70 calls). The full loop writes a rule only once two tasks confirm it, and the rarer request types
#   meet few tasks. On drift, refunds 6 and 7 refund an order already refunded, without looking it up,
#   and are wrong: the refund rule ("start with query_database") becomes active only after task 7
#   confirms it; the arm without the threshold has it for task 7 and is wrong only on 6 (last line of the
#   off-target cell). Cancellation 8 is wrong in both arms and for bare ReAct. What the threshold exists to keep out, a rule
#   written from one misleading task, cost nothing measurable here: writing after one task is at least as
#   correct with fewer calls on every scenario; and the noisy scenario's bad lessons are seeded past the
#   threshold, so it cannot stop them.
# - *To long-context, on static*: with one request type, "every lesson" is all the right type, and it
#   makes 1.62 calls and 2883 tokens/task against the full loop's 1.70 and 2975, at 50/50 for both. On
#   noisy, at equal correctness (47/50), the full loop is far cheaper (4162 against 5908 tokens/task).
# - *On the first tasks of each request type or case*, which is where every off-target drift task is
#   (cell above): status questions about a missing order (22, 24) or a fresh pending one (32, 42) take a
#   call more than the oracle until "when query_database finds nothing: skip query_payment_api" is active
#   (from task 24) and "... age under 30 min: skip query_payment_api" is (from task 42); charges questions
#   37 and 38 (the first since task 10) and deliveries 21 and 45 take one extra call each until their
#   rules are active (from tasks 38 and 45).
#
# **Issue 16's targets, as far as these outputs measure them.**
# - *drift, correct again after each change*: met; every post-change window is 15/15. *Calls within 1.2x
#   the oracle within 5 tasks*: met after the settlement-lag change (no task off target) and after the
#   provider failure (on target until task 75, a delivery for a missing order); not met after the cache
#   disappears (last off-target task 32, 12 tasks in) or the refund window change (last one 45, 10 tasks
#   in). Those late misses are kinds the loop had not learned yet (above), not old rules the change made
#   wrong: no lesson in the drift memory has a single failure.
# - *drift, the invalidated rule inactive within 10 tasks*: nothing was invalidated or removed. The two
#   cache lessons stay "active" to the end, but no prompt carried either of them from task 21 on (0 uses in
#   the drift memory table).
# - *never below bare ReAct in any 10-task window after task 10*: met on all four changing scenarios.
# - *noisy, harm against a clean memory*: met; with the bad lessons the loop is one task *more* correct
#   (47/50 against 46/50, "-2 points") and makes 4.7% more calls (1.80 against 1.72; target 5%).
#   *Every bad lesson inactive within 10 tasks*: not met. "when any task: call query_payment_api" stays
#   active, goes into 21 prompts and is up-voted all 21 times, never down: its provider calls are not
#   counted as waste. It is the only bad lesson that reached a prompt ("when status is pending: answer"
#   stays active but was never used; the special case stays a candidate), so the 4.7% is its doing.
# - *seasons, the returning type within 1.2x the oracle within 3 tasks*: the first status question back
#   (71) makes 3 calls against 1, the second (72) is on target; one later relapse (80: 3 against 2,
#   the window's one wrong call) puts the status row's "settled after" at 7 of 13 tasks. 13/13 correct.
# - *rephrased, within 5% of the canonical calls*: not measurable here, because the held-out windows ask
#   different tasks than the trained window; no `bench` command asks the same tasks in both wordings.
#   Against each window's oracle: held-out Chinese 1.11x, trained phrasings 1.09x (within 5% of each
#   other), held-out English 1.22x. The English excess is in charges (1 task, 2 calls against 1) and
#   deliveries (1.75 against 1.00), types the loop saw once and twice before learning froze at task 30;
#   deliveries are off target in the trained-phrasings window too (2.00 against 1.00). Correctness is the
#   same: 15/15 in all three test windows.
# - *static, within 1.05x the oracle in tasks 21-50*: met, 1.53 against 1.50 calls (1.02x).
# - *full >= every ablation on every scenario*: not met (no write threshold, above).
#
# **pass^4** equals pass^1 for both agents on every scenario: the four model seeds give each task the same
# verdict, so on these scenarios pass^k separates nothing.
#
# Notebook 06 stays the capstone on the static scenario.
