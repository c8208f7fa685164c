"""Interactive views of runs, learning curves and memory, each with a static twin (notebook 01 on).

A student clicks through a run with ``TraceStepper``, watches tasks go by with ``progress``, compares
agents with the plots, and previews forgetting and the write threshold on a real ``Memory`` with
``MemoryInspector``. Every interactive view has a
static twin (an HTML table, plain text or a PNG), for two reasons: GitHub renders no widgets, so a
notebook read on the web shows only the twin; and nbval, which checks the committed notebooks,
compares only saved text. It never compares a widget's random model id, but it does compare the
widget's ``text/plain``, so the widgets here print a short, stable summary such as
``TraceStepper(task=T001, steps=2, position=1)``. It skips ``image/png`` outputs (unless run with
``--nbdime``), so a figure is checked by its text, ``<Figure size 640x360 with 1 Axes>``.

A notebook freshly cloned is untrusted, so JupyterLab too shows each saved widget's ``text/plain``
until its cells run again; the widgets come alive then.

Left out on purpose: live-updating plots, and styling beyond a few inline CSS rules.
"""

import html
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import ipywidgets as widgets
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator
from tqdm.auto import tqdm

from ralph_mini.memory import Experience, Memory, MemoryConfig, decay_factor
from ralph_mini.memory_file import journal
from ralph_mini.react import Step, Trace

__all__ = [
    "MemoryInspector",
    "TraceStepper",
    "TraceView",
    "memory_rows",
    "memory_table_html",
    "plot_calls_per_task",
    "plot_decay",
    "plot_learning_curve",
    "progress",
    "rolling_mean",
    "show_trace",
    "status_at",
    "step_html",
    "trace_html",
    "trace_text",
]

WRONG_STYLE = "background:#fde2e2;border-left:4px solid #d62728"  # a wrong call, in red
CELL_STYLE = "border:1px solid #ccc;padding:2px 6px;text-align:left;vertical-align:top"


# --- one run: a static table and a stepper -------------------------------------------------------


def trace_text(trace: Trace) -> str:
    """The run as plain text, one log line per step; wrong calls end in '<- wrong'."""
    lines = [
        f"{trace.task.task_id} {trace.stop_reason}: {len(trace.steps)} steps, "
        f"{trace.wrong_calls} wrong, {trace.latency_s:.2f} s virtual"
    ]
    lines += [step.log_line() + ("  <- wrong" if step.wrong else "") for step in trace.steps]
    return "\n".join(lines + [f"answer: {json.dumps(trace.answer)}"])


def trace_summary_html(trace: Trace) -> str:
    """One line: task id, question, why the run stopped, and what it cost."""
    return (
        f"<p><b>{trace.task.task_id}</b> {html.escape(trace.task.question)} "
        f"&middot; <i>{html.escape(trace.stop_reason)}</i> &middot; {len(trace.steps)} steps, "
        f"{trace.wrong_calls} wrong, {trace.latency_s:.2f} s virtual</p>"
    )


def html_table(header: Sequence[str], rows: Sequence[Sequence[str]], styles: Sequence[str]) -> str:
    """A small bordered table; ``styles[i]`` is row i's inline CSS. Cells arrive already escaped."""
    cell = "<td style='{}'>{}</td>"
    head = "".join(f"<th style='{CELL_STYLE}'>{name}</th>" for name in header)
    body = "".join(
        f"<tr style='{style}'>" + "".join(cell.format(CELL_STYLE, c) for c in row) + "</tr>"
        for row, style in zip(rows, styles, strict=True)
    )
    return f"<table style='border-collapse:collapse'><tr>{head}</tr>{body}</table>"


