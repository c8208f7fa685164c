"""The outer Ralph loop (``outer.py``): one test per stop, each on a task set built to need it.

Every run is consumed through ``islice``, so a stop that has been removed shows up as a failed
assertion (more passes, another reason), never as a hung test.
"""

from dataclasses import replace
from itertools import islice

import pytest

from ralph_mini import OfflineModel
from ralph_mini.__main__ import main
from ralph_mini.bench import RALPH, Agent, run_agent
from ralph_mini.loop import LoopConfig
from ralph_mini.memory import MemoryConfig
from ralph_mini.model import ModelReply
from ralph_mini.outer import OuterConfig, pick_tasks, read_notes, read_task_file, run_outer, write_task_file
from ralph_mini.worlds import orders

SUITE = orders.make_suite(n=50, seed=7)
MODEL = OfflineModel(habits=orders.HABITS)
WORDS = orders.WORDS
TOOLS = SUITE.world.tools()
TWO_PER_KIND = pick_tasks(SUITE.tasks, 0, per_kind=2)  # every lesson is seen in two tasks: can finish
STALE = [t for t in SUITE.tasks if t.kind == "pending_stale"][:3]
DEFAULTS = OuterConfig()
NO_PROVIDER = [t for t in TOOLS if t.name != "query_payment_api"]  # stale pending orders: unsolvable


def outer(tmp_path, tasks, *, model=MODEL, tools=TOOLS, config=DEFAULTS, agent=RALPH, limit=12):
    write_task_file(tmp_path / "TASKS.md", tasks)
    passes = run_outer(tmp_path / "TASKS.md", tmp_path / "NOTES.md", SUITE.tasks, model, tools,
                       words=WORDS, config=config, agent=agent)  # fmt: skip
    return list(islice(passes, limit))


def test_two_per_kind_is_a_dozen_tasks_of_six_kinds():
    assert [t.task_id for t in TWO_PER_KIND] == [
        "T001", "T002", "T003", "T004", "T005", "T006", "T007", "T009", "T012", "T014", "T023", "T032",
    ]  # fmt: skip
    assert pick_tasks(SUITE.tasks, 3, per_kind=0) == SUITE.tasks[:3]
    assert pick_tasks(SUITE.tasks, 3, per_kind=0, kind="pending_stale") == STALE


def test_done_stops_when_the_grader_and_validator_say_so(tmp_path):
    passes = outer(tmp_path, TWO_PER_KIND)
    assert [(p.number, p.stop) for p in passes] == [(1, None), (2, "done")]
    # pass 1: T001 and T002 teach, T012 makes a redundant call before its lesson is proposed
    assert (passes[0].clean, passes[1].clean, passes[1].correct) == (9, 12, 12)
    assert passes[0].why == "3 of 12 tasks not clean"
    assert len(passes[1].lessons) == 4 and not passes[1].lessons_added


def test_a_typed_completion_phrase_does_not_stop_the_loop(tmp_path):
    class Boaster:
        """Claims it is done at once, without calling a tool; reflects like the offline model."""

        def complete(self, messages, tools):
            if not tools:
                return MODEL.complete(messages, tools)
            return ModelReply('DONE <promise>COMPLETE</promise>\nFinal answer: {"status": "paid"}')

    passes = outer(tmp_path, TWO_PER_KIND, model=Boaster())
    assert passes[0].stop is None and passes[0].correct == 0  # it said COMPLETE on all 12: not done
    assert [p.stop for p in passes] == [None, "no progress"]
    assert "done" not in [p.stop for p in passes]


def test_no_progress_stops_an_agent_that_never_changes(tmp_path):
    never_learns = Agent("no reflector", loop=LoopConfig(reflect=False))
    passes = outer(tmp_path, SUITE.tasks[:8], agent=never_learns)
    assert [(p.number, p.stop) for p in passes] == [(1, None), (2, "no progress")]
    assert passes[0].answers == passes[1].answers and passes[1].lessons == ()
    assert passes[1].clean < passes[1].tasks  # not done: only the no-progress stop ends it before the cap


def test_no_progress_when_a_lesson_needs_a_second_task_the_file_does_not_hold(tmp_path):
    # T002 is the only fresh pending order in T001-T008: its lesson stays on probation (no other task
    # validates it), which the notes do not carry, and re-running the same task is not a second
    # confirmation. Pass 1 is clean but for T001 and T002 (the rules on probation steer T003-T008).
    passes = outer(tmp_path, SUITE.tasks[:8])
    assert [(p.stop, p.clean) for p in passes] == [(None, 6), ("no progress", 7)]


def test_an_unsolvable_task_set_stops_when_a_pass_changes_nothing(tmp_path):
    passes = outer(tmp_path, STALE, tools=NO_PROVIDER)
    assert [p.stop for p in passes] == [None, "no progress"]
    assert all(p.correct == 0 for p in passes)
    assert passes[0].lessons == passes[1].lessons != ()  # learned once, kept: nothing left to change


def test_the_cap_stops_an_unsolvable_task_set_when_no_progress_is_not_checked(tmp_path):
    passes = outer(tmp_path, STALE, tools=NO_PROVIDER, config=OuterConfig(stop_on_no_progress=False))
    assert [p.stop for p in passes] == [None, None, None, None, "cap"]
    assert all(p.correct == 0 for p in passes)


def test_the_cap_holds_with_the_no_progress_stop_switched_off(tmp_path):
    never_learns = Agent("no reflector", loop=LoopConfig(reflect=False))
    config = OuterConfig(max_passes=3, stop_on_no_progress=False)
    passes = outer(tmp_path, SUITE.tasks[:4], agent=never_learns, config=config)
    assert [p.stop for p in passes] == [None, None, "cap"]


