"""Tests for ralph_mini.widgets: the views' contents, their stable reprs, and a real nbval run.

Widgets are driven from Python (``button.click()`` and slider values call the same handlers a
browser would); the browser itself is tested in test_browser.py.
"""

import io
import subprocess
import sys
import textwrap
from dataclasses import dataclass, field

import matplotlib

matplotlib.use("Agg")  # before pyplot is imported anywhere: no display in tests

import matplotlib.pyplot as plt  # noqa: E402
import nbformat  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from tqdm.auto import tqdm  # noqa: E402

from ralph_mini import OfflineModel, Step, Trace, make_suite, run_react  # noqa: E402
from ralph_mini.widgets import (  # noqa: E402
    WRONG_STYLE,
    MemoryInspector,
    TraceStepper,
    TraceView,
    decay_weight,
    memory_rows,
    memory_table_html,
    plot_calls_per_task,
    plot_decay,
    plot_learning_curve,
    progress,
    rolling_mean,
    show_trace,
    trace_html,
    trace_text,
)


@pytest.fixture(scope="module")
def trace() -> Trace:
    """T004 of the default suite: a wrong look-alike tool first, then cache, database, provider."""
    suite = make_suite(10)
    return run_react(suite.tasks[3], OfflineModel(), suite.world.tools())


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
    assert lines[0] == "T004 answered: 4 steps, 1 wrong, 18.99 s virtual"
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


def test_stepper_text_plain_is_stable_and_the_widget_view_is_kept(trace):
    stepper = TraceStepper(trace)
    assert repr(stepper) == "TraceStepper(task=T004, steps=4, position=1)"
    bundle = stepper._repr_mimebundle_()
    assert bundle["text/plain"] == "TraceStepper(task=T004, steps=4, position=1)"
    view = bundle["application/vnd.jupyter.widget-view+json"]
    assert view["model_id"] == stepper.widget.model_id
    stepper.next_button.click()
    assert stepper._repr_mimebundle_()["text/plain"].endswith("position=2)")


def test_stepper_on_a_run_without_steps(trace):
    stepper = TraceStepper(Trace(task=trace.task, messages=[], stop_reason="answered"))
    assert stepper.position_label.value == "step 0 of 0"
    assert stepper.previous_button.disabled and stepper.next_button.disabled
    assert "no tool calls" in stepper.step_view.value
    assert repr(stepper) == "TraceStepper(task=T004, steps=0, position=0)"


def test_show_trace_shows_the_table_then_the_stepper(trace):
    shown = []
    assert show_trace(trace, show=shown.append) is None
    assert [type(v) for v in shown] == [TraceView, TraceStepper]
    assert shown[1].position == 1


# --- progress ------------------------------------------------------------------------------------


def test_progress_is_a_tqdm_auto_bar_that_yields_everything():
    bar = progress(range(5), "runs")
    assert isinstance(bar, tqdm)
    assert (bar.desc, bar.total) == ("runs", 5)
    assert list(bar) == [0, 1, 2, 3, 4]
    assert bar.n == 5
    generated = progress((i * i for i in range(3)), "squares", total=3)
    assert generated.total == 3 and list(generated) == [0, 1, 4]


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


def test_decay_weight_closed_form():
    assert decay_weight(0) == 1.0
    assert decay_weight(7) == 0.5
    assert decay_weight(14) == 0.25  # the stale rule starts *after* 14 days
    assert decay_weight(14.5) == pytest.approx(0.5 ** (14.5 / 7) * 0.5)
    assert decay_weight(21) == pytest.approx(0.0625)
    assert decay_weight(30) == pytest.approx(0.5 ** (30 / 7) * 0.5)
    assert decay_weight(30.01) == 0.0
    assert decay_weight(-2) == 1.0  # a hit stamped after "now" counts as today's
    assert decay_weight(10, half_life_days=10, stale_after_days=5, stale_factor=0.1) == 0.05
    with pytest.raises(ValueError, match="half_life_days=0"):
        decay_weight(1, half_life_days=0)


@given(st.floats(0, 100), st.floats(0, 100), st.floats(0.5, 60), st.floats(0, 1))
def test_decay_weight_never_grows_with_age(a, b, half_life, factor):
    early, late = sorted((a, b))
    w = [decay_weight(d, half_life, 14.0, factor, 30.0) for d in (early, late)]
    assert 0.0 <= w[1] <= w[0] <= 1.0


def test_plot_decay_draws_the_formula_and_marks_stale_and_expiry():
    fig = plot_decay(half_life_days=5, stale_after_days=10, expire_after_days=20, stale_factor=0.4)
    curve, stale, expire = fig.axes[0].get_lines()
    xs, ys = curve.get_xdata(), curve.get_ydata()
    assert xs[0] == 0 and xs[-1] == 60 and len(xs) == 601
    assert list(ys) == [decay_weight(x, 5, 10, 0.4, 20) for x in xs]
    assert list(stale.get_xdata()) == [10, 10] and list(expire.get_xdata()) == [20, 20]


def test_figures_render_to_the_same_png_twice():
    fig = plot_decay()
    first, second = io.BytesIO(), io.BytesIO()
    fig.savefig(first, format="png")
    fig.savefig(second, format="png")
    assert first.getvalue()[:8] == b"\x89PNG\r\n\x1a\n"
    assert first.getvalue() == second.getvalue()


