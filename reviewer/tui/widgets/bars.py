"""Horizontal bars, one row each, with an optional confidence whisker, sized to the widget.

A row reads ``label  ██████├──────────┤        45.9% [31.0, 61.6]  n=37``: the bar
runs from zero to the value, and the whisker from the interval's low end to its
high end, drawn across the bar where the two overlap (on the bar's colour), so the
bar's end and the whole interval both stay visible.  Labels are user text (names,
model names) and are shown literally; a label too long for its column ends in "…".
The chart takes the width it is given: bars shrink before the figures beside them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual.geometry import Size
from textual.widgets import Static

from reviewer.tui.literal import literal

MAX_LABEL_CELLS = 24
MIN_TRACK_CELLS = 8


@dataclass(frozen=True)
class Bar:
    """One row: its label, the value drawn (None: nothing to draw), the figure written
    beside it, and the interval drawn as a whisker (in the value's units)."""

    label: str
    value: float | None
    figure: str
    interval: tuple[float, float] | None = None


@dataclass(frozen=True)
class BarStyles:
    """How the parts of a row look."""

    label: Style
    bar: Style
    whisker: Style
    figure: Style


def _cell(position: float, scale: float, track: int) -> int:
    """The cell a value falls in (values at the scale's top land in the last cell)."""
    return min(track - 1, max(0, int(position / scale * track))) if scale > 0 else 0


def bar_track(bar: Bar, scale: float, track: int, styles: BarStyles) -> Text:
    """The bar and its whisker, ``track`` cells wide."""
    text = Text()
    value = bar.value or 0.0
    filled = round(value / scale * track) if scale > 0 and bar.value is not None else 0
    low_cell = high_cell = -1
    if bar.interval is not None and scale > 0:
        low, high = bar.interval
        low_cell, high_cell = _cell(low, scale, track), _cell(high, scale, track)
    bar_background = Style(bgcolor=styles.bar.color)
    for cell in range(track):
        in_bar = cell < filled
        if low_cell <= cell <= high_cell:
            if low_cell == high_cell:
                glyph = "│"
            elif cell == low_cell:
                glyph = "├"
            elif cell == high_cell:
                glyph = "┤"
            else:
                glyph = "─"
            text.append(glyph, styles.whisker + bar_background if in_bar else styles.whisker)
        elif in_bar:
            text.append("█", styles.bar)
        else:
            text.append(" ")
    return text


def bar_rows(bars: Sequence[Bar], width: int, scale: float, styles: BarStyles) -> Text:
    """Every row, ``width`` cells wide at most: label, track, figure."""
    labels = [literal(bar.label, str(styles.label)) for bar in bars]  # as shown: ␛ for ESC
    label_cells = min(MAX_LABEL_CELLS, max((label.cell_len for label in labels), default=0))
    figure_cells = max((cell_len(bar.figure) for bar in bars), default=0)
    track = max(MIN_TRACK_CELLS, width - label_cells - figure_cells - 2)
    lines = Text(no_wrap=True, overflow="crop", end="")
    for index, (bar, label) in enumerate(zip(bars, labels, strict=True)):
        if index:
            lines.append("\n")
        label.truncate(label_cells, overflow="ellipsis", pad=True)
        lines.append_text(label)
        lines.append(" ")
        lines.append_text(bar_track(bar, scale, track, styles))
        lines.append(" ")
        lines.append(bar.figure, styles.figure)
    return lines


class BarChart(Static):
    """Rows of :class:`Bar`, redrawn to the widget's width; ``scale`` is the value at the
    right end (None: the largest value shown)."""

    DEFAULT_CSS = """
    BarChart {
        height: auto;
    }

    BarChart > .bar-chart--label {
        color: $text;
    }

    BarChart > .bar-chart--bar {
        color: $success-darken-1;
    }

    BarChart > .bar-chart--whisker {
        color: $warning-lighten-1;
        text-style: bold;
    }

    BarChart > .bar-chart--figure {
        color: $text-muted;
    }
    """

    COMPONENT_CLASSES = {
        "bar-chart--label",
        "bar-chart--bar",
        "bar-chart--whisker",
        "bar-chart--figure",
    }

    def __init__(
        self,
        *,
        scale: float | None = 1.0,
        empty: str = "Nothing to show yet.",
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.scale = scale
        self.empty = empty
        self.bars: list[Bar] = []

    def show(self, bars: Sequence[Bar]) -> None:
        self.bars = list(bars)
        self.refresh(layout=True)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return max(1, len(self.bars))

    def render(self) -> Text:
        if not self.bars:
            return Text(self.empty, style="dim")
        values = [bar.value for bar in self.bars if bar.value is not None]
        scale = self.scale if self.scale is not None else max(values, default=0.0)
        styles = BarStyles(
            *(
                self.get_component_rich_style(f"bar-chart--{part}", partial=True)
                for part in ("label", "bar", "whisker", "figure")
            )
        )
        return bar_rows(self.bars, self.content_region.width, scale, styles)
