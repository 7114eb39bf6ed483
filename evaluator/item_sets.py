"""Which items a run evaluated, as one comparable value: the release, or the hash of an ad
hoc set.

Every run records the hash of the items it evaluated (``db.releases.item_set_hash``: item
ids and content hashes), and the release's name when it evaluated a whole release.  Two
runs are compared or averaged only on the same item set; :func:`group_by_item_set` keeps
them apart, and :class:`ItemSet` says which set a figure is on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from db.items import ItemSnapshot
from db.json_types import JsonObject
from db.releases import item_set_hash, snapshot_hash

__all__ = ["ItemSet", "group_by_item_set", "item_set_of"]

T = TypeVar("T")


@dataclass(frozen=True)
class ItemSet:
    """A run's item set: its hash (None for runs made before item sets were recorded), and
    the release when the run evaluated a whole one."""

    hash: str | None
    release: str | None = None

    @property
    def label(self) -> str:
        if self.hash is None:
            return "item set not recorded (a run from before releases)"
        if self.release is not None:
            return f"release {self.release} ({self.hash[:12]})"
        return f"ad hoc item set {self.hash[:12]}"

    def to_json(self) -> JsonObject:
        return {"release": self.release, "hash": self.hash}


def item_set_of(
    items: Iterable[ItemSnapshot], *, release: str | None, release_hash: str | None
) -> ItemSet:
    """The item set of ``items``; a release's only when they are exactly its items."""
    digest = item_set_hash((item.id, snapshot_hash(item)) for item in items)
    return ItemSet(digest, release if release is not None and digest == release_hash else None)


def group_by_item_set(
    entries: Sequence[T], item_set: Callable[[T], ItemSet]
) -> dict[ItemSet, list[T]]:
    """``entries`` by item set, in the order each set first appears."""
    groups: dict[ItemSet, list[T]] = {}
    for entry in entries:
        groups.setdefault(item_set(entry), []).append(entry)
    return groups
