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
from db.json_types import JsonObject, fields_json
from db.models import ItemRevision
from db.rows import from_row
from db.validation import RevisionContent
from db.vocabulary import ItemKind

LineTag = Literal["header", "hunk", "context", "removed", "added"]


@dataclass(frozen=True)
class RevisionSummary(RevisionContent):
    """One revision of an item, as plain data (the history, the diff and the lead's case).

    The field order is the key order of ``earlier_revisions`` in ``conflicts --json``."""

    created_at: datetime | None  # None: not stored yet (the edit form's preview of a change)
    kind: str  # the kind its key is written in (an edit may change it)

    def to_json(self) -> JsonObject:
        """Its fields but the kind, as ``conflicts --json`` has always printed them."""
        return {name: value for name, value in fields_json(self).items() if name != "kind"}


@dataclass(frozen=True)
class DiffLine:
    """One line of a revision diff; ``changes`` are (start, end) spans that differ."""

    tag: LineTag
    text: str
    changes: tuple[tuple[int, int], ...] = ()


def revision_summary(row: ItemRevision | Row[Any]) -> RevisionSummary:
    """A stored revision (an ``ItemRevision`` or a row of its columns) as plain data."""
    return from_row(RevisionSummary, row, choices=dict(row.choices))


def revision_history(db: Database, item_id: str) -> list[RevisionSummary]:
    """Every revision of the item, oldest first (empty when there is no such item)."""
    with db.session() as session:
        return [revision_summary(row) for row in get_revisions(session, item_id)]


def revision_lines(revision: RevisionSummary, *, with_kind: bool = False) -> list[str]:
    """A revision as the lines a diff compares: (its kind,) prompt, each choice, key,
    explanation."""
    item_kind = ItemKind(revision.kind)
    prompt_label = "question" if item_kind.is_mcq else "scenario"
    lines = [f"kind: {item_kind.value}"] if with_kind else []
    lines.append(f"{prompt_label}:")
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
        # Text only added (or only removed) leaves an empty span on the other side: where.
        old_spans.append((i1, i2))
        new_spans.append((j1, j2))
    return tuple(old_spans), tuple(new_spans)


def _block(raw: list[str], start: int, sign: str) -> list[str]:
    """The run of lines from ``start`` that begin with ``sign`` (``-`` or ``+``), short of
    the ``---`` / ``+++`` file headers."""
    return list(
        takewhile(lambda line: line.startswith(sign) and not line.startswith(sign * 3), raw[start:])
    )


def diff_revisions(old: RevisionSummary, new: RevisionSummary) -> list[DiffLine]:
    """A unified diff of two revisions (their kinds too, when they differ); a replaced line
    pair also marks the changed characters."""
    with_kind = old.kind != new.kind
    raw = list(
        difflib.unified_diff(
            revision_lines(old, with_kind=with_kind),
            revision_lines(new, with_kind=with_kind),
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


def comment_like_growth(old: str, new: str, comment: str) -> str:
    """The text by which a field grew from ``old`` to ``new`` when it reads like a
    comment for the lead rather than part of the item; "" otherwise.

    That is the comment's own text, found in the new text and not in the old, or text
    added at the very end (a teacher typed ``选项C应为0.404，另外本题是单选题`` after the
    question instead of in the comment): a fix inside the text is not asked about."""
    comment = comment.strip()
    if comment and comment in new and comment not in old:
        return comment
    if new.startswith(old):
        return new[len(old) :].strip()
    return ""


def compact_diff(lines: list[DiffLine], context: int = 60) -> list[DiffLine]:
    """``lines`` with long text cut down to what changed, so that the changes fit a small
    screen: a changed line keeps its sign and label and ``context`` characters around
    each changed span (the rest is ``…``), an unchanged line its first ``2 * context``."""
    return [_compact_line(line, context) for line in lines]


def _compact_line(line: DiffLine, context: int) -> DiffLine:
    text = line.text
    if line.tag == "context":
        keep = 2 * context
        return line if len(text) <= keep + 1 else DiffLine("context", text[:keep] + "…")
    if line.tag not in ("removed", "added") or not line.changes:
        return line
    label = len(text) - len(text[1:].lstrip(" ")) if text[1:2] == " " else text.find(": ") + 2
    windows: list[list[int]] = [[0, max(label, 1)]]  # the sign and the label ("+C: ")
    for start, end in line.changes:
        window = [max(start - context, 0), min(end + context, len(text))]
        if window[0] <= windows[-1][1] + 1:  # touching or overlapping: one window
            windows[-1][1] = max(windows[-1][1], window[1])
        else:
            windows.append(window)
    pieces: list[str] = []
    offsets: list[tuple[int, int]] = []  # (where a window starts in text, in the result)
    length = 0
    for index, (start, end) in enumerate(windows):
        if index and start > windows[index - 1][1]:
            pieces.append("…")
            length += 1
        offsets.append((start, length))
        pieces.append(text[start:end])
        length += end - start
    if windows[-1][1] < len(text):
        pieces.append("…")

    def moved(position: int) -> int:
        start, at = max((o for o in offsets if o[0] <= position), key=lambda o: o[0])
        return at + position - start

    spans = tuple((moved(start), moved(start) + end - start) for start, end in line.changes)
    return DiffLine(line.tag, "".join(pieces), spans)
