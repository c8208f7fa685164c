"""Static twins (notebooks 01-06): the HTML tables and the display bundle that put a readable view next
to a live widget.

Why every widget has a twin: a notebook read on the web (GitHub, or JupyterLab before its cells run
again) shows no live widget, only what was saved with it. ``widget_bundle`` saves, next to the
widget's view, a ``text/html`` rendering of its current state and a multi-line ``text/plain``: the
web shows the table, nbval compares the text (never the widget's random model id).

This module imports neither ipywidgets nor matplotlib.
"""

from collections.abc import Sequence
from typing import Any

WRONG_STYLE = "background:#fde2e2;border-left:4px solid #d62728"  # a wrong call, in red
CELL_STYLE = "border:1px solid #ccc;padding:2px 6px;text-align:left;vertical-align:top"
NOTE_STYLE = "color:#666;font-size:90%"  # the "saved view" note under a static twin


def html_table(header: Sequence[str], rows: Sequence[Sequence[str]], styles: Sequence[str]) -> str:
    """A small bordered table; ``styles[i]`` is row i's inline CSS. Cells arrive already escaped."""
    cell = "<td style='{}'>{}</td>"
    head = "".join(f"<th style='{CELL_STYLE}'>{name}</th>" for name in header)
    body = "".join(
        f"<tr style='{style}'>" + "".join(cell.format(CELL_STYLE, c) for c in row) + "</tr>"
        for row, style in zip(rows, styles, strict=True)
    )
    return f"<table style='border-collapse:collapse'><tr>{head}</tr>{body}</table>"


def text_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """The same table as plain text, columns padded to their widest cell, left-aligned.

    ``text_table(("a", "bb"), [("1", "2")]) -> "a  bb\\n1  2"``
    """
    widths = [max(len(cell) for cell in column) for column in zip(header, *rows, strict=True)]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip()
             for line in (header, *rows)]  # fmt: skip
    return "\n".join(lines)


def saved_note(what: str) -> str:
    """The grey line under a static twin: what the live widget adds once the cell runs again."""
    return f"<p style='{NOTE_STYLE}'>(saved view: {what})</p>"


def widget_bundle(widget: Any, text: str, page: str | None = None) -> dict:
    """The widget's own display data, with ``text/plain`` set to ``text`` and ``text/html`` to ``page``.

    Why both: a front end that runs the widget shows the widget view (it ranks first); one that
    cannot (GitHub, an untrusted JupyterLab, nbviewer without widget state) shows ``page``; nbval
    compares ``text`` and ``page``, so both must be the same on every run and every CPU.
    ``widget`` is an ipywidgets widget; its ``_repr_mimebundle_`` is None once it is closed.
    """
    make = widget._repr_mimebundle_
    return {**(make() if make else {}), "text/plain": text, **({"text/html": page} if page else {})}
