# %% [markdown]
# # 04 · Long-term memory, and the guards that keep it clean
#
# **What you will build:** a memory of *experiences* (rules the reflector wrote, with their track
# record) that the agent consults before each task, and the four guards the seed article needed
# after its memory poisoned its own agent.
#
# In notebook 03 one reflection, pasted into the prompt by hand, cut calls per task from 2.82 to 1.64.
# Now the agent does it alone, task after task:
#
# 1. before a task, **retrieve** the strongest experiences and inject them into the prompt;
# 2. run the task (notebook 01's ReAct loop); if an observation reveals a situation memory knows
#    about (say, a pending order), retrieve once more;
# 3. the answer's verdict **credits or down-votes** the rules that were in play;
# 4. if the run wasted calls, **reflect** (notebook 03) and *offer* the rules to memory. Memory decides.
#
# The hard part is step 4. The article's lesson: a few rules learned from a special case, retrieved for
# ordinary tasks, made the agent *worse*. Hence the guards, in `ralph_mini/memory.py` and `ralph_mini/lesson_guards.py`:
#
# | guard | what it does | default |
# |---|---|---|
# | generalization filter | rejects a rule that names an order, customer, amount, date or transaction | always on |
# | write threshold | a rule stays a *candidate* until proposed in N separate tasks (or it saves K calls alone) | N = 2, K = 2 |
# | down-votes | a wrong answer with the rule in play counts against it; removed past a limit | 2 failures |
# | decay and expiry | weight halves every week without a hit, halves again after two weeks, gone after 30 days | 7 / 14 / 30 days |

# %%
import pandas as pd

from ralph_mini import make_suite, model_from_env
from ralph_mini.clock import FakeClock
from ralph_mini.loop import run_loop
from ralph_mini.measure import record, run_suite, summarize
from ralph_mini.memory import Memory, MemoryConfig, decay_factor
from ralph_mini.memory_file import MemoryFile, journal
from ralph_mini.widgets import MemoryInspector, plot_decay, plot_learning_curve, progress

model = model_from_env()
suite = make_suite(n=50, seed=7)
tools = suite.world.tools()
MemoryConfig()  # the guards' defaults, as in the table above

# %% [markdown]
# ## The agent with a memory
#
# Memory runs on an injected clock, so time is part of the experiment: here six hours pass between
# tasks, so the 50 tasks span twelve days.

# %%
clock = FakeClock()
memory = Memory(clock, MemoryConfig())
results = run_loop(
    suite.tasks, model, tools, memory, between_tasks=lambda m: clock.advance(hours=6), progress=progress
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
# Each line carries two numbers. **Confidence** is how general the rule has proved, from 0 to 1. Its
# evidence is every separate task whose reflection proposed it (the journal's "tasks") plus every run
# with it in play that ended correct ("ok"). With n pieces of evidence it is n / (n + 1): one
# confirmation gives 0.5 (the candidate above), 48 give 0.98 (the first rule). Why: a rule that held in many separate tasks is more likely
# to be general than one seen once, yet no count makes it certain. That is multiplied by its track
# record, (ok + 1) / (ok + wrong + 1), so wrong answers with the rule in play pull it down. A rule that
# names one order, customer, amount or date gets 0 however often it was seen: it cannot be general.
# (`Experience.confidence` and `generalization_confidence` in `ralph_mini/memory.py`.) **Weight** is
# confidence times the decay of the section on time below, and 0 for a rule that is not active: it is
# what retrieval ranks by. The numbers behind the journal:

# %%
from ralph_mini.memory import generalization_confidence

pd.DataFrame(
    {
        "rule": e.rule,
        "n = tasks + ok": e.confirmations + e.validations,
        "n / (n + 1)": generalization_confidence(e.rule, e.confirmations + e.validations),
        "track record": (e.validations + 1) / (e.validations + e.failures + 1),
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
Memory(FakeClock()).propose(BAD + " for E404", task_id="special", run_id="S1")[0]


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
    decision, _ = memory.propose(BAD, task_id="special", run_id="S1", calls_saved=calls_saved)
    runs = run_loop(
        suite.tasks, model, tools, memory, between_tasks=lambda m: clock.advance(hours=6), progress=progress
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
# leaves the candidates. Forced in, it does harm twice, is down-voted twice and removed. It stays in the
# file, flagged, so a person can see what happened.
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
