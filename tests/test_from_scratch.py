"""The from-scratch cells of notebooks 01-06: short, and computing what the package computes.

Practice 15 of the style guide: each lesson first writes its core mechanism by hand, in about 40 lines
of plain Python, and shows it next to the package's version on the same input. A cell is marked by its
first line, ``# from scratch: ...``. This test finds those cells in the committed notebooks (what a
student runs), counts their code lines, runs them in a fresh namespace that holds only the inputs the
notebook gives them, and compares the result with the package's on the same input: the same numbers,
or exactly the differences the notebook names.
"""

from datetime import timedelta
from pathlib import Path

import nbformat
import numpy as np
import pytest
from fakes import ScriptedModel

from ralph_mini import FakeClock, Memory, grade, lang, model_from_env, run_react
from ralph_mini.bench import RALPH, run_agent
from ralph_mini.embed import HashingEmbedder
from ralph_mini.log import load_log
from ralph_mini.measure import run_suite
from ralph_mini.memory import MemoryConfig
from ralph_mini.model import ModelReply, ToolCall
from ralph_mini.reflect import reflect, reflection_messages, reflection_text, validate_reflection
from ralph_mini.retrieval import (
    Retriever,
    build_labelled_memory,
    experience_text,
    keyword_score,
    load_labelled_set,
    select_within_budget,
)
from ralph_mini.votes import apply_vote
from ralph_mini.waste import run_waste
from ralph_mini.worlds import orders

ROOT = Path(__file__).resolve().parents[1]
MARKER = "# from scratch:"
MAX_CODE_LINES = 40  # "about 40 lines": the size of a mechanism a student reads top to bottom
LESSONS = (
    "01_bare_react",
    "02_execution_log",
    "03_reflector",
    "04_memory",
    "05_vector_retrieval",
    "06_ralph_loop",
)


def cells(lesson: str, first_line: str = MARKER) -> list[str]:
    """The sources of the code cells of ``notebooks/<lesson>.ipynb`` whose first line starts so."""
    notebook = nbformat.read(ROOT / "notebooks" / f"{lesson}.ipynb", as_version=4)
    return [c.source for c in notebook.cells if c.cell_type == "code" and c.source.startswith(first_line)]


def code_lines(source: str) -> int:
    """Lines that are code: not blank, not a comment. 'x = 1\\n\\n# why\\ny = 2' -> 2."""
    return sum(1 for line in source.splitlines() if line.strip() and not line.strip().startswith("#"))


def run_cells(lesson: str, **inputs) -> dict:
    """Run the lesson's from-scratch cells, in order, in a namespace holding only ``inputs``."""
    # ``lang`` as the lesson's first cell leaves it: the cells print in the reader's language
    namespace = {"lang": lang, **inputs}
    for source in cells(lesson):
        exec(compile(source, f"<{lesson}: from scratch>", "exec"), namespace)
    return namespace


def offline() -> tuple:
    """The notebooks' inputs: the offline model with the order desk's habits, the 50-task suite (seed 7)."""
    suite = orders.make_suite(n=50, seed=7)
    return model_from_env(habits=orders.HABITS), suite, suite.world.tools()


def test_code_lines_counts_neither_blanks_nor_comments():
    assert code_lines("x = 1\n\n   # why\ny = 2  # inline counts\n") == 2


@pytest.mark.parametrize("lesson", LESSONS)
def test_each_lesson_has_short_from_scratch_cells(lesson):
    found = cells(lesson)
    assert found, f"{lesson}: no code cell starts with {MARKER!r}"
    for source in found:
        title = source.splitlines()[0]
        assert code_lines(source) <= MAX_CODE_LINES, f"{lesson}, {title!r}: {code_lines(source)} code lines"


def test_01_the_react_loop_by_hand_holds_the_same_conversation_as_run_react():
    model, suite, tools = offline()
    task = suite.tasks[0]
    scratch = run_cells("01_bare_react", model=model, tools=tools, suite=suite)
    assert scratch["task"] is task  # the cell runs on the notebook's first task
    trace = run_react(task, model, tools)
    assert (scratch["answer"], scratch["messages"]) == (trace.answer, trace.messages)
    by_hand = scratch["react_by_hand"]
    for task in suite.tasks:
        answer, messages = by_hand(task.question, task.system_prompt, model, tools)
        trace = run_react(task, model, tools)
        assert (answer, messages) == (trace.answer, trace.messages), task.task_id


