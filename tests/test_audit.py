"""The audit trail: every write appears in `vetbench audit`, with who, when, the login and host,
and what changed; nobody can change or delete an event (SQLite triggers, PostgreSQL grants
and triggers)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa
from click.testing import CliRunner, Result
from helpers import store_item, store_person
from role_helpers import RoleNames, role_names

import db.audit
from db.audit import Origin, origin, read_audit, record_audit
from db.engine import Database, open_database
from db.vocabulary import Role
from reviewer.judging import ItemEdit, edit_item

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def run(db: Path | str, *args: str) -> Result:
    result = CliRunner().invoke(cli_group(), ["--db", str(db), *args])
    assert "Traceback" not in result.output, result.output
    return result


def cli_group():  # type: ignore[no-untyped-def]
    from reviewer.cli import cli

    return cli


@pytest.fixture
def roles(database_url: str) -> Iterator[RoleNames]:
    yield from role_names(database_url)


def test_every_write_appears_in_the_audit(
    database: Database, database_url: str, roles: RoleNames
) -> None:
    url = database_url
    # On PostgreSQL `users add` creates login roles, which belong to the whole server.
    lena, alice, bob = roles.name("lena"), roles.name("alice"), roles.name("bob")
    assert run(url, "users", "add", lena, "--role", "lead", "--no-password").exit_code == 0
    assert run(url, "users", "add", alice, "--no-password").exit_code == 0
    assert run(url, "users", "add", bob, "--no-password").exit_code == 0
    # SQLite: once there is a lead, a role changes by a lead's hand (PostgreSQL: the owner's).
    by_lead = ("--as", lena) if database.is_sqlite else ()
    assert run(url, "users", "add", bob, "--role", "lead", *by_lead).exit_code == 0
    imported = run(url, "import", str(FIXTURES / "econ_ordering.csv"))
    assert imported.exit_code == 0, imported.output
    assert run(url, "config", "set", "overlap", "1", "--as", lena).exit_code == 0
    item = "econ_ordering:1"
    judge = ("judge", item, "--answer", "A,B,C,D", "--verdict", "keep")
    assert run(url, *judge, "--as", alice).exit_code == 0
    assert run(url, "undo", "--as", alice).exit_code == 0
    receipt = edit_item(
        database, alice, item, ItemEdit(note="clarified", explanation="A clearer reason.")
    )
    assert run(url, *judge, "--as", alice).exit_code == 0
    decided = run(url, "decide", item, "--as", lena, "--status", "rejected", "--reason", "flawed")
    assert decided.exit_code == 0, decided.output
    other = "econ_ordering:2"
    judged = run(url, "judge", other, "--as", alice, "--answer", "A,B,C,D", "--verdict", "keep")
    assert judged.exit_code == 0

    listed = json.loads(run(url, "audit", "--json").output)
    actions = [(event["person"], event["action"], event["target"]) for event in listed]
    login = origin().os_login
    who_ran = login if database.is_sqlite else "vetbench"  # the test server's superuser
    registrations = [(who_ran, "register", person) for person in (lena, alice, bob)]
    if not database.is_sqlite:  # each with its login role and group
        registrations = [
            event
            for person, action, target in registrations
            for event in ((person, action, target), (who_ran, "login-role", target))
        ]
    assert actions[: len(registrations)] == registrations
    assert actions[len(registrations) :] == [
        (lena if database.is_sqlite else who_ran, "set-role", bob),
        (who_ran, "import", "econ_ordering.csv"),
        (lena, "config", "overlap"),
        (alice, "judge", item),
        (alice, "retract", item),
        (alice, "revise", item),
        (alice, "judge", item),
        (lena, "decide", item),
        (alice, "judge", other),
    ]
    assert all(event["os_login"] == login and event["host"] == origin().host for event in listed)
    revise = next(event for event in listed if event["action"] == "revise")
    assert revise["changes"]["changed"] == ["explanation"]
    assert revise["changes"]["revision"] == receipt.new_revision
    set_role = next(event for event in listed if event["action"] == "set-role")
    assert set_role["changes"] == {"old": "annotator", "new": "lead"}
    if database.is_sqlite:
        assert {event["db_role"] for event in listed} == {None}
    else:  # stamped by the server, whatever the client sent
        assert {event["db_role"] for event in listed} == {"vetbench"}

    # Filters: by item, by person, by time; the text listing shows the same events.
    by_item = json.loads(run(url, "audit", "--item", item, "--json").output)
    assert [event["action"] for event in by_item] == [
        "judge",
        "retract",
        "revise",
        "judge",
        "decide",
    ]
    by_person = json.loads(run(url, "audit", "--person", lena, "--json").output)
    lena_did = ["set-role", "config", "decide"] if database.is_sqlite else ["config", "decide"]
    assert [event["action"] for event in by_person] == lena_did
    assert json.loads(run(url, "audit", "--since", "1h", "--json").output) == listed
    tomorrow = (datetime.now(UTC) + timedelta(days=1)).date().isoformat()
    assert json.loads(run(url, "audit", "--since", tomorrow, "--json").output) == []
    *text, withheld = run(url, "audit", "--item", item).output.splitlines()
    assert len(text) == 5 and f"{lena}  decide econ_ordering:1" in text[-1]
    assert "status=rejected" in text[-1] and f"[{login}@{origin().host}" in text[-1]
    # read by no lead (the login, or the server's superuser): alice's answers withheld
    assert withheld.startswith("Others' verdicts and blind answers are for leads")
    newest = json.loads(run(url, "audit", "--limit", "2", "--json").output)
    assert [event["id"] for event in newest] == [event["id"] for event in listed[-2:]]


def test_bulk_approval_audits_every_item(database: Database, database_url: str) -> None:
    store_person(database, "lena", Role.LEAD)
    store_person(database, "alice")
    for item in ("o:1", "o:2"):
        store_item(database, item, key="ABCD")
    assert run(database_url, "config", "set", "overlap", "1", "--as", "lena").exit_code == 0
    for item in ("o:1", "o:2"):
        judged = run(
            database_url, "judge", item, "--as", "alice", "--answer", "ABCD", "--verdict", "keep"
        )
        assert judged.exit_code == 0
    assert run(database_url, "approve-agreed", "--as", "lena", "--yes").exit_code == 0
    with database.session() as session:
        decided = read_audit(session, actions=["decide"])
    assert [(e.actor, e.target, e.changes["bulk"]) for e in decided] == [
        ("lena", "o:1", True),
        ("lena", "o:2", True),
    ]
    assert {e.os_login for e in decided} == {origin().os_login}


def test_anothers_verdict_and_blind_answer_are_for_leads(
    database: Database, database_url: str
) -> None:
    """As in the conflict queue: an annotator who reads the trail keeps judging blind; they
    read their own judgments whole, and a lead reads everyone's."""
    store_person(database, "lena", Role.LEAD)
    for name in ("alice", "bob"):
        store_person(database, name)
    store_item(database, "o:1", key="ABCD")
    for name, answer in (("alice", "DCBA"), ("bob", "BADC")):
        judged = run(database_url, "judge", "o:1", "--as", name, "--answer", answer,
                     "--verdict", "wrong-key", "--corrected", answer)  # fmt: skip
        assert judged.exit_code == 0, judged.output

    def answers(reader: str) -> dict[str, dict[str, object]]:
        listed = json.loads(run(database_url, "audit", "--as", reader, "--json").output)
        return {event["person"]: event["changes"] for event in listed if event["action"] == "judge"}

    as_alice, as_lena = answers("alice"), answers("lena")
    assert as_alice["alice"]["blind_answer"] == "DCBA"  # her own
    assert as_alice["alice"]["corrected_key"] == "DCBA"
    assert {"blind_answer", "verdict", "corrected_key"}.isdisjoint(as_alice["bob"])
    assert as_lena["bob"]["corrected_key"] == "BADC"
    assert as_alice["bob"]["revision"] == 1  # that bob judged it, and when, stays public
    assert as_lena["bob"]["blind_answer"] == "BADC" and as_lena["bob"]["verdict"] == "wrong-key"
    text = run(database_url, "audit", "--as", "alice").output
    assert "BADC" not in text and "bob  judge o:1" in text
    assert "(verdict and answer: for leads)" in text and "blind_answer=DCBA" in text
    assert text.endswith("so that annotators judge blind.\n")
    assert "for leads" not in run(database_url, "audit", "--as", "lena").output


