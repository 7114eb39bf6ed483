"""The key footer, without the leak Textual 8.2.8's ``Footer`` has when bindings change.

``Footer`` rebuilds its keys whenever the active bindings change (for the review
screen: at every step of every item).  Each new ``FooterKey`` data-binds to the
footer's ``compact`` reactive, and the footer keeps those watchers after the old
keys are removed, so every rebuild leaks its keys (about 30 widgets per judged
item, and gen-2 garbage collections that grow to hundreds of milliseconds within
an hour).  This subclass drops the watchers of removed keys after each rebuild.
Every vetbench screen uses it instead of ``Footer``.
"""

from __future__ import annotations

from textual.widgets import Footer


class KeyFooter(Footer):
    """``Footer`` that forgets the keys it has removed, and keeps a space after a group's
    label in the compact style (Textual's compact footer runs "pick" into "⌫ Back")."""

    DEFAULT_CSS = """
    KeyFooter.-compact FooterLabel {
        margin: 0 1 0 0;
    }
    """

    async def recompose(self) -> None:
        await super().recompose()
        # Textual keeps data-binding watchers in the attribute "__watchers" (set with setattr).
        watchers: dict[str, list[tuple[object, object]]] = getattr(self, "__watchers", {})
        for name, entries in watchers.items():
            watchers[name] = [
                (node, callback)
                for node, callback in entries
                if getattr(node, "is_attached", True) or node is self
            ]
