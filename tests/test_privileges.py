"""PostgreSQL enforces who may write what, for any client: each test logs in as real roles
(an annotator, another annotator, a lead) and tries vetbench and raw SQL.

The database is created by the test server's superuser, who stands for the owner here;
the people are login roles made with `vetbench users add`, unique per test and dropped after.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest
import sqlalchemy as sa
from alembic import command
from click.testing import CliRunner, Result
from role_helpers import RoleNames, team_database
from sqlmodel import SQLModel, col, select

import db.models  # noqa: F401  (registers every table)
from db.audit import read_audit
from db.engine import make_engine, open_database
from db.migrate import alembic_config, current_revision, head_revision
from db.models import Decision, Judgment, Person
from db.privileges import ANNOTATOR_GROUP, LEAD_GROUP, TABLES
from db.search import SEARCH_TABLE
from db.vocabulary import LEAD_AUDIT_ACTIONS
from reviewer.cli import cli
from reviewer.queue import ReviewQueue

pytestmark = pytest.mark.postgres


def run(url: str, *args: str, stdin: str | None = None) -> Result:
    result = CliRunner().invoke(cli, ["--db", url, *args], input=stdin)
    assert "Traceback" not in result.output, result.output
    return result


@dataclass
class Team:
    owner_url: str  # the superuser: owns the tables
    roles: RoleNames
    alice: str  # annotator
    bob: str  # annotator
    lena: str  # lead

    def url(self, person: str) -> str:
        return self.roles.url_for(person)

    def person_id(self, name: str) -> int:
        owner = open_database(self.owner_url)
        try:
            with owner.session() as session:
                person = session.exec(select(Person).where(Person.name == name)).one()
                assert person.id is not None
                return person.id
        finally:
            owner.dispose()


@pytest.fixture
def team() -> Iterator[Team]:
    for url, roles in team_database("o:1", "o:2"):
        team = Team(url, roles, roles.name("alice"), roles.name("bob"), roles.name("lena"))
        for person, role in (
            (team.alice, "annotator"),
            (team.bob, "annotator"),
            (team.lena, "lead"),
        ):
            added = run(url, "users", "add", person, "--role", role, "--no-password")
            assert added.exit_code == 0, added.output
        yield team


def raw(url: str, statement: str, **params: object) -> sa.CursorResult[object]:
    """Run one statement as the role in ``url``, as psql would: vetbench's checks skipped."""
    engine = sa.create_engine(url)
    try:
        with engine.begin() as connection:
            return connection.execute(sa.text(statement), params)
    finally:
        engine.dispose()


JUDGMENT_SQL = (
    "INSERT INTO judgment (item_id, revision_id, revision_number, annotator_id, blind_answer, "
    "verdict, alternative_orders, comment, seconds, created_at, retracted) VALUES ('o:1', "
    "(SELECT id FROM item_revision WHERE item_id = 'o:1'), 1, :annotator, 'ABCD', 'keep', "
    "'[]', '', 0, now(), false)"
)
JUDGE_EVENT_SQL = (
    "INSERT INTO audit_event (actor, action, target, payload, os_login, host, created_at) "
    "VALUES ('x', 'judge', :item, json_build_object('judgment_id', currval('judgment_id_seq')), "
    "'', '', now())"
)
"""The ``judge`` event of the judgment just inserted in this session, about ``:item``: a
member's judgment commits only with it (db.review_guards)."""
DECISION_SQL = (
    "INSERT INTO decision (item_id, lead_id, status, revision_number, final_key, comment, "
    "created_at) VALUES ('o:1', :lead, 'approved', 1, 'ABCD', '', now())"
)


def test_every_table_has_its_privileges_declared() -> None:
    declared = {entry.table for entry in TABLES}
    # The search index is a table on PostgreSQL, made by its migration (db.search).
    assert set(SQLModel.metadata.tables) | {"alembic_version", SEARCH_TABLE} == declared


