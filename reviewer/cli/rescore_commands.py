"""``vetbench runs rescore RUN_ID``: a finished run's figures again from its stored outputs,
with today's readers and metrics (``evaluator.rescore``); the model is not called and
nothing is written.

The command belongs to the ``runs`` group (``reviewer.cli.runs_commands``); importing this
module adds it there, so its module lists no commands of its own.
"""

from __future__ import annotations

import click

from db.words import counted
from reviewer.cli import options
from reviewer.cli.common import open_db
from reviewer.cli.output import print_json, terminal_text
from reviewer.cli.runs_commands import runs_group


def _shown(answer: str | None) -> str:
    return "—" if answer is None else terminal_text(answer)


@runs_group.command("rescore")
@click.argument("run_id", type=int)
@options.json("Print the stored and the new figures, and every difference, as JSON.")
@click.pass_context
def runs_rescore(ctx: click.Context, run_id: int, as_json: bool) -> None:
    """Read a finished run's stored outputs again with today's readers and metrics, and
    print what changed (after a reader is fixed).  Never calls the model; writes nothing.
    Figures are percentages, as the other run commands print them (--json keeps fractions)."""
    from evaluator.rescore import rescore_run
    from evaluator.run_text import figure_change

    rescored = rescore_run(open_db(ctx), run_id)
    if as_json:
        print_json(rescored.to_json())
        return
    changes = rescored.figure_changes
    if not changes and not rescored.items:
        click.echo(
            f"run {run_id}: every figure is as stored ({counted(rescored.after.n, 'prediction')})"
        )
        return
    click.echo(f"run {run_id}: {counted(len(rescored.items), 'prediction')} read differently today")
    for name, old, new in changes:
        click.echo(f"  {terminal_text(name):<32} {figure_change(old, new)}")
    for item in rescored.items:
        click.echo(
            f"  {terminal_text(item.item_id)}: {_shown(item.old_answer)} -> "
            f"{_shown(item.new_answer)} ({', '.join(item.changed)})"
        )


COMMANDS: tuple[click.Command, ...] = ()
"""Nothing of its own: ``runs rescore`` is added to the ``runs`` group on import."""
