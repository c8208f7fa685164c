# %% [markdown]
# # 08 · A real model: the tiny Gemma in the ReAct agent and the Ralph Loop
#
# **What you will build:** the link between the kit and a real model. You will check which backend is
# active and whether it answers, then run notebook 01's experiment (bare ReAct) and notebook 06's
# (the Ralph Loop) on a real language model: the bundled Gemma 3 270M, a *base* model of 270 million
# parameters, running on two CPU cores. Then you will measure what it gets wrong and whether the
# Ralph Loop's lessons change what it does, in the prompt and as guards (notebook 12).
#
# The runs are **replayed from cassettes**: every reply the model gave was recorded once, with its
# measured latency, in `notebooks/cassettes/08_*.jsonl`. So this notebook runs anywhere, offline, and
# shows the same numbers every time. Set `RALPH_LIVE=1` (with `requirements-local.txt` installed) and
# the same cells start the model's server and run it live.

# %%
import json
import os
from pathlib import Path

import httpx
import openai
import pandas as pd

from ralph_mini import FakeClock, Memory, OfflineModel, OpenAIModel, grade, model_from_env, run_loop
from ralph_mini.adherence import adherence_of_runs, follow_rate, follow_rates, outcome_by_following
from ralph_mini.backends import BACKENDS, check_backend, describe_backend
from ralph_mini.bench import RALPH, run_agent
from ralph_mini.cassette import read_cassette
from ralph_mini.json_tools import fold_messages
from ralph_mini.local_session import local_session
from ralph_mini.loop import LoopConfig
from ralph_mini.model import ModelError
from ralph_mini.planner import review
from ralph_mini.react import build_system_prompt, run_react
from ralph_mini.reflect import reflect, reflection_text
from ralph_mini.worlds import orders
from ralph_mini.worlds.orders.example import EXAMPLE

# %% [markdown]
# ## Which backend is active, and does it answer?
#
# `model_from_env()` picks the model from environment variables when it is called (docs/real_models.md).
# `check_backend(model)` sends it one tiny request and says, in one line, that it answers or what to
# fix. With nothing set, as here, the backend is the offline model. It answers anything that is not an
# order question with its vague advice (notebook 03), and its seconds are simulated; what this checks is
# only that it answers.

# %%
model = model_from_env(habits=orders.HABITS)
print("active backend:", describe_backend(model))
print(check_backend(model))

# %% [markdown]
# The documented settings for the four kinds of server. Each is a set of environment variables; here
# is the model `model_from_env()` builds from each (building it sends nothing):

# %%
pd.DataFrame(
    [
        {"backend": name, **env, "model_from_env()": describe_backend(model_from_env(env))}
        for name, env in BACKENDS.items()
    ]
).set_index("backend").fillna("")

# %% [markdown]
# When a backend does not answer, the check says which setting to fix. Three common mistakes:
#
# 1. **A wrong URL**, or no server running there: port 9 of 127.0.0.1, where nothing listens.
# 2. **No key**: `RALPH_MODEL` set for OpenAI, but no `OPENAI_API_KEY` (and no local `OPENAI_BASE_URL`).
# 3. **A model that was not pulled**: Ollama answers HTTP 404. No Ollama runs here, so a stand-in
#    answers exactly what Ollama's OpenAI-compatible API sends back in that case.

# %%
wrong_url = OpenAIModel(
    "qwen2.5:7b", base_url="http://127.0.0.1:9/v1", api_key="x", timeout_s=1, max_retries=0
)
print("1.", check_backend(wrong_url))

try:
    model_from_env({"RALPH_MODEL": "gpt-4o-mini"})
except ModelError as err:
    print("2. FAILED:", err)


def ollama_without_the_model(request: httpx.Request) -> httpx.Response:
    name = json.loads(request.content)["model"]
    error = {"message": f'model "{name}" not found, try pulling it first', "type": "api_error"}
    return httpx.Response(404, json={"error": {**error, "param": None, "code": None}})


