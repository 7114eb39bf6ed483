"""Ctrl-C that waits for the step in hand: a write and what is told about it land together.

A run stores one answer, then counts it in the summary it prints.  A Ctrl-C that
arrived between the commit and the count stored an item the summary did not report
(tests/test_generation.py saw "2 stored" beside three stored items).  Inside
:func:`interrupt_after` the signal is only noted; ``KeyboardInterrupt`` is raised
when the block has ended, so the step is whole and counted before the run stops.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


@contextmanager
def interrupt_after() -> Iterator[None]:
    """Hold Ctrl-C (SIGINT) until the block ends, then raise ``KeyboardInterrupt``.

    Only where Python's own handler is in place, in the main thread (the only one
    signals reach); anywhere else the block runs as it would without this."""
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield
        return
    received: list[int] = []

    def note(signum: int, _frame: FrameType | None) -> None:
        received.append(signum)

    previous = signal.signal(signal.SIGINT, note)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if received:
        raise KeyboardInterrupt
