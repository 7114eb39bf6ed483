"""One vocabulary for answers, used by importers, the TUI, the CLI and the evaluator.

Canonical forms (what is stored in the database):

- ordering: a permutation of the item's letters, e.g. ``"DACB"``; shown as ``"D, A, C, B"``.
- single / multi: a sorted set of letters, e.g. ``"B"`` or ``"ABD"``.
- truefalse: ``"A"`` (true, 对) or ``"B"`` (false, 错).

``parse_answer`` is strict: it is for answers people type and keys in files, and
raises :class:`AnswerError` with a message a person can act on.  Lenient reading of
free-form model output lives in ``evaluator.extraction`` and ends in the same
canonical forms.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from itertools import combinations

from db.errors import VetbenchError
from db.vocabulary import ItemKind

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
MIN_EVENTS = 2
MAX_EVENTS = 8
MAX_CHOICES = 8
MIN_CHOICES = 2  # a question needs an alternative
TRUE_LABEL, FALSE_LABEL = "A", "B"
TRUEFALSE_WORDS = {
    TRUE_LABEL: ("对", "true", "t", "yes", "正确", "是"),
    FALSE_LABEL: ("错", "false", "f", "no", "错误", "否"),
}


class AnswerError(VetbenchError, ValueError):
    """An answer or key that does not fit the item; the message says why."""


def letters_for(count: int) -> list[str]:
    """The first ``count`` choice letters: ``letters_for(4) == ['A', 'B', 'C', 'D']``."""
    if not 0 <= count <= len(LETTERS):
        raise AnswerError(f"cannot label {count} choices with letters")
    return list(LETTERS[:count])


_SEPARATOR_CHARS = r"\s,，、;；/|>→\-–—.。"
_SEPARATORS = re.compile(f"[{_SEPARATOR_CHARS}]+")
# A true/false word may also end with a full-width stop or an exclamation mark ("对！",
# "错．"); only there, so that no other kind reads "!" as a separator.
_TRUEFALSE_SEPARATORS = re.compile(f"[{_SEPARATOR_CHARS}．!！]+")


def _tokens(text: str) -> list[str]:
    """Split typed answer text into tokens: ``"D, A -> C B"`` -> ``['D', 'A', 'C', 'B']``.

    A run of letters with no separators (``"DACB"``) is split into single letters.
    """
    tokens: list[str] = []
    for part in _SEPARATORS.split(text.strip()):
        if not part:
            continue
        if part.isalpha() and part.isascii():
            tokens.extend(part.upper())
        else:
            tokens.append(part.upper())
    return tokens


def truefalse_label(word: str) -> str | None:
    """``A`` or ``B`` when ``word`` says true or false (对, False, 错误 ...), else None."""
    said = word.strip().lower()
    return next((label for label, words in TRUEFALSE_WORDS.items() if said in words), None)


def _truefalse_tokens(text: str) -> list[str]:
    """The tokens of a true/false answer, each true/false word read as its letter:
    ``"错。"`` -> ``['B']``, ``"对/错"`` -> ``['A', 'B']`` (two answers, refused as such)."""
    tokens: list[str] = []
    for part in _TRUEFALSE_SEPARATORS.split(text.strip()):
        label = truefalse_label(part)
        tokens.extend([label] if label else _tokens(part))
    return tokens


def _distinct_labels(
    tokens: Iterable[str], labels: Sequence[str], *, noun: str, one_of: str, empty: str
) -> list[str]:
    """The tokens in order, each one of ``labels`` and none twice; else an ``AnswerError``
    naming the ``noun`` (event, choice), the labels allowed (``one_of``), or ``empty``."""
    found: list[str] = []
    for token in tokens:
        if token not in labels:
            raise AnswerError(f"'{token}' is not one of {one_of}")
        if token in found:
            raise AnswerError(f"{noun} {token} appears more than once")
        found.append(token)
    if not found:
        raise AnswerError(empty)
    return found


def parse_order(text: str, labels: Sequence[str]) -> str:
    """Parse an ordering answer such as ``"D, A, C, B"``, ``"DACB"`` or ``"4 1 3 2"``.

    Digits count from 1 (``1`` is the first event).  The result must use every
    label exactly once.
    """

    def event_label(token: str) -> str:
        if not token.isdigit():
            return token
        index = int(token) - 1
        if not 0 <= index < len(labels):
            raise AnswerError(f"event number {token} is out of range 1-{len(labels)}")
        return labels[index]

    order = _distinct_labels(
        map(event_label, _tokens(text)),
        labels,
        noun="event",
        one_of=f"the events {', '.join(labels)}",
        empty="the order is empty",
    )
    missing = [label for label in labels if label not in order]
    if missing:
        raise AnswerError(
            f"the order must place all {len(labels)} events; missing {', '.join(missing)}"
        )
    return "".join(order)


def parse_choice_set(text: str, labels: Sequence[str], *, kind: ItemKind) -> str:
    """Parse a multiple-choice answer (``"B"``, ``"ABD"``, ``"A, B, D"``) into its labels in
    the order of ``labels`` (sorted letters: labels that are not, ``1``, ``2``, are the
    validator's to refuse, and must not stop it first).

    Single-answer and true/false items take exactly one letter; true/false also
    accepts 对/错 and true/false, a full stop or exclamation mark after them included.
    """
    tokens = _truefalse_tokens(text) if kind is ItemKind.TRUEFALSE else _tokens(text)
    letters = _distinct_labels(
        tokens,
        labels,
        noun="choice",
        one_of=f"the choices {''.join(labels)}",
        empty="no choice given",
    )
    if kind in (ItemKind.SINGLE, ItemKind.TRUEFALSE) and len(letters) != 1:
        raise AnswerError(f"a {kind.value} item takes exactly one letter, got {''.join(letters)}")
    return "".join(sorted(letters, key=list(labels).index))  # in the choices' order


def parse_answer(kind: ItemKind | str, text: str, labels: Sequence[str]) -> str:
    """Parse a typed answer or a key for an item of ``kind`` with choice ``labels``."""
    kind = ItemKind(kind)
    if kind is ItemKind.ORDERING:
        return parse_order(text, labels)
    return parse_choice_set(text, labels, kind=kind)


def option_count_bounds(kind: ItemKind | str) -> tuple[int, int]:
    """How many events or choices an item of this kind has: (fewest, most)."""
    kind = ItemKind(kind)
    if kind is ItemKind.ORDERING:
        return MIN_EVENTS, MAX_EVENTS
    if kind is ItemKind.TRUEFALSE:
        return 2, 2
    return MIN_CHOICES, MAX_CHOICES


def format_answer(kind: ItemKind | str, answer: str | None) -> str:
    """Display form: ``"D, A, C, B"`` for orders, ``"ABD"`` for choice sets, ``"—"`` for none.

    Text that is not letters alone (a key still being typed, ``"b, a"``) is shown as it
    is: spreading it letter by letter would garble it (``"b, ,,  , a"``)."""
    if not answer:
        return "—"
    if ItemKind(kind) is ItemKind.ORDERING and answer.isalpha():
        return ", ".join(answer)
    return answer


def key_without(kind: ItemKind | str, typed_key: str, removed: str) -> str:
    """The key as typed, with ``removed`` dropped and the letters after it moved up one.

    An order keeps the relative order of the other events (``D, A, B, C`` without B is
    ``C, A, B``); a choice set loses the removed choice.  So a removed choice can never
    leave the key silently pointing at the choice that took its letter.
    """
    letters = [c for c in typed_key.upper() if c in LETTERS and c != removed]
    shifted = "".join(c if c < removed else LETTERS[LETTERS.index(c) - 1] for c in letters)
    return format_answer(kind, shifted) if shifted else ""


def is_canonical(kind: ItemKind | str, answer: str, labels: Sequence[str]) -> bool:
    """True when ``answer`` is already in canonical stored form for this item."""
    try:
        return parse_answer(kind, answer, labels) == answer
    except AnswerError:
        return False


def ordered_pairs(order: str) -> set[tuple[str, str]]:
    """Every pair (earlier, later) implied by an order: ``"BAC"`` -> {(B,A), (B,C), (A,C)}."""
    return set(combinations(order, 2))


def pairwise_accuracy(answer: str | None, key: str) -> float:
    """Share of event pairs that ``answer`` puts in the key's relative order (0 if no answer)."""
    if not answer or len(key) < 2:
        return 0.0 if not answer else float(answer == key)
    if sorted(answer) != sorted(key):
        return 0.0
    key_pairs = ordered_pairs(key)
    agreeing = len(ordered_pairs(answer) & key_pairs)
    return agreeing / len(key_pairs)


def discordant_pairs(answer: str, key: str) -> list[tuple[str, str]]:
    """Pairs of events that ``answer`` orders differently from ``key`` (in key order)."""
    answer_pairs = ordered_pairs(answer)
    return [pair for pair in combinations(key, 2) if pair not in answer_pairs]


def differing_positions(answer: str, key: str) -> list[int]:
    """0-based positions at which two orders place different events."""
    return [i for i, (a, k) in enumerate(zip(answer, key, strict=False)) if a != k]


def is_chinese(language: str) -> bool:
    """Whether an item's language code is Chinese (``zh``, ``zh-CN``, ``ZH`` ...): the one
    rule for its prompt templates and its true/false words; any other code is English."""
    return language.lower().startswith("zh")


def truefalse_word(label: str, language: str = "zh") -> str:
    """对/错 (or true/false) for a true/false label."""
    if is_chinese(language):
        return "对" if label == TRUE_LABEL else "错"
    return "true" if label == TRUE_LABEL else "false"
