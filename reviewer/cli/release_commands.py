"""CLI commands for releases: ``vetbench release create|list|show|diff|verify``.

A release is a frozen, named, hashed version of the benchmark (``db.releases``):
``eval --release`` and ``export --release`` use exactly its revisions, whatever was
edited or decided since.
"""

from __future__ import annotations

from pathlib import Path

import click

from db.vocabulary import ItemStatus
from db.words import counted
from reviewer.cli import options
from reviewer.cli.common import fail, open_db, read_db
from reviewer.cli.identity import acting_person, as_option
from reviewer.cli.output import (
    column,
    print_json,
    printed_json_or_empty,
    terminal_block,
    terminal_text,
    wrapped,
)


@click.group("release")
def release_group() -> None:
    """Releases: frozen, hashed, citable versions of the benchmark."""


def _counts(counts: dict[str, int]) -> str:
    from db.releases import tally

    return tally(dict(sorted(counts.items())))


@release_group.command("create")
@click.argument("release_name", metavar="NAME")
@click.option("--note", default="", help="What this release is (kept with it).")
@options.statuses("Items with this status (repeatable; `all` for every item) [default: approved].")
@options.kind
@options.source
@as_option("The lead making the release.")
@options.json("Print the release as JSON.")
@click.pass_context
def release_create(
    ctx: click.Context,
    release_name: str,
    note: str,
    statuses: tuple[str, ...],
    kinds: tuple[str, ...],
    sources: tuple[str, ...],
    name: str | None,
    as_json: bool,
) -> None:
    """Freeze the current revision of every selected item as release NAME (leads only)."""
    from db.releases import ReleaseRequest
    from reviewer.releases import create_release

    db = open_db(ctx)
    who = acting_person(ctx, name, needs_lead=True)
    request = ReleaseRequest(
        release_name,
        statuses=options.chosen_statuses(statuses, (ItemStatus.APPROVED.value,)),
        kinds=kinds,
        sources=sources,
        note=note,
    )
    release = create_release(db, request, lead=who.name)
    if as_json:
        print_json(release.to_json())
        return
    click.echo(
        wrapped(
            f"release {terminal_text(release.name)}: {counted(release.item_count, 'item')}, "
            f"hash {release.hash}",
            hang="  ",
        )
    )


@release_group.command("list")
@options.json("Print a JSON list.")
@click.pass_context
def release_list(ctx: click.Context, as_json: bool) -> None:
    """Every release, oldest first."""
    from db.releases import list_releases

    releases = read_db(ctx, list_releases)
    none = "none: a lead makes one with `vetbench release create NAME --as LEAD`"
    if printed_json_or_empty(releases, as_json=as_json, empty=none):
        return
    names = column([terminal_text(release.name) for release in releases])
    for name, release in zip(names, releases, strict=True):
        click.echo(
            f"{name}  {release.hash[:12]}  "
            f"{counted(release.item_count, 'item'):>12}  {release.created_at:%Y-%m-%d %H:%M} "
            f"by {terminal_text(release.created_by)}"
            + (f"  {terminal_text(release.note)}" if release.note else "")
        )


@release_group.command("show")
@click.argument("name")
@options.json("Print the release, its counts and figures as JSON.")
@click.pass_context
def release_show(ctx: click.Context, name: str, as_json: bool) -> None:
    """A release: its hash, items by kind and source, and the review figures when it was made."""
    from db.releases import figure_rows, release_contents

    contents = read_db(ctx, release_contents, name)
    if as_json:
        print_json(contents.to_json())
        return
    release = contents.release
    click.echo(f"release {terminal_text(release.name)}")
    click.echo(f"  hash      {release.hash}")
    click.echo(
        f"  made      {release.created_at:%Y-%m-%d %H:%M} UTC by {terminal_text(release.created_by)}"
    )
    if release.note:
        click.echo(f"  note      {terminal_text(release.note)}")
    click.echo(f"  items     {release.item_count}: {_counts(contents.by_kind)}")
    click.echo(f"  sources   {terminal_text(_counts(contents.by_source))}")
    for label, value in figure_rows(release):
        click.echo(wrapped(f"{label}: {value}", first="  ", hang="    "))


@release_group.command("diff")
@click.argument("old")
@click.argument("new")
@options.json("Print the differences as JSON.")
@click.pass_context
def release_diff(ctx: click.Context, old: str, new: str, as_json: bool) -> None:
    """Items added, removed and changed from release OLD to NEW, each with why (Markdown)."""
    from reviewer.releases import changelog_markdown, diff_releases

    diff = read_db(ctx, diff_releases, old, new)
    if as_json:
        print_json(diff.to_json())
    else:
        click.echo(terminal_block(changelog_markdown(diff)), nl=False)


@release_group.command("verify")
@click.argument("name", required=False)
# `release verify v1 FILE` is what people type first (as `sha256sum -c FILE` takes it):
# the file after NAME is the export, as --export gives it.
@click.argument(
    "export_file", required=False, metavar="[EXPORT]", type=click.Path(exists=True, path_type=Path)
)
@click.option(
    "--export",
    "export_path",
    type=click.Path(exists=True, path_type=Path),
    help="Check an exported file or folder against the release it names.",
)
@options.json("Print what was checked as JSON.")
@click.pass_context
def release_verify(
    ctx: click.Context,
    name: str | None,
    export_file: Path | None,
    export_path: Path | None,
    as_json: bool,
) -> None:
    """Recompute release NAME's hash from the database, or check an export (EXPORT after
    NAME, or --export; with NAME, the export must be of that release)."""
    from db.releases import ReleaseError, Verification, verify_release
    from evaluator.exports.release_check import ExportVerification, mismatch, verify_export

    if export_file is not None:
        if export_path is not None:
            fail(f"give the export once: {export_file} and --export {export_path}")
        export_path = export_file
    if name is None and export_path is None:
        fail("give a release NAME, or --export PATH (an export names its release)")
    db = open_db(ctx)
    result: Verification | ExportVerification
    if export_path is not None:
        result = verify_export(db, export_path, expected_release=name)
    else:
        assert name is not None
        with db.session() as session:
            try:
                result = verify_release(session, name)
            except ReleaseError as error:
                if not Path(name).exists():
                    raise
                shown = terminal_text(name)  # a file named where the release goes: say how
                fail(
                    f"{error}; to check the export {shown}: `vetbench release verify --export {shown}`"
                )
    if as_json:
        print_json(result.to_json())
    else:
        lines = [*result.differences]
        if isinstance(result, ExportVerification):
            lines += [*result.notes(), f"{export_path} {result.verdict()}"]
        elif result.ok:
            lines.append(
                f"matches release {result.name}: {counted(result.items, 'item')}, "
                f"hash {result.recomputed_hash}"
            )
        else:
            lines.append(
                mismatch(result.name, result.items, result.recomputed_hash, result.stored_hash)
            )
        for line in lines:
            click.echo(wrapped(terminal_text(line), hang="  "))
    if not result.ok:
        ctx.exit(1)


COMMANDS: tuple[click.Command, ...] = (release_group,)
"""The commands this module adds to the `vetbench` group."""
