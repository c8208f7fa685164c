# %% [markdown]
# # 03 · The reflector: from a log to rules
#
# **What you will build:** a *reflector* that reads the compact log of a run and writes lessons the
# agent can follow next time, held to a fixed template so it cannot get away with saying nothing.
#
# The seed article learned two things the hard way:
#
# 1. Fed the whole chat transcript, a reflector gives vague advice ("improve performance"). Fed the
#    compact step log from notebook 02, it names tools and fields.
# 2. A fixed output template (effective steps, ineffective steps, reusable rules, behaviours to avoid,
#    each item at most 30 words) stops it from filling the page with nothing. Replies that break the
#    template are sent back with the reason, once or twice at most.
#
# The rules come out in the **micro-prompt grammar** (`ralph_mini/rules.py`): a small controlled English
# that a real model reads as a plain sentence and the offline model can parse.

# %%
from ralph_mini import grade, make_suite, model_from_env, run_react
from ralph_mini.log import format_for_reflection, log_run
from ralph_mini.measure import by_kind, record, run_suite, summarize
from ralph_mini.reflect import ask_untemplated, quick_review, reflect, validate_reflection

model = model_from_env()
suite = make_suite(n=50, seed=7)
tools = suite.world.tools()
task = suite.tasks[1]  # B456: pending, created 12 minutes ago
wasteful = run_react(task, model, tools)
print(
    task.question,
    f"-> {wasteful.tool_calls} calls, {wasteful.wrong_calls} wrong, {wasteful.latency_s:.1f} s virtual",
)

# %% [markdown]
# ## Without a template, from the transcript
#
# Hand the reflector the raw transcript (every message of the run, system prompt included) and ask how
# the agent could do better:

# %%
transcript = "\n".join(f"{m['role']}: {m.get('content') or m.get('tool_calls')}" for m in wasteful.messages)
print(f"transcript: {len(transcript)} characters\n")
advice = ask_untemplated(transcript, model)
print(advice)

# %% [markdown]
# True, and useless: nothing in it tells the agent what to do differently with *this* kind of order.
# The validator we are about to use agrees:

# %%
validate_reflection(advice)

# %% [markdown]
# ## With the template, from the log
#
# Now the compact log: one line per step, then the result. This is everything the reflector reads:

# %%
log_text = format_for_reflection(*log_run(wasteful, "R002", grade(task, wasteful.answer).correct))
print(log_text)

# %%
reflection = reflect(log_text, model, tools)
for title, items in [
    ("EFFECTIVE STEPS", reflection.effective),
    ("INEFFECTIVE STEPS", reflection.ineffective),
    ("REUSABLE RULES", reflection.rules),
    ("AVOID", reflection.avoid),
]:
    print(title + ":")
    print("\n".join(f"- {item}" for item in items) or "- none")
print(f"\nrounds: {reflection.rounds}, reflection tokens: {reflection.tokens}")

# %% [markdown]
# Every item names a tool or a field. Where does "30 min" come from? The log shows the order was 12
# minutes old when the provider had nothing; the payment tool's description (which the reflector is
# shown) says transactions appear about 30 minutes after an order is created.
#
# ## A template violation, rejected and asked again
#
# Tighten the limit to 10 words an item. The first reply breaks it; the reflector is told exactly what
# is wrong, and its second reply keeps only what fits. `max_reflection_rounds` bounds the attempts:

# %%
short = reflect(log_text, model, tools, max_words=10)
print("round 1 rejected because:", short.rejections[0][:300], "...\n")
print(f"round {short.rounds}: ok={short.ok}; rules:", *short.rules, sep="\n- ")

# %% [markdown]
# And when no reply is good enough within the rounds allowed, the reflector returns *no reflection*
# with the reason, never garbage:

# %%
nothing = reflect(log_text, model, tools, max_words=4, max_reflection_rounds=2)
print(nothing.ok, "|", nothing.reason[:160])

# %% [markdown]
# ## The fast loop's quick review
#
# A reflection is for *next time*. Within a run, the Ralph Loop uses a cheaper check, the quick review:
# from run-time signals only (no grader), it counts wrong and redundant calls and says whether retrying
# with a refined plan is worth it. Here the answer is complete, so no retry: the waste goes to the
# slow loop instead.
#
# The quick review asks for a retry (`retry=True`) only when a run has no usable answer: none at all,
# because the run hit `max_steps` or `max_pitfall_depth`, or one without a status or an amount. Then
# the *fast loop* reflects on that run at once and runs the task again with the rules. Notebook 06
# shows it firing, on a run that used up its model turns before answering.

# %%
quick_review(wasteful)

# %% [markdown]
# ## Apply the rules: the same task, then the same fifty tasks
#
# The rules go into the system prompt under "Lessons from earlier runs". The model is the same, with
# the same habits; it only reads a longer prompt.

# %%
again = run_react(task, model, tools, lessons=reflection.rules)
for step in again.steps:
    print(f"{step.index}. {step.thought}\n   {step.tool}({step.arguments}) -> {step.status}")
print(
    f"\n{wasteful.tool_calls} calls before, {again.tool_calls} after; answer correct: {record(again).correct}"
)

# %% [markdown]
# ## What changed: one reflection, fifty tasks
#
# One reflection on one run of one order, applied to all fifty tasks of notebook 01:

# %%
import pandas as pd

from ralph_mini.widgets import progress

before = summarize([record(t) for t in run_suite(suite.tasks, model, tools, progress=progress)], "bare ReAct")
with_rules = run_suite(suite.tasks, model, tools, lessons=reflection.rules, progress=progress)
after = summarize([record(t) for t in with_rules], "bare ReAct + 1 reflection")
pd.DataFrame([before, after]).set_index("agent").T

# %% [markdown]
# Calls per task fall from 2.82 to 1.64 (the oracle needs 1.52), wrong calls from 17 to 0, and every
# answer stays correct. Where the rest of the gap is, by kind of order:

# %%
pd.DataFrame(by_kind([record(t) for t in with_rules])).set_index("kind")

# %% [markdown]
# Every kind is at the oracle except orders that do not exist (3 calls where 2 do): this one run never
# showed the reflector a missing order, so it could not write a rule for one. That is why the Ralph
# Loop reflects on many runs and keeps what it learns in a *memory*: notebook 04.
