"""The review guidelines: Markdown written by leads, stored in the database with versions.

A lead sets a new text (``vetbench guidelines set FILE.md``); each text that differs
from the newest one becomes the next version, and the older ones stay.  Every
judgment records the version in force when it was made (``reviewer.judging``).

The review app opens the guidelines at the section for the item's kind: the first
heading that names the kind (:data:`KIND_HEADING_WORDS`, English or Chinese, e.g.
"Ordering items" or "多项选择题"), so a lead's file needs no special markers.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func
from sqlmodel import Session, col, select
from sqlmodel.sql.expression import Select

from db.audit import record_audit
from db.errors import VetbenchError
from db.json_types import JsonObject, attributes_json
from db.models import Guidelines, Person
from db.people import require_lead
from db.rows import from_row
from db.vocabulary import ItemKind

__all__ = [
    "KIND_HEADING_WORDS",
    "MAX_GUIDELINES_CHARS",
    "GuidelinesError",
    "GuidelinesSet",
    "GuidelinesVersion",
    "current_guidelines",
    "current_guidelines_version",
    "get_guidelines",
    "guidelines_history",
    "kind_section",
    "set_guidelines",
]

MAX_GUIDELINES_CHARS = 200_000

KIND_HEADING_WORDS: dict[ItemKind, tuple[str, ...]] = {
    ItemKind.ORDERING: ("ordering", "排序"),
    ItemKind.SINGLE: ("single-answer", "single answer", "single-choice", "单项", "单选"),
    ItemKind.MULTI: ("multi-answer", "multiple answers", "multi-choice", "多项", "多选"),
    ItemKind.TRUEFALSE: ("true/false", "true-false", "true or false", "判断"),
}
"""Words that mark a heading as the section for a kind (compared case-insensitively)."""


class GuidelinesError(VetbenchError, ValueError):
    """Guidelines that cannot be stored as given; the message says why."""


@dataclass(frozen=True)
class GuidelinesVersion:
    """One stored version of the guidelines."""

    version: int
    text: str
    sha256: str
    file_name: str
    author: str
    created_at: datetime

    def to_json(self) -> JsonObject:
        """As ``guidelines list --json`` prints it (the text by its length)."""
        names = ("version", "author", "file_name", "sha256", "characters", "created_at")
        return attributes_json(self, *names, renamed={"file_name": "file"})

    @property
    def characters(self) -> int:
        return len(self.text)


@dataclass(frozen=True)
class GuidelinesSet:
    """What ``set_guidelines`` did: a new version, or nothing because the text is unchanged."""

    current: GuidelinesVersion
    changed: bool
    previous: int | None  # the version before (None: the first guidelines)


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _view(row: Guidelines, author: str) -> GuidelinesVersion:
    return from_row(GuidelinesVersion, row, author=author)


def _with_author() -> Select[Guidelines, str]:
    return select(Guidelines, col(Person.name)).join(
        Person, col(Person.id) == col(Guidelines.author_id)
    )


def get_guidelines(session: Session, version: int | None = None) -> GuidelinesVersion | None:
    """Version ``version`` of the guidelines, or the newest (None when there are none)."""
    query = _with_author()
    if version is None:
        query = query.order_by(col(Guidelines.version).desc()).limit(1)
    else:
        query = query.where(col(Guidelines.version) == version)
    row = session.exec(query).first()
    return None if row is None else _view(*row)


def current_guidelines(session: Session) -> GuidelinesVersion | None:
    return get_guidelines(session)


def current_guidelines_version(session: Session) -> int | None:
    """The newest version number (None: no guidelines yet); one small read."""
    return session.exec(select(func.max(col(Guidelines.version)))).one()


def current_guidelines_author_id(session: Session) -> int | None:
    """Who set the newest version (None: no guidelines yet)."""
    newest = select(col(Guidelines.author_id)).order_by(col(Guidelines.version).desc())
    return session.exec(newest.limit(1)).first()


def guidelines_history(session: Session) -> list[GuidelinesVersion]:
    """Every version, oldest first."""
    query = _with_author().order_by(col(Guidelines.version))
    return [_view(*row) for row in session.exec(query)]


# Item and table files: given to `guidelines set` by mistake, they would become the text
# every annotator reads (with g) and every judgment records as the version in force.
_DATA_SUFFIXES = (".csv", ".tsv", ".json", ".jsonl", ".xlsx", ".db")


def _check_text(text: str, file_name: str) -> str:
    where = file_name or "the guidelines"
    if file_name.lower().endswith(_DATA_SUFFIXES):
        raise GuidelinesError(
            f"{file_name} is a data file, not guidelines: give a Markdown or text file "
            "(FILE.md, FILE.txt); items come in with `vetbench import`"
        )
    if "\x00" in text:
        line = text[: text.index("\x00")].count("\n") + 1
        raise GuidelinesError(f"{where}, line {line}: holds a NUL character; is it a text file?")
    if not text.strip():
        raise GuidelinesError(f"{where} is empty")
    if len(text) > MAX_GUIDELINES_CHARS:
        raise GuidelinesError(
            f"{where} is {len(text):,} characters long; guidelines take at most "
            f"{MAX_GUIDELINES_CHARS:,}"
        )
    return text


def set_guidelines(session: Session, text: str, *, lead: str, file_name: str = "") -> GuidelinesSet:
    """Store ``text`` as the next version (leads only), with an audit event; the caller
    commits.  A text equal to the newest version stores nothing."""
    text = _check_text(text, file_name)
    person = require_lead(session, lead, to="set the guidelines")
    newest = get_guidelines(session)
    digest = _sha256(text)
    if newest is not None and newest.sha256 == digest:
        return GuidelinesSet(newest, changed=False, previous=newest.version)
    version = (newest.version if newest is not None else 0) + 1
    assert person.id is not None
    row = Guidelines(
        version=version,
        text=text,
        sha256=digest,
        file_name=file_name[:255],
        author_id=person.id,
    )
    session.add(row)
    session.flush()
    record_audit(
        session,
        person.name,
        "guidelines",
        f"guidelines:{version}",
        version=version,
        previous=newest.version if newest is not None else None,
        sha256=digest,
        file=file_name,
        characters=len(text),
    )
    return GuidelinesSet(
        _view(row, person.name), changed=True, previous=newest.version if newest else None
    )


def kind_section(headings: Sequence[str], kind: ItemKind | str) -> int | None:
    """The index of the first heading that names ``kind`` (None: no such heading)."""
    words = KIND_HEADING_WORDS[ItemKind(kind)]
    for index, heading in enumerate(headings):
        folded = heading.casefold()
        if any(word in folded for word in words):
            return index
    return None
