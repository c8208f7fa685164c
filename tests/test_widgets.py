"""Tests for ralph_mini.widgets: the views' contents, their saved twins, and a real nbval run.

Widgets are driven from Python (``button.click()`` and slider values call the same handlers a
browser would); the browser itself is tested in test_browser.py.
"""

import io
import subprocess
import sys
import textwrap
from dataclasses import asdict

import matplotlib

matplotlib.use("Agg")  # before pyplot is imported anywhere: no display in tests

import matplotlib.pyplot as plt  # noqa: E402
import nbformat  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from tqdm.auto import tqdm  # noqa: E402

from ralph_mini import OfflineModel, Step, Trace, run_react  # noqa: E402
from ralph_mini.clock import FakeClock  # noqa: E402
from ralph_mini.log import run_tags  # noqa: E402
from ralph_mini.memory import Experience, Memory, MemoryConfig, decay_factor  # noqa: E402
from ralph_mini.memory_file import journal  # noqa: E402
from ralph_mini.widgets import (  # noqa: E402
    WRONG_STYLE,
    MemoryInspector,
    TraceStepper,
    TraceView,
    memory_rows,
    memory_table_html,
    memory_table_text,
    plot_calls_per_task,
    plot_decay,
    plot_learning_curve,
    progress,
    rolling_mean,
    show_trace,
    status_at,
    step_text,
    text_table,
    trace_html,
    trace_text,
)
from ralph_mini.widgets.progress_bar import bar_text  # noqa: E402
from ralph_mini.worlds import orders  # noqa: E402

TYPE = "status"  # the order desk's task type


@pytest.fixture(scope="module")
def trace() -> Trace:
    """T004 of the default suite: a wrong look-alike tool first, then cache, database, provider."""
    suite = orders.make_suite(10)
    return run_react(suite.tasks[3], OfflineModel(habits=orders.HABITS), suite.world.tools())


def test_the_fixture_run_is_the_one_these_tests_expect(trace):
    tools = [s.tool for s in trace.steps]
    assert tools == ["search_docs", "query_local_cache", "query_database", "query_payment_api"]
    assert [s.wrong for s in trace.steps] == [True, False, False, False]


# --- static views --------------------------------------------------------------------------------


def test_trace_html_has_every_step_and_marks_only_wrong_calls(trace):
    page = trace_html(trace)
    assert page.count("<tr") == 1 + len(trace.steps)  # header + one row per step
    assert page.count(WRONG_STYLE) == trace.wrong_calls == 1
    for step in trace.steps:
        assert f"<code class='ralph-tool'>{step.tool}</code>" in page
    assert "TXN-90417" in page and "answered" in page


def test_trace_html_escapes_model_text(trace):
    step = Step(1, thought="<b>bold</b>", tool="x<y", arguments="", status="bad_reply",
                observation="<script>alert(1)</script>")  # fmt: skip
    page = trace_html(Trace(task=trace.task, messages=[], steps=[step]))
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert "&lt;b&gt;bold&lt;/b&gt;" in page and "x&lt;y" in page


def test_trace_text_is_the_log_lines(trace):
    lines = trace_text(trace).splitlines()
    assert lines[0] == "T004 answered: 4 steps, 1 wrong, 19.31 s virtual"
    assert lines[1] == trace.steps[0].log_line() + "  <- wrong"
    assert lines[2] == trace.steps[1].log_line()
    assert lines[-1].startswith('answer: {"order_id": "D012", "status": "paid"')


def test_trace_view_shows_html_and_plain_text(trace):
    view = TraceView(trace)
    assert view._repr_html_() == trace_html(trace)
    assert repr(view) == trace_text(trace)


# --- the stepper ---------------------------------------------------------------------------------


