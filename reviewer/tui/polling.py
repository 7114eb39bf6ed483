"""Screens that follow the database: one polling thread worker, woken early on demand.

The database is the bus (ARCHITECTURE.md): a screen that shows what others write
reads it again every few seconds.  :class:`PollingScreen` runs that loop in one
exclusive thread worker, as STYLE.md's worker rules ask: the worker reads, never
touches a widget, and posts what it read as a message; the screen's handler draws
it.  ``wake_poller()`` makes the next read happen now (a refresh key, a run that
just stored a prediction).  A screen that is not shown (another mode's screens are) reads
nothing until it is shown again.  When a read fails with an expected error
(:mod:`reviewer.tui.expected`), the screen says so and polls again a little later:
the database may come back; any other failure is a bug and ends the app.  The worker
stops with the screen.

A subclass implements :meth:`PollingScreen.read_database` and calls
:meth:`PollingScreen.start_polling` once mounted.
"""

from __future__ import annotations

import threading
from typing import ClassVar, TypeVar

from textual import events, on, work
from textual._context import NoActiveAppError  # no public module (8.2.8)
from textual.message import Message
from textual.screen import Screen
from textual.worker import Worker, WorkerState, get_current_worker

from reviewer.tui.expected import show_expected_error

ScreenResult = TypeVar("ScreenResult")

POLL_GROUP = "poll"
RETRY_AFTER_POLLS = 5  # after a failed read, wait this many poll intervals before the next


class PollingScreen(Screen[ScreenResult]):
    """A screen whose thread worker reads the database every ``POLL_SECONDS``."""

    POLL_SECONDS: ClassVar[float] = 1.0
    POLL_FAILURE: ClassVar[str] = "Reading the database failed"
    """How a failed read is announced (the error follows)."""

    def __init__(self) -> None:
        super().__init__()
        self._wake = threading.Event()

    def read_database(self) -> Message | None:
        """Read what the screen shows (in the worker thread); the message to post, if any.

        Never touch a widget here; keep state between reads on attributes only this
        method uses.
        """
        raise NotImplementedError

    def start_polling(self) -> None:
        """Start (or, after a failure, restart) the polling worker."""
        self._poll()

    def wake_poller(self) -> None:
        """Read again now instead of at the end of the current interval."""
        self._wake.set()

    @work(thread=True, exclusive=True, exit_on_error=False, group=POLL_GROUP)
    def _poll(self) -> None:
        worker = get_current_worker()
        while not worker.is_cancelled:
            if not self._is_on_show():
                # Behind another area's screens (F4 with a run going, kept while one
                # reviews): nothing would be drawn, so nothing is read until the screen
                # is shown again (ScreenResume wakes the loop).
                self._wake.wait()
                self._wake.clear()
                continue
            message = self.read_database()
            if worker.is_cancelled:
                break
            if message is not None:
                self.post_message(message)
            self._wake.wait(self.POLL_SECONDS)
            self._wake.clear()

    def _is_on_show(self) -> bool:
        """Whether the screen is on show now (asked from the worker thread)."""
        try:
            return self.is_current
        except NoActiveAppError:  # detached as the app closes it: the worker is stopping
            return False

    @on(events.ScreenResume)
    def _read_when_shown_again(self) -> None:
        self.wake_poller()

    @on(Worker.StateChanged)
    def _poll_failed(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        if worker.group == POLL_GROUP and event.state is WorkerState.ERROR:
            show_expected_error(self, worker.error, title=self.POLL_FAILURE)
            if self.is_mounted:  # try again a little later: the database may come back
                self.set_timer(self.POLL_SECONDS * RETRY_AFTER_POLLS, self.start_polling)

    def on_unmount(self) -> None:
        self.workers.cancel_group(self, POLL_GROUP)
        self._wake.set()
