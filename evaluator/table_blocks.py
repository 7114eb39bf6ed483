"""A text table laid out for a terminal narrower than it, as wide tables are printed in
books: its columns, in their order, in blocks that each fit the width, every block
repeating the row labels; a column's title broken over lines as narrow as its figures (but
no word cut), a row label longer than half the width broken with its later lines indented.

Only a terminal gets this (``evaluator.table_render``): piped text keeps one line per row,
as scripts read it.  No ICU (the evaluation path has none): lines break at blanks with
``wcwidth``, which counts cells as the terminal does (a Chinese character two).
"""

from __future__ import annotations

from collections.abc import Sequence

from db.visible_text import east_asian_cell_len as cells

__all__ = ["broken", "fits", "in_blocks"]

GAP = "  "  # between columns, as tabulate's simple format
TITLE_ROOM = 16  # a column's title keeps lines this wide when its figures are narrower
HANG = "  "  # the later lines of a broken row label


def fits(text: str, width: int) -> bool:
    return all(cells(line) <= width for line in text.splitlines())


def broken(text: str, room: int, hang: str = "") -> list[str]:
    import wcwidth

    return wcwidth.wrap(text, room, subsequent_indent=hang, break_on_hyphens=False) or [""]


def in_blocks(headers: Sequence[str], body: Sequence[Sequence[str]], width: int) -> str:
    """``headers`` (the row labels' title, then each column's) and ``body`` (each row: its
    label, then its figures) as blocks of columns, each at most ``width`` cells wide where
    a label and one column fit; blocks after the first say which columns they hold."""
    labels = [headers[0], *(row[0] for row in body)]
    label_room = max(min(max(map(cells, labels)), width // 2), 1)
    label_lines = [broken(label, label_room, HANG) for label in labels]
    label_width = max(cells(line) for lines in label_lines for line in lines)
    columns = []  # (width, title lines, figures) of each column
    for index, title in enumerate(headers[1:], start=1):
        figures = [row[index] for row in body]
        narrowest = max([*map(cells, figures), *map(cells, title.split())])
        room = max(min(cells(title), TITLE_ROOM, width - label_width - len(GAP)), narrowest)
        lines = broken(title, room)
        columns.append((max(map(cells, [*lines, *figures])), lines, figures))
    blocks: list[list[int]] = [[]]
    used = label_width
    for index, (column_width, _lines, _figures) in enumerate(columns):
        if blocks[-1] and used + len(GAP) + column_width > width:
            blocks.append([])
            used = label_width
        blocks[-1].append(index)
        used += len(GAP) + column_width
    parts = []
    for number, block in enumerate(blocks):
        first, last = block[0] + 1, block[-1] + 1
        held = f"column {first}" if first == last else f"columns {first}–{last}"
        held += f" of {len(columns)}"
        lines = [f"(continued: {held})"] if number else []
        lines += _block(label_lines, label_width, [columns[index] for index in block])
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def _pad(text: str, width: int) -> str:
    return text + " " * (width - cells(text))


def _block(
    label_lines: Sequence[Sequence[str]],
    label_width: int,
    columns: Sequence[tuple[int, Sequence[str], Sequence[str]]],
) -> list[str]:
    """One block's lines: the titles (their last lines on one line, above the rule), the
    rule, and a line per row (more where its label is broken)."""
    height = max(len(label_lines[0]), *(len(lines) for _width, lines, _figures in columns))

    def bottom(lines: Sequence[str]) -> list[str]:
        return [""] * (height - len(lines)) + list(lines)

    title_cells = [bottom(label_lines[0]), *(bottom(lines) for _w, lines, _f in columns)]
    widths = [label_width, *(column_width for column_width, _l, _f in columns)]
    out = [
        GAP.join(_pad(cell[line], w) for cell, w in zip(title_cells, widths, strict=True)).rstrip()
        for line in range(height)
    ]
    out.append(GAP.join("-" * w for w in widths))
    for row, lines in enumerate(label_lines[1:]):
        shown = [column_figures[row] for _w, _l, column_figures in columns]
        first = [_pad(lines[0], label_width)]
        first += [_pad(figure, w) for figure, w in zip(shown, widths[1:], strict=True)]
        out.append(GAP.join(first).rstrip())
        out += [line.rstrip() for line in lines[1:]]
    return out
