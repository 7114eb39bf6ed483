"""Shared pieces of the CLI: the --db option, opening the database, failing cleanly,
and showing untrusted text safely on a terminal."""

from __future__ import annotations

import functools
import getpass
import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, NoReturn, TypeVar

import click

from db.visible_text import one_line, visible_text
from db.vocabulary import ItemKind, values

if TYPE_CHECKING:
    from db.engine import Database
    from evaluator.backends.settings import ApiSettings

State = TypeVar("State")

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}

db_option = click.option(
    "--db",
    envvar="VETBENCH_DB",  # db.engine.DB_ENV_VAR; not imported here to keep --help instant
    default=None,
    metavar="PATH|URL",
    help="Database file or SQLAlchemy URL [default: ./vetbench.db; env VETBENCH_DB].",
)
# Defaults repeat db.engine's (10 s, 60 s); not imported here to keep --help instant.
connect_timeout_option = click.option(
    "--connect-timeout",
    envvar="VETBENCH_CONNECT_TIMEOUT",
    type=click.FloatRange(0, min_open=True),
    default=None,
    metavar="SECONDS",
    help="Give up on a database server that does not answer [default: 10; "
    "env VETBENCH_CONNECT_TIMEOUT].",
)
lock_timeout_option = click.option(
    "--lock-timeout",
    envvar="VETBENCH_LOCK_TIMEOUT",
    type=click.FloatRange(0, min_open=True),
    default=None,
    metavar="SECONDS",
    help="Give up waiting for another SQLite writer [default: 60; env VETBENCH_LOCK_TIMEOUT].",
)
LOCK_WAIT_NOTICE = "waiting for another writer…"


kind_option = click.option(
    "--kind",
    "kinds",
    multiple=True,
    type=click.Choice(values(ItemKind)),
    help="Only items of this kind (repeatable).",
)
source_option = click.option(
    "--source",
    "sources",
    multiple=True,
    metavar="NAME",
    help="Only items from this source (repeatable).",
)


API_FLAGS = ("base_url", "api_key_env", "concurrency", "timeout", "max_retries", "max_wait")
"""The API flags' parameter names: the fields of evaluator.backends.settings.ApiSettings."""


Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


def _api_options() -> tuple[Decorator, ...]:
    # The defaults repeat evaluator.backends.settings.ApiSettings', so --help imports nothing.
    return (
        click.option(
            "--base-url",
            default=None,
            metavar="URL",
            help="OpenAI-compatible server, e.g. http://host:8000/v1 [default: api.openai.com].",
        ),
        click.option(
            "--api-key-env",
            default="OPENAI_API_KEY",
            show_default=True,
            metavar="VAR",
            help="Environment variable holding the API key (never the key itself).",
        ),
        click.option(
            "--concurrency",
            type=click.IntRange(1, 64),
            default=4,
            show_default=True,
            help="Requests at once.",
        ),
        click.option(
            "--timeout",
            type=click.FloatRange(0, min_open=True),
            default=60.0,
            show_default=True,
            help="Seconds to wait for one answer.",
        ),
        click.option(
            "--max-retries",
            type=click.IntRange(0, 50),
            default=5,
            show_default=True,
            help="Extra attempts after a 429, 5xx, timeout or garbled answer.",
        ),
        click.option(
            "--max-wait",
            type=click.FloatRange(0),
            default=60.0,
            show_default=True,
            help="Longest wait between attempts, in seconds (caps Retry-After too).",
        ),
    )


def _with_options(
    function: Callable[..., Any],
    options: tuple[Callable[[Callable[..., Any]], Callable[..., Any]], ...],
) -> Callable[..., Any]:
    for option in reversed(options):
        function = option(function)
    return function


def _api_settings(kwargs: dict[str, Any]) -> ApiSettings:
    """Take the API flags out of a command's keyword arguments, as one value."""
    from evaluator.backends.settings import ApiSettings

    return ApiSettings(**{name: kwargs.pop(name) for name in API_FLAGS})


