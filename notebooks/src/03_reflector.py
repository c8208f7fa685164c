# %% [markdown]
# # 03 · The reflector: from a log to rules
#
# **What you will build:** a *reflector* that reads the compact log of a run and writes lessons the
# agent can follow next time, held to a fixed template so it cannot get away with saying nothing.
#
# The seed article learned two things the hard way: fed the whole chat transcript, a reflector gives
# vague advice; fed the compact step log of notebook 02, it names tools and fields. And a fixed template
# (four sections, each item at most 30 words) stops it from filling the page with nothing.
#
# **The reflector knows no answers**: it reads the run's log, the grader's verdict line (which fields
# were rejected, never their right values) and the tools in its prompt. Its rules come out in the
# **micro-prompt grammar** (`ralph_mini/rules.py`), a controlled English that a real model reads as a
# plain sentence and the offline model can parse.

# %%
from ralph_mini import grade, model_from_env, run_react
from ralph_mini.measure import by_kind, record, run_suite, summarize
from ralph_mini.planner import review
from ralph_mini.reflect import (
    ask_untemplated,
    reflect,
    reflection_messages,
    reflection_text,
    validate_reflection,
)
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
#
# ## With the template, from the log
#
# Now the compact log: one line per step, then the result, then the grader's verdict line that the
# loop appends (`reflect.reflection_text`). With the tool descriptions in its prompt, this is everything
# the reflector reads:

# %%
verdict = grade(task, wasteful.answer)
log_text = reflection_text(wasteful, "R002", verdict.correct, verdict)
print(log_text)

# %% [markdown]
# **From scratch: the template check and the re-ask.** The prompt (`reflect.reflection_messages`) asks
# for four sections, each item a line "- ..." of at most 30 words naming a tool or a field. The check
# splits the reply into sections and lists what breaks the template; such a reply is sent back with the
# reasons, within `rounds` attempts, then no reflection rather than garbage.

# %%
# from scratch: the template check and the re-ask
SECTIONS = ["EFFECTIVE STEPS", "INEFFECTIVE STEPS", "REUSABLE RULES", "AVOID"]
NAMES = [t.name for t in tools] + [*words.fields, words.id_argument]  # what a specific item names


def check(text, max_words=30):
    """The reply's sections, and every way it breaks the template ([] means valid)."""
    sections, current = {}, None
    for line in (raw.strip() for raw in text.splitlines()):
        if line.endswith(":") and line[:-1].upper() in SECTIONS:
            current = line[:-1].upper()
            sections[current] = []
        elif line.startswith("- ") and current and line[2:].lower() != "none":
            sections[current].append(line[2:])
    problems = [f"missing section {name}" for name in SECTIONS if name not in sections]
    for name, items in sections.items():
        for item in items:
            if len(item.split()) > max_words:
                problems.append(f"{name}: item has {len(item.split())} words, over {max_words}")
            if not any(known in item.lower() for known in NAMES):
                problems.append(f"{name}: vague item names no tool or field: '{item}'")
    return sections, problems


def reflect_by_hand(log_text, model, max_words=30, rounds=2):
    messages = reflection_messages(log_text, tools, words, max_words)  # the template prompt, the log
    for _ in range(rounds):
        text = model.complete(messages, []).content or ""
        sections, problems = check(text, max_words)
        if not problems:
            return sections
        reask = f"Your reply breaks the template: {'; '.join(problems)}. Reply again, in the template only."
        messages += [{"role": "assistant", "content": text}, {"role": "user", "content": reask}]
    return None  # no reflection rather than garbage


print("the untemplated advice:", check(advice)[1], "\n")
for title, items in reflect_by_hand(log_text, model).items():
    print(title + ":", *[f"- {item}" for item in items], sep="\n")

# %% [markdown]
# **The package's version: `reflect.reflect`** (its check is `validate_reflection`): the same sections
# and items. It checks more: the sections' order, at least one step named, every rule in the micro-prompt
# grammar (kept in canonical form), no item naming one order, customer, amount or time. A rule written
# for order B456 passes the hand check and fails the package's twice:

