"""Column widths for a table wider than its room, shared by the CLI's printed tables
(``reviewer/cli/tables.py``) and the app's (``reviewer/tui/widgets/table_fit.py``).

A column that gives up width wraps its cells, so it is narrowed to its longest word
(:func:`longest_word`) before any word breaks, and no narrower than
:data:`MIN_WRAPPED` while another column can still give; :func:`narrowed_widths` takes
a cell at a time from the widest column that may give, pass by pass.

An id is one word ("econ_ordering_5events:3"): where it is wider than its column it
breaks only after an underscore between letters or digits ("econ_ordering_" over
"5events:3", :func:`joint_spans`), never after its colon ("cflue_mcq:" over "2" read as
two things), and only where no column can give by keeping words whole
(:func:`wrapped_floors`).

The typesetter (ICU, for the unbreakable pieces of Chinese text) is imported only when
a wide text is measured: a table of Latin text needs none of it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence

from db.visible_text import east_asian_cell_len

CellLength = Callable[[str], int]

MIN_WRAPPED = 10  # narrower than this, a wrapped column reads worse than a cut one

# After an underscore between letters or digits: where a person accepts an id's break.
_JOINT = re.compile(r"(?<=[^\W_]_)(?=[^\W_])")


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


def longest_piece(text: str, cell_len: CellLength = east_asian_cell_len) -> int:
    """The widest piece of ``text`` that wrapping keeps whole where words may also break
    at their joints (:func:`joint_spans`); wide text as :func:`longest_word` measures it."""
    widest = 0
    for line in text.split("\n"):
        if is_wide(line, cell_len):
            widest = max(widest, longest_word(line, cell_len))
        else:
            pieces = (piece for word in line.split() for piece in _JOINT.split(word))
            widest = max([widest, *map(cell_len, pieces)])
    return widest


def joint_spans(
    line: str, width: int, cell_len: CellLength = east_asian_cell_len
) -> list[tuple[int, int]]:
    """Where one line of text (no line break, no wide text) is cut into lines of at most
    ``width`` cells, as (start, end) offsets, the spaces at each cut left out: between
    words, and a word wider than ``width`` also after its joints ("econ_ordering_" over
    "5events:3", the word starting a line of its own); a piece wider still is folded."""
    spans: list[tuple[int, int]] = []
    start = end = -1  # the line being filled (start -1: none yet)
    for word in re.finditer(r"\S+", line):
        if start >= 0 and cell_len(line[start : word.end()]) <= width:
            end = word.end()  # the word on the line so far
            continue
        if start >= 0:  # a word too wide for what is left starts a line, an id whole
            spans.append((start, end))
            start = -1
        if cell_len(word.group()) <= width:
            pieces = [word.span()]
        else:
            offsets = [
                word.start(),
                *(word.start() + m.start() for m in _JOINT.finditer(word.group())),
            ]
            pieces = list(zip(offsets, [*offsets[1:], word.end()], strict=True))
        for piece_start, piece_end in pieces:
            if start >= 0 and cell_len(line[start:piece_end]) <= width:
                end = piece_end
                continue
            if start >= 0:
                spans.append((start, end))
            start = piece_start
            while cell_len(line[start:piece_end]) > width:  # folded
                cut = start + 1
                while cut < piece_end and cell_len(line[start : cut + 1]) <= width:
                    cut += 1
                spans.append((start, cut))
                start = cut
            end = piece_end
    return [*spans, (start, end)] if start >= 0 else [(0, 0)]


def wrapped_floors(
    words: Sequence[int], pieces: Sequence[int], headings: Sequence[int]
) -> list[list[int]]:
    """The widths wrapped columns give up width down to, pass by pass, for
    :func:`narrowed_widths`: their words whole, at least :data:`MIN_WRAPPED`; then ids
    broken at their joints (``pieces``: each column's :func:`longest_piece`); then those
    pieces narrower than :data:`MIN_WRAPPED`; only then a word broken anywhere.  No pass
    goes under a column's ``headings`` entry (its heading's longest word: a heading wraps
    at its spaces, one word is never cut).  Free text, the widest, gives first: in each
    pass the widest column gives a cell at a time."""
    columns = list(zip(words, pieces, headings, strict=True))
    return [
        [max(MIN_WRAPPED, word, heading) for word, _piece, heading in columns],
        [max(MIN_WRAPPED, piece, heading) for _word, piece, heading in columns],
        [max(piece, heading) for _word, piece, heading in columns],
        [max(MIN_WRAPPED, heading) for _word, _piece, heading in columns],
    ]


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
