# %% [markdown]
# # 04 · Long-term memory, and the guards that keep it clean
#
# **What you will build:** a memory of *experiences* (rules the reflector wrote, with their track
# record) that the agent consults before each task, with the guards the seed article needed after its
# memory poisoned its own agent, and those that keep a lesson true once the world changes.
#
# In notebook 03 one reflection, pasted into the prompt by hand, cut calls per task from 2.82 to 1.64.
# Now the agent does it alone, task after task:
#
# 1. before a task, **retrieve** the strongest experiences of the task's type and inject them into the
#    prompt, within one budget: at most 3 lessons and 15% of the context (`react.LessonBudget`);
# 2. run the task (notebook 01's ReAct loop); if an observation reveals a situation memory knows
#    about (say, a pending order), retrieve once more, within the same budget;
# 3. the grader's verdict and the run's waste **vote** on the injected rules whose *whole* trigger held
#    in the run (age included);
# 4. **reflect** (notebook 03) when the grader rejected the answer, when it rested on no look-up, or
#    when the run wasted calls and its task type recurs or the same error repeats; then *offer* the
#    rules to memory. Memory decides.
#
# The hard part is step 4. The article's lesson: a few rules learned from a special case, retrieved for
# ordinary tasks, made the agent *worse*. Hence the guards, in `ralph_mini/memory.py`, `votes.py`,
# `rule_forms.py` and `lesson_guards.py`:
#
# | guard | what it does | default |
# |---|---|---|
# | generalization filter | rejects a rule that names an order, customer, amount, date or transaction | always on |
# | write threshold | a rule stays a *candidate* until proposed in N separate tasks, or it saves K calls alone, or it was learned from an answer the grader rejected | N = 2, K = 2 |
# | merge (dedup) | a new wording, action order or near duplicate of a stored rule strengthens it instead of adding a row | ages within 20% |
# | votes | only runs where the rule's whole trigger held vote: up for a correct run without waste on its tools, down for calls wasted on a tool it sent the agent to (`waste.py`), or a wrong answer it could have caused | always on |
# | vote decay | each new vote on a rule weighs its earlier ones by 0.5 ** (1/5): a vote counts half after five more | half-life 5 votes |
# | removal | at N failures, once the decayed down-votes outweigh the up-votes, the rule is *removed* | N = 2 |
# | contradiction | a rule that becomes active, or that a new task confirms, marks *invalid* an active rule with the same trigger and the opposite action, or a wider rule it is a counterexample to; so does a tool the world stops offering | always on |
# | decay and expiry | weight halves every week without a hit, halves again once not hit for two weeks, gone after 30 days | 7 / 14 / 30 days |

# %%
import pandas as pd

from ralph_mini import model_from_env
from ralph_mini.clock import FakeClock
from ralph_mini.loop import LoopConfig, run_loop
from ralph_mini.measure import record, run_suite, summarize
from ralph_mini.memory import Memory, MemoryConfig, decay_factor
from ralph_mini.memory_file import MemoryFile, journal
from ralph_mini.widgets import MemoryInspector, plot_decay, plot_learning_curve, progress
from ralph_mini.worlds import orders

model = model_from_env(habits=orders.HABITS)
suite = orders.make_suite(n=50, seed=7)
tools = suite.world.tools()
STATUS = "status"  # the order desk's one task type: memory keeps its lessons under it
from ralph_mini.rule_forms import AGE_TOLERANCE

# the guards' defaults, as in the table above; the lesson budget; the near-duplicate age tolerance
MemoryConfig(), LoopConfig().budget, AGE_TOLERANCE

# %% [markdown]
# ## The agent with a memory
#
# Memory runs on an injected clock, so time is part of the experiment: here six hours pass between
# tasks, so the 50 tasks span twelve days.

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
# Task T002 wasted three calls; its reflection produced three rules, but one task is not enough: they
# wait as candidates. T004 proposed two of them again, from a *different* task, and they were written.
# From T005 on the agent starts each task with what it has learned.
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
# By tasks 21-50 the agent with memory is within a few percent of the oracle, with no wrong calls and
# every answer still correct. (Its tokens per task include every reflection it paid for.) Here is what
# it wrote for itself, as the seed's author liked to read it once a month:

# %%
print(journal(memory))

# %% [markdown]
# "Hits" counts the prompts a rule was injected into; "ok" and "wrong" count only the runs in which its
# *whole* trigger held. The pending rule was injected 14 times but earned only 4 up-votes: every run was
# correct, so on the other 10 its trigger did not hold (the run saw a pending order, but none under 30
# minutes old), and a rule is neither credited nor blamed where it did not apply.
#
# Each line carries two numbers. **Confidence** is how general the rule has proved, from 0 to 1. Its
# evidence is every separate task whose reflection proposed it (the journal's "tasks") plus every run
# in which it was validated ("ok"). With n pieces of evidence that gives n / (n + 1): one confirmation
# gives 0.5 (the candidate above), 48 give 0.98 (the first rule). Why: a rule that held in many
# separate tasks is more likely to be general than one seen once, yet no count makes it certain. That
# is multiplied by its *recent* track record in decayed votes (below), (up + 1) / (up + down + 1), so
# recent failures pull it down more than old ones. A rule that names one order, customer, amount or
# date gets 0 however often it was seen: it cannot be general. (`Experience.confidence` and
# `generalization_confidence` in `ralph_mini/memory.py`.) **Weight** is confidence times the decay of
# the section on time below, and 0 for a rule that is not active: it is what retrieval ranks by. The
# numbers behind the journal:

