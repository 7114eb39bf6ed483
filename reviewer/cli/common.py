"""Shared pieces of the CLI: the --db option, opening the database, failing cleanly."""

from __future__ import annotations

import getpass
import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, NoReturn, TypeVar

import click

if TYPE_CHECKING:
    from db.engine import Database

State = TypeVar("State")

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}

db_option = click.option(
    "--db",
    envvar="VETBENCH_DB",  # db.engine.DB_ENV_VAR; not imported here to keep --help instant
    default=None,
    metavar="PATH|URL",
    help="Database file or SQLAlchemy URL [default: ./vetbench.db; env VETBENCH_DB].",
)


# The item kinds (db.answers.ItemKind), spelled out so --help needs no database import.
KINDS = ("ordering", "single", "multi", "truefalse")

kind_option = click.option(
    "--kind",
    "kinds",
    multiple=True,
    type=click.Choice(KINDS),
    help="Only items of this kind (repeatable).",
)
source_option = click.option(
    "--source",
    "sources",
    multiple=True,
    metavar="NAME",
    help="Only items from this source (repeatable).",
)


def open_db(ctx: click.Context) -> Database:
    """Open (creating or upgrading) the database named by --db; one per command invocation."""
    from db.engine import open_database

    root = ctx.find_root()
    root.ensure_object(dict)
    cached = root.obj.get("database")
    if cached is None:
        try:
            cached = open_database(root.obj.get("db"))
        except Exception as error:  # a bad URL or unreachable server: say so, no traceback
            fail(f"cannot open database {root.obj.get('db') or ''}: {error}".replace("  ", " "))
        root.obj["database"] = cached
        root.call_on_close(cached.dispose)
    return cached


def default_user() -> str:
    """The operating-system login, used when --as is not given."""
    try:
        return getpass.getuser()
    except Exception:
        return "annotator"


def fail(message: str, code: int = 1) -> NoReturn:
    """Print an error to stderr and exit with ``code`` (no traceback)."""
    click.echo(f"error: {message}", err=True)
    sys.exit(code)


def print_json(data: Any) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2, default=str))


class TerminalProgressBar(Generic[State]):
    """A progress bar on stderr, shown only when a person is watching (a terminal).

    ``describe`` turns the latest state handed to ``advance`` into the text shown
    after the bar (running accuracy, ok/invalid counts).
    """

    def __init__(
        self,
        total: int,
        label: str,
        *,
        describe: Callable[[State], str],
        done: int = 0,
        show_eta: bool = False,
    ) -> None:
        self._bar: Any = None
        if total and sys.stderr.isatty():
            self._bar = click.progressbar(
                length=total,
                label=label,
                file=sys.stderr,
                width=24,
                show_pos=True,
                show_eta=show_eta,
                item_show_func=lambda state: describe(state) if state else None,
            )
            self._bar.__enter__()
            if done:
                self._bar.update(done)

    def advance(self, state: State) -> None:
        if self._bar is not None:
            self._bar.update(1, state)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.__exit__(None, None, None)
            self._bar = None
