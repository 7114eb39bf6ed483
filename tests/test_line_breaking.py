"""Chinese and mixed text wraps where a typesetter would: never inside "1.77万元",
never a line starting with "，" or ending with "（", nothing lost or reordered.

The cases the issue saw at 80 columns are rebuilt so that the stock wrapping
(``rich._wrap.divide_line``, which Textual uses) provably cuts them, then wrapped
with ours at 80 and at every width from 30 to 100; the whole real CFLUE file too.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from line_checks import CellWidths, line_problems
from rich._wrap import divide_line
from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text
from textual.app import App, ComposeResult
from textual.content import Content
from textual.geometry import Region
from textual.widgets import Static

from reviewer.display_text import display_text
from reviewer.line_breaking import break_units, wrap_line, wrap_offsets
from reviewer.tui.line_broken_text import LineBrokenContent, LineBrokenText, line_broken
from reviewer.tui.literal import literal, literal_item

WIDTHS = range(30, 101)
FILLER = "根据财政部和国家税务总局发布的有关规定一般纳税人销售货物应当按照适用税率计算缴纳增值税并且开具发票"


def stock_lines(text: str, width: int) -> list[str]:
    cuts = [0, *divide_line(text, width, fold=True), len(text)]
    return [text[start:end] for start, end in zip(cuts, cuts[1:], strict=False)]


def ours(text: str, width: int) -> list[str]:
    return wrap_line(text, width, cell_len=cell_len)


def placed(before: str, cells: int, after: str) -> str:
    """``before`` padded with Chinese filler so that ``after`` starts at cell ``cells``."""
    needed = cells - cell_len(before)
    filler = FILLER * 3
    padding = ""
    while cell_len(padding) + 2 <= needed:
        padding += filler[len(padding)]
    if cell_len(padding) < needed:
        padding = "A" + padding  # one narrow cell to land exactly
    return before + padding + after


# (what the issue saw, text where the stock wrapper at 80 columns makes that cut)
ISSUE_CASES = {
    "增值税税额0 / .06万元": placed("", 79, "0.06万元，应当计入当期损益。"),
    "税额为1. / 77万元": placed("", 78, "1.77万元，其中进项税额可以抵扣。"),
    "2019年6月1 / 日": placed("", 71, "2019年6月1日起执行新的税率。"),
    "a line starting with ，": placed("", 80, "，如果某一行业的增值税税负过高，应当调整。"),
    "。 alone on a line": placed("", 80, "。"),
    "5 / %": placed("", 79, "5%的税率适用于小规模纳税人。"),
    "Latin word cut": placed("", 78, "GDP增长率为6.5%。"),
}


@pytest.mark.parametrize("case", sorted(ISSUE_CASES))
def test_the_issue_cases_are_real_for_the_stock_wrapper(case: str) -> None:
    text = ISSUE_CASES[case]
    assert line_problems(text, stock_lines(text, 80), 80) != []


@pytest.mark.parametrize("case", sorted(ISSUE_CASES))
def test_the_issue_cases_wrap_cleanly_at_80_and_at_every_width_from_30_to_100(case: str) -> None:
    text = ISSUE_CASES[case]
    for width in [80, *WIDTHS]:
        assert line_problems(text, ours(text, width), width) == [], (case, width)


REALISTIC = [
    # mixed Chinese, numbers with units, dates, percentages, Latin words, brackets
    "甲公司为增值税一般纳税人，2019年6月1日购入一台不需要安装的生产设备，取得的增值税专用发票上注明的价款为"
    "100万元，增值税税额为13万元，另支付运输费1.09万元（其中增值税税额为0.09万元）。假定不考虑其他因素，"
    "该设备的入账价值为（　）万元。",
    "根据《中华人民共和国证券法》的规定，上市公司在报告期内的GDP增长率为6.5%，CPI上涨2.1%，"
    "M2余额同比增长8.7%，“稳健的货币政策”要保持流动性合理充裕；下列说法中，正确的有（  ）。",
    "某企业2020年度实现利润总额3000万元，其中国债利息收入50万元，税收滞纳金10万元，适用的企业所得税税率为25%，"
    "则该企业2020年度应缴纳的企业所得税为（&nbsp; ）万元？B-F法和Chain-Ladder法得出的准备金相差1～3个百分点。",
    "Inflation rose to 5.4% in June 2019, and the central bank raised its policy rate by 25 basis "
    "points (to 3.75%) while the government's 10-year bond yield (“the benchmark”) fell.",
]


@pytest.mark.parametrize("text", REALISTIC, ids=["zh-accounting", "zh-macro", "zh-tax", "en"])
def test_realistic_text_wraps_cleanly_at_every_width(text: str) -> None:
    for width in WIDTHS:
        lines = ours(text, width)
        assert line_problems(text, lines, width) == [], width


def test_numbers_stay_with_their_units() -> None:
    units = break_units("增值税税额0.06万元，自2019年6月1日起第2季度税率为5%，期限3个月，涨1～3年")
    assert "0.06万元，" in units
    assert "2019年6月1日" in units
    assert "第2季度" in units
    assert "5%，" in units
    assert "3个月，" in units
    assert "1～3年" in units


def test_a_fill_in_blank_stays_inside_its_brackets() -> None:
    text = "下列各项中，属于会计主体和客体的有（\xa0 \xa0）。"
    for width in range(12, 40):
        assert line_problems(text, ours(text, width), width) == [], width


def test_a_piece_wider_than_the_line_is_folded_at_the_least_bad_places() -> None:
    """A URL longer than the line breaks before a dot or after a slash, never before "）"."""
    url = '<imgsrc="https:myktcdn.miyaedu.com/upload/abcdefghijklmnopqrstuvwxyz0123.png">）'
    for width in range(10, 30):
        lines = ours(url, width)
        assert line_problems(url, lines, width) == [], width
        assert not any(line.startswith("）") for line in lines)
    assert ours(url, 10)[-1] == '.png">）'
    formula = "=4.7/98.17×1+93.45/98.17×2=1.95年。"
    assert ours(formula, 30) == ["=4.7/98.17×1+93.45/98.17×2=", "1.95年。"]


def test_emoji_and_rare_han_outside_the_basic_plane_keep_their_offsets() -> None:
    text = "𠀀𠀀𠀀 收益率为5% 😀😀 then 1.77万元"
    for width in range(4, 30):
        lines = ours(text, width)
        assert "".join(lines) == text
        assert all(cell_len(line.rstrip()) <= width for line in lines), width


def test_without_fold_a_long_piece_is_left_for_the_caller_to_crop() -> None:
    assert wrap_offsets("abcdefghij klm", 4, fold=False, cell_len=cell_len) == [11]


@pytest.mark.slow
def test_every_real_cflue_text_wraps_cleanly_at_every_width(cflue_knowledge: Path) -> None:
    """Question, choices and explanation of all 3,864 items, display form, widths 30..100."""
    from db.formats import read_records

    drafts = [record.draft for record in read_records(cflue_knowledge, "cflue") if record.draft]
    assert len(drafts) == 3864
    problems: list[str] = []
    for draft in drafts:
        for field in [draft.prompt, *draft.choices.values(), draft.explanation or ""]:
            for paragraph in display_text(field).split("\n"):
                cells = CellWidths(paragraph)
                shown = cells.of(0, len(paragraph.rstrip()))
                for width in WIDTHS:
                    lines = ours(paragraph, width)
                    if shown <= width:  # most choices: one line, exactly the paragraph
                        if lines != [paragraph]:
                            problems.append(f"{draft.source_ref} at {width}: broken: {lines!r}")
                        continue
                    found = line_problems(paragraph, lines, width, cells)
                    problems += [f"{draft.source_ref} at {width}: {p}" for p in found]
    assert problems == []


# The Textual and rich adapters


@pytest.mark.parametrize("width", [20, 37, 80])
@pytest.mark.parametrize("align", ["left", "center", "right", "justify"])
@pytest.mark.parametrize("line_pad", [0, 1])
def test_english_renders_as_textual_renders_it(width: int, align: str, line_pad: int) -> None:
    """The port of Content._wrap_and_format changes only where lines break."""
    text = (
        "The central bank raises interest rates, and mortgage costs rise for new buyers;\n"
        "home sales   slow down.\tInflation climbs above target."
    )
    stock = Content(text).stylize("bold", 4, 11)
    broken = LineBrokenContent(text).stylize("bold", 4, 11)
    broken = LineBrokenContent(broken.plain, list(broken.spans))
    for overflow in ("fold", "ellipsis"):
        expected = stock._wrap_and_format(width, align, overflow, line_pad=line_pad)
        actual = broken._wrap_and_format(width, align, overflow, line_pad=line_pad)
        assert [(line.content.markup, line.x, line.y) for line in actual] == [
            (line.content.markup, line.x, line.y) for line in expected
        ]


def test_rich_wrap_in_a_table_cell_keeps_numbers_whole() -> None:
    """The reveal's key in words is a rich Table of literal() cells."""
    table = Table.grid(padding=(0, 1))
    table.add_column(no_wrap=True)
    table.add_column(ratio=1)
    text = ISSUE_CASES["税额为1. / 77万元"]
    table.add_row(Text("1. A", style="bold"), literal(text))
    console = Console(width=85, record=True, color_system=None)
    console.print(table)
    lines = [line[5:] for line in console.export_text().splitlines()]
    assert "".join(line.rstrip() for line in lines) == text
    assert any(line.startswith("1.77万元") for line in lines)


