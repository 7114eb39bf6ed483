"""The ``vetbench`` command line.

The group lives here; each area registers its commands from its own module so
that one file does not grow with every feature.  Command modules import only
click and light helpers at the top: heavy work (torch, transformers, Textual)
is imported inside the command that needs it, so ``vetbench --help`` is instant.
"""

from __future__ import annotations

import click

from reviewer.cli.common import CONTEXT_SETTINGS, db_option


@click.group(context_settings=CONTEXT_SETTINGS)
@db_option
@click.version_option(package_name="vetbench")
@click.pass_context
def cli(ctx: click.Context, db: str | None) -> None:
    """vetbench: review LLM-generated benchmark items, measure agreement, evaluate models.

    The database is ./vetbench.db unless --db (or VETBENCH_DB) names a file or a
    SQLAlchemy URL such as postgresql+psycopg://user@host/vetbench.
    """
    ctx.ensure_object(dict)
    ctx.obj["db"] = db


def _register_commands() -> None:
    from reviewer.cli import (
        adjudication_commands,
        eval_commands,
        generate_commands,
        item_commands,
        review_commands,
        serve_commands,
    )

    for module in (
        item_commands,
        review_commands,
        adjudication_commands,
        eval_commands,
        generate_commands,
        serve_commands,
    ):
        module.register(cli)


_register_commands()


def main() -> None:
    cli(prog_name="vetbench")
