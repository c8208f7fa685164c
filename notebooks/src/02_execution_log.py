# %% [markdown]
# # 02 · The execution log: see where the time goes
#
# **What you will build:** a logger around the bare ReAct agent from notebook 01 that writes one
# compact record per step (run, step, tool, arguments, status, latency, what came back) to a JSON Lines
# file, and the query that finds the wasted calls in it.
#
# Why: the seed article found that a reflector fed the whole chat transcript gives vague advice, while
# one fed a *compact step log* gives specific rules. The session to log: notebook 01's 50 tasks.

# %%
from pathlib import Path

import pandas as pd

from ralph_mini import grade, model_from_env
from ralph_mini.log import append_run, load_log, log_run, step_rows
from ralph_mini.measure import run_suite
from ralph_mini.waste import run_waste
from ralph_mini.widgets import progress
from ralph_mini.worlds import orders

pd.set_option("display.max_colwidth", 120)  # show a log record's whole observation
model = model_from_env(habits=orders.HABITS)
suite = orders.make_suite(n=50, seed=7)
tools = suite.world.tools()
traces = run_suite(suite.tasks, model, tools, progress=progress)

# %% [markdown]
# ## Log a session
#
# **From scratch: the step log.** One JSON object per line, one line per step of every run: which run,
# which step, the tool and its arguments, the status, the step's cost in virtual seconds (the tool's
# time plus the model's turn that chose it) and the observation. Reading it back is one `json.loads` a
# line.

# %%
# from scratch: the step log
import json


def write_log(path, traces):
    path.parent.mkdir(exist_ok=True)
    with open(path, "w", encoding="utf-8") as file:
        for number, trace in enumerate(traces, 1):
            for step in trace.steps:
                row = {
                    "run_id": f"R{number:03d}",
                    "step": step.index,
                    "tool": step.tool,
                    "args": step.arguments,
                    "status": step.status,
                    "latency_s": round(step.tool_latency_s + step.model_latency_s, 3),
                    "observation": step.observation,
                }
                file.write(json.dumps(row) + "\n")


def read_log(path):
    with open(path, encoding="utf-8") as file:
        return [json.loads(line) for line in file]


scratch_path = Path("runs/scratch-02.jsonl")
write_log(scratch_path, traces)
rows = read_log(scratch_path)
print(f"{len(rows)} lines in {scratch_path}; the first two:")
print(*scratch_path.read_text().splitlines()[:2], sep="\n")

# %% [markdown]
# **The package's version: `log.log_run`, `append_run`, `load_log`**: the same steps, tools, statuses
# and seconds. It adds a `run` line per run (question, time, answer, the grader's verdict, cost), so a
# reflector can read a run from the log alone; shorter arguments and observations; tokens; appending,
# never rewriting; and a loader that names the file and line of a bad line.

# %%
log_path = Path("runs/session-02.jsonl")
log_path.unlink(missing_ok=True)
for number, trace in enumerate(traces, 1):
    append_run(log_path, *log_run(trace, f"R{number:03d}", grade(trace.task, trace.answer).correct))
records, runs = load_log(log_path)
print(f"{len(records)} steps in {len(runs)} runs; the first two lines:")
print(*log_path.read_text().splitlines()[:2], sep="\n")
keys = ("run_id", "step", "tool", "status", "latency_s")
same = [tuple(getattr(r, k) for k in keys) for r in records] == [tuple(row[k] for k in keys) for row in rows]
print("\nsame runs, steps, tools, statuses and seconds as by hand:", same)

# %% [markdown]
# ## Find the waste by eye
#
# One run, as a table:

# %%
steps = pd.DataFrame(step_rows(records))
print(f"run {runs[1].run_id} at {runs[1].now}: {runs[1].question}")
steps[steps.run_id == "R002"]

