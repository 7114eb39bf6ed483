"""The options several commands share, as decorators: ``@options.kind``,
``@options.json("Print the runs as JSON.")``, ``@options.backend`` and the rest.

Commands import the module (``from reviewer.cli import options``), not each option.
Nothing heavy is imported at module level, so ``vetbench --help`` stays instant.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

import click

from db.item_scope import ItemScope
from db.vocabulary import (
    ALL,
    REASON_ALIASES_TEXT,
    DecisionReason,
    FlagName,
    ItemKind,
    ItemStatus,
    reason_named,
    values,
)
from reviewer.cli.common import fail, remember_filter_exams, remember_filter_sources

if TYPE_CHECKING:
    from db.search_query import SearchQuery
    from evaluator.backends.settings import ApiSettings

Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]

existing_file = click.Path(exists=True, dir_okay=False, path_type=Path)
"""The type of an option or argument naming a file that must exist (given as a Path)."""
existing_folder = click.Path(exists=True, file_okay=False, path_type=Path)
"""The type of an option naming a folder that must exist (given as a Path)."""

kind = click.option(
    "--kind",
    "kinds",
    multiple=True,
    type=click.Choice(values(ItemKind)),
    help="Only items of this kind (repeatable).",
)
source = click.option(
    "--source",
    "sources",
    multiple=True,
    metavar="NAME",
    callback=remember_filter_sources,
    help="Only items from this source (repeatable).",
)


def once(
    ctx: click.Context | None,
    param: click.Parameter | None,
    given: tuple[str, ...],
    hint: str | None = None,
) -> str | None:
    """Callback of an option that takes one value, declared ``multiple`` only so that a
    second one is refused (a usage error naming the option, or ``hint``, before anything
    is read or written): click keeps the last of a repeated option alone, without a word,
    and `--kind ordering --kind single` served single items only."""
    if len(set(given)) > 1:
        message = f"given more than once ({', '.join(given)}): give one"
        raise click.BadParameter(message, ctx, param, param_hint=hint)
    return given[0] if given else None


def one_of(flag: str, choices: Sequence[str], help_text: str, **settings: Any) -> Decorator:
    """``flag``: one of ``choices``, given once (``once`` refuses a second value)."""
    return click.option(
        flag, type=click.Choice(choices), multiple=True, callback=once, help=help_text, **settings
    )


exams = click.option(
    "--exam",
    "exams",
    multiple=True,
    metavar="NAME",
    callback=remember_filter_exams,
    help="Only CFLUE items of this exam (名称; repeatable).",
)
# Named in the help, which wraps, not in click's [a|b|...] beside the option, which does
# not: eight flag names ran --help to 105 columns on an 80-column terminal.
FLAG_NAMES = f"NAME: {', '.join(values(FlagName))}"
flags = click.option(
    "--flag",
    "flags",
    type=click.Choice(values(FlagName)),
    multiple=True,
    metavar="NAME",
    help=f"Only items whose current revision has this flag (repeatable: any of them). {FLAG_NAMES}.",
)


class ReasonChoice(click.Choice[str]):
    """A decision reason by its stored name, or by a word that names it
    (``db.vocabulary.REASON_ALIASES``: the verdicts ``no-order`` and ``ambiguous``, and
    ``several-valid-answers``), converted to the stored name; an unknown word's error
    lists the aliases too."""

    def __init__(self) -> None:
        super().__init__(values(DecisionReason))

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        try:
            return reason_named(value).value
        except ValueError:  # neither a reason nor an alias: click's own error, aliases added
            return super().convert(value, param, ctx)

    def get_invalid_choice_message(self, value: Any, ctx: click.Context | None) -> str:
        message = super().get_invalid_choice_message(value, ctx).rstrip(".")
        return f"{message} (or {REASON_ALIASES_TEXT})."


def reason(help_text: str) -> Decorator:
    """``--reason``: a decision reason, by its stored name or an alias (``ReasonChoice``)."""
    reasons = ", ".join(values(DecisionReason))
    return click.option(
        "--reason",
        type=ReasonChoice(),
        metavar="REASON",  # listed in the help, which wraps (see FLAG_NAMES)
        help=f"{help_text} Also {REASON_ALIASES_TEXT}. REASON: {reasons}.",
    )


def statuses(help_text: str, *, or_all: bool = True) -> Decorator:
    """``--status`` (repeatable, ``statuses``): items with these statuses, or `all` (every
    command that takes ``--status`` takes `all` for any status: ``chosen_statuses``)."""
    choices = (ALL, *values(ItemStatus)) if or_all else values(ItemStatus)
    return click.option(
        "--status", "statuses", type=click.Choice(choices), multiple=True, help=help_text
    )


def chosen_statuses(statuses: Sequence[str], default: Sequence[str]) -> tuple[str, ...]:
    """What ``--status`` asked for: ``default`` when not given, ``()`` (any status) for
    `all`, else the statuses given."""
    if ALL in statuses:
        return ()
    return tuple(statuses or default)


def item_scope(function: Callable[..., Any]) -> Callable[..., Any]:
    """``--kind`` and ``--source`` (both repeatable), received as one ``scope: ItemScope``."""

    @functools.wraps(function)
    def with_item_scope(
        *args: Any, kinds: tuple[str, ...], sources: tuple[str, ...], **kwargs: Any
    ) -> Any:
        return function(*args, scope=ItemScope.of(kinds, sources), **kwargs)

    return _with_options(with_item_scope, (kind, source))


def search(function: Callable[..., Any]) -> Callable[..., Any]:
    """``--search TEXT`` with ``--in``, ``--whole`` and ``--not-in`` (``db.search_query``),
    received as one ``search: SearchQuery | None``; a search the database cannot run, or
    a refinement without ``--search``, is one line."""
    from db.search_query import FIELD_CHOICES

    @functools.wraps(function)
    def with_search(
        *args: Any,
        search: str | None,
        search_in: tuple[str, ...],
        whole: bool,
        not_in: tuple[str, ...],
        **kwargs: Any,
    ) -> Any:
        return function(*args, search=_search_query(search, search_in, whole, not_in), **kwargs)

    return _with_options(
        with_search,
        (
            click.option(
                "--search",
                metavar="TEXT",
                help="Only items whose current question or choices hold every word of TEXT, "
                "in any language and case (TEXT may hold in:FIELD, whole:WORD, not:LONGER).",
            ),
            click.option(
                "--in",
                "search_in",
                multiple=True,
                type=click.Choice(FIELD_CHOICES),
                help="Where --search looks (repeatable; default: question and choices).",
            ),
            click.option(
                "--whole",
                is_flag=True,
                help="--search finds whole words only: `tax` not in `taxes` (Chinese: see --not-in).",
            ),
            click.option(
                "--not-in",
                "not_in",
                multiple=True,
                metavar="LONGER",
                # Worded so that no line holding the Chinese runs past 80 columns: click
                # counts a character one column where a terminal shows it two.
                help="A --search word inside LONGER does not count (repeatable), as in "
                "--search 增值税 --not-in 土地增值税.",
            ),
        ),
    )


class ItemFilters(TypedDict):
    """The items a listing keeps, as :func:`item_filters` hands them on: named as
    ``db.listings.list_items`` takes them (``**filters``); each left empty keeps every item."""

    kinds: tuple[str, ...]
    sources: tuple[str, ...]
    search: SearchQuery | None
    exams: tuple[str, ...]
    flags: tuple[str, ...]


def item_filters(function: Callable[..., Any]) -> Callable[..., Any]:
    """``--kind``, ``--source``, ``--search`` (refined as :func:`search` says), ``--exam``
    and ``--flag``: the items a listing keeps (`items`, `triage`), received as one
    ``filters: ItemFilters``."""

    @functools.wraps(function)
    def with_item_filters(
        *args: Any,
        kinds: tuple[str, ...],
        sources: tuple[str, ...],
        search: SearchQuery | None,
        exams: tuple[str, ...],
        flags: tuple[str, ...],
        **kwargs: Any,
    ) -> Any:
        filters = ItemFilters(kinds=kinds, sources=sources, search=search, exams=exams, flags=flags)
        return function(*args, filters=filters, **kwargs)

    return _with_options(with_item_filters, (kind, source, search, exams, flags))


def _search_query(
    text: str | None, fields: tuple[str, ...], whole: bool, not_in: tuple[str, ...]
) -> SearchQuery | None:
    from db.search_query import parse_search

    if text is None:
        if fields or whole or not_in:
            fail("--in, --whole and --not-in refine --search: give --search TEXT too")
        return None
    query = parse_search(text, fields=fields, whole=whole, not_in=not_in)
    if not query.terms:
        fail("--search needs some text")
    return query


def release(help_text: str) -> Decorator:
    """``--release NAME``: a release's items exactly as frozen (``release``), for the commands
    that read items (each refuses ``--status`` beside it); ``help_text`` says what is done
    with them."""
    return click.option("--release", metavar="NAME", help=help_text)


def json(help_text: str) -> Decorator:
    """``--json`` (``as_json``): JSON instead of the table; ``help_text`` says what is printed."""
    return click.option("--json", "as_json", is_flag=True, help=help_text)


def limit(help_text: str = "At most N items.", *, default: int | None = None) -> Decorator:
    """``--limit N``: at most N rows (``limit``; ``default``, shown in the help, when not given)."""
    return click.option(
        "--limit",
        type=click.IntRange(1),
        default=default,
        show_default=default is not None,
        metavar="N",
        help=help_text,
    )


def format_choice(
    dest: str,
    formats: Sequence[str],
    help_text: str,
    *,
    default: str | None = None,
    required: bool = True,
) -> Decorator:
    """``--format`` (``dest``): one of ``formats``; ``default``, shown in the help, when not
    given (without one, the option is required, or None when not ``required``: the command
    works it out)."""
    if default is None:  # no default at all: since click 8.3 a default of None is a value
        return click.option(
            "--format", dest, type=click.Choice(formats), required=required, help=help_text
        )
    return click.option(
        "--format",
        dest,
        type=click.Choice(formats),
        default=default,
        show_default=True,
        help=help_text,
    )


structured = click.option(
    "--structured/--no-structured",
    default=True,
    show_default=True,
    help="Ask for JSON-schema output (falls back to text if the server refuses).",
)
"""For the commands that ask a model to write JSON (`generate`, `check`)."""


API_FLAGS = (
    "base_url",
    "api_key_env",
    "concurrency",
    "timeout",
    "max_retries",
    "max_wait",
    "no_cache",
)
"""The API flags' parameter names: the fields of evaluator.backends.settings.ApiSettings."""


