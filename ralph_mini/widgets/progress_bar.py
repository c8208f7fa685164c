"""Progress bars whose saved output reads as the finished run (notebook 01 on).

``progress`` wraps an iterable the way ``tqdm`` does: a widget in Jupyter, text on stderr in a
terminal (``tqdm.auto`` chooses). In Jupyter the saved text is the bar at its end,
``tasks: 100%|██████████| 50/50``, not the ``0%`` the bar showed when it appeared.

Why that needs care: a notebook keeps a widget's text as it was when displayed, and strict nbval
compares that text but ignores later updates to a display (it drops ``update_display_data``). So the
text a bar displays must already be the text it ends with, and it must hold no timings or rates.
A bar with a known total therefore displays its finished state from the start (a reader of the live
notebook sees the widget move, never that text); if the loop stops early, the display is updated at
close to the count it reached, ``tasks:  40%|████      | 20/50, stopped``, so the saved notebook
tells the truth (and nbval, seeing the promise, reports the cell). A bar without a total cannot
promise a count: it displays ``tasks: counting`` and adds a line ``tasks: 37 done`` at close.

The notebook bar itself, ``SavedBar``, lives in ``saved_bar``: it subclasses ``tqdm.notebook``, which
imports ipywidgets, and ``progress`` imports it on its first call in a kernel, so importing this
module (notebook 01's first cell) costs only tqdm's core (issue 27).

Left out on purpose: nested bars, and rates or timings in anything saved.
"""

from collections.abc import Iterable

from tqdm import tqdm

from ralph_mini.lang import label, tr

__all__ = ["bar_text", "progress"]

BAR_FORMAT = "{l_bar}{bar}| {n_fmt}/{total_fmt}"  # tqdm's own bar, without elapsed time and rate


def bar_text(desc: str, n: int, total: int | None) -> str:
    """The saved line: ``bar_text("tasks", 50, 50) -> "tasks: 100%|██████████| 50/50"``.

    Fewer than ``total`` adds ", stopped"; no total gives ``"tasks: 37 done"``.
    """
    if not total:
        return tr(f"{desc}: {n} done", f"{desc}：已完成 {n} 个")
    text = tqdm.format_meter(n, total, 0, prefix=desc, bar_format=BAR_FORMAT)
    return text + (tr(", stopped", "，已停止") if n < total else "")


def progress(iterable: Iterable, desc: str = "tasks", total: int | None = None) -> tqdm:
    """A progress bar over ``iterable``; ``total`` defaults to ``len(iterable)`` when it has one.

    With the default ``desc`` it fits ``run_suite(..., progress=progress)`` and ``run_loop`` as is.
    Why not plain ``tqdm``: in a notebook it writes changing rates (``48.83it/s``) to stderr, which
    strict nbval compares, so a re-run fails. In a terminal this is ``tqdm.auto``'s text bar.
    """
    from tqdm.auto import tqdm as auto_tqdm  # imported on the first bar: tqdm.auto looks for a kernel

    desc = label(desc)  # "tasks" -> "任务" in the Chinese edition
    if total is None and hasattr(iterable, "__len__"):
        total = len(iterable)
    # tqdm.auto's bar is tqdm.notebook's only inside a kernel; asked by module name, so that a terminal
    # never imports tqdm.notebook (and with it ipywidgets).
    if not any(cls.__module__ == "tqdm.notebook" for cls in auto_tqdm.__mro__):  # a terminal
        return auto_tqdm(iterable, desc=desc, total=total)
    from ralph_mini.widgets.saved_bar import SavedBar

    return SavedBar(iterable, desc, total)
