"""Item drafts and the validators every way into the database uses (import, generation, edits).

A draft is a plain record of one item before it is stored.  ``validate_draft``
returns every problem it finds, each naming the field, so that an importer can
report ``file:line: field: problem`` for all bad records at once.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from db.answers import (
    FALSE_LABEL,
    TRUE_LABEL,
    AnswerError,
    option_count_bounds,
    parse_answer,
    truefalse_label,
)
from db.errors import VetbenchError
from db.json_types import JsonObject
from db.models import Item, ItemRevision, Person
from db.vocabulary import ItemKind

MAX_TEXT_CHARS = 200_000  # one field; longer text is almost surely a broken file


def _column_length(table: Any, column: str) -> int:
    """The ``max_length`` a column has in ``db/models.py``: PostgreSQL enforces it, SQLite not."""
    length = table.__table__.c[column].type.length
    assert isinstance(length, int), f"{table.__name__}.{column} has no length"
    return length


MAX_ID_CHARS = _column_length(Item, "id")
MAX_SOURCE_CHARS = _column_length(Item, "source")
MAX_SOURCE_REF_CHARS = _column_length(Item, "source_ref")
MAX_LANGUAGE_CHARS = _column_length(Item, "language")
MAX_KEY_CHARS = _column_length(ItemRevision, "key")
MAX_NAME_CHARS = _column_length(Person, "name")
# Characters that must never be part of a name: controls (newline, ESC, ...), line and
# paragraph separators, lone surrogates, and the bidirectional overrides that reorder text.
_NOT_IN_NAMES = frozenset({"Cc", "Cs", "Zl", "Zp"})
_BIDI_CONTROLS = frozenset(chr(c) for c in [*range(0x202A, 0x202F), *range(0x2066, 0x206A)])
# Invisible format characters (category Cf: U+200B ZERO WIDTH SPACE, U+2060 WORD JOINER,
# U+FEFF, U+00AD SOFT HYPHEN, ...) would make a name print exactly like another; only the
# zero-width non-joiner and joiner, which Persian and Indic names need between letters, pass.
JOINERS = frozenset({"\u200c", "\u200d"})
# What two names are compared without (``same_name_key``): every format character (names
# stored before they were refused too), the combining grapheme joiner, variation selectors
# and the Hangul fillers, all of them invisible.
_IGNORED_IN_COMPARISON = frozenset(
    chr(c)
    for c in [
        0x034F,
        0x115F,
        0x1160,
        0x3164,
        0xFFA0,
        *range(0xFE00, 0xFE10),
        *range(0xE0100, 0xE01F0),
    ]  # fmt: skip
)
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def language_of(*texts: str) -> str:
    """``zh`` when the texts hold Chinese characters, else ``en``: it picks prompt language."""
    return "zh" if any(_CJK.search(text) for text in texts if text) else "en"


@dataclass(frozen=True)
class RevisionContent:
    """What every revision of an item holds, stored or not: its number, text and key,
    and who wrote it and why.  The stored, the imported and the viewed revision add
    their own fields to it (``db/items.py``, ``db/formats/base.py``,
    ``reviewer/revisions.py``); the field order is their positional order."""

    number: int
    prompt: str
    choices: dict[str, str]
    key: str
    explanation: str | None
    author: str
    change_note: str


@dataclass
class ItemDraft:
    """One item as read from a file or a model, not yet stored."""

    kind: str
    prompt: str
    choices: dict[str, str]
    key: str
    explanation: str | None = None
    # An open code stored as given (``en``, ``zh``, ``zh-Hant``, ``fr``): ``zh…`` items are
    # asked in the Chinese prompt templates, all others in the English ones.
    language: str = "en"
    source_ref: str = ""  # "line 18", "record 3"
    meta: JsonObject = field(default_factory=dict)
    provenance: JsonObject = field(default_factory=dict)
    item_id: str | None = None  # set by formats that carry their own ids (JSONL)
    # How the record's own format names the validated fields ("key" -> "Answer" in
    # EconLogicQA CSV), so that a problem names the column or field the user wrote.
    field_names: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a record: which field, and what."""

    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.field}: {self.message}" if self.field else self.message


