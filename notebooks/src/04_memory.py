# %% [markdown]
# # 04 · Long-term memory, and the guards that keep it clean
#
# **What you will build:** a memory of *experiences*, the rules the reflector wrote with their track
# record, that the agent consults before each task; and the guards that keep a bad lesson from doing
# lasting harm: a write threshold, votes, confidence, decay and expiry.
#
# In notebook 03 one reflection, pasted into the prompt by hand, cut calls per task from 2.82 to 1.64.
# Now the agent does it alone, task after task: **retrieve** the strongest lessons before a task, run
# it, let the run **vote** on the lessons it was given, **reflect** on a wrong answer or on waste, and
# **offer** the new rules to memory. Memory decides what to keep.

# %%
from datetime import timedelta

import pandas as pd
from IPython.display import Markdown

from ralph_mini import model_from_env
from ralph_mini.clock import FakeClock
from ralph_mini.loop import run_loop
from ralph_mini.measure import record, run_suite, summarize
from ralph_mini.memory import Memory, MemoryConfig, decay_factor
from ralph_mini.memory_file import MemoryFile, journal
from ralph_mini.votes import apply_vote
from ralph_mini.widgets import MemoryInspector, plot_decay, plot_learning_curve, progress
from ralph_mini.worlds import orders

model = model_from_env(habits=orders.HABITS)
suite = orders.make_suite(n=50, seed=7)
tools = suite.world.tools()
STATUS = "status"  # the order desk's one task type: memory keeps its lessons under it

# %% [markdown]
# ## A memory from scratch
#
# A handful of lessons over a week, as the loop would hand them to memory: each event is a task whose
# reflection proposed a rule, or a run with the rule in its prompt that voted on it (up: it helped;
# down: it wasted calls). One rule is proposed only once; one helps three times, then wastes calls twice.

# %%
# a handful of lessons over a week
CACHE_FIRST = "when any task: start with query_local_cache"
SKIP_DB = "when query_local_cache finds the order: skip query_database"
PROVIDER = "when query_database finds nothing: call query_payment_api"
FRESH = "when status is pending and age under 30 min: skip query_payment_api"
START = FakeClock().now  # 2025-03-10 12:00, day 0
# fmt: off
EVENTS = [  # (day, rule, what): the task that proposed it, or the vote of a run that used it
    (0, CACHE_FIRST, "t1"), (0, SKIP_DB, "t1"), (0, PROVIDER, "t1"),
    (1, CACHE_FIRST, "t2"), (1, PROVIDER, "t2"), (1, FRESH, "t2"),
    (2, FRESH, "t3"), (2, FRESH, "up"), (2, CACHE_FIRST, "up"),
    (3, CACHE_FIRST, "up"), (3, PROVIDER, "up"), (4, CACHE_FIRST, "up"), (4, PROVIDER, "up"),
    (5, CACHE_FIRST, "up"), (5, PROVIDER, "up"), (6, CACHE_FIRST, "up"), (6, PROVIDER, "down"),
    (7, CACHE_FIRST, "up"), (7, PROVIDER, "down"),
]
# fmt: on

# %% [markdown]
# **From scratch: the write threshold, confidence, votes, decay and expiry.** A lesson is a dict.
# *Write threshold*: a rule stays a candidate until two separate tasks proposed it. *Votes* fade: each
# new vote makes the earlier ones count 0.5 ** (1/5) as much, so a vote counts half after five more;
# a rule with two failures whose faded down-votes outweigh its up-votes is removed. *Confidence*: n / (n
# + 1) for n pieces of evidence (tasks that proposed it, runs it helped), times its track record. The
# *weight* retrieval ranks by: confidence, halved for every week without a hit, halved again once
# stale (two weeks), and 0 after 30 days (*expired*).


# %%
# from scratch: the memory's write threshold, confidence, votes, decay and expiry
def propose(memory, rule, task_id, now, threshold=2):
    """A reflection offers a rule: written (active) once `threshold` separate tasks proposed it."""
    new = {"tasks": set(), "status": "candidate", "up": 0.0, "down": 0.0, "ok": 0, "failed": 0, "hit": now}
    lesson = memory.setdefault(rule, new)
    lesson["tasks"].add(task_id)
    if lesson["status"] == "candidate" and len(lesson["tasks"]) >= threshold:
        lesson["status"], lesson["hit"] = "active", now


