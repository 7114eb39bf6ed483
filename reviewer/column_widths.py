"""Column widths for a table wider than its room, shared by the CLI's printed tables
(``reviewer/cli/tables.py``) and the app's (``reviewer/tui/widgets/table_fit.py``).

A column that gives up width wraps its cells, so it is narrowed to its longest word
(:func:`longest_word`) before any word breaks, and no narrower than
:data:`MIN_WRAPPED` while another column can still give; :func:`narrowed_widths` takes
a cell at a time from the widest column that may give, pass by pass.

The typesetter (ICU, for the unbreakable pieces of Chinese text) is imported only when
a wide text is measured: a table of Latin text needs none of it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from db.visible_text import east_asian_cell_len

CellLength = Callable[[str], int]

MIN_WRAPPED = 10  # narrower than this, a wrapped column reads worse than a cut one


def is_wide(text: str, cell_len: CellLength = east_asian_cell_len) -> bool:
    """Whether ``text`` holds double-width (Chinese, Japanese, Korean) characters (a line
    break is no character on screen: each line is measured alone)."""
    return any(cell_len(line) != len(line) for line in text.split("\n"))


def longest_word(text: str, cell_len: CellLength = east_asian_cell_len) -> int:
    """The widest piece of ``text`` that wrapping keeps whole: a word between spaces, or
    in a line of wide text its widest unbreakable piece (wide text has no spaces)."""
    widest = 0
    for line in text.split("\n"):
        if is_wide(line, cell_len):
            from reviewer.line_breaking import minimal_width

            widest = max(widest, minimal_width(line, cell_len))
        else:
            widest = max([widest, *map(cell_len, line.split())])
    return widest


def narrowed_widths(
    widths: Sequence[int], passes: Sequence[Mapping[int, int]], overflow: int
) -> tuple[list[int], int]:
    """``widths`` with ``overflow`` cells taken away, one at a time from the widest column
    that may still give: in each of ``passes`` (column index → the width it may give down
    to, at least one cell) until the table fits or no column may give, then in the next.
    Also how many cells it is still too wide by (0: it fits)."""
    narrowed = list(widths)
    for floors in passes:
        while overflow > 0:
            narrowable = [
                index for index, floor in floors.items() if narrowed[index] > max(floor, 1)
            ]
            if not narrowable:
                break  # the next pass's floors, else it stays too wide
            widest = max(narrowable, key=narrowed.__getitem__)
            narrowed[widest] -= 1
            overflow -= 1
    return narrowed, max(overflow, 0)