class InvalidName(VetbenchError, ValueError):
    """A person's name that cannot be stored; the message says why."""


def _described(char: str) -> str:
    """``U+200B (ZERO WIDTH SPACE)``."""
    return f"U+{ord(char):04X} ({unicodedata.name(char, 'a format character')})"


def _unprintable(text: str) -> str | None:
    """Why ``text`` cannot name anything, if it cannot: the first character that is not
    printable text on one line (a control, a line break, a bidirectional override, an
    invisible format character), or a joiner at either end, where it joins nothing."""
    for char in text:
        category = unicodedata.category(char)
        if category in _NOT_IN_NAMES or char in _BIDI_CONTROLS:
            return f"must be printable text on one line; it holds U+{ord(char):04X}"
        if category == "Cf" and char not in JOINERS:
            return (
                f"must be printable text on one line; it holds {_described(char)}, "
                "which is invisible"
            )
    for end in {text[:1], text[-1:]} & JOINERS:
        return f"must not begin or end with {_described(end)}, which is invisible there"
    return None


def _without_invisible(text: str) -> str:
    return "".join(
        char
        for char in text
        if char not in _IGNORED_IN_COMPARISON and unicodedata.category(char) != "Cf"
    )


def _single_spaced(text: str) -> str:
    """Words single-spaced, and none between two wide (CJK) characters: Chinese, Japanese
    and Korean names are written without a space, so "张 伟" and "王\u3000芳" are 张伟 and
    王芳 spaced otherwise (where "bo b" and "bob" are two Latin names)."""
    words: list[str] = []
    for word in text.split():
        if words and _wide(words[-1][-1]) and _wide(word[0]):
            words[-1] += word
        else:
            words.append(word)
    return " ".join(words)


def _wide(char: str) -> bool:
    return unicodedata.east_asian_width(char) in ("W", "F")


# The ways two names can differ and still name one person, in the order they are undone.
_SAME_NAME_STEPS = (
    ("invisible characters", _without_invisible),
    (
        "compatibility form (full-width or styled letters)",
        lambda text: unicodedata.normalize("NFKC", text),
    ),
    ("case", str.casefold),
    ("spacing", _single_spaced),
)


def _undone(name: str, skip: str) -> str:
    for what, step in _SAME_NAME_STEPS:
        if what != skip:
            name = step(name)
    return name


def same_name_key(name: str) -> str:
    """What ``name`` is compared with other names as: without invisible characters, in
    NFKC, case-folded, single-spaced.  Two names with the same key are one person to
    anyone reading them (``alice``, ``Alice``, alice with a zero-width joiner inside,
    full-width ``ａｌｉｃｅ``)."""
    return unicodedata.normalize("NFKC", _undone(name, "").casefold())  # NFKC_Casefold, near enough


def how_names_differ(name: str, other: str) -> str:
    """In what two names with the same :func:`same_name_key` differ, in words: ``case``,
    ``invisible characters (U+200D) and case``."""
    ways = [what for what, _step in _SAME_NAME_STEPS if _undone(name, what) != _undone(other, what)]
    if "invisible characters" in ways:
        hidden = sorted({char for char in name + other if _without_invisible(char) == ""})
        codes = ", ".join(f"U+{ord(char):04X}" for char in hidden)
        ways[ways.index("invisible characters")] = f"invisible characters ({codes})"
    if not ways:
        return "case, width or invisible characters"
    return " and ".join([", ".join(ways[:-1]), ways[-1]] if len(ways) > 1 else ways)


