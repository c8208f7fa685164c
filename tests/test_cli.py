"""`python -m ralph_mini demo` prints real traces."""

import subprocess
import sys

import pytest

from ralph_mini.__main__ import main


def test_demo_prints_a_graded_trace(capsys):
    assert main(["demo", "--tasks", "2"]) == 0
    out = capsys.readouterr().out
    assert "model: OfflineModel(seed=0)" in out
    assert "== T001 [paid_cached]" in out
    assert 'act:     query_local_cache({"order_id": "A123"})' in out
    assert "-> correct; 2 calls (oracle 1), 0 wrong" in out
    assert "== T002" in out and "== T003" not in out


def test_demo_runs_as_a_module():
    result = subprocess.run(
        [sys.executable, "-m", "ralph_mini", "demo", "--tasks", "1", "--core-only"],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin"},  # no RALPH_MODEL: offline
    )
    assert result.returncode == 0, result.stderr
    assert "tools: query_local_cache, query_database, query_payment_api\n" in result.stdout


def test_jobs_reaches_the_scenario_bench(monkeypatch):
    # `bench` has a --jobs of its own (for --ablation-grid): it used to keep --scenario's for itself,
    # so `bench --scenario all --jobs 1` ran on 2 workers.
    from ralph_mini import bench, scenario_bench

    seen = []
    monkeypatch.setattr(scenario_bench, "main", lambda name, argv: seen.append((name, list(argv))) or 0)
    assert bench.main(["--scenario", "static", "--k", "2", "--jobs", "1"]) == 0
    assert seen == [("static", ["--k", "2", "--jobs", "1"])]


def test_an_unknown_scenario_is_a_usage_error_naming_the_scenarios(capsys):
    from ralph_mini import bench

    with pytest.raises(SystemExit) as stopped:
        bench.main(["--scenario", "drfit"])
    assert stopped.value.code == 2
    said = capsys.readouterr().err
    assert "error: unknown scenario 'drfit': use one of static, drift," in said and "Traceback" not in said


@pytest.mark.parametrize(
    "argv",
    [
        ["bench", "--tasks", "0"],
        ["bench", "--tasks", "-3"],  # it sliced the suite from its end
        ["bench", "--scenario", "static", "--k", "0"],
        ["bench", "--scenario", "static", "--jobs", "0"],  # it divided by zero
        ["outer", "--tasks", "-2"],
        ["outer", "--max-passes", "0"],  # a ValueError's traceback
        ["outer", "--per-kind", "-1"],  # it meant "off", as the default 0 does
        ["demo", "--tasks", "0"],
    ],
)
def test_a_count_below_one_is_a_usage_error(argv, capsys):
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 2
    said = capsys.readouterr().err
    assert "write a whole number of at least 1" in said and "Traceback" not in said


@pytest.mark.parametrize("option", ["--ablation-grid", "--grid"])
@pytest.mark.parametrize("seeds", ["0x2", "4", "4x", "ax2", "4x-1"])
def test_a_grid_of_no_seeds_is_a_usage_error_saying_what_to_write(option, seeds, capsys):
    from ralph_mini import bench

    with pytest.raises(SystemExit) as stopped:
        bench.main([option, seeds])
    assert stopped.value.code == 2
    said = capsys.readouterr().err
    assert f"argument {option}" in said and "write suite seeds x model seeds" in said, said


def test_a_learning_curve_that_cannot_be_written_is_a_usage_error_naming_the_fix(tmp_path, capsys):
    """A folder that cannot be made fails before the run; a format matplotlib does not know, after the
    tables are printed (they are complete: only the curve is missing)."""
    from ralph_mini import bench

    afile = tmp_path / "notes.txt"
    afile.write_text("mine")
    with pytest.raises(SystemExit):
        bench.main(["--tasks", "2", "--plot", str(afile / "curve.png")])
    said = capsys.readouterr()
    assert "--plot" in said.err and "cannot make its folder" in said.err and said.out == ""
    with pytest.raises(SystemExit):
        bench.main(["--tasks", "2", "--plot", str(tmp_path / "curve.xyz")])
    said = capsys.readouterr()
    assert "the curve could not be written" in said.err and "tables above are complete" in said.err
    assert "bare ReAct" in said.out and afile.read_text() == "mine"


def test_a_model_that_does_not_answer_ends_the_command_with_its_error_not_a_traceback(
    monkeypatch, capsys, tmp_path
):
    monkeypatch.setenv("RALPH_MODEL", "gpt-4o-mini")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens on port 9
    monkeypatch.setenv("OPENAI_API_KEY", "not-needed")
    assert main(["demo", "--tasks", "1"]) == 1
    said = capsys.readouterr().err
    assert said.startswith("python -m ralph_mini demo: error: cannot connect to http://127.0.0.1:9/v1")
    assert "check OPENAI_BASE_URL" in said and "--resume" not in said
    state = ["--model", "env", "--tasks", "1", "--plot", "none", f"--state={tmp_path / 'state'}"]
    assert main(["bench", *state]) == 1
    said = capsys.readouterr().err
    assert said.startswith("python -m ralph_mini bench: error: cannot connect") and "with --resume" in said


@pytest.mark.parametrize("port", ["0", "70000", "abc"])
def test_serve_local_refuses_a_port_it_could_not_be_reached_on(port, capsys):
    with pytest.raises(SystemExit) as stopped:
        main(["serve-local", "--port", port])
    assert stopped.value.code == 2 and "write a port number from 1 to 65535" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["demo", "--tasks", "1"], ["bench", "--grid", "2x1"]])
def test_a_reader_that_goes_away_ends_the_command_quietly(argv):
    """``python -m ralph_mini bench ... | head``: the pipe closes before the command writes."""
    command = subprocess.Popen([sys.executable, "-m", "ralph_mini", *argv], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)  # fmt: skip
    command.stdout.close()  # the reader is gone before the first line
    said = command.stderr.read()
    command.wait(timeout=120)
    assert "Traceback" not in said and "BrokenPipeError" not in said, said
