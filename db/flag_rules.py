"""The text rules behind the automatic flags: what in a revision's text raises which flag.

Each rule reads one revision (question or scenario, choices or events, key,
explanation) and returns :class:`FlagFinding` values: the flag, a one-line summary
a reviewer reads, and the evidence that raised it (quoted text, where it was).
They work on English and Chinese text alike, and on the text as stored: entities
are decoded where a rule needs the text a person would read (``db.markup``).

- ``needs-media``: the question or a choice refers to a table, figure, chart,
  image or attachment (如表, 如下图, 见下表, 附件, "the following table", "Exhibit 2")
  that the text does not hold, or holds an image tag (the image is elsewhere).  A
  table written into the text itself (rows with ``|`` or tabs) satisfies a table
  reference.  "以下表述" (the following statements) is not a table.
- ``html``: entities, tags or stylesheet text (Word's ``@font-face{…}``) in any field
  (the review app shows the decoded text).
- ``key-mismatch``: the explanation's conclusion names another answer than the key
  (故选B / 答案为B / "the answer is B" / "the correct order is D, A, C, B"), or, on a
  true/false item, the explanation repeats the statement word for word while the
  key says it is false.
- ``order-leak``: an ordering item whose key lists the events in their given order.
- ``same-choices``: two choices (or events) that read the same once width forms, case
  and spacing are set aside (CFLUE has a single-answer item whose A and C are both
  Ⅰ、Ⅱ、Ⅲ).

Standard library only (plus ``db``), so imports and migrations can run it.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from db.answers import LETTERS, format_answer
from db.canonical_text import normalize  # "the same text" as near-duplicates see it
from db.differences import ItemText
from db.json_types import JsonObject
from db.markup import decode_entities, find_markup
from db.vocabulary import FlagName, ItemKind
from db.words import agreeing, counted, few_of

QUOTE_CHARS = 40  # characters of context quoted either side of what raised a flag


@dataclass(frozen=True)
class RevisionText(ItemText):
    """What the rules read of one revision: the text near-duplicates compare, and the
    explanation."""

    explanation: str | None = None


@dataclass(frozen=True)
class FlagFinding:
    """One flag a rule raised: ``summary`` for people, ``evidence`` for the record."""

    name: FlagName
    summary: str
    evidence: JsonObject = field(default_factory=dict)

    def stored_evidence(self) -> JsonObject:
        """The evidence as stored with the flag (the summary included)."""
        return {"summary": self.summary, **self.evidence}


# --- needs-media -------------------------------------------------------------------------

_TABLE_WORDS = "表|表格|图表"
_FIGURE_WORDS = "图|图片|图形|示意图|走势图"
# Before 表中 / 图1 that point at a table or figure ("根据表中数据", "如图1所示"); after any
# other character they are part of a name: 资产负债表中 (the balance sheet), 代表, 报表.
_STANDALONE = r"(?<![^\s据在从见由如若该此的与和及：:，,。；;（(])"
_NOT_A_VERB = r"(?![述示达明现决态彰扬率象])"  # 以下表述, 表示, 表明 ... are not tables
_ZH_REFERENCE = re.compile(
    # 如表, 如图, 如下表, 如上图, 见下表, 参见附表, 若下表 ("若" is a common typo of "如")
    rf"(?:如|若|见|参见|详见|参考|参照)(?:下|上|附)?(?P<a>表格|图表|表|图){_NOT_A_VERB}"
    # 下表, 上图 (以下表述 / 以下表示 are statements, not tables; 说明书附图 is a term)
    rf"|(?<![以如若见照考])(?:下|上)(?P<b>表格|图表|表|图){_NOT_A_VERB}"
    # 表中, 图中 (根据表中数据), 表1, 图2-1
    rf"|{_STANDALONE}(?P<c>表|图)(?:中|内)(?=[的数所给列显，,。：:（(])"
    rf"|{_STANDALONE}(?P<g>表|图)\s*[0-9]+(?:[-—.][0-9]+)?(?=\s*[所中的显是为，,。:：（(])"
    # 该表, 此图, （图）, 见附件
    rf"|(?:该|此|本)(?P<d>表|图){_NOT_A_VERB}(?![书格式])"
    r"|[（(【\[](?P<e>图|表|图表)[）)】\]]"
    r"|(?:见|如|参见|详见)(?P<f>附件)|(?P<h>附件)(?:所示|中的?(?:表|图|数据))"
)
_EN_MEDIA = "tables?|figures?|charts?|graphs?|diagrams?|exhibits?|images?|pictures?|illustrations?"
_EN_REFERENCE = re.compile(
    rf"\b(?:the\s+|this\s+)?(?:following|above|below|accompanying|attached|given)\s+(?P<a>{_EN_MEDIA})\b"
    rf"|\b(?:shown|given|presented|illustrated|depicted|listed|provided)\s+(?:in|on|by|below|above)\s+"
    rf"(?:the\s+)?(?P<b>{_EN_MEDIA})"
    rf"|\b(?:see|refer\s+to|according\s+to|based\s+on|from|in|using)\s+(?:the\s+)?(?P<c>{_EN_MEDIA})"
    r"(?:\s+(?:below|above|[0-9]+))?\b(?!\s+(?:of|that|which|is|are)\b)"
    r"|\b(?P<d>exhibit|figure|fig\.|table|chart)\s+[0-9]+\b"
    r"|\b(?P<e>attachment|attached\s+file|appendix)\b",
    re.IGNORECASE,
)
# A table written into the text: two or more lines of cells split by | or tabs.
_TABLE_ROW = re.compile(r"^[^\n]*?\S[^\n]*?(?:\||\t)[^\n]*\S[^\n]*$", re.MULTILINE)


_ZH_MARKS = frozenset("表图件")
_EN_WORDS = re.compile(
    r"tabl|figur|fig\.|chart|graph|diagram|exhibit|imag|pictur|illustrat|attach|appendix",
    re.IGNORECASE,
)


def _reference_patterns(value: str) -> list[re.Pattern[str]]:
    """The reference patterns worth running on ``value`` (most texts need neither)."""
    patterns = []
    if not _ZH_MARKS.isdisjoint(value):
        patterns.append(_ZH_REFERENCE)
    if _EN_WORDS.search(value):
        patterns.append(_EN_REFERENCE)
    return patterns


def _has_inline_table(fields: list[tuple[str, str]]) -> bool:
    return any(
        ("|" in value or "\t" in value) and len(_TABLE_ROW.findall(decode_entities(value))) >= 2
        for _, value in fields
    )


def _quote(text: str, start: int, end: int) -> str:
    """The matched span with some context, on one line."""
    left = max(0, start - QUOTE_CHARS)
    right = min(len(text), end + QUOTE_CHARS)
    snippet = " ".join(text[left:right].split())
    return ("…" if left else "") + snippet + ("…" if right < len(text) else "")


def _is_table(word: str) -> bool:
    return "表" in word or word.lower().startswith(("table", "exhibit"))


def _more_references(rest: list[JsonObject]) -> str:
    """What the summary's first reference leaves out, said: `` (and 2 more <img> tags)``,
    `` (and 2 more references to media: <img> tag, “图2”)``; empty when nothing is."""
    if not rest:
        return ""
    found = list(dict.fromkeys(str(reference["found"]) for reference in rest))
    if len(found) == 1 and found[0].endswith(" tag"):
        return f" (and {counted(len(rest), 'more ' + found[0])})"
    what = f"{agreeing(len(rest), 'reference', 'references')} to media"
    quoted = [name if name.endswith(" tag") else f"“{name}”" for name in found]
    return f" (and {len(rest)} more {what}: {few_of(quoted)})"


def needs_media(text: RevisionText) -> FlagFinding | None:
    """The question or a choice refers to media it does not hold."""
    references: list[JsonObject] = []
    fields = [("question" if ItemKind(text.kind).is_mcq else "scenario", text.prompt)]
    fields += [(f"choice {label}", choice) for label, choice in text.choices.items()]
    for where, raw in fields:
        markup = find_markup(raw) if "&" in raw or "<" in raw else None
        for element in markup.media_elements if markup else ():
            references.append({"field": where, "found": f"<{element}> tag", "quote": ""})
        value = decode_entities(raw) if markup and markup.entities else raw
        for pattern in _reference_patterns(value):
            for match in pattern.finditer(value):
                word = next(group for group in match.groups() if group)
                if _is_table(word) and _has_inline_table(fields):
                    continue  # the table is right there in the text
                references.append(
                    {
                        "field": where,
                        "found": match.group().strip(),
                        "quote": _quote(value, *match.span()),
                    }
                )
    if not references:
        return None
    first = references[0]
    more = _more_references(references[1:])
    if first["quote"]:
        summary = (
            f"the {first['field']} refers to “{first['found']}”, which the text does not "
            f"contain: “{first['quote']}”{more}"
        )
    else:
        summary = (
            f"the {first['field']} holds an {first['found']}: the image is not in the text{more}"
        )
    return FlagFinding(FlagName.NEEDS_MEDIA, summary, {"references": references})  # type: ignore[dict-item]


# --- html --------------------------------------------------------------------------------


def html_markup(text: RevisionText) -> FlagFinding | None:
    """Entities, tags or stylesheet text anywhere in the text."""
    found: list[JsonObject] = []
    fields = [("question" if ItemKind(text.kind).is_mcq else "scenario", text.prompt)]
    fields += [(f"choice {label}", choice) for label, choice in text.choices.items()]
    fields.append(("explanation", text.explanation or ""))
    for where, value in fields:
        markup = find_markup(value)
        if markup:
            part: JsonObject = {
                "field": where,
                "entities": list(markup.entities),
                "tags": [f"<{element}>" for element in markup.elements],
            }
            if markup.stylesheet:  # a key of its own only where there is one
                part["stylesheet"] = list(markup.stylesheet)
            found.append(part)
    if not found:
        return None
    shown = [
        *(entity for part in found for entity in part["entities"]),  # type: ignore[union-attr]
        *(tag for part in found for tag in part["tags"]),  # type: ignore[union-attr]
        *(
            f"stylesheet text ({', '.join(part['stylesheet'][:3])})"  # type: ignore[index,arg-type]
            for part in found
            if "stylesheet" in part
        ),
    ]
    distinct = list(dict.fromkeys(str(item) for item in shown))
    places = ", ".join(dict.fromkeys(str(part["field"]) for part in found))
    return FlagFinding(
        FlagName.HTML,
        f"HTML in the {places}: {' '.join(distinct[:6])}{' …' if len(distinct) > 6 else ''}",
        {"fields": found},  # type: ignore[dict-item]
    )


# --- key-mismatch ------------------------------------------------------------------------

# "ABD", "A、B、D", "A和B"; "D，ABC选项…" is D (what follows is another sentence)
_LETTER_RUN = (
    r"(?P<letters>[A-H](?:(?:[、,，和及与\s]{1,2}[A-H](?![A-Za-z]))+|[A-H]{0,7}))(?![A-Za-z])"
)
_ZH_CONCLUSION = re.compile(
    r"(?:故|所以|因此|因而|综上所述|综上|据此|即)[，,：:\s]*(?:本题|此题)?(?:应当|应该|应)?"
    # 选 but not 选项 ("所以选项D的说法正确" is about one option, not the answer)
    r"(?:选择(?!题)|选(?!项)|答案(?:应为|应是|为|是|选)|正确答案(?:为|是|应为)|正确选项(?:为|是))"
    rf"\s*[：:]?\s*(?:选项|项)?\s*{_LETTER_RUN}"
    r"|(?:本题|此题)(?:的)?(?:正确)?答案(?:应为|应是|为|是|选)\s*[：:]?\s*(?:选项)?\s*"
    + _LETTER_RUN.replace("letters", "letters2")
    + r"|(?:官方|标准|参考)?(?:正确)?答案(?:应该为|应为|应是|为|是)\s*[：:]?\s*(?:选项)?\s*"
    + _LETTER_RUN.replace("letters", "letters3")
)
_EN_CONCLUSION = re.compile(
    r"\b(?:the\s+)?(?:correct\s+|right\s+|best\s+|final\s+)?answer\s*(?:is|would\s+be|should\s+be|:)"
    r"\s*(?:option\s+|choice\s+)?\(?(?P<letters>[A-H](?:\s*(?:,|and|&)\s*[A-H])*)\)?(?![A-Za-z])"
    r"|\b(?:so|therefore|thus|hence)\b,?\s+(?:option\s+|choice\s+)?\(?(?P<letters2>[A-H])\)?"
    r"\s+is\s+(?:the\s+)?(?:correct|right|answer)"
    r"|\b(?:option|choice)\s+\(?(?P<letters3>[A-H])\)?\s+is\s+(?:the\s+)?(?:correct|right)\b"
)
_ORDER_CONCLUSION = re.compile(
    r"(?:correct|logical|right|proper)\s+(?:order|sequence)\s*(?:is|would\s+be|:)\s*"
    r"|(?:正确|合理|逻辑)?顺序(?:应为|应是|为|是)\s*[：:]?\s*"
    r"|(?:so|therefore|thus|hence),?\s+the\s+order\s+is\s*",
    re.IGNORECASE,
)
_ORDER_LETTERS = re.compile(r"[A-H](?:\s*(?:,|，|、|->|→|-|>|\s)\s*[A-H](?![A-Za-z]))+(?![A-Za-z])")
_EN_TRUEFALSE = re.compile(
    r"\b(?:so|therefore|thus|hence)\b,?\s+(?:the\s+)?statement\s+is\s+(?P<word>true|false|correct|incorrect)\b",
    re.IGNORECASE,
)
_ZH_TRUEFALSE = re.compile(
    r"(?:故|因此|所以|因而)[，,]?(?:本题|题干|该题|此题|该说法|此说法)(?:中)?(?:的)?(?:说法|表述|描述)?(?:是)?"
    r"(?P<word>正确|错误)"
)
_TRUE_WORDS = {"true", "correct", "正确"}
_BLANK_MARK = re.compile(r"[（(]\s*[）)]\s*[。.]?\s*$")


def _conclusions(pattern: re.Pattern[str], explanation: str) -> list[re.Match[str]]:
    return list(pattern.finditer(explanation))


def _letters(match: re.Match[str]) -> str:
    raw = next(value for name, value in match.groupdict().items() if value and "letters" in name)
    return "".join(sorted(set(re.sub(r"[^A-H]", "", raw)), key=LETTERS.index))


def key_mismatch(text: RevisionText) -> FlagFinding | None:
    """The explanation's last conclusion names another answer than the key."""
    explanation = decode_entities(text.explanation or "")
    if not explanation.strip():
        return None
    kind = ItemKind(text.kind)
    if kind is ItemKind.ORDERING:
        return _order_mismatch(text, explanation)
    if kind is ItemKind.TRUEFALSE:
        stated = _truefalse_mismatch(text, explanation)
        if stated is not None:
            return stated
    matches = sorted(
        _conclusions(_ZH_CONCLUSION, explanation) + _conclusions(_EN_CONCLUSION, explanation),
        key=lambda match: match.start(),
    )
    labels = set(text.choices)
    matches = [m for m in matches if _letters(m) and set(_letters(m)) <= labels]
    if not matches:
        return None
    last = matches[-1]
    said = _letters(last)
    if said == text.key:
        return None
    return _mismatch_finding(text, said, explanation, last.start(), last.end())


