"""CLI commands for the project settings kept in the database: ``vetbench config``.

The settings module is imported inside the commands: ``--help`` stays instant.
"""

from __future__ import annotations

import click

from reviewer.cli import options
from reviewer.cli.common import fail, open_db, read_db
from reviewer.cli.identity import acting_person, as_option
from reviewer.cli.output import printed_json_or_empty
from reviewer.cli.tables import echo_table


@click.group()
def config() -> None:
    """Project settings stored in the database (shared by everyone using it)."""


@config.command("list")
@options.json("Print each setting as an object: name, value, default, valid, help.")
@click.pass_context
def config_list(ctx: click.Context, as_json: bool) -> None:
    """Every setting with its value and what it means."""
    from db.settings import list_settings

    listed = read_db(ctx, list_settings)
    if printed_json_or_empty(listed, as_json=as_json, empty="no settings"):
        return
    rows = []
    for setting in listed:
        marker = "" if setting.value != setting.default else " (default)"
        if not setting.valid:
            marker = " (not valid: a lead sets it again)"
        rows.append((f"{setting.name} = {setting.value}{marker}", f"# {setting.help}"))
    echo_table(rows, gap="    ", aligned=False)


@config.command("get")
@click.argument("key")
@click.pass_context
def config_get(ctx: click.Context, key: str) -> None:
    """Print one setting's value."""
    from db.settings import get_setting

    click.echo(read_db(ctx, get_setting, key))


@config.command("set")
@click.argument("key")
@click.argument("value")
@as_option("The lead changing it.")
@click.pass_context
def config_set(ctx: click.Context, key: str, value: str, name: str | None) -> None:
    """Change a setting (leads only), e.g. `vetbench config set overlap 3`."""
    from db.settings import change_setting, idle_under_routing

    db = open_db(ctx)
    who = acting_person(ctx, name, needs_lead=True)
    if not who.is_lead:
        from db.people import lead_advice

        standing = f"an {who.role}" if who.role else "not registered"
        fail(
            f"only leads change settings; {who.name} is {standing}: "
            f"{read_db(ctx, lead_advice, who.name)}"
        )
    with db.transaction() as session:
        change = change_setting(session, key, value, actor=who.name)
    if not change.changed:
        click.echo(f"{key} = {change.new} already; nothing changed")
        return
    click.echo(f"{key} = {change.new} (was {change.old})")
    with db.session() as session:
        if idle := idle_under_routing(session, key):
            click.echo(f"note: {idle}")
    from db.item_status import STATUS_SETTINGS, refresh_open_statuses

    if key in STATUS_SETTINGS:
        changed = refresh_open_statuses(db)
        setting = f"k = {change.new}" if key == "overlap" else f"{key} {change.new}"
        click.echo(f"item statuses recomputed for {setting}: {changed} changed")
    if key in ("calibration_items", "calibration_pass"):
        from db.item_status import refresh_judged_items

        with db.transaction() as session:
            changed = refresh_judged_items(session)
        click.echo(f"item statuses recomputed for the qualification gate: {changed} changed")


COMMANDS: tuple[click.Command, ...] = (config,)
"""The commands this module adds to the `vetbench` group."""
