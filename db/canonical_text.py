"""The canonical text of an item: what near-duplicate detection compares, and what "the
same text" means everywhere (the flag rules too).

An item's canonical text (:func:`item_text`) is its prompt without a leading question
number, then its choice texts without their labels, sorted, each normalized
(:func:`normalize`: width forms (NFKC), case, Chinese and English punctuation and
spacing do not count).  So a copy whose options were shuffled and whose key was
remapped (what CFLUE's rewriting does), whose events were relabelled, a single-answer
item copied as a multi-answer one, or a copy in full-width forms or other punctuation
has the same canonical text as its original.

Two questions that share a long case text but none of their choices (CFLUE asks
several questions on one case) are not copies of each other, however similar
(:func:`different_questions`).
"""

from __future__ import annotations

import re
import sys
import unicodedata
from collections.abc import Mapping
from functools import lru_cache

from rapidfuzz import fuzz, process

# Between the parts of a canonical text (prompt, then choices); whitespace, so that a
# canonical text normalized again loses it rather than gaining a character.
CHOICE_SEPARATOR = "\x1f"
# Choices at least this similar are "the same choice" (different_questions).
SAME_CHOICE = 90.0

# Punctuation that changes what a text says is kept: "5%" is not "5", "1/2" is not "12".
_KEPT_PUNCTUATION = frozenset("%‰‱#&*@/\\")
_DECIMAL_POINT = re.compile(r"(?<=\d)\.(?=\d)")  # 1.5 is not 15 (NFKC made "．" a ".")
_MINUS = re.compile(r"(?<![\w.])[-‐‑‒–—](?=\d)")  # -450 is not 450
# A question number in front of a prompt is not part of the question.
_NUMBERING = re.compile(
    r"^\s*(?:(?:question|q)\s*\d{1,4}\s*[:.)：]"
    r"|第\s*\d{1,4}\s*题\s*[:：.、]?"
    r"|[(（]\s*\d{1,3}\s*[)）]"
    r"|\d{1,3}\s*[、.．)）](?!\d))\s*",
    re.IGNORECASE,
)
# A label written into a choice's own text ("A. ...", "(1) ...", "3、...") is not part of it.
_LABEL = re.compile(
    r"^\s*(?:[(（]\s*(?:[A-Ha-h]|\d)\s*[)）]|(?:[A-Ha-h]|\d)\s*[.)．、:：）](?![0-9]))\s*(?=\S)"
)


@lru_cache(maxsize=1)
def _dropped_characters() -> re.Pattern[str]:
    """Whitespace and every punctuation character (Unicode categories P*) but the kept ones."""
    dropped = [
        chr(code)
        for code in range(min(sys.maxunicode, 0xFFFF) + 1)
        if unicodedata.category(chr(code)).startswith("P") and chr(code) not in _KEPT_PUNCTUATION
    ]
    return re.compile("[\\s" + "".join(re.escape(char) for char in dropped) + "]+")


def normalize(text: str) -> str:
    """What does not make a question different: width forms (NFKC: full-width ＡＢ１ and
    half-width AB1 alike), case, spacing, and punctuation, Chinese or English (except
    what changes the meaning: % / # and the like, a decimal point, a minus sign)."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = _MINUS.sub("\u2212", _DECIMAL_POINT.sub("\u22c5", text))
    return _dropped_characters().sub("", text)


def item_text(prompt: str, choices: Mapping[str, str]) -> str:
    """The canonical text compared for an item, already normalized and order-free: the
    prompt without a leading question number, then each choice's text without its label,
    sorted, so shuffled, relabelled and re-punctuated copies compare as equal."""
    parts = [strip_numbering(prompt)]
    parts += [strip_label(str(text)) for text in choices.values()]
    # One normalization for all the parts (NUL survives it): five times fewer calls.
    normalized_prompt, *texts = normalize("\x00".join(parts)).split("\x00")
    return CHOICE_SEPARATOR.join([normalized_prompt, *sorted(texts)])


def different_questions(first: str, second: str) -> bool:
    """Two canonical texts (:func:`item_text`) whose choices have nothing in common: two
    questions on one shared text (CFLUE's case studies ask several), not a copy."""
    first_choices = first.split(CHOICE_SEPARATOR)[1:]
    second_choices = second.split(CHOICE_SEPARATOR)[1:]
    if len(first_choices) < 2 or len(second_choices) < 2:
        return False
    import numpy as np  # here, not above: flags and the review queue import this module

    scores = process.cdist(first_choices, second_choices, scorer=fuzz.ratio, dtype=np.float32)
    return bool(scores.max() < SAME_CHOICE)


def strip_numbering(prompt: str) -> str:
    """The prompt without a question number in front of it ("3.", "第3题", "(3)")."""
    return _NUMBERING.sub("", prompt, count=1)


def strip_label(choice: str) -> str:
    """The choice's text without a label written into it ("A. ...", "(1) ...", "3、...")."""
    return _LABEL.sub("", choice, count=1)
