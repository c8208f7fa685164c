# %% [markdown]
# # 01 · Bare ReAct: think, act, observe
#
# **What you will build:** the simplest agent that works, a *ReAct* loop, on the order-status task from
# the seed article, and the baseline numbers that every later notebook has to beat.
#
# ReAct lets two roles take turns: the **Reasoner** (the language model) writes a thought and asks for a
# tool; the **Actor** (a plain Python loop) runs the tool and hands back what it saw, the *observation*.
# Repeat until the Reasoner gives a final answer.
#
# The job: a customer asks about an order. The agent has three tools, fast to slow:
#
# | tool | what it is | virtual latency |
# |---|---|---|
# | `query_local_cache` | a fast local cache of recent orders | 0.05 s |
# | `query_database` | the shop's database: every order | 0.8 s |
# | `query_payment_api` | a slow third-party payment provider | 6 s |
#
# Everything runs **offline**: the model is a deterministic simulation (`OfflineModel`) that reads only
# the messages it is sent, exactly like a real model. Set `RALPH_MODEL` (see the README) and the same
# cells run on a real model.

# %%
import json

import pandas as pd

from ralph_mini import model_from_env, run_react, tool
from ralph_mini.measure import by_kind, record, run_suite, summarize
from ralph_mini.widgets import plot_calls_per_task, progress, show_trace
from ralph_mini.worlds import orders

model = model_from_env(habits=orders.HABITS)  # OfflineModel, unless RALPH_MODEL is set
model

# %% [markdown]
# ## The world and its tools
#
# The order desk is one *world*, a package of its own (`ralph_mini.worlds.orders`): its words, tools,
# tasks and the simulated model's habits there. `orders.make_suite` builds a seeded world of orders,
# with the article's demo data first (A123 paid 99.5, B456 pending 215.0, C789 refunded 66.0), and 50
# questions with their ground truth. A tool is a plain function turned into a visible `Tool` by the
# `@tool` decorator. Besides the three core tools, the world offers six *extended* tools that a naive
# agent may misuse.

# %%
suite = orders.make_suite(n=50, seed=7)
tools = suite.world.tools()
pd.DataFrame(
    [
        {"tool": t.name, "core": t.core, "latency s": t.latency_s, "description": t.description[:70]}
        for t in tools
    ]
)

# %% [markdown]
# The model never sees Python: it sees a JSON schema per tool, built from the type hints and the
# `Args:` section of the docstring. This is exactly what goes into the `tools=[...]` field of an
# OpenAI chat-completions request:

# %%
print(json.dumps(tools[0].schema(), indent=2))


# %% [markdown]
# Writing a tool of your own takes a type hint per parameter and one `Args:` line each. `@tool` refuses
# to guess: a missing hint, an unsupported type or an undocumented parameter is an error at once.


# %%
@tool(latency_s=0.3, core=False)
def loyalty_points(customer_id: str) -> dict:
    """Loyalty points of a customer.

    Args:
        customer_id: The customer id, for example "CUST-0042".
    """
    return {"customer_id": customer_id, "points": 120}


loyalty_points.schema()["function"]["parameters"]

# %% [markdown]
# ## One task, step by step
#
# The first question is about A123. Read the thoughts: the model finds the order in the cache, and then
# queries the database anyway, "to confirm accuracy". That is the first naive habit the seed article saw
# in real models.

# %%
task = suite.tasks[0]
print(task.question)
trace = run_react(task, model, tools)
for step in trace.steps:
    print(
        f"thought: {step.thought}\n  act:     {step.tool}({step.arguments})\n  observe: {step.observation}\n"
    )
print(trace.final_text)

# %% [markdown]
# Observations are *compressed*: the tool returned a dict, the model sees one short line
# (`4 fields: status=paid, ...`), as the article advises; it keeps the context small.
#
# Everything the model was sent is in `trace.messages`. Here is the system prompt, word for word:

# %%
print(trace.messages[0]["content"])

# %% [markdown]
# The second question is about B456, created twelve minutes ago and still pending. Two more habits
# show: the model starts with a tool that merely *sounds* right, and it asks the slow payment provider
# about a pending order that is far too new to be there (the tool's own description says payments
# appear after about 30 minutes).

# %%
trace = run_react(suite.tasks[1], model, tools)
for step in trace.steps:
    print(f"{step.index}. {step.tool}({step.arguments}) -> {step.status:<10} {step.observation[:70]}")
print(
    f"\n{trace.tool_calls} tool calls (the oracle needs {suite.tasks[1].oracle_calls}), "
    f"{trace.wrong_calls} wrong, {trace.latency_s:.1f} s virtual"
)

# %% [markdown]
# The same run as a table (the wrong call on red), and as a stepper: click **Next** to walk through
# it one step at a time, thought, tool call and observation.

# %%
show_trace(trace)

# %% [markdown]
# ## The whole suite: the baseline
#
# Now all 50 tasks, each run independently: the agent remembers nothing from one task to the next.
# The *oracle* is the fewest calls a policy that knows the rules (but not the data) needs: 1 for a
# cached order, 2 when it must go further. Virtual seconds add the model's simulated thinking time to
# the tools' latencies.

# %%
traces = run_suite(suite.tasks, model, tools, progress=progress)
records = [record(t) for t in traces]
baseline = summarize(records, "bare ReAct, all 9 tools")
pd.DataFrame(by_kind(records))

# %% [markdown]
# Cached orders need one call but get two; pending orders need one or two but get three or more;
# missing orders get a pointless call to the payment provider. Every answer is still correct: the
# waste is in time and money, not in accuracy.
#
# ## A long tool list hurts
#
# The article saw tool-choice accuracy rise when only the core tools were shown first. Same tasks,
# same model, only the three core tools in the prompt:

# %%
core_tools = suite.world.tools(core_only=True)
core_records = [record(t) for t in run_suite(suite.tasks, model, core_tools, progress=progress)]
core_only = summarize(core_records, "bare ReAct, 3 core tools")
pd.DataFrame([baseline, core_only])[["agent", "wrong calls", "tasks with a wrong call", "tokens/task"]]

# %% [markdown]
# With three tools the look-alike tools cannot tempt the model, and every prompt is shorter. Later
# lessons keep the long list and teach the agent to avoid the trap instead.
#
# ## What changed: the baseline numbers
#
# This table is the bar for the rest of the kit: about twice the oracle's calls, and with the full
# tool list, some wrong calls. Notebook 06 puts the Ralph Loop next to it.

# %%
pd.DataFrame([baseline, core_only]).set_index("agent").T

# %% [markdown]
# The same comparison as a picture: calls per task for each agent, next to the oracle's minimum.

# %%
plot_calls_per_task(
    [
        {"agent": "all 9 tools", "calls/task": baseline["calls/task"]},
        {"agent": "3 core tools", "calls/task": core_only["calls/task"]},
        {"agent": "oracle", "calls/task": baseline["oracle calls/task"]},
    ],
    value="calls/task",
)