def test_an_annotator_cannot_write_a_decision_even_with_raw_sql(team: Team) -> None:
    for lead_id in (team.person_id(team.alice), team.person_id(team.lena)):
        with pytest.raises(sa.exc.ProgrammingError, match="permission denied for table decision"):
            raw(team.url(team.alice), DECISION_SQL, lead=lead_id)
    refused = run(team.url(team.alice), "decide", "o:1", "--status", "approved")
    assert refused.exit_code == 1 and "only leads can decide" in refused.output
    # Nor approve by writing the item's status.
    with pytest.raises(sa.exc.ProgrammingError, match="only leads approve or reject"):
        raw(team.url(team.alice), "UPDATE item SET status = 'approved' WHERE id = 'o:1'")
    with pytest.raises(sa.exc.ProgrammingError, match="permission denied for table setting"):
        raw(team.url(team.alice), "INSERT INTO setting (key, value) VALUES ('overlap', '1')")
    settings = run(team.url(team.alice), "config", "set", "overlap", "1")
    assert settings.exit_code == 1 and "only leads change settings" in settings.output
    owner = open_database(team.owner_url)
    with owner.session() as session:
        assert session.exec(select(Decision)).all() == []
    owner.dispose()


def test_a_judgment_in_another_persons_name_is_refused(team: Team) -> None:
    alice_url = team.url(team.alice)
    bob_id = team.person_id(team.bob)
    with pytest.raises(sa.exc.ProgrammingError, match="row-level security policy"):
        raw(alice_url, JUDGMENT_SQL, annotator=bob_id)
    # A temporary table called person does not fool the policy.
    engine = sa.create_engine(alice_url)
    with (
        pytest.raises(sa.exc.ProgrammingError, match="row-level security policy"),
        engine.begin() as connection,
    ):
        connection.execute(sa.text("CREATE TEMP TABLE person (id integer, name text)"))
        connection.execute(
            sa.text("INSERT INTO pg_temp.person VALUES (:id, session_user)"), {"id": bob_id}
        )
        connection.execute(sa.text(JUDGMENT_SQL), {"annotator": bob_id})
    # In her own name she may (the policy is not a blanket refusal), with its audit event.
    with engine.begin() as connection:
        connection.execute(sa.text(JUDGMENT_SQL), {"annotator": team.person_id(team.alice)})
        connection.execute(sa.text(JUDGE_EVENT_SQL), {"item": "o:1"})
    engine.dispose()
    owner = open_database(team.owner_url)
    with owner.session() as session:
        stored = session.exec(select(Judgment)).all()
    owner.dispose()
    assert [j.annotator_id for j in stored] == [team.person_id(team.alice)]


def test_an_undo_is_never_taken_back(team: Team) -> None:
    # An annotator set retracted back to false with psql: two active judgments of one
    # revision in their name, with no audit event.
    alice = team.url(team.alice)
    for answer in ("ABCD", "DCBA"):
        judged = run(alice, "judge", "o:1", "--answer", answer, "--verdict", "keep")
        assert judged.exit_code == 0, judged.output
        if answer == "ABCD":
            assert run(alice, "undo").exit_code == 0
    # (the trigger judgment_undo refuses it first; the policy retract_own would too)
    with pytest.raises(sa.exc.ProgrammingError, match="an undo is never taken back"):
        raw(alice, "UPDATE judgment SET retracted = false, retracted_at = NULL WHERE retracted")
    active = "SELECT blind_answer FROM judgment WHERE item_id = 'o:1' AND NOT retracted"
    assert raw(alice, active).scalars().all() == ["DCBA"]


