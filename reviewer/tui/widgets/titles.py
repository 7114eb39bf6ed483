"""Titles inside panels and dialogs, styled the same wherever they appear."""

from __future__ import annotations

from textual.widgets import Static


class PanelTitle(Static):
    """The name of a panel or a dialog."""

    DEFAULT_CSS = """
    PanelTitle {
        text-style: bold;
        color: $accent;
    }
    """


class SectionTitle(Static):
    """The heading of one part of a panel (the question, the key in words, ...)."""

    DEFAULT_CSS = """
    SectionTitle {
        text-style: bold;
        color: $text-muted;
        margin-top: 1;
    }
    """