# %%
reflection = reflect(log_text, model, tools, words)
as_sections = {
    "EFFECTIVE STEPS": list(reflection.effective),
    "INEFFECTIVE STEPS": list(reflection.ineffective),
    "REUSABLE RULES": list(reflection.rules),
    "AVOID": list(reflection.avoid),
}
print(f"rounds: {reflection.rounds}, reflection tokens: {reflection.tokens}")
print("same sections as by hand:", as_sections == reflect_by_hand(log_text, model))
special = "\n".join(
    ["EFFECTIVE STEPS:", "- query_local_cache gave status", "INEFFECTIVE STEPS:", "- none"]
    + ["REUSABLE RULES:", "- when order B456 is pending: skip query_payment_api", "AVOID:", "- none"]
)
print("by hand:", check(special)[1])
print("package:", *validate_reflection(special, words, [t.name for t in tools]), sep="\n- ")

# %% [markdown]
# Every item comes from the log alone. A step is *effective* when it brought a field the answer used;
# *ineffective* when it failed, only repeated known fields, or found nothing. A repeat gives "when P
# finds the order: skip T"; useless calls before the first effective tool give "when any task: start
# with E". The "30 min" comes from the log (the order was 12 minutes old when the provider had nothing)
# and the payment tool's declared role in the prompt ("learns of an order 30 min after it is created").
#
# <details><summary>When the grader rejects an answer</summary>
#
# The verdict line names the rejected fields. The reflector then looks for a tool whose description
# speaks of the status it saw and that was never called ("when status is W ...: call T").
#
# </details>
#
# ## A template violation, rejected and asked again
#
# Tighten the limit to 10 words an item. The first reply breaks it; the reflector is told exactly what
# is wrong, and its second reply keeps only what fits. `max_reflection_rounds` bounds the attempts:

# %%
short = reflect(log_text, model, tools, words, max_words=10)
print("round 1 rejected because:", short.rejections[0][:300], "...\n")
print(f"round {short.rounds}: ok={short.ok}; rules:", *short.rules, sep="\n- ")
print(
    "\nby hand, same rules:",
    reflect_by_hand(log_text, model, max_words=10)["REUSABLE RULES"] == list(short.rules),
)

# %% [markdown]
# At 4 words no item fits. The reflector returns *no reflection* with the reason, never garbage. Here
# the two checks differ: the second reply has every section, each "- none"; the hand check accepts
# that empty template, the package's refuses it (it must name at least one step):

# %%
nothing = reflect(log_text, model, tools, words, max_words=4, max_reflection_rounds=2)
print(nothing.ok, "|", nothing.reason[:160])
print("by hand:", reflect_by_hand(log_text, model, max_words=4, rounds=2))

# %% [markdown]
# ## The fast loop's quick review
#
# A reflection is for *next time*. Within a run, the Ralph Loop uses a cheaper check, the quick review
# (`review.quick_review`, called by `planner.review` with what the world says): from what the agent can
# see (no grader), it counts wrong and redundant calls and judges the answer *complete*: it has the task
# type's answer fields (here `status`), and a "not_found" rests on a look-up that answered. It also
# notes whether the run wrote (`wrote`) and an answer made with no look-up at all (`blind`).
#
# It asks for a retry only when the answer is not complete (none at all, because the run hit
# `max_steps` or `max_pitfall_depth`, or one lacking the type's fields) *and* the run wrote nothing.
# Then the *fast loop* reflects on that run at once ("grader: not graded") and runs the task again with
# the rules, all runs of the task sharing one pitfall budget (notebook 06 shows it firing).
#
# Here the answer is complete, so no retry. After grading, the *slow loop* decides whether to reflect
# for memory (`learn.wants_slow_loop`): always when the grader rejected the answer; on waste like this
# run's when the task type recurs or the same error repeats; never on a clean run, nor on an accepted
# answer made with no look-up (it showed nothing).

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
