"""Shared pieces of the CLI: the --db option, opening the database, failing cleanly."""

from __future__ import annotations

import getpass
import json
import sys
from typing import TYPE_CHECKING, Any, NoReturn

import click

if TYPE_CHECKING:
    from db.engine import Database

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}

db_option = click.option(
    "--db",
    envvar="VETBENCH_DB",  # db.engine.DB_ENV_VAR; not imported here to keep --help instant
    default=None,
    metavar="PATH|URL",
    help="Database file or SQLAlchemy URL [default: ./vetbench.db; env VETBENCH_DB].",
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
