"""Accuracy as a run goes: after each answered item, the share answered right so far.

A line plot drawn by plotext (through ``textual-plotext``'s widget), 0–100% on the
vertical axis and items answered on the horizontal one.  A long run is thinned to a
few points per cell before plotting: the plot cannot show more, and plotext would
slow down with tens of thousands of points.
"""

from __future__ import annotations

from collections.abc import Sequence

from textual_plotext import PlotextPlot

from db.words import counted
from evaluator.run_text import number

POINTS_PER_CELL = 2  # braille dots per cell across


def thinned(values: Sequence[float], most: int) -> tuple[list[int], list[float]]:
    """At most ``most`` evenly spaced (item number, value) points, the last one always kept."""
    count = len(values)
    if count <= most:
        return list(range(1, count + 1)), list(values)
    step = (count - 1) / (most - 1)
    indices = sorted({round(index * step) for index in range(most)} | {count - 1})
    return [index + 1 for index in indices], [values[index] for index in indices]


def item_ticks(count: int, most: int = 5) -> list[int]:
    """Whole item numbers from 1 to ``count`` for the horizontal axis, evenly spread."""
    if count <= most:
        return list(range(1, count + 1))
    return sorted({int(1.5 + index * (count - 1) / (most - 1)) for index in range(most)})


def curve_title(curve: Sequence[float]) -> str:
    """What the plot says above the curve: the accuracy now, and after how many items."""
    if not curve:
        return "Accuracy as the run goes: no answers yet"
    accuracy = number(curve[-1], percent=True)
    return f"Accuracy as the run goes: {accuracy} after {counted(len(curve), 'item')}"


class AccuracyCurve(PlotextPlot):
    """The cumulative accuracy of one run, in percent, item by item."""

    DEFAULT_CSS = """
    AccuracyCurve {
        height: 9;
        width: 1fr;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.curve: list[float] = []

    def show(self, curve: Sequence[float]) -> None:
        """Plot ``curve`` (cumulative accuracy after each answered item, as fractions)."""
        self.curve = list(curve)
        self._replot()

    def on_resize(self) -> None:
        self._replot()

    def _replot(self) -> None:
        plot = self.plt
        plot.clear_data()
        plot.clear_figure()
        count = len(self.curve)
        plot.title(curve_title(self.curve))
        plot.ylim(0, 100)
        plot.yticks([0, 50, 100])
        if count:
            xs, ys = thinned(self.curve, max(2, self.size.width * POINTS_PER_CELL))
            plot.plot(xs, [100 * value for value in ys], marker="braille")
            plot.xlim(1, max(2, count))
            ticks = item_ticks(count)
            plot.xticks([float(tick) for tick in ticks], [str(tick) for tick in ticks])
        self.refresh()
