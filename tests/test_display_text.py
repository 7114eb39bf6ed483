"""The display form of item text: entities decoded, LaTeX as Unicode, everything else as stored.

The LaTeX examples are real CFLUE items (record numbers as the import names them),
checked by eye: an accounting entry reads as one, a formula as a formula.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest

from reviewer.display_text import (
    decode_entities,
    display_text,
    has_display_form,
    latex_spans,
    latex_to_unicode,
)

REAL_LATEX = {
    # record 282, explanation: an entry in \begin{align}, "&amp;amp;" as its alignment mark
    "出租无形资产分录如下：\\begin{align}&amp;amp;借：银行存款\\quad\\\\&amp;amp;\\quad贷：其他业务收入"
    "\\quad\\\\\\end{align}无形资产账面价值不会变化。": (
        "出租无形资产分录如下：\n借：银行存款\n     贷：其他业务收入\n无形资产账面价值不会变化。"
    ),
    # record 551, choice C: the whole choice is the entry
    "\\begin{align}&借：应付票据\\quad200000\\\\&\\quad贷：应付账款\\quad200000\\\\\\end{align}": (
        "借：应付票据  200000\n     贷：应付账款  200000"
    ),
    # record 2121, explanation: thin spaces and quads as the indentation of an entry
    "A公司会计处理如下：\\begin{align}&\\,\\,借：银行存款\\quad106\\\\&\\quad\\quad累计摊销\\quad40"
    "\\\\&\\,\\,\\quad贷：无形资产\\quad120\\\\&\\quad\\quad\\quad应交税费—应交增值税（销项税额）"
    "\\quad6\\\\&\\quad\\quad\\quad资产处置损益\\quad20\\\\\\end{align}": (
        "A公司会计处理如下：\n借：银行存款  106\n       累计摊销  40\n       贷：无形资产  120\n"
        "         应交税费—应交增值税（销项税额）  6\n         资产处置损益  20"
    ),
    # record 1053, question: inline formulas with subscripts and a leading superscript
    "已知条件(1)$i=0.02$；(2)$p_{50}=0.98$；(3)$A_{51}-A_{50}=0.004$；(4)$^2A_{51}-^2A_{50}=0.005$，"
    "计算当$x＝51$时，$Var(Z)$等于____。": (
        "已知条件(1)i=0.02；(2)p₅₀=0.98；(3)A₅₁-A₅₀=0.004；(4)²A₅₁-²A₅₀=0.005，"
        "计算当x＝51时，Var(Z)等于____。"
    ),
    # record 3095, question: a subscript with no Unicode form keeps its grouping
    "给定下面的逐年进展因子：$f_{0-1}=1.41$, $f_{3-4}=1.08$, $f_{4,\\infty}=1.04$，"
    "已知在评估日2010年12月31日": (
        "给定下面的逐年进展因子：f₀₋₁=1.41, f₃₋₄=1.08, f_(4,∞)=1.04，已知在评估日2010年12月31日"
    ),
}


@pytest.mark.parametrize("raw", sorted(REAL_LATEX))
def test_real_latex_reads_as_unicode(raw: str) -> None:
    assert display_text(raw) == REAL_LATEX[raw]
    assert display_text(raw, raw=True) == raw
    assert has_display_form(raw)


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        (r"$\frac{a+b}{2}\times 3$", "(a+b)/2× 3"),
        (r"净现值=\sum_{t=1}^{n}\frac{CF_t}{(1+r)^t}", "净现值=∑ₜ₌₁ⁿCFₜ/((1+r)ᵗ)"),
        (r"收益率为\dfrac{1}{1+r}，再乘以\sqrt{2}", "收益率为1/(1+r)，再乘以√(2)"),
        (r"\begin{aligned}a&=b+c\\d&=e\end{aligned}", "a   =b+c\nd   =e"),
        (r"边际成本 \(MC = \frac{dC}{dq}\) 递增", "边际成本 MC = dC/dq 递增"),
        (r"$$\alpha \le \beta$$", "α≤β"),
        (r"利率\times本金", "利率×本金"),
    ],
)
def test_formulas_become_readable_unicode(raw: str, shown: str) -> None:
    assert display_text(raw) == shown


@pytest.mark.parametrize(
    "ordinary",
    [
        "公司\\机构存款通常不够稳定",  # record 1834: a stray backslash is text
        "C:\\Users\\data\\report.csv",
        "Prices rose from $5 to $7 per unit.",
        "a range of $5-$7, then $10.",
        "R&D spending at AT&T rose; S&P 500 fell & bonds held",
        "the &para sign and a&lt without semicolons, &notanentity; and &#xZZ;",
        "\\textit is not math, \\newline neither",
    ],
)
def test_ordinary_text_is_left_as_stored(ordinary: str) -> None:
    assert display_text(ordinary) == ordinary
    assert not has_display_form(ordinary)


def test_entities_are_decoded_even_when_escaped_twice() -> None:
    assert decode_entities("&lt;&gt;&quot;") == '<>"'
    assert decode_entities("总额&amp;nbsp;1000元") == "总额\xa01000元"
    assert decode_entities("A&amp;amp;B") == "A&B"
    assert decode_entities("&#20320;&#x597D;") == "你好"


def test_tags_are_shown_as_characters_never_interpreted() -> None:
    stored = "如下图所示：&lt;imgsrc=&quot;https:myktcdn.miyaedu.com/a.png&quot;style=&quot;max-width:100%;&quot;&gt;"
    assert display_text(stored) == (
        '如下图所示：<imgsrc="https:myktcdn.miyaedu.com/a.png"style="max-width:100%;">'
    )
    from reviewer.tui.literal import literal_item

    shown = literal_item("&lt;b&gt;[bold]粗体[/bold]&lt;/b&gt; &amp;#27;[2J")
    assert shown.plain == "<b>[bold]粗体[/bold]</b> ␛[2J"
    assert shown.spans == []


def test_latex_spans_are_found_only_where_latex_is() -> None:
    text = "设$x_1$为产量，公司\\机构的\\frac{1}{2}，价格$5 and $7"
    assert [text[start:end] for start, end in latex_spans(text)] == ["$x_1$", "\\frac{1}{2}"]
    assert latex_to_unicode(text) == "设x₁为产量，公司\\机构的1/2，价格$5 and $7"


def test_empty_and_raw() -> None:
    assert display_text("") == ""
    assert display_text("&lt;", raw=True) == "&lt;"
    assert not has_display_form("")


def _content(text: str) -> list[str]:
    """Chinese characters and digits in order, sub- and superscripts read as plain digits."""
    return re.findall(r"[\u4e00-\u9fff0-9]", unicodedata.normalize("NFKC", text))


@pytest.mark.slow
def test_every_real_cflue_item_has_a_display_form_that_loses_nothing(
    cflue_knowledge: Path,
) -> None:
    from db.formats import read_records

    drafts = [record.draft for record in read_records(cflue_knowledge, "cflue") if record.draft]
    assert len(drafts) == 3864
    entity_items, latex_items = set(), set()
    for draft in drafts:
        for field in [draft.prompt, *draft.choices.values(), draft.explanation or ""]:
            shown = display_text(field)
            assert display_text(field, raw=True) == field
            if re.search(r"&(amp|lt|gt|quot|nbsp|#\d+);", field):
                entity_items.add(draft.source_ref)
                assert not re.search(r"&(amp|lt|gt|quot|nbsp|#\d+);", shown), draft.source_ref
            decoded = decode_entities(field)
            if latex_spans(decoded):
                latex_items.add(draft.source_ref)
                assert _content(shown) == _content(decoded), draft.source_ref
                assert not re.search(r"\\(begin|end|quad|infty)|\$", shown), draft.source_ref
            else:
                assert shown == decoded, draft.source_ref
    # 18 items carry LaTeX commands and one (record 1053) only $...$ formulas
    assert len(latex_items) == 19
    assert {"record 282", "record 551", "record 1053", "record 2121", "record 3095"} <= latex_items
    assert "record 1834" not in latex_items  # "公司\机构" is text
    assert (
        len(entity_items) == 90
    )  # 90 items carry entities, 413 "&quot;" and 268 "&amp;nbsp;" among them