def test_stepper_moves_with_the_buttons_and_stops_at_the_ends(trace):
    stepper = TraceStepper(trace)
    assert stepper.position_label.value == "step 1 of 4"
    assert stepper.previous_button.disabled and not stepper.next_button.disabled
    assert "<code class='ralph-tool'>search_docs</code>" in stepper.step_view.value
    assert WRONG_STYLE in stepper.step_view.value and "wrong call" in stepper.step_view.value

    stepper.next_button.click()
    assert stepper.position_label.value == "step 2 of 4"
    assert "<code class='ralph-tool'>query_local_cache</code>" in stepper.step_view.value
    assert WRONG_STYLE not in stepper.step_view.value
    assert not stepper.previous_button.disabled

    for _ in range(5):  # past the end: clamps
        stepper.next_button.click()
    assert stepper.position == 4 and stepper.next_button.disabled
    assert "query_payment_api" in stepper.step_view.value
    stepper.previous_button.click()
    assert stepper.position_label.value == "step 3 of 4"


def test_stepper_saves_a_static_twin_of_its_step_next_to_the_widget_view(trace):
    stepper = TraceStepper(trace)
    assert repr(stepper) == "TraceStepper(task=T004, steps=4, position=1)"
    bundle = stepper._repr_mimebundle_()
    assert bundle["text/plain"] == (
        "TraceStepper(task=T004, steps=4, position=1)\nstep 1 of 4\n" + step_text(trace.steps[0])
    )
    assert "  status       wrong_tool, a wrong call" in bundle["text/plain"]
    page = bundle["text/html"]
    assert page.startswith("<div class='ralph-saved-stepper'>") and "<b>step 1 of 4</b>" in page
    assert stepper.step_view.value in page and "19.31 s virtual" in page  # the card, and the summary
    view = bundle["application/vnd.jupyter.widget-view+json"]
    assert view["model_id"] == stepper.widget.model_id
    stepper.next_button.click()
    moved = stepper._repr_mimebundle_()
    assert moved["text/plain"].splitlines()[:2] == [
        "TraceStepper(task=T004, steps=4, position=2)",
        "step 2 of 4",
    ]
    assert "<code class='ralph-tool'>query_local_cache</code>" in moved["text/html"]
    assert "19.31 s virtual" not in TraceStepper(trace, summary=False)._repr_mimebundle_()["text/html"]


def test_step_text_lists_the_cards_fields(trace):
    assert step_text(trace.steps[1]).splitlines() == [
        f"  thought      {trace.steps[1].thought}",
        f"  tool call    query_local_cache({trace.steps[1].arguments})",
        f"  observation  {trace.steps[1].observation}",
        "  status       ok",
        f"  latency      tool 0.05 s, model {trace.steps[1].model_latency_s:.2f} s",
    ]


def test_stepper_on_a_run_without_steps(trace):
    stepper = TraceStepper(Trace(task=trace.task, messages=[], stop_reason="answered"))
    assert stepper.position_label.value == "step 0 of 0"
    assert stepper.previous_button.disabled and stepper.next_button.disabled
    assert "no tool calls" in stepper.step_view.value
    assert repr(stepper) == "TraceStepper(task=T004, steps=0, position=0)"
    assert stepper._repr_mimebundle_()["text/plain"].endswith("\nno tool calls: the model answered at once")


def test_show_trace_shows_the_table_then_the_stepper_and_the_summary_once(trace):
    shown = []
    assert show_trace(trace, show=shown.append) is None
    assert [type(v) for v in shown] == [TraceView, TraceStepper]
    table, stepper = shown
    assert stepper.position == 1
    summary = "19.31 s virtual"  # the end of the one-line summary: task, stop reason, cost
    parts = [table._repr_html_()] + [getattr(child, "value", "") for child in stepper.widget.children]
    assert sum(part.count(summary) for part in parts) == 1
    assert summary in table._repr_html_()
    alone = TraceStepper(trace)  # shown on its own, the stepper keeps its summary
    assert summary in alone.widget.children[0].value


# --- progress ------------------------------------------------------------------------------------