stand_in = openai.OpenAI(
    base_url="http://localhost:11434/v1",
    api_key="not-needed",
    max_retries=0,
    http_client=httpx.Client(transport=httpx.MockTransport(ollama_without_the_model)),
)
print("3.", check_backend(OpenAIModel("qwen2.5:7b", client=stand_in)))

# %% [markdown]
# ## Live or replayed
#
# `local_session(name, ...)` hands out the model for one experiment. Replayed (the default), a
# `ReplayModel` stands in for the server: it checks that every request is the one that was recorded and
# returns the recorded reply. Live, it starts a fresh llama.cpp server and records every reply (into
# `runs/cassettes/`, or wherever `RALPH_CASSETTES` says).
#
# The model that acts is the setting measured best in `benchmarks/local_llm.py` (docs/real_models.md):
# a base model has no tool calling, so `JsonToolsModel` writes the tools into the prompt, plays in a
# worked example (order Z999: cache miss, database, answer), and asks for one JSON object per turn. The
# server holds every reply to a JSON schema: a known tool with valid arguments, or a final answer.
# Temperature 0, at most 80 tokens a reply, the three core tools, the first 10 tasks of notebook 01's
# suite.

# %%
# RALPH_LIVE=1: run the bundled Gemma now (needs `pip install -r requirements-local.txt`)
LIVE = os.environ.get("RALPH_LIVE") == "1"
CASSETTES = Path(os.environ.get("RALPH_CASSETTES", "runs/cassettes" if LIVE else "cassettes"))
words = orders.WORDS
# how every experiment below gets its model; the acting model gets the order desk's worked example
REPLAY = {"live": LIVE, "cassettes": CASSETTES, "example": EXAMPLE, "answer_schema": words.answer_schema}
suite = orders.make_suite(n=50, seed=7)
tasks = suite.tasks[:10]
tools = suite.world.tools(core_only=True)
schemas = [t.schema() for t in tools]
print(
    "live: recording" if LIVE else "replaying the recorded runs",
    [t.task_id for t in tasks],
    [t.name for t in tools],
)

# %% [markdown]
# Here is the first turn exactly as the model sees it: the system prompt, the tools and the reply
# format folded into the user's turn (Gemma's chat format has no system role), then the worked example.

# %%
messages = [
    {"role": "system", "content": build_system_prompt(tasks[0].system_prompt)},
    {"role": "user", "content": tasks[0].question},
]
folded = fold_messages(messages, schemas, EXAMPLE)
print(folded[0]["content"])
for turn in folded[1:]:
    print(f"--- {turn['role']}: {turn['content']}")

# %% [markdown]
# ## Notebook 01 on the real model: bare ReAct

# %%
with local_session("08_react", schemas, **REPLAY) as (gemma, _):
    gemma_react = [run_react(task, gemma, tools) for task in tasks]


def runs_table(traces):
    """One row a task: what the agent called, what it answered, and the grader's verdict."""
    return pd.DataFrame(
        [
            {
                "task": t.task.task_id,
                "kind": t.task.kind,
                "calls": "; ".join(
                    f"{s.tool}({json.loads(s.arguments or '{}').get('order_id')}) {s.status}" for s in t.steps
                )
                or "-",
                "answer": json.dumps(t.answer) if t.answer else t.stop_reason,
                "verdict": grade(t.task, t.answer).explain(),
            }
            for t in traces
        ]
    ).set_index("task")


runs_table(gemma_react)

# %% [markdown]
# Three right out of ten (T002, T008, T009), and four kinds of mistakes. None of them is a malformed
# tool call: the schema rules those out.
#
# - **It answers without looking** (T003, T004, T005). T003 and T004 get the worked example's amount,
#   `12.5`; T005 gets a made-up `10.0`, the example's `created_at` as `paid_at`, and the system prompt's
#   placeholder `"..."` as `txn_id`.
# - **It stops one look short** (T001, T006). One call brings `status` and `amount`, and it answers,
#   leaving out the `paid_at` that the same observation showed.
# - **It trusts a stale `pending`** (T007). The order was created hours ago, and the payment provider
#   has since captured it, but the model never asks the provider.
# - **It misreads what it looked up** (T010). It asks the payment provider first, which reports
#   `payment_status=captured`, and answers `payment_failed`, with the worked example's amount, `12.5`.
#
# Here are its first eight raw replies, as the server sent them, each after the question or the
# observation it answers:

