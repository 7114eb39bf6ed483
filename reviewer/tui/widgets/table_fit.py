"""Tables that fit their width: the columns of prose (a note, the reasons of a case)
give up width to the others and wrap, instead of running off an 80-column screen.
The columns are sized with the rows, so they never jump a moment later.

A wrapped column breaks only between words: it is narrowed to its longest word
("Krippendorff's", "keep/drop") before any word is broken, and its cells wrap at
spaces, not at the typesetter's opportunities inside a word (after a slash). Only a
word longer than the column breaks (at a hyphen where it has one); a cell of Chinese
text keeps the typesetter's opportunities, as it has no spaces to break at.

A column empty in every row (no one wrote a comment) gives its room to the others when
they do not fit: it goes, rather than keep its label's width while another column wraps
(the judged list's "when" went onto two lines at 80 columns beside an empty "comment")."""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import cell_len
from rich.text import Text
from textual.widgets import DataTable

from reviewer import column_widths
from reviewer.column_widths import MIN_WRAPPED, is_wide, narrowed_widths
from reviewer.tui.line_broken_text import LineBrokenText

_SCROLLBAR = 2  # room kept for the vertical scrollbar


def cell_width(cell: Text | str) -> int:
    """The widest line of a cell, in terminal cells."""
    text = cell if isinstance(cell, Text) else Text(cell)
    return max((line.cell_len for line in text.split("\n")), default=0)


def longest_word(cell: Text | str) -> int:
    """The widest piece of a cell that wrapping keeps whole (see
    :func:`reviewer.column_widths.longest_word`)."""
    return column_widths.longest_word(cell.plain if isinstance(cell, Text) else cell, cell_len)


def _between_words(cell: Text | str, width: int) -> Text | str:
    """A wrapped cell as shown in a column ``width`` wide: when every word fits, it breaks
    at spaces only (a plain ``Text``, which Textual wraps at spaces); a word longer than
    the column, or wide text, keeps the typesetter's opportunities (a hyphen, a slash)."""
    if (
        isinstance(cell, LineBrokenText)
        and not is_wide(cell.plain, cell_len)
        and longest_word(cell) <= width
    ):
        return cell.copy()  # rich's Text.copy makes a plain Text, spans and style kept
    return cell


def _fitted_widths(
    table: DataTable[Text | str],
    labels: Sequence[str],
    rows: Sequence[tuple[str | None, Sequence[Text | str]]],
    wrap: Sequence[int],
) -> tuple[list[int], int]:
    """Each column's width, the ``wrap`` columns narrowed as far as needed (to their
    longest word, and only if that is not enough, to :data:`MIN_WRAPPED`), and how many
    cells the table is still too wide by (0: it fits).
    A label of two lines (the table's ``header_height`` 2) is as wide as its wider line."""
    widths = [
        max([cell_width(label), *(cell_width(cells[index]) for _key, cells in rows)])
        for index, label in enumerate(labels)
    ]
    # A wrapped column keeps its longest word whole where the width allows; only when
    # that is not enough does a word longer than the column break (down to MIN_WRAPPED).
    whole_words = {
        index: max(
            MIN_WRAPPED,
            longest_word(labels[index]),
            *(longest_word(cells[index]) for _key, cells in rows),
        )
        for index in wrap
    }
    available = table.size.width or table.app.size.width
    padding = 2 * table.cell_padding * len(labels) + _SCROLLBAR
    # Past both passes' floors the table scrolls sideways.
    return narrowed_widths(
        widths, (whole_words, dict.fromkeys(wrap, MIN_WRAPPED)), sum(widths) + padding - available
    )


def _is_empty(cell: Text | str) -> bool:
    return not (cell.plain if isinstance(cell, Text) else cell).strip()


def _fitted(
    table: DataTable[Text | str],
    labels: Sequence[str],
    rows: Sequence[tuple[str | None, Sequence[Text | str]]],
    wrap: Sequence[int],
) -> tuple[list[int], list[int], int]:
    """The columns shown (their indices), their widths, and how many cells the table is
    still too wide by: every column where they fit as wide as their cells; else the
    columns empty in every row go first, and the ``wrap`` columns are narrowed for what
    is left."""
    shown = list(range(len(labels)))
    widths, overflow = _fitted_widths(table, labels, rows, wrap)
    narrowed = overflow or widths != _fitted_widths(table, labels, rows, ())[0]
    if narrowed and rows:
        filled = [i for i in shown if not all(_is_empty(cells[i]) for _key, cells in rows)]
        if filled and len(filled) < len(shown):
            shown = filled
            widths, overflow = _fitted_widths(
                table,
                [labels[i] for i in shown],
                [(key, [cells[i] for i in shown]) for key, cells in rows],
                [shown.index(i) for i in wrap if i in shown],
            )
    return shown, widths, overflow


def fits(
    table: DataTable[Text | str],
    labels: Sequence[str],
    rows: Sequence[tuple[str | None, Sequence[Text | str]]],
    *,
    wrap: Sequence[int],
) -> bool:
    """Whether :func:`fill_fitted` would fit these columns in the table's width."""
    return _fitted(table, labels, rows, wrap)[2] == 0


def fill_fitted(
    table: DataTable[Text | str],
    labels: Sequence[str],
    rows: Sequence[tuple[str | None, Sequence[Text | str]]],
    *,
    wrap: Sequence[int],
) -> None:
    """Replace ``table``'s columns and rows: each column as wide as its widest cell; when
    they do not fit, the columns empty in every row go, then the widest of the ``wrap``
    columns gives up a cell at a time (to :data:`MIN_WRAPPED`) and wraps, and a row grows
    to the lines its cells need.  ``rows`` are (key, cells)."""
    shown, widths, _overflow = _fitted(table, labels, rows, wrap)
    table.clear(columns=True)
    for index, width in zip(shown, widths, strict=True):
        table.add_column(labels[index], width=width)
    for key, cells in rows:
        table.add_row(
            *(
                _between_words(cells[index], width) if index in wrap else cells[index]
                for index, width in zip(shown, widths, strict=True)
            ),
            key=key,
            height=None,
        )
