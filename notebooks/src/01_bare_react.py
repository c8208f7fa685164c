# %% [markdown]
# # 01 · Bare ReAct: think, act, observe
#
# **What you will build:** the simplest agent that works, a *ReAct* loop, on the order-status task from
# the seed article, and the baseline numbers that every later notebook has to beat.
#
# In ReAct the **Reasoner** (the language model) writes a thought and asks for a tool; the **Actor** (a
# plain Python loop) runs it and hands back what it saw, the *observation*; until a final answer.
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

from ralph_mini import model_from_env, run_react, tool
from ralph_mini.measure import by_kind, record, run_suite, summarize
from ralph_mini.widgets import progress, show_trace
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
import pandas as pd  # imported where the first table is drawn, so the first cell opens fast

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
# The first question is about A123. Before using the kit's agent, write the loop yourself.
#
# **From scratch: the ReAct loop.** The conversation is a list of messages, starting with the system
# prompt and the question. Each turn the model replies with a thought and a tool call, or a final
# answer. The loop runs the tool and appends the observation as a `tool` message answering that call:
# one short line (`4 fields: status=paid, ...`), not raw JSON, to keep the context small. It stops at
# `Final answer:`, or after `max_steps` turns.

# %%
# from scratch: the ReAct loop
import json

from ralph_mini.tools import NotFound


def react_by_hand(question, system_prompt, model, tools, max_steps=8):
    by_name = {t.name: t for t in tools}
    schemas = [t.schema() for t in tools]  # what the model reads about each tool
    messages = [{"role": "system", "content": system_prompt}, {"role": "user", "content": question}]
    for _ in range(max_steps):
        reply = model.complete(messages, schemas)  # think: a thought, then a tool call or an answer
        messages.append(reply.to_message())
        if not reply.tool_calls:  # no call: it should be the answer
            _, marker, answer = (reply.content or "").partition("Final answer:")
            if marker:
                return json.loads(answer), messages
            messages.append({"role": "user", "content": "Call a tool or give the final answer."})
        for call in reply.tool_calls:  # act: run each tool the model asked for
            try:
                fields = by_name[call.name].function(**json.loads(call.arguments))
                shown = ", ".join(f"{key}={value}" for key, value in fields.items())
                observation = f"ok: {len(fields)} fields: {shown}"
            except NotFound as err:
                observation = f"not_found: {err}"
            # observe: the result goes back into the conversation, as the answer to this call
            messages.append({"role": "tool", "tool_call_id": call.id, "content": observation})
    return None, messages


task = suite.tasks[0]
answer, messages = react_by_hand(task.question, task.system_prompt, model, tools)
for message in messages:  # the system prompt, the question, then thought, call, observation ...
    print(f"{message['role']:>9}: {message['content']}")
    for call in message.get("tool_calls", []):
        print(f"{'':>11}-> {call['function']['name']}({call['function']['arguments']})")

# %% [markdown]
# Read the thoughts: the model finds the order in the cache, and then queries the database anyway, "to
# confirm accuracy". That is the first naive habit the seed article saw in real models.
#
# **The package's version: `react.run_react`**, on the same task and then on all 50: the same
# conversation, message for message. What it adds: each step as a `Step` record with a status
# (`wrong_tool`: a tool the question is not about), virtual seconds and tokens; a made-up tool name,
# arguments that are not JSON, a tool that raises or hangs, each turned into an observation (the hand
# loop crashes with a `KeyError` on a made-up name); a stop after `max_pitfall_depth` wrong calls or a
# repeated call; lessons in the prompt within a budget (notebooks 04-06). No fault occurs on these
# tasks, so the conversations are the same; notebook 07 shows each fault.

# %%
trace = run_react(task, model, tools)
for step in trace.steps:
    print(
        f"{step.index}. {step.tool} -> {step.status}: {step.tool_latency_s} s tool, {step.model_latency_s} s model"
    )
print("same conversation as by hand:", trace.messages == messages, "| same answer:", trace.answer == answer)
same = sum(
    react_by_hand(t.question, t.system_prompt, model, tools)[1] == run_react(t, model, tools).messages
    for t in suite.tasks
)
print(f"identical conversations on {same} of {len(suite.tasks)} tasks")

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
