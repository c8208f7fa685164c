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
#    template are sent back with the reason, within `max_reflection_rounds` attempts in all.
#
# And one thing this kit insists on: **the reflector knows no answers.** It reads the run's log, the
# grader's verdict line (accepted, or which answer fields were rejected, never their right values) and
# the tools in its prompt, with their descriptions and the roles they declare; nothing else. The
# offline reflector (`ralph_mini/offline_reflect.py`) has no tool name, status or world fact written in
# it, so it reflects the same way on a renamed tool set or a new task type.
#
# The rules come out in the **micro-prompt grammar** (`ralph_mini/rules.py`): a small controlled English
# that a real model reads as a plain sentence and the offline model can parse.

# %%
from ralph_mini import grade, model_from_env, run_react
from ralph_mini.measure import by_kind, record, run_suite, summarize
from ralph_mini.planner import review
from ralph_mini.reflect import ask_untemplated, reflect, reflection_text, validate_reflection
from ralph_mini.worlds import orders

model = model_from_env(habits=orders.HABITS)
suite = orders.make_suite(n=50, seed=7)
words = orders.WORDS  # the order desk's words: the reflector's prompt and checks read them
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
validate_reflection(advice, words, [t.name for t in tools])

# %% [markdown]
# ## With the template, from the log
#
# Now the compact log: one line per step, then the result, then the grader's verdict line that the
# loop appends (`reflect.reflection_text`). With the tool descriptions in its prompt, this is everything
# the reflector reads:

# %%
verdict = grade(task, wasteful.answer)
log_text = reflection_text(wasteful, "R002", verdict.correct, verdict)
print(log_text)

# %%
reflection = reflect(log_text, model, tools, words)
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
# Every item names a tool or a field, and each comes from the log alone. A step is *effective* when it
# brought a field the final answer used (the cache gave `status` and `amount`); *ineffective* when it
# failed (the shipping tool: `wrong_tool`), only repeated fields already known (the database), or found
# nothing. Each waste pattern becomes a rule: a repeat gives "when P finds the order: skip T", useless
# calls before the first effective tool give "when any task: start with E". Where does "30 min" come
# from? The log shows the order was 12 minutes old (its `created_at` against the run's time) when the
# provider had nothing; the payment tool's role in the prompt (`@tool(lag_min=30)`, shown as "learns of
# an order 30 min after it is created") says when transactions appear.
#
# The grader accepted this answer, so its line adds nothing here. A rejection would: the reflector
# then looks for a tool whose description speaks of the status it saw and that was never called
# ("when status is W ...: call T"), and an answer or a write made with no look-up at all teaches
# "when any task: start with" the read-only tool that declares it holds every record. It
# never learns what the right answer was: the verdict line names the rejected fields, not their values.
#
# ## A template violation, rejected and asked again
#
# Tighten the limit to 10 words an item. The first reply breaks it; the reflector is told exactly what
# is wrong, and its second reply keeps only what fits. `max_reflection_rounds` bounds the attempts:

# %%
short = reflect(log_text, model, tools, words, max_words=10)
print("round 1 rejected because:", short.rejections[0][:300], "...\n")
print(f"round {short.rounds}: ok={short.ok}; rules:", *short.rules, sep="\n- ")

# %% [markdown]
# And when no reply is good enough within the rounds allowed, the reflector returns *no reflection*
# with the reason, never garbage:

# %%
nothing = reflect(log_text, model, tools, words, max_words=4, max_reflection_rounds=2)
print(nothing.ok, "|", nothing.reason[:160])

# %% [markdown]
# ## The fast loop's quick review
#
# A reflection is for *next time*. Within a run, the Ralph Loop uses a cheaper check, the quick review
# (`reflect.quick_review`; `planner.review` calls it with what the world says: the task type's answer
# fields, the tools that write or hold every record): from what the agent can see (no grader), it
# counts wrong and redundant calls and judges the answer *complete* for the task's type: it has that
# type's answer fields (here `status`), and a "not_found" rests on a look-up that answered (when every
# look-up failed, in an outage, nothing was found *or* ruled out). It also notes whether the run wrote
# (`wrote`) and flags an answer or write made with no look-up at all (`blind`).
#
# The quick review asks for a retry (`retry=True`) only when the answer is not complete (none at all,
# because the run hit `max_steps` or `max_pitfall_depth`, or one lacking the type's fields) *and* the
# run wrote nothing: a write is never repeated. Then the *fast loop* reflects on that run at once (its
# log says "grader: not graded", since the grader has not seen it yet) and runs the task again with
# the rules, every run of the task sharing one pitfall budget. Notebook 06 shows it firing, on a run
# that used up its model turns before answering.
#
# Here the answer is complete, so no retry. After grading, the *slow loop* decides whether to reflect
# for memory (`loop.wants_slow_loop`): always when the grader rejected the answer or the answer rested
# on no look-up; on waste like this run's (1 wrong, 2 redundant calls) when the task type recurs or the
# same error repeats; never on a clean, accepted run.

# %%
review(task, wasteful, tools, words)

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
