"""Ctrl-C that waits for the step in hand: a write and what is told about it land together.

A run stores one answer, then counts it in the summary it prints.  A Ctrl-C that
arrived between the commit and the count stored an item the summary did not report
(tests/test_generation.py saw "2 stored" beside three stored items).  Inside
:func:`interrupt_after` the signal is only noted; ``KeyboardInterrupt`` is raised
when the block has ended, so the step is whole and counted before the run stops.

Every write transaction commits inside it too (``db.engine.Database.transaction``):
a Ctrl-C that lands in the commit waits for it and then arrives as
:class:`InterruptedAfterCommit`, so the caller knows the transaction is stored (an
import said "nothing of it was stored" of a file whose commit had gone through).  A
second Ctrl-C does not wait: a commit that hangs (a PostgreSQL server gone quiet) can
still be left, as :class:`InterruptedDuringCommit`, whose outcome nobody knows.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

__all__ = ["InterruptedAfterCommit", "InterruptedDuringCommit", "interrupt_after"]


class InterruptedAfterCommit(KeyboardInterrupt):
    """Ctrl-C pressed while a transaction committed: the commit went through first."""


class InterruptedDuringCommit(KeyboardInterrupt):
    """Ctrl-C pressed twice while a transaction committed: the second cut the commit
    short, so it may or may not have gone through."""


@contextmanager
def interrupt_after(
    held: type[KeyboardInterrupt] = KeyboardInterrupt,
    again: type[KeyboardInterrupt] = KeyboardInterrupt,
) -> Iterator[None]:
    """Hold Ctrl-C (SIGINT) until the block ends, then raise ``held``; a second Ctrl-C
    inside the block raises ``again`` at once, where the block then is.

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
        if received:
            raise again
        received.append(signum)

    previous = signal.signal(signal.SIGINT, note)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if received:
        raise held
