"""What the screens of the other areas share (F2 agreement, F3 adjudication, F4 evaluation).

Each acts as one person on one database.  The review app opens each once, in a mode
of its own (:class:`AreaModes`); Esc closes it and goes back to where the person came
from.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import TabbedContent, Tabs

from reviewer.tui.screens.help import HelpRow, key_label

# Every Textual screen has these (Tab, Shift+Tab, Ctrl+C): not the screen's own keys.
_TEXTUAL_SCREEN_ACTIONS = frozenset(
    binding.action for binding in Screen.BINDINGS if isinstance(binding, Binding)
)

TABS_GROUP = Binding.Group("Tabs", compact=False)
TAB_BINDINGS: list[Binding] = [
    Binding(
        "left_square_bracket", "switch_tab(-1)", "Previous tab", key_display="[", group=TABS_GROUP
    ),
    Binding("right_square_bracket", "switch_tab(1)", "Next tab", key_display="]", group=TABS_GROUP),
]
"""The keys of a screen with tabs: [ and ] switch them from anywhere (Textual's Left and
Right do only while the tab bar has focus, and Tab takes focus away from it)."""

if TYPE_CHECKING:
    from db.engine import Database


@runtime_checkable
class AreaModes(Protocol):
    """An app that opens each area's screen once, as the base of a mode of its own, and
    knows which screen the person came from (the review app)."""

    def leave_area(self) -> None:
        """Go back from the area's screen in sight to the one the person came from, and
        close it unless it has work going on (:meth:`AreaScreen.work_going_on`)."""

    def work_ended(self, said: str) -> bool:
        """That work ended as ``said``; True when an open question (quitting's) says it,
        and a notice need not."""


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
        rows = [
            HelpRow(section, key_label(active.binding), active.binding.description)
            for active in self.active_bindings.values()
            if active.node is self
            and active.binding.description
            and active.binding.action not in _TEXTUAL_SCREEN_ACTIONS
        ]
        if self.query(TabbedContent):
            rows.append(HelpRow(section, "← →", "switch tabs while the tab bar has focus"))
        return rows

    def action_switch_tab(self, step: int) -> None:
        """Show the next (``step`` 1) or previous (-1) tab, wrapping around."""
        tabs = self.query_one(TabbedContent).query_one(Tabs)
        if step > 0:
            tabs.action_next_tab()
        else:
            tabs.action_previous_tab()

    def work_going_on(self) -> str | None:
        """What this screen is doing that leaving it would stop (``run 7``), or None: the
        review app then keeps it open when Esc leaves it (:meth:`AreaModes.leave_area`)."""
        return None

    def action_leave(self) -> None:
        app = self.app
        if isinstance(app, AreaModes):
            app.leave_area()
        elif len(app.screen_stack) > 1:  # an app that pushed it: never pop the last screen
            app.pop_screen()