# %%
from ralph_mini.memory import generalization_confidence

pd.DataFrame(
    {
        "rule": e.rule,
        "n = tasks + ok": e.confirmations + e.validations,
        "n / (n + 1)": generalization_confidence(e.rule, e.confirmations + e.validations),
        "votes up / down": f"{e.votes_up:.2f} / {e.votes_down:.2f}",
        "track record": (e.votes_up + 1) / (e.votes_up + e.votes_down + 1),
        "confidence": e.confidence,
    }
    for e in memory.experiences.values()
).set_index("rule").round(2)

# %% [markdown]
# And a rule that names an order scores 0, even with fifty pieces of evidence:

# %%
generalization_confidence("when query_local_cache finds nothing: answer for E404", evidence=50)

# %% [markdown]
# The same memory, live. The sliders *preview* other settings without changing the memory: a shorter
# half-life or expiry fades and expires rules sooner; a write threshold of 1 shows which candidates a
# single task would have written (grey rows are never retrieved). **Export journal** writes the journal
# above to a markdown file. The inspector reads the memory's clock whenever it redraws: once the cells
# below have moved that clock a month on, it shows the month-old memory.

# %%
MemoryInspector(memory, journal_path="runs/journal-04.md")

# %% [markdown]
# ## Memory pollution: a special case that hurts ordinary tasks
#
# Suppose one day the agent met an order that was in neither the cache nor anywhere else, and some
# reflection concluded: *when the cache finds nothing, answer* (not found). True that day; false for
# every order that is simply too old for the cache.
#
# First, the generalization filter. Written with the order's id, it never gets in:

# %%
BAD = "when query_local_cache finds nothing: answer"
Memory(FakeClock()).propose(BAD + " for E404", task_id="special", run_id="S1", task_type=STATUS)[0]


# %% [markdown]
# Without the id it is a perfectly general-*looking* rule. Run the same 50 tasks three times with it
# planted in an empty memory: once with the guards switched off (written at once; each wrong answer
# still down-votes it, but with no limit on failures it is never removed), once with the guards (the
# write threshold keeps it a candidate), and once forced past the threshold (someone claims it saves
# many calls), so only the down-votes can save us.


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
        "correct": sum(r.correct for r in records),
        "wrong answers": sum(not r.correct for r in records),
        "wrong on": ", ".join(sorted({r.kind for r in records if not r.correct})) or "-",
        "down-votes": sum(n.startswith("down-voted") for n in blamed),
        "calls/task": round(sum(r.calls for r in records) / len(records), 2),
        "what happened to the rule": blamed[-1] if blamed else "never used",
    }


no_guards = MemoryConfig(confirm_threshold=1, max_failures=10**9)
pollution = pd.DataFrame(
    {
        "guards off": planted_run(no_guards),
        "guards on": planted_run(MemoryConfig()),
        "forced in, down-votes on": planted_run(MemoryConfig(), calls_saved=5),
    }
).T
pollution

# %% [markdown]
# Without guards the rule costs eight wrong answers out of fifty, every one an order the cache does not
# hold (paid but uncached, or refunded), and it even *looks* efficient: 1.32 calls per task, fewer than
# the 1.7 with the guards. Each of the eight wrong answers down-votes it, but with no limit on failures
# it is never removed: it stays in memory, active, to the last task. With the write threshold it never
# leaves the candidates. Forced in, it does harm twice, is down-voted twice and removed: two failures,
# and its recent down-votes outweigh its up-votes. It stays in the file, flagged, so a person can see
# what happened.
#
# ## Recent evidence outweighs old: vote decay
#
# A rule that was right for weeks can turn wrong when the world changes (notebook 09). If every vote
# counted forever, twenty-odd old successes would shield it from as many new failures. So votes decay
# *by votes* (`votes.decayed`): each new vote on a rule multiplies its earlier ones by
# k = 0.5 ** (1 / half-life), with a half-life of 5 votes (`MemoryConfig.vote_half_life`), so a vote
# counts half after five more votes on that rule, and n up-votes in a row weigh (1 - k ** n) / (1 - k),
# never more than 1 / (1 - k). This is the recency of Generative Agents (Park et al. 2023: a memory's
# score decays exponentially, there per game hour, here per vote) applied to the up- and down-votes
# ExpeL keeps on each insight (Zhao et al. 2024: an insight is dropped when its votes reach zero). We
# count votes rather than hours because a rule is judged by the tasks it meets: one met rarely keeps its
# record, one met often is judged on its last few. Twenty-three successes, then failures:

# %%
from ralph_mini.votes import decayed

