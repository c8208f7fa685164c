"""Learning curves, bars per agent and the memory's decay curve, drawn with matplotlib (notebooks 01, 04, 06).

Each function returns a closed ``Figure``: a notebook shows it once as a PNG (nbval skips PNGs and
compares its text, ``<Figure size 640x360 with 1 Axes>``), and ``bench`` saves the same learning
curve to a file. This module imports neither ipywidgets nor tqdm, nor the memory until ``plot_decay``
is called, so ``from ralph_mini.widgets.plots import plot_learning_curve`` stays light for the command
line; pyplot itself is imported when a figure is first drawn (``new_figure``).

Left out on purpose: live-updating plots, and styling beyond matplotlib's defaults.
"""

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from ralph_mini.lang import label as in_reader_language
from ralph_mini.lang import tr

if TYPE_CHECKING:  # only plot_decay needs the memory, and imports it when called (see plot_decay)
    from ralph_mini.memory import MemoryConfig

__all__ = ["new_figure", "plot_calls_per_task", "plot_decay", "plot_learning_curve", "rolling_mean"]


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
        ax.plot(range(1, len(values) + 1), rolling_mean(values, window), label=in_reader_language(name))
    if oracle is not None:
        ax.plot(range(1, len(oracle) + 1), rolling_mean(oracle, window), "k--", label="oracle")
    title = tr(f"rolling mean over {window} tasks", f"最近 {window} 个任务的滑动平均")
    ax.set(xlabel=in_reader_language("task"), ylabel=in_reader_language(ylabel), title=title)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # task 7, never task 7.5
    ax.legend()
    return fig


def plot_calls_per_task(
    rows: Sequence[Mapping[str, Any]], value: str = "calls_per_task", label: str = "agent"
) -> Figure:
    """A bar per row (one row per agent, e.g. ``{"agent": "react", "calls_per_task": 2.4}``)."""
    fig, ax = new_figure()
    bars = ax.bar([in_reader_language(str(row[label])) for row in rows], [float(row[value]) for row in rows])
    ax.bar_label(bars, fmt="%.2f")
    ax.margins(y=0.1)  # headroom, so the tallest bar's label stays inside the frame
    measured, by = in_reader_language(value.replace("_", " ")), in_reader_language(label)
    ax.set(ylabel=measured, title=tr(f"{measured} by {by}", f"各{by}的{measured}"))
    return fig


def plot_decay(config: "MemoryConfig | None" = None, days: float = 60) -> Figure:
    """The memory's own ``decay_factor`` over ``days`` days, with the stale and expiry days marked.

    Why call the memory's function instead of redrawing the formula: one source of truth, so the
    picture cannot drift from the rule retrieval applies. ``config`` defaults to ``MemoryConfig()``
    (half-life 7 days, stale after 14, expired after 30). The memory is imported here, not at the top,
    so the learning curve (notebook 01, ``bench``) does not load the memory module.
    """
    from ralph_mini.memory import MemoryConfig, decay_factor

    config = config or MemoryConfig()
    fig, ax = new_figure()
    xs = [days * i / 600 for i in range(601)]  # fine enough to show the two jumps as cliffs
    half, stale, factor = (
        f"{config.half_life_days:g}",
        f"{config.stale_after_days:g}",
        f"{config.stale_factor:g}",
    )
    expire = f"{config.expire_after_days:g}"
    ax.plot(xs, [decay_factor(x, config) for x in xs], label=tr(f"half-life {half} d", f"半衰期 {half} 天"))
    stale_label = tr(f"stale after {stale} d (x {factor})", f"{stale} 天后过时（x {factor}）")
    ax.axvline(config.stale_after_days, color="orange", ls=":", label=stale_label)
    ax.axvline(config.expire_after_days, color="red", ls=":",
               label=tr(f"expired after {expire} d", f"{expire} 天后过期"))  # fmt: skip
    ax.set(xlabel=tr("days since last hit", "距上次命中的天数"), ylabel=tr("decay factor", "衰减系数"),
           ylim=(0, 1.05), title=tr("memory decay", "记忆衰减"))  # fmt: skip
    ax.legend()
    return fig
