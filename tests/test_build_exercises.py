"""The build-your-own track (exercises/build_your_own/, ralph_mini/exercise/ex06-ex09, build_track.py).

As tests/test_exercises.py does for the five core exercises: every checker accepts the reference
solution, says "Not attempted yet" to the starter, and rejects typical wrong answers (at least five
each, written below as students write them) with a message that names the mistake. Then the track's
notebooks: six in both editions, the handout leaves the track's solutions out, and the capstone's numbers
(quoted in both languages). What every exercise notebook must be (reproduced by the script in both
editions, its solution cells the reference modules, green when solved) is tested once, for the core five
and the track alike, in tests/test_exercise_notebooks.py.
"""

import importlib.util
import json
import sys
from collections import Counter
from pathlib import Path

import nbformat
import pytest
from hypothesis import given
from hypothesis import strategies as st
from wrong_answers import assert_rejected

import ralph_mini.exercise.build_your_own as exercise
from ralph_mini.embed import HashingEmbedder, keyword_words
from ralph_mini.exercise.build_your_own import (
    ANY_TASK,
    CONFIRM_TASKS,
    DOWN_DECAY,
    INSTANCE_RE,
    RECENT_DOWNS,
    RECENT_WINDOW,
    TOP_K,
    Lesson,
    Metered,
    Outcome,
    Pieces,
    by_weight,
    ex6,
    ex7a,
    ex7b,
    ex8,
    ex9,
    ex11,
    guard_with,
    kit_propose,
    kit_react,
    kit_vote,
    metered_pieces,
    outcome_records,
    review_run,
)
from ralph_mini.guards import binding
from ralph_mini.hardening import parse_final_answer
from ralph_mini.log import step_tags
from ralph_mini.measure import record
from ralph_mini.model import count_tokens
from ralph_mini.offline import OfflineModel
from ralph_mini.react import Step, build_system_prompt, run_react
from ralph_mini.rules import RuleSyntaxError, parse_rule
from ralph_mini.tools import NotFound, compress_observation
from ralph_mini.votes import trigger_held
from ralph_mini.worlds import orders

ROOT = Path(__file__).resolve().parent.parent
TRACK = ROOT / "exercises" / "build_your_own"
SOLUTIONS = TRACK / "solutions"
TRACK_ZH = ROOT / "exercises" / "zh" / "build_your_own"