half_life = MemoryConfig().vote_half_life
print(f"k = {0.5 ** (1 / half_life):.3f}; ceiling 1 / (1 - k) = {1 / (1 - 0.5 ** (1 / half_life)):.2f}")
up = down = 0.0
for n, vote in enumerate([True] * 23 + [False] * 5, 1):
    up, down = decayed(up, down, vote, half_life)
    if n >= 23:
        print(f"vote {n:2} ({'up' if vote else 'down'}): up {up:.2f}, down {down:.2f}")

# %% [markdown]
# After 23 successes the up-votes weigh 7.41, not 23; five failures in a row then outweigh them (3.86
# down against 3.70 up), and a rule with at least `max_failures` failures whose down-votes outweigh its
# up-votes is removed. Counted without decay, the failures would have to outnumber all 23 successes.
# That is also why the journal's busiest rules carry 7.65 and 7.71 up-votes, not 33 and 46: only the
# recent votes count for much.
#
# ## One lesson, one row; a contradicted lesson is invalid
#
# A reflector writes the same lesson many ways. Memory parses each proposal into the grammar
# (`rule_forms.normalize_wording`), puts its actions in a canonical order, and merges it into an
# experience that holds the same lesson (or a near duplicate: the same trigger and actions, age limits
# within 20%), so a new wording *strengthens* a rule instead of adding a row. And when a rule becomes
# active with the same trigger as an active one and the opposite action (skip T against call T), the
# old one is marked `invalid` from that moment, with why: never silently deleted (`valid_from` /
# `invalid_from`, as Zep keeps facts). Four proposals, six hours apart:

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
# opposite rule waited as a candidate until a second task proposed it; the moment it was written, the
# old rule became invalid, kept with the reason.
#
# Two more ways a rule turns false. **A counterexample**: "when status is pending: answer" says every
# pending order can be answered at once. A run that shows an *old* pending order needs the provider
# ("... and age over 30 min: call query_payment_api") is a case where the wide rule is wrong, so a new
# task confirming the narrow rule invalidates the wide one. (The other way round, a new wide rule
# against an old narrow one, memory keeps both: the narrow one may be the wide one's exception, and
# the votes decide.) **A tool that is gone**: when a task's world no longer offers the tool a rule
# sends the agent to, the rule is invalid from that task on (notebook 09's cache disappears). Both
# come back only through new tasks confirming them.

# %%
demo_clock = FakeClock()
demo = Memory(demo_clock)
over_30 = "when status is pending and age over 30 min: call query_payment_api"
for task_id, text in [("s1", over_30), ("s2", over_30), ("s3", "when status is pending: answer"),
                      ("s4", "when status is pending: answer"), ("t5", over_30)]:  # fmt: skip
    print(task_id, demo.propose(text, task_id=task_id, run_id=task_id, task_type=STATUS)[0])
    demo_clock.advance(hours=6)
demo.propose("when any task: start with query_local_cache", task_id="s1", run_id="s1", task_type=STATUS)
demo.propose("when any task: start with query_local_cache", task_id="s2", run_id="s2", task_type=STATUS)
print("the cache is gone:", demo.invalidate_unoffered(["query_database", "query_payment_api"], STATUS))
pd.DataFrame({"status": e.status, "why": e.status_reason} for e in demo.experiences.values()).set_index(
    pd.Index([e.rule for e in demo.experiences.values()], name="rule")
)

# %% [markdown]
# **What counts as a wasted call** is defined once, in `ralph_mini/waste.py`, and the fast loop, the
# votes and the write threshold all use it: a wrong call; a repeat of what the run already knew; a
# "not found" after another tool found the order; and a look-up *covered* by another: every value it
# gave the answer, another call gave too, with more. That last one matters for a rule like "when any
# task: call query_payment_api". An agent that follows it asks the slow provider first, then the
# database, which has the status, the amount *and* the payment time. The provider call came first, so
# by "who said it first" it looks useful; by "could the answer do without it" it was waste, and the
# rule that sent the agent there pays for it.
#
# ## Time: decay and expiry
#
# Rules that are used stay fresh; rules that are not, fade. Move the clock of the learned memory on,
# with no more tasks, and watch the weights (the strongest rule first):

# %%
from datetime import timedelta

last_task_time = clock.now
snapshots = {}
for days in (0, 7, 14, 15, 30, 31):
    clock.now = last_task_time + timedelta(days=days)
    snapshots[f"day +{days}"] = {e.rule: round(memory.weight(e), 3) for e in memory.experiences.values()}
pd.DataFrame(snapshots)

# %% [markdown]
# The weight halves in a week (half-life 7 days), and once a rule has not been hit for two weeks it is
# stale and halved again. After 30 days it is no longer retrieved. As a curve, drawn by the memory's
# own `decay_factor`:

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
        "wrong answers from a planted bad rule: guards off / on / forced in",
    ],
)

# %% [markdown]
# Keyword retrieval by tags works here because every lesson is phrased in one grammar and tagged by
# its trigger. Notebook 05 asks what happens when the tasks and the lessons are worded differently.
