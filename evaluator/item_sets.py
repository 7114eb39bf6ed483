"""Which items a run evaluated, as one comparable value: the release, or the hash of an ad
hoc set.

Every run records the hash of the items it evaluated (``db.releases.item_set_hash``: item
ids and content hashes), and the release's name when it drew them from a release (the
hash is the release's own when it evaluated all of it).  Tables
are made per release (:func:`group_by_release`) and say where runs shown side by side
evaluated different items (:func:`differing_item_sets`); a comparison of two runs says
whether they share their item set.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from db.items import ItemSnapshot
from db.json_types import JsonObject
from db.releases import item_set_hash, snapshot_hash
from db.words import counted, named

if TYPE_CHECKING:  # evaluator.metrics reads evaluator.results, which reads ItemSet here
    from evaluator.metrics import ScoredPrediction

__all__ = ["ItemSet", "differing_item_sets", "group_by_release", "item_set_of", "unanswered_items"]

T = TypeVar("T")


@dataclass(frozen=True)
class ItemSet:
    """A run's item set: its hash (None for runs made before item sets were recorded), and
    the release its items were drawn from (all of them, or those a protocol or --kind
    asks)."""

    hash: str | None
    release: str | None = None

    @property
    def label(self) -> str:
        if self.hash is None:
            return "item set not recorded (a run from before releases)"
        if self.release is not None:
            return f"release {self.release} (items {self.hash[:12]})"
        return f"ad hoc item set {self.hash[:12]}"

    @property
    def drawn_from(self) -> str:
        """``from release v1``, or ``ad hoc`` (the items as they were)."""
        return f"from release {self.release}" if self.release is not None else "ad hoc"

    def to_json(self) -> JsonObject:
        return {"release": self.release, "hash": self.hash}


def item_set_of(items: Iterable[ItemSnapshot], *, release: str | None) -> ItemSet:
    """The item set of ``items``, drawn from ``release`` (None: from the database as it is)."""
    return ItemSet(item_set_hash((item.id, snapshot_hash(item)) for item in items), release)


def group_by_release(
    entries: Sequence[T], item_set: Callable[[T], ItemSet]
) -> dict[str | None, list[T]]:
    """``entries`` by the release their items came from (None: not a release), in the order
    each first appears."""
    groups: dict[str | None, list[T]] = {}
    for entry in entries:
        groups.setdefault(item_set(entry).release, []).append(entry)
    return groups


def differing_item_sets(runs: Iterable[tuple[int, str, ItemSet]]) -> list[str]:
    """Sentences naming the runs of one setting (``(run id, setting, item set)``, the
    setting as a table column reads it) that evaluated different items: shown side by side,
    their figures are not on the same items."""
    by_setting: dict[str, dict[str | None, list[int]]] = {}
    for run_id, setting, item_set in runs:
        by_setting.setdefault(setting, {}).setdefault(item_set.hash, []).append(run_id)
    notes = []
    for setting, by_hash in by_setting.items():
        if len(by_hash) > 1:
            parts = "; ".join(
                f"{named('run', sorted(ids))} on items "
                f"{digest[:12] if digest else '(not recorded)'}"
                for digest, ids in by_hash.items()
            )
            notes.append(f"{setting}: not the same items ({parts})")
    return notes


def unanswered_items(runs: Iterable[tuple[int, Sequence[ScoredPrediction]]]) -> list[str]:
    """Sentences naming the runs (``(run id, its predictions)``) whose figures leave out
    items that failed (timeouts ...): shown in a table, their figures are on fewer items
    than the run asked, and a resume retries them."""
    notes = []
    for run_id, predictions in runs:
        failed = sum(1 for row in predictions if row.is_infrastructure_failure)
        if failed:
            notes.append(
                f"run {run_id}: figures on {len(predictions) - failed} of its "
                f"{counted(len(predictions), 'item')}; {failed} failed (infrastructure) and "
                "are left out "
                f"(`vetbench eval --resume {run_id}` retries them)"
            )
    return notes
