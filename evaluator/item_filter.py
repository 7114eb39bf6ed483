"""Which items a run evaluates, as a person chose them: :class:`ItemFilter`.

A run stores its selection (``EvalRun.filters``) as :meth:`ItemFilter.to_json` writes
it: only what was given, lists of values and a limit, key for key as runs have always
stored it (``runs show --json`` prints it as stored).
"""

from __future__ import annotations

from dataclasses import dataclass

from db.json_types import JsonObject, JsonValue
from db.vocabulary import ItemKind

__all__ = ["ItemFilter", "filter_differences"]


@dataclass(frozen=True)
class ItemFilter:
    """A release's items as frozen, or the stored items of these statuses, kinds and
    sources (empty: any); at most ``limit`` of them.  A release ignores ``statuses``:
    its items are evaluated as they were when it was made."""

    statuses: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    release: str | None = None
    limit: int | None = None

    def kinds_within(self, asked_by_protocol: frozenset[ItemKind]) -> tuple[str, ...] | None:
        """The kinds to evaluate under a protocol that asks only ``asked_by_protocol``:
        those chosen that it asks, or all it asks (None: every kind, nothing narrows)."""
        if asked_by_protocol == frozenset(ItemKind):
            return self.kinds or None
        allowed = tuple(kind.value for kind in ItemKind if kind in asked_by_protocol)
        return tuple(kind for kind in self.kinds if kind in allowed) if self.kinds else allowed

    def describe(self) -> str:
        """``release v1; kind ordering`` (``no filter`` when nothing was chosen)."""
        parts = [f"release {self.release}"] if self.release else []
        parts += [f"{name} {', '.join(chosen)}" for name, chosen in self._lists_chosen()]
        return "; ".join(parts) or "no filter"

    def to_json(self) -> JsonObject:
        """As a run stores it: the release, statuses, kinds, sources and limit given."""
        stored: JsonObject = {}
        if self.release:
            stored["release"] = self.release
        for name, chosen in self._lists_chosen():
            stored[name] = list(chosen)
        if self.limit:  # 0 or None: no limit
            stored["limit"] = self.limit
        return stored

    def _lists_chosen(self) -> list[tuple[str, tuple[str, ...]]]:
        """The lists given, under the names a run stores them by."""
        named = (("status", self.statuses), ("kind", self.kinds), ("source", self.sources))
        return [(name, chosen) for name, chosen in named if chosen]


_ANY = {"status": "any status", "kind": "any kind", "source": "any source"}


def filter_differences(a: JsonObject, b: JsonObject) -> tuple[str, ...]:
    """How two runs' stored filters (:meth:`ItemFilter.to_json`) chose differently:
    ``B limited to 5 items``, ``A kind ordering, B any kind``; empty when they chose alike.
    The release is left out: an item set's label names it."""
    notes = []
    limits = a.get("limit"), b.get("limit")
    if limits[0] != limits[1]:
        notes.append(_limits(*limits))
    for name, any_value in _ANY.items():
        chosen_a, chosen_b = _chosen(a.get(name)), _chosen(b.get(name))
        if set(chosen_a) != set(chosen_b):
            notes.append(
                f"A {_list(name, chosen_a) or any_value}, B {_list(name, chosen_b) or any_value}"
            )
    return tuple(notes)


def _limits(a: JsonValue, b: JsonValue) -> str:
    if a is None:
        return f"B limited to {b} items, A not limited"
    if b is None:
        return f"A limited to {a} items, B not limited"
    return f"A limited to {a} items, B to {b}"


def _chosen(stored: JsonValue) -> tuple[str, ...]:
    return tuple(str(value) for value in stored) if isinstance(stored, list) else ()


def _list(name: str, chosen: tuple[str, ...]) -> str:
    return f"{name} {', '.join(chosen)}" if chosen else ""
