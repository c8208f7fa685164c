"""A real ``Memory`` with live weights (notebook 04): the table of what it learned, and sliders that preview
other settings.

``MemoryInspector`` shows every experience with the weight retrieval would give it now; its sliders
(half-life, expiry, write threshold) only preview, and a button writes the work journal. Saved, it
reads as the table it showed, in HTML and as plain text.

Left out on purpose: editing the memory from the inspector.
"""

import html
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import ipywidgets as widgets

from ralph_mini.lang import label, tr
from ralph_mini.memory import Experience, Memory, MemoryConfig
from ralph_mini.memory_file import journal
from ralph_mini.widgets.static import html_table, saved_note, text_table, widget_bundle

__all__ = ["MemoryInspector", "memory_rows", "memory_table_html", "memory_table_text", "status_at"]


def status_at(experience: Experience, config: MemoryConfig, days_since_hit: float) -> str:
    """The status the memory would give ``experience`` under ``config``; the experience is not touched.

    Only two things can differ from the stored status: a candidate proposed in ``confirm_threshold``
    separate tasks would have been written (``active``), and an active rule idle past
    ``expire_after_days`` would be flagged ``expired`` by the next sweep. Removed and expired rules
    stay as they are, because only a new proposal brings them back.
    """
    status = experience.status
    if status in ("candidate", "probation") and experience.confirmations >= config.confirm_threshold:
        status = "active"
    if status == "candidate" and config.probation:
        status = "probation"
    if status in ("active", "probation") and days_since_hit > config.expire_after_days:
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


HEADER = ("rule", "status", "weight", "confidence", "tasks", "hits", "ok / wrong", "days since hit")


def _numbers(row: dict) -> list[str]:
    """The row's numbers as the tables print them: weight to 3 places, confidence to 2, days to 1."""
    return [f"{row['weight']:.3f}", f"{row['confidence']:.2f}", str(row["confirmations"]), str(row["hits"]),
            f"{row['validations']} / {row['failures']}", f"{row['days_since_hit']:.1f}"]  # fmt: skip


def memory_table_html(memory: Memory, config: MemoryConfig | None = None) -> str:
    """The experiences as an HTML table (the static twin of ``MemoryInspector``).

    A status the settings would change reads ``candidate &rarr; active``; rows that would not be
    retrieved (weight 0) are grey.
    """
    found = memory_rows(memory, config)
    if not found:
        return f"<p class='ralph-memory'>{no_experiences()}</p>"
    rows = [(html.escape(r["rule"]), _status(r, "&rarr; <b>{}</b>"), *_numbers(r)) for r in found]
    styles = ["color:#999" if r["weight"] == 0 else "" for r in found]
    return f"<div class='ralph-memory'>{html_table(tuple(map(label, HEADER)), rows, styles)}</div>"


def memory_table_text(memory: Memory, config: MemoryConfig | None = None) -> str:
    """The same table as plain text, the rule last so the numbers line up; ``-> active`` for a preview."""
    found = memory_rows(memory, config)
    if not found:
        return no_experiences()
    return text_table(
        tuple(map(label, (*HEADER[1:], HEADER[0]))),
        [(_status(r, "-> {}"), *_numbers(r), r["rule"]) for r in found],
    )


def no_experiences() -> str:
    return tr("no experiences yet", "还没有经验")


def _status(row: dict, arrow: str) -> str:
    """``active``, or ``candidate`` followed by ``arrow`` filled with the previewed status."""
    if row["status"] == row["stored_status"]:
        return row["status"]
    return f"{row['stored_status']} {arrow.format(row['status'])}"


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
            description=tr("half-life (days)", "半衰期（天）"),
            style=style,
        )
        self.expiry = widgets.FloatSlider(
            config.expire_after_days,
            min=1,
            step=1,
            max=max(120, config.expire_after_days),
            description=tr("expire after (days)", "过期（天）"),
            style=style,
        )
        threshold = tr("write threshold (tasks)", "写入阈值（任务）")
        self.threshold = widgets.IntSlider(config.confirm_threshold, min=1,
                                           max=max(5, config.confirm_threshold),
                                           description=threshold, style=style)  # fmt: skip
        self.table = widgets.HTML()
        self.export_button = widgets.Button(
            description=tr("Export journal", "导出工作日志"), tooltip=tr("write the journal", "写出工作日志")
        )
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
        self.status.value = tr(
            f"journal written to {self.journal_path}", f"工作日志已写入 {self.journal_path}"
        )
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
        """The widget, and as its saved twin the table it shows now (the repr line heads the text)."""
        config = self.config()
        text = f"{self!r}\n{memory_table_text(self.memory, config)}"
        note = saved_note(
            tr(
                "run the cell to move the sliders and export the journal",
                "运行本单元格，即可拖动滑块并导出工作日志",
            )
        )
        page = f"<p><code>{html.escape(repr(self))}</code></p>{memory_table_html(self.memory, config)}{note}"
        return widget_bundle(self.widget, text, page)
