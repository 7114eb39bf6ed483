"""What the screens of the other areas share (F2 agreement, F3 adjudication, F4 evaluation).

Each acts as one person on one database.  The review app opens each once, in a mode
of its own (:class:`AreaModes`); Esc closes it and goes back to where the person came
from.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from textual import on
from textual.binding import ActiveBinding, Binding
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
        """The screen's own keys for ``?``: hidden ones too, and those that do not apply at
        the moment (F3's ``o`` was missing from its help on a case that names no item); not
        Textual's Tab and copy.  A binding's tooltip, where it has one, says more than its
        footer label."""
        section = self.TITLE or type(self).__name__
        # The keys of one action share its row ("Space / PgDn"), as the review help writes them.
        keys: dict[tuple[str, str], list[str]] = {}
        for _key, binding in self._bindings:
            if binding.description and binding.action not in _TEXTUAL_SCREEN_ACTIONS:
                what = binding.tooltip or binding.description
                keys.setdefault((binding.action, what), []).append(key_label(binding))
        rows = [HelpRow(section, " / ".join(bound), what) for (_a, what), bound in keys.items()]
        if self.query(TabbedContent):
            rows.append(HelpRow(section, "← →", "switch tabs while the tab bar has focus"))
        return rows

    def palette_commands(self) -> Iterator[tuple[str, str, Callable[[], object]]]:
        """(title, help, callback) for each of the screen's own keys that applies now, for
        the command palette, which says it searches every action (it found none of F4's).
        The help says what the key does as ``?`` does: its tooltip, where the footer's
        label is short ("Key…")."""
        section = self.TITLE or type(self).__name__
        actions: set[str] = set()
        for active in self._own_bindings():
            binding = active.binding
            if active.enabled and binding.action not in actions:
                actions.add(binding.action)
                what = binding.tooltip or binding.description
                yield (
                    f"{binding.description} ({key_label(binding)})",
                    f"{section}: {what[:1].lower()}{what[1:]}",
                    partial(self.run_action, binding.action),
                )

    def _own_bindings(self) -> Iterator[ActiveBinding]:
        return (
            active
            for active in self.active_bindings.values()
            if active.node is self
            and active.binding.description
            and active.binding.action not in _TEXTUAL_SCREEN_ACTIONS
        )

    def action_switch_tab(self, step: int) -> None:
        """Show the next (``step`` 1) or previous (-1) tab, wrapping around."""
        tabs = self.query_one(TabbedContent).query_one(Tabs)
        if step > 0:
            tabs.action_next_tab()
        else:
            tabs.action_previous_tab()

    @on(TabbedContent.TabActivated)
    def _focus_in_sight(self, event: TabbedContent.TabActivated) -> None:
        """The focus goes with the tab shown (its first field, else the tab bar).  Left in
        the pane going out of sight, it moved on to a field of that pane, which TabbedContent
        then showed again: from F4's Items list, ] did nothing."""
        content, focused = event.tabbed_content, self.focused
        pane, tabs = content.active_pane, content.query_one(Tabs)
        if focused is None or focused is tabs or content not in focused.ancestors:
            return
        if pane is None or pane in focused.ancestors:
            return
        first = next((widget for widget in self.focus_chain if pane in widget.ancestors), tabs)
        first.focus(scroll_visible=False)

    def focus_tab_bar(self) -> None:
        self.query_one(TabbedContent).query_one(Tabs).focus(scroll_visible=False)

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
