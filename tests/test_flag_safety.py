"""Flags that cannot break anyone (issue 22): a hand-inserted malformed flag row is
skipped, reported and repaired; recomputing flags during an import loses none of them."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
import sqlalchemy as sa
from helpers import run_cli, store_item, write_file
from sqlmodel import select

from db.engine import Database, open_database
from db.flag_recompute import RecomputeReport, recompute_flags
from db.flags import all_current_flags, current_flags, revision_flags
from db.importer import ImportProgress, import_files
from db.models import StoredFlag
from db.people import ensure_person
from db.vocabulary import Role

MALFORMED = (
    "INSERT INTO item_flag (item_id, revision_number, name, source, evidence, created_at) "
    "VALUES ('o:1', 1, :name, 'auto', :evidence, :now)"
)


def _insert_malformed(database: Database) -> None:
    with database.engine.begin() as connection:
        for name, evidence in (("html", "[1,2]"), ("no-such-flag", "{}"), ("html", '"x"')):
            connection.execute(
                sa.text(MALFORMED), {"name": name, "evidence": evidence, "now": "2026-01-01"}
            )


def test_a_malformed_flag_row_is_skipped_reported_and_repaired(database: Database) -> None:
    store_item(database, "o:1", prompt="Order the <b>events</b> of a rate rise.")
    with database.transaction() as session:
        ensure_person(session, "lena", Role.LEAD)
    _insert_malformed(database)
    with database.session() as session:
        assert [f.name.value for f in current_flags(session, ["o:1"])["o:1"]] == ["html"]
        assert [f.name.value for f in revision_flags(session, "o:1", 1)] == ["html"]
        assert list(all_current_flags(session)) == ["o:1"]
    for command in (
        ("triage",),
        ("flags", "show", "o:1"),
        ("items", "--flag", "html"),
        ("items", "--flag", "html", "--json"),
    ):
        result = run_cli(database, *command)
        assert result.exit_code == 0, (command, result.output)
        assert "3 malformed flag rows skipped" in result.stderr, command
        assert result.stderr.count("malformed") == 1
    repaired = run_cli(database, "flags", "recompute", "--as", "lena")
    assert repaired.exit_code == 0, repaired.output
    with database.session() as session:
        rows = session.exec(select(StoredFlag)).all()
    assert [(row.name, row.evidence["summary"][:4]) for row in rows] == [("html", "HTML")]
    quiet = run_cli(database, "triage")
    assert quiet.exit_code == 0 and "malformed" not in quiet.stderr


@pytest.mark.postgres
def test_recomputing_flags_waits_for_an_import_and_loses_none_of_its_flags(
    database_url: str, tmp_path: Path
) -> None:
    if not database_url.startswith("postgresql"):
        pytest.skip("SQLite serialises writers already")
    database = open_database(database_url)
    try:
        store_item(database, "old:1")
        rows = "".join(
            f'"Order the <b>steps</b> of plan {n}.",First {n},Then {n},"B, A"\n' for n in range(40)
        )
        items = write_file(tmp_path, "items.csv", "Question,A,B,Answer\n" + rows)
        recomputed: list[RecomputeReport] = []
        workers: list[threading.Thread] = []
        waiting: list[bool] = []

        def recompute() -> None:
            with database.transaction() as session:
                recomputed.append(recompute_flags(session, "lena", models=False))

        def on_progress(event: ImportProgress) -> None:
            if event.phase == "checking duplicates" and not workers:
                workers.append(threading.Thread(target=recompute))
                workers[0].start()
                time.sleep(2)  # the recompute has had time to run, were it not held
                waiting.append(workers[0].is_alive())

        report = import_files(database, [items], progress=on_progress)
        assert report.ok and report.tally.added == 40
        workers[0].join(60)
        assert waiting == [True]  # it waited for the import's commit
        (done,) = recomputed
        with database.session() as session:
            flags = current_flags(session, [f"items:{n}" for n in range(1, 41)])
        assert len(flags) == 40
        assert all("html" in [f.name.value for f in found] for found in flags.values())
        assert sum("duplicate" in [f.name.value for f in found] for found in flags.values()) > 0
        assert done.removed == 0
    finally:
        database.dispose()