def test_progress_is_a_tqdm_auto_bar_that_yields_everything():
    bar = progress(range(5), "runs")
    assert isinstance(bar, tqdm)  # outside a kernel: tqdm.auto's text bar
    assert (bar.desc, bar.total) == ("runs", 5)
    assert list(bar) == [0, 1, 2, 3, 4]
    assert bar.n == 5
    generated = progress((i * i for i in range(3)), "squares", total=3)
    assert generated.total == 3 and list(generated) == [0, 1, 4]
    assert progress(["T001", "T002"]).desc == "tasks"  # fits run_suite(..., progress=progress)


def test_bar_text_is_the_bar_at_its_end_without_timings():
    assert bar_text("tasks", 50, 50) == "tasks: 100%|██████████| 50/50"
    assert bar_text("bare ReAct", 3, 4) == "bare ReAct:  75%|███████▌  | 3/4, stopped"
    assert bar_text("tasks", 37, None) == "tasks: 37 done"
    assert bar_text("tasks", 0, 0) == "tasks: 0 done"


# --- plots ---------------------------------------------------------------------------------------


def test_rolling_mean_worked_example():
    assert rolling_mean([2, 4, 6, 8], window=2) == [2.0, 3.0, 5.0, 7.0]
    assert rolling_mean([], window=3) == []
    with pytest.raises(ValueError, match="window=0"):
        rolling_mean([1.0], window=0)


@given(st.lists(st.floats(0, 50), max_size=40), st.integers(1, 12))
def test_rolling_mean_matches_pandas(values, window):
    expected = pd.Series(values, dtype=float).rolling(window, min_periods=1).mean().tolist()
    assert rolling_mean(values, window) == pytest.approx(expected, abs=1e-9)


def test_learning_curve_draws_one_rolling_line_per_agent_plus_the_oracle():
    series = {"react": [3, 3, 2, 4, 3, 3], "ralph": [3, 2, 2, 1, 1, 1]}
    oracle = [1, 2, 1, 2, 1, 1]
    fig = plot_learning_curve(series, oracle, window=3)
    ax = fig.axes[0]
    assert [line.get_label() for line in ax.get_lines()] == ["react", "ralph", "oracle"]
    assert list(ax.get_lines()[1].get_xdata()) == [1, 2, 3, 4, 5, 6]
    assert list(ax.get_lines()[1].get_ydata()) == pytest.approx([3, 2.5, 7 / 3, 5 / 3, 4 / 3, 1])
    assert list(ax.get_lines()[2].get_ydata()) == pytest.approx(rolling_mean(oracle, 3))
    assert ax.get_lines()[2].get_linestyle() == "--"
    assert ax.get_ylabel() == "tool calls per task"
    ticks = plot_learning_curve({"react": [1.0] * 20}).axes[0].get_xticks()
    assert all(tick == int(tick) for tick in ticks)  # tasks are whole: no "task 7.5"
    assert not plt.fignum_exists(fig.number)  # closed: a notebook shows it once, not twice


def test_calls_per_task_bars():
    rows = [{"agent": "react", "calls_per_task": 2.4}, {"agent": "ralph", "calls_per_task": 1.3}]
    ax = plot_calls_per_task(rows).axes[0]
    assert [p.get_height() for p in ax.patches] == pytest.approx([2.4, 1.3])
    assert [t.get_text() for t in ax.get_xticklabels()] == ["react", "ralph"]
    assert [t.get_text() for t in ax.texts] == ["2.40", "1.30"]


def test_plot_decay_draws_the_memorys_own_decay_factor_and_marks_stale_and_expiry():
    config = MemoryConfig(half_life_days=5, stale_after_days=10, expire_after_days=20, stale_factor=0.4)
    fig = plot_decay(config)
    curve, stale, expire = fig.axes[0].get_lines()
    xs, ys = curve.get_xdata(), curve.get_ydata()
    assert xs[0] == 0 and xs[-1] == 60 and len(xs) == 601
    assert list(ys) == [decay_factor(x, config) for x in xs]
    assert ys[50] == 0.5 and ys[100] == 0.25  # days 5 and 10 (x steps by 0.1): 1 and 2 half-lives
    assert ys[101] == pytest.approx(0.4 * 0.5 ** (10.1 / 5)) and ys[201] == 0.0  # stale, then expired
    assert list(stale.get_xdata()) == [10, 10] and list(expire.get_xdata()) == [20, 20]
    default = plot_decay().axes[0].get_lines()
    assert list(default[0].get_ydata()) == [decay_factor(x, MemoryConfig()) for x in xs]
    assert [line.get_label() for line in default] == [
        "half-life 7 d", "stale after 14 d (x 0.5)", "expired after 30 d"
    ]  # fmt: skip