def test_as_someone_else_is_refused(team: Team) -> None:
    judge = ("judge", "o:1", "--answer", "ABCD", "--verdict", "keep")
    refused = run(team.url(team.alice), *judge, "--as", team.bob)
    assert refused.exit_code == 1
    assert f"logged in to the database as '{team.alice}'" in refused.output
    assert f"--as {team.bob} is refused" in refused.output
    lead_for_annotator = run(team.url(team.lena), "undo", "--as", team.alice)
    assert lead_for_annotator.exit_code == 1 and "is refused" in lead_for_annotator.output
    # Naming oneself is fine; so is leaving --as out.
    assert run(team.url(team.alice), *judge, "--as", team.alice).exit_code == 0
    assert run(team.url(team.bob), *judge).exit_code == 0


def test_a_lead_can_decide_and_only_in_their_own_name(team: Team) -> None:
    decided = run(team.url(team.lena), "decide", "o:1", "--status", "approved")
    assert decided.exit_code == 0, decided.output
    owner = open_database(team.owner_url)
    with owner.session() as session:
        (decision,) = session.exec(select(Decision)).all()
        (event,) = read_audit(session, actions=["decide"])
    owner.dispose()
    assert decision.lead_id == team.person_id(team.lena)
    assert (event.actor, event.db_role) == (team.lena, team.lena)
    with pytest.raises(sa.exc.ProgrammingError, match="row-level security policy"):
        raw(team.url(team.lena), DECISION_SQL, lead=team.person_id(team.alice))
    raw(team.url(team.lena), DECISION_SQL, lead=team.person_id(team.lena))


def test_nobody_can_change_or_delete_the_audit_trail(team: Team) -> None:
    for person in (team.alice, team.lena):
        for statement in ("UPDATE audit_event SET actor = 'mallory'", "DELETE FROM audit_event"):
            with pytest.raises(sa.exc.ProgrammingError, match="permission denied"):
                raw(team.url(person), statement)
    # Members insert, and the server stamps their role and name whatever they claim.
    raw(
        team.url(team.alice),
        "INSERT INTO audit_event (actor, action, target, payload, os_login, host, db_role, "
        "created_at) VALUES ('lena', 'judge', 'o:1', '{}', 'x', 'y', 'lena', '2001-01-01')",
    )
    owner = open_database(team.owner_url)
    with owner.session() as session:
        forged = read_audit(session, actions=["judge"])
    owner.dispose()
    # The actor is the role that wrote the row, whatever name it gave.
    assert [(e.actor, e.db_role) for e in forged] == [(team.alice, team.alice)]
    assert forged[0].created_at.year > 2001


def test_an_annotator_cannot_record_a_leads_action_in_the_audit_trail(team: Team) -> None:
    # An annotator's "decide" event (in their own name) read as a decision in `vetbench audit`.
    lena = team.url(team.lena)
    for args in (
        ("config", "set", "overlap", "3"),
        ("gold", "add", "o:2", "--verdict", "keep", "--answer", "ABCD"),
        ("gold", "remove", "o:2"),
        ("decide", "o:1", "--status", "approved"),
        ("undo-decision", "o:1"),
    ):
        done = run(lena, *args)
        assert done.exit_code == 0, done.output
    owner = open_database(team.owner_url)
    with owner.session() as session:
        recorded = {event.action for event in read_audit(session, person=team.lena)}
    owner.dispose()
    # The lead's commands record these very names.
    assert {"config", "gold-add", "gold-remove", "decide", "undo-decision"} <= recorded
    assert recorded <= set(LEAD_AUDIT_ACTIONS)
    event = (
        "INSERT INTO audit_event (actor, action, target, payload, os_login, host, created_at) "
        "VALUES ('x', :action, 'o:1', '{\"status\": \"approved\"}', '', '', now())"
    )
    for action in LEAD_AUDIT_ACTIONS:
        with pytest.raises(sa.exc.ProgrammingError, match="row-level security"):
            raw(team.url(team.alice), event, action=action)
    raw(team.url(team.alice), event, action="judge")  # the annotator's own kind of event
    raw(lena, event, action="decide")  # a lead records it (vetbench writes it with the row)