def vote(lesson, up, now, half_life=5, max_failures=2):
    """A run with the rule in its prompt votes; the earlier votes fade."""
    keep = 0.5 ** (1 / half_life)
    lesson["up"], lesson["down"] = lesson["up"] * keep + up, lesson["down"] * keep + (not up)
    lesson["ok" if up else "failed"] += 1
    lesson["hit"] = now  # it was used: its clock restarts
    if lesson["failed"] >= max_failures and lesson["down"] > lesson["up"]:
        lesson["status"] = "removed"


def confidence(lesson):
    n = len(lesson["tasks"]) + lesson["ok"]
    return n / (n + 1) * (lesson["up"] + 1) / (lesson["up"] + lesson["down"] + 1)


def weight(lesson, now, half_life_days=7, stale_days=14, expire_days=30):
    days = (now - lesson["hit"]) / timedelta(days=1)
    if lesson["status"] != "active" or days > expire_days:
        return 0.0  # a candidate, a removed rule or an expired one is never retrieved
    return confidence(lesson) * 0.5 ** (days / half_life_days) * (0.5 if days > stale_days else 1)


by_hand = {}
for day, rule, what in EVENTS:
    now = START + timedelta(days=day)
    if what in ("up", "down"):
        vote(by_hand[rule], what == "up", now)
    else:
        propose(by_hand, rule, what, now)
for rule, lesson in by_hand.items():
    week, month = (weight(lesson, START + timedelta(days=day)) for day in (8, 40))
    print(
        f"{lesson['status']:9} confidence {confidence(lesson):.2f}, weight day 8 {week:.2f}, day 40 {month:.2f}: {rule}"
    )

# %% [markdown]
# **The package's version: `memory.Memory`** (`propose`, `record_hits`, `weight`) and
# `votes.apply_vote`, on the same events. With two of its guards switched off it gives the same
# statuses, confidences and weights. With its defaults, two rows differ, each a guard the hand memory
# lacks:
#
# - **probation**: a rule proposed once is injected at once, *on probation*; its first up-vote makes it
#   active, its first down-vote ends it. So `SKIP_DB` carries weight where the hand memory's candidate
#   has none;
# - **judged by what it does now**: two down-votes among a rule's last three make it *invalid*, whatever
#   its past. The hand memory still trusts `PROVIDER` (its faded up-votes outweigh its two failures);
#   the package has stopped using it.


# %%
def replay(config: MemoryConfig) -> dict:
    clock = FakeClock(START)
    memory, found = Memory(clock, config), {}
    for day, rule, what in EVENTS:
        clock.now = START + timedelta(days=day)
        if what in ("up", "down"):
            memory.record_hits([found[rule]])
            when = clock().isoformat(timespec="minutes")
            apply_vote(found[rule], what == "up", "a wasted call", config, when)
        else:
            found[rule] = memory.propose(rule, task_id=what, run_id=what, task_type=STATUS)[1]
    clock.now = START + timedelta(days=8)
    return {rule: f"{e.status} {e.confidence:.2f} / {memory.weight(e):.2f}" for rule, e in found.items()}


essentials = MemoryConfig(probation=False, recent_failures=10**9, max_wrong_answers=10**9)
day_8 = START + timedelta(days=8)
hand = {
    rule: f"{lesson['status']} {confidence(lesson):.2f} / {weight(lesson, day_8):.2f}"
    for rule, lesson in by_hand.items()
}
pd.DataFrame(
    {"by hand": hand, "package, two guards off": replay(essentials), "package": replay(MemoryConfig())}
).rename_axis("status, confidence / weight on day 8")

# %% [markdown]
# What else the package adds, each a guard of the sections below: a filter that refuses a rule naming
# one order, customer, amount or date; one row per lesson however it is worded; contradicted rules
# marked invalid; rules kept with their status and the reason, never deleted; and a file.
#
# ## The agent with a memory
#
# Now the real thing: notebook 01's 50 tasks through the loop (`loop.run_loop`), with an empty memory
# that the reflections fill. Memory runs on an injected clock; six hours pass between tasks, so the 50
# tasks span twelve days.