_API_LIMITS: tuple[tuple[str, click.ParamType, float, str], ...] = (
    ("--concurrency", click.IntRange(1, 64), 4, "Requests at once."),
    (
        "--timeout",
        click.FloatRange(0, min_open=True),
        60.0,
        "Seconds to wait for one whole answer.",
    ),
    (
        "--max-retries",
        click.IntRange(0, 50),
        5,
        "Extra attempts after a 429, 5xx, timeout or garbled answer.",
    ),
    (
        "--max-wait",
        click.FloatRange(0),
        60.0,
        "Longest wait between attempts, in seconds (caps Retry-After too).",
    ),
)
"""How hard the client tries: flag, type, default and help of each numeric API limit."""


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
        *(
            click.option(flag, type=kind, default=default, show_default=True, help=text)
            for flag, kind, default, text in _API_LIMITS
        ),
        click.option(
            "--no-cache",
            is_flag=True,
            help="Ask the server for every answer: none is taken from the response cache, "
            "and none is stored there (it keeps what it held).",
        ),
    )


def _with_options(
    function: Callable[..., Any],
    options: tuple[Decorator, ...],
) -> Callable[..., Any]:
    for option in reversed(options):
        function = option(function)
    return function


def _api_settings(kwargs: dict[str, Any]) -> ApiSettings:
    """Take the API flags out of a command's keyword arguments, as one value."""
    from evaluator.backends.settings import ApiSettings

    return ApiSettings(**{name: kwargs.pop(name) for name in API_FLAGS})


