"""Tables the CLI prints: one row a line when piped (scripts read them), fitted to the
terminal's width when a person reads them there.

On a terminal narrower than a table, the widest columns give up width and their cells
wrap, by the rule the app's fitted tables follow too (``reviewer/column_widths.py``): a
column is narrowed to its longest word before any word breaks, and a row grows to the
lines its cells need.  Nothing is cut: every word of every cell is still there.  The typesetter
(ICU) is imported only then, so a piped table needs none of it.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import TypedDict, Unpack

import click

from db.visible_text import east_asian_cell_len
from reviewer.cli.output import column, terminal_width, wrapped_lines
from reviewer.column_widths import MIN_WRAPPED, is_wide, longest_word, narrowed_widths


class TableLayout(TypedDict, total=False):
    """How :func:`table_lines` lays a table out (each has a default there)."""

    gap: str
    aligned: bool
    minimum_widths: Sequence[int]
    width: int | None


def echo_table(
    rows: Sequence[Sequence[str]],
    header: Sequence[str] | None = None,
    **layout: Unpack[TableLayout],
) -> None:
    """Print ``rows`` (cells already fit for a terminal) under ``header``, see
    :func:`table_lines`."""
    for line in table_lines(rows, header, **layout):
        click.echo(line)


def table_lines(
    rows: Sequence[Sequence[str]],
    header: Sequence[str] | None = None,
    *,
    gap: str = "  ",
    aligned: bool = True,
    minimum_widths: Sequence[int] = (),
    width: int | None = None,
) -> list[str]:
    """The table's lines: cells joined by ``gap``, each column padded to its widest cell
    (in terminal cells: Chinese takes two), or to its ``minimum_widths`` entry, when
    ``aligned``, else each row as it comes.

    When the table is wider than ``width``, or than the terminal the output is, its
    columns are aligned and fitted (see the module's docstring); piped output, or a table
    that fits, keeps one line a row, byte for byte as before.
    """
    table = [list(row) for row in ([header] if header is not None else []) + list(rows)]
    if not table:
        return []
    limit = min((w for w in (width, terminal_width()) if w), default=None)
    columns = list(zip(*table, strict=True))
    minimums = [*minimum_widths, *[0] * (len(columns) - len(minimum_widths))]
    widths = [
        max([minimum, *map(east_asian_cell_len, cells)])
        for cells, minimum in zip(columns, minimums, strict=True)
    ]
    gaps = east_asian_cell_len(gap) * (len(widths) - 1)
    if limit is None or (
        sum(widths) + gaps <= limit
        if aligned
        else all(east_asian_cell_len(gap.join(row)) <= limit for row in table)
    ):
        if not aligned:
            return [gap.join(row).rstrip() for row in table]
        padded = [column(cells, at_least=w) for cells, w in zip(columns, widths, strict=True)]
        return [gap.join(line).rstrip() for line in zip(*padded, strict=True)]
    words = [max(map(longest_word, cells)) for cells in columns]
    floors = (
        [max(MIN_WRAPPED, word) for word in words],  # words whole, columns not too thin
        words,  # words whole
        [MIN_WRAPPED] * len(words),  # words break, columns not too thin
        [1] * len(words),
    )
    fitted, _still_over = narrowed_widths(
        widths, [dict(enumerate(floor)) for floor in floors], sum(widths) - (limit - gaps)
    )
    return [line for row in table for line in _row_lines(row, fitted, gap)]


def _cell_lines(cell: str, width: int) -> list[str]:
    """``cell`` as lines of at most ``width`` cells: between words where every word fits
    (not after the slash of "keep/drop"), else where the typesetter allows."""
    if east_asian_cell_len(cell) <= width:
        return [cell]
    if not is_wide(cell) and longest_word(cell) <= width:
        return textwrap.wrap(cell, width, break_long_words=False, break_on_hyphens=False)
    return wrapped_lines(cell, width)


def _row_lines(row: Sequence[str], widths: Sequence[int], gap: str) -> list[str]:
    """One row as the lines its wrapped cells need, each cell under its column."""
    cells = [_cell_lines(cell, width) for cell, width in zip(row, widths, strict=True)]
    height = max(len(lines) for lines in cells)
    padded = [
        column(lines + [""] * (height - len(lines)), at_least=width)
        for lines, width in zip(cells, widths, strict=True)
    ]
    return [gap.join(line).rstrip() for line in zip(*padded, strict=True)]
