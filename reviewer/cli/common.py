"""Shared pieces of the CLI's commands: the --db and timeout options, opening the
database, failing cleanly, and refusing to start the app without a terminal.  What
commands print is in ``reviewer.cli.output``."""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Any, Concatenate, NoReturn, ParamSpec, TypeVar

import click

from reviewer.cli.output import error_text, terminal_text

if TYPE_CHECKING:
    from db.engine import Database

Args = ParamSpec("Args")
Read = TypeVar("Read")

EXIT_INTERRUPTED = 130  # 128 + SIGINT: what shells report for a command stopped by Ctrl-C
# sysexits' EX_TEMPFAIL, "try again later": an evaluation finished with predictions that
# failed (server gone, timeouts), which `eval --resume` asks again; a script reading the
# exit status took a run with 16 of 18 failed for a whole one.
EXIT_FAILURES_LEFT = 75
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
    "Give up waiting for another SQLite writer, or a PostgreSQL lock [default: 60; env "
    "VETBENCH_LOCK_TIMEOUT].",
)
LOCK_WAIT_NOTICE = "waiting for another writer…"


def confirmed(question: str) -> bool:
    """``click.confirm``; standard input that ends unanswered (a script, ``< /dev/null``) is
    one line that names ``--yes``, instead of click's bare "Aborted!"."""
    try:
        return click.confirm(question)
    except click.Abort:
        if sys.stdin is not None and sys.stdin.isatty():
            raise  # Ctrl-C or Ctrl-D at the prompt: the person stopped it
        click.echo(err=True)
        fail("no answer on standard input, so nothing was done: pass --yes to go ahead unasked")


def suggested_command(ctx: click.Context, *words: str) -> str:
    """A ``vetbench`` command line to tell the user, naming the database as they did: with
    ``--db`` when they gave it on the command line (a server URL with its password as
    ``***``), without it when it came from VETBENCH_DB or is the default."""
    from click.core import ParameterSource

    from db.engine import hide_password

    root = ctx.find_root()
    given = (root.obj or {}).get("db")
    prefix = ["vetbench"]
    if given and root.get_parameter_source("db") is ParameterSource.COMMANDLINE:
        prefix += ["--db", hide_password(given)]
    return shlex.join([*prefix, *words])


def given_options(ctx: click.Context, names: Collection[str]) -> dict[str, str]:
    """The parameters among ``names`` that the command line gave (defaults and environment
    variables do not count), in the command's order, each as it is written: ``--shots``,
    or an argument's name (``ITEM_ID``)."""
    from click.core import ParameterSource

    return {
        str(param.name): _written(param)
        for param in ctx.command.params
        if param.name in names
        and ctx.get_parameter_source(param.name) is ParameterSource.COMMANDLINE
    }


def _written(param: click.Parameter) -> str:
    if not isinstance(param, click.Option):
        return param.human_readable_name
    return next((opt for opt in param.opts if opt.startswith("--")), param.opts[0])


_FILTER_SOURCES = "vetbench.filter_sources"
_FILTER_EXAMS = "vetbench.filter_exams"


def remember_filter_sources(ctx: click.Context, _param: click.Parameter, value: Any) -> Any:
    """Callback of every ``--source`` that narrows items (``options.source``, the queue's):
    :func:`open_db` refuses the names no item comes from once the database is open, so a
    misspelt source is an error, not an empty list."""
    return _remember(ctx, _FILTER_SOURCES, value)


def remember_filter_exams(ctx: click.Context, _param: click.Parameter, value: Any) -> Any:
    """Callback of every ``--exam`` (``options.exams``): :func:`open_db` refuses an exam
    name (名称) no item has, as it refuses a source, so a misspelt or partial name is an
    error, not an empty list."""
    return _remember(ctx, _FILTER_EXAMS, value)


def _remember(ctx: click.Context, key: str, value: Any) -> Any:
    given = () if value is None else (value,) if isinstance(value, str) else tuple(value)
    ctx.meta[key] = given
    return value