def api_client(function: Callable[..., Any]) -> Callable[..., Any]:
    """The OpenAI-compatible client's flags, for `generate` and `check`.

    The command receives them as one ``api: ApiSettings`` argument
    (``evaluator.backends.settings``).
    """

    @functools.wraps(function)
    def with_api_settings(*args: Any, **kwargs: Any) -> Any:
        return function(*args, api=_api_settings(kwargs), **kwargs)

    return _with_options(with_api_settings, _api_options())


def _auto_choice(flag: str, choices: tuple[str, ...], help_text: str) -> Decorator:
    """A choice whose default, "auto", lets the backend pick for the machine it runs on."""
    return click.option(
        flag,
        type=click.Choice(("auto", *choices)),
        default="auto",
        show_default=True,
        help=help_text,
    )


BACKEND_FLAGS = ("batch_size", "device", "dtype", "threads", "no_prefix_cache", "chat_template")


def backend(function: Callable[..., Any]) -> Callable[..., Any]:
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
        _auto_choice("--device", ("cpu", "cuda"), "auto: the GPU when there is one, else the CPU."),
        _auto_choice(
            "--dtype",
            ("float32", "bfloat16"),
            "auto: bfloat16 on a GPU or on a CPU with bfloat16 matrix units "
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
            "--chat-template/--no-chat-template",
            default=None,
            help="Send the prompt in the model's chat template, or plain [default: the "
            "model's template when it has one; plain completion for --protocol econlogicqa].",
        ),
    )

    @functools.wraps(function)
    def with_backend_settings(*args: Any, **kwargs: Any) -> Any:
        from evaluator.backends.settings import BackendSettings

        api = _api_settings(kwargs)
        flags = {name: kwargs.pop(name) for name in BACKEND_FLAGS}
        settings = BackendSettings(
            device=flags["device"],
            dtype=flags["dtype"],
            batch_size=flags["batch_size"],
            prefix_cache=not flags["no_prefix_cache"],
            chat_template=flags["chat_template"],
            threads=flags["threads"],
            api=api,
        )
        return function(*args, backend=settings, **kwargs)

    return _with_options(with_backend_settings, options)
