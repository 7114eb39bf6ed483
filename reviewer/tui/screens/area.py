"""What the screens of the other areas share (F2 agreement, F3 adjudication, F4 evaluation).

Each acts as one person on one database, and Esc goes back to the screen below.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.screen import Screen

if TYPE_CHECKING:
    from db.engine import Database


class AreaScreen(Screen[None]):
    """An area's screen: the database it reads and the person who acts.

    A screen that polls lists :class:`reviewer.tui.polling.PollingScreen` after this
    class; ``__init__`` passes on to it.
    """

    def __init__(self, database: Database, person_name: str) -> None:
        super().__init__()
        self.database = database
        self.person_name = person_name

    def action_leave(self) -> None:
        # Never pop the last screen: the app would have nothing to show.
        if len(self.app.screen_stack) > 1:
            self.app.pop_screen()
