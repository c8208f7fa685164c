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

Left out on purpose: nested bars, and rates or timings in anything saved.
"""

from collections.abc import Iterable

from tqdm import tqdm
from tqdm.auto import tqdm as auto_tqdm
from tqdm.notebook import tqdm as notebook_tqdm

from ralph_mini.widgets.static import widget_bundle

__all__ = ["SavedBar", "bar_text", "progress"]

BAR_FORMAT = "{l_bar}{bar}| {n_fmt}/{total_fmt}"  # tqdm's own bar, without elapsed time and rate


def bar_text(desc: str, n: int, total: int | None) -> str:
    """The saved line: ``bar_text("tasks", 50, 50) -> "tasks: 100%|██████████| 50/50"``.

    Fewer than ``total`` adds ", stopped"; no total gives ``"tasks: 37 done"``.
    """
    if not total:
        return f"{desc}: {n} done"
    text = tqdm.format_meter(n, total, 0, prefix=desc, bar_format=BAR_FORMAT)
    return text + (", stopped" if n < total else "")


class SavedBar(notebook_tqdm):
    """tqdm's notebook bar, displayed with a ``display_id`` and a saved text that is its final state.

    Built only inside a Jupyter kernel with ipywidgets (``progress`` checks). Iterating and
    ``update`` are tqdm's; only the display and ``close`` differ.
    """

    def __init__(self, iterable: Iterable, desc: str, total: int | None):
        from IPython.display import display

        super().__init__(iterable, desc=desc, total=total, display=False)  # no display of tqdm's own
        self.handle, self.finished = None, False
        promise = bar_text(desc, total, total) if total else f"{desc}: counting"
        self.handle = display(self.bundle(promise), raw=True, display_id=True)

    def bundle(self, text: str) -> dict:
        """The live widget, with ``text`` as its saved plain text (shown as is where widgets are not)."""
        return widget_bundle(self.container, text)

    def close(self) -> None:
        """tqdm's close, then the saved text made true: the count reached, or a line with the count."""
        super().close()
        if self.finished or self.handle is None:  # tqdm may call close twice (at the end and on del)
            return
        self.finished = True
        text = bar_text(self.desc, self.n, self.total)
        if not self.total:
            from IPython.display import display

            display({"text/plain": text}, raw=True)
        elif self.n != self.total:
            self.handle.update(self.bundle(text), raw=True)


def progress(iterable: Iterable, desc: str = "tasks", total: int | None = None) -> tqdm:
    """A progress bar over ``iterable``; ``total`` defaults to ``len(iterable)`` when it has one.

    With the default ``desc`` it fits ``run_suite(..., progress=progress)`` and ``run_loop`` as is.
    Why not plain ``tqdm``: in a notebook it writes changing rates (``48.83it/s``) to stderr, which
    strict nbval compares, so a re-run fails. In a terminal this is ``tqdm.auto``'s text bar.
    """
    if total is None and hasattr(iterable, "__len__"):
        total = len(iterable)
    if not issubclass(auto_tqdm, notebook_tqdm):  # a terminal or a plain interpreter
        return auto_tqdm(iterable, desc=desc, total=total)
    return SavedBar(iterable, desc, total)
