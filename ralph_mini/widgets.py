"""Interactive views of runs, learning curves and memory, each with a static twin (notebook 01 on).

A student clicks through a run with ``TraceStepper``, watches tasks go by with ``progress``, compares
agents with the plots, and tunes forgetting with ``MemoryInspector``. Every interactive view has a
static twin (an HTML table, plain text or a PNG), for two reasons: GitHub renders no widgets, so a
notebook read on the web shows only the twin; and nbval, which checks the committed notebooks,
compares only saved text. It never compares a widget's random model id, but it does compare the
widget's ``text/plain``, so the widgets here print a short, stable summary such as
``TraceStepper(task=T001, steps=2, position=1)``. It skips ``image/png`` outputs (unless run with
``--nbdime``), so a figure is checked by its text, ``<Figure size 640x360 with 1 Axes>``.

Left out on purpose: live-updating plots, saving widget state into notebooks, and styling beyond
a few inline CSS rules.
"""

import html
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import ipywidgets as widgets
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator
from tqdm.auto import tqdm

from ralph_mini.react import Step, Trace

__all__ = [
    "MemoryInspector",
    "MemoryLike",
    "TraceStepper",
    "TraceView",
    "decay_weight",
    "memory_rows",
    "memory_table_html",
    "plot_calls_per_task",
    "plot_decay",
    "plot_learning_curve",
    "progress",
    "rolling_mean",
    "show_trace",
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
    0 for a run without steps) is the only state. The CSS classes ``ralph-previous``, ``ralph-next``,
    ``ralph-position`` and ``ralph-tool`` let a browser test find the parts.
    """

    def __init__(self, trace: Trace, position: int = 1):
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
        self.widget = widgets.VBox([widgets.HTML(trace_summary_html(trace)), controls, self.step_view])
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

    Returns nothing, so a cell ending in ``show_trace(trace)`` shows each view once. ``show`` is
    IPython's ``display`` unless a test passes another.
    """
    if show is None:
        from IPython.display import display as show
    show(TraceView(trace))
    show(TraceStepper(trace))


# --- progress --------------------------------------------------------------------------------------


