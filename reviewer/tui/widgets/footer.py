"""The key footer: the keys that apply now, always with ``? Help`` and ``q Quit`` (but
never a key that the focused field types: it is no key while typing).

Textual 8.2.8's ``Footer`` lets keys run off the right edge on a narrow terminal
(at 80 columns the review screen lost ``? Help`` and ``q Quit``, and the last key
showed through beside ``^p palette`` as a stray character).  :class:`KeyFooter`
shows only whole keys: when they do not all fit, the command palette key goes
first, then the screen's keys from the last one back, then the keys the screen keeps
(``kept``: the review screen's ``n Next``, used at every item), while help, quit, Esc
(back, cancel) and a lead's keys of the other screens (F2 F3 F4) always stay.
Everything dropped is still on the help screen and in the command palette.

It also fixes a leak: ``Footer`` rebuilds its keys whenever the active bindings
change (for the review screen: at every step of every item).  Each new
``FooterKey`` data-binds to the footer's ``compact`` reactive, and the footer
keeps those watchers after the old keys are removed, so every rebuild leaks its
keys (about 30 widgets per judged item, and gen-2 garbage collections that grow
to hundreds of milliseconds within an hour).  This subclass drops the watchers of
removed keys after each rebuild.  Every vetbench screen uses it instead of ``Footer``.
"""

from __future__ import annotations

from textual import events
from textual.app import ComposeResult
from textual.keys import REPLACED_KEYS, key_to_character
from textual.widget import Widget
from textual.widgets import Footer
from textual.widgets._footer import FooterKey, FooterLabel, KeyGroup  # no public module (8.2.8)

PINNED_KEYS = frozenset({"question_mark", "q", "escape", "f2", "f3", "f4"})
"""Keys that stay in the footer however narrow it is: help, quit, back or cancel, and the
other screens (a lead's: at 80 columns F3 was the first key to go)."""


class KeyFooter(Footer):
    """``Footer`` that shows only whole keys, keeps help and quit, and forgets removed keys."""

    DEFAULT_CSS = """
    KeyFooter.-compact FooterLabel {
        margin-right: 1;
    }

    KeyFooter.-compact KeyGroup > FooterKey.-grouped:first-child {
        margin-left: 0;  /* one space before a group, as before a key */
    }
    """

    _shown: tuple[object, ...] | None = None  # what the keys were last composed from

    def __init__(self, *, compact: bool = False, kept: frozenset[str] = frozenset()) -> None:
        super().__init__(compact=compact)
        self.kept = kept
        """Keys that go last, after the screen's other keys (the pinned ones never go)."""

    def _keys_signature(self) -> tuple[object, ...]:
        """Everything ``Footer.compose`` builds the keys from: the active bindings as
        shown (binding, key display, enabled, tooltip) and the command palette's."""
        palette = self.app.COMMAND_PALETTE_BINDING
        return (
            self.show_command_palette,
            self.app.ENABLE_COMMAND_PALETTE,
            tuple(
                (key, binding, self.app.get_key_display(binding), enabled, tooltip)
                for key, (_node, binding, enabled, tooltip) in self.screen.active_bindings.items()
                if binding.show or key == palette
            ),
        )

    def compose(self) -> ComposeResult:
        # Keys a focused field types are no keys now.  Textual drops most of them itself,
        # but not those whose names it shortens (``slash`` for /): ``/ Filter`` showed
        # while typing a comment, and / typed into it.
        focused = self.screen.focused
        for widget in super().compose():
            if isinstance(widget, FooterKey):
                if focused and types(focused, widget.key):
                    continue
                # Styled compact from the start: each key's binding to ``compact`` then
                # finds its class set, where adding it once mounted restyled the key (a
                # fifth of a key press's time in the review app, the footer being rebuilt).
                widget.set_class(self.compact, "-compact", update=False)
            yield widget

    async def recompose(self) -> None:
        # The bindings change signal comes at every step of every item, mostly with the
        # same keys as before: rebuilding them then is a whole new set of widgets and
        # their styles for nothing (a tenth of the review app's time in its tests).
        shown = self._keys_signature() if self.is_attached and self._bindings_ready else None
        if shown is not None and shown == self._shown and self.children:
            return
        await super().recompose()
        self._shown = shown
        # Textual keeps data-binding watchers in the attribute "__watchers" (set with setattr).
        watchers: dict[str, list[tuple[object, object]]] = getattr(self, "__watchers", {})
        for name, entries in watchers.items():
            watchers[name] = [
                (node, callback)
                for node, callback in entries
                if getattr(node, "is_attached", True) or node is self
            ]
        self.fit_keys()

    def on_resize(self, _event: events.Resize) -> None:
        self.fit_keys()

    def fit_keys(self) -> None:
        """Show the keys that fit and hide the rest, least needed first.

        Widths come from laying the keys out in a row (``Layout.arrange``, Textual's
        own arithmetic, margins included), whether they are shown now or not."""
        if not self.is_attached or not self.size.width:
            return
        palette = [child for child in self.children if child.has_class("-command-palette")]
        keys = [child for child in self.children if child not in palette]
        units = self._units(keys)
        if not units:
            return
        placements = self.layout.arrange(self, keys, self.size)
        regions = {placement.widget: placement.region for placement in placements}
        starts = [regions[unit[0]].x for unit in units]
        last = units[-1][-1]
        ends = [*starts[1:], regions[last].right + last.styles.margin.right]
        widths = [end - start for start, end in zip(starts, ends, strict=True)]
        available = self.size.width
        palette_width = sum(
            key.get_content_width(self.size, self.app.size) + key.styles.gutter.width
            for key in palette
        )
        hidden: set[Widget] = set()
        if sum(widths) + palette_width > available:
            hidden.update(palette)
        unpinned = [index for index, unit in enumerate(units) if not self._pinned(unit)]
        # Popped from the end: the kept keys go after every other one.
        droppable = [i for i in unpinned if self._holds(units[i], self.kept)] + [
            i for i in unpinned if not self._holds(units[i], self.kept)
        ]
        while sum(widths) > available and droppable:
            index = droppable.pop()
            hidden.update(units[index])
            widths[index] = 0
        for child in self.children:
            child.display = child not in hidden

    @staticmethod
    def _units(children: list[Widget]) -> list[list[Widget]]:
        """Keys as shown together: a key alone, or a group of keys with its label."""
        units: list[list[Widget]] = []
        for child in children:
            if isinstance(child, FooterLabel) and units and isinstance(units[-1][-1], KeyGroup):
                units[-1].append(child)
            else:
                units.append([child])
        return units

    @classmethod
    def _pinned(cls, unit: list[Widget]) -> bool:
        """Whether ``unit`` holds a pinned key, alone or in its group."""
        return cls._holds(unit, PINNED_KEYS)

    @staticmethod
    def _holds(unit: list[Widget], names: frozenset[str]) -> bool:
        """Whether ``unit`` holds one of the keys ``names``, alone or in its group."""
        keys = [key for widget in unit for key in (widget, *widget.children)]
        return any(isinstance(key, FooterKey) and key.key in names for key in keys)


def types(widget: Widget, key: str) -> bool:
    """Whether ``widget`` (a text field) takes ``key`` as a character it types."""
    # key_to_character knows "solidus", not "slash" (Textual 8.2.8).
    return widget.check_consume_key(key, key_to_character(REPLACED_KEYS.get(key, key)))
