"""CLI commands for the review guidelines: ``vetbench guidelines set|show|list``.

Guidelines are Markdown kept in the database with versions (``db.guidelines``);
leads set them, everyone reads them, and the review app shows them with ``g``.
Only click and light helpers are imported at module level (``--help`` stays instant).
"""

from __future__ import annotations

from pathlib import Path

import click

from reviewer.cli import options
from reviewer.cli.common import fail, open_db, read_db
from reviewer.cli.identity import acting_person, as_option
from reviewer.cli.output import printed_json_or_empty, terminal_block, terminal_text


@click.group("guidelines")
def guidelines_group() -> None:
    """The review guidelines (Markdown), stored in the database with versions."""


@guidelines_group.command("set")
@click.argument("path", type=options.existing_file)
@as_option("The lead setting them.")
@click.pass_context
def guidelines_set(ctx: click.Context, path: Path, name: str | None) -> None:
    """Store FILE.md as the next version of the guidelines (leads only).

    A file equal to the newest version stores nothing.  Annotators see the new
    version with g in the review app; every judgment records the version in force.
    """
    from db.guidelines import set_guidelines

    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        fail(f"{path}: not UTF-8 text (byte {error.start}); save the guidelines as UTF-8")
    except OSError as error:
        fail(f"{path}: {error.strerror or error}")
    db = open_db(ctx)
    who = acting_person(ctx, name, needs_lead=True)
    with db.transaction() as session:
        result = set_guidelines(session, text, lead=who.name, file_name=path.name)
    version = result.current.version
    if not result.changed:
        click.echo(f"{terminal_text(path)} is the same as version {version}: nothing stored")
        return
    before = f" (was version {result.previous})" if result.previous else ""
    click.echo(
        f"guidelines version {version} set from {terminal_text(path)} by "
        f"{terminal_text(who.name)}{before}: {len(text):,} characters"
    )


@guidelines_group.command("show")
@click.option("--version", "version", type=click.IntRange(1), help="An earlier version.")
@click.pass_context
def guidelines_show(ctx: click.Context, version: int | None) -> None:
    """Print the guidelines (the newest version unless --version)."""
    from db.guidelines import current_guidelines_version, get_guidelines

    with open_db(ctx).session() as session:
        found = get_guidelines(session, version)
        newest = current_guidelines_version(session)
    if found is None:
        if newest is None:
            fail(
                "there are no guidelines yet; a lead sets them with `vetbench guidelines set FILE.md`"
            )
        fail(f"there is no version {version} of the guidelines (the newest is {newest})")
    label = "newest" if found.version == newest else f"the newest is {newest}"
    click.echo(
        f"# guidelines version {found.version} ({label}), set by {terminal_text(found.author)} "
        f"on {found.created_at:%Y-%m-%d %H:%M} UTC from {terminal_text(found.file_name or '—')}",
        err=True,
    )
    click.echo(terminal_block(found.text), nl=not found.text.endswith("\n"))


@guidelines_group.command("list")
@options.json("Print a JSON list.")
@click.pass_context
def guidelines_list(ctx: click.Context, as_json: bool) -> None:
    """Every version of the guidelines, oldest first."""
    from db.guidelines import guidelines_history

    versions = read_db(ctx, guidelines_history)
    if printed_json_or_empty(
        versions,
        as_json=as_json,
        empty="none: a lead sets them with `vetbench guidelines set FILE.md`",
    ):
        return
    for entry in versions:
        click.echo(
            f"version {entry.version}  {entry.created_at:%Y-%m-%d %H:%M}  "
            f"{terminal_text(entry.author)}  {terminal_text(entry.file_name or '—')}  "
            f"{len(entry.text):,} characters"
        )


COMMANDS: tuple[click.Command, ...] = (guidelines_group,)
"""The commands this module adds to the `vetbench` group."""