def progress(iterable: Iterable, desc: str, total: int | None = None) -> tqdm:
    """A progress bar: a widget in Jupyter, text in a terminal (``tqdm.auto`` chooses).

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
    ax.set(ylabel=value.replace("_", " "), title=f"{value.replace('_', ' ')} by {label}")
    return fig


def decay_weight(
    days: float,
    half_life_days: float = 7.0,
    stale_after_days: float = 14.0,
    stale_factor: float = 0.5,
    expire_after_days: float = 30.0,
) -> float:
    """How much an experience unused for ``days`` still counts; the memory module, once it exists,
    holds the source of truth for this formula and this copy only draws it.

    Halves every ``half_life_days``; past ``stale_after_days`` it is also multiplied by
    ``stale_factor``; past ``expire_after_days`` it is 0 (forgotten); a hit stamped after now counts
    as today's. With the defaults: ``7 -> 0.5``, ``14 -> 0.25``, ``21 -> 0.0625`` (0.125 x 0.5),
    ``31 -> 0.0``.
    """
    if half_life_days <= 0:
        raise ValueError(f"half_life_days={half_life_days}: a half-life must be positive")
    if days > expire_after_days:
        return 0.0
    weight = 0.5 ** (max(days, 0.0) / half_life_days)
    return weight * stale_factor if days > stale_after_days else weight


def plot_decay(
    half_life_days: float = 7.0,
    stale_after_days: float = 14.0,
    expire_after_days: float = 30.0,
    stale_factor: float = 0.5,
    days: float = 60,
) -> Figure:
    """``decay_weight`` over ``days`` days, with the stale and expiry days marked."""
    fig, ax = new_figure()
    xs = [days * i / 600 for i in range(601)]  # fine enough to show the two jumps as cliffs
    ys = [decay_weight(x, half_life_days, stale_after_days, stale_factor, expire_after_days) for x in xs]
    ax.plot(xs, ys, label=f"half-life {half_life_days:g} d")
    ax.axvline(stale_after_days, color="orange", ls=":", label=f"stale after {stale_after_days:g} d")
    ax.axvline(expire_after_days, color="red", ls=":", label=f"expired after {expire_after_days:g} d")
    ax.set(xlabel="days since last hit", ylabel="weight", ylim=(0, 1.05), title="memory decay")
    ax.legend()
    return fig


# --- memory ----------------------------------------------------------------------------------------


class ExperienceLike(Protocol):
    """What the inspector reads from one remembered experience."""

    rule: str
    confidence: float
    hits: int
    last_hit_day: float
    created_day: float


class MemoryLike(Protocol):
    """The little the inspector needs from a memory: its experiences, their weight, its journal."""

    experiences: Sequence[ExperienceLike]

    def weight_at(self, experience: ExperienceLike, now_day: float, half_life_days: float,
                  stale_after_days: float, expire_after_days: float,
                  stale_factor: float) -> float: ...  # fmt: skip

    def journal(self) -> str: ...


def memory_rows(
    memory: MemoryLike,
    now_day: float,
    half_life_days: float = 7.0,
    stale_after_days: float = 14.0,
    expire_after_days: float = 30.0,
    stale_factor: float = 0.5,
    write_threshold: float = 0.5,
) -> list[dict]:
    """One dict per experience, in memory order, with its weight (asked of the memory) and a status.

    Status, first match wins: ``expired`` (weight 0), ``below threshold`` (confidence under
    ``write_threshold``: it would not be written), ``stale`` (idle past ``stale_after_days``),
    ``active``.
    """
    decay = {"half_life_days": half_life_days, "stale_after_days": stale_after_days,
             "expire_after_days": expire_after_days, "stale_factor": stale_factor}  # fmt: skip
    rows = []
    for exp in memory.experiences:
        weight = memory.weight_at(exp, now_day=now_day, **decay)
        idle = now_day - exp.last_hit_day
        if weight <= 0:
            status = "expired"
        elif exp.confidence < write_threshold:
            status = "below threshold"
        else:
            status = "stale" if idle > stale_after_days else "active"
        rows.append({"rule": exp.rule, "weight": weight, "confidence": exp.confidence,
                     "hits": exp.hits, "age_days": now_day - exp.created_day, "idle_days": idle,
                     "status": status})  # fmt: skip
    return rows


def memory_table_html(memory: MemoryLike, now_day: float, **settings: float) -> str:
    """The experiences as an HTML table (the static twin of ``MemoryInspector``).

    ``settings`` are ``memory_rows``' keyword arguments (half_life_days, write_threshold, ...).
    """
    found = memory_rows(memory, now_day, **settings)
    if not found:
        return "<p class='ralph-memory'>no experiences yet</p>"
    header = ("rule", "weight", "confidence", "hits", "age (days)", "idle (days)", "status")
    rows = [
        (html.escape(r["rule"]), f"{r['weight']:.3f}", f"{r['confidence']:.2f}", str(r["hits"]),
         f"{r['age_days']:g}", f"{r['idle_days']:g}", r["status"])
        for r in found
    ]  # fmt: skip
    styles = ["color:#999" if r["status"] in ("expired", "below threshold") else "" for r in found]
    return f"<div class='ralph-memory'>{html_table(header, rows, styles)}</div>"


class MemoryInspector:
    """The memory's experiences with live weights: sliders for half-life, expiry and write threshold,
    and a button that writes the journal (markdown) to ``journal_path``.

    A thin view over any object shaped like ``MemoryLike``; the stale rule (``stale_after_days``,
    ``stale_factor``) is fixed at construction.
    """

    def __init__(
        self,
        memory: MemoryLike,
        now_day: float,
        journal_path: str | Path,
        half_life_days: float = 7.0,
        stale_after_days: float = 14.0,
        expire_after_days: float = 30.0,
        stale_factor: float = 0.5,
        write_threshold: float = 0.5,
    ):
        self.memory, self.now_day, self.journal_path = memory, now_day, Path(journal_path)
        self.stale_after_days, self.stale_factor = stale_after_days, stale_factor
        style = {"description_width": "initial"}
        self.half_life = widgets.FloatSlider(
            half_life_days, min=0.5, max=60, step=0.5, description="half-life (days)", style=style
        )
        self.expiry = widgets.FloatSlider(
            expire_after_days, min=1, max=120, step=1, description="expire after (days)", style=style
        )
        self.threshold = widgets.FloatSlider(
            write_threshold, min=0, max=1, step=0.05, description="write threshold", style=style
        )
        self.table = widgets.HTML()
        self.export_button = widgets.Button(description="Export journal", tooltip="write the journal")
        self.status = widgets.Label()
        for slider in (self.half_life, self.expiry, self.threshold):
            slider.observe(lambda _: self.refresh(), names="value")
        self.export_button.on_click(lambda _: self.export())
        sliders = widgets.HBox([self.half_life, self.expiry, self.threshold])
        export = widgets.HBox([self.export_button, self.status])
        self.widget = widgets.VBox([sliders, self.table, export])
        self.refresh()

    def settings(self) -> dict[str, float]:
        """The current knobs, as ``memory_rows`` takes them."""
        return {"half_life_days": self.half_life.value, "stale_after_days": self.stale_after_days,
                "expire_after_days": self.expiry.value, "stale_factor": self.stale_factor,
                "write_threshold": self.threshold.value}  # fmt: skip

    def refresh(self) -> None:
        self.table.value = memory_table_html(self.memory, self.now_day, **self.settings())

    def export(self) -> Path:
        """Write the journal and say where; the file is overwritten on every click."""
        self.journal_path.write_text(self.memory.journal(), encoding="utf-8")
        self.status.value = f"journal written to {self.journal_path}"
        return self.journal_path

    def __repr__(self) -> str:
        return (
            f"MemoryInspector(experiences={len(self.memory.experiences)}, "
            f"half_life_days={self.half_life.value:g}, expire_after_days={self.expiry.value:g}, "
            f"write_threshold={self.threshold.value:g})"
        )

    def _repr_mimebundle_(self, **kwargs: Any) -> dict:
        return widget_bundle(self.widget, repr(self))