def test_01_the_difference_the_notebook_names_a_made_up_tool_crashes_the_hand_loop():
    model, suite, tools = offline()
    by_hand = run_cells("01_bare_react", model=model, tools=tools, suite=suite)["react_by_hand"]
    typo = ModelReply("checking", (ToolCall("call_1", "query_db", '{"order_id": "A123"}'),))
    answer = ModelReply('Final answer: {"status": "paid"}')
    with pytest.raises(KeyError):
        by_hand("Check order A123.", "prompt", ScriptedModel(typo, answer), tools)
    trace = run_react(suite.tasks[0], ScriptedModel(typo, answer), tools)
    assert [s.status for s in trace.steps] == ["wrong_tool"] and trace.answer == {"status": "paid"}


def test_02_the_step_log_and_the_waste_query_match_the_package(tmp_path, monkeypatch):
    from ralph_mini.log import append_run, log_run

    model, suite, tools = offline()
    traces = run_suite(suite.tasks, model, tools)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs").mkdir()
    scratch = run_cells("02_execution_log", traces=traces, Path=Path)
    rows = scratch["rows"]
    for number, trace in enumerate(traces, 1):
        append_run(
            tmp_path / "log.jsonl", *log_run(trace, f"R{number:03d}", grade(trace.task, trace.answer).correct)
        )
    records, runs = load_log(tmp_path / "log.jsonl")
    keys = ("run_id", "step", "tool", "status", "latency_s")
    assert [tuple(row[k] for k in keys) for row in rows] == [
        tuple(getattr(r, k) for k in keys) for r in records
    ]
    complete = [t.name for t in tools if t.holds_every]
    package = {
        (f"R{n:03d}", i) for n, trace in enumerate(traces, 1) for i in run_waste(trace, complete=complete)
    }
    assert set(scratch["wasted"]) == package and len(package) == 65  # the notebook's "65 of 141"
    assert len(rows) == 141


def test_03_the_template_check_and_reask_match_reflect():
    model, suite, tools = offline()
    task = suite.tasks[1]
    wasteful = run_react(task, model, tools)
    verdict = grade(task, wasteful.answer)
    log_text = reflection_text(wasteful, "R002", verdict.correct, verdict)
    scratch = run_cells(
        "03_reflector",
        model=model,
        tools=tools,
        words=orders.WORDS,
        log_text=log_text,
        advice="no template",
        reflection_messages=reflection_messages,
    )
    by_hand = scratch["reflect_by_hand"]
    for max_words in (30, 10):
        reflection = reflect(log_text, model, tools, orders.WORDS, max_words=max_words)
        assert reflection.ok
        assert by_hand(log_text, model, max_words=max_words) == {
            "EFFECTIVE STEPS": list(reflection.effective),
            "INEFFECTIVE STEPS": list(reflection.ineffective),
            "REUSABLE RULES": list(reflection.rules),
            "AVOID": list(reflection.avoid),
        }
    # the differences the notebook names: an empty template, and a rule naming one order
    assert not reflect(log_text, model, tools, orders.WORDS, max_words=4).ok
    assert by_hand(log_text, model, max_words=4) == dict.fromkeys(scratch["SECTIONS"], [])
    special = "\n".join(
        ["EFFECTIVE STEPS:", "- query_local_cache gave status", "INEFFECTIVE STEPS:", "- none"]
        + ["REUSABLE RULES:", "- when order B456 is pending: skip query_payment_api", "AVOID:", "- none"]
    )
    assert scratch["check"](special)[1] == []
    assert len(validate_reflection(special, orders.WORDS, [t.name for t in tools])) == 2


def replay_package(events: list, start, config: MemoryConfig) -> dict:
    """The notebook's events through ``Memory`` and ``apply_vote``: {rule: (status, confidence, weight)}."""
    clock = FakeClock(start)
    memory, found = Memory(clock, config), {}
    for day, rule, what in events:
        clock.now = start + timedelta(days=day)
        if what in ("up", "down"):
            memory.record_hits([found[rule]])
            apply_vote(
                found[rule], what == "up", "a wasted call", config, clock().isoformat(timespec="minutes")
            )
        else:
            found[rule] = memory.propose(rule, task_id=what, run_id=what, task_type="status")[1]
    clock.now = start + timedelta(days=8)
    return {rule: (e.status, e.confidence, memory.weight(e)) for rule, e in found.items()}