def load(name: str):
    """A reference module by path: exercises/ is not a package on purpose."""
    spec = importlib.util.spec_from_file_location(f"build_{name}", SOLUTIONS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_script():
    spec = importlib.util.spec_from_file_location(
        "make_student_version", ROOT / "exercises" / "make_student_version.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


make_student_version = load_script()
REFERENCE = [
    (ex6, "ex06_react_loop", "react"),
    (ex7a, "ex07_memory_vote", "propose"),
    (ex7b, "ex07_memory_vote", "vote"),
    (ex8, "ex08_hybrid_retrieval", "retrieve"),
    (ex9, "ex09_assembly", "ralph_loop"),
]


# --- wrong answers to exercise 6: the ReAct loop, one mistake each ---------------------------------


def make_react(mistake: str = ""):
    """The reference loop with one typical mistake written in (the flag names it)."""

    def react(task, model, tools, lessons=(), max_steps=8):
        prompt = build_system_prompt(task.system_prompt, () if mistake == "no_lessons" else lessons)
        messages = [{"role": "system", "content": prompt}, {"role": "user", "content": task.question}]
        schemas, by_name, steps = [t.schema() for t in tools], {t.name: t for t in tools}, []
        turns = (
            range(max_steps - 1)
            if mistake == "off_by_one"
            else range(10**6 if mistake == "while_true" else max_steps)
        )
        for _ in turns:
            reply = model.complete(messages, schemas)
            if mistake != "no_assistant_message":
                messages.append(reply.to_message())
            if not reply.tool_calls:
                answer = parse_final_answer(reply.content or "")
                if mistake == "raw_answer":
                    return reply.content, steps
                if answer is not None and mistake != "never_stops" or mistake == "stops_at_text":
                    return answer, steps
                continue
            for call in reply.tool_calls[:1] if mistake == "first_call_only" else reply.tool_calls:
                tool = by_name[call.name] if mistake == "crash_on_unknown" else by_name.get(call.name)
                if tool is None:
                    status, observation = (
                        "wrong_tool",
                        f"error: unknown tool {call.name}; known tools are {', '.join(by_name)}",
                    )
                else:
                    try:
                        status, observation = (
                            "ok",
                            "ok: " + compress_observation(tool(**json.loads(call.arguments))),
                        )
                    except NotFound as err:
                        status, observation = (
                            ("error", f"error: {err}")
                            if mistake == "not_found_is_error"
                            else ("not_found", f"not_found: {err}")
                        )
                    except Exception as err:
                        status, observation = "error", f"error: {err}"
                index = len(steps) if mistake == "index_from_zero" else len(steps) + 1
                steps.append(
                    Step(
                        index, reply.content, call.name, call.arguments, status, observation, call_id=call.id
                    )
                )
                role = (
                    {"role": "user"}
                    if mistake == "observation_as_user"
                    else {"role": "tool", "tool_call_id": call.id}
                )
                messages.append({**role, "content": observation})
        return None, steps

    react.__qualname__ = f"react_{mistake}"
    return react


WRONG_REACT = [
    ("never_stops", ["asked again after it replied 'Final answer", "return (answer, steps) as soon as"]),
    (
        "observation_as_user",
        ["unanswered (you sent role 'user')", "'role': 'tool', 'tool_call_id': 'call_1'"],
    ),
    ("crash_on_unknown", ["raised KeyError", "status 'wrong_tool'"]),
    ("while_true", ["a turn too many: 4 turns with max_steps=3", "return (None, steps)"]),
    ("raw_answer", ["your answer is the text", "parse_final_answer"]),
    ("index_from_zero", ["numbered [0]", "number them 1, 2"]),
    ("first_call_only", ["leaves tool call call_2 unanswered"]),
    ("no_lessons", ["system prompt without the lesson", "build_system_prompt(task.system_prompt, lessons)"]),
    ("not_found_is_error", ["status 'error', expected 'not_found'", "normal outcome"]),
    ("stops_at_text", ["you stopped after 1 model turns", "is not the end"]),
    ("no_assistant_message", ["holds 0 of the model's 1 earlier replies", "reply.to_message()"]),
    ("off_by_one", ["you asked the model 2 times with max_steps=3"]),
]


# --- wrong answers to exercise 7 ------------------------------------------------------------------


def propose_without_instance_filter(memory, rule, task_id):
    try:
        key = str(parse_rule(rule))
    except RuleSyntaxError as err:
        return f"rejected: {err}"
    lesson = memory.setdefault(key, Lesson(key))
    if lesson.status != "invalid" and task_id not in lesson.tasks:
        lesson.tasks.append(task_id)
        lesson.status = "active" if len(lesson.tasks) >= CONFIRM_TASKS else lesson.status
    return lesson.status


def propose_active_at_once(memory, rule, task_id):
    decision = kit_propose(memory, rule, task_id)
    key = str(parse_rule(rule)) if not decision.startswith("rejected") else None
    if key and memory[key].status == "waiting":
        memory[key].status = "active"
    return decision


def propose_counts_every_proposal(memory, rule, task_id):
    if INSTANCE_RE.search(rule):
        return "rejected: an instance"
    try:
        key = str(parse_rule(rule))
    except RuleSyntaxError:
        return "rejected: not a rule"
    lesson = memory.setdefault(key, Lesson(key))
    if lesson.status == "invalid":
        return "kept invalid"
    lesson.tasks.append(task_id)  # the same task twice counts twice
    if len(lesson.tasks) >= CONFIRM_TASKS:
        lesson.status = "active"
    return lesson.status


def propose_keyed_by_text(memory, rule, task_id):
    if INSTANCE_RE.search(rule):
        return "rejected: an instance"
    try:
        parse_rule(rule)
    except RuleSyntaxError:
        return "rejected: not a rule"
    lesson = memory.setdefault(rule, Lesson(rule))  # 'When ...: skip X.' and 'when ...: skip X' are two
    if lesson.status != "invalid" and task_id not in lesson.tasks:
        lesson.tasks.append(task_id)
        lesson.status = "active" if len(lesson.tasks) >= CONFIRM_TASKS else lesson.status
    return lesson.status


def propose_without_grammar(memory, rule, task_id):
    if INSTANCE_RE.search(rule):
        return "rejected: an instance"
    key = rule.strip().rstrip(".")
    try:
        key = str(parse_rule(rule))
    except RuleSyntaxError:
        pass  # kept as written
    lesson = memory.setdefault(key, Lesson(key))
    if lesson.status != "invalid" and task_id not in lesson.tasks:
        lesson.tasks.append(task_id)
        lesson.status = "active" if len(lesson.tasks) >= CONFIRM_TASKS else lesson.status
    return lesson.status


def propose_revives_invalid(memory, rule, task_id):
    decision = kit_propose(memory, rule, task_id)
    key = None if decision.startswith("rejected") else str(parse_rule(rule))
    if key and memory[key].status == "invalid":
        memory[key].status, memory[key].tasks = "waiting", [task_id]
    return decision


def propose_returns_nothing(memory, rule, task_id):
    kit_propose(memory, rule, task_id)


def vote_counts_all_votes(lesson, up):
    if lesson.status != "active":
        return
    lesson.votes += "+" if up else "-"
    if not up:
        lesson.weight *= DOWN_DECAY
        if lesson.votes.count("-") >= RECENT_DOWNS:
            lesson.status = "invalid"


def vote_invalid_at_first_down(lesson, up):
    if lesson.status == "active":
        lesson.votes += "+" if up else "-"
        if not up:
            lesson.weight *= DOWN_DECAY
            lesson.status = "invalid"


def vote_without_decay(lesson, up):
    if lesson.status == "active":
        lesson.votes += "+" if up else "-"
        if lesson.votes[-RECENT_WINDOW:].count("-") >= RECENT_DOWNS:
            lesson.status = "invalid"


def vote_on_any_lesson(lesson, up):
    lesson.votes += "+" if up else "-"
    if not up:
        lesson.weight *= DOWN_DECAY
        if lesson.votes[-RECENT_WINDOW:].count("-") >= RECENT_DOWNS:
            lesson.status = "invalid"


def vote_revives_on_up(lesson, up):
    if lesson.status == "invalid" and up:
        lesson.status = "active"
    kit_vote(lesson, up)


def vote_up_restores_weight(lesson, up):
    kit_vote(lesson, up)
    if up and lesson.status == "active":
        lesson.weight = 1.0


def vote_three_downs(lesson, up):
    if lesson.status == "active":
        lesson.votes += "+" if up else "-"
        if not up:
            lesson.weight *= DOWN_DECAY
            if lesson.votes[-RECENT_WINDOW:].count("-") > RECENT_DOWNS:
                lesson.status = "invalid"


# --- wrong answers to exercise 8: one retrieve with one mistake each --------------------------------


def make_retrieve(mistake: str = ""):
    def retrieve(query, lessons, k=TOP_K, budget_tokens=1228, alpha=0.5, embedder=None):
        texts = [t for t, _ in lessons]
        if not texts:
            return []
        vectors = (embedder or HashingEmbedder()).embed([query, *texts])
        wanted = keyword_words(query)
        scored = []
        for (text, weight), cosine in zip(lessons, vectors[1:] @ vectors[0], strict=True):
            shared = len(wanted & keyword_words(text))
            keyword = shared if mistake == "count" else shared / len(wanted) if wanted else 0.0
            a = {"keyword_only": 1.0, "cosine_only": 0.0, "swapped": 1 - alpha}.get(mistake, alpha)
            score = (a * keyword + (1 - a) * float(cosine)) * (1 if mistake == "no_weight" else weight)
            scored.append((score, text))
        if mistake == "in_place":
            lessons.sort(key=lambda pair: -pair[1])
        ordered = sorted(scored, key=lambda p: p[0] if mistake == "ascending" else -p[0])
        chosen, left = [], budget_tokens
        for score, text in ordered:
            if (len(chosen) == k and mistake != "no_k") or (score <= 0 and mistake != "keeps_zero"):
                if mistake == "ascending":
                    continue
                break
            if count_tokens(text) <= left or mistake == "no_budget":
                chosen.append((text, score) if mistake == "pairs" else text)
                left -= count_tokens(text)
            elif mistake == "stops_at_misfit":
                break
        return chosen

    retrieve.__qualname__ = f"retrieve_{mistake}"
    return retrieve


WRONG_RETRIEVE = [
    ("keyword_only", ["by keywords alone", "alpha x keyword + (1 - alpha) x cosine"]),
    ("cosine_only", ["by cosine alone"]),
    ("swapped", ["the wrong way round: alpha=0.9"]),
    ("count", ["a share of the query's words"]),
    ("no_weight", ["left out the lessons' weights"]),
    ("keeps_zero", ["scoring 0 or less is never injected"]),
    ("stops_at_misfit", ["skipped, not the end"]),
    ("no_k", ["more than k=2"]),
    ("no_budget", ["more than budget_tokens=30"]),
    ("ascending", ["the worst first"]),
    ("in_place", ["you changed the lessons list"]),
    ("pairs", ["not pairs"]),
]


# --- wrong answers to exercise 9: the reference assembly with one mistake each ----------------------


def make_loop(mistake: str = ""):
    def ralph_loop(tasks, model, tools, pieces):
        memory, outcomes = {}, []
        for task in tasks:
            if mistake == "memory_per_task":
                memory = {}
            every = [(e.rule, e.weight) for e in memory.values()]
            active = (
                every
                if mistake == "waiting_too"
                else [(e.rule, e.weight) for e in memory.values() if e.status == "active"]
            )
            always = (
                [] if mistake == "no_always" else [r for r, _ in active if r.startswith(ANY_TASK)][:TOP_K]
            )
            others = [(r, w) for r, w in active if r not in always]
            k = TOP_K if mistake == "fixed_k" else TOP_K - len(always)
            lessons = always + pieces.retrieve(task.question, others, k=k)
            answer, steps = pieces.react(
                task, model, tools, lessons=() if mistake == "no_lessons" else lessons
            )
            review = review_run(task, answer, steps, tools)
            for rule in lessons:
                up = review.correct if mistake == "votes_on_verdict" else review.vote_on(rule)
                if up is not None and mistake != "no_votes":
                    pieces.vote(memory[rule], up)
            if review.worth_reflecting or mistake == "reflects_always":
                for rule in pieces.reflect(task, answer, steps, model, tools):
                    if mistake == "bypasses_propose":
                        memory.setdefault(rule, Lesson(rule)).tasks.append(task.task_id)
                    else:
                        pieces.propose(memory, rule, "T000" if mistake == "one_task_id" else task.task_id)
            outcomes.append(Outcome(task, answer, steps, lessons))
        return outcomes, memory

    ralph_loop.__qualname__ = f"ralph_loop_{mistake}"
    return ralph_loop


WRONG_LOOP = [
    ("memory_per_task", ["another memory than the tasks before it", "create memory once"]),
    ("waiting_too", ["which is waiting", "offer only active lessons"]),
    ("no_always", ["holds for every task goes in first"]),
    ("fixed_k", ["asked retrieve for k=3 with 1 lesson(s) for every task", "k=TOP_K - len(always)"]),
    ("no_lessons", ["ran with the lessons []", "pass them to pieces.react"]),
    ("no_votes", ["but you did not vote", "review.vote_on(rule)"]),
    ("votes_on_verdict", ["review.vote_on gives None"]),
    ("reflects_always", ["a correct run that wasted no call", "review.worth_reflecting"]),
    ("one_task_id", ["as task 'T000' while running T001", "task.task_id"]),
    ("bypasses_propose", ["did not propose", "pieces.propose(memory, rule, task.task_id)"]),
]


def loop_offering_nothing(tasks, model, tools, pieces):
    """Learns, but never offers retrieve a lesson (so nothing is injected)."""
    memory, outcomes = {}, []
    for task in tasks:
        lessons = pieces.retrieve(task.question, [], k=TOP_K)
        answer, steps = pieces.react(task, model, tools, lessons=lessons)
        review = review_run(task, answer, steps, tools)
        if review.worth_reflecting:
            for rule in pieces.reflect(task, answer, steps, model, tools):
                pieces.propose(memory, rule, task.task_id)
        outcomes.append(Outcome(task, answer, steps, lessons))
    return outcomes, memory


def loop_reflecting_on_nothing(tasks, model, tools, pieces):
    """The reference loop, but the reflector is shown an empty run."""
    loop = make_loop()
    wrapped = Pieces(
        pieces.react,
        pieces.propose,
        pieces.vote,
        pieces.retrieve,
        lambda task, answer, steps, model, tools: pieces.reflect(task, None, [], model, tools),
    )
    return loop(tasks, model, tools, wrapped)


WRONG = (
    [("ex6", make_react(m), words) for m, words in WRONG_REACT]
    + [
        ("ex7a", propose_without_instance_filter, ["you accepted", "names an instance (INSTANCE_RE)"]),
        (
            "ex7a",
            propose_active_at_once,
            ["its status is 'active', expected 'waiting'", "waits for 2 different tasks"],
        ),
        ("ex7a", propose_counts_every_proposal, ["a task that proposes a rule twice counts once"]),
        ("ex7a", propose_keyed_by_text, ["one record per rule", "str(parse_rule(rule))"]),
        (
            "ex7a",
            propose_without_grammar,
            ["you accepted 'always call query_local_cache first'", "it does not parse"],
        ),
        ("ex7a", propose_revives_invalid, ["you changed an invalid lesson", "never brings one back"]),
        ("ex7a", propose_returns_nothing, ["return the decision as a string"]),
        ("ex7b", vote_counts_all_votes, ["only the last 3 count", "'++-' has 1 down"]),
        ("ex7b", vote_invalid_at_first_down, ["1 down among its last 3 votes; it takes 2"]),
        ("ex7b", vote_without_decay, ["a down-vote multiplies the weight by DOWN_DECAY"]),
        ("ex7b", vote_on_any_lesson, ["for a waiting lesson", "you voted on a waiting lesson"]),
        ("ex7b", vote_revives_on_up, ["you changed an invalid lesson"]),
        ("ex7b", vote_up_restores_weight, ["an up-vote leaves it as it is"]),
        ("ex7b", vote_three_downs, ["its status is 'active', expected 'invalid'", "'+--' have 2 down"]),
    ]
    + [("ex8", make_retrieve(m), words) for m, words in WRONG_RETRIEVE]
    + [("ex9", make_loop(m), words) for m, words in WRONG_LOOP]
    + [
        (
            "ex9",
            loop_offering_nothing,
            ["you did not offer retrieve the active lesson", "offer every active"],
        ),
        ("ex9", loop_reflecting_on_nothing, ["you reflected on another run than T001's"]),
    ]
)

STARTERS = [
    ("ex6", "react"),
    ("ex7a", "propose"),
    ("ex7b", "vote"),
    ("ex8", "retrieve"),
    ("ex9", "ralph_loop"),
]


def starter(name: str):
    def stub(*args, **kwargs):
        """The student's function: docstring only."""
        # YOUR CODE HERE
        raise NotImplementedError()

    stub.__name__ = stub.__qualname__ = name
    return stub


# --- the checkers -----------------------------------------------------------------------------------


@pytest.mark.parametrize("ex, module, name", REFERENCE, ids=[r[0].name for r in REFERENCE])
def test_checker_accepts_the_reference_solution(ex, module, name):
    result = ex.check(getattr(load(module), name))
    assert result.passed and result.attempted, result.message
    assert ex.solution().code and f"def {name}(" in ex.solution().text


@pytest.mark.parametrize("name, function", STARTERS, ids=[s[0] for s in STARTERS])
def test_checker_says_not_attempted_to_the_starter(name, function, monkeypatch):
    monkeypatch.delattr(sys, "last_value", raising=False)
    result = getattr(exercise, name).check(starter(function))
    assert not result.passed and not result.attempted
    assert str(result).startswith("Not attempted yet: ")


def label(answer) -> str:
    return getattr(answer, "__qualname__", "?").split(".")[0]


@pytest.mark.parametrize("name, answer, words", WRONG, ids=[f"{w[0]}-{label(w[1])}" for w in WRONG])
def test_checker_rejects_a_wrong_answer_and_names_the_problem(name, answer, words):
    assert_rejected(getattr(exercise, name).check(answer), words)


def test_every_exercise_rejects_at_least_five_wrong_answers():
    counts = Counter({"ex7": 0}) + Counter(name.rstrip("ab") for name, _, _ in WRONG)
    assert {name: n >= 5 for name, n in counts.items()} == dict.fromkeys(["ex6", "ex7", "ex8", "ex9"], True)
    assert Counter(name for name, _, _ in WRONG)["ex7a"] >= 5 and Counter(n for n, _, _ in WRONG)["ex7b"] >= 5


def test_every_checker_has_three_hints_from_a_nudge_to_nearly_the_answer():
    for ex in (ex6, ex7a, ex7b, ex8, ex9):
        assert len(ex.hints) == 3
        assert str(ex.hint()).startswith("Hint 1/3") and str(ex.hint(9)).startswith("Hint 3/3")


TEXTS = [
    "when query_local_cache finds the order: skip query_database",
    "when status is pending and age under 30 min: skip query_payment_api",
    "when any task: start with query_local_cache",
    "when query_database finds nothing: skip query_payment_api",
    "payments captured by providers settle late",
    "订单付款状态",
]
weighted = st.lists(st.tuples(st.sampled_from(TEXTS), st.floats(0, 1)), max_size=6, unique_by=lambda p: p[0])


@given(weighted, st.integers(0, 80), st.integers(0, 4), st.sampled_from([0.0, 0.3, 0.5, 1.0]))
def test_the_reference_retrieve_follows_the_checker_s_rule_and_the_budget(lessons, budget, k, alpha):
    query = "Is order B456 pending, or did the payment provider capture it?"
    chosen = load("ex08_hybrid_retrieval").retrieve(query, lessons, k, budget, alpha, HashingEmbedder())
    assert chosen == exercise.hybrid_retrieval(query, lessons, k, budget, alpha)
    assert sum(count_tokens(text) for text in chosen) <= budget and len(chosen) <= k


@given(st.lists(st.booleans(), max_size=12))
def test_a_lesson_is_invalid_exactly_when_two_of_its_last_three_votes_were_down(votes):
    lesson = Lesson("when any task: start with query_local_cache", "active", ["T1", "T2"])
    for up in votes:
        load("ex07_memory_vote").vote(lesson, up)
    cast = "".join("+" if up else "-" for up in votes)[: len(lesson.votes)]
    assert lesson.votes == cast and lesson.weight == DOWN_DECAY ** cast.count("-")
    ends = [cast[: n + 1][-RECENT_WINDOW:].count("-") >= RECENT_DOWNS for n in range(len(cast))]
    assert (lesson.status == "invalid") == any(ends) and (not any(ends[:-1]) or not cast)


# --- the given pieces ------------------------------------------------------------------------------


def test_kit_react_is_run_react_and_the_reference_react_matches_it():
    suite = orders.make_suite(n=50, seed=7)
    model, tools = OfflineModel(habits=orders.HABITS), suite.world.tools()
    react = load("ex06_react_loop").react
    for task in suite.tasks:
        trace = run_react(task, model, tools)
        answer, steps = react(task, model, tools)
        assert kit_react(task, model, tools) == (trace.answer, trace.steps)
        assert answer == trace.answer
        assert [(s.tool, s.observation) for s in steps] == [(s.tool, s.observation) for s in trace.steps]


def test_outcome_records_count_as_the_kit_counts_a_bare_run():
    """Bare ReAct through the assembly's ruler gives notebook 01's record, task by task."""
    suite = orders.make_suite(n=12, seed=7)
    tools = suite.world.tools()
    meter, spent = Metered(OfflineModel(habits=orders.HABITS)), []
    react = metered_pieces(Pieces(kit_react, kit_propose, kit_vote, by_weight), meter, spent).react
    outcomes = [Outcome(task, *react(task, meter, tools), []) for task in suite.tasks]
    kit = [record(run_react(task, OfflineModel(habits=orders.HABITS), tools)) for task in suite.tasks]
    assert outcome_records(outcomes, tools, spent, meter) == kit


def test_a_loop_that_does_not_learn_is_told_so():
    """The checker's backstop, behind every check of the pieces' calls: fewer calls than bare ReAct."""
    from ralph_mini.exercise.ex09_assembly import _learns_problem

    suite = orders.make_suite(n=20, seed=7)
    model, tools = OfflineModel(habits=orders.HABITS), suite.world.tools()
    bare = [Outcome(task, *kit_react(task, model, tools), []) for task in suite.tasks]
    assert _learns_problem(bare, suite.tasks, model, tools).startswith(
        "the loop did not learn: 2.90 calls per task in tasks 11-20, bare ReAct 2.90"
    )
    outcomes, _ = load("ex09_assembly").ralph_loop(suite.tasks, model, tools, exercise.STAND_INS)
    assert _learns_problem(outcomes, suite.tasks, model, tools) is None


def test_a_vote_follows_the_kit_s_judge():
    suite = orders.make_suite(n=2, seed=7)
    tools, task = suite.world.tools(), suite.tasks[0]  # A123, in the cache
    lessons = [
        "when query_local_cache finds the order: skip query_database",
        "when status is pending: answer",
    ]
    answer, steps = kit_react(task, OfflineModel(habits=orders.HABITS), tools, lessons=lessons[:1])
    review = review_run(task, answer, steps, tools)
    assert review.correct and not review.wasted and not review.worth_reflecting
    assert [review.vote_on(rule) for rule in lessons] == [True, None]  # the second's trigger did not hold


# --- the notebooks ---------------------------------------------------------------------------------


def instructor_paths() -> list[Path]:
    return make_student_version.instructor_notebooks(SOLUTIONS)


def test_the_track_has_five_notebooks_in_both_versions():
    stems = ["ex06_react_loop", "ex07_memory_vote", "ex08_hybrid_retrieval", "ex09_assembly", "ex10_capstone"]
    stems += ["ex11_guard"]  # after notebook 12
    assert [p.name for p in instructor_paths()] == [f"{s}.ipynb" for s in stems]
    assert sorted(p.name for p in TRACK.glob("ex*.ipynb")) == [f"{s}.ipynb" for s in stems]
    assert sorted(p.name for p in TRACK_ZH.glob("ex*.ipynb")) == [f"{s}.ipynb" for s in stems]
    assert set(instructor_paths()) <= set(make_student_version.instructor_notebooks())


def test_the_handout_leaves_the_track_s_solutions_out():
    assert "exercises/build_your_own/solutions/" in make_student_version.LEFT_OUT
    names = [p.name for p in make_student_version.instructor_notebooks()]
    assert "ex03_template_validator.ipynb" in names and "ex10_capstone.ipynb" in names


def test_the_student_path_of_each_instructor_notebook():
    core, track = ROOT / "exercises" / "solutions" / "ex01_tool.ipynb", SOLUTIONS / "ex06_react_loop.ipynb"
    assert make_student_version.student_path(core) == ROOT / "exercises" / "ex01_tool.ipynb"
    assert make_student_version.student_path(track) == TRACK / "ex06_react_loop.ipynb"
    assert make_student_version.student_path(track, Path("/tmp/out")) == Path(
        "/tmp/out/build_your_own/ex06_react_loop.ipynb"
    )


# --- the capstone's numbers -------------------------------------------------------------------------


def capstone_numbers() -> dict[str, dict[str, str]]:
    """calls/task over all fifty tasks and tasks 21-50: the kit's loop, the kit without probation and
    the second retrieval, and the teaching loop built from the reference solutions."""
    from ralph_mini.bench import RALPH, Agent, run_agent
    from ralph_mini.loop import LoopConfig
    from ralph_mini.measure import windows
    from ralph_mini.memory import MemoryConfig

    model = OfflineModel(habits=orders.HABITS)

    def kit(agent):
        suite = orders.make_suite(n=50, seed=7)
        return run_agent(agent, suite.tasks, model, suite.world.tools(), words=orders.WORDS)[0]

    suite = orders.make_suite(n=50, seed=7)
    meter, spent = Metered(model), []
    pieces = Pieces(
        load("ex06_react_loop").react,
        load("ex07_memory_vote").propose,
        load("ex07_memory_vote").vote,
        load("ex08_hybrid_retrieval").retrieve,
    )
    outcomes, _ = load("ex09_assembly").ralph_loop(
        suite.tasks, meter, suite.world.tools(), metered_pieces(pieces, meter, spent)
    )
    neither = Agent("neither", memory=MemoryConfig(probation=False), loop=LoopConfig(second_retrieval=False))
    runs = {
        "kit": kit(RALPH),
        "neither": kit(neither),
        "teaching": outcome_records(outcomes, suite.world.tools(), spent, meter),
    }
    return {
        name: {row["tasks"]: f"{row['calls/task']:.2f}" for row in windows(recs, name)}
        for name, recs in runs.items()
    }


def test_the_capstone_prose_quotes_the_measured_numbers():
    """The capstone explains the gap in words; when a change to the kit moves a number, this names it."""
    numbers = capstone_numbers()
    cells = nbformat.read(SOLUTIONS / "ex10_capstone.ipynb", as_version=4).cells
    prose = " ".join(" ".join(c.source.split()) for c in cells if c.cell_type == "markdown")
    kit, neither, teaching = numbers["kit"], numbers["neither"], numbers["teaching"]
    gap = f"{float(teaching['all']) - float(kit['all']):.2f}"
    for sentence in (
        f"the kit's loop makes {kit['all']} calls per task ({kit['21-50']} in tasks 21-50",
        f"the teaching loop {teaching['all']} ({teaching['21-50']} in tasks 21-50)",
        f"{teaching['21-50']} calls per task against {neither['21-50']} in tasks 21-50",
        f"{teaching['all']} against {neither['all']} over all fifty tasks",
        f"worth {gap} calls per task ({teaching['all']} against the kit's {kit['all']})",
    ):
        assert sentence in prose, f"the capstone should say: {sentence}"
    guide = " ".join((ROOT / "exercises" / "README.md").read_text(encoding="utf-8").split())
    for sentence in (
        f"the teaching loop makes {teaching['all']} calls per task against the kit's {kit['all']}",
        f"the kit makes {neither['all']}, and exactly the teaching loop's {teaching['21-50']} in tasks 21-50",
    ):
        assert sentence in guide, f"the guide should say: {sentence}"
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    sentence = f"the teaching loop makes {teaching['all']} calls per task against the kit's {kit['all']}"
    assert sentence in readme, f"README.md should say: {sentence}"
    assert neither["21-50"] == teaching["21-50"]
    for sentence in (  # the Chinese half of each cell, and the Chinese guide
        f"工具包的循环每个任务调用 {kit['all']} 次（任务 21-50 中为 {kit['21-50']} 次",
        f"教学循环为 {teaching['all']} 次（任务 21-50 中为 {teaching['21-50']} 次）",
        f"在任务 21-50 中每个任务 {teaching['21-50']} 次调用对 {neither['21-50']} 次",
        f"在全部五十个任务上是 {teaching['all']} 对 {neither['all']}",
        f"每个任务 {gap} 次调用（{teaching['all']} 对工具包的 {kit['all']}）",
    ):
        assert sentence in prose, f"the capstone should say: {sentence}"
    guide = " ".join((ROOT / "exercises" / "zh" / "README.md").read_text(encoding="utf-8").split())
    for sentence in (
        f"教学循环每个任务调用 {teaching['all']} 次，工具包为 {kit['all']} 次",
        f"工具包为 {neither['all']} 次，在任务 21-50 中恰好是教学循环的 {teaching['21-50']} 次",
    ):
        assert sentence in guide, f"the Chinese guide should say: {sentence}"


def test_the_track_s_api_is_pinned():
    """The track's notebooks import from ralph_mini.exercise.build_your_own; ralph_mini.exercise keeps its five."""
    assert exercise.__all__ == sorted(exercise.__all__, key=lambda name: (not name.isupper(), name))
    assert {"ex6", "ex7a", "ex7b", "ex8", "ex9", "Lesson", "Pieces", "review_run", "STAND_INS"} <= set(
        exercise.__all__
    )
    assert all(getattr(exercise, name) is not None for name in exercise.__all__)
    assert exercise.BUILD_SOLUTIONS == SOLUTIONS and SOLUTIONS.is_dir()


# --- exercise 11: a lesson's guard (after notebook 12) ----------------------------------------------


def make_guard(mistake: str = ""):
    """The reference check_call with one typical mistake written in (the flag names it)."""

    def check_call(rule, tool, steps, words, now, lookups):
        seen = {"any"}
        for step in steps:
            if step.status != "refused":
                seen |= step_tags(step, words, None if mistake == "no_now" else now)
            if mistake == "own_nothing_tag" and step.status != "ok":
                seen.add(f"{step.tool}:nothing")  # an order not found... or a call that never ran
            if mistake == "call_is_a_find":
                seen.add(f"{step.tool}:found")
        if mistake == "status_without_age" and rule.trigger.kind == "status":
            held = f"status:{rule.trigger.status}" in seen
        else:
            held = trigger_held(rule, seen)
        if not held and mistake != "ignores_trigger":
            return None
        skipped = {a.tool for a in rule.actions if a.verb == "skip"}
        named = rule.tools() if mistake == "every_named_tool" else skipped
        again = any(s.tool == tool and s.status == "refused" for s in steps)
        if tool in named and not (mistake == "refuses_once" and again):
            if mistake == "no_quote":
                return f"refused: skip {tool}"
            if mistake == "no_prefix":
                return f"The lesson '{rule}' says skip {tool}."
            return f"refused: the lesson '{rule}' says skip {tool}"
        looked = any(
            s.tool in lookups and (mistake == "any_call_looked" or s.status in ("ok", "not_found"))
            for s in steps
        )
        answer = any(a.verb == "answer" for a in rule.actions) and mistake != "skip_only"
        stops = tool in lookups or mistake == "answer_stops_writes"
        if answer and stops and (looked or mistake == "answer_at_once"):
            return f"refused: the lesson '{rule}' says answer now"
        return "" if mistake == "empty_string" else None

    check_call.__qualname__ = f"check_call_{mistake}"
    return check_call


WRONG_GUARD = [  # (mistake, words the message must have)
    ("ignores_trigger", ["you refused query_database, but the lesson's trigger", "has not held"]),
    ("every_named_tool", ["you refused query_local_cache", "does not forbid it", "only 'skip T' refuses T"]),
    ("call_is_a_find", ["came back not_found", "a call is not a find"]),
    ("own_nothing_tag", ["step 2 (query_database) was refused: it never ran", "leave refused steps out"]),
    ("no_quote", ["does not quote the lesson", "str(rule)"]),
    ("no_prefix", ["must start with 'refused:'"]),
    ("empty_string", ["you returned ''", "return None"]),
    ("refuses_once", ["a refusal does not lift the lesson"]),
    ("no_now", ["says skip query_payment_api", "pass now"]),
    ("status_without_age", ["but 210 min old", "checks the age too"]),
    ("skip_only", ["the lesson says answer", "refuse a further look-up such as query_database"]),
    ("answer_stops_writes", ["you refused refund_order", "it writes"]),
    ("answer_at_once", ["no look-up has answered yet (no step yet)"]),
    ("any_call_looked", ["no look-up has answered yet (step 1 get_shipping_status wrong_tool)"]),
]


def test_the_guard_checker_accepts_the_reference_and_tries_it_in_run_react():
    result = ex11.check(load("ex11_guard").check_call)
    assert result.passed and result.attempted, result.message
    assert "In run_react, on 24 runs, it refused the same" in result.message
    assert ex11.solution().code and "def check_call(" in ex11.solution().text


def test_the_guard_checker_says_not_attempted_to_the_starter(monkeypatch):
    monkeypatch.delattr(sys, "last_value", raising=False)
    result = ex11.check(starter("check_call"))
    assert not result.passed and not result.attempted


@pytest.mark.parametrize("mistake, words", WRONG_GUARD, ids=[w[0] for w in WRONG_GUARD])
def test_the_guard_checker_rejects_a_typical_mistake_and_names_it(mistake, words):
    result = ex11.check(make_guard(mistake))
    assert not result.passed and result.attempted
    assert str(result).startswith("Incorrect: ")
    for word in words:
        assert word in result.message, f"{word!r} not in: {result.message}"


def test_the_guard_exercise_has_five_mistakes_and_three_hints():
    assert len(WRONG_GUARD) >= 5 and ex11.check(make_guard()).passed  # no flag: the reference itself
    assert len(ex11.hints) == 3 and str(ex11.hint(9)).startswith("Hint 3/3")


def test_a_guard_that_passes_the_calls_is_still_tried_in_run_react():
    from ralph_mini.exercise.ex11_guard import _runs_problem

    problem, _, runs = _runs_problem(lambda *args: None)  # never refuses
    assert runs == 0 and "on T001" in problem
    assert "your guard's steps were ['query_local_cache ok', 'query_database ok']" in problem
    assert _runs_problem(load("ex11_guard").check_call)[0] is None


def test_the_reference_guard_in_run_react_refuses_what_the_package_s_guard_refuses():
    suite = orders.make_suite(n=50, seed=7)
    model, tools = OfflineModel(habits=orders.HABITS), suite.world.tools()
    lessons = ["when query_local_cache finds the order: skip query_database", "when status is paid: answer"]
    check_call, refused = load("ex11_guard").check_call, 0
    for task in suite.tasks:
        mode = binding("guard", orders.WORDS, task.now, tools)
        kit = run_react(task, model, tools, lessons=lessons, **mode)
        mine = run_react(task, model, tools, lessons=lessons, lessons_in_prompt=False,
                         guard=guard_with(check_call, orders.WORDS, task.now, tools))  # fmt: skip
        assert [(s.tool, s.status, s.observation) for s in mine.steps] == [
            (s.tool, s.status, s.observation) for s in kit.steps
        ]
        refused += sum(s.status == "refused" for s in mine.steps)
    assert refused > 0
