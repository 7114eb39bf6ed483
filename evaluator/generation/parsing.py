"""Reading a generating model's answer: JSON (structured output) or the plain-text shape.

The plain-text shape is the one EconLogicQA's generator wrote::

    Scenario: ...            (or Question: ...)
    A. ...                   (or "Choices: A. ... B. ... C. ... D. ..." on one line)
    B. ...
    Correct Order: D, C, A, B   (or Answer: B)
    Explanation: ...

Headings may be bold (``**Scenario:**``) or Chinese (``情景：``, ``答案：``); text
before the first heading is ignored.  The key is returned as the model wrote it,
so that validation can quote it (``key: 'D, A, C, A': event A appears more than once``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from db.answers import LETTERS, MAX_CHOICES
from db.json_types import JsonObject, JsonValue


class ResponseParseError(ValueError):
    """The response does not have the expected shape; the message says what is missing."""


@dataclass(frozen=True)
class ParsedQuestion:
    """The parts of a generated item, before validation."""

    prompt: str
    choices: dict[str, str]
    key: str
    explanation: str | None
    shape: str  # "json" or "text"


# Section names and the headings that introduce them (longest first where they overlap).
_SECTIONS: dict[str, tuple[str, ...]] = {
    "prompt": ("scenario", "question", "情景", "场景", "题目", "问题", "题干"),
    "choices": ("choices", "events", "options", "选项", "事件"),
    "key": (
        "correct order",
        "logical order",
        "correct answer",
        "answer",
        "order",
        "key",
        "正确顺序",
        "正确答案",
        "答案",
        "顺序",
    ),
    "explanation": ("explanation", "reasoning", "rationale", "解析", "解释", "理由", "说明"),
}
_HEADING_TO_SECTION = {h: s for s, headings in _SECTIONS.items() for h in headings}
_HEADING = re.compile(
    r"^[ \t>#*\-]*(?P<name>"
    + "|".join(re.escape(h) for h in sorted(_HEADING_TO_SECTION, key=len, reverse=True))
    + r")[ \t*]*[:：][ \t*]*",
    re.IGNORECASE | re.MULTILINE,
)
# Headings that may also start mid-line ("Question: ... Choices: A. x B. y"); they are moved
# to a line of their own first.  Common words such as "answer" are left alone.
_INLINE_HEADING = re.compile(
    r"(?<=\S)[ \t]+((?:choices|events|options|correct order|correct answer|explanation)[ \t]*[:：])",
    re.IGNORECASE,
)
_FENCE = re.compile(r"^```[\w-]*\s*$", re.MULTILINE)
_MARKER_BODY = r"(?:\({L}\)|（{L}）|\[{L}\]|{L}[.)．、:：])"
_ORDER_RUN = re.compile(r"(?<![A-Za-z])[A-H](?:\s*(?:,|，|、|;|-+>?|→|>|\s)\s*[A-H](?![A-Za-z]))+")
_LETTER_RUN = re.compile(r"(?<![A-Za-z])[A-H]{1,8}(?![A-Za-z])")

# JSON field names a model may use for each part.
_JSON_FIELDS: dict[str, tuple[str, ...]] = {
    "prompt": ("scenario", "question", "prompt", "stem"),
    "choices": ("events", "choices", "options"),
    "key": ("correct_order", "order", "answer", "correct_answer", "key"),
    "explanation": ("explanation", "reasoning", "rationale", "analysis"),
}


def parse_generated(text: str, *, want_choices: bool = True) -> ParsedQuestion:
    """Parse a generated item (ordering or multiple choice) from JSON or the plain-text shape.

    With ``want_choices=False`` only a question is expected (a rewrite).
    """
    cleaned = _FENCE.sub("", text).strip()
    if not cleaned:
        raise ResponseParseError("the response is empty")
    data = _json_object(cleaned)
    if data is not None:
        return _from_json(data, want_choices=want_choices)
    return _from_text(cleaned, want_choices=want_choices)


# -- JSON --------------------------------------------------------------------------------


def _json_object(text: str) -> JsonObject | None:
    start, end = text.find("{"), text.rfind("}")
    if start == -1 or end <= start:
        return None
    try:
        data = json.loads(text[start : end + 1])
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _field(data: JsonObject, part: str) -> JsonValue:
    lowered = {str(name).lower(): value for name, value in data.items()}
    for name in _JSON_FIELDS[part]:
        if name in lowered:
            return lowered[name]
    return None


def _from_json(data: JsonObject, *, want_choices: bool) -> ParsedQuestion:
    prompt = _field(data, "prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        raise ResponseParseError("the JSON response has no scenario or question text")
    explanation = _field(data, "explanation")
    explanation = explanation.strip() if isinstance(explanation, str) else None
    if not want_choices:
        return ParsedQuestion(prompt.strip(), {}, "", explanation, "json")
    choices = _json_choices(_field(data, "choices"))
    key = _field(data, "key")
    if isinstance(key, list):
        key = ", ".join(str(part) for part in key)
    if not isinstance(key, str) or not key.strip():
        raise ResponseParseError("the JSON response has no correct order or answer")
    return ParsedQuestion(prompt.strip(), choices, key.strip(), explanation or None, "json")


def _json_choices(raw: JsonValue) -> dict[str, str]:
    if isinstance(raw, dict):
        return {str(label).strip().upper(): str(text).strip() for label, text in raw.items()}
    if isinstance(raw, list):
        choices: dict[str, str] = {}
        for index, entry in enumerate(raw[: len(LETTERS)]):
            if isinstance(entry, dict):
                label = str(entry.get("label") or LETTERS[index]).strip().upper()
                choices[label] = str(entry.get("text") or entry.get("event") or "").strip()
            else:
                choices[LETTERS[index]] = _strip_marker(str(entry), LETTERS[index])
        return choices
    raise ResponseParseError("the JSON response has no events or choices")


def _strip_marker(text: str, label: str) -> str:
    """``"A. Prices rise"`` in a list of events is just ``"Prices rise"``."""
    match = re.match(r"\s*" + _MARKER_BODY.format(L=label) + r"\s*", text)
    return text[match.end() :].strip() if match else text.strip()


# -- plain text --------------------------------------------------------------------------


def _sections(text: str) -> dict[str, str]:
    """Split text at headings; the first occurrence of each section wins."""
    text = _INLINE_HEADING.sub(r"\n\1", text.replace("**", "").replace("__", ""))
    found: dict[str, str] = {}
    matches = list(_HEADING.finditer(text))
    for index, match in enumerate(matches):
        section = _HEADING_TO_SECTION[match.group("name").lower()]
        end = matches[index + 1].start() if index + 1 < len(matches) else len(text)
        found.setdefault(section, text[match.end() : end].strip())
    return found


def _from_text(text: str, *, want_choices: bool) -> ParsedQuestion:
    sections = _sections(text)
    prompt_block = sections.get("prompt", "")
    explanation = sections.get("explanation") or None
    if not want_choices:
        if not prompt_block:
            raise ResponseParseError("no 'Question:' line in the response")
        return ParsedQuestion(prompt_block, {}, "", explanation, "text")
    choices_block = sections.get("choices")
    if choices_block is not None:
        prompt, choices = prompt_block, _split_choices(choices_block, anywhere=True)[1]
    else:
        prompt, choices = _split_choices(prompt_block, anywhere=False)
    if not prompt:
        raise ResponseParseError("no 'Scenario:' or 'Question:' text in the response")
    if not choices:
        raise ResponseParseError("no events or choices (lines starting 'A.', 'B.', ...)")
    key_block = sections.get("key")
    if not key_block:
        raise ResponseParseError("no 'Correct Order:' or 'Answer:' line in the response")
    return ParsedQuestion(prompt, choices, _key_text(key_block), explanation, "text")


def _split_choices(block: str, *, anywhere: bool) -> tuple[str, dict[str, str]]:
    """Split ``block`` into the text before ``A.`` and the labelled choices that follow.

    Choices are found in letter order; a marker at the start of a line is preferred
    over one inside a line (``Choices: A. x B. y`` on one line).  Before the choices
    of a scenario block, ``A.`` must start a line, so "Plan A." in prose is not a choice.
    """
    spans: list[tuple[str, int, int]] = []  # (label, marker start, text start)
    position = 0
    for index, label in enumerate(LETTERS[:MAX_CHOICES]):
        body = _MARKER_BODY.format(L=label)
        line_start = re.compile(r"(?:^|\n)[ \t>*\-]*(" + body + r")[ \t]*", re.MULTILINE)
        inline = re.compile(r"(?:^|(?<=\s))(" + body + r")[ \t]*")
        match = line_start.search(block, position)
        if match is None and (anywhere or index > 0):
            match = inline.search(block, position)
        if match is None:
            break
        spans.append((label, match.start(1), match.end()))
        position = match.end()
    if not spans:
        return block.strip(), {}
    choices: dict[str, str] = {}
    for index, (label, _start, text_start) in enumerate(spans):
        text_end = spans[index + 1][1] if index + 1 < len(spans) else len(block)
        choices[label] = " ".join(block[text_start:text_end].split())
    return block[: spans[0][1]].strip(), choices


def _key_text(block: str) -> str:
    """The key as written: ``"D, C, A, B"`` from "The correct order is D, C, A, B."."""
    line = block.strip().splitlines()[0].strip().strip("*").strip()
    for pattern in (_ORDER_RUN, _LETTER_RUN):
        match = pattern.search(line)
        if match:
            return match.group(0).strip()
    return line.rstrip(".。")
