"""Full garbage collections while the annotator reads, not while the screen changes.

Rendering a Textual screen allocates many short-lived objects, so Python's
cyclic collector kept running full (generation 2) collections every few items;
on the 2-core test machine each took 50-250 ms and showed up as a stutter right
after a verdict key.  The review app therefore freezes the objects that exist
after start-up (they live as long as the app anyway), keeps the cheap young
collections automatic, stops automatic full collections, and runs a full one
when input has been quiet for a moment, which happens all the time: people read
each item for seconds (and at the latest every 30 s, so memory stays bounded).
The collector's thresholds are restored when the app stops; what was frozen stays
frozen (it lived as long as the app, and refcounting still frees it): Python can only
thaw the whole permanent generation, which would also thaw whatever the process that
runs the app had frozen for itself (a test process, an embedding host).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable

QUIET_SECONDS = 1.0
"""Input quiet for this long counts as reading time."""

FULL_COLLECTION_EVERY_SECONDS = 10.0
"""At most one full collection this often (they are only needed now and then)."""

FULL_COLLECTION_AT_LATEST_SECONDS = 30.0
"""Without a quiet moment for this long, collect anyway: memory stays bounded."""

NO_AUTOMATIC_FULL_COLLECTIONS = 1_000_000
"""A generation-2 threshold that young collections never reach."""


class IdleCollector:
    """Owns the collector's settings for the life of one app."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.last_input = clock()
        self.last_full = clock()
        self._thresholds = gc.get_threshold()
        self.active = False
        self.collections = 0

    def start(self) -> None:
        """Freeze start-up objects and take over full collections."""
        gc.collect()
        gc.freeze()
        young, middle, _full = self._thresholds
        gc.set_threshold(young, middle, NO_AUTOMATIC_FULL_COLLECTIONS)
        self.active = True

    def touch(self) -> None:
        """Record input (a key or a click)."""
        self.last_input = self.clock()

    def tick(self) -> None:
        """Called on a timer: a full collection when input is quiet and one is due."""
        if not self.active:
            return
        now = self.clock()
        since_full = now - self.last_full
        quiet = now - self.last_input >= QUIET_SECONDS
        if (quiet and since_full >= FULL_COLLECTION_EVERY_SECONDS) or (
            since_full >= FULL_COLLECTION_AT_LATEST_SECONDS
        ):
            gc.collect()
            self.last_full = self.clock()
            self.collections += 1

    def stop(self) -> None:
        """Give full collections back to Python (the thresholds as they were)."""
        if not self.active:
            return
        self.active = False
        gc.set_threshold(*self._thresholds)
