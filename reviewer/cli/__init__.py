"""The ``vetbench`` command line.

The group lives here; each area lists its commands in its own module (``COMMANDS``)
so that one file does not grow with every feature.  Command modules import only
click and light helpers at the top: heavy work (torch, transformers, Textual)
is imported inside the command that needs it, so ``vetbench --help`` is instant.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from reviewer.cli.common import (
    CONTEXT_SETTINGS,
    connect_timeout_option,
    database_shown,
    db_option,
    fail,
    lock_timeout_option,
)


class VetbenchGroup(click.Group):
    """The command group; an expected fault in any command ends in one line, not a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.ClickException, SystemExit, KeyboardInterrupt):
            raise
        except Exception as error:
            message = _expected_fault(error, ctx)
            if message is None:
                raise
            fail(message)
        finally:
            _note_malformed_flags()


def _note_malformed_flags() -> None:
    """Say once that flag rows vetbench did not write were skipped (``db.stored_flags``),
    when the command read any flags."""
    reading = sys.modules.get("db.stored_flags")
    notice = reading.malformed_notice() if reading is not None else None
    if notice:
        click.echo(f"note: {notice}", err=True)


def _expected_fault(error: Exception, ctx: click.Context) -> str | None:
    """The one line for an expected error (``db.faults.expected_error_line``); ``None`` for
    anything else (a bug: it keeps its traceback)."""
    from db.faults import expected_error_line

    return expected_error_line(error, database_shown(ctx))


@click.group(cls=VetbenchGroup, context_settings=CONTEXT_SETTINGS)
@db_option
@connect_timeout_option
@lock_timeout_option
@click.version_option(package_name="vetbench")
@click.pass_context
def cli(
    ctx: click.Context,
    db: str | None,
    connect_timeout: float | None,
    lock_timeout: float | None,
) -> None:
    """vetbench: review LLM-generated benchmark items, measure agreement, evaluate models.

    The database is ./vetbench.db unless --db (or VETBENCH_DB) names a file or a
    SQLAlchemy URL such as postgresql+psycopg://user@host/vetbench.  Only init,
    import and users add create a database; other commands refuse a missing one.
    """
    ctx.ensure_object(dict)
    ctx.obj["db"] = db
    ctx.obj["connect_timeout"] = connect_timeout
    ctx.obj["lock_timeout"] = lock_timeout


def _register_commands() -> None:
    from reviewer.cli import (
        adjudication_commands,
        admin_commands,
        consensus_commands,
        eval_commands,
        flag_commands,
        generate_commands,
        gold_commands,
        guidelines_commands,
        item_commands,
        next_commands,
        people_commands,
        release_commands,
        rescore_commands,
        review_commands,
        runs_commands,
        serve_commands,
        settings_commands,
    )

    for module in (
        item_commands,
        review_commands,
        next_commands,
        settings_commands,
        guidelines_commands,
        gold_commands,
        adjudication_commands,
        consensus_commands,
        release_commands,
        eval_commands,
        runs_commands,
        rescore_commands,
        generate_commands,
        people_commands,
        admin_commands,
        serve_commands,
        flag_commands,
    ):
        for command in module.COMMANDS:
            cli.add_command(command)


_register_commands()


def main() -> None:
    cli(prog_name="vetbench")
