"""Reading many rows at once: pause the cyclic garbage collector while they are made.

Hundreds of thousands of row tuples hold no reference cycles, yet their number
triggers full collections that walk every object of the process (the whole of
numpy, SciPy, SQLAlchemy, Textual ...); pausing the collector for the duration
of a bulk read halves its time.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


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
