"""One run, shown two ways (notebook 01): a static table of every step, and a stepper you click through.

``show_trace`` displays both: the table is what a reader on the web and nbval see; the stepper
(Previous/Next, wrong calls in red) is what a student clicks. The stepper saves a static twin of the
step it shows, so its saved output reads as a step card, not as a one-line repr.

ipywidgets (a tenth of a second or more) is imported when the first stepper is built, not with this
module, so notebook 01's first cell opens fast (issue 27).

Left out on purpose: editing or replaying a run from the stepper.
"""

import html
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ralph_mini.lang import label, tr
from ralph_mini.react import Step, Trace
from ralph_mini.widgets.static import WRONG_STYLE, html_table, saved_note, widget_bundle

__all__ = ["TraceStepper", "TraceView", "show_trace", "step_html", "step_text", "trace_html", "trace_text"]

# --- one run: a static table and a stepper -------------------------------------------------------


def trace_text(trace: Trace) -> str:
    """The run as plain text, one log line per step; wrong calls end in '<- wrong'."""
    lines = [f"{trace.task.task_id} {trace.stop_reason}: {cost(trace)}"]
    lines += [step.log_line() + tr("  <- wrong", "  <- 错误") * step.wrong for step in trace.steps]
    return "\n".join(lines + [f"{label('answer')}: {json.dumps(trace.answer)}"])


def cost(trace: Trace) -> str:
    """'4 steps, 1 wrong, 6.85 s virtual': what a run cost, in the reader's language."""
    steps, wrong, seconds = len(trace.steps), trace.wrong_calls, f"{trace.latency_s:.2f}"
    return tr(
        f"{steps} steps, {wrong} wrong, {seconds} s virtual", f"{steps} 步，{wrong} 次错误，虚拟 {seconds} 秒"
    )


def trace_summary_html(trace: Trace) -> str:
    """One line: task id, question, why the run stopped, and what it cost."""
    return (
        f"<p><b>{trace.task.task_id}</b> {html.escape(trace.task.question)} "
        f"&middot; <i>{html.escape(trace.stop_reason)}</i> &middot; {cost(trace)}</p>"
    )


def trace_html(trace: Trace) -> str:
    """The whole run as a small HTML table, wrong calls on a red background (the static twin)."""
    header = tuple(map(label, ("#", "thought", "tool call", "status", "observation", "latency")))
    rows = [
        (str(s.index), html.escape(s.thought or ""), _call_html(s), s.status,
         html.escape(s.observation), _latency(s))
        for s in trace.steps
    ]  # fmt: skip
    styles = [WRONG_STYLE if s.wrong else "" for s in trace.steps]
    return (
        f"<div class='ralph-trace'>{trace_summary_html(trace)}{html_table(header, rows, styles)}"
        f"<p>{label('answer')}: <code>{html.escape(json.dumps(trace.answer))}</code></p></div>"
    )


def step_html(step: Step) -> str:
    """One step as a card: thought, tool call, observation, status and latency."""
    style = "border:1px solid #ccc;border-radius:4px;padding:4px 8px;margin:4px 0"
    if step.wrong:
        style += ";" + WRONG_STYLE
    status = step.status + (f" &middot; <b>{label('wrong call')}</b>" if step.wrong else "")
    thought, call, seen, said = map(label, ("thought", "tool call", "observation", "status"))
    return (
        f"<div class='ralph-step' style='{style}'>"
        f"<div><b>{thought}</b> {html.escape(step.thought or tr('(none)', '（无）'))}</div>"
        f"<div><b>{call}</b> {_call_html(step)}</div>"
        f"<div><b>{seen}</b> {html.escape(step.observation)}</div>"
        f"<div><b>{said}</b> <span class='ralph-status'>{status}</span> &middot; "
        f"{_latency(step)}</div></div>"
    )


def step_text(step: Step) -> str:
    """One step as indented plain text, the card's fields in the card's order."""
    status = step.status + tr(", a wrong call", "，错误调用") * step.wrong
    thought = step.thought or tr("(none)", "（无）")
    fields = [("thought", thought), ("tool call", f"{step.tool}({step.arguments})"),
              ("observation", step.observation), ("status", status), ("latency", _latency(step))]  # fmt: skip
    return "\n".join(f"  {label(name):<12} {value}" for name, value in fields)


def _call_html(step: Step) -> str:
    return f"<code class='ralph-tool'>{html.escape(step.tool)}</code>" + (
        f"<code>({html.escape(step.arguments)})</code>" if step.arguments else ""
    )


def _latency(step: Step) -> str:
    tool, model = f"{step.tool_latency_s:.2f}", f"{step.model_latency_s:.2f}"
    return tr(f"tool {tool} s, model {model} s", f"工具 {tool} 秒，模型 {model} 秒")


@dataclass(frozen=True, repr=False)
class TraceView:
    """A run shown statically: an HTML table in a notebook, its log lines as plain text."""

    trace: Trace

    def _repr_html_(self) -> str:
        return trace_html(self.trace)

    def __repr__(self) -> str:
        return trace_text(self.trace)


class TraceStepper:
    """Step through one run with Previous/Next; wrong calls are drawn in red.

    Composition, not a widget subclass: ``widget`` is the box that is shown, and ``position`` (1-based,
    0 for a run without steps) is the only state. ``summary=False`` drops the one-line summary above
    the buttons, for when the static table above already shows it. The CSS classes ``ralph-previous``,
    ``ralph-next``, ``ralph-position`` and ``ralph-tool`` let a browser test find the parts.

    Saved, it reads as the step it shows: ``static_text`` (the repr, then the step's fields) and
    ``static_html`` (the step card, class ``ralph-saved-stepper``) travel with the widget view.
    """

    def __init__(self, trace: Trace, position: int = 1, summary: bool = True):
        import ipywidgets as widgets  # here, not at the top: importing this module stays cheap (notebook 01)

        self.trace, self.summary = trace, summary
        self.previous_button = widgets.Button(
            description=tr("Previous", "上一步"), tooltip=tr("previous step", "上一步")
        )
        self.next_button = widgets.Button(description=tr("Next", "下一步"), tooltip=tr("next step", "下一步"))
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
        self.position_label.value = tr(
            f"step {self.position} of {count}", f"第 {self.position} 步，共 {count} 步"
        )
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

    def static_text(self) -> str:
        """The saved text: the one-line repr, then the step shown, field by field."""
        if not self.trace.steps:
            return f"{self!r}\n" + tr(
                "no tool calls: the model answered at once", "没有工具调用：模型直接作答"
            )
        step = self.trace.steps[self.position - 1]
        return f"{self!r}\n{self.position_label.value}\n{step_text(step)}"

    def static_html(self) -> str:
        """The saved view: the step card the stepper shows now, and what clicking would add."""
        summary = trace_summary_html(self.trace) if self.summary else ""
        note = saved_note(
            tr(
                "run the cell to step through the run with Previous and Next",
                "运行本单元格，用“上一步”“下一步”逐步查看这次运行",
            )
        )
        return (
            f"<div class='ralph-saved-stepper'>{summary}<p><b>{self.position_label.value}</b></p>"
            f"{self.step_view.value}{note}</div>"
        )

    def _repr_mimebundle_(self, **kwargs: Any) -> dict:
        return widget_bundle(self.widget, self.static_text(), self.static_html())


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