def trace_html(trace: Trace) -> str:
    """The whole run as a small HTML table, wrong calls on a red background (the static twin)."""
    header = ("#", "thought", "tool call", "status", "observation", "latency")
    rows = [
        (str(s.index), html.escape(s.thought or ""), _call_html(s), s.status,
         html.escape(s.observation), _latency(s))
        for s in trace.steps
    ]  # fmt: skip
    styles = [WRONG_STYLE if s.wrong else "" for s in trace.steps]
    return (
        f"<div class='ralph-trace'>{trace_summary_html(trace)}{html_table(header, rows, styles)}"
        f"<p>answer: <code>{html.escape(json.dumps(trace.answer))}</code></p></div>"
    )


def step_html(step: Step) -> str:
    """One step as a card: thought, tool call, observation, status and latency."""
    style = "border:1px solid #ccc;border-radius:4px;padding:4px 8px;margin:4px 0"
    if step.wrong:
        style += ";" + WRONG_STYLE
    status = step.status + (" &middot; <b>wrong call</b>" if step.wrong else "")
    return (
        f"<div class='ralph-step' style='{style}'>"
        f"<div><b>thought</b> {html.escape(step.thought or '(none)')}</div>"
        f"<div><b>tool call</b> {_call_html(step)}</div>"
        f"<div><b>observation</b> {html.escape(step.observation)}</div>"
        f"<div><b>status</b> <span class='ralph-status'>{status}</span> &middot; "
        f"{_latency(step)}</div></div>"
    )


def _call_html(step: Step) -> str:
    return f"<code class='ralph-tool'>{html.escape(step.tool)}</code>" + (
        f"<code>({html.escape(step.arguments)})</code>" if step.arguments else ""
    )


def _latency(step: Step) -> str:
    return f"tool {step.tool_latency_s:.2f} s, model {step.model_latency_s:.2f} s"


@dataclass(frozen=True, repr=False)
class TraceView:
    """A run shown statically: an HTML table in a notebook, its log lines as plain text."""

    trace: Trace

    def _repr_html_(self) -> str:
        return trace_html(self.trace)

    def __repr__(self) -> str:
        return trace_text(self.trace)


def widget_bundle(widget: widgets.Widget, text: str) -> dict:
    """The widget's own display data with ``text/plain`` replaced by ``text``.

    Why: the widget-view part holds a random model id that nbval ignores, and ``text/plain`` is the
    part it compares, so it must not change between runs.
    """
    make = widget._repr_mimebundle_  # None once the widget is closed
    return {**(make() if make else {}), "text/plain": text}


class TraceStepper:
    """Step through one run with Previous/Next; wrong calls are drawn in red.

    Composition, not a widget subclass: ``widget`` is the box that is shown, and ``position`` (1-based,
    0 for a run without steps) is the only state. ``summary=False`` drops the one-line summary above
    the buttons, for when the static table above already shows it. The CSS classes ``ralph-previous``,
    ``ralph-next``, ``ralph-position`` and ``ralph-tool`` let a browser test find the parts.
    """

    def __init__(self, trace: Trace, position: int = 1, summary: bool = True):
        self.trace = trace
        self.previous_button = widgets.Button(description="Previous", tooltip="previous step")
        self.next_button = widgets.Button(description="Next", tooltip="next step")
        self.position_label = widgets.Label()
        self.step_view = widgets.HTML()
        self.previous_button.add_class("ralph-previous")
        self.next_button.add_class("ralph-next")
        self.position_label.add_class("ralph-position")
        self.previous_button.on_click(lambda _: self.go(self.position - 1))
        self.next_button.on_click(lambda _: self.go(self.position + 1))
        controls = widgets.HBox([self.previous_button, self.position_label, self.next_button])
        header = [widgets.HTML(trace_summary_html(trace))] if summary else []
        self.widget = widgets.VBox([*header, controls, self.step_view])
        self.position = 0
        self.go(position)

    def go(self, position: int) -> None:
        """Show step ``position``, clamped to the run, and enable only the buttons that can move."""
        count = len(self.trace.steps)
        self.position = min(max(position, 1), count) if count else 0
        self.position_label.value = f"step {self.position} of {count}"
        self.previous_button.disabled = self.position <= 1
        self.next_button.disabled = self.position >= count
        self.step_view.value = (
            step_html(self.trace.steps[self.position - 1])
            if count
            else "<p>no tool calls: the model answered at once</p>"
        )

    def __repr__(self) -> str:
        return (
            f"TraceStepper(task={self.trace.task.task_id}, steps={len(self.trace.steps)}, "
            f"position={self.position})"
        )

    def _repr_mimebundle_(self, **kwargs: Any) -> dict:
        return widget_bundle(self.widget, repr(self))


