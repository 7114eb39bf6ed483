"""Where a line of item text may break: the Unicode rules (UAX #14), tailored for numbers.

Terminal widgets wrap at spaces and cut Chinese anywhere, which splits "1.77万元"
after "1." and starts lines with "，".  Here the break opportunities come from ICU's
line-break iterator (``icu4py``: the Unicode Line Breaking Algorithm, UAX #14, as
browsers use it), which already keeps Latin words and numbers such as "1.77" and
"5%" whole, never starts a line with closing punctuation (，。）」) and never ends
one with opening punctuation (（「《).  One tailoring is added: a number stays with
its unit and with the numbers and units chained to it ("0.06万元", "2019年6月1日",
"3个月", "第2季度", "1～3年"), as a Chinese typesetter would keep them.

:func:`wrap_offsets` then fills lines greedily at those opportunities, measured in
terminal cells, and returns the offsets at which to cut, as ``rich``'s
``divide_line`` does; a piece wider than a whole line is folded by grapheme.
Standard library and icu4py only: the TUI adapter lives in
``reviewer/tui/line_broken_text.py``.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from icu4py.breakers import CharacterBreaker, LineBreaker

from db.visible_text import east_asian_cell_len

CellLength = Callable[[str], int]

# Units a number keeps on its line.  Multi-character ones first, so "美元" wins over "元".
_MULTI_CHARACTER_UNITS = (
    "个百分点",
    "百分点",
    "个基点",
    "基点",
    "个月",
    "季度",
    "小时",
    "分钟",
    "美元",
    "港元",
    "港币",
    "欧元",
    "日元",
    "英镑",
    "人民币",
    "公里",
    "千米",
    "厘米",
    "毫米",
    "公斤",
    "千克",
    "平方米",
    "立方米",
    "公顷",
)
_SINGLE_CHARACTER_UNITS = (
    "十百千万亿兆"  # magnitudes: 1.77万元, 3亿
    "元角分块"  # money
    "年月日号时点秒天周旬岁"  # dates and durations: 2019年6月1日, 3天
    "个只件次人名位家户股份倍张条项笔种类层期届批手辆台套"  # counts
    "米吨克升亩度成折"  # measures and ratios
    "%％‰"
)
_DIGITS = "0-9０-９"
_NUMBER = rf"[{_DIGITS}]+(?:[.,．:：][{_DIGITS}]+)*"
_UNIT = (
    "(?:"
    + "|".join(re.escape(unit) for unit in _MULTI_CHARACTER_UNITS)
    + f"|[{re.escape(_SINGLE_CHARACTER_UNITS)}])"
)
_RANGE_MARKS = "~～-–"
_RANGE = f"[{re.escape(_RANGE_MARKS)}]"
NUMBER_WITH_UNIT = re.compile(rf"第?{_NUMBER}{_UNIT}*(?:{_RANGE}?{_NUMBER}{_UNIT}*)*")
"""A number with its units and the numbers chained to it: kept on one line."""

_CLOSING_OTHER_PUNCTUATION = frozenset("，。、；：？！,.;:?!…‥")


def _opens(character: str) -> bool:
    """Opening punctuation: （「《 and opening quotes; no line ends with it."""
    return unicodedata.category(character) in ("Ps", "Pi")


def _closes(character: str) -> bool:
    """Closing punctuation: ，。、；：？！）」》 and closing quotes; no line starts with it."""
    return (
        unicodedata.category(character) in ("Pe", "Pf") or character in _CLOSING_OTHER_PUNCTUATION
    )


@lru_cache(maxsize=4096)
def break_opportunities(line: str) -> tuple[int, ...]:
    """Offsets inside ``line`` (0 < offset < len) before which a line may break."""
    offsets: list[int] = []
    position = 0
    # Iterate the pieces, not .segments(): icu4py 1.2 reports segment offsets in
    # UTF-16 code units, which differ from str indices past U+FFFF (emoji, rare Han).
    for piece in LineBreaker(line, "zh"):
        position += len(piece)
        if position < len(line):
            offsets.append(position)
    inside_numbers = _inside_numbers(line)
    return tuple(
        offset
        for offset in offsets
        if offset not in inside_numbers and not _punctuation_across_spaces(line, offset)
    )


def _punctuation_across_spaces(line: str, offset: int) -> bool:
    """Opening punctuation before ``offset`` or closing after it, with only spaces between.

    UAX #14 glues "（ " and " ）" across ordinary spaces only; the blanks of a
    fill-in question ("（&nbsp; ）", "（　）") mix no-break and ideographic spaces.
    """
    before = offset - 1
    while before >= 0 and line[before].isspace():
        before -= 1
    after = offset
    while after < len(line) and line[after].isspace():
        after += 1
    if before == offset - 1 and after == offset:
        return False  # no spaces around: UAX #14 has decided
    return (before >= 0 and _opens(line[before])) or (after < len(line) and _closes(line[after]))


def break_units(line: str) -> list[str]:
    """``line`` cut at every break opportunity (joined, they give ``line`` back)."""
    cuts = [0, *break_opportunities(line), len(line)]
    return [line[start:end] for start, end in zip(cuts, cuts[1:], strict=False)]


def _fold(piece: str, width: int, cell_len: CellLength) -> list[int]:
    """Offsets that cut ``piece`` (wider than ``width``) into lines of at most ``width`` cells.

    Cuts fall between grapheme clusters.  On each line the last place that splits
    no number, unit or word and orphans no punctuation is taken (in "…=98.17×2=1.95年"
    before an operator, not inside "1.95"); failing that, the least bad one
    (see :func:`_fold_quality`).
    """
    numbers = _inside_numbers(piece)
    cuts: list[int] = []
    position = line_start = used = 0
    starts: list[int] = []  # where each cluster of the current line starts
    for cluster in CharacterBreaker(piece, "zh"):
        size = cell_len(cluster)
        if used + size > width and position > line_start:
            candidates = [position, *reversed(starts[1:])]
            # the latest of the best: min keeps the first of equals
            cut = min(candidates, key=lambda offset: _fold_quality(piece, offset, numbers))
            cuts.append(cut)
            line_start = cut
            used = cell_len(piece[cut:position])
            starts = [start for start in starts if start >= cut]
        starts.append(position)
        used += size
        position += len(cluster)
    return cuts


def _inside_numbers(text: str) -> frozenset[int]:
    """Offsets inside a number with its units (no break there)."""
    return frozenset(
        offset
        for match in NUMBER_WITH_UNIT.finditer(text)
        for offset in range(match.start() + 1, match.end())
    )


def _inside_word(text: str, offset: int, numbers: frozenset[int]) -> bool:
    """Whether a forced cut at ``offset`` would split a word, a number or a number's unit.

    A range's dash is a fair place for it ("86400-|600000").
    """
    before, after = text[offset - 1], text[offset]
    if offset in numbers and before not in _RANGE_MARKS and after not in _RANGE_MARKS:
        return True
    return before.isascii() and before.isalnum() and after.isascii() and after.isalnum()


def _fold_quality(text: str, offset: int, numbers: frozenset[int]) -> int:
    """How bad a forced cut at ``offset`` is, from 0 (clean) to 3.

    1: it splits a word or a number, or leaves Latin punctuation at a line's edge
    (URLs are broken before a dot); 2: both; 3: Chinese punctuation at a line's edge.
    """
    bad_punctuation = _bad_cut(text, offset)
    splits = _inside_word(text, offset, numbers)
    if bad_punctuation and not text[offset - 1 : offset + 1].isascii():
        return 3
    return int(bad_punctuation) + int(splits)


def _bad_cut(text: str, offset: int) -> bool:
    return (
        _closes(text[offset])
        or _opens(text[offset - 1])
        or _punctuation_across_spaces(text, offset)
    )


@dataclass(frozen=True)
class _Units:
    """A line's break units measured once: where each starts, and its cells."""

    starts: tuple[int, ...]
    cells_before: tuple[int, ...]
    visible_ends: tuple[int, ...]
    """Cell where each unit's last non-space ends: never decreases along the line."""