# %%
for record in read_cassette(CASSETTES / "08_react_act.jsonl")[:8]:
    asked = record["messages"][-1]["content"].splitlines()[-1]
    print(f"{asked[:70]:<72} -> {record['reply']['content']}")

# %% [markdown]
# ## Notebook 06 on the real model: the Ralph Loop
#
# The same loop as notebook 06, from an empty memory, six virtual hours between tasks. Twice: once with
# Gemma also writing the reflections, and once with the offline model reflecting on Gemma's runs
# (`run_loop(..., reflector=...)`), so that a failure to reflect cannot hide whether the acting model
# would follow the lessons.


# %%
def ralph(actor, reflector=None, enforce="prompt"):
    """The Ralph Loop on the 10 tasks, from an empty memory; returns the results and the memory."""
    clock = FakeClock()
    memory = Memory(clock)
    results = run_loop(
        tasks,
        actor,
        tools,
        memory,
        words=words,
        reflector=reflector,
        config=LoopConfig(enforce=enforce),
        between_tasks=lambda _: clock.advance(hours=6),
    )
    return results, memory


with local_session("08_ralph_self", schemas, reflector=True, **REPLAY) as (gemma, gemma_reflector):
    ralph_self, memory_self = ralph(gemma, gemma_reflector)
with local_session("08_ralph_offline", schemas, **REPLAY) as (gemma, _):
    ralph_offline, memory_offline = ralph(gemma, OfflineModel())

pd.DataFrame(
    [
        {
            "task": r.task.task_id,
            "quick review": r.review.reason,
            "retries": r.retries,
            "lessons in prompt": len(r.injected),
            "reflections": len(r.reflections),
            "verdict": grade(r.task, r.trace.answer).explain(),
        }
        for r in ralph_offline
    ]
).set_index("task")

# %% [markdown]
# The loop reflects on eight of the ten runs (the table above, with the offline model reflecting).
# Gemma wastes no calls, so the quick review finds nothing wrong with the runs that looked something
# up. But the loop also reflects on every answer given **without any look-up** (T003, T004, T005,
# T010; the quick review flags these at run time) and on every answer **the grader rejects** (T001,
# T006, T007, T008). Only T002 and T009, right and with a look-up, pass without a reflection.
#
# Which lessons come out of those reflections, and did the runs change? The same runs, compared call
# for call (and answer for answer) with bare ReAct's:


# %%
def actions(trace):
    return [(s.tool, s.arguments, s.status) for s in trace.steps], trace.answer


for name, results in (("Gemma reflecting", ralph_self), ("offline reflecting", ralph_offline)):
    same = sum(actions(a) == actions(r.trace) for a, r in zip(gemma_react, results, strict=True))
    print(f"Ralph Loop ({name}): {same}/{len(results)} runs call for call as bare ReAct's")
print(
    "memory after 10 tasks:",
    len(memory_self.experiences),
    "experiences (Gemma reflecting),",
    len(memory_offline.experiences),
    "(offline reflecting)",
)
print(
    *(f"  {e.status}, proposed {e.confirmations}x: {e.rule}" for e in memory_offline.experiences.values()),
    sep="\n",
)