def open_db(ctx: click.Context, *, create: bool = False, migrate: bool = True) -> Database:
    """Open (upgrading) the database named by --db; one per command invocation.

    Only the commands that create a database on purpose (``init``, ``import``,
    ``users add``) pass ``create=True``; every other command refuses a missing one.
    ``migrate=False`` (``backup``) leaves the schema as it is.
    A database opened read-only says so on stderr.  A ``--source`` (or ``--exam``) filter
    that names no source (exam) of the database's items is refused (one line, with the
    sources, or exams, there are).
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
        cached = open_database(
            root.obj.get("db"), create=create, migrate=migrate, settings=settings
        )
        if cached.notice:
            click.echo(f"note: {terminal_text(cached.notice)}", err=True)
        root.obj["database"] = cached
        root.call_on_close(cached.dispose)
        _require_known_filters(cached, ctx)
    return cached


def read_db(
    ctx: click.Context,
    query: Callable[Concatenate[Any, Args], Read],  # Any: commands import no sqlmodel
    *args: Args.args,
    **kwargs: Args.kwargs,
) -> Read:
    """``query(session, *args, **kwargs)`` in a session of its own on the database --db
    names (:func:`open_db`): the one read of a command that lists or shows something,
    done and closed before the command prints."""
    with open_db(ctx).session() as session:
        return query(session, *args, **kwargs)


def _require_known_filters(db: Database, ctx: click.Context) -> None:
    """Refuse (one line: :func:`fail`) a ``--source`` or ``--exam`` that names what no item
    has, naming what the items have."""
    sources, exams = ctx.meta.get(_FILTER_SOURCES, ()), ctx.meta.get(_FILTER_EXAMS, ())
    if sources:
        from db.listings import source_names

        refusal = "no items come from source {}; sources: {}"
        none = "none yet (import items first: vetbench import FILE)"
        _require_known(db, sources, source_names, refusal, none)
    if exams:
        from db.search import known_exam_names

        refusal = "no item's exam (名称) is {}; exams: {}"
        _require_known(db, exams, known_exam_names, refusal, "none (no CFLUE item has 名称)")


def _require_known(
    db: Database,
    given: tuple[str, ...],
    names_there: Callable[[Any], list[str]],  # Any: a session (commands import no sqlmodel)
    refusal: str,
    none: str,
) -> None:
    """:func:`fail` with ``refusal`` (the names of ``given`` not among ``names_there``, then
    those, or ``none``) unless every name given is there."""
    with db.session() as session:
        known = names_there(session)
    unknown = [name for name in given if name not in known]
    if unknown:
        names = ", ".join(f"'{terminal_text(name)}'" for name in unknown)
        fail(refusal.format(names, ", ".join(terminal_text(name) for name in known) or none))


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


def fail(message: str, code: int = 1) -> NoReturn:
    """Print an error to stderr and exit with ``code`` (no traceback).

    The message often quotes a file name, an id or a field: it is shown safely.
    """
    click.echo(error_text(message), err=True)
    sys.exit(code)


def require_terminal(app: str, instead: str) -> None:
    """Refuse (one line, exit 1) to start the full-screen ``app`` unless standard input,
    output and error are all a terminal, saying ``instead`` what works without one.

    Textual reads the keys from standard input and draws on standard error; a command
    whose output goes to a pipe or a file (``vetbench review | cat``, ``> out.txt``) was
    meant to print, not to take over the screen and wait for keys.  Called before the
    database is opened, so a refused start registers no one and writes nothing.  An app
    drawn by another Textual driver (``TEXTUAL_DRIVER``: textual-serve's, in each tab of
    ``vetbench serve``) talks through pipes by design, and starts.
    """
    if os.environ.get("TEXTUAL_DRIVER"):
        return
    streams = {"input": sys.stdin, "output": sys.stdout, "error": sys.stderr}
    missing = [name for name, stream in streams.items() if stream is None or not stream.isatty()]
    if not missing:
        return
    named = " and ".join((", ".join(missing[:-1]), missing[-1])) if len(missing) > 1 else missing[0]
    verb = "is not one" if len(missing) == 1 else "are not terminals"
    fail(f"{app} needs a terminal, and standard {named} {verb}; {instead}")
