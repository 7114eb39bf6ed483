"""Reading many rows at once: pause the cyclic garbage collector while they are made,
and ask for many ids a chunk at a time (the importer, flags, the review and the lead's
reads all do).

Hundreds of thousands of row tuples hold no reference cycles, yet their number
triggers full collections that walk every object of the process (the whole of
numpy, SciPy, SQLAlchemy, Textual ...); pausing the collector for the duration
of a bulk read halves its time.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TypeVar

IDS_PER_QUERY = 500  # ids per IN (...) list, well under every database's parameter limit


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause automatic garbage collection inside the block (restored on exit, even on error)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


Id = TypeVar("Id", str, int)


def id_chunks(ids: Sequence[Id]) -> Iterator[list[Id]]:
    """``ids`` in lists of at most :data:`IDS_PER_QUERY`, one ``IN (...)`` query each."""
    for start in range(0, len(ids), IDS_PER_QUERY):
        yield list(ids[start : start + IDS_PER_QUERY])