# %% [markdown]
# **With Gemma reflecting**, memory stays empty: all seven of its reflections failed (the table at the
# end: 0/7; the next section shows why). So the loop sent Gemma bare ReAct's prompts, and nine runs
# came out the same. T006 did not: the same request got `query_database` instead of
# `query_local_cache`, from a server that had answered Gemma's reflection prompts in between (the
# answer is the same, and still wrong).
#
# **With the offline model reflecting**, the eight reflections are all valid, but they leave two
# lessons. The offline reflector knows no answers, but it reads the grader's verdict. From the three
# runs that left out `paid_at` (T001, T006, T008: an answer from the cache alone, rejected, while the
# database, which holds every order, was never called) and from the four runs without a look-up, it
# proposes *start with query_database*: seven proposals. The grader rejected T001's answer, so the rule
# is written at once (notebook 04) and is in Gemma's prompt from T002 on (the "lessons in prompt"
# column above). From T007 it proposes the pending rule, written at once for the same reason but never
# injected: no later run shows a pending order before it answers. Gemma does not follow the first one:
# it still starts with the cache on T002 and T006 to T009. Two runs change,
# both for the worse. T008 now leaves out the `paid_at` it reported before, and T010 looks nothing up
# and answers about order Z999, the worked example's order. 2/10 correct, against bare ReAct's 3/10.
#
# ## Can the tiny model reflect at all?
#
# In the loop, Gemma was asked seven times and wrote no valid reflection. To see what it writes, and
# to compare it with the offline reflector on the same input, ask it directly: three runs of the
# offline model that *did* waste calls, the reflector template of notebook 03, two rounds each, as in
# the loop.

# %%
offline = OfflineModel(habits=orders.HABITS)
offline_react = [run_react(task, offline, tools) for task in tasks]
wasteful = [t for t in offline_react if review(t.task, t, tools, words).redundant_calls][:3]
logs = [reflection_text(t, f"R{n:03d}", grade(t.task, t.answer).correct) for n, t in enumerate(wasteful, 1)]
print(logs[0])

# %%
with local_session("08_reflect", schemas, actor=False, reflector=True, **REPLAY) as (_, gemma_reflector):
    gemma_reflections = [reflect(log, gemma_reflector, tools, words) for log in logs]
offline_reflections = [reflect(log, offline, tools, words) for log in logs]

pd.DataFrame(
    [
        {
            "run": t.task.task_id,
            "offline reflector": "; ".join(o.rules) if o.ok else o.reason,
            "Gemma": "; ".join(g.rules) if g.ok else g.reason[:120] + "...",
        }
        for t, o, g in zip(wasteful, offline_reflections, gemma_reflections, strict=True)
    ]
).set_index("run")

# %% [markdown]
# What Gemma wrote, in the first round for the first log (its start and its end):

# %%
first = read_cassette(CASSETTES / "08_reflect_reflect.jsonl")[0]["reply"]
lines = first["content"].strip().splitlines()
print(*lines[:3], "[...]", *lines[-4:], sep="\n")
print(f"\n({first['usage']['completion_tokens']} tokens, the cap; {len(lines)} lines)")

# %% [markdown]
# It does not fill the template in. It repeats its prompt back, word for word, until the 200-token cap
# stops it, which happens to be at the template's first placeholder. All six replies (three logs, two
# rounds each) are like this one, and so were its 14 replies in the loop above (seven runs, two rounds
# each): each starts with the prompt's first line and ends at the 200-token cap. The validator refuses
# each, the re-ask gets the same again, and the reflector gives up cleanly: *no reflection*, and
# nothing is written to memory. That is the guard of notebook 03 doing its job on a real model.
#
# ## Do injected rules change what it does?
#
# The cleanest test, independent of reflection: bare ReAct on Gemma with the four rules the offline
# Ralph Loop learned in notebook 06 (50 tasks, nine tools) in its system prompt from the start.

# %%
_, memory06, _ = run_agent(RALPH, suite.tasks, offline, suite.world.tools(), words=words)
lessons = [e.rule for e in memory06.active()]
print(*lessons, sep="\n")

with local_session("08_lessons", schemas, **REPLAY) as (gemma, _):
    gemma_lessons = [run_react(task, gemma, tools, lessons=lessons) for task in tasks]