def show_trace(trace: Trace, show: Callable[[object], None] | None = None) -> None:
    """Display the static table (what GitHub and nbval see) and then the stepper (what you click).

    The summary line (task, stop reason, cost) heads the table, so the stepper below leaves its own
    out: one run, one summary. Returns nothing, so a cell ending in ``show_trace(trace)`` shows each
    view once. ``show`` is IPython's ``display`` unless a test passes another.
    """
    if show is None:
        from IPython.display import display as show
    show(TraceView(trace))
    show(TraceStepper(trace, summary=False))


# --- progress --------------------------------------------------------------------------------------


def progress(iterable: Iterable, desc: str = "tasks", total: int | None = None) -> tqdm:
    """A progress bar: a widget in Jupyter, text in a terminal (``tqdm.auto`` chooses).

    With the default ``desc`` it fits ``run_suite(..., progress=progress)`` and ``run_loop`` as is.

    Why not plain ``tqdm``: it writes changing rates (``48.83it/s``) to stderr, which strict nbval
    compares, so a re-run fails. ``tqdm.auto`` saves one widget whose text is fixed when it appears,
    ``runs:   0%|          | 0/20 [00:00<?, ?it/s]``, and that passes.
    """
    return tqdm(iterable, desc=desc, total=total)


# --- plots -----------------------------------------------------------------------------------------


def new_figure(width: float = 6.4, height: float = 3.6) -> tuple[Figure, Axes]:
    """A figure with one axes, already closed in pyplot.

    Why pyplot at all: only pyplot's figures get the notebook's PNG formatter. Why closed: a figure
    still open at the end of a cell is drawn once more by the inline backend, so a cell ending in
    ``plot_...(...)`` would show it twice. A closed figure still draws and saves normally.
    """
    import matplotlib.pyplot as plt  # imported when called: importing pyplot settles the backend

    fig, ax = plt.subplots(figsize=(width, height))
    plt.close(fig)
    return fig, ax


def rolling_mean(values: Sequence[float], window: int) -> list[float]:
    """Trailing mean of the last ``window`` values (fewer at the start).

    ``[2, 4, 6, 8], window=2 -> [2.0, 3.0, 5.0, 7.0]``
    """
    if window < 1:
        raise ValueError(f"window={window}: use a window of at least 1 task")
    out = []
    for end in range(1, len(values) + 1):
        recent = values[max(0, end - window) : end]
        out.append(sum(recent) / len(recent))
    return out


def plot_learning_curve(
    series: Mapping[str, Sequence[float]],
    oracle: Sequence[float] | None = None,
    window: int = 5,
    ylabel: str = "tool calls per task",
) -> Figure:
    """One line per agent: the rolling mean of ``ylabel`` by task index; the oracle dashed."""
    fig, ax = new_figure()
    for name, values in series.items():
        ax.plot(range(1, len(values) + 1), rolling_mean(values, window), label=name)
    if oracle is not None:
        ax.plot(range(1, len(oracle) + 1), rolling_mean(oracle, window), "k--", label="oracle")
    ax.set(xlabel="task", ylabel=ylabel, title=f"rolling mean over {window} tasks")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # task 7, never task 7.5
    ax.legend()
    return fig


