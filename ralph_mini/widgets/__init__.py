"""Interactive views of runs, learning curves and memory, each with a static twin (notebook 01 on).

One module per view: ``trace`` (the run table and the stepper), ``memory`` (the memory inspector),
``plots`` (learning curves, bars, decay), ``progress_bar`` (the task bar; ``saved_bar`` its notebook
widget); ``static`` holds the HTML tables and the display bundle they share. Every live widget saves a
static twin, text and HTML, because a notebook read on the web shows only what was saved, and nbval
compares only that.

Why the names below are imported on first use instead of at the top: importing this package runs
this file, and the views' libraries are slow to import (ipywidgets and ``tqdm.notebook`` a tenth of a
second or more, matplotlib more, the memory module its own chain). Each is loaded when a view needs
it, not before: ``from ralph_mini.widgets import progress, show_trace`` (notebook 01's first cell)
loads none of them, the stepper loads ipywidgets when it is built, a bar ``tqdm.notebook`` when it
starts in a kernel, ``plot_decay`` the memory when it draws (issue 27; ``tests/test_fast_start.py``).
"""

from importlib import import_module

# Each public name and the module (in this package) that defines it.
HOMES = {
    "CELL_STYLE": "static", "WRONG_STYLE": "static", "html_table": "static", "text_table": "static",
    "widget_bundle": "static",
    "TraceStepper": "trace", "TraceView": "trace", "show_trace": "trace", "step_html": "trace",
    "step_text": "trace", "trace_html": "trace", "trace_text": "trace",
    "MemoryInspector": "memory", "memory_rows": "memory", "memory_table_html": "memory",
    "memory_table_text": "memory", "status_at": "memory",
    "plot_calls_per_task": "plots", "plot_decay": "plots", "plot_learning_curve": "plots",
    "rolling_mean": "plots",
    "progress": "progress_bar",
}  # fmt: skip

__all__ = sorted(HOMES)


def __getattr__(name: str) -> object:
    """``ralph_mini.widgets.NAME``: import NAME's module on first use (PEP 562), then keep the name here."""
    if name not in HOMES:
        raise AttributeError(f"module 'ralph_mini.widgets' has no attribute {name!r}; it exports {__all__}")
    value = getattr(import_module(f"ralph_mini.widgets.{HOMES[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *HOMES])