@lru_cache(maxsize=4096)
def _measure(line: str, cell_len: CellLength) -> _Units:
    starts: list[int] = []
    cells_before: list[int] = []
    visible_ends: list[int] = []
    position = cells = 0
    for unit in break_units(line):
        starts.append(position)
        cells_before.append(cells)
        visible_ends.append(cells + cell_len(unit.rstrip()))
        position += len(unit)
        cells += cell_len(unit)
    return _Units(tuple(starts), tuple(cells_before), tuple(visible_ends))


def wrap_offsets(
    line: str,
    width: int,
    *,
    fold: bool = True,
    cell_len: CellLength = east_asian_cell_len,
) -> list[int]:
    """Offsets at which to cut ``line`` (no newlines) so each piece fits ``width`` cells.

    Same contract as ``rich._wrap.divide_line``: a piece keeps its trailing spaces
    (the caller strips them; they may hang past the edge).  With ``fold`` off, a
    piece wider than the line stays whole for the caller to crop.
    """
    width = max(width, 1)
    units = _measure(line, cell_len)
    count = len(units.starts)
    offsets: list[int] = []
    line_start = 0  # the cell where the current line begins
    index = 0
    while index < count:
        fits = bisect_right(units.visible_ends, line_start + width, index)
        if fits > index:  # units index..fits-1 fill this line
            index = fits
            if index < count:
                offsets.append(units.starts[index])
                line_start = units.cells_before[index]
            continue
        if units.cells_before[index] != line_start:  # after a folded piece: new line
            offsets.append(units.starts[index])
            line_start = units.cells_before[index]
            continue
        # one unit wider than a whole line
        if fold:
            begin = units.starts[index]
            end = units.starts[index + 1] if index + 1 < count else len(line)
            unit = line[begin:end]
            cuts = _fold(unit.rstrip(), width, cell_len)  # trailing spaces hang
            offsets.extend(begin + cut for cut in cuts)
            if cuts:
                line_start = units.cells_before[index] + cell_len(unit[: cuts[-1]])
        index += 1
    return offsets


def wrap_line(
    line: str, width: int, *, fold: bool = True, cell_len: CellLength = east_asian_cell_len
) -> list[str]:
    """``line`` cut into pieces that fit ``width`` (each keeps its trailing spaces)."""
    cuts = [0, *wrap_offsets(line, width, fold=fold, cell_len=cell_len), len(line)]
    return [line[begin:end] for begin, end in zip(cuts, cuts[1:], strict=False)]


def minimal_width(line: str, cell_len: CellLength = east_asian_cell_len) -> int:
    """The widest piece that cannot be broken (the narrowest width that folds nothing)."""
    return max((cell_len(unit.rstrip()) for unit in break_units(line)), default=0)
