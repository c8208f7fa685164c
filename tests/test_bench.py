"""The benchmark: Ralph vs bare ReAct on a small suite as inequalities, the ablations' identities, the
retrieval speed check, and the CLI."""

import importlib.util
from pathlib import Path

import pytest

from ralph_mini.bench import ABLATIONS, BARE, RALPH, Agent, main, run_agent
from ralph_mini.clock import FakeClock
from ralph_mini.measure import summarize, windows
from ralph_mini.memory import Memory
from ralph_mini.offline import OfflineModel
from ralph_mini.scenario_bench import Arm, arm_planner
from ralph_mini.worlds import orders

SUITE = orders.make_suite(n=20, seed=7)
TOOLS = SUITE.world.tools()
MODEL = OfflineModel(habits=orders.HABITS)
WORDS = orders.WORDS


def test_ralph_beats_bare_react_in_the_late_window():
    bare, _, _ = run_agent(BARE, SUITE.tasks, MODEL, TOOLS, words=WORDS)
    ralph, memory, results = run_agent(RALPH, SUITE.tasks, MODEL, TOOLS, words=WORDS)
    late_bare, late_ralph = summarize(bare[10:], "bare"), summarize(ralph[10:], "ralph")
    assert late_ralph["calls/task"] < late_bare["calls/task"]
    assert late_ralph["wrong calls"] <= 1
    assert late_ralph["correct"] == "10/10" and summarize(ralph, "r")["correct"] == "20/20"
    assert summarize(ralph, "r")["tokens/task"] < summarize(bare, "b")["tokens/task"]  # reflections included
    assert late_ralph["calls/task"] <= 1.1 * late_ralph["oracle calls/task"]
    assert len(memory.active()) >= 3 and len(results) == 20


def test_no_reflector_is_bare_react():
    no_reflector = next(a for a in ABLATIONS if a.name == "no reflector")
    assert (
        run_agent(no_reflector, SUITE.tasks, MODEL, TOOLS, words=WORDS)[0]
        == run_agent(BARE, SUITE.tasks, MODEL, TOOLS, words=WORDS)[0]
    )


def test_one_arm_type_names_its_planner():
    assert Agent is Arm  # notebook 06's agents and notebook 09's arms are one type
    memory = Memory(FakeClock())
    no_vector = next(a for a in ABLATIONS if a.name == "no vector retrieval")
    assert no_vector.planner == "tags" and arm_planner(no_vector, memory) is None  # the loop's tag lookup
    assert RALPH.planner == "vector" and callable(arm_planner(RALPH, memory))
    with pytest.raises(ValueError, match="'vectors'.*tags"):
        Arm("typo", planner="vectors")
    assert callable(arm_planner(Arm("placebo", planner="placebo"), memory))  # memory is all it needs


def test_windows_label_the_rows():
    bare, _, _ = run_agent(BARE, SUITE.tasks, MODEL, TOOLS, words=WORDS)
    assert [row["tasks"] for row in windows(bare, "bare", split=5)] == ["1-5", "6-20", "all"]


def test_retrieval_speed_agrees_and_reports_three_timings():
    spec = importlib.util.spec_from_file_location(
        "retrieval_benchmark", Path(__file__).parents[1] / "benchmarks" / "retrieval.py"
    )
    benchmark = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(benchmark)
    timings = benchmark.retrieval_speed(n=2000, dim=32, k=3, queries=2)
    assert set(timings) == {"python loop", "numpy", "faiss"}
    assert all(t > 0 for t in timings.values())


def test_cli_prints_the_side_by_side_table(capsys, tmp_path):
    plot = tmp_path / "curve.png"
    assert main(["--tasks", "10", "--plot", str(plot)]) == 0
    out = capsys.readouterr().out
    assert "world orders, model OfflineModel(seed=0), 10 tasks (suite seed 7), 9 tools" in out
    assert "bare ReAct    all         2.8                1.4            4" in out
    assert "Ralph Loop    all" in out and "the seed article" in out
    assert plot.stat().st_size > 10_000  # a real PNG


def test_cli_plot_none_writes_no_curve(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # where the default curve would go: runs/learning_curve.png
    assert main(["--tasks", "2", "--plot", "none"]) == 0
    out = capsys.readouterr().out
    assert "learning curve" not in out and "\ntook " in out
    assert not list(tmp_path.rglob("*.png"))


def test_cli_model_env_without_a_model_set_acts_offline_with_the_worlds_habits(capsys, tmp_path, monkeypatch):
    for name in ("RALPH_MODEL", "RALPH_SEED", "OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    assert main(["--tasks", "2", "--model", "env", "--plot", str(tmp_path / "curve.png")]) == 0
    assert "world orders, model OfflineModel(seed=0), 2 tasks" in capsys.readouterr().out


@pytest.mark.parametrize(
    "script, argv",
    [
        ("store_speed.py", ["--sizes", "0"]),  # an IndexError's traceback before
        ("retrieval_speed.py", ["--repeats", "0"]),  # no median for empty data
        ("retrieval_speed.py", ["--not-live", "1"]),  # nothing left to search
        ("retrieval_speed.py", ["--sizes", "100", "--changed", "200"]),  # more than there are
        ("history_cost.py", ["--tasks", "0"]),
    ],
)
def test_a_benchmark_script_refuses_what_it_cannot_measure_with_a_usage_error(script, argv):
    import subprocess
    import sys
    from pathlib import Path

    path = Path(__file__).parents[1] / "benchmarks" / script
    done = subprocess.run([sys.executable, str(path), *argv], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "error: " in done.stderr and "Traceback" not in done.stderr