def test_a_member_opening_a_schema_to_upgrade_is_told_to_ask_the_owner(team: Team) -> None:
    # After a vetbench upgrade with a new migration, a member's first command ended in a
    # traceback ("permission denied for schema public") from the migration it ran.
    engine = make_engine(team.owner_url)
    try:
        command.downgrade(alembic_config(engine), "0014_same_choices_flag")
        behind = run(team.url(team.alice), "stats")
        assert behind.exit_code == 1
        assert behind.output.startswith("error: ") and len(behind.output.splitlines()) == 1
        assert "schema revision 0014_same_choices_flag" in behind.output
        assert f"only the schema's owner upgrades it, not {team.alice}" in behind.output
        assert current_revision(engine) == "0014_same_choices_flag"  # nothing was changed
        assert run(team.owner_url, "stats").exit_code == 0  # the owner's command upgrades it
        assert current_revision(engine) == head_revision()
    finally:
        engine.dispose()
    after = run(team.url(team.alice), "stats")
    assert after.exit_code == 0, after.output


def test_an_annotator_works_through_vetbench_within_the_rules(team: Team) -> None:
    alice_url, bob_url = team.url(team.alice), team.url(team.bob)
    judge = ("judge", "o:1", "--answer", "ABCD", "--verdict", "keep")
    assert run(bob_url, *judge).exit_code == 0
    saved = run(alice_url, *judge)
    assert saved.exit_code == 0 and f"{team.alice} on o:1" in saved.output
    assert run(alice_url, "undo").exit_code == 0
    # Retracting bob's judgment with raw SQL touches nothing: his rows are not hers.
    engine = sa.create_engine(alice_url)
    with engine.begin() as connection:
        touched = connection.execute(
            sa.text("UPDATE judgment SET retracted = true WHERE annotator_id = :bob"),
            {"bob": team.person_id(team.bob)},
        ).rowcount
    engine.dispose()
    assert touched == 0
    # The review app's queue claims and releases items under the same rules.
    alice_db = open_database(alice_url)
    queue = ReviewQueue(alice_db, team.alice)
    assert queue.next_item() is not None
    queue.release_claim()
    alice_db.dispose()
    # Evaluation runs are open to every member.
    raw(
        alice_url,
        "INSERT INTO eval_run (model, backend, mode, shots, params, filters, item_ids, status, "
        "host, started_at) VALUES ('m', 'openai', 'generate', 0, '{}', '{}', '[]', 'running', "
        "'h', now())",
    )
    owner = open_database(team.owner_url)
    with owner.session() as session:
        stored = session.exec(select(Judgment).order_by(col(Judgment.id))).all()
        events = read_audit(session, target="o:1")
    owner.dispose()
    assert [(j.annotator_id, j.retracted) for j in stored] == [
        (team.person_id(team.bob), False),
        (team.person_id(team.alice), True),
    ]
    assert [(e.actor, e.action, e.db_role) for e in events] == [
        (team.bob, "judge", team.bob),
        (team.alice, "judge", team.alice),
        (team.alice, "retract", team.alice),
    ]


def test_a_member_role_registers_itself_and_nobody_else(team: Team) -> None:
    carol = team.roles.name("carol")
    raw(team.owner_url, f'CREATE ROLE "{carol}" LOGIN IN ROLE {ANNOTATOR_GROUP}')
    first = run(team.url(carol), "judge", "o:1", "--answer", "ABCD", "--verdict", "keep")
    assert first.exit_code == 0, first.output
    assert f"registered {carol} as annotator: the database role {carol} is a member" in (
        first.output
    )
    for name, role in (("mallory", "annotator"), (team.alice, "lead")):
        with pytest.raises(sa.exc.ProgrammingError, match="row-level security policy"):
            raw(
                team.url(team.alice),
                "INSERT INTO person (name, role, created_at) VALUES (:name, :role, now())",
                name=name,
                role=role,
            )
    outsider = team.roles.name("outsider")
    raw(team.owner_url, f'CREATE ROLE "{outsider}" LOGIN')
    shut_out = run(team.url(outsider), "stats")
    assert shut_out.exit_code == 1 and "permission denied" in shut_out.output


