"""Item drafts and the validators every way into the database uses (import, generation, edits).

A draft is a plain record of one item before it is stored.  ``validate_draft``
returns every problem it finds, each naming the field, so that an importer can
report ``file:line: field: problem`` for all bad records at once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from db.answers import AnswerError, option_count_bounds, parse_answer
from db.vocabulary import ItemKind

MAX_TEXT_CHARS = 200_000  # one field; longer text is almost surely a broken file
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def language_of(*texts: str) -> str:
    """``zh`` when the texts hold Chinese characters, else ``en``: it picks prompt language."""
    return "zh" if any(_CJK.search(text) for text in texts if text) else "en"


@dataclass
class ItemDraft:
    """One item as read from a file or a model, not yet stored."""

    kind: str
    prompt: str
    choices: dict[str, str]
    key: str
    explanation: str | None = None
    language: str = "en"
    source_ref: str = ""  # "line 18", "record 3"
    meta: dict[str, Any] = field(default_factory=dict)
    provenance: dict[str, Any] = field(default_factory=dict)
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


def _text_problems(name: str, value: object, *, required: bool = True) -> list[Problem]:
    if value is None:
        return [Problem(name, "is missing")] if required else []
    if not isinstance(value, str):
        return [Problem(name, f"must be text, got {type(value).__name__}")]
    if required and not value.strip():
        return [Problem(name, "is empty")]
    if len(value) > MAX_TEXT_CHARS:
        return [Problem(name, f"is {len(value):,} characters long (limit {MAX_TEXT_CHARS:,})")]
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return [Problem(name, "is not valid UTF-8 text")]
    return []


def validate_draft(draft: ItemDraft) -> list[Problem]:
    """Every problem with ``draft``; an empty list means it can be stored.

    On success the key is rewritten into canonical form (``"D, A, C, B"`` -> ``"DACB"``).
    Problems name fields as the draft's format does (``draft.field_names``).
    """
    names = draft.field_names
    return [Problem(names.get(p.field, p.field), p.message) for p in _draft_problems(draft)]


def _draft_problems(draft: ItemDraft) -> list[Problem]:
    problems: list[Problem] = []
    try:
        kind = ItemKind(draft.kind)
    except ValueError:
        kinds = ", ".join(k.value for k in ItemKind)
        return [Problem("kind", f"'{draft.kind}' is not one of {kinds}")]

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

    if not isinstance(draft.key, str) or not draft.key.strip():
        problems.append(Problem("key", "is missing"))
    elif labels:
        try:
            draft.key = parse_answer(kind, draft.key, labels)
        except AnswerError as error:
            problems.append(Problem("key", f"'{draft.key}': {error}"))
    return problems
