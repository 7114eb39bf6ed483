"""The text rules behind the automatic flags, each in English and in Chinese, on items
written like the real ones (CFLUE's exam questions, EconLogicQA's orderings), with the
look-alikes that must not raise them (以下表述 is not a table, R&D is not an entity,
"选项D的说法正确" about one option of a multi-answer item is not the conclusion)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from db.flag_rules import (
    FlagFinding,
    RevisionText,
    html_markup,
    key_mismatch,
    needs_media,
    order_leak,
    same_choices,
    text_findings,
)
from db.vocabulary import FlagName

EVENTS = {
    "A": "The central bank raises its policy rate by 50 basis points.",
    "B": "Commercial banks raise the rates they charge on mortgages.",
    "C": "Inflation climbs well above the 2% target.",
    "D": "Borrowing for home purchases slows.",
}
EVENTS_ZH = {
    "A": "央行上调政策利率50个基点。",
    "B": "商业银行提高房贷利率。",
    "C": "通胀率远超2%的目标。",
    "D": "购房贷款增速放缓。",
}


def mcq(
    prompt: str, key: str = "A", explanation: str | None = None, **choices: str
) -> RevisionText:
    options = choices or {"A": "公开市场操作", "B": "再贴现", "C": "存款准备金", "D": "窗口指导"}
    kind = "multi" if len(key) > 1 else "single"
    return RevisionText(kind, prompt, options, key, explanation)


# --- needs-media ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("prompt", "found"),
    [
        ("两只基金在两种状态下的预期收益率如下表所示。基金A的期望收益率为（）。", "如下表"),
        ("甲、乙、丙、丁四家公司2015年部分财务数据如下图，则资产使用效率最高的是（）。", "如下图"),
        ("某企业4种方案在不同市场状态下的损益值见下表，应选择的方案是（）。", "见下表"),
        ("相关证券的风险与收益信息如表所示。表中（1）和（4）的值为（）。", "如表"),
        ("下图是动力煤期货日线价格走势图，该图形属于（）。", "下图"),
        ("根据表中数据，该公司2019年的流动比率为（）。", "表中"),
        ("（图）某基金经理持有1亿元面值的债券A，比较两种方法，发现（）。", "（图）"),
        (
            "Based on the following table, which fund has the highest Sharpe ratio?",
            "following table",
        ),
        (
            "Using the data in Exhibit 2, the analyst's estimate of the firm's ROE is closest to:",
            "Exhibit 2",
        ),
        (
            "As shown in the figure below, the demand curve shifts because of:",
            "shown in the figure",
        ),
        (
            "Refer to the attached file for the company's balance sheet. Its current ratio is:",
            "attached",
        ),
    ],
)
def test_references_to_media_the_text_lacks_are_flagged(prompt: str, found: str) -> None:
    finding = needs_media(mcq(prompt))
    assert finding is not None and finding.name is FlagName.NEEDS_MEDIA
    references = finding.evidence["references"]
    assert isinstance(references, list)
    assert any(found.lower() in str(ref["found"]).lower() for ref in references)  # type: ignore[index]
    assert "does not contain" in finding.summary


def test_an_image_tag_is_flagged_even_escaped_twice() -> None:
    prompt = (
        "某机械设备股份有限公司2019年主要财务数据。&lt;img&amp;nbsp;src=&quot;https://"
        "zktcdn.cqmapp.com/zkt_icon/2df13382.png&quot;&gt;该公司的流动比率为（）。"
    )
    finding = needs_media(mcq(prompt))
    assert finding is not None
    assert finding.summary == "the question holds an <img> tag: the image is not in the text"
    glued = needs_media(mcq('数据如图<imgsrc="https:x.png"style="max-width:100%;">，则（）。'))
    assert glued is not None and "<img> tag" in glued.summary


def test_the_references_a_summary_leaves_out_are_said_what() -> None:
    """It ended "(and 2 more)" without saying 2 more what."""
    images = mcq("<img src=a.png>则（）。", A="<img src=b.png>", B="<img src=c.png>", C="丙")
    assert images is not None
    finding = needs_media(images)
    assert finding is not None and finding.summary == (
        "the question holds an <img> tag: the image is not in the text (and 2 more <img> tags)"
    )
    one = needs_media(mcq("<img src=a.png>则（）。", A="<img src=b.png>", B="乙"))
    assert one is not None and one.summary.endswith("(and 1 more <img> tag)")
    mixed = needs_media(mcq("<img src=a.png>则（）。", A="见图2", B="<img src=c.png>"))
    assert mixed is not None and mixed.summary.endswith(
        "(and 2 more references to media: “见图”, <img> tag)"
    ), mixed.summary


MEDIA_LOOK_ALIKES = [  # not references to a table or figure
    "关于证券投资基金业在金融体系中的地位和作用，以下表述错误的是（）。",
    "以下表示方法正确的是（）。",
    "某公司2018年度资产负债表中，总资产50亿元，总负债30亿元，所有者权益为（）亿元。",
    "利润表中，净利润的计算公式是（）。",
    "实用新型专利申请文件缺少说明书附图的，应当（）。",
    "Which of the following is a monetary policy tool?",
    "A table of contents is required in which of the following reports?",
    "The analyst's figures for revenue growth are most likely to be:",
]


def test_a_table_written_into_the_text_satisfies_a_table_reference() -> None:
    inline = "两只基金的收益率如下表所示：\n基金 | 上涨 | 下跌\n甲 | 20% | -5%\n乙 | 10% | 2%\n期望收益率较高的是（）。"
    assert needs_media(mcq(inline)) is None
    english = "Use the following table:\nFund\tReturn\nX\t8%\nY\t6%\nWhich fund did better?"
    assert needs_media(mcq(english)) is None
    # a figure cannot be written into the text
    assert needs_media(mcq("如下图所示：\n甲 | 乙\n1 | 2\n则（）。")) is not None


def test_a_reference_in_a_choice_is_flagged_too() -> None:
    finding = needs_media(mcq("下列说法正确的是（）。", A="如图所示的曲线向右移动", B="不变"))
    assert finding is not None and finding.summary.startswith("the choice A refers to")


# --- html ----------------------------------------------------------------------------------


def test_entities_and_tags_are_flagged_with_where_they_are() -> None:
    finding = html_markup(
        mcq(
            "总额&amp;nbsp;1000元，其中&lt;b&gt;流动资产&lt;/b&gt;为（）。",
            explanation="见教材第3章<br>第2节",
        )
    )
    assert finding is not None and finding.name is FlagName.HTML
    assert finding.summary.startswith("HTML in the question, explanation:")
    fields = {part["field"]: part for part in finding.evidence["fields"]}  # type: ignore[union-attr]
    assert fields["question"]["entities"] == ["&amp;", "&lt;", "&gt;", "&nbsp;"]  # type: ignore[index]
    assert fields["question"]["tags"] == ["<b>"]  # type: ignore[index]
    assert fields["explanation"]["tags"] == ["<br>"]  # type: ignore[index]
    english = html_markup(mcq("The firm&#39;s R&amp;D spending rose. Which is true?"))
    assert english is not None and "&#39;" in english.summary and "&amp;" in english.summary


def test_script_style_and_form_tags_are_flagged_as_html() -> None:
    """A generated or scraped item holding <script> or <style> was not flagged: only the
    tags of rich text (<b>, <img> ...) were known."""
    finding = html_markup(
        mcq(
            "哪项正确？<script>alert(1)</script><noscript>x</noscript>",
            explanation='<style type="text/css">见上</style><button onclick="f()">ok</button>',
        )
    )
    assert finding is not None and finding.name is FlagName.HTML
    fields = {part["field"]: part for part in finding.evidence["fields"]}  # type: ignore[union-attr]
    assert fields["question"]["tags"] == ["<script>", "<noscript>"]  # type: ignore[index]
    assert fields["explanation"]["tags"] == ["<style>", "<button>"]  # type: ignore[index]
    assert html_markup(mcq("若 a<b 且 c>d，则（）。")) is None  # comparisons stay text


def test_stylesheet_text_pasted_from_word_is_flagged() -> None:
    """CFLUE's knowledge:1562 (its record 1562): an explanation ending in the <style> text of Word's HTML."""
    explanation = (
        '每日计提的管理费用=50000×0.73%÷365=1万元。\r\n@font-face{\r\nfont-family:"宋体";\r\n}'
        '\r\n\r\np.MsoNormal{\r\nmso-style-name:正文;\r\nmso-style-parent:"";\r\nmargin:0pt;}'
    )
    finding = html_markup(mcq("基金每日计提的管理费用为（）。", explanation=explanation))
    assert finding is not None and finding.name is FlagName.HTML
    assert finding.summary == (
        "HTML in the explanation: stylesheet text (@font-face, p.MsoNormal, mso-style-name)"
    )
    (part,) = finding.evidence["fields"]  # type: ignore[misc]
    assert part == {  # a stylesheet key only where there is one
        "field": "explanation",
        "entities": [],
        "tags": [],
        "stylesheet": ["@font-face", "p.MsoNormal", "mso-style-name", "mso-style-parent"],
    }
    plain = html_markup(mcq("总额&amp;nbsp;1000元"))
    assert plain is not None and "stylesheet" not in plain.evidence["fields"][0]  # type: ignore[index,operator]


HTML_LOOK_ALIKES = [  # ampersands, comparisons, braces and at signs, not HTML
    "R&D and AT&T spending rose; which is true?",
    "If A<B and C>D, then (  ).",
    "收益率<5%时，应（）。",
    r"年金现值 $PV = \frac{PMT}{r}\left[1-\frac{1}{(1+r)^{n}}\right]$，其中 \text{r: 利率}",
    "Write to ir@bank.com: the set {font: 12, color: red} is a dict, not a style.",
]

LOOK_ALIKES: dict[str, tuple[Callable[[RevisionText], FlagFinding | None], list[str]]] = {
    "needs-media": (needs_media, MEDIA_LOOK_ALIKES),
    "html": (html_markup, HTML_LOOK_ALIKES),
}


@pytest.mark.parametrize(
    ("rule", "prompt"),
    [
        pytest.param(rule, prompt, id=f"{name}-{prompt}")
        for name, (rule, prompts) in LOOK_ALIKES.items()
        for prompt in prompts
    ],
)
def test_look_alikes_raise_no_flag(
    rule: Callable[[RevisionText], FlagFinding | None], prompt: str
) -> None:
    assert rule(mcq(prompt)) is None


# --- key-mismatch --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("explanation", "said"),
    [
        ("公开市场操作是一般性货币政策工具，窗口指导属于间接信用指导。故选B。", "B"),
        ("A项错误，B项正确。因此，本题答案为B。", "B"),
        ("按照网校的观点答案应该为AD；官方公布的答案为ABD。", "ABD"),
        ("Open market operations are a general tool. Therefore, the answer is B.", "B"),
        ("The correct answer is (C): window guidance is selective.", "C"),
        ("So option B is correct.", "B"),
    ],
)
def test_an_explanation_naming_another_answer_is_flagged(explanation: str, said: str) -> None:
    key = "AD" if len(said) > 1 else "A"
    finding = key_mismatch(
        mcq("下列属于一般性货币政策工具的是（）。", key=key, explanation=explanation)
    )
    assert finding is not None and finding.name is FlagName.KEY_MISMATCH
    assert finding.evidence["explanation_says"] == said and finding.evidence["key"] == key
    assert finding.summary.endswith(f"the key is {key}")


@pytest.mark.parametrize(
    "explanation",
    [
        "公开市场操作是一般性货币政策工具。故选A。",
        "A项正确。所以选项D的说法正确，选项C的表述不正确。",  # remarks on options, no conclusion
        "故选A，BCD选项根据题意，无法判断得出。",
        "Option A is the general tool; the answer is A.",
        "The answer is a bit subtle: rates move first.",
    ],
)
def test_an_explanation_agreeing_with_the_key_or_concluding_nothing_is_not_flagged(
    explanation: str,
) -> None:
    assert (
        key_mismatch(mcq("下列属于一般性货币政策工具的是（）。", key="A", explanation=explanation))
        is None
    )


def test_an_ordering_explanation_naming_another_order_is_flagged() -> None:
    english = RevisionText(
        "ordering",
        "A rate rise cycle. Put the events in logical order.",
        EVENTS,
        "CABD",
        "Inflation prompts the rise, which passes to loans. The correct order is C, B, A, D.",
    )
    finding = key_mismatch(english)
    assert finding is not None and finding.evidence["explanation_says"] == "CBAD"
    assert "says C, B, A, D" in finding.summary and "the key is C, A, B, D" in finding.summary
    chinese = RevisionText(
        "ordering", "加息周期。请排列事件。", EVENTS_ZH, "CABD", "正确顺序为C、A、B、D。"
    )
    assert key_mismatch(chinese) is None
    wrong = RevisionText(
        "ordering", "加息周期。请排列事件。", EVENTS_ZH, "CABD", "正确顺序为：D、C、A、B。"
    )
    assert key_mismatch(wrong) is not None


def test_a_true_false_explanation_repeating_the_statement_contradicts_the_key_false() -> None:
    statement = "贷款风险分类应遵循不可拆分原则，即一笔贷款只能处于一种贷款形态。（）"
    explanation = "贷款风险分类应遵循不可拆分原则，即一笔贷款只能处于一种贷款形态。"
    choices = {"A": "对", "B": "错"}
    finding = key_mismatch(RevisionText("truefalse", statement, choices, "B", explanation))
    assert finding is not None and "repeats the statement word for word" in finding.summary
    assert key_mismatch(RevisionText("truefalse", statement, choices, "A", explanation)) is None
    corrected = "贷款风险分类应遵循【可拆分】原则。"
    assert key_mismatch(RevisionText("truefalse", statement, choices, "B", corrected)) is None
    english = RevisionText(
        "truefalse", "A central bank sets fiscal policy.", {"A": "True", "B": "False"}, "A",
        "Fiscal policy belongs to the government. Therefore, the statement is false.",
    )  # fmt: skip
    assert key_mismatch(english) is not None


# --- order-leak ----------------------------------------------------------------------------


def test_events_listed_in_key_order_are_flagged_in_english_and_chinese() -> None:
    for events in (EVENTS, EVENTS_ZH):
        leaked = RevisionText("ordering", "Order the events.", events, "ABCD")
        finding = order_leak(leaked)
        assert finding is not None and finding.name is FlagName.ORDER_LEAK
        assert "A, B, C, D" in finding.summary
        assert order_leak(RevisionText("ordering", "Order the events.", events, "CABD")) is None
    five = dict(EVENTS, E="Home prices fall.")
    assert order_leak(RevisionText("ordering", "Order.", five, "ABCDE")) is not None
    assert order_leak(mcq("下列说法正确的是（）。", key="A")) is None  # not an ordering item


# --- same-choices --------------------------------------------------------------------------


def test_two_choices_written_alike_are_flagged_with_the_labels_and_the_text() -> None:
    # CFLUE's real case: a single-answer item whose A and C are both Ⅰ、Ⅱ、Ⅲ.
    real = mcq("下列说法正确的有（ ）。", key="A", A="Ⅰ、Ⅱ、Ⅲ", B="Ⅲ、Ⅳ", C="Ⅰ、Ⅱ、Ⅲ", D="Ⅰ、Ⅱ")
    finding = same_choices(real)
    assert finding is not None and finding.name is FlagName.SAME_CHOICES
    assert finding.summary.startswith("choices A and C (“Ⅰ、Ⅱ、Ⅲ”) read the same")
    assert finding.evidence == {"same": [{"labels": "AC", "text": "Ⅰ、Ⅱ、Ⅲ"}]}
    # width forms, case and spacing make no difference; two pairs are both named
    alike = mcq("Which?", A="Ｔｈｅ ｂａｎｋ", B="the  bank", C="Rates", D="rates")
    finding = same_choices(alike)
    assert finding is not None and finding.evidence["same"] == [
        {"labels": "AB", "text": "Ｔｈｅ ｂａｎｋ"},
        {"labels": "CD", "text": "Rates"},
    ]
    events = dict(EVENTS, D=EVENTS["A"].upper())
    finding = same_choices(RevisionText("ordering", "Order.", events, "CABD"))
    assert finding is not None and finding.summary.startswith("events A and D (")
    assert "which of them comes first" in finding.summary


def test_choices_alike_only_without_punctuation_or_labels_are_not_flagged() -> None:
    """Ⅰ、Ⅱ、Ⅳ and Ⅲ、Ⅳ read alike once punctuation goes (iiiiv); combination choices
    A、B and C、B alike once a written-in label goes: neither is the same choice."""
    assert same_choices(mcq("正确的有（ ）。", A="Ⅰ、Ⅱ、Ⅳ", B="Ⅲ、Ⅳ", C="Ⅱ、Ⅲ", D="Ⅰ")) is None
    assert same_choices(mcq("正确的有（ ）。", A="A、B", B="C、B", C="A、C", D="B")) is None
    assert same_choices(mcq("Which?", A="10%", B="10", C="-1", D="1")) is None


def test_a_sound_item_raises_nothing() -> None:
    sound = RevisionText(
        "ordering",
        "Consumer prices have been rising faster than the target. Put the events in order.",
        EVENTS,
        "CABD",
        "High inflation prompts the rate rise, which is passed on to loans and cools borrowing.",
    )
    assert text_findings(sound) == []