def plot_calls_per_task(
    rows: Sequence[Mapping[str, Any]], value: str = "calls_per_task", label: str = "agent"
) -> Figure:
    """A bar per row (one row per agent, e.g. ``{"agent": "react", "calls_per_task": 2.4}``)."""
    fig, ax = new_figure()
    bars = ax.bar([str(row[label]) for row in rows], [float(row[value]) for row in rows])
    ax.bar_label(bars, fmt="%.2f")
    ax.margins(y=0.1)  # headroom, so the tallest bar's label stays inside the frame
    ax.set(ylabel=value.replace("_", " "), title=f"{value.replace('_', ' ')} by {label}")
    return fig


def plot_decay(config: MemoryConfig | None = None, days: float = 60) -> Figure:
    """The memory's own ``decay_factor`` over ``days`` days, with the stale and expiry days marked.

    Why call the memory's function instead of redrawing the formula: one source of truth, so the
    picture cannot drift from the rule retrieval applies. ``config`` defaults to ``MemoryConfig()``
    (half-life 7 days, stale after 14, expired after 30).
    """
    config = config or MemoryConfig()
    fig, ax = new_figure()
    xs = [days * i / 600 for i in range(601)]  # fine enough to show the two jumps as cliffs
    ax.plot(xs, [decay_factor(x, config) for x in xs], label=f"half-life {config.half_life_days:g} d")
    ax.axvline(
        config.stale_after_days,
        color="orange",
        ls=":",
        label=f"stale after {config.stale_after_days:g} d (x {config.stale_factor:g})",
    )
    ax.axvline(config.expire_after_days, color="red", ls=":",
               label=f"expired after {config.expire_after_days:g} d")  # fmt: skip
    ax.set(xlabel="days since last hit", ylabel="decay factor", ylim=(0, 1.05), title="memory decay")
    ax.legend()
    return fig


# --- memory ----------------------------------------------------------------------------------------


def status_at(experience: Experience, config: MemoryConfig, days_since_hit: float) -> str:
    """The status the memory would give ``experience`` under ``config``; the experience is not touched.

    Only two things can differ from the stored status: a candidate proposed in ``confirm_threshold``
    separate tasks would have been written (``active``), and an active rule idle past
    ``expire_after_days`` would be flagged ``expired`` by the next sweep. Removed and expired rules
    stay as they are, because only a new proposal brings them back.
    """
    status = experience.status
    if status == "candidate" and experience.confirmations >= config.confirm_threshold:
        status = "active"
    if status == "active" and days_since_hit > config.expire_after_days:
        status = "expired"
    return status


def memory_rows(memory: Memory, config: MemoryConfig | None = None) -> list[dict]:
    """One dict per experience, in the order it was learned, as it would look under ``config``.

    ``config`` defaults to the memory's own; "now" is ``memory.clock()``. Why a throwaway ``Memory``
    for the weights: ``Memory.weight`` is the rule retrieval uses, and a memory built with ``config``
    applies it to the previewed settings while the student's memory and its config stay unchanged.
    """
    config = config or memory.config
    now = memory.clock()
    judge = Memory(memory.clock, config)  # empty: only its config and its weight rule are used
    rows = []
    for e in memory.experiences.values():
        days = (now - datetime.fromisoformat(e.last_hit_at)) / timedelta(days=1)
        status = status_at(e, config, days)
        rows.append({"rule": e.rule, "status": status, "stored_status": e.status,
                     "weight": judge.weight(replace(e, status=status), now),
                     "confidence": e.confidence, "confirmations": e.confirmations, "hits": e.hits,
                     "validations": e.validations, "failures": e.failures,
                     "days_since_hit": days})  # fmt: skip
    return rows