def validate_person_name(name: str) -> str:
    """``name`` without surrounding spaces, if it can name a person; else :class:`InvalidName`.

    A name is printable text on one line (no newline, ESC or other control character,
    no bidirectional override, no invisible format character but the joiners ZWNJ and
    ZWJ between letters), not empty, at most ``MAX_NAME_CHARS`` characters: it is shown
    in tables and logs, where anything else could forge a line or a second name that
    prints like the first.  Whether it reads as a registered name is
    ``db.people.refuse_same_person``'s to say (``same_name_key``).
    """
    cleaned = name.strip()
    if not cleaned:
        raise InvalidName("a person needs a non-empty name")
    if len(cleaned) > MAX_NAME_CHARS:
        raise InvalidName(f"a name is at most {MAX_NAME_CHARS} characters, got {len(cleaned)}")
    reason = _unprintable(cleaned)
    if reason:
        raise InvalidName(f"a name {reason}")
    return cleaned


def length_problems(name: str, value: str | None, limit: int) -> list[Problem]:
    """A problem when ``value`` is longer than the column holding it allows."""
    if value is not None and len(value) > limit:
        return [Problem(name, f"is {len(value):,} characters long (limit {limit:,})")]
    return []


def _nul_places(value: object, where: str) -> Iterator[str]:
    if isinstance(value, str):
        if "\x00" in value:
            yield where
    elif isinstance(value, dict):
        for key, inner in value.items():
            if isinstance(key, str) and "\x00" in key:
                yield f"{where} (a key)"
            yield from _nul_places(inner, f"{where}.{key}" if where else str(key))
    elif isinstance(value, list | tuple):
        for index, inner in enumerate(value):
            yield from _nul_places(inner, f"{where}[{index}]")


def nul_problems(name: str, value: object) -> list[Problem]:
    """A problem for each place in ``value`` (text, or JSON-like data) holding a NUL byte.

    PostgreSQL cannot store NUL in text or JSON, so it is refused on every backend.
    """
    return [Problem(place, "holds a NUL byte (\\0)") for place in _nul_places(value, name)]


def identifier_problems(name: str, value: str | None) -> list[Problem]:
    """A problem when ``value``, an item's id, source or language, is not printable text
    on one line without surrounding whitespace (the rule of person names).

    Such values are compared exactly and shown in lists: ``" x1 "`` would be a second
    item that looks like ``x1``, and a newline or ESC could forge a line.  Refused, never
    trimmed, so that what is stored is what the file says.
    """
    if value is None:
        return []
    if "\x00" in value:
        return nul_problems(name, value)
    if not value.strip():
        return [Problem(name, "is empty")]
    reason = _unprintable(value)
    if reason:
        return [Problem(name, reason)]
    if value != value.strip():
        return [Problem(name, f"{value!r} has whitespace around it")]
    return []


def _text_problems(name: str, value: object, *, required: bool = True) -> list[Problem]:
    if value is None:
        return [Problem(name, "is missing")] if required else []
    if not isinstance(value, str):
        return [Problem(name, f"must be text, got {type(value).__name__}")]
    if required and not value.strip():
        return [Problem(name, "is empty")]
    if len(value) > MAX_TEXT_CHARS:
        return [Problem(name, f"is {len(value):,} characters long (limit {MAX_TEXT_CHARS:,})")]
    if not is_utf8_text(value):
        return [Problem(name, "is not valid UTF-8 text")]
    return nul_problems(name, value)