# %%
clock = FakeClock()
memory = Memory(clock, MemoryConfig())
results = run_loop(
    suite.tasks,
    model,
    tools,
    memory,
    words=orders.WORDS,
    between_tasks=lambda m: clock.advance(hours=6),
    progress=progress,
)
for result in results[:5]:
    print(f"{result.task.task_id} {result.record.calls} calls; injected {len(result.injected)} rules")
    for note in result.memory_notes:
        print("    memory:", note)

# %% [markdown]
# Task T002 wasted three calls; its reflection proposed three rules, and probation put each into the
# next prompts at once. T003 validated one, T004 another: a run in which the rule's whole trigger held
# and that ended correct without waste is an up-vote, and the first up-vote makes a rule active.
#
# ## The learning curve
#
# Calls per task, task by task (a rolling mean over five tasks), against bare ReAct on the same tasks
# and the oracle:

# %%
bare = [record(t) for t in run_suite(suite.tasks, model, tools)]
ralph = [r.record for r in results]
plot_learning_curve(
    {"bare ReAct": [r.calls for r in bare], "ReAct + reflector + memory": [r.calls for r in ralph]},
    oracle=[t.oracle_calls for t in suite.tasks],
)

# %%
rows = [
    summarize(bare[:20], "bare ReAct, tasks 1-20"),
    summarize(ralph[:20], "with memory, tasks 1-20"),
    summarize(bare[20:], "bare ReAct, tasks 21-50"),
    summarize(ralph[20:], "with memory, tasks 21-50"),
]
pd.DataFrame(rows).set_index("agent").T

# %% [markdown]
# By tasks 21-50 the agent with memory is at the oracle, with no wrong calls and every answer still
# correct. (Its tokens per task include every reflection it paid for.) Here is what it wrote for
# itself, as the seed's author liked to read it once a month:

# %%
Markdown(journal(memory))

# %% [markdown]
# "Hits" counts the prompts a rule was injected into; "ok" and "wrong" count only the runs in which its
# *whole* trigger held (the pending rule is neither credited nor blamed on a pending order older than 30
# minutes). Each line carries the confidence and the weight of the cell you wrote: "1 tasks" because
# each rule was proposed once and then earned its place by its votes.
#
# The same memory, live. The sliders *preview* other settings without changing the memory: a shorter
# half-life or expiry fades and expires rules sooner; a write threshold of 1 shows which candidates a
# single task would have written. **Export journal** writes the journal to a markdown file.

# %%
MemoryInspector(memory, journal_path="runs/journal-04.md")

# %% [markdown]
# ## Memory pollution: a special case that hurts ordinary tasks
#
# The seed article's hardest lesson: a few rules learned from a special case, retrieved for ordinary
# tasks, made the agent *worse*. Suppose one day the agent met an order that was in neither the cache
# nor anywhere else, and a reflection concluded: *when the cache finds nothing, answer* (not found). True
# that day; false for every order that is simply too old for the cache. Written with the order's id, the
# generalization filter keeps it out:

# %%
BAD = "when query_local_cache finds nothing: answer"
Memory(FakeClock()).propose(BAD + " for E404", task_id="special", run_id="S1", task_type=STATUS)[0]


# %% [markdown]
# Without the id it is a perfectly general-*looking* rule. Plant it in an empty memory and run the same
# 50 tasks four times: with every guard off (written at once, never invalidated or removed); with the
# guards; with the guards but no probation (a rule proposed once waits, unseen, as a candidate); and
# forced past the write threshold (someone claims it saves many calls), so only the votes can help.


# %%
def planted_run(config: MemoryConfig, calls_saved: int = 0) -> dict:
    clock = FakeClock()
    memory = Memory(clock, config)
    decision, _ = memory.propose(
        BAD, task_id="special", run_id="S1", task_type=STATUS, calls_saved=calls_saved
    )
    runs = run_loop(
        suite.tasks,
        model,
        tools,
        memory,
        words=orders.WORDS,
        between_tasks=lambda m: clock.advance(hours=6),
        progress=progress,
    )
    records = [r.record for r in runs]
    blamed = [n for r in runs for n in r.memory_notes if BAD in n]
    return {
        "memory": decision,
        "wrong answers": sum(not r.correct for r in records),
        "wrong on": ", ".join(sorted({r.kind for r in records if not r.correct})) or "-",
        "calls/task": round(sum(r.calls for r in records) / len(records), 2),
        "what happened to the rule": blamed[-1] if blamed else "never used",
    }


