"""Shared pieces of the CLI: the --db option, opening the database, failing cleanly,
and showing untrusted text safely on a terminal."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Generic, NoReturn, Protocol, TypeVar

import click

from db.visible_text import one_line, visible_text

if TYPE_CHECKING:
    from db.engine import Database

State = TypeVar("State")

EXIT_INTERRUPTED = 130  # 128 + SIGINT: what shells report for a command stopped by Ctrl-C
CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}

db_option = click.option(
    "--db",
    envvar="VETBENCH_DB",  # db.engine.DB_ENV_VAR; not imported here to keep --help instant
    default=None,
    metavar="PATH|URL",
    help="Database file or SQLAlchemy URL [default: ./vetbench.db; env VETBENCH_DB].",
)


def _timeout_option(flag: str, envvar: str, help_text: str) -> Callable[[Any], Any]:
    """A time limit in seconds; None when not given, so db.engine's default applies."""
    return click.option(
        flag,
        envvar=envvar,
        type=click.FloatRange(0, min_open=True),
        default=None,
        metavar="SECONDS",
        help=help_text,
    )


# Defaults repeat db.engine's (10 s, 60 s); not imported here to keep --help instant.
connect_timeout_option = _timeout_option(
    "--connect-timeout",
    "VETBENCH_CONNECT_TIMEOUT",
    "Give up on a database server that does not answer [default: 10; "
    "env VETBENCH_CONNECT_TIMEOUT].",
)
lock_timeout_option = _timeout_option(
    "--lock-timeout",
    "VETBENCH_LOCK_TIMEOUT",
    "Give up waiting for another SQLite writer [default: 60; env VETBENCH_LOCK_TIMEOUT].",
)
LOCK_WAIT_NOTICE = "waiting for another writer…"


def open_db(ctx: click.Context, *, create: bool = False) -> Database:
    """Open (upgrading) the database named by --db; one per command invocation.

    Only the commands that create a database on purpose (``init``, ``import``,
    ``users add``) pass ``create=True``; every other command refuses a missing one.
    A database opened read-only says so on stderr.
    """
    from db.engine import ConnectionSettings, open_database

    root = ctx.find_root()
    root.ensure_object(dict)
    cached = root.obj.get("database")
    if cached is None:
        settings = ConnectionSettings.from_env(
            connect_timeout_s=root.obj.get("connect_timeout"),
            lock_timeout_s=root.obj.get("lock_timeout"),
            on_lock_wait=_say_waiting,
        )
        cached = open_database(root.obj.get("db"), create=create, settings=settings)
        if cached.notice:
            click.echo(f"note: {terminal_text(cached.notice)}", err=True)
        root.obj["database"] = cached
        root.call_on_close(cached.dispose)
    return cached


def _say_waiting() -> None:
    click.echo(LOCK_WAIT_NOTICE, err=True)


def database_shown(ctx: click.Context) -> str:
    """The database this command uses, as a person may see it (no password)."""
    from db.engine import DEFAULT_DB_PATH, hide_password

    root = ctx.find_root()
    database = (root.obj or {}).get("database")
    if database is not None:
        return terminal_text(database.url_for_people)
    return terminal_text(hide_password((root.obj or {}).get("db") or DEFAULT_DB_PATH))


def terminal_text(value: object, width: int | None = None) -> str:
    """Any untrusted value (a name, an id, a comment, model output) fit for one line of a terminal.

    Control characters are shown, never sent (ESC -> ``␛``, a newline -> ``␊``), as the
    review app shows them; with ``width``, longer text is cut and ends in ``…``.
    """
    return one_line(str(value), width)


def terminal_block(value: str) -> str:
    """Untrusted multi-line text for a terminal: newlines and tabs kept, other controls shown."""
    return visible_text(value)


def fail(message: str, code: int = 1) -> NoReturn:
    """Print an error to stderr and exit with ``code`` (no traceback).

    The message often quotes a file name, an id or a field: it is shown safely.
    """
    click.echo(f"error: {terminal_text(message)}", err=True)
    sys.exit(code)


# JSON escapes C0 controls itself; these it would write raw (the same JSON value either way).
_JSON_RAW_CONTROLS = {code: f"\\u{code:04x}" for code in [0x7F, *range(0x80, 0xA0)]}


def print_json(data: Any) -> None:
    """``data`` as JSON on standard output: indented for a person at a terminal, one line
    when piped or captured, so that a program reading the output (or only its last line,
    as line-oriented tools do) gets the whole document."""
    indent = 2 if sys.stdout.isatty() else None
    text = json.dumps(data, ensure_ascii=False, indent=indent, default=str)
    click.echo(text.translate(_JSON_RAW_CONTROLS))


class ShownAsJson(Protocol):
    # Mapping, not db.json_types.JsonObject: evaluator's JSON alias is a wider one.
    def to_json(self) -> Mapping[str, object]: ...


def printed_json_or_empty(
    rows: Sequence[ShownAsJson], *, as_json: bool, empty: str, err: bool = False
) -> bool:
    """With --json print ``rows`` as a JSON list; without, print ``empty`` (on stderr with
    ``err``) when there are none.

    True when that is all the command prints; False when the rows still want their table.
    """
    if as_json:
        print_json([row.to_json() for row in rows])
        return True
    if not rows:
        click.echo(empty, err=err)
        return True
    return False


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
                # 0: click sizes the bar to what the line leaves of the terminal's width
                # on every redraw, so the line never wraps (a wrapped line is not redrawn
                # in place: at 80 columns each update scrolled onto a new line).
                width=0,
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