def test_a_judgments_event_says_what_its_verdict_proposes(
    database: Database, database_url: str
) -> None:
    """The corrected key, the item duplicated, the other valid orders: in the trail with
    the verdict (a wrong-key judgment said only "wrong-key"), and only where given."""
    store_person(database, "lena", Role.LEAD)
    store_person(database, "alice")
    for item in ("o:1", "o:2", "o:3", "o:4"):
        store_item(database, item, key="ABCD")
    judgments = {
        "o:1": ("--verdict", "wrong-key", "--corrected", "B, A, C, D"),
        "o:2": ("--verdict", "duplicate", "--duplicate-of", "o:1"),
        "o:3": ("--verdict", "ambiguous", "--alt", "A,B,D,C", "--alt", "B,A,C,D"),
        "o:4": ("--verdict", "keep"),
    }
    for item, verdict in judgments.items():
        judged = run(database_url, "judge", item, "--as", "alice", "--answer", "ABCD", *verdict)
        assert judged.exit_code == 0, judged.output
    listed = json.loads(run(database_url, "audit", "--as", "lena", "--json").output)
    said = {event["target"]: event["changes"] for event in listed if event["action"] == "judge"}
    proposed = ("corrected_key", "duplicate_of", "alternative_orders")
    assert {item: {k: v for k, v in said[item].items() if k in proposed} for item in said} == {
        "o:1": {"corrected_key": "BACD"},
        "o:2": {"duplicate_of": "o:1"},
        "o:3": {"alternative_orders": ["ABDC", "BACD"]},
        "o:4": {},
    }
    text = run(database_url, "audit", "--item", "o:1", "--as", "lena").output
    assert "verdict=wrong-key, blind_answer=ABCD" in text and "corrected_key=BACD" in text