def test_literal_and_literal_item_are_line_broken_and_keep_styles() -> None:
    text = literal("税额为1.77万元", "bold")
    assert isinstance(text, LineBrokenText)
    assert text == Text("税额为1.77万元", style="bold")
    assert literal_item("&amp;lt;img&amp;gt; 1&amp;nbsp;万元").plain == "<img> 1\xa0万元"
    assert literal_item("&amp;lt;img&amp;gt;", raw=True).plain == "&amp;lt;img&amp;gt;"
    composite = Text("Key ")
    composite.append("税额", style="red")
    broken = line_broken(composite)
    assert isinstance(broken, LineBrokenText)
    assert broken.plain == "Key 税额"
    assert broken.spans == composite.spans


class OneItem(App[None]):
    """A Static holding a Chinese item at the width a split pane leaves."""

    CSS = "Static { width: 1fr; padding: 0 1; }"

    def __init__(self, text: Text) -> None:
        super().__init__()
        self.text = text

    def compose(self) -> ComposeResult:
        yield Static(self.text, id="item")


def rendered_lines(static: Static) -> list[str]:
    region = Region(0, 0, static.size.width, static.size.height)
    return [strip.text for strip in static.render_lines(region)]


async def test_a_chinese_item_in_a_widget_at_80_by_24_wraps_by_our_rules() -> None:
    # the Static is 78 cells wide inside its padding: the stock wrapper cuts after "0"
    text = placed("", 77, "0.06万元，应当计入当期损益。") + ISSUE_CASES["2019年6月1 / 日"]
    assert line_problems(text, stock_lines(text, 78), 78) != []
    app = OneItem(literal_item(text))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        static = app.query_one("#item", Static)
        width = static.content_region.width
        assert width == 78
        lines = [line[1:].rstrip() for line in rendered_lines(static)]  # one cell of padding
        lines = [line for line in lines if line]
        assert static.size.height == len(lines) + 0
        assert "".join(lines) == text
        assert line_problems(text, ours(text, width), width) == []
        assert lines == [line.rstrip() for line in ours(text, width)]
        assert any(line.startswith("0.06万元") for line in lines)


