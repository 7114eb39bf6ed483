"""``--as`` and ``--new-user`` for every command that acts as a person.

Each such command resolves the person once, through ``db.identity.resolve_identity``
(the same function the review app's start uses), and refuses with one line when
it cannot.  Only click is imported here at module level, so ``--help`` stays instant.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Unpack

import click

from reviewer.cli.common import open_db
from reviewer.cli.output import terminal_text

if TYPE_CHECKING:
    from db.identity import Identity, IdentityOptions


# How to read as a lead where the database tells who is acting (PostgreSQL: the login).
AS_A_LEAD = "--as a lead's name on SQLite; a lead's own login on PostgreSQL"
FOR_LEADS = f"for leads ({AS_A_LEAD}), so that annotators judge blind"
"""Why a command gives anyone but a lead counts where a lead reads who answered what
(``triage``, ``consensus``, ``audit``; ``conflicts`` says it in its own words)."""


def as_option(help_text: str = "Who you are.") -> Callable[[Any], Any]:
    """``--as NAME``: on SQLite the default is your login; on PostgreSQL your database role."""
    return click.option(
        "--as",
        "name",
        default=None,
        metavar="NAME",
        help=f"{help_text} Default: your login (SQLite) or your database role "
        "(PostgreSQL, where naming anyone else is refused).",
    )


new_user_option = click.option(
    "--new-user",
    is_flag=True,
    help="Register the --as name as a new annotator (unknown names are refused otherwise).",
)


def acting_person(
    ctx: click.Context, name: str | None, **options: Unpack[IdentityOptions]
) -> Identity:
    """The person acting for this command, or a one-line refusal (exit 1); ``options`` go
    to ``db.identity.resolve_identity``.

    ``needs_lead``: a command only leads may run, which registers no one on first use
    (see ``db.identity.resolve_identity``).  ``registers_with_write``: the command's own
    write registers a new person (a judgment), so a refused command registers no one;
    the command calls :func:`say_held_notice` once its write is stored.  ``check_only``:
    every refusal a registration could meet, nothing written (``vetbench serve``).

    Notices (a registration, a role the database and vetbench disagree on) go to
    stderr, so ``--json`` output stays clean.
    """
    from db.identity import resolve_identity

    identity = resolve_identity(open_db(ctx), name, **options)
    if not identity.pending:
        _say_notice(identity)
    return identity


def say_held_notice(identity: Identity) -> None:
    """The registration notice of a ``registers_with_write`` command, once its write (and
    with it the registration) is stored."""
    if identity.pending:
        _say_notice(identity)


def _say_notice(identity: Identity) -> None:
    if identity.notice:  # it names the person: shown safely
        click.echo(f"note: {terminal_text(identity.notice)}", err=True)
