"""Tables that fit their width: the columns of prose (a note, the reasons of a case)
give up width to the others and wrap, instead of running off an 80-column screen.
The columns are sized with the rows, so they never jump a moment later."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.widgets import DataTable

MIN_WRAPPED = 10  # narrower than this, a wrapped column reads worse than a cut one
_SCROLLBAR = 2  # room kept for the vertical scrollbar


def cell_width(cell: Text | str) -> int:
    """The widest line of a cell, in terminal cells."""
    text = cell if isinstance(cell, Text) else Text(cell)
    return max((line.cell_len for line in text.split("\n")), default=0)


def _fitted_widths(
    table: DataTable[Text | str],
    labels: Sequence[str],
    rows: Sequence[tuple[str | None, Sequence[Text | str]]],
    wrap: Sequence[int],
) -> tuple[list[int], int]:
    """Each column's width, the ``wrap`` columns narrowed as far as needed (to
    :data:`MIN_WRAPPED`), and how many cells the table is still too wide by (0: it fits).
    A label of two lines (the table's ``header_height`` 2) is as wide as its wider line."""
    widths = [
        max([cell_width(label), *(cell_width(cells[index]) for _key, cells in rows)])
        for index, label in enumerate(labels)
    ]
    available = table.size.width or table.app.size.width
    padding = 2 * table.cell_padding * len(labels) + _SCROLLBAR
    overflow = sum(widths) + padding - available
    while overflow > 0:
        narrowable = [index for index in wrap if widths[index] > MIN_WRAPPED]
        if not narrowable:
            break  # the table scrolls sideways
        widest = max(narrowable, key=lambda index: widths[index])
        widths[widest] -= 1
        overflow -= 1
    return widths, max(overflow, 0)


def fits(
    table: DataTable[Text | str],
    labels: Sequence[str],
    rows: Sequence[tuple[str | None, Sequence[Text | str]]],
    *,
    wrap: Sequence[int],
) -> bool:
    """Whether :func:`fill_fitted` would fit these columns in the table's width."""
    return _fitted_widths(table, labels, rows, wrap)[1] == 0


def fill_fitted(
    table: DataTable[Text | str],
    labels: Sequence[str],
    rows: Sequence[tuple[str | None, Sequence[Text | str]]],
    *,
    wrap: Sequence[int],
) -> None:
    """Replace ``table``'s columns and rows: each column as wide as its widest cell; when
    they do not fit, the widest of the ``wrap`` columns gives up a cell at a time (to
    :data:`MIN_WRAPPED`) and wraps, and a row grows to the lines its cells need.
    ``rows`` are (key, cells)."""
    widths, _overflow = _fitted_widths(table, labels, rows, wrap)
    table.clear(columns=True)
    for label, width in zip(labels, widths, strict=True):
        table.add_column(label, width=width)
    for key, cells in rows:
        table.add_row(*cells, key=key, height=None)
