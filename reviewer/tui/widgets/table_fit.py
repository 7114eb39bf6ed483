"""Tables that fit their width: the columns of prose (a note, the reasons of a case)
give up width to the others and wrap, instead of running off an 80-column screen.
The columns are sized with the rows, so they never jump a moment later.

A wrapped column breaks only between words: it is narrowed to its longest word
("Krippendorff's", "keep/drop") before any word is broken, and its cells wrap at
spaces, not at the typesetter's opportunities inside a word (after a slash). Free
text, the widest, gives first. Where that is not enough, an id breaks after an
underscore ("econ_ordering_" over "5events:3", never "cflue_mcq:" over "2"), then
columns go narrower than ``MIN_WRAPPED``, their pieces whole; only past that does
a word break anywhere (at a hyphen where it has one). A cell of Chinese text keeps the
typesetter's opportunities, as it has no spaces to break at. The order is
:func:`reviewer.column_widths.wrapped_floors`.

A heading is never cut: a column keeps its heading's longest word, and a heading wider
than its column wraps at its spaces ("your" over "answer"), the header as tall as the
tallest heading.

A column empty in every row (no one wrote a comment) gives its room to the others when
they do not fit: it goes, rather than keep its label's width while another column wraps
(the judged list's "when" went onto two lines at 80 columns beside an empty "comment")."""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import cell_len
from rich.text import Text
from textual.widgets import DataTable

from reviewer import column_widths
from reviewer.column_widths import (
    MIN_WRAPPED,
    is_wide,
    joint_spans,
    longest_piece,
    narrowed_widths,
    wrapped_floors,
)
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


def _pieces(cell: Text | str) -> int:
    """The widest piece of a cell where ids may break at their joints (see
    :func:`reviewer.column_widths.longest_piece`)."""
    return longest_piece(cell.plain if isinstance(cell, Text) else cell, cell_len)


def _between_words(cell: Text | str, width: int) -> Text | str:
    """A wrapped cell as shown in a column ``width`` wide: when every word fits, it breaks
    at spaces only (a plain ``Text``, which Textual wraps at spaces); when an id does not,
    its lines are cut here, between words and after the id's joints; a piece longer than
    the column, or wide text, keeps the typesetter's opportunities (a hyphen, a slash)."""
    text = cell if isinstance(cell, Text) else Text(cell)
    if is_wide(text.plain, cell_len) or _pieces(text) > width:
        return cell
    if longest_word(text) <= width:
        return text.copy() if isinstance(cell, LineBrokenText) else cell
    lines = [
        text[start:end]
        for line, offset in _line_offsets(text.plain)
        for start, end in ((offset + a, offset + b) for a, b in joint_spans(line, width, cell_len))
    ]
    return Text("\n").join(lines)


def _line_offsets(plain: str) -> list[tuple[str, int]]:
    """Each line of ``plain`` and where it starts."""
    offsets, start = [], 0
    for line in plain.split("\n"):
        offsets.append((line, start))
        start += len(line) + 1
    return offsets


def _heading(label: str, width: int) -> str:
    """A heading wider than its column, wrapped at its spaces (its words are whole)."""
    return "\n".join(
        "\n".join(line[a:b] for a, b in joint_spans(line, width, cell_len))
        if cell_len(line) > width
        else line
        for line in label.split("\n")
    )


def _fitted_widths(
    table: DataTable[Text | str],
    labels: Sequence[str],
    rows: Sequence[tuple[str | None, Sequence[Text | str]]],
    wrap: Sequence[int],
    narrowest: int = 0,
) -> tuple[list[int], int]:
    """Each column's width, the ``wrap`` columns narrowed as far as needed (pass by pass,
    in the module's order, none under ``narrowest``), and how many cells the table is
    still too wide by (0: it fits).
    A label of two lines (the table's ``header_height`` 2) is as wide as its wider line."""
    widths = [
        max([cell_width(label), *(cell_width(cells[index]) for _key, cells in rows)])
        for index, label in enumerate(labels)
    ]
    # A wrapped column keeps its longest word whole where the width allows; only when
    # that is not enough do ids break at their joints, then words anywhere.
    passes = wrapped_floors(
        [max([0, *(longest_word(cells[index]) for _key, cells in rows)]) for index in wrap],
        [max([0, *(_pieces(cells[index]) for _key, cells in rows)]) for index in wrap],
        [longest_word(labels[index]) for index in wrap],
    )
    available = table.size.width or table.app.size.width
    padding = 2 * table.cell_padding * len(labels) + _SCROLLBAR
    # Past every pass's floors the table scrolls sideways.
    return narrowed_widths(
        widths,
        [
            {i: max(floor, narrowest) for i, floor in zip(wrap, floors, strict=True)}
            for floors in passes
        ],
        sum(widths) + padding - available,
    )


def _is_empty(cell: Text | str) -> bool:
    return not (cell.plain if isinstance(cell, Text) else cell).strip()


def _fitted(
    table: DataTable[Text | str],
    labels: Sequence[str],
    rows: Sequence[tuple[str | None, Sequence[Text | str]]],
    wrap: Sequence[int],
    narrowest: int = 0,
) -> tuple[list[int], list[int], int]:
    """The columns shown (their indices), their widths, and how many cells the table is
    still too wide by: every column where they fit as wide as their cells; else the
    columns empty in every row go first, and the ``wrap`` columns are narrowed for what
    is left."""
    shown = list(range(len(labels)))
    widths, overflow = _fitted_widths(table, labels, rows, wrap, narrowest)
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
                narrowest,
            )
    return shown, widths, overflow


def fits(
    table: DataTable[Text | str],
    labels: Sequence[str],
    rows: Sequence[tuple[str | None, Sequence[Text | str]]],
    *,
    wrap: Sequence[int],
) -> bool:
    """Whether :func:`fill_fitted` would fit these columns in the table's width with no
    wrapped column under :data:`MIN_WRAPPED`: a screen that can leave a column out (F3's
    "why", F2's charted figures) does so rather than squeeze the others under it (ids
    broken into pieces of a few letters) to keep it."""
    return _fitted(table, labels, rows, wrap, MIN_WRAPPED)[2] == 0


def fill_fitted(
    table: DataTable[Text | str],
    labels: Sequence[str],
    rows: Sequence[tuple[str | None, Sequence[Text | str]]],
    *,
    wrap: Sequence[int],
) -> None:
    """Replace ``table``'s columns and rows: each column as wide as its widest cell; when
    they do not fit, the columns empty in every row go, then the widest of the ``wrap``
    columns gives up a cell at a time and wraps (in the module's order), a heading wider
    than its column wraps, and a row grows to the lines its cells need.  ``rows`` are
    (key, cells)."""
    shown, widths, _overflow = _fitted(table, labels, rows, wrap)
    headings = [_heading(labels[index], width) for index, width in zip(shown, widths, strict=True)]
    table.clear(columns=True)
    table.header_height = max((heading.count("\n") + 1 for heading in headings), default=1)
    for heading, width in zip(headings, widths, strict=True):
        table.add_column(heading, width=width)
    for key, cells in rows:
        table.add_row(
            *(
                _between_words(cells[index], width) if index in wrap else cells[index]
                for index, width in zip(shown, widths, strict=True)
            ),
            key=key,
            height=None,
        )