def test_the_audit_listing_shows_control_characters_never_sends_them(
    database: Database, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Actor, target, login, host and changes are someone else's text: a name holding
    ESC and CR used to wipe the line and pass for another actor."""
    monkeypatch.setattr(db.audit, "origin", lambda: Origin("ro\x1b[2Kot", "ho\rst"))
    with database.transaction() as session:
        record_audit(session, "\x1b[2K\rlena", "judge", "o:1\x07", comment="a\x1b]0;x\x07b")
    listed = run(database_url, "audit").output
    assert not any(char in listed for char in "\x1b\r\x07"), repr(listed)
    assert "␛[2K␍lena  judge o:1␇  [ro␛[2Kot@ho␍st" in listed  # PostgreSQL adds ", role R"
    assert "]  comment=a␛]0;x␇b" in listed


def test_the_audit_listing_leaves_out_fields_of_none_and_lists_readably(
    db_path: Path, tmp_path: Path
) -> None:
    # It printed "reason=None" and "revised=['econ_ordering:1']", Python's own words.
    items = tmp_path / "econ_ordering.csv"
    items.write_text((FIXTURES / "econ_ordering.csv").read_text(encoding="utf-8"), "utf-8")
    open_database(db_path).dispose()
    assert run(db_path, "users", "add", "lena", "--role", "lead").exit_code == 0
    assert run(db_path, "import", str(items), "--as", "lena").exit_code == 0
    decided = run(db_path, "decide", "econ_ordering:1", "--as", "lena", "--status", "approved")
    assert decided.exit_code == 0, decided.output
    assert run(db_path, "release", "create", "v1", "--as", "lena").exit_code == 0
    text = items.read_text(encoding="utf-8").replace("a sharp rise", "a steep rise")
    items.write_text(text, encoding="utf-8")
    assert run(db_path, "import", str(items), "--revise-reviewed", "--as", "lena").exit_code == 0
    listed = run(db_path, "audit", "--as", "lena").output
    assert "None" not in listed and "'" not in listed, listed
    assert "revised=[econ_ordering:1], back_to_review=[econ_ordering:1]" in listed
    assert "by_kind={ordering: 1}, selection={status: [approved], kind: [], source: []}" in listed
    decision = next(line for line in listed.splitlines() if " decide econ_ordering:1 " in line)
    assert decision.endswith("status=approved, revision=1, final_key=BADC, "
                             "previous_status=pending, corrected_key=False")  # fmt: skip
    # --json keeps every field as stored.
    events = json.loads(run(db_path, "audit", "--json", "--as", "lena").output)
    decide_event = next(event for event in events if event["action"] == "decide")
    assert decide_event["changes"]["reason"] is None


def test_since_must_be_a_time(db_path: Path) -> None:
    open_database(db_path).dispose()
    refused = run(db_path, "audit", "--since", "yesterday")
    assert refused.exit_code == 1 and "--since 'yesterday'" in refused.output


def _one_event(db: Database) -> None:
    store_person(db, "alice")


@pytest.mark.parametrize(
    "statement",
    ["UPDATE audit_event SET actor = 'mallory'", "DELETE FROM audit_event"],
)
def test_sqlite_triggers_refuse_changes_to_the_audit_trail(db_path: Path, statement: str) -> None:
    db = open_database(db_path)
    _one_event(db)
    db.dispose()
    with sqlite3.connect(db_path) as connection:  # a client that skips vetbench
        with pytest.raises(sqlite3.IntegrityError, match="the audit trail is append-only"):
            connection.execute(statement)
        assert connection.execute("SELECT actor FROM audit_event").fetchall() == [("alice",)]


@pytest.mark.postgres
def test_postgres_refuses_changes_to_the_audit_trail_even_for_its_owner(
    database: Database,
) -> None:
    if database.is_sqlite:
        pytest.skip("the SQLite side is tested above")
    _one_event(database)
    for statement in (
        "UPDATE audit_event SET actor = 'mallory'",
        "DELETE FROM audit_event",
        "TRUNCATE audit_event",
    ):
        with (
            pytest.raises(sa.exc.ProgrammingError, match="append-only"),
            database.engine.begin() as connection,  # the superuser that owns the tables
        ):
            connection.execute(sa.text(statement))
    with database.session() as session:
        (event,) = read_audit(session)
    assert event.actor == "alice" and event.db_role == "vetbench"