offline_lessons = [run_react(task, offline, tools, lessons=lessons) for task in tasks]
same = sum(actions(a) == actions(b) for a, b in zip(gemma_react, gemma_lessons, strict=True))
print(f"\n{same}/{len(tasks)} runs call for call (and answer for answer) as without the rules")
runs_table(gemma_lessons)

# %% [markdown]
# Yes, they change its behaviour, a little, and for the worse. Eight runs are unchanged. T008 now
# leaves out the `paid_at` it reported without the rules (right before, wrong now), and T010 looks
# nothing up (it asked the payment provider before) and answers with the worked example's own
# answer, about order Z999, `refunded`, `12.5`. So 4 of the 10 tasks get no look-up (3 without the
# rules), and 2 are right (3 without). These are the same two changes, to the same answers, that the
# offline-reflecting Ralph Loop made with its one lesson, *start with query_database*. None of the
# four rules says to skip the first look, and one says *start with query_local_cache*: whatever the
# model reacts to, it is not what the rules say. The offline model, given the same four rules, follows
# them: fewer calls, the same right answers (the table below).
#
# ## Lessons that bind: the same loop, with its lessons enforced
#
# A lesson in the prompt is advice, and Gemma does not take it. `LoopConfig(enforce=...)` turns the
# loop's lessons into checks at the tool boundary (`guards.py`; notebook 12 teaches them): a call a
# lesson forbids is refused with an observation that quotes the lesson; *start with T* offers only T on
# the first turn and refuses a first call to anything else; an answer given before any look-up is
# refused once. A refusal costs the model a turn, not a tool call. Two more experiments, each on a
# fresh server, with the offline model reflecting: the lessons as guards only (`"guard"`: Gemma never
# reads them), and as guards and prompt text (`"both"`).

# %%
with local_session("08_ralph_guard", schemas, **REPLAY) as (gemma, _):
    ralph_guard, _ = ralph(gemma, OfflineModel(), enforce="guard")
with local_session("08_ralph_both", schemas, **REPLAY) as (gemma, _):
    ralph_both, memory_both = ralph(gemma, OfflineModel(), enforce="both")
runs_table([r.trace for r in ralph_both])

# %% [markdown]
# With the lessons bound, Gemma's runs change. *start with query_database* now holds where a look-up
# happens: on T002 and T006 to T010 the first turn offers Gemma only the database (the prompt lists one
# tool, and the server's schema allows no other), and it takes it. The right answers are T002, T008 and
# T009: the same three as bare ReAct's. The blind answers stay: T003, T004 and T005 are refused once
# ("an answer before any look-up") and Gemma gives the same answer again, which the guard lets through,
# as it promised. And a run that looked in the database can still stop one look short of `paid_at`
# (T006, T010) or trust a stale `pending` (T007): no lesson in memory speaks of those.
#
# **Were the lessons followed?** For every lesson a run carried whose trigger held, `adherence()`
# checks the run against what the lesson says (*skip T*: T not called after the trigger; *start with
# T*: the first call is T; *call T*: T called; *answer*: no further look-up). The offline model obeys
# the lessons in its prompt by construction; Gemma's rate is a measurement:


# %%
def followed(results):
    return adherence_of_runs(((r.trace, r.injected) for r in results), words, tools)


modes = {
    "offline: Ralph Loop": ralph(offline)[0],
    "Gemma: Ralph, prompt": ralph_offline,
    "Gemma: Ralph, guard": ralph_guard,
    "Gemma: Ralph, both": ralph_both,
}
pd.DataFrame(
    [{"agent": name, **row} for name, results in modes.items() for row in follow_rates(followed(results))]
).set_index(["agent", "rule form"])

