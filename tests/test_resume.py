"""Resume after a kill: ``bench --state DIR --resume`` and ``run_loop(store=...)`` (issue 17).

- a ``TaskResult`` survives JSON exactly (``from_json(to_json(r)) == r``), with reflections and retries;
- ``run_loop`` stopped after any number of tasks and resumed from its store gives the same results, and
  the same store, row for row, as one uninterrupted run;
- a real ``python -m ralph_mini bench --tasks 20 --state DIR`` killed with SIGKILL at random moments,
  then run again with ``--resume``, ends with the same state files (every table of every agent's SQLite
  file), the same exports (log, memory, journal) and the same printed metrics as an uninterrupted run;
- without ``--resume`` a non-empty state is refused, and so is ``--resume`` with other options.
"""

import json
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ralph_mini.bench import RALPH, Agent, main, run_agent
from ralph_mini.clock import FakeClock
from ralph_mini.loop import LoopConfig, TaskResult, resume_point, run_loop
from ralph_mini.memory import Memory
from ralph_mini.offline import OfflineModel
from ralph_mini.run_state import tasks_done
from ralph_mini.store import Store
from ralph_mini.worlds import orders

SUITE = orders.make_suite(n=20, seed=7)
WORDS = orders.WORDS
TOOLS = SUITE.world.tools()
SHORT = LoopConfig(max_steps=4)  # a 4-turn budget: the fast loop retries (notebook 06)
AGENTS = ("bare-react", "ralph-loop")
KILLS = 10