# %% [markdown]
# Order B456 was created at 11:48 and asked about at 12:00: 12 minutes old. Step 1 asked the shipping
# service about a payment. Step 3 asked the database what the cache had just said. Step 4 waited on the
# payment provider for an order too new to be there: 6 s for the provider (notebook 01's tool table),
# and the rest of the step's 8.3 s is the model's turn. One call in four was needed.
#
# ## Find the waste by query
#
# By eye works for one run; for fifty, ask the log.
#
# **From scratch: the query that finds the waste.** Three questions, each about a step and the one
# before it in the same run: a wrong call; the database asked right after the cache found the order;
# the payment provider finding nothing.


# %%
# from scratch: the query that finds the waste
def find_waste(rows):
    """{(run_id, step): why} for every wasted call, read from the log alone."""
    wasted, previous = {}, None
    for row in rows:
        if previous is not None and previous["run_id"] != row["run_id"]:
            previous = None  # a new run: no step before this one
        key = (row["run_id"], row["step"])
        after_cache_hit = previous and previous["tool"] == "query_local_cache" and previous["status"] == "ok"
        if row["status"] in ("wrong_tool", "bad_args", "error", "bad_reply"):
            wasted[key] = "wrong tool or bad arguments"
        elif row["tool"] == "query_database" and after_cache_hit:
            wasted[key] = "database after a cache hit"
        elif row["tool"] == "query_payment_api" and row["status"] == "not_found":
            wasted[key] = "payment API found nothing"
        previous = row
    return wasted


wasted = find_waste(rows)
seconds = {(row["run_id"], row["step"]): row["latency_s"] for row in rows}
for why in sorted(set(wasted.values())):
    calls = [key for key, reason in wasted.items() if reason == why]
    print(f"{why:28} {len(calls):3} calls {sum(seconds[key] for key in calls):6.1f} virtual s")
print(f"{len(wasted)} of {len(rows)} calls wasted")

# %% [markdown]
# **The package's version: `waste.run_waste`**, the one definition of waste the Ralph Loop uses: the
# same calls. It spells no tool name, so it works in any world: it judges a run from its steps and
# answer (a look-up that brought nothing the answer used, or whose values another call also gave; a
# "not found" after the tool that holds every order found nothing).

# %%
complete = [t.name for t in tools if t.holds_every]  # the database: it holds every order
package = {(f"R{n:03d}", i) for n, trace in enumerate(traces, 1) for i in run_waste(trace, complete=complete)}
print(f"by hand {len(wasted)} wasted calls, package {len(package)}; the same calls: {package == set(wasted)}")

# %% [markdown]
# ## What changed: where the time goes
#
# The log turns "the agent feels slow" into a table: per tool, calls, virtual time and waste. A step's
# `latency_s` is the *tool's* time plus the *model's* turn that chose the call, so we add the two parts
# from the traces as columns `tool_s` and `model_s`.

# %%
steps["tool_s"] = [s.tool_latency_s for t in traces for s in t.steps]  # same order as the log
steps["model_s"] = [s.model_latency_s for t in traces for s in t.steps]
steps["wasted"] = [(run, step) in wasted for run, step in zip(steps.run_id, steps.step, strict=True)]
per_tool = steps.groupby("tool").agg(
    calls=("step", "size"),
    virtual_s=("latency_s", "sum"),
    tool_s=("tool_s", "sum"),
    model_s=("model_s", "sum"),
    wasted_calls=("wasted", "sum"),
)
per_tool["wasted share of time"] = (
    steps[steps.wasted].groupby("tool").latency_s.sum().reindex(per_tool.index).fillna(0) / per_tool.virtual_s
).round(2)
per_tool.round(1).sort_values("virtual_s", ascending=False)

# %% [markdown]
# Almost half of all calls were waste (65 of 141), and half of the slow provider's time went to calls
# that found nothing.
#
# Read `tool_s` and `model_s` before blaming a tool. The cache's 50 calls cost 107.6 virtual seconds,
# but only 2.5 s of that is the cache (0.05 s a call); 105.1 s is the model's turns that chose it. The
# payment provider is the opposite: 144.0 of its 198.8 s is the provider itself. So a wasted cache or
# database call still costs a model turn, and a rule that removes a call saves that turn too.
#
# Notebook 03 hands this log to a *reflector* and asks it to write the rules that would have avoided
# the waste.
