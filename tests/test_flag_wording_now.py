"""A duplicate flag stored by an older version said "copies" of a reworded question; triage
read it again ("a shared stem, not certainly a copy") but `flags show` printed the stored
words until a lead ran `flags recompute`.  It now reads the current revision's flags as
the rules word them now, from the stored evidence."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from helpers import built_demo_database, run_cli
from sqlmodel import col, select

from db.engine import Database, open_database
from db.models import StoredFlag

OLD_WORDS = "copies econ_ordering:1 (99% similar): the scenario reworded: “sharp” -> “sudden”"
NOW = "a shared stem with econ_ordering:1, not certainly a copy (99% similar; "


@pytest.fixture
def old_flag(tmp_path: Path) -> Database:
    """The demo database, its near-copy econ_ordering:34's flag in an older version's words."""
    database = open_database(str(built_demo_database(tmp_path / "demo.db")))
    with database.transaction() as session:
        flag = session.exec(
            select(StoredFlag).where(
                col(StoredFlag.item_id) == "econ_ordering:34", col(StoredFlag.name) == "duplicate"
            )
        ).one()
        assert NOW in flag.evidence["summary"]
        flag.evidence = {**flag.evidence, "summary": OLD_WORDS}
        session.add(flag)
    return database


def test_flags_show_words_an_old_duplicate_flag_as_triage_does(old_flag: Database) -> None:
    shown = run_cli(old_flag, "flags", "show", "econ_ordering:34").stdout
    assert "copies" not in shown and f"  duplicate: {NOW}" in shown, shown
    triage = run_cli(old_flag, "triage", "--as", "lena").stdout
    [reason] = [line.strip() for line in triage.splitlines() if NOW in line]
    assert reason.removeprefix("+1.50 duplicate: ") in shown
    [revision] = json.loads(
        run_cli(old_flag, "flags", "show", "econ_ordering:34", "--json").stdout
    )["revisions"]
    assert revision["flags"][0]["summary"].startswith(NOW)
    assert revision["flags"][0]["evidence"]["of"] == "econ_ordering:1"  # evidence as stored


def test_a_copy_keeps_its_stored_words(tmp_path: Path) -> None:
    """A flag the rules still read as a copy is shown as stored (an original edited apart
    says so only there)."""
    database = open_database(str(built_demo_database(tmp_path / "demo.db")))
    stored = "copied an earlier text of econ_ordering:1, which was edited (kept as stored)"
    with database.transaction() as session:
        flag = session.exec(
            select(StoredFlag).where(col(StoredFlag.item_id) == "econ_ordering:34")
        ).one()
        flag.evidence = {**flag.evidence, "summary": stored, "differences": [], "apart": True}
        session.add(flag)
    assert (
        f"  duplicate: {stored}\n" in run_cli(database, "flags", "show", "econ_ordering:34").stdout
    )


def test_the_review_apps_reveal_words_an_old_duplicate_flag_as_triage_does(
    old_flag: Database,
) -> None:
    """The app's reveal reads an item's flags through the queue: it said "copies" too."""
    from db.items import get_item
    from reviewer.queue import ReviewQueue

    with old_flag.session() as session:
        item = get_item(session, "econ_ordering:34")
    assert item is not None
    [flag] = ReviewQueue(old_flag, "lena").flags_of(item)
    assert flag.summary.startswith(NOW), flag.summary


def test_a_flag_of_an_earlier_revision_keeps_its_stored_words(old_flag: Database) -> None:
    """Read again against today's question, an earlier revision's flag would describe a
    question it was not about."""
    from db.flags import revision_flags, worded_now

    with old_flag.session() as session:
        [flag] = revision_flags(session, "econ_ordering:34", 1)
        earlier = replace(flag, revision=0)  # as if stored for a revision before the current
        assert worded_now(session, [earlier]) == [earlier]
        assert worded_now(session, [flag])[0].summary.startswith(NOW)
