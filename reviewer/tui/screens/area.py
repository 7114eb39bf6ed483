"""What the screens of the other areas share (F2 agreement, F3 adjudication, F4 evaluation).

Each acts as one person on one database, and Esc goes back to the screen below.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.binding import Binding
from textual.screen import Screen

from reviewer.tui.screens.help import HelpRow, key_label

# Every Textual screen has these (Tab, Shift+Tab, Ctrl+C): not the screen's own keys.
_TEXTUAL_SCREEN_ACTIONS = frozenset(
    binding.action for binding in Screen.BINDINGS if isinstance(binding, Binding)
)

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

    def help_rows(self) -> list[HelpRow]:
        """The screen's own keys for ``?`` (hidden ones too; not Textual's Tab and copy)."""
        section = self.TITLE or type(self).__name__
        return [
            HelpRow(section, key_label(active.binding), active.binding.description)
            for active in self.active_bindings.values()
            if active.node is self
            and active.binding.description
            and active.binding.action not in _TEXTUAL_SCREEN_ACTIONS
        ]

    def action_leave(self) -> None:
        # Never pop the last screen: the app would have nothing to show.
        if len(self.app.screen_stack) > 1:
            self.app.pop_screen()
