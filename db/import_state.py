"""What the import of one file remembers of the records it has read, kept on disk.

A file may hold a million records, and memory must not grow with them (issue 16): the
importer stores records in batches as it reads them, and what it needs again later is
kept here rather than in Python objects:

- :class:`SeenIds`: every id the file used and where (a scratch SQLite table), so a
  repeated id is named with the place it was first used;
- :class:`CheckedItems`: the new and revised items in file order, for near-duplicate
  detection once the file is stored: canonical texts and ids in spill files
  (``db.spill``), kind and whether revised as one byte each, and the duplicate links
  JSONL records state;
- :class:`StoredTexts`: the items stored before the import, in creation order, whose
  texts the new ones are compared with (those the file revises drop out).

Everything lives in the temporary folder and is removed when the import ends.
"""

from __future__ import annotations

import json
import os
import sqlite3
import tempfile
from array import array
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass

from sqlmodel import Session

from db.flags import stored_texts
from db.spill import TextSpill
from db.text_sources import TextSource, WithoutPositions

_QUERY_IDS = 500  # ids per IN (...) query on the scratch table


class SeenIds:
    """The ids one file has used so far, each with the place it was first used."""

    def __init__(self) -> None:
        self._directory = tempfile.TemporaryDirectory(prefix="vetbench-import-")
        self._db = sqlite3.connect(os.path.join(self._directory.name, "ids.sqlite"))
        # A scratch file: nothing to recover after a crash, so no journal and no syncing.
        for pragma in ("journal_mode = OFF", "synchronous = OFF", "cache_size = -8000"):
            self._db.execute(f"PRAGMA {pragma}")
        self._db.execute(
            "CREATE TABLE seen (id TEXT PRIMARY KEY, place TEXT NOT NULL) WITHOUT ROWID"
        )

    def close(self) -> None:
        self._db.close()
        self._directory.cleanup()

    def claim(self, ids_and_places: Sequence[tuple[str, str]]) -> list[str | None]:
        """Record each id at its place, in order; for an id used before (in an earlier batch
        or earlier in this one), the place where it was first used instead."""
        ids = list(dict.fromkeys(item_id for item_id, _ in ids_and_places))
        first_place: dict[str, str] = {}
        for start in range(0, len(ids), _QUERY_IDS):
            chunk = ids[start : start + _QUERY_IDS]
            marks = ",".join("?" * len(chunk))
            first_place.update(
                self._db.execute(f"SELECT id, place FROM seen WHERE id IN ({marks})", chunk)
            )
        used_before: list[str | None] = []
        new: list[tuple[str, str]] = []
        for item_id, place in ids_and_places:
            earlier = first_place.get(item_id)
            used_before.append(earlier)
            if earlier is None:
                first_place[item_id] = place
                new.append((item_id, place))
        with self._db:
            self._db.executemany("INSERT INTO seen (id, place) VALUES (?, ?)", new)
        return used_before


@dataclass(frozen=True)
class StatedLink:
    """A JSONL record's own word on its duplicate (``suspected_duplicate_of`` may be None)."""

    item_id: str
    duplicate_of: str | None
    similarity: float | None
    revised: bool
    kind: str


@dataclass(frozen=True)
class CheckedItem:
    """One new or revised item, as near-duplicate detection's results are applied to it."""

    position: int  # among the checked items, from 0
    item_id: str
    kind: str
    revised: bool
    states_duplicate: bool  # a JSONL record that names its duplicate (or none) itself


class CheckedItems:
    """The new and revised items of one file, in file order (see the module docstring)."""

    def __init__(self) -> None:
        self.texts = TextSpill()  # canonical texts (``db.canonical_text.item_text``)
        self.ids = TextSpill()
        self._kind_names: list[str] = []
        self._kinds = array("B")
        self._revised = array("B")
        self._states = array("B")
        self._stated = TextSpill()  # one JSON array per stated link

    def close(self) -> None:
        for spill in (self.texts, self.ids, self._stated):
            spill.close()

    def __len__(self) -> int:
        return len(self.ids)

    def append(
        self, item_id: str, text: str, kind: str, *, revised: bool, stated: StatedLink | None
    ) -> None:
        if kind not in self._kind_names:
            self._kind_names.append(kind)
        self.texts.append(text)
        self.ids.append(item_id)
        self._kinds.append(self._kind_names.index(kind))
        self._revised.append(revised)
        self._states.append(stated is not None)
        if stated is not None:
            self._stated.append(
                json.dumps([stated.item_id, stated.duplicate_of, stated.similarity, revised, kind])
            )

    def items(self, start: int, stop: int) -> list[CheckedItem]:
        """The checked items at positions ``start`` to ``stop - 1``."""
        ids = self.ids.read(start, stop)
        return [
            CheckedItem(
                position,
                item_id,
                self._kind_names[self._kinds[position]],
                bool(self._revised[position]),
                bool(self._states[position]),
            )
            for position, item_id in enumerate(ids, start=start)
        ]

    def stated_links(self, batch: int) -> Iterator[list[StatedLink]]:
        """The links JSONL records stated, in file order, ``batch`` at a time."""
        for start in range(0, len(self._stated), batch):
            yield [
                StatedLink(item_id, duplicate_of, similarity, bool(revised), kind)
                for item_id, duplicate_of, similarity, revised, kind in (
                    json.loads(line) for line in self._stated.read(start, start + batch)
                )
            ]


class StoredTexts:
    """The items stored before an import, in creation order: ids and canonical texts."""

    def __init__(self, session: Session) -> None:
        self._ids = TextSpill()
        self._texts = TextSpill()
        for batch in stored_texts(session):
            self._ids.extend(item_id for item_id, _ in batch)
            self._texts.extend(text for _, text in batch)
        # What texts() and ids() read: the spills, or views of them without the left-out
        # items, made once (ids() is called for every batch of links).
        self._text_view: TextSource = self._texts
        self._id_view: TextSource = self._ids

    def close(self) -> None:
        self._ids.close()
        self._texts.close()

    def __len__(self) -> int:
        return len(self._ids)

    def leave_out(self, item_ids: Collection[str], batch: int = 20_000) -> None:
        """Items the import revised: their old text is compared with nothing."""
        if not item_ids:
            return
        wanted = set(item_ids)
        positions = [
            start + offset
            for start in range(0, len(self._ids), batch)
            for offset, item_id in enumerate(self._ids.read(start, start + batch))
            if item_id in wanted
        ]
        self._text_view = WithoutPositions(self._texts, positions)
        self._id_view = WithoutPositions(self._ids, positions)

    def texts(self) -> TextSource:
        """The texts compared with, revised items left out (positions count without them)."""
        return self._text_view

    def ids(self) -> TextSource:
        """The ids of :meth:`texts`, position by position."""
        return self._id_view


class ImportState:
    """Everything above for one file, closed together (``contextlib.closing``)."""

    def __init__(self, session: Session) -> None:
        self.stored = StoredTexts(session)  # first: the one that reads the database
        self.seen = SeenIds()
        self.checked = CheckedItems()

    def close(self) -> None:
        self.seen.close()
        self.checked.close()
        self.stored.close()