def _mismatch_finding(
    text: RevisionText, said: str, explanation: str, start: int, end: int
) -> FlagFinding:
    kind = ItemKind(text.kind)
    quote = _quote(explanation, start, end)
    return FlagFinding(
        FlagName.KEY_MISMATCH,
        f"the explanation says {format_answer(kind, said)} (“{quote}”); "
        f"the key is {format_answer(kind, text.key)}",
        {"explanation_says": said, "key": text.key, "quote": quote},
    )


def _order_mismatch(text: RevisionText, explanation: str) -> FlagFinding | None:
    found: tuple[str, int, int] | None = None
    for heading in _ORDER_CONCLUSION.finditer(explanation):
        run = _ORDER_LETTERS.match(explanation, heading.end())
        if run is None:
            continue
        order = re.sub(r"[^A-H]", "", run.group())
        if len(order) == len(text.choices) and set(order) == set(text.choices):
            found = (order, heading.start(), run.end())
    if found is None or found[0] == text.key:
        return None
    return _mismatch_finding(text, found[0], explanation, found[1], found[2])


def _truefalse_mismatch(text: RevisionText, explanation: str) -> FlagFinding | None:
    """对/错 stated in words, or the statement repeated word for word with the key 错."""
    said: str | None = None
    span = (0, 0)
    for pattern in (_EN_TRUEFALSE, _ZH_TRUEFALSE):
        for match in pattern.finditer(explanation):
            said = "A" if match["word"].lower() in _TRUE_WORDS else "B"
            span = match.span()
    if said is not None:
        if said == text.key:
            return None
        return _mismatch_finding(text, said, explanation, *span)
    statement = normalize(_BLANK_MARK.sub("", decode_entities(text.prompt)))
    restated = normalize(explanation)
    if text.key == "B" and len(statement) >= 10 and restated.startswith(statement):
        return FlagFinding(
            FlagName.KEY_MISMATCH,
            "the explanation repeats the statement word for word, yet the key says it is "
            f"false ({format_answer(ItemKind.TRUEFALSE, text.key)})",
            {"explanation_says": "A", "key": text.key, "quote": _quote(explanation, 0, 0)},
        )
    return None


