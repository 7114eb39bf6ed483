"""Strings written to a temporary file as they come, read back by position.

A million canonical item texts are a few hundred megabytes as Python strings; near-
duplicate detection and the importer keep them here instead and hold only their
offsets (8 bytes a string).  Reading back a range is one read; scattered positions are
read in runs of neighbours.  The file lives in the temporary folder (``TMPDIR``) and
is gone when the spill is closed (or the process ends); ``contextlib.closing`` makes
one a ``with`` block.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Sequence

import numpy as np

_FLUSH_BYTES = 1 << 22  # written in pieces of about 4 MiB
_ENCODING = "utf-8"
_ERRORS = "surrogatepass"  # text from JSON may hold lone surrogates; keep them as they are


class TextSpill:
    """An append-only list of strings kept in a temporary file (see the module docstring)."""

    def __init__(self) -> None:
        # Closed by close() (``with contextlib.closing(TextSpill())``), like a file.
        self._file = tempfile.TemporaryFile(prefix="vetbench-spill-")  # noqa: SIM115
        self._ends = np.zeros(1024, dtype=np.int64)  # _ends[i]: where string i ends
        self._count = 0
        self._chars = 0
        self._written = 0  # bytes in the file
        self._pending: list[bytes] = []
        self._pending_bytes = 0

    def close(self) -> None:
        self._file.close()

    def __len__(self) -> int:
        return self._count

    @property
    def chars(self) -> int:
        """Characters in all the strings together."""
        return self._chars

    def append(self, text: str) -> int:
        """Add one string; returns its position."""
        self.extend((text,))
        return self._count - 1

    def extend(self, texts: Iterable[str]) -> None:
        for text in texts:
            data = text.encode(_ENCODING, _ERRORS)
            if self._count == len(self._ends):
                self._ends = np.resize(self._ends, 2 * len(self._ends))
            end = self._written + self._pending_bytes + len(data)
            self._ends[self._count] = end
            self._count += 1
            self._chars += len(text)
            self._pending.append(data)
            self._pending_bytes += len(data)
            if self._pending_bytes >= _FLUSH_BYTES:
                self._flush()

    def _flush(self) -> None:
        if self._pending:
            self._file.seek(self._written)
            self._file.write(b"".join(self._pending))
            self._file.flush()
            self._written += self._pending_bytes
            self._pending = []
            self._pending_bytes = 0

    def _start(self, position: int) -> int:
        return int(self._ends[position - 1]) if position else 0

    def _read_bytes(self, start: int, stop: int) -> bytes:
        if hasattr(os, "pread"):
            return os.pread(self._file.fileno(), stop - start, start)
        self._file.seek(start)  # pragma: no cover - platforms without pread
        return self._file.read(stop - start)  # pragma: no cover

    def read(self, start: int, stop: int) -> list[str]:
        """The strings at positions ``start`` to ``stop - 1``, in order."""
        stop = min(stop, self._count)
        if start >= stop:
            return []
        self._flush()
        first = self._start(start)
        data = self._read_bytes(first, int(self._ends[stop - 1]))
        ends = (self._ends[start:stop] - first).tolist()
        texts: list[str] = []
        begin = 0
        for end in ends:
            texts.append(data[begin:end].decode(_ENCODING, _ERRORS))
            begin = end
        return texts

    def take(self, positions: Sequence[int] | np.ndarray) -> list[str]:
        """The strings at ``positions`` (any order, repeats allowed), in that order."""
        wanted = np.asarray(positions, dtype=np.int64)
        if not len(wanted):
            return []
        unique, inverse = np.unique(wanted, return_inverse=True)
        if unique[0] < 0 or unique[-1] >= self._count:
            raise IndexError("position out of range")
        self._flush()
        ends = self._ends[unique]
        starts = np.where(unique > 0, self._ends[np.maximum(unique - 1, 0)], 0)
        # Neighbouring positions are read together: one read per run of them.
        new_run = np.r_[True, np.diff(unique) != 1]
        run_of = np.cumsum(new_run) - 1
        run_start = starts[new_run]
        run_end = ends[np.r_[np.flatnonzero(new_run)[1:] - 1, len(unique) - 1]]
        found: list[str] = []
        current = -1
        data, base = b"", 0
        for run, start, end in zip(run_of.tolist(), starts.tolist(), ends.tolist(), strict=True):
            if run != current:
                current, base = run, int(run_start[run])
                data = self._read_bytes(base, int(run_end[run]))
            found.append(data[start - base : end - base].decode(_ENCODING, _ERRORS))
        return [found[index] for index in inverse.tolist()]
