"""A ``--source`` that narrows items names a source the database has, or is refused.

Every command whose ``--source`` filters stored items (``options.source`` and the
queue's) says "no items come from source 'X'; sources: …" in one line and writes
nothing, instead of an empty list that reads as "nothing to do".  The table below is
checked against the command tree, so a new command with such a filter joins it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from helpers import run_cli, run_in_terminal, store_item, store_person

from db.audit import read_audit
from db.engine import Database, open_database
from db.vocabulary import Role
from reviewer.cli import cli
from reviewer.cli.common import remember_filter_sources

MISSPELT = "econ_ordring"


def audit_events(database: Database) -> int:
    with database.session() as session:
        return len(read_audit(session))


# Each command with the least it needs besides --source; the export's file is in tmp_path.
ARGUMENTS: dict[str, tuple[str, ...]] = {
    "items": (),
    "next": ("--as", "alice"),
    "agreement": (),
    "conflicts": ("--as", "lena"),
    "consensus": (),
    "triage": (),
    "decide": ("--flag", "html", "--status", "rejected", "--reason", "flawed", "--yes"),
    "approve-agreed": ("--yes", "--as", "lena"),
    "release create": ("v1", "--as", "lena"),
    "eval": ("--model", "demo", "--limit", "1"),
    "check": ("--model", "openai:judge", "--base-url", "http://127.0.0.1:9/v1"),
    "export": ("{tmp}/out.jsonl",),
}
IN_A_TERMINAL = {"review": ("--as", "alice")}  # the app wants a terminal before anything


def _commands_with_source_filters(group: click.Group, path: str = "") -> set[str]:
    found: set[str] = set()
    for name, command in group.commands.items():
        full = f"{path}{name}"
        if isinstance(command, click.Group):
            found |= _commands_with_source_filters(command, f"{full} ")
        elif any(getattr(p, "callback", None) is remember_filter_sources for p in command.params):
            found.add(full)
    return found


def test_the_table_names_every_command_with_a_source_filter() -> None:
    assert _commands_with_source_filters(cli) == set(ARGUMENTS) | set(IN_A_TERMINAL)


@pytest.fixture
def one_source(db_path: Path) -> Iterator[Database]:
    """A SQLite file: the refusal happens in the CLI, before any engine-specific work (the
    sources' query runs on PostgreSQL in test_next_command.py)."""
    database = open_database(str(db_path), create=True)
    store_item(database, "econ_ordering:1", source="econ_ordering")
    store_person(database, "alice")
    store_person(database, "lena", Role.LEAD)
    yield database
    database.dispose()


@pytest.mark.parametrize("command", sorted(ARGUMENTS))
def test_a_misspelt_source_is_refused_in_one_line(
    one_source: Database, command: str, tmp_path: Path
) -> None:
    before = audit_events(one_source)
    words = [word.format(tmp=tmp_path) for word in ARGUMENTS[command]]
    result = run_cli(one_source, *command.split(), *words, "--source", MISSPELT)
    assert result.exit_code == 1, result.output
    assert result.output == (
        f"error: no items come from source '{MISSPELT}'; sources: econ_ordering\n"
    )
    assert audit_events(one_source) == before and not (tmp_path / "out.jsonl").exists()


def test_the_review_app_refuses_it_before_it_opens(one_source: Database) -> None:
    code, shown = run_in_terminal(one_source, "review", *IN_A_TERMINAL["review"], "--source", "x")
    assert code == 1 and "no items come from source 'x'; sources: econ_ordering" in shown


def test_every_misspelt_source_is_named_and_a_known_one_still_narrows(
    one_source: Database,
) -> None:
    both = run_cli(
        one_source, "items", "--source", "a", "--source", "econ_ordering", "--source", "b"
    )
    assert both.exit_code == 1 and "no items come from source 'a', 'b'; sources:" in both.output
    known = run_cli(one_source, "items", "--source", "econ_ordering")
    assert known.exit_code == 0 and known.output.startswith("econ_ordering:1")


def test_an_empty_database_says_to_import_first(db_path: Path) -> None:
    run_cli(str(db_path), "init")
    result = run_cli(str(db_path), "items", "--source", "anything")
    assert result.exit_code == 1 and "sources: none yet (import items first" in result.output