def test_04_the_memory_by_hand_matches_memory_with_two_guards_off_and_differs_where_named():
    (events_cell,) = cells(
        "04_memory", "# a handful of lessons"
    )  # the cell's input, as the notebook gives it
    given = {"FakeClock": FakeClock}
    exec(compile(events_cell, "<04: a handful of lessons>", "exec"), given)
    scratch = run_cells("04_memory", timedelta=timedelta, **given)
    start, day_8 = given["START"], given["START"] + timedelta(days=8)
    by_hand = {
        rule: (lesson["status"], scratch["confidence"](lesson), scratch["weight"](lesson, day_8))
        for rule, lesson in scratch["by_hand"].items()
    }
    essentials = MemoryConfig(probation=False, recent_failures=10**9, max_wrong_answers=10**9)
    package = replay_package(given["EVENTS"], start, essentials)
    assert by_hand.keys() == package.keys()
    for rule, (status, confidence, weight) in by_hand.items():
        assert package[rule] == (status, pytest.approx(confidence, abs=1e-5), pytest.approx(weight, abs=1e-5))
    defaults = replay_package(given["EVENTS"], start, MemoryConfig())
    differ = {
        rule: (by_hand[rule][0], defaults[rule][0]) for rule in by_hand if by_hand[rule] != defaults[rule]
    }
    assert differ == {
        given["SKIP_DB"]: ("candidate", "probation"),  # probation: proposed once, injected at once
        given["PROVIDER"]: ("active", "invalid"),  # judged by what it does now: 2 of its last 3 votes down
    }
    # and past expiry every weight is 0, by hand as in the package
    assert all(
        scratch["weight"](lesson, start + timedelta(days=40)) == 0 for lesson in scratch["by_hand"].values()
    )


def test_05_embed_index_score_and_cut_match_the_retriever():
    memory = Memory(FakeClock())
    build_labelled_memory(memory)
    embedder = HashingEmbedder()
    scratch = run_cells(
        "05_vector_retrieval",
        memory=memory,
        embedder=embedder,
        experience_text=experience_text,
        keyword_score=keyword_score,
    )
    lessons = scratch["lessons"]
    by_hand = np.stack([scratch["embed"](experience_text(e)) for e in lessons])
    assert np.array_equal(by_hand, embedder.embed([experience_text(e) for e in lessons]))
    retriever = Retriever(memory, embedder, mode="hybrid")
    for query in load_labelled_set()["queries"]:
        mine = scratch["search_by_hand"](query["text"], k=10)
        package = retriever.search(query["text"], k=10)
        assert [e.id for _, e in mine] == [h.experience.id for h in package], query["text"]
        assert [s for s, _ in mine] == pytest.approx([h.score for h in package], abs=1e-6)
        for context in (8192, 512, 200):
            chosen = scratch["cut_to_budget"]([e for _, e in mine], context)
            assert chosen == select_within_budget([h.experience for h in package], context)


def test_06_the_loop_by_hand_matches_run_task_on_tasks_21_to_50_and_differs_on_t002():
    model, suite, tools = offline()
    scratch = run_cells(
        "06_ralph_loop",
        model=model,
        tools=tools,
        suite=suite,
        words=orders.WORDS,
        run_react=run_react,
        FakeClock=FakeClock,
        Memory=Memory,
    )
    by_hand = scratch["by_hand"]
    fresh = orders.make_suite(n=50, seed=7)
    package, _, _ = run_agent(RALPH, fresh.tasks, model, fresh.world.tools(), words=orders.WORDS)
    assert [(r.task_id, r.calls, r.wrong_calls, r.correct) for r in by_hand[20:]] == [
        (r.task_id, r.calls, r.wrong_calls, r.correct) for r in package[20:]
    ]
    assert round(sum(r.tokens for r in by_hand[20:]) / 30) == round(sum(r.tokens for r in package[20:]) / 30)
    assert round(sum(r.latency_s for r in by_hand[20:]) / 30, 1) == round(
        sum(r.latency_s for r in package[20:]) / 30, 1
    )
    differ = [
        (h.task_id, h.calls, p.calls) for h, p in zip(by_hand, package, strict=True) if h.calls != p.calls
    ]
    assert differ == [("T002", 3, 4)]  # the package reflects on waste only once the task type recurs