def api_client_options(function: Callable[..., Any]) -> Callable[..., Any]:
    """The OpenAI-compatible client's flags, for `generate`.

    The command receives them as one ``api: ApiSettings`` argument
    (``evaluator.backends.settings``).
    """

    @functools.wraps(function)
    def with_api_settings(*args: Any, **kwargs: Any) -> Any:
        return function(*args, api=_api_settings(kwargs), **kwargs)

    return _with_options(with_api_settings, _api_options())


BACKEND_FLAGS = ("batch_size", "device", "dtype", "threads", "no_prefix_cache", "no_chat_template")


def backend_options(function: Callable[..., Any]) -> Callable[..., Any]:
    """Every flag of how a model is run, for `eval` and for the evaluation screen (`review`).

    The command receives them as one ``backend: BackendSettings`` argument
    (``evaluator.backends.settings``); a bad batch size fails before any model loads.
    """
    options: tuple[Decorator, ...] = (
        click.option(
            "--batch-size",
            default="auto",
            show_default=True,
            metavar="auto|N",
            help="Sequences per batch (local models).",
        ),
        click.option(
            "--device",
            type=click.Choice(("auto", "cpu", "cuda")),
            default="auto",
            show_default=True,
            help="auto: the GPU when there is one, else the CPU.",
        ),
        click.option(
            "--dtype",
            type=click.Choice(("auto", "float32", "bfloat16")),
            default="auto",
            show_default=True,
            help="auto: bfloat16 on a GPU or on a CPU with bfloat16 matrix units "
            "(AMX, AVX-512 BF16), else float32 (local models).",
        ),
        click.option(
            "--threads",
            type=click.IntRange(1),
            help="CPU threads for local models [default: torch's choice]; on a CPU busy with "
            "other work, 1 is often fastest.",
        ),
        *_api_options(),  # for openai:NAME models
        click.option(
            "--no-prefix-cache",
            is_flag=True,
            help="Recompute the shared few-shot prefix for every batch (for speed comparisons).",
        ),
        click.option(
            "--no-chat-template",
            is_flag=True,
            help="Send the plain prompt even when the model has a chat template.",
        ),
    )

    @functools.wraps(function)
    def with_backend_settings(*args: Any, **kwargs: Any) -> Any:
        from evaluator.backends.base import BackendError
        from evaluator.backends.settings import BackendSettings

        api = _api_settings(kwargs)
        flags = {name: kwargs.pop(name) for name in BACKEND_FLAGS}
        try:
            settings = BackendSettings(
                device=flags["device"],
                dtype=flags["dtype"],
                batch_size=flags["batch_size"],
                prefix_cache=not flags["no_prefix_cache"],
                chat_template=False if flags["no_chat_template"] else None,
                threads=flags["threads"],
                api=api,
            )
        except BackendError as error:
            fail(str(error))
        return function(*args, backend=settings, **kwargs)

    return _with_options(with_backend_settings, options)


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


def default_user() -> str:
    """The operating-system login, used when --as is not given."""
    try:
        return getpass.getuser()
    except Exception:
        return "annotator"


def fail(message: str, code: int = 1) -> NoReturn:
    """Print an error to stderr and exit with ``code`` (no traceback).

    The message often quotes a file name, an id or a field: it is shown safely.
    """
    click.echo(f"error: {terminal_text(message)}", err=True)
    sys.exit(code)


# JSON escapes C0 controls itself; these it would write raw (the same JSON value either way).
_JSON_RAW_CONTROLS = {code: f"\\u{code:04x}" for code in [0x7F, *range(0x80, 0xA0)]}


def print_json(data: Any) -> None:
    text = json.dumps(data, ensure_ascii=False, indent=2, default=str)
    click.echo(text.translate(_JSON_RAW_CONTROLS))


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