# --- memory --------------------------------------------------------------------------------------


@dataclass
class FakeExperience:
    rule: str
    confidence: float
    hits: int
    last_hit_day: float
    created_day: float


@dataclass
class FakeMemory:
    """Shaped like the memory the inspector expects; its weight is ``decay_weight`` of idle days."""

    experiences: list[FakeExperience] = field(default_factory=list)

    def weight_at(self, experience, now_day, half_life_days, stale_after_days, expire_after_days,
                  stale_factor):  # fmt: skip
        idle = now_day - experience.last_hit_day
        return decay_weight(idle, half_life_days, stale_after_days, stale_factor, expire_after_days)

    def journal(self) -> str:
        return "# Journal\n\n" + "\n".join(f"- {e.rule} ({e.hits} hits)" for e in self.experiences)


def fake_memory() -> FakeMemory:
    return FakeMemory([
        FakeExperience("IF cache hit THEN answer", 0.9, 12, last_hit_day=33, created_day=20),
        FakeExperience("IF pending & age<30m THEN skip query_payment_api", 0.8, 3, 15, 2),
        FakeExperience("IF missing THEN answer not_found", 0.3, 1, 38, 38),
        FakeExperience("IF x <y> THEN y", 0.7, 0, 5, 0),
    ])  # fmt: skip


def test_memory_rows_ask_the_memory_for_weights_and_give_each_a_status():
    rows = memory_rows(fake_memory(), now_day=40)
    assert [r["weight"] for r in rows] == pytest.approx([0.5, 0.5 ** (25 / 7) * 0.5, 0.5 ** (2 / 7), 0])
    assert [r["status"] for r in rows] == ["active", "stale", "below threshold", "expired"]
    assert [(r["age_days"], r["idle_days"], r["hits"]) for r in rows[:2]] == [(20, 7, 12), (38, 25, 3)]


def test_memory_table_html_shows_weights_and_escapes_rules():
    page = memory_table_html(fake_memory(), 40, half_life_days=7.0)
    assert page.count("<tr") == 5
    assert "0.500" in page and "&lt;y&gt;" in page and "<y>" not in page
    assert page.count("color:#999") == 2  # below threshold and expired are greyed
    assert memory_table_html(FakeMemory(), 40) == "<p class='ralph-memory'>no experiences yet</p>"


def test_memory_inspector_sliders_recompute_and_the_button_exports(tmp_path):
    path = tmp_path / "journal.md"
    inspector = MemoryInspector(fake_memory(), now_day=40, journal_path=path)
    assert ">0.500<" in inspector.table.value
    assert repr(inspector) == (
        "MemoryInspector(experiences=4, half_life_days=7, expire_after_days=30, write_threshold=0.5)"
    )

    inspector.half_life.value = 14  # seven idle days now cost less
    assert f">{0.5**0.5:.3f}<" in inspector.table.value and ">0.500<" not in inspector.table.value
    inspector.expiry.value = 6  # now only the experience hit two days ago survives
    assert inspector.table.value.count("expired") == 3
    inspector.threshold.value = 0.95
    assert "active" not in inspector.table.value
    assert inspector._repr_mimebundle_()["text/plain"] == (
        "MemoryInspector(experiences=4, half_life_days=14, expire_after_days=6, write_threshold=0.95)"
    )

    assert not path.exists() and inspector.status.value == ""
    inspector.export_button.click()
    assert path.read_text() == fake_memory().journal()
    assert inspector.status.value == f"journal written to {path}"


# --- the nbval contract, checked with nbval itself -----------------------------------------------

NOTEBOOK_CELLS = [
    "from ralph_mini import OfflineModel, make_suite, run_react\n"
    "from ralph_mini.widgets import plot_decay, progress, show_trace",
    "suite = make_suite(10)\n"
    "traces = [run_react(t, OfflineModel(), suite.world.tools())\n"
    "          for t in progress(suite.tasks[:4], 'tasks')]",
    "show_trace(traces[3])",
    "plot_decay()",
]


def test_saved_views_pass_strict_nbval(tmp_path):
    """Execute a notebook like the kit's, save its outputs, then let strict nbval re-run it.

    Pins the two facts the notebooks rely on: the tqdm.auto bar and the stepper's text are the same
    on every run, and a figure is saved once, as PNG plus its text.
    """
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "language": "python",
                                                           "display_name": "Python 3"}})  # fmt: skip
    nb.cells = [nbformat.v4.new_code_cell(source) for source in NOTEBOOK_CELLS]
    NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    bar, table, stepper, figure = nb.cells[1].outputs + nb.cells[2].outputs + nb.cells[3].outputs
    assert bar["data"]["text/plain"] == "tasks:   0%|          | 0/4 [00:00<?, ?it/s]"
    assert "ralph-trace" in table["data"]["text/html"]
    assert stepper["data"]["text/plain"] == "TraceStepper(task=T004, steps=4, position=1)"
    assert figure["data"]["text/plain"] == "<Figure size 640x360 with 1 Axes>"
    assert "image/png" in figure["data"]
    nbformat.write(nb, tmp_path / "views.ipynb")
    (tmp_path / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider\n")
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "--nbval", "--nbval-current-env", "-q", "views.ipynb"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert run.returncode == 0, textwrap.shorten(run.stdout + run.stderr, 3000)
    assert "4 passed" in run.stdout
