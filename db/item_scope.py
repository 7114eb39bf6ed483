"""Which items a decision or a figure is about: some kinds and sources, or every item.

One value from the command line (``--kind``/``--source``) down to the functions that
narrow by it, instead of two parameters repeated in each of them.  Imports nothing
heavy: the CLI's option decorators build it before any command runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class ItemScope:
    """Items narrowed by kind and source: the kinds and sources asked for (None: all)."""

    kinds: tuple[str, ...] | None = None
    sources: tuple[str, ...] | None = None

    @classmethod
    def of(cls, kinds: Sequence[str] = (), sources: Sequence[str] = ()) -> ItemScope:
        """The scope of these kinds and sources, where none given means all."""
        return cls(tuple(kinds) or None, tuple(sources) or None)

    @property
    def narrowed(self) -> bool:
        """True when some kinds or sources were asked for."""
        return self.kinds is not None or self.sources is not None


EVERY_ITEM = ItemScope()
"""No narrowing: the scope a caller that names no kind or source gets."""
