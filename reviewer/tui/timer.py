"""Time spent on an item, counting only the time the annotator was active.

The clock runs from first display to submit.  A gap between two key presses or
clicks longer than ``idle_cap`` counts as ``idle_cap`` (the annotator walked
away), and time while the app is suspended (Ctrl+Z) does not count at all.
"""

from __future__ import annotations

import time
from collections.abc import Callable

IDLE_CAP_SECONDS = 120.0


class ActiveTimer:
    """Accumulates active seconds; call ``touch`` on every interaction."""

    def __init__(
        self,
        idle_cap: float = IDLE_CAP_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.idle_cap = idle_cap
        self.clock = clock
        self._elapsed = 0.0
        self._last: float | None = None

    def start(self, elapsed: float = 0.0) -> None:
        """Begin timing a newly displayed item (``elapsed``: seconds it had before, when an
        item left with its key shown comes back)."""
        self._elapsed = elapsed
        self._last = self.clock()

    def touch(self) -> None:
        """Count the time since the last interaction, up to the idle cap."""
        now = self.clock()
        if self._last is not None:
            self._elapsed += min(max(now - self._last, 0.0), self.idle_cap)
        self._last = now

    def pause(self) -> None:
        """Stop counting (the app was suspended)."""
        self.touch()
        self._last = None

    def resume(self) -> None:
        """Count again from now."""
        self._last = self.clock()

    @property
    def seconds(self) -> float:
        """Active seconds so far, including the time up to now."""
        self.touch()
        return self._elapsed