# %% [markdown]
# The offline model followed all of its held lessons (100%, by construction). Gemma, with the lesson
# only in its prompt, followed *start with query_database* in none of the 9 runs that carried it. As
# a guard, 5 of 9; as a guard and in the prompt, 6 of 9. The runs that broke it are the blind answers
# (no call at all, so the first call was not the database) and, with the guard alone, T002, where a
# refused blind answer was followed by a look in the cache.
#
# Did following change the outcome? Runs that followed every lesson whose trigger held, against runs
# that broke one (a comparison of runs, not a counterfactual):

# %%
pd.DataFrame(
    [
        {"agent": name, **row}
        for name, results in modes.items()
        for row in outcome_by_following(zip(followed(results), (r.correct for r in results), strict=True))
    ]
).set_index(["agent", "runs"])

# %% [markdown]
# The runs that followed every held lesson were right more often than those that broke one. But the
# runs that broke it are mostly the blind answers, which are wrong whatever the lesson says: this
# compares runs, and does not prove that the lesson made them right.
#
# ## The measured table
#
# All on the same 10 tasks and the same three core tools. *Valid* tool calls name a known tool with
# arguments it accepts; *no lookup* counts answers given without a single tool call; *bad replies* are
# turns with neither a tool call nor an answer; *reflections* are valid ones of those asked for.
# *Refusals* are steps a guard turned back; *lessons followed* is the follow rate above.
# *Model s/task* is the model's own time: simulated for the offline model, measured for Gemma (on the
# recording machine, with the Ralph Loop's reflections included).


# %%
def measure(agent, traces, results=()):
    """One row of the table, from the traces (and, for the Ralph Loop, the task results)."""
    known = {t.name for t in tools}
    calls = [s for t in traces for s in t.steps if s.status not in ("bad_reply", "refused")]
    valid = [s for s in calls if s.tool in known and s.status in ("ok", "not_found", "error")]
    reflections = [x for r in results for x in r.reflections]
    seconds = sum(t.model_latency_s for t in traces) + sum(r.extra_latency_s for r in results)
    return {
        "agent": agent,
        "valid tool calls": f"{len(valid)}/{len(calls)}",
        "calls/task": round(len(calls) / len(traces), 2),
        "wrong calls": sum(t.wrong_calls for t in traces),
        "no lookup": sum(1 for t in traces if not t.tool_calls and t.answer is not None),
        "bad replies": sum(1 for t in traces for s in t.steps if s.status == "bad_reply"),
        "correct": f"{sum(grade(t.task, t.answer).correct for t in traces)}/{len(traces)}",
        "reflections": f"{sum(x.ok for x in reflections)}/{len(reflections)}",
        "refusals": sum(1 for t in traces for s in t.steps if s.status == "refused"),
        "lessons followed": follow_rate(followed(results)) if results else "-",
        "model s/task": round(seconds / len(traces), 1),
    }


offline_ralph = modes["offline: Ralph Loop"]
table = pd.DataFrame(
    [
        measure("offline: bare ReAct", offline_react),
        measure("offline: ReAct + 06 lessons", offline_lessons),
        measure("offline: Ralph Loop", [r.trace for r in offline_ralph], offline_ralph),
        measure("Gemma: bare ReAct", gemma_react),
        measure("Gemma: ReAct + 06 lessons", gemma_lessons),
        measure("Gemma: Ralph, Gemma reflects", [r.trace for r in ralph_self], ralph_self),
        measure("Gemma: Ralph, offline reflects", [r.trace for r in ralph_offline], ralph_offline),
        measure("Gemma: Ralph + guards", [r.trace for r in ralph_guard], ralph_guard),
        measure("Gemma: Ralph + guards + prompt", [r.trace for r in ralph_both], ralph_both),
    ]
).set_index("agent")
table

# %% [markdown]
# And how fast the server was. `measure_speed()` timed two raw completions on a fresh server on the
# recording machine (2 cores, with other work running; the load average says how busy it was):