def test_users_add_is_for_the_owner_and_sets_groups_and_passwords(team: Team) -> None:
    refused = run(team.url(team.alice), "users", "add", "eve", "--no-password")
    assert refused.exit_code == 1
    assert (
        f"only the owner of the database's tables adds people; you are logged in as '{team.alice}'"
        in (refused.output)
    )
    dave = team.roles.name("dave")
    added = run(team.owner_url, "users", "add", dave, "--password-stdin", stdin="s3cret pass\n")
    assert added.exit_code == 0 and "with a new database login and password" in added.output
    stored = raw(
        team.owner_url, "SELECT rolpassword FROM pg_authid WHERE rolname = :name", name=dave
    ).scalar_one()
    assert stored.startswith("SCRAM-SHA-256$") and "s3cret" not in stored
    no_password = run(team.owner_url, "users", "add", team.roles.name("erin"))
    assert no_password.exit_code == 1 and "--password-stdin" in no_password.output
    promoted = run(team.owner_url, "users", "add", dave, "--role", "lead")
    assert promoted.exit_code == 0 and f"{dave} is now a lead (was annotator)" in promoted.output
    # Named again without --role (onboarding others beside him): he stays a lead.
    again = run(team.owner_url, "users", "add", dave, "--no-password")
    assert again.exit_code == 0 and f"{dave} is already registered as lead" in again.output
    listing = run(team.url(team.alice), "users", "list").output
    lines = {line.split()[0]: line for line in listing.splitlines()}
    assert LEAD_GROUP in lines[dave] and LEAD_GROUP in lines[team.lena]
    assert ANNOTATOR_GROUP in lines[team.alice]
    decided = run(team.url(dave), "decide", "o:2", "--status", "rejected", "--reason", "flawed")
    assert decided.exit_code == 0, decided.output


def test_members_add_flags_with_their_revisions_and_only_leads_remove_them(team: Team) -> None:
    from db.flags import current_flags
    from reviewer.judging import ItemEdit, edit_item

    alice = open_database(team.url(team.alice))
    try:  # an edit by an annotator stores the new revision's flags under her role
        edit_item(alice, team.alice, "o:2", ItemEdit("events reordered", key="BACD"))
        edit_item(
            alice, team.alice, "o:1", ItemEdit("prompt", prompt="See the table below. Order.")
        )
    finally:
        alice.dispose()
    owner = open_database(team.owner_url)
    with owner.session() as session:
        flags = current_flags(session, ["o:1", "o:2"])
    owner.dispose()
    assert [f.name.value for f in flags["o:1"]] == ["needs-media", "order-leak"]
    # o:2's new key no longer lists the events in order, and it repeated o:1, made before
    # it, until o:1's question changed (her edit of o:1 added o:2 a flag saying so)
    [duplicate] = flags["o:2"]
    assert duplicate.name.value == "duplicate" and duplicate.evidence["of"] == "o:1"
    assert duplicate.summary.startswith("copied an earlier text of o:1, which was edited")
    with pytest.raises(sa.exc.ProgrammingError, match="permission denied for table item_flag"):
        raw(team.url(team.alice), "DELETE FROM item_flag")
    refused = run(team.url(team.alice), "flags", "recompute")
    assert refused.exit_code == 1 and "only leads can recompute flags" in refused.output
    assert run(team.url(team.lena), "flags", "recompute").exit_code == 0
    decided = run(
        team.url(team.lena),
        *("decide", "--flag", "needs-media", "--status", "rejected", "--reason", "flawed", "--yes"),
    )
    assert decided.exit_code == 0, decided.output
    assert "rejected 1 item with the flag needs-media" in decided.output
    annotator = run(
        team.url(team.alice),
        *("decide", "--flag", "order-leak", "--status", "rejected", "--reason", "flawed", "--yes"),
    )
    assert annotator.exit_code == 1 and "only leads" in annotator.output