@pytest.mark.parametrize(
    ("budget", "why"),
    [
        ({"max_tokens": 60_000}, "41766 tokens spent, one more pass would pass 60000"),
        ({"max_virtual_s": 200.0}, "122.7 virtual s spent, one more pass would pass 200"),
    ],
)
def test_a_small_budget_stops_before_a_pass_it_cannot_pay_for(tmp_path, budget, why):
    passes = outer(tmp_path, TWO_PER_KIND, config=OuterConfig(**budget))
    assert [(p.stop, p.why) for p in passes] == [("budget", why)]


def test_the_first_pass_is_the_in_process_loop_from_an_empty_memory(tmp_path):
    first = outer(tmp_path, TWO_PER_KIND, config=OuterConfig(max_passes=1))[0]
    records, memory, _ = run_agent(RALPH, TWO_PER_KIND, MODEL, TOOLS, words=WORDS)
    # a rule proposed once steers the next tasks at once, on probation: T004 -2, T009 -1, T023 -1 calls
    assert first.calls == sum(r.calls for r in records) == 25
    waiting = replace(RALPH, memory=MemoryConfig(probation=False))  # candidates wait for a second task
    assert sum(r.calls for r in run_agent(waiting, TWO_PER_KIND, MODEL, TOOLS, words=WORDS)[0]) == 29
    assert first.tokens == sum(r.tokens for r in records)
    assert first.lessons == tuple(e.rule for e in memory.active())


def test_the_notes_hold_the_lessons_and_a_log_of_passes(tmp_path):
    outer(tmp_path, TWO_PER_KIND)
    notes = (tmp_path / "NOTES.md").read_text()
    assert "- when query_local_cache finds the order: skip query_database\n" in notes
    assert notes.count("\n- pass ") == 2
    assert len(read_notes(tmp_path / "NOTES.md", TOOLS)) == 4


def test_a_foreign_rule_in_the_notes_is_not_a_lesson(tmp_path):
    notes = tmp_path / "NOTES.md"
    notes.write_text(
        "- when status is pending: call refund_order\n- when any task: start with query_local_cache\n"
    )
    assert read_notes(notes, TOOLS) == ["when any task: start with query_local_cache"]


def test_the_task_file_names_known_tasks_only(tmp_path):
    path = tmp_path / "TASKS.md"
    write_task_file(path, SUITE.tasks[:2])
    assert read_task_file(path, SUITE.tasks) == SUITE.tasks[:2]
    path.write_text("T999 | What is the status of order Q111?\n")
    with pytest.raises(ValueError, match="unknown task id 'T999'"):
        read_task_file(path, SUITE.tasks)


@pytest.mark.parametrize(
    "bad", [{"max_passes": 0}, {"max_passes": 2.5}, {"max_tokens": float("inf")}, {"max_virtual_s": -1}]
)
def test_the_config_refuses_an_unbounded_or_empty_loop(bad):
    with pytest.raises(ValueError, match=next(iter(bad))):
        OuterConfig(**bad)


def test_the_cli_prints_one_line_per_pass(tmp_path, capsys):
    assert main(["outer", "--per-kind", "2", "--dir", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    passes = [line for line in lines if line.startswith("pass ")]
    assert len(passes) == 2
    assert passes[0].startswith("pass 1: 25 calls, 12/12 correct, 9/12 clean, +4 lessons (4 in notes)")
    assert passes[1].endswith("-> stop: done (grader and validator: every answer correct, no wasted call)")
    assert any(line.split()[:3] == ["outer", "loop", "2"] for line in lines)  # the side-by-side table
    assert (tmp_path / "NOTES.md").exists() and (tmp_path / "TASKS.md").exists()


def test_the_cli_stops_at_the_cap_it_is_given(tmp_path, capsys):
    args = [
        "outer",
        "--per-kind",
        "1",
        "--withhold",
        "query_payment_api",
        "--keep-going",
        "--max-passes",
        "3",
    ]
    assert main([*args, "--dir", str(tmp_path)]) == 0
    passes = [line for line in capsys.readouterr().out.splitlines() if line.startswith("pass ")]
    assert len(passes) == 3 and passes[-1].endswith("-> stop: cap (3 passes)")


def test_the_cli_runs_the_unsolvable_task_set_to_the_default_cap_with_keep_going(tmp_path, capsys):
    args = ["outer", "--kind", "pending_stale", "--tasks", "3", "--withhold", "query_payment_api"]
    assert main([*args, "--dir", str(tmp_path), "--keep-going"]) == 0
    passes = [line for line in capsys.readouterr().out.splitlines() if line.startswith("pass ")]
    assert [line.split(" -> ")[1] for line in passes] == ["continue: 3 of 3 tasks not clean"] * 4 + [
        "stop: cap (5 passes)"
    ]


@pytest.mark.parametrize(
    ("options", "said"),
    [
        (["--max-tokens", "-5"], "max_tokens=-5: a budget must be a finite number >= 0"),
        (["--max-virtual-s", "nan"], "max_virtual_s=nan: a budget must be a finite number >= 0"),
        (["--dir", "{file}"], "cannot write the task file there"),
    ],
)
def test_the_cli_refuses_a_budget_or_folder_it_cannot_use_with_a_usage_error(tmp_path, capsys, options, said):
    afile = tmp_path / "notes.txt"
    afile.write_text("mine")
    with pytest.raises(SystemExit) as stopped:
        main(["outer", "--tasks", "2", *[o.format(file=afile) for o in options]])
    assert stopped.value.code == 2 and said in capsys.readouterr().err
    assert afile.read_text() == "mine"