never = 10**9
no_guards = MemoryConfig(
    confirm_threshold=1, max_failures=never, recent_failures=never, max_wrong_answers=never
)
pollution = pd.DataFrame(
    {
        "guards off": planted_run(no_guards),
        "guards on": planted_run(MemoryConfig()),
        "guards on, no probation": planted_run(MemoryConfig(probation=False)),
        "forced in": planted_run(MemoryConfig(), calls_saved=5),
    }
).T
pollution

# %% [markdown]
# Without guards the rule costs eight wrong answers out of fifty, every one an order the cache does not
# hold; each down-votes it, but nothing ever takes it out. With the guards it does harm once: probation
# injects it at once, its first wrong answer ends it. That one wrong answer is the price of probation:
# without it the rule waits as a candidate that no second task confirms, and costs nothing. Forced in,
# it also does harm once: a wrong answer it could have caused makes an active rule invalid at once. It
# stays in memory, flagged, so a person can see what happened.
#
# ## Recent evidence outweighs old: vote decay
#
# First, every guard of the memory, with its default:
#
# <details><summary>Every guard of <code>memory.py</code>, <code>votes.py</code>, <code>rule_forms.py</code> and <code>lesson_guards.py</code>, with its default</summary>
#
# | guard | what it does | default |
# |---|---|---|
# | generalization filter | rejects a rule that names an order, customer, amount, date or transaction | always on |
# | write threshold | a rule is active once proposed in N separate tasks, or it saves K calls alone, or it was learned from an answer the grader rejected | N = 2, K = 2 |
# | probation | a rule proposed once is injected at once; its first up-vote makes it active, its first down-vote invalid | on |
# | merge (dedup) | a new wording, action order or near duplicate of a stored rule strengthens it instead of adding a row | ages within 20% |
# | votes | only runs where the rule's whole trigger held vote: up for a correct run without waste on its tools, down for calls wasted on a tool it sent the agent to (`waste.py`), or a wrong answer it could have caused | always on |
# | judged by what it does now | 2 down among its last 3 votes, or 1 wrong answer it could have caused, make an active rule invalid | 2 of 3; 1 |
# | vote decay | each new vote weighs the earlier ones by 0.5 ** (1/5): a vote counts half after five more | half-life 5 votes |
# | removal | at N failures, once the decayed down-votes outweigh the up-votes, the rule is removed | N = 2 |
# | contradiction | a rule that becomes active, or that a new task confirms, marks invalid a live rule with the same trigger and the opposite action, or a wider rule it is a counterexample to; so does a tool the world stops offering | always on |
# | decay and expiry | weight halves every week without a hit, halves again once not hit for two weeks, gone after 30 days | 7 / 14 / 30 days |
#
# </details>

# %%
for field, value in vars(MemoryConfig()).items():
    print(f"{field:22} {value}")

# %% [markdown]
# Votes decay *by votes* (`votes.decayed`), as in the cell you wrote: n up-votes in a row weigh
# (1 - k ** n) / (1 - k) with k = 0.5 ** (1/5), never more than 1 / (1 - k) = 7.73. This is the
# recency of Generative Agents (Park et al. 2023, there per game hour) applied to the up- and down-votes
# ExpeL keeps on each insight (Zhao et al. 2024). Twenty-three successes, then failures:

# %%
from ralph_mini.votes import decayed

up = down = 0.0
for n, is_up in enumerate([True] * 23 + [False] * 5, 1):
    up, down = decayed(up, down, is_up, MemoryConfig().vote_half_life)
    if n >= 23:
        print(f"vote {n:2} ({'up' if is_up else 'down'}): up {up:.2f}, down {down:.2f}")

# %% [markdown]
# After 23 successes the up-votes weigh 7.41, not 23; five failures then outweigh them. Counted without
# decay, the failures would have to outnumber all 23 successes. The package acts sooner still: two
# failures among the last three votes make the rule invalid.
#
# ## One lesson, one row; a contradicted lesson is invalid
#
# A reflector writes the same lesson many ways. Memory parses each proposal into the grammar
# (`rule_forms.normalize_wording`) and merges it into the experience that holds the same lesson, so a
# new wording *strengthens* a rule instead of adding a row. And when a rule becomes active with the same
# trigger as a live one and the opposite action (skip T against call T), the old one is marked `invalid`
# from that moment, with why: never silently deleted (`valid_from` / `invalid_from`, as Zep keeps
# facts). Four proposals, six hours apart:

