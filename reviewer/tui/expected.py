"""The app's one rule for errors: an expected error is a notice, anything else a bug.

An expected error is any :class:`db.errors.VetbenchError`, or a fault of the database
that :mod:`db.faults` describes: the command line prints the same line
(:func:`db.faults.expected_error_line`).  The screen shows it as a notice and the app
goes on.  Anything else is a bug: it is raised again, and Textual ends the app with its
traceback.  No screen catches ``ValueError`` or ``Exception`` in place of this rule.

Screens run database work in thread workers that do not end the app
(``exit_on_error=False``); their ``Worker.StateChanged`` handler hands a failure to
:func:`show_expected_error`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from db.engine import Database
from db.faults import MAYBE_EXPECTED, expected_error_line
from reviewer.tui.literal import notify_literally

if TYPE_CHECKING:
    from textual.app import App
    from textual.widget import Widget

__all__ = ["MAYBE_EXPECTED", "show_expected_error"]


def show_expected_error(
    node: Widget | App[Any], error: BaseException | None, *, title: str = "Not done"
) -> str:
    """Show ``error`` as a notice if it is expected and return its line; raise it otherwise."""
    database = getattr(node.app, "database", None)
    where = database.url_for_people if isinstance(database, Database) else "the database"
    line = None if error is None else expected_error_line(error, where)
    if line is None:
        raise error if error is not None else RuntimeError("a worker failed without an error")
    notify_literally(node, line, title=title, severity="error")
    return line