def test_the_plots_module_loads_without_ipywidgets():
    """``bench`` draws its learning curve from the command line: that must not pay for ipywidgets."""
    code = (
        "import sys; from ralph_mini.widgets.plots import plot_learning_curve; "
        "print(sorted(m for m in ('ipywidgets', 'tqdm', 'IPython', 'matplotlib') if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "['matplotlib']"


def test_the_package_exports_every_name_from_its_home_module():
    import ralph_mini.widgets as package

    for name in package.__all__:
        home = __import__(f"ralph_mini.widgets.{package.HOMES[name]}", fromlist=[name])
        assert getattr(package, name) is getattr(home, name)
    assert set(package.__all__) <= set(dir(package))
    with pytest.raises(AttributeError, match="no attribute 'TraceStep'; it exports"):
        package.TraceStep  # noqa: B018


def test_figures_render_to_the_same_png_twice():
    fig = plot_decay()
    first, second = io.BytesIO(), io.BytesIO()
    fig.savefig(first, format="png")
    fig.savefig(second, format="png")
    assert first.getvalue()[:8] == b"\x89PNG\r\n\x1a\n"
    assert first.getvalue() == second.getvalue()


# --- memory --------------------------------------------------------------------------------------


SKIP_DB = "when query_local_cache finds the order: skip query_database"
PENDING = "when status is pending and age under 30 min: skip query_payment_api"
START = "when any task: start with query_local_cache"
BAD = "when query_local_cache finds nothing: answer"


def learned_memory() -> Memory:
    """Four experiences, 17 days after the first one was written (a FakeClock, so exact numbers).

    SKIP_DB: written day 0, hit and validated once that day (confidence 3/4), idle 17 days: stale.
    PENDING: written day 10 (confidence 2/3), idle 7 days. START: proposed once, on probation (live).
    BAD: written day 10, then a wrong answer with it in play: invalid at once (the second is no vote).
    """
    memory = Memory(FakeClock())
    for task in ("T1", "T2"):
        memory.propose(SKIP_DB, task_id=task, run_id=f"R{task}", task_type=TYPE)
    [skip] = memory.experiences.values()
    memory.record_hits([skip])
    memory.record_outcome([skip], run_tags([cache_hit()], orders.WORDS), correct=True)
    memory.clock.advance(days=10)
    for task in ("T3", "T4"):
        memory.propose(PENDING, task_id=task, run_id=f"R{task}", task_type=TYPE)
        memory.propose(BAD, task_id=task, run_id=f"R{task}", task_type=TYPE)
    memory.propose(START, task_id="T5", run_id="R5", task_type=TYPE)
    bad = next(e for e in memory.experiences.values() if e.rule == BAD)
    cache_miss = Step(1, None, "query_local_cache", "{}", "not_found", "not_found: not in the cache")
    for _ in range(2):
        memory.record_outcome([bad], run_tags([cache_miss], orders.WORDS), correct=False)
    memory.clock.advance(days=7)
    return memory


def cache_hit() -> Step:
    return Step(1, None, "query_local_cache", "{}", "ok", "ok: 2 fields: status=paid, amount=1.0")


def by_rule(rows: list[dict]) -> dict[str, dict]:
    return {row["rule"]: row for row in rows}


def test_the_learned_memory_is_the_one_these_tests_expect():
    memory = learned_memory()
    assert [(e.rule, e.status, e.confirmations) for e in memory.experiences.values()] == [
        (SKIP_DB, "active", 2), (PENDING, "active", 2), (BAD, "invalid", 0), (START, "probation", 1)
    ]  # fmt: skip


def test_memory_rows_match_the_memory_itself_under_its_own_config():
    memory = learned_memory()
    rows = memory_rows(memory)
    assert [r["rule"] for r in rows] == [SKIP_DB, PENDING, BAD, START]  # the order it was learned
    assert [r["weight"] for r in rows] == [memory.weight(e) for e in memory.experiences.values()]
    skip, pending, bad, start = rows
    assert skip["weight"] == pytest.approx(0.75 * 0.5 ** (17 / 7) * 0.5)  # stale: halved once more
    assert pending["weight"] == pytest.approx(2 / 3 * 0.5)  # one half-life
    assert bad["weight"] == 0.0  # invalid: never retrieved
    assert start["weight"] == pytest.approx(0.5 * 0.5)  # on probation: confidence 1/2, one half-life
    assert [r["status"] for r in rows] == ["active", "active", "invalid", "probation"]
    assert [(r["days_since_hit"], r["hits"], r["validations"], r["failures"]) for r in rows] == [
        (17.0, 1, 1, 0), (7.0, 0, 0, 0), (7.0, 0, 0, 1), (7.0, 0, 0, 0)
    ]  # fmt: skip


def test_memory_rows_preview_other_settings_without_touching_the_memory():
    memory = learned_memory()
    before, config = [asdict(e) for e in memory.experiences.values()], memory.config
    preview = MemoryConfig(half_life_days=14, expire_after_days=15, confirm_threshold=1)
    skip, pending, bad, start = memory_rows(memory, preview)
    assert (skip["stored_status"], skip["status"], skip["weight"]) == ("active", "expired", 0.0)
    assert pending["weight"] == pytest.approx(2 / 3 * 0.5 ** (7 / 14))
    assert (start["stored_status"], start["status"]) == ("probation", "active")
    assert start["weight"] == pytest.approx(0.5 * 0.5 ** (7 / 14))  # confidence 1/2, as if written
    assert bad["status"] == "invalid" and bad["weight"] == 0.0  # only a new proposal revives it
    assert [asdict(e) for e in memory.experiences.values()] == before
    assert memory.config is config and config == MemoryConfig()


def test_status_at_promotes_candidates_and_expires_idle_rules_only():
    memory = learned_memory()
    skip, pending, bad, start = memory.experiences.values()
    assert status_at(start, MemoryConfig(confirm_threshold=2), 0) == "probation"
    assert status_at(start, MemoryConfig(confirm_threshold=1), 0) == "active"
    assert status_at(start, MemoryConfig(confirm_threshold=1), 31) == "expired"
    assert status_at(start, MemoryConfig(), 31) == "expired"  # on probation, idle past expiry
    assert status_at(skip, MemoryConfig(), 30) == "active"
    assert status_at(skip, MemoryConfig(), 30.5) == "expired"
    assert status_at(bad, MemoryConfig(confirm_threshold=1), 0) == "invalid"
    waiting = Memory(
        FakeClock(), MemoryConfig(probation=False)
    )  # a candidate, from a memory without probation
    _, candidate = waiting.propose(START, task_id="T5", run_id="R5", task_type=TYPE)
    assert status_at(candidate, MemoryConfig(probation=False), 0) == "candidate"
    assert status_at(candidate, MemoryConfig(), 0) == "probation"  # with probation it would be injected
    assert status_at(candidate, MemoryConfig(confirm_threshold=1, probation=False), 0) == "active"


def test_memory_table_html_shows_the_preview_and_escapes_rules():
    memory = learned_memory()
    page = memory_table_html(memory)
    assert page.count("<tr") == 5  # header + four experiences
    assert f">{2 / 3 * 0.5:.3f}<" in page and ">1 / 0<" in page and ">17.0<" in page
    assert page.count("color:#999") == 1  # invalid: weight 0, grey (on probation it is weighed)
    assert "&rarr;" not in page
    preview = memory_table_html(memory, MemoryConfig(confirm_threshold=1))
    assert "probation &rarr; <b>active</b>" in preview and preview.count("color:#999") == 1
    expired = memory_table_html(memory, MemoryConfig(expire_after_days=5))
    assert "probation &rarr; <b>expired</b>" in expired and expired.count("color:#999") == 4
    odd = Experience(id="x", rule="when <b> shows: answer", task_type="t", trigger="any", tools=[],
                     result="", failure_reason="", created_at="2025-03-10T12:00",
                     last_hit_at="2025-03-10T12:00")  # fmt: skip
    page = memory_table_html(Memory(FakeClock(), experiences=[odd]))
    assert "&lt;b&gt;" in page and "<b>" not in page
    assert memory_table_html(Memory(FakeClock())) == "<p class='ralph-memory'>no experiences yet</p>"


def test_memory_table_text_is_the_html_table_in_plain_text():
    memory = learned_memory()
    lines = memory_table_text(memory).splitlines()
    assert lines[0].split("  ")[0] == "status" and lines[0].endswith("days since hit  rule")
    assert lines[1].split() == ["active", f"{0.75 * 0.5 ** (17 / 7) * 0.5:.3f}", "0.75", "2", "1", "1", "/",
                                "0", "17.0", *SKIP_DB.split()]  # fmt: skip
    assert lines[3].startswith("invalid    0.000") and lines[4].startswith("probation  0.250")
    preview = memory_table_text(memory, MemoryConfig(confirm_threshold=1)).splitlines()
    assert preview[4].startswith("probation -> active  0.250")
    assert memory_table_text(Memory(FakeClock())) == "no experiences yet"


def test_text_table_pads_columns_to_the_widest_cell():
    assert text_table(("a", "bb"), [("1", "2")]) == "a  bb\n1  2"
    assert text_table(("x", "y"), [("long", ""), ("", "z")]) == "x     y\nlong\n      z"


def test_memory_inspector_sliders_preview_and_the_button_exports_the_journal(tmp_path):
    memory = learned_memory()
    before = [asdict(e) for e in memory.experiences.values()]
    path = tmp_path / "runs" / "journal.md"
    inspector = MemoryInspector(memory, journal_path=path)
    assert (inspector.half_life.value, inspector.expiry.value, inspector.threshold.value) == (7, 30, 2)
    assert f">{2 / 3 * 0.5:.3f}<" in inspector.table.value
    assert repr(inspector) == (
        "MemoryInspector(experiences=4, active=2, half_life_days=7, expire_after_days=30, "
        "confirm_threshold=2)"
    )

    inspector.half_life.value = 14  # seven idle days now cost less
    assert f">{2 / 3 * 0.5**0.5:.3f}<" in inspector.table.value
    inspector.expiry.value = 15  # SKIP_DB, idle 17 days, would expire
    assert "active &rarr; <b>expired</b>" in inspector.table.value
    inspector.threshold.value = 1  # one task would be enough: the rule on probation would be written
    assert "probation &rarr; <b>active</b>" in inspector.table.value
    assert inspector.config() == MemoryConfig(half_life_days=14, expire_after_days=15, confirm_threshold=1)
    saved = inspector._repr_mimebundle_()
    assert saved["text/plain"] == (
        "MemoryInspector(experiences=4, active=2, half_life_days=14, expire_after_days=15, "
        "confirm_threshold=1)\n" + memory_table_text(memory, inspector.config())
    )
    assert inspector.table.value in saved["text/html"] and "(saved view:" in saved["text/html"]
    assert [asdict(e) for e in memory.experiences.values()] == before  # previews only
    assert memory.config == MemoryConfig()

    assert not path.exists() and inspector.status.value == ""
    inspector.export_button.click()
    assert path.read_text(encoding="utf-8") == journal(memory)  # the memory as it is, not the preview
    assert "## Invalid (1)" in path.read_text(encoding="utf-8")
    assert inspector.status.value == f"journal written to {path}"


def test_memory_inspector_reads_the_clock_on_every_refresh_and_export(tmp_path):
    memory = learned_memory()
    inspector = MemoryInspector(memory, journal_path=tmp_path / "journal.md")
    memory.clock.advance(days=14)  # SKIP_DB idle 31 days: past expiry
    assert "&rarr;" not in inspector.table.value  # nothing has asked for a refresh yet
    inspector.export_button.click()  # the table and the journal are read at the same moment
    assert "active &rarr; <b>expired</b>" in inspector.table.value
    assert "last hit 31 days ago" in (tmp_path / "journal.md").read_text(encoding="utf-8")
    assert repr(inspector).startswith("MemoryInspector(experiences=4, active=1,")


# --- the nbval contract, checked with nbval itself -----------------------------------------------

NOTEBOOK_CELLS = [
    "from ralph_mini import FakeClock, Memory, OfflineModel\n"
    "from ralph_mini.worlds import orders\n"
    "from ralph_mini.measure import run_suite\n"
    "from ralph_mini.widgets import MemoryInspector, plot_decay, progress, show_trace",
    "suite = orders.make_suite(10)\n"
    "traces = run_suite(suite.tasks[:4], OfflineModel(habits=orders.HABITS), suite.world.tools(), progress=progress)",
    "show_trace(traces[3])",
    "plot_decay()",
    "memory = Memory(FakeClock())\n"
    "for task in ('T1', 'T2'):\n"
    "    memory.propose('when query_local_cache finds the order: skip query_database',\n"
    "                   task_id=task, run_id=task, task_type='status')\n"
    "MemoryInspector(memory)",
    "squares = [i * i for i in progress((i for i in range(3)), 'squares')]",
    "for i in progress(range(5), 'loop'):\n    if i == 2:\n        break",  # removed before nbval
]


def test_saved_views_pass_strict_nbval(tmp_path):
    """Execute a notebook like the kit's, save its outputs, then let strict nbval re-run it.

    Pins what the notebooks rely on: the saved text of the bar is its end, the stepper and the
    inspector save a static twin (text and HTML) that is the same on every run, and a figure is
    saved once, as PNG plus its text.
    """
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "language": "python",
                                                           "display_name": "Python 3"}})  # fmt: skip
    nb.cells = [nbformat.v4.new_code_cell(source) for source in NOTEBOOK_CELLS]
    NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    outputs = [out for cell in nb.cells[1:] for out in cell.outputs]
    bar, table, stepper, figure, inspector, counting, counted, stopped = outputs
    assert bar["data"]["text/plain"] == "tasks: 100%|██████████| 4/4"
    assert "application/vnd.jupyter.widget-view+json" in bar["data"]
    assert "ralph-trace" in table["data"]["text/html"]
    assert stepper["data"]["text/plain"].startswith(
        "TraceStepper(task=T004, steps=4, position=1)\nstep 1 of 4\n"
    )
    assert "ralph-saved-stepper" in stepper["data"]["text/html"]
    assert "application/vnd.jupyter.widget-view+json" in stepper["data"]
    assert figure["data"]["text/plain"] == "<Figure size 640x360 with 1 Axes>"
    assert "image/png" in figure["data"]
    assert inspector["data"]["text/plain"].splitlines()[0] == (
        "MemoryInspector(experiences=1, active=1, half_life_days=7, expire_after_days=30, "
        "confirm_threshold=2)"
    )
    assert "class='ralph-memory'" in inspector["data"]["text/html"]
    assert counting["data"]["text/plain"] == "squares: counting"  # no total: the count comes at the end
    assert counted["data"] == {"text/plain": "squares: 3 done"}
    # A loop left early: the display is updated at close, so the saved text is the count it reached.
    # nbval ignores display updates and would see the promise (5/5), so this cell is not checked.
    assert stopped["data"]["text/plain"] == "loop:  40%|████      | 2/5, stopped"
    nb.cells.pop()
    nbformat.write(nb, tmp_path / "views.ipynb")
    (tmp_path / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider\n")
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "--nbval", "--nbval-current-env", "-q", "views.ipynb"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert run.returncode == 0, textwrap.shorten(run.stdout + run.stderr, 3000)
    assert "6 passed" in run.stdout
