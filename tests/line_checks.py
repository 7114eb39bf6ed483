"""What a typesetter would object to in wrapped lines, written apart from the code under test.

Each check looks only at the characters on either side of a cut, so it does not
share the implementation's regular expressions or its UAX #14 tables.
"""

from __future__ import annotations

from rich.cells import cell_len

CLOSING = set("，。、；：？！）」』》〉】〕〗〙〛”’,.;:?!)]}…")
OPENING = set("（「『《〈【〔〖〘〚“‘([{")
UNITS = set("万亿千百元年月日号个%％")
DECIMAL_MARKS = set(".．,")


def _is_digit(character: str) -> bool:
    return (character.isdigit() and character.isascii()) or "０" <= character <= "９"


def _units_after_number(text: str, end: int) -> bool:
    """Whether ``text[:end]`` ends with a digit followed by one or more units ("2019年")."""
    start = end
    while start > 0 and text[start - 1] in UNITS:
        start -= 1
    return start < end and start > 0 and _is_digit(text[start - 1])


def _glued(text: str, cut: int) -> bool:
    """Whether ``text`` must not be cut at ``cut``: inside a number, a number and its unit, a word."""
    before, after = text[cut - 1], text[cut]
    earlier = text[cut - 2] if cut >= 2 else ""
    if _is_digit(before) and (_is_digit(after) or after in UNITS):
        return True  # "1|77", "0.06|万", "1|日", "5|%"
    if before in DECIMAL_MARKS and _is_digit(earlier) and _is_digit(after):
        return True  # "1.|77"
    if _is_digit(before) and after in DECIMAL_MARKS and _is_digit(text[cut + 1 : cut + 2]):
        return True  # "1|.77"
    if _units_after_number(text, cut) and (_is_digit(after) or after in UNITS):
        return True  # "2019年|6月", "0.06万|元"
    # inside a word: Latin letters and digits ("GDP", "B2B", a file name's hex digits)
    return before.isascii() and before.isalnum() and after.isascii() and after.isalnum()


def _run_around(text: str, cut: int) -> str:
    """The stretch of glued characters that contains ``cut``."""
    start = cut - 1
    while start > 0 and _glued(text, start):
        start -= 1
    end = cut + 1
    while end < len(text) and _glued(text, end):
        end += 1
    return text[start:end]


def _token_around(text: str, cut: int) -> str:
    """The stretch of non-space Latin characters (a URL, a file name) that contains ``cut``."""
    start = cut
    while start > 0 and text[start - 1].isascii() and not text[start - 1].isspace():
        start -= 1
    end = cut
    while end < len(text) and text[end].isascii() and not text[end].isspace():
        end += 1
    return text[start:end]


class CellWidths:
    """Widths of a paragraph's stretches in cells, as ``rich.cells.cell_len`` gives them:
    summed per character where that is what it does (no zero-width joiner or emoji
    variation selector in the paragraph), from running totals made once."""

    def __init__(self, paragraph: str) -> None:
        self.paragraph = paragraph
        self.totals: list[int] | None = None
        if "\u200d" not in paragraph and "\ufe0f" not in paragraph:
            totals = [0]
            for character in paragraph:
                totals.append(totals[-1] + cell_len(character))
            self.totals = totals

    def of(self, start: int, end: int) -> int:
        """The width of ``paragraph[start:end]``."""
        if self.totals is None:
            return cell_len(self.paragraph[start:end])
        return self.totals[end] - self.totals[start]


def line_problems(
    paragraph: str, lines: list[str], width: int, cells: CellWidths | None = None
) -> list[str]:
    """Every objection to ``lines`` as the wrapping of ``paragraph`` at ``width`` cells
    (``cells``: the paragraph's, when it is checked at many widths)."""
    problems: list[str] = []
    if "".join(lines) != paragraph:
        problems.append("the lines do not join back into the paragraph")
        return problems
    cells = cells or CellWidths(paragraph)
    cut = 0
    starts_forced = False
    for number, line in enumerate(lines):
        shown = line.rstrip()
        shown_width = cells.of(cut, cut + len(shown))
        if shown_width > width:
            problems.append(f"line {number} is {shown_width} cells wide: {line!r}")
        ends_opening = number + 1 < len(lines) and shown[-1:] in OPENING
        next_closing = number + 1 < len(lines) and lines[number + 1].lstrip()[:1] in CLOSING
        # a Latin token wider than the line must be cut somewhere, "." or "(" or not
        # (measured only where a punctuation rule asks: most cuts have none around them)
        forced = (ends_opening or next_closing) and cell_len(
            _token_around(paragraph, cut + len(line))
        ) > width
        if number and line.lstrip()[:1] in CLOSING and not starts_forced:
            problems.append(f"line {number} starts with closing punctuation: {line!r}")
        if ends_opening and not forced:
            problems.append(f"line {number} ends with opening punctuation: {line!r}")
        starts_forced = forced
        if number and _glued(paragraph, cut):
            run = _run_around(paragraph, cut)
            if cell_len(run) <= width:
                problems.append(f"cut inside {run!r} between lines {number - 1} and {number}")
        cut += len(line)
    return problems
