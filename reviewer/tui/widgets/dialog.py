"""The one dialog look: a bordered box centred over the screen beneath.

A dialog is a :class:`DialogScreen` (a ``ModalScreen`` that centres what it
holds) composing one :class:`Dialog` box.  Inside the box, ``PanelTitle`` names
it, ``dialog-help`` explains it, ``dialog-problem`` says why an answer was
refused, and ``dialog-buttons`` holds its buttons.
"""

from __future__ import annotations

from typing import TypeVar

from textual import events, on
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.worker import Worker, WorkerState

from reviewer.tui.expected import show_expected_error
from reviewer.tui.responsive import apply_size_classes

DialogResult = TypeVar("DialogResult")


class DialogScreen(ModalScreen[DialogResult]):
    """A modal screen whose dialog sits in the middle; it answers with ``dismiss(value)``."""

    DEFAULT_CSS = """
    DialogScreen {
        align: center middle;
    }
    """

    @on(events.Compose)  # runs before Widget._on_compose (handlers go subclass first)
    def _size_classes_before_compose(self) -> None:
        apply_size_classes(self)

    @on(Worker.StateChanged)
    def _worker_failed(self, event: Worker.StateChanged) -> None:
        """A dialog's worker (loading what it shows) failed: an expected error is a notice."""
        if event.state is WorkerState.ERROR:
            show_expected_error(self, event.worker.error)


class Dialog(Vertical):
    """The box of a dialog; ``classes="wide"`` makes it fill most of the screen."""

    DEFAULT_CSS = """
    Dialog {
        width: 80;
        height: auto;
        max-height: 90%;
        padding: 1 2;
        border: thick $accent;
        background: $surface;
    }

    Dialog.wide {
        width: 95%;
        height: 90%;
    }

    Dialog .dialog-help {
        color: $text-muted;
        margin-bottom: 1;
    }

    Dialog .dialog-problem {
        color: $error;
        height: auto;
    }

    Dialog .dialog-buttons {
        height: auto;
        margin-top: 1;
    }

    Dialog .dialog-buttons Button {
        margin-right: 2;
    }
    """