# %%
speed_file = CASSETTES / "08_speed.jsonl"
if LIVE:
    import llama_cpp

    from ralph_mini.local import measure_speed, serve_local

    with serve_local(port=8766) as server:
        speed = measure_speed(server.base_url)
    recorded = {
        "prompt_tokens_per_s": round(speed.prompt_tokens_per_s, 1),
        "completion_tokens_per_s": round(speed.completion_tokens_per_s, 1),
        "cores": os.cpu_count(),
        "load_average_1min": round(os.getloadavg()[0], 2),
        "llama_cpp_python": llama_cpp.__version__,
    }
    speed_file.write_text(json.dumps(recorded) + "\n")
recorded = json.loads(speed_file.read_text())
tokens = sum(t.tokens_out for t in gemma_react)
seconds = sum(t.model_latency_s for t in gemma_react)
print(f"reading the prompt: {recorded['prompt_tokens_per_s']} tokens/s")
print(f"writing new tokens: {recorded['completion_tokens_per_s']} tokens/s")
print(f"on {recorded['cores']} cores, load average {recorded['load_average_1min']}, ", end="")
print(f"llama-cpp-python {recorded['llama_cpp_python']}")
print(
    f"bare ReAct on Gemma: {tokens} tokens written in {seconds:.1f} s of model time: {tokens / seconds:.1f} tokens/s"
)

# %% [markdown]
# ## What changed
#
# On a real model, the kit's machinery held. Every tool call Gemma made was valid (the JSON schema saw
# to that), no reply was unreadable, and every run was logged and graded. The reflector's validator
# refused every one of Gemma's reflections (seven in the loop, three asked directly), and none of them
# reached memory.
#
# The *learning* did not carry over, and the table says why:
#
# - **The loop now sees Gemma's mistakes, but its lessons do not fix them.** Gemma fails by doing too
#   little: answering from the worked example, or from one look. The loop reflects on those runs (on
#   every grader rejection and every answer without a look-up: 8 of 10). But a reflector that knows no
#   answers learns only *start with query_database* from them, and nothing from a missing `paid_at`.
#   Gemma did not follow that lesson, and two runs got worse: 2/10 correct, against bare ReAct's 3/10.
# - **Gemma cannot reflect.** In the loop and asked directly, it repeated its prompt: 0 valid
#   reflections out of 7 in the loop and 3 direct, where the offline reflector wrote a valid rule from
#   each of the same three logs.
# - **Injected rules do change its behaviour, but not as written.** The four rules that take the
#   offline model from 2.4 to 1.4 calls per task, still 10/10 right, took Gemma from 0.7 to 0.6 calls
#   per task and from 3/10 to 2/10: one more answer without a look-up, one more missing `paid_at`.
#
# - **Guards make a lesson bind; they do not make the model right.** As guards (with or without the
#   prompt), *start with query_database* was followed in 5 and 6 of 9 runs instead of 0, and the loop
#   came back from 2/10 to bare ReAct's 3/10, on the same three tasks. It did not beat bare ReAct, and
#   no mode made a wrong call (the server's schema rules those out), so the target of guards beating
#   bare ReAct on Gemma is not met. What is left: blind answers, which a guard refuses once and Gemma
#   repeats, and answers one look short of `paid_at`, which no lesson covers (the reflector knows no
#   answers, and the rule grammar has no form for "report this field").
#
# So the lessons of notebooks 01 to 07 are about a model that follows instructions and overdoes the
# work. A 270M base model does neither. For the Ralph Loop to pay off on a real model, use an
# instruction-tuned one with native tool calling (a 7B model on Ollama or vLLM, docs/real_models.md).
# The notebooks then run on it live with `RALPH_MODEL` set.

# %%
table.loc[
    [
        "offline: bare ReAct",
        "offline: ReAct + 06 lessons",
        "offline: Ralph Loop",
        "Gemma: bare ReAct",
        "Gemma: ReAct + 06 lessons",
        "Gemma: Ralph, offline reflects",
        "Gemma: Ralph + guards",
        "Gemma: Ralph + guards + prompt",
    ],
    ["calls/task", "wrong calls", "no lookup", "correct", "refusals", "lessons followed"],
]