async def test_the_review_app_wraps_a_chinese_item_at_80_by_24(db_path: Path) -> None:
    from helpers import settle, store_item

    from db.engine import open_database
    from reviewer.tui.app import make_app

    prompt = REALISTIC[0]
    db = open_database(db_path)
    store_item(
        db,
        "cflue:9",
        kind="single",
        prompt=prompt,
        choices={"A": "100", "B": "101.09", "C": "113", "D": "114.09"},
        key="A",
        source="cflue",
        language="zh",
    )
    app = make_app(db, "alice")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        static = app.screen.query_one("#item-prompt", Static)
        width = static.content_region.width
        assert 10 < width < cell_len(prompt)  # the prompt really wraps
        lines = [line.rstrip() for line in rendered_lines(static)]
        shown = [line.strip() for line in lines if line.strip()]
        expected = [line.strip() for line in ours(prompt, width) if line.strip()]
        assert shown == expected
        assert line_problems(prompt, ours(prompt, width), width) == []
    db.dispose()


def test_the_checkers_running_widths_are_rich_cell_lengths() -> None:
    for paragraph in (
        "The central bank raises rates.",
        "收益率为5%，即1.77万元（2019年）",
        "𠀀𠀀 😀 then ｆｕｌｌ width\tand\x00control",
        "family 👨\u200d👩\u200d👧 and ❤\ufe0f joined",
    ):
        cells = CellWidths(paragraph)
        for start in range(len(paragraph) + 1):
            for end in range(start, len(paragraph) + 1):
                assert cells.of(start, end) == cell_len(paragraph[start:end]), (start, end)
