"""Viewing an item's revisions: their history and the difference between two of them.

Edits never overwrite: each makes a new revision.  This module turns two
revisions into a line diff (``difflib``) that the TUI colours and the CLI prints,
with the changed characters inside a replaced line marked as well, which matters
for long one-line scenarios and for Chinese text without spaces.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from datetime import datetime
from itertools import takewhile
from typing import Any, Literal

from sqlalchemy import Row

from db.answers import format_answer
from db.engine import Database
from db.items import get_revisions
from db.models import Item, ItemRevision
from db.rows import from_row
from db.validation import RevisionContent
from db.vocabulary import ItemKind

LineTag = Literal["header", "hunk", "context", "removed", "added"]


@dataclass(frozen=True)
class RevisionSummary(RevisionContent):
    """One revision of an item, as plain data (the history, the diff and the lead's case).

    The field order is the key order of ``earlier_revisions`` in ``conflicts --json``."""

    created_at: datetime | None  # None: not stored yet (the edit form's preview of a change)


@dataclass(frozen=True)
class DiffLine:
    """One line of a revision diff; ``changes`` are (start, end) spans that differ."""

    tag: LineTag
    text: str
    changes: tuple[tuple[int, int], ...] = ()


def revision_summary(row: ItemRevision | Row[Any]) -> RevisionSummary:
    """A stored revision (an ``ItemRevision`` or a row of its columns) as plain data."""
    return from_row(RevisionSummary, row, choices=dict(row.choices))


def revision_history(db: Database, item_id: str) -> tuple[str, list[RevisionSummary]]:
    """The item's kind and every revision, oldest first (empty when there is no such item)."""
    with db.session() as session:
        item = session.get(Item, item_id)
        if item is None:
            return "", []
        return item.kind, [revision_summary(row) for row in get_revisions(session, item_id)]


def revision_lines(kind: str, revision: RevisionSummary) -> list[str]:
    """A revision as the lines a diff compares: prompt, each choice, key, explanation."""
    item_kind = ItemKind(kind)
    prompt_label = "question" if item_kind.is_mcq else "scenario"
    lines = [f"{prompt_label}:"]
    lines += [f"  {line}" for line in revision.prompt.splitlines() or [""]]
    lines += [f"{label}: {text}" for label, text in revision.choices.items()]
    lines.append(f"key: {format_answer(item_kind, revision.key)}")
    lines.append("explanation:")
    lines += [f"  {line}" for line in (revision.explanation or "").splitlines() or ["—"]]
    return lines


def _inline_spans(
    old: str, new: str
) -> tuple[tuple[tuple[int, int], ...], tuple[tuple[int, int], ...]]:
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    old_spans: list[tuple[int, int]] = []
    new_spans: list[tuple[int, int]] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if i2 > i1:
            old_spans.append((i1, i2))
        if j2 > j1:
            new_spans.append((j1, j2))
    return tuple(old_spans), tuple(new_spans)


def _block(raw: list[str], start: int, sign: str) -> list[str]:
    """The run of lines from ``start`` that begin with ``sign`` (``-`` or ``+``), short of
    the ``---`` / ``+++`` file headers."""
    return list(
        takewhile(lambda line: line.startswith(sign) and not line.startswith(sign * 3), raw[start:])
    )


def diff_revisions(kind: str, old: RevisionSummary, new: RevisionSummary) -> list[DiffLine]:
    """A unified diff of two revisions; a replaced line pair also marks the changed characters."""
    raw = list(
        difflib.unified_diff(
            revision_lines(kind, old),
            revision_lines(kind, new),
            fromfile=f"revision {old.number}",
            tofile=f"revision {new.number}",
            lineterm="",
            n=2,
        )
    )
    lines: list[DiffLine] = []
    index = 0
    while index < len(raw):
        text = raw[index]
        if text.startswith(("---", "+++")):
            lines.append(DiffLine("header", text))
        elif text.startswith("@@"):
            lines.append(DiffLine("hunk", text))
        elif text.startswith("-"):
            # Pair a block of removed lines with the added block right after it.
            removed = _block(raw, index, "-")
            added = _block(raw, index + len(removed), "+")
            index += len(removed) + len(added)
            # A removed line and the added line in its place: which characters changed.
            pairs = [
                _inline_spans(old[1:], new[1:])
                for old, new in zip(removed, added, strict=False)  # the shorter block pairs
            ]
            sides: tuple[tuple[LineTag, list[str]], ...] = (("removed", removed), ("added", added))
            for side, (tag, block) in enumerate(sides):
                for position, line in enumerate(block):
                    spans = pairs[position][side] if position < len(pairs) else ()
                    # The spans count from after the line's sign.
                    lines.append(DiffLine(tag, line, tuple((a + 1, b + 1) for a, b in spans)))
            continue
        elif text.startswith("+"):
            lines.append(DiffLine("added", text))
        else:
            lines.append(DiffLine("context", text))
        index += 1
    return lines