def memory_table_html(memory: Memory, config: MemoryConfig | None = None) -> str:
    """The experiences as an HTML table (the static twin of ``MemoryInspector``).

    A status the settings would change reads ``candidate &rarr; active``; rows that would not be
    retrieved (weight 0) are grey.
    """
    found = memory_rows(memory, config)
    if not found:
        return "<p class='ralph-memory'>no experiences yet</p>"
    header = ("rule", "status", "weight", "confidence", "tasks", "hits", "ok / wrong", "days since hit")
    rows = [
        (html.escape(r["rule"]), _status_html(r), f"{r['weight']:.3f}", f"{r['confidence']:.2f}",
         str(r["confirmations"]), str(r["hits"]), f"{r['validations']} / {r['failures']}",
         f"{r['days_since_hit']:.1f}")
        for r in found
    ]  # fmt: skip
    styles = ["color:#999" if r["weight"] == 0 else "" for r in found]
    return f"<div class='ralph-memory'>{html_table(header, rows, styles)}</div>"


def _status_html(row: dict) -> str:
    if row["status"] == row["stored_status"]:
        return row["status"]
    return f"{row['stored_status']} &rarr; <b>{row['status']}</b>"


class MemoryInspector:
    """A real ``Memory`` with live weights: sliders for half-life, expiry and the write threshold, and a
    button that writes the work journal to ``journal_path``.

    The sliders only *preview*: they build a new ``MemoryConfig`` with ``dataclasses.replace`` and
    never change the memory or its config, so moving them cannot spoil the experiment that filled it.
    The journal is the memory as it is. "Now" is ``memory.clock()``, read on every refresh.
    """

    def __init__(self, memory: Memory, journal_path: str | Path = "journal.md"):
        self.memory, self.journal_path = memory, Path(journal_path)
        config, style = memory.config, {"description_width": "initial"}
        self.half_life = widgets.FloatSlider(
            config.half_life_days,
            min=0.5,
            step=0.5,
            max=max(60, config.half_life_days),
            description="half-life (days)",
            style=style,
        )
        self.expiry = widgets.FloatSlider(
            config.expire_after_days,
            min=1,
            step=1,
            max=max(120, config.expire_after_days),
            description="expire after (days)",
            style=style,
        )
        self.threshold = widgets.IntSlider(config.confirm_threshold, min=1,
                                           max=max(5, config.confirm_threshold),
                                           description="write threshold (tasks)", style=style)  # fmt: skip
        self.table = widgets.HTML()
        self.export_button = widgets.Button(description="Export journal", tooltip="write the journal")
        self.status = widgets.Label()
        self.table.add_class("ralph-memory-table")
        self.export_button.add_class("ralph-export")
        for slider in (self.half_life, self.expiry, self.threshold):
            slider.observe(lambda _: self.refresh(), names="value")
        self.export_button.on_click(lambda _: self.export())
        sliders = widgets.VBox([self.half_life, self.expiry, self.threshold])
        export = widgets.HBox([self.export_button, self.status])
        self.widget = widgets.VBox([sliders, self.table, export])
        self.refresh()

    def config(self) -> MemoryConfig:
        """The memory's config with the three slider values in place of its own."""
        return replace(self.memory.config, half_life_days=self.half_life.value,
                       expire_after_days=self.expiry.value,
                       confirm_threshold=self.threshold.value)  # fmt: skip

    def refresh(self) -> None:
        self.table.value = memory_table_html(self.memory, self.config())

    def export(self) -> Path:
        """Write ``journal(memory)`` and say where; the file is overwritten on every click.

        The table is refreshed too, so what it shows and what was written are read at the same time.
        """
        self.journal_path.parent.mkdir(parents=True, exist_ok=True)
        self.journal_path.write_text(journal(self.memory), encoding="utf-8")
        self.status.value = f"journal written to {self.journal_path}"
        self.refresh()
        return self.journal_path

    def __repr__(self) -> str:
        active = sum(row["status"] == "active" for row in memory_rows(self.memory, self.config()))
        return (
            f"MemoryInspector(experiences={len(self.memory.experiences)}, active={active}, "
            f"half_life_days={self.half_life.value:g}, expire_after_days={self.expiry.value:g}, "
            f"confirm_threshold={self.threshold.value})"
        )

    def _repr_mimebundle_(self, **kwargs: Any) -> dict:
        return widget_bundle(self.widget, repr(self))
