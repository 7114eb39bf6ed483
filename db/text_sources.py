"""Texts read by position, from memory or from disk, as near-duplicate detection reads them.

:func:`db.dedup.near_duplicates` never holds a corpus as Python strings: it asks a
:class:`TextSource` for a range or for scattered positions.  A list in memory
(:class:`InMemoryTexts`), a spill file on disk (``db.spill.TextSpill``), two sources
as one (:class:`JoinedTexts`) and a source with some positions left out
(:class:`WithoutPositions`) all answer the same three questions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np


class TextSource(Protocol):
    """Texts read by position: a list in memory (:class:`InMemoryTexts`) or a
    :class:`db.spill.TextSpill` on disk, which is what keeps a million texts out of memory."""

    def __len__(self) -> int: ...

    @property
    def chars(self) -> int:
        """Characters in all the texts together."""
        ...

    def read(self, start: int, stop: int) -> list[str]: ...

    def take(self, positions: Sequence[int] | np.ndarray) -> list[str]: ...


class InMemoryTexts:
    """A sequence of texts already in memory, as a :class:`TextSource`."""

    def __init__(self, texts: Sequence[str]) -> None:
        self._texts = texts
        self._chars: int | None = None

    def __len__(self) -> int:
        return len(self._texts)

    @property
    def chars(self) -> int:
        if self._chars is None:
            self._chars = sum(len(text) for text in self._texts)
        return self._chars

    def read(self, start: int, stop: int) -> list[str]:
        return list(self._texts[start:stop])

    def take(self, positions: Sequence[int] | np.ndarray) -> list[str]:
        texts = self._texts
        return [texts[position] for position in np.asarray(positions, dtype=np.int64).tolist()]


class JoinedTexts:
    """Two sources as one: ``earlier``'s texts, then ``new``'s (how :func:`near_duplicates`
    numbers positions; the ids of its matches are read through one too)."""

    def __init__(self, earlier: TextSource, new: TextSource) -> None:
        self.earlier, self.new = earlier, new
        self.first_new = len(earlier)

    def __len__(self) -> int:
        return self.first_new + len(self.new)

    @property
    def chars(self) -> int:
        return self.earlier.chars + self.new.chars

    def read(self, start: int, stop: int) -> list[str]:
        split = self.first_new
        texts = self.earlier.read(start, min(stop, split)) if start < split else []
        if stop > split:
            texts += self.new.read(max(start, split) - split, stop - split)
        return texts

    def take(self, positions: Sequence[int] | np.ndarray) -> list[str]:
        wanted = np.asarray(positions, dtype=np.int64)
        in_new = wanted >= self.first_new
        if not in_new.any():
            return self.earlier.take(wanted)
        if in_new.all():
            return self.new.take(wanted - self.first_new)
        texts: list[str] = [""] * len(wanted)
        earlier_at, new_at = np.flatnonzero(~in_new), np.flatnonzero(in_new)
        for at, text in zip(
            earlier_at.tolist(), self.earlier.take(wanted[earlier_at]), strict=True
        ):
            texts[at] = text
        new_texts = self.new.take(wanted[new_at] - self.first_new)
        for at, text in zip(new_at.tolist(), new_texts, strict=True):
            texts[at] = text
        return texts


class WithoutPositions:
    """A source with some of its positions left out; the rest count from 0 without them."""

    def __init__(self, source: TextSource, left_out: Sequence[int] | np.ndarray) -> None:
        self._source = source
        self._left_out = np.unique(np.asarray(left_out, dtype=np.int64))
        # For each left-out position, how far the positions after it shift.
        self._shifted = self._left_out - np.arange(len(self._left_out))
        self._chars: int | None = None

    def __len__(self) -> int:
        return len(self._source) - len(self._left_out)

    @property
    def chars(self) -> int:
        if self._chars is None:
            left_out = self._source.take(self._left_out) if len(self._left_out) else []
            self._chars = self._source.chars - sum(len(text) for text in left_out)
        return self._chars

    def source_positions(self, positions: Sequence[int] | np.ndarray) -> np.ndarray:
        """Where these positions are in the whole source."""
        wanted = np.asarray(positions, dtype=np.int64)
        return wanted + np.searchsorted(self._shifted, wanted, side="right")

    def read(self, start: int, stop: int) -> list[str]:
        if not len(self._left_out):
            return self._source.read(start, stop)
        return self.take(np.arange(start, min(stop, len(self))))

    def take(self, positions: Sequence[int] | np.ndarray) -> list[str]:
        return self._source.take(self.source_positions(positions))