def is_utf8_text(value: str) -> bool:
    """False for text read from bytes that are not UTF-8 (kept as lone surrogates by
    ``db/formats/base.py``, so that the field and line holding them can be named)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def validate_draft(draft: ItemDraft) -> list[Problem]:
    """Every problem with ``draft``; an empty list means it can be stored.

    On success the key is rewritten into canonical form (``"D, A, C, B"`` -> ``"DACB"``).
    Problems name fields as the draft's format does (``draft.field_names``).
    """
    names = draft.field_names
    return [Problem(names.get(p.field, p.field), p.message) for p in _draft_problems(draft)]


def kind_problem(kind: str) -> Problem | None:
    """Why ``kind`` is not an item kind, if it is not one."""
    if kind in {k.value for k in ItemKind}:
        return None
    return Problem("kind", f"'{kind}' is not one of {', '.join(k.value for k in ItemKind)}")


def _draft_problems(draft: ItemDraft) -> list[Problem]:
    problems: list[Problem] = []
    if unknown := kind_problem(draft.kind):
        return [unknown]
    kind = ItemKind(draft.kind)

    prompt_name = "question" if kind.is_mcq else "scenario"
    problems += _text_problems(prompt_name, draft.prompt)
    problems += _text_problems("explanation", draft.explanation, required=False)

    labels = list(draft.choices)
    noun = "events" if kind is ItemKind.ORDERING else "choices"
    fewest, most = option_count_bounds(kind)
    if not fewest <= len(labels) <= most:
        if kind is ItemKind.ORDERING:
            rule = f"an ordering item has {fewest} to {most} events"
        elif kind is ItemKind.TRUEFALSE:
            rule = f"a true/false item has exactly {most} choices"
        else:
            rule = f"a {kind.value} item has {fewest} to {most} choices"
        problems.append(Problem(noun, f"{rule}, got {len(labels)}"))
    expected = [chr(ord("A") + i) for i in range(len(labels))]
    if labels != expected:
        problems.append(
            Problem(noun, f"labels must be {', '.join(expected)} in order, got {', '.join(labels)}")
        )
    for label, text in draft.choices.items():
        problems += _text_problems(f"{noun[:-1]} {label}", text)
    if kind is ItemKind.TRUEFALSE:
        problems += _truefalse_choice_problems(draft.choices)

    if not isinstance(draft.key, str) or not draft.key.strip():
        problems.append(Problem("key", "is missing"))
    elif "\x00" in draft.key:
        problems += nul_problems("key", draft.key)
    elif labels:
        try:
            draft.key = parse_answer(kind, draft.key, labels)
        except AnswerError as error:
            problems.append(Problem("key", f"'{draft.key}': {error}"))
    # What PostgreSQL enforces, checked on every backend so that a SQLite project can move.
    problems += length_problems("language", draft.language, MAX_LANGUAGE_CHARS)
    problems += length_problems("source_ref", draft.source_ref, MAX_SOURCE_REF_CHARS)
    if draft.item_id is not None:
        problems += length_problems("id", draft.item_id, MAX_ID_CHARS)
    problems += identifier_problems("language", draft.language)
    problems += identifier_problems("id", draft.item_id)
    for name, value in (
        ("source_ref", draft.source_ref),
        ("meta", draft.meta),
        ("provenance", draft.provenance),
    ):
        problems += nul_problems(name, value)
    return problems


def _truefalse_choice_problems(choices: dict[str, str]) -> list[Problem]:
    """A problem unless the choices say true then false: A 对/true/yes ..., B 错/false/no ...
    (what a true/false key means, and what the app shows beside it, rest on this)."""
    said = [truefalse_label(text) if isinstance(text, str) else None for text in choices.values()]
    if said == [TRUE_LABEL, FALSE_LABEL]:
        return []
    return [
        Problem(
            "choices",
            "a truefalse item's choices are A true and B false (对/错, true/false, yes/no); "
            "these are not",
        )
    ]


def kind_change_problems(old: ItemKind, new: ItemKind) -> list[Problem]:
    """Why an item of kind ``old`` cannot become ``new``: an order is never a choice of
    answers, nor the other way round.

    The rest is the new kind's to check, as for any draft (``validate_draft``): the key,
    the number of choices, and that a true/false item's ``choices`` say true and false."""
    if old is new:
        return []
    if ItemKind.ORDERING in (old, new):
        article = "an" if old is ItemKind.ORDERING else "a"
        return [
            Problem(
                "kind",
                f"{article} {old.value} item cannot become {new.value}: an order is not a "
                "choice of answers (make a new item instead)",
            )
        ]
    return []