# --- order-leak --------------------------------------------------------------------------


def order_leak(text: RevisionText) -> FlagFinding | None:
    """The key of an ordering item is the order the events are listed in."""
    if ItemKind(text.kind) is not ItemKind.ORDERING or len(text.choices) < 3:
        return None
    listed = "".join(text.choices)
    if text.key != listed:
        return None
    return FlagFinding(
        FlagName.ORDER_LEAK,
        f"the key {format_answer(ItemKind.ORDERING, text.key)} lists the events in the order "
        "they are given, so position alone answers the item",
        {"key": text.key},
    )


# --- same-choices ------------------------------------------------------------------------


def _as_read(choice: str) -> str:
    """A choice as a reader tells it apart: width forms, case and spacing aside, every other
    character kept.  ``normalize`` drops punctuation, which near-duplicates may, but here
    it would make Ⅰ、Ⅱ、Ⅳ read as Ⅲ、Ⅳ; and a label written in is not stripped, since
    combination choices (A、B and C、B) would then read as one."""
    return " ".join(unicodedata.normalize("NFKC", choice).casefold().split())


def _listed(labels: list[str]) -> str:
    return labels[0] if len(labels) == 1 else f"{', '.join(labels[:-1])} and {labels[-1]}"


def same_choices(text: RevisionText) -> FlagFinding | None:
    """Two choices (or events) that read the same: a single-answer item then has two right
    answers, or the key names one of two equals; an ordering item has orders no one can
    tell apart."""
    by_reading: dict[str, list[str]] = {}
    for label, choice in text.choices.items():
        if reading := _as_read(str(choice)):
            by_reading.setdefault(reading, []).append(label)
    same = [labels for labels in by_reading.values() if len(labels) > 1]
    if not same:
        return None
    ordering = ItemKind(text.kind) is ItemKind.ORDERING
    groups = [
        f"{_listed(labels)} (“{_shortened(str(text.choices[labels[0]]))}”)" for labels in same
    ]
    consequence = (
        "no one can tell which of them comes first"
        if ordering
        else "an answer naming one is as right as one naming the other"
    )
    return FlagFinding(
        FlagName.SAME_CHOICES,
        f"{'events' if ordering else 'choices'} {'; '.join(groups)} read the same: {consequence}",
        {
            "same": [
                {"labels": "".join(labels), "text": str(text.choices[labels[0]])} for labels in same
            ]
        },
    )


def _shortened(choice: str) -> str:
    limit = 2 * QUOTE_CHARS
    return choice if len(choice) <= limit else choice[: limit - 1] + "…"


TEXT_RULES = (needs_media, html_markup, key_mismatch, order_leak, same_choices)
"""Every rule run on a new revision's text, in the order their flags are shown."""


def text_findings(text: RevisionText) -> list[FlagFinding]:
    """Every automatic flag a revision's text raises (the duplicate flag needs the corpus:
    ``db.flags``)."""
    return [finding for rule in TEXT_RULES if (finding := rule(text)) is not None]
