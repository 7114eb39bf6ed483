"""The ``vetbench`` command line.

The group lives here; each area lists its commands in its own module (``COMMANDS``)
so that one file does not grow with every feature.  Command modules import only
click and light helpers at the top: heavy work (torch, transformers, Textual)
is imported inside the command that needs it, so ``vetbench --help`` is instant.
"""

from __future__ import annotations

import io
import sys
from typing import IO, Any

import click

from db.interrupts import InterruptedAfterCommit, InterruptedDuringCommit
from reviewer.cli.common import (
    CONTEXT_SETTINGS,
    connect_timeout_option,
    database_shown,
    db_option,
    fail,
    lock_timeout_option,
)
from reviewer.cli.output import plainly_wrapped, terminal_width


class VetbenchGroup(click.Group):
    """The command group; an expected fault in any command ends in one line, not a traceback
    (on a terminal narrower than it, broken at blanks: ``output.error_text``), as does a
    usage error (:class:`FittedUsageError`) and a Ctrl-C that a commit waited for (exit
    130: ``db.interrupts``)."""

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.UsageError as error:
            raise FittedUsageError.of(error) from error

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.UsageError as error:
            raise FittedUsageError.of(error) from error
        except InterruptedAfterCommit:
            # click's "Aborted!" would leave a person thinking nothing was written.
            fail(f"interrupted (Ctrl-C) just after a change was stored; {_WHAT_IS_STORED}", 130)
        except InterruptedDuringCommit:
            fail(
                "interrupted (Ctrl-C twice) while a change was being stored: it may or may "
                f"not be; {_WHAT_IS_STORED}",
                130,
            )
        except (click.exceptions.Exit, click.ClickException, SystemExit, KeyboardInterrupt):
            raise
        except Exception as error:
            message = _expected_fault(error, ctx)
            if message is None:
                raise
            fail(message)
        finally:
            _note_malformed_flags()


class FittedUsageError(click.UsageError):
    """A click error (an unknown option, a bad value) shown as click shows it, but with its
    ``Error:`` line broken at blanks to the width of the terminal standard error is, the
    lines after the first under the message (``output.plainly_wrapped``): click prints it
    whole, and a list of choices ran to 140 columns."""

    def __init__(self, error: click.UsageError) -> None:
        super().__init__(error.format_message(), error.ctx)
        self.error = error

    @classmethod
    def of(cls, error: click.UsageError) -> click.UsageError:
        """``error`` to be fitted when its message is one line and standard error a
        terminal; else ``error`` itself (piped, it reads as click wrote it)."""
        if isinstance(error, cls) or "\n" in error.format_message():
            return error
        return error if terminal_width(err=True) is None else cls(error)

    def show(self, file: IO[Any] | None = None) -> None:
        shown = io.StringIO()
        self.error.show(shown)
        text = shown.getvalue()
        said = f"{SAID}{self.message}\n"
        if text.endswith(said):
            fitted = plainly_wrapped(self.message, first=SAID, hang=" " * len(SAID), err=True)
            text = f"{text.removesuffix(said)}{fitted}\n"
        click.echo(text, file=file, nl=False, err=file is None)


SAID = "Error: "  # how click starts the line of its error
_WHAT_IS_STORED = "`vetbench audit --limit 5` shows what the command stored"


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