# %%
demo_clock = FakeClock()
demo = Memory(demo_clock)
for task_id, text in [
    ("t1", "when query_local_cache finds the order: skip query_database"),
    ("t2", "If query_local_cache finds the order, never call query_database."),
    ("t3", "when query_local_cache finds the order: call query_database"),
    ("t4", "when query_local_cache finds the order: call query_database"),
]:
    print(task_id, demo.propose(text, task_id=task_id, run_id=task_id, task_type=STATUS)[0])
    demo_clock.advance(hours=6)
pd.DataFrame(
    {
        "status": e.status,
        "valid_from": e.valid_from,
        "invalid_from": e.invalid_from or "-",
        "why": e.status_reason,
    }
    for e in demo.experiences.values()
).set_index(pd.Index([e.rule for e in demo.experiences.values()], name="rule"))

# %% [markdown]
# The free-form wording of t2 counted as the second task confirming t1's rule: one row, written. The
# opposite rule went on probation at t3 (a rule on probation contradicts nothing); the moment t4
# confirmed it, the old rule became invalid, kept with the reason. A wider rule meets the same fate when
# a new task confirms a narrower rule it is a counterexample to, and so does a rule whose tool the world
# no longer offers (notebook 09's cache disappears).
#
# ## Time: decay and expiry
#
# Rules that are used stay fresh; rules that are not, fade. Move the clock of the learned memory on,
# with no more tasks, and watch the weights (the strongest rule first):

# %%
last_task_time = clock.now
snapshots = {}
for days in (0, 7, 14, 15, 30, 31):
    clock.now = last_task_time + timedelta(days=days)
    snapshots[f"day +{days}"] = {e.rule: round(memory.weight(e), 3) for e in memory.experiences.values()}
pd.DataFrame(snapshots)

# %% [markdown]
# The weight halves in a week, and once a rule has not been hit for two weeks it is stale and halved
# again. After 30 days it is no longer retrieved. As a curve, drawn by the memory's own `decay_factor`:

# %%
plot_decay(memory.config)

# %% [markdown]
# Nothing is lost: a sweep flags an expired rule `expired` in the file, with the reason, and a rule
# proposed again comes back to life.

# %%
expired = memory.sweep()
print(f"{len(expired)} expired:", *[f"{e.rule} ({e.status_reason})" for e in expired], sep="\n- ")
print("\nday-31 weight by the closed form:", round(decay_factor(31, memory.config), 3))

# %% [markdown]
# ## Saving it
#
# One JSON file, written atomically (to a temporary file, then renamed) under a file lock, so a crash
# leaves the old or the new memory, and two notebooks cannot interleave their writes:

# %%
store = MemoryFile("runs/memory-04.json")
store.path.unlink(missing_ok=True)
store.save(memory)
reloaded = store.load(clock)
print(
    store.path,
    "->",
    len(reloaded.experiences),
    "experiences; same as in memory:",
    reloaded.experiences == memory.experiences,
)

# %% [markdown]
# ## What changed
#
# Memory turns one-off reflections into lasting behaviour, and the guards keep one bad lesson from
# turning into lasting damage:

# %%
late_bare, late_ralph = summarize(bare[20:], "bare ReAct"), summarize(ralph[20:], "with memory")
pd.DataFrame(
    {
        "bare ReAct": [late_bare["calls/task"], late_bare["wrong calls"], late_bare["correct"], "n/a"],
        "reflector + memory": [
            late_ralph["calls/task"],
            late_ralph["wrong calls"],
            late_ralph["correct"],
            " / ".join(str(n) for n in pollution["wrong answers"]),
        ],
    },
    index=[
        f"calls/task, tasks 21-50 (oracle {late_bare['oracle calls/task']:.2f})",
        "wrong calls, tasks 21-50",
        "correct, tasks 21-50",
        "wrong answers from a planted bad rule: " + " / ".join(pollution.index),
    ],
)

# %% [markdown]
# Keyword retrieval by tags works here because every lesson is phrased in one grammar and tagged by
# its trigger. Notebook 05 asks what happens when the tasks and the lessons are worded differently.