def tables(path: Path) -> dict[str, list[tuple]]:
    """Every row of every table of a store, in rowid order: what 'the same state' means here."""
    db = sqlite3.connect(path)
    names = [n for (n,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    rows = {name: db.execute(f'SELECT * FROM "{name}" ORDER BY rowid').fetchall() for name in names}
    db.close()
    return rows


@pytest.mark.parametrize("config", [LoopConfig(), SHORT], ids=["default", "4-turn budget"])
def test_task_result_round_trips_through_json(config):
    results = run_agent(
        Agent("x", loop=config), SUITE.tasks, OfflineModel(habits=orders.HABITS), TOOLS, words=WORDS
    )[2]
    assert any(r.reflections for r in results)
    assert any(r.retries for r in results) == (config == SHORT)
    for result in results:
        data = json.loads(json.dumps(result.to_json()))
        assert TaskResult.from_json(data) == result
        assert TaskResult.from_json(data).record == result.record


def run_stored(path: Path, tasks, config: LoopConfig) -> list[TaskResult]:
    """The bench's Ralph Loop on ``tasks`` with a store: from scratch, or resumed from what it holds."""
    store = Store(path)
    history, now = resume_point(store)
    clock = FakeClock() if now is None else FakeClock(now)
    memory = store.load_memory(clock)
    results = run_loop(tasks[len(history) :], OfflineModel(habits=orders.HABITS), TOOLS, memory, words=WORDS, config=config, store=store,
                       history=history, between_tasks=lambda _: clock.advance(hours=6))  # fmt: skip
    store.close()
    return results


@pytest.mark.parametrize("config", [LoopConfig(), SHORT], ids=["default", "4-turn budget"])
def test_run_loop_resumed_after_any_task_equals_an_uninterrupted_run(tmp_path, config):
    whole = run_stored(tmp_path / "whole.sqlite", SUITE.tasks, config)
    clock = FakeClock()
    plain = run_loop(SUITE.tasks, OfflineModel(habits=orders.HABITS), TOOLS, Memory(clock), words=WORDS, config=config,
                     between_tasks=lambda _: clock.advance(hours=6))  # fmt: skip
    assert whole == plain  # a store changes nothing in the run
    for stop in (0, 1, 2, 7, 13, 19, 20):
        path = tmp_path / f"stopped-after-{stop}.sqlite"
        run_stored(path, SUITE.tasks[:stop], config)
        assert run_stored(path, SUITE.tasks, config) == whole, f"stopped after {stop} tasks"
        assert tables(path) == tables(tmp_path / "whole.sqlite"), f"stopped after {stop} tasks"


def test_every_run_is_logged_the_discarded_ones_as_sub_runs(tmp_path):
    """The fast loop's retried runs are in the store's log too (R007.1 before R007), not graded."""
    results = run_stored(tmp_path / "s.sqlite", SUITE.tasks, SHORT)
    store = Store(tmp_path / "s.sqlite")
    logged = [(summary.run_id, summary.correct) for _, summary in store.runs()]
    store.close()
    expected = []
    for number, result in enumerate(results, 1):
        expected += [(f"R{number:03d}.{n}", None) for n in range(1, result.retries + 1)]
        expected.append((f"R{number:03d}", result.correct))
    assert logged == expected and len(logged) > len(results)  # some runs were retried


def bench(state: Path, *options: str) -> list[str]:
    return [sys.executable, "-m", "ralph_mini", "bench", "--tasks", "20", "--state", str(state), "--plot",
            "none", *options]  # fmt: skip


def finished(state: Path, stdout: str) -> dict:
    """Everything a run leaves: each store's tables, each export's bytes, the printed metrics."""
    files = {p.relative_to(state).as_posix(): p.read_bytes() for p in sorted(state.glob("*/*"))}
    metrics = stdout.split("\nstate kept in")[0]  # the next lines name the directory and time the run
    return {
        "tables": {a: tables(state / f"{a}.sqlite") for a in AGENTS},
        "exports": files,
        "printed": metrics,
    }


def wait_for(condition, timeout: float = 60.0) -> float:
    """Poll every millisecond until ``condition()``; returns the time it became true."""
    deadline = time.perf_counter() + timeout
    while not condition():
        assert time.perf_counter() < deadline, "timed out"
        time.sleep(0.001)
    return time.perf_counter()


def test_bench_killed_at_random_moments_and_resumed_equals_an_uninterrupted_run(tmp_path):
    """Kill points: a random moment in the part of the run that commits tasks (from settings.json being
    written to the last agent's last commit, measured on the uninterrupted run) and a little past it
    (export, plot); the process startup, where nothing is written, is not worth a kill."""
    reference = tmp_path / "reference"
    process = subprocess.Popen(bench(reference), stdout=subprocess.PIPE, text=True)
    started = wait_for(lambda: (reference / "settings.json").exists())
    window = wait_for(lambda: tasks_done(reference, AGENTS[-1]) == 20) - started
    expected = finished(reference, process.communicate()[0])
    assert process.returncode == 0
    seed = random.randrange(2**32)
    rng = random.Random(seed)
    points = []  # (seconds after settings.json, tasks each agent had committed)
    for attempt in range(3 * KILLS):
        if len(points) == KILLS:
            break
        state = tmp_path / f"killed-{attempt}"
        delay = rng.uniform(0, 1.2 * window)
        process = subprocess.Popen(bench(state), stdout=subprocess.DEVNULL)
        wait_for(lambda s=state, p=process: (s / "settings.json").exists() or p.poll() is not None)
        time.sleep(delay)
        if process.poll() is not None:  # finished before its kill: not a kill point
            continue
        process.send_signal(signal.SIGKILL)
        process.wait()
        points.append((round(delay, 3), tuple(tasks_done(state, agent) for agent in AGENTS)))
        resumed = subprocess.run(bench(state, "--resume"), capture_output=True, text=True, check=True)
        assert finished(state, resumed.stdout) == expected, f"seed {seed}: killed at {points[-1]}"
    print(f"seed {seed}; commit window {window:.3f} s; killed at (s, tasks done by {AGENTS}): {points}")
    assert len(points) == KILLS, f"seed {seed}: only {len(points)} kills landed while the run was running"
    assert len({done for _, done in points}) >= 3, f"seed {seed}: kills at too few stages: {points}"


def test_bench_refuses_a_used_state_without_resume_and_other_options_with_it(tmp_path, capsys):
    state = tmp_path / "state"
    plot = ["--plot", str(tmp_path / "curve.png")]
    assert main(["--tasks", "4", "--state", str(state), *plot]) == 0
    with pytest.raises(SystemExit):
        main(["--tasks", "4", "--state", str(state), *plot])
    error = capsys.readouterr().err
    assert (
        f"state directory {state} already holds a run (bare-react: 4 tasks done, ralph-loop: 4 tasks done)"
        in error
    )
    assert "add --resume to finish it" in error
    with pytest.raises(SystemExit):
        main(["--tasks", "5", "--state", str(state), "--resume", *plot])
    assert "holds a run started with tasks 4 (now 5)" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--tasks", "4", "--resume", *plot])
    assert "--resume needs --state DIR" in capsys.readouterr().err
    assert main(["--tasks", "4", "--state", str(state), "--resume", *plot]) == 0  # finished: nothing to run


def test_bench_refuses_a_state_it_cannot_keep_saying_so(tmp_path, capsys):
    """A file given as --state, or a folder that cannot be made: a usage error, not a traceback."""
    afile, blocked = tmp_path / "notes.txt", tmp_path / "notes.txt" / "state"
    afile.write_text("mine")
    plot = ["--plot", str(tmp_path / "curve.png")]
    with pytest.raises(SystemExit):
        main(["--tasks", "2", "--state", str(afile), *plot])
    assert f"state directory {afile} is a file; choose a folder for --state" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--tasks", "2", "--state", str(blocked), *plot])
    assert f"cannot keep the run's state in {blocked} (" in capsys.readouterr().err
    assert afile.read_text() == "mine"  # nothing lost


def test_resume_point_of_an_empty_store(tmp_path):
    store = Store(tmp_path / "new.sqlite")
    assert resume_point(store) == ([], None)
    assert (
        run_agent(
            RALPH, SUITE.tasks[:2], OfflineModel(habits=orders.HABITS), TOOLS, words=WORDS, store=store
        )[0]
        == (run_agent(RALPH, SUITE.tasks[:2], OfflineModel(habits=orders.HABITS), TOOLS, words=WORDS)[0])
    )
