"""The notebook's progress bar whose saved text is its final state (notebook 01 on; see ``progress_bar``).

A module of its own because it subclasses ``tqdm.notebook``'s bar, and importing that imports
ipywidgets: ``progress_bar.progress`` imports this module on its first call inside a kernel, never
before.

Left out on purpose: everything ``progress_bar`` leaves out (nested bars, rates or timings saved).
"""

from collections.abc import Iterable

from tqdm.notebook import tqdm as notebook_tqdm

from ralph_mini.widgets.progress_bar import bar_text
from ralph_mini.widgets.static import widget_bundle

__all__ = ["SavedBar"]


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
