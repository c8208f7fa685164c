# %% [markdown]
# # 02 · The execution log: see where the time goes
#
# **What you will build:** a logger around the bare ReAct agent from notebook 01 that writes one
# compact record per step (run, step, tool, arguments, status, latency, tokens, what came back) to a
# JSON Lines file, and the queries that find the wasted calls in it.
#
# Why bother: the seed article's first finding was that a reflector fed the whole chat transcript
# gives vague advice, while one fed a *compact step log* gives specific rules. Before an agent can learn
# from its runs, somebody has to write them down in a form that is easy to read: that is this lesson.

# %%
from pathlib import Path

import pandas as pd

from ralph_mini import grade, model_from_env
from ralph_mini.log import append_run, load_log, log_run, step_rows
from ralph_mini.measure import run_suite
from ralph_mini.widgets import progress
from ralph_mini.worlds import orders

pd.set_option("display.max_colwidth", 120)  # show a log record's whole observation
model = model_from_env(habits=orders.HABITS)
suite = orders.make_suite(n=50, seed=7)
tools = suite.world.tools()

# %% [markdown]
# ## Log a session
#
# Run the 50 tasks exactly as in notebook 01, and append each run to one session file. The file is
# append-only: a second session would get a file of its own. (We delete the file first so that running
# this notebook twice gives the same log.)

# %%
log_path = Path("runs/session-02.jsonl")
log_path.unlink(missing_ok=True)
traces = run_suite(suite.tasks, model, tools, progress=progress)
for number, trace in enumerate(traces, 1):
    append_run(log_path, *log_run(trace, f"R{number:03d}", grade(trace.task, trace.answer).correct))
lines = log_path.read_text().splitlines()
print(f"{len(lines)} lines in {log_path}; the first two:\n")
print("\n".join(lines[:2]))

# %% [markdown]
# Loading it back gives the same records: a log is only useful if a program can read it too.

# %%
records, runs = load_log(log_path)
steps = pd.DataFrame(step_rows(records))
print(f"{len(records)} steps in {len(runs)} runs")
print(f"run {runs[1].run_id} at {runs[1].now}: {runs[1].question}")
steps[steps.run_id == "R002"]

# %% [markdown]
# ## Find the waste by eye
#
# Read run R002 above (order B456, created at 11:48, asked about at 12:00: 12 minutes old). Step 1
# asked the shipping service about a payment. Step 3 asked the database what the cache had just said.
# Step 4 waited on the payment provider for an order too new to be there: 6 s for the provider
# (notebook 01's tool table), and the rest of the step's 8.3 s is the model's turn (see the last table).
# One call in four was needed.
#
# ## Find the waste by query
#
# By eye works for one run; for fifty, ask the log. Three questions, one line of pandas each:

# %%
steps["previous"] = steps.groupby("run_id").status.shift()
steps["previous_tool"] = steps.groupby("run_id").tool.shift()
after_cache_hit = steps[
    (steps.tool == "query_database") & (steps.previous_tool == "query_local_cache") & (steps.previous == "ok")
]
provider_nothing = steps[(steps.tool == "query_payment_api") & (steps.status == "not_found")]
wrong = steps[steps.status.isin(["wrong_tool", "bad_args", "error", "bad_reply"])]
pd.DataFrame(
    [
        {
            "waste": "database after a cache hit",
            "calls": len(after_cache_hit),
            "virtual s": after_cache_hit.latency_s.sum(),
        },
        {
            "waste": "payment API found nothing",
            "calls": len(provider_nothing),
            "virtual s": provider_nothing.latency_s.sum(),
        },
        {"waste": "wrong tool or bad arguments", "calls": len(wrong), "virtual s": wrong.latency_s.sum()},
    ]
).round(1)

# %% [markdown]
# Some of the payment calls that found nothing were for orders that do not exist at all; the others
# were for pending orders that were too new. Grouping by what the *previous* step said separates them:

# %%
provider_nothing.assign(after=provider_nothing.previous_tool + " " + provider_nothing.previous).groupby(
    "after"
).size()

# %% [markdown]
# ## What changed: where the time goes
#
# The log turns "the agent feels slow" into a table. Per tool: how many calls, how much virtual time,
# and how much of it the three queries above flagged as waste.
#
# One thing to know before reading it: a step's `latency_s` in the log is the *tool's* time plus the
# *model's* time for the turn that chose the call (reading the prompt and writing the thought and the
# arguments). That is the step's real cost, but it is not the tool's speed: the cache answers in 0.05 s,
# yet a step that calls it costs about two seconds. The log keeps only the sum; the traces in memory
# still hold the two parts, so we add them as columns `tool_s` and `model_s` (`virtual_s` = their sum).
# The model's turn that writes the final answer calls no tool, so it is in no row here.

# %%
steps["tool_s"] = [s.tool_latency_s for t in traces for s in t.steps]  # same order as the log
steps["model_s"] = [s.model_latency_s for t in traces for s in t.steps]
wasted_index = set(after_cache_hit.index) | set(provider_nothing.index) | set(wrong.index)
steps["wasted"] = steps.index.isin(wasted_index)
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
print(f"{steps.wasted.sum()} of {len(steps)} calls flagged as waste")
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
