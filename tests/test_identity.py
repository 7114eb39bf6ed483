"""Who is acting (db.identity): the login by default, unknown names refused with the closest
known ones, explicit registration, the first person of an empty database, --as recorded.

The PostgreSQL side, with real login roles, is in tests/test_privileges.py.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from helpers import run_in_terminal, store_item, store_person
from sqlmodel import col, select

import db.identity
from db.audit import origin, read_audit
from db.engine import Database, open_database
from db.identity import Identity, IdentityRefused, close_names, resolve_identity
from db.models import Judgment, Person, Setting
from db.people import PersonRefused, add_person, check_person_names, ensure_person
from db.validation import same_name_key
from db.vocabulary import Role
from reviewer.cli import cli


def run(db_path: Path | str, *args: str, stdin: str | None = None) -> Result:
    result = CliRunner().invoke(cli, ["--db", str(db_path), *args], input=stdin)
    assert "Traceback" not in result.output, result.output
    return result


def people(db: Database) -> list[str]:
    with db.session() as session:
        return list(session.exec(select(Person.name).order_by(col(Person.name))))


def judgments(db: Database) -> list[Judgment]:
    with db.session() as session:
        return list(session.exec(select(Judgment)))


@pytest.fixture
def team(database: Database) -> Database:
    """A database with items, a lead and an annotator (SQLite and PostgreSQL)."""
    store_item(database, "o:1", key="ABCD")
    store_item(database, "o:2", key="ABCD")
    store_person(database, "lena", Role.LEAD)  # person rows only: no server-wide login roles
    store_person(database, "alice")
    return database


JUDGE = ("judge", "o:1", "--answer", "ABCD", "--verdict", "keep")


def test_a_typo_of_a_known_name_is_refused_with_the_closest_names(
    team: Database, database_url: str
) -> None:
    refused = run(database_url, *JUDGE, "--as", "lenna")
    assert refused.exit_code == 1
    message = refused.output.strip()
    assert message.startswith("error: no person called 'lenna'")
    assert "did you mean lena?" in message and "users add lenna" in message
    assert "\n" not in message  # one line
    ghost = run(database_url, *JUDGE, "--as", "ghost")
    assert ghost.exit_code == 1 and "known people: alice, lena" in ghost.output
    # A name that reads as a registered one: no advice to register it (that is refused).
    alike = run(database_url, *JUDGE, "--as", "Lena")
    assert alike.exit_code == 1 and "names are exact: did you mean lena?" in alike.output
    assert "users add" not in alike.output
    # Nothing was written: no new person, no judgment.
    assert people(team) == ["alice", "lena"]
    assert judgments(team) == []


def test_review_refuses_an_unknown_name_before_the_app_starts(
    team: Database, database_url: str
) -> None:
    code, shown = run_in_terminal(database_url, "review", "--as", "lenna")
    assert code == 1 and "did you mean lena?" in shown
    assert people(team) == ["alice", "lena"]


def test_new_user_registers_explicitly_and_says_so(team: Database, database_url: str) -> None:
    result = run(database_url, *JUDGE, "--as", "bob", "--new-user")
    assert result.exit_code == 0, result.output
    assert "note: registered bob as a new annotator" in result.output
    assert people(team) == ["alice", "bob", "lena"]
    with team.session() as session:
        actions = [(e.actor, e.action, e.target) for e in read_audit(session, person="bob")]
    assert actions == [("bob", "register", "bob"), ("bob", "judge", "o:1")]
    # Once registered, bob is known: no notice the second time.
    again = run(database_url, "undo", "--as", "bob")
    assert again.exit_code == 0 and "note:" not in again.output


def test_the_first_person_of_an_empty_database_is_registered_with_a_notice(
    database: Database, database_url: str
) -> None:
    store_item(database, "o:1", key="ABCD")
    first = run(database_url, *JUDGE, "--as", "alice")
    assert first.exit_code == 0, first.output
    assert "note: alice is the first person in this database" in first.output
    assert people(database) == ["alice"]
    second = run(
        database_url, "judge", "o:1", "--as", "bob", "--answer", "ABCD", "--verdict", "keep"
    )
    assert second.exit_code == 1 and "no person called 'bob'" in second.output
    assert people(database) == ["alice"]


BAD_NAMES = ["\x1b[2K\rlena", "a\tb", "x" * 300]


@pytest.mark.parametrize("bad", BAD_NAMES, ids=["escape", "tab", "300-characters"])
def test_new_user_names_follow_the_rule_of_users_add(
    team: Database, database_url: str, bad: str
) -> None:
    """`--new-user` used to store any name (ESC wiping the line, a tab, a name the audit
    cut at 255 characters); now every path that registers applies the rule of `users add`."""
    with pytest.raises(PersonRefused) as rule:
        check_person_names([bad], postgres=not team.is_sqlite)
    refused = run(database_url, *JUDGE, "--as", bad, "--new-user")
    assert refused.exit_code == 1
    assert refused.output.strip() == f"error: {rule.value}"
    assert people(team) == ["alice", "lena"] and judgments(team) == []
    with (
        team.transaction() as session,
        pytest.raises(PersonRefused, match=re.escape(str(rule.value))),
    ):
        ensure_person(session, bad)  # the one writer of people refuses it too
    assert people(team) == ["alice", "lena"]


def test_a_name_differing_only_in_case_from_a_registered_one_is_refused(
    team: Database, database_url: str
) -> None:
    """Alice beside alice would be two people to vetbench and one to everyone else."""
    expected = (
        "error: 'Alice' differs only in case from 'alice', who is registered: give their "
        "name as it is (alice), or another name"
    )
    added = run(database_url, "users", "add", "Alice", "--as", "lena")
    assert (added.exit_code, added.output.strip()) == (1, expected)
    judged = run(database_url, *JUDGE, "--as", "Alice", "--new-user")
    assert (judged.exit_code, judged.output.strip()) == (1, f"error: not saved: {expected[7:]}")
    assert people(team) == ["alice", "lena"] and judgments(team) == []


INVISIBLE = {
    "\u200b": "ZERO WIDTH SPACE",
    "\u2060": "WORD JOINER",
    "\ufeff": "ZERO WIDTH NO-BREAK SPACE",
    "\u00ad": "SOFT HYPHEN",
    "\u200e": "LEFT-TO-RIGHT MARK",
}


@pytest.mark.parametrize("char", INVISIBLE, ids=[f"U+{ord(c):04X}" for c in INVISIBLE])
def test_a_name_with_an_invisible_format_character_is_refused(
    team: Database, database_url: str, char: str
) -> None:
    """`ali\u200bce` printed exactly like alice: two people to vetbench, one to the eye,
    so that one human's two judgments made an item "agreed"."""
    expected = (
        f"error: a name must be printable text on one line; it holds U+{ord(char):04X} "
        f"({INVISIBLE[char]}), which is invisible"
    )
    for args in (("users", "add", "--as", "lena", "--", f"bo{char}b"),
                 (*JUDGE, "--as", f"bo{char}b", "--new-user")):  # fmt: skip
        refused = run(database_url, *args)
        assert (refused.exit_code, refused.output.strip()) == (1, expected)
    assert people(team) == ["alice", "lena"] and judgments(team) == []


# Persian and Indic names need the zero-width non-joiner and joiner between letters.
JOINED_NAMES = [
    "\u0645\u0647\u0631\u200c\u0622\u0641\u0631\u06cc\u0646",
    "\u0915\u094d\u200d\u0937",
]


@pytest.mark.parametrize("name", JOINED_NAMES, ids=["persian-zwnj", "devanagari-zwj"])
def test_names_keep_the_joiners_persian_and_indic_names_need(
    team: Database, database_url: str, name: str
) -> None:
    added = run(database_url, "users", "add", name, "--no-password", "--as", "lena")
    assert added.exit_code == 0, added.output
    assert run(database_url, *JUDGE, "--as", name).exit_code == 0
    # The same letters without the joiner look all but the same: the same person.
    unjoined = name.replace("\u200c", "").replace("\u200d", "")
    refused = run(database_url, "users", "add", unjoined, "--as", "lena")
    code = "U+200C" if "\u200c" in name else "U+200D"
    assert (refused.exit_code, refused.output.strip()) == (
        1,
        f"error: '{unjoined}' differs only in invisible characters ({code}) from '{name}', "
        f"who is registered: give their name as it is ({name}), or another name",
    )
    assert people(team) == sorted(["alice", "lena", name])


@pytest.mark.parametrize(
    "lookalike, how",
    [
        ("ali\u200dce", "invisible characters (U+200D)"),
        ("ali\u200cce", "invisible characters (U+200C)"),
        ("\uff41lice", "compatibility form (full-width or styled letters)"),
        ("\uff21lice", "compatibility form (full-width or styled letters) and case"),
        ("A\u200dlice", "invisible characters (U+200D) and case"),
    ],
)
def test_a_name_that_looks_like_a_registered_one_is_refused(
    team: Database, database_url: str, lookalike: str, how: str
) -> None:
    expected = (
        f"'{lookalike}' differs only in {how} from 'alice', who is registered: give their "
        "name as it is (alice), or another name"
    )
    added = run(database_url, "users", "add", lookalike, "--as", "lena")
    assert (added.exit_code, added.output.strip()) == (1, f"error: {expected}")
    judged = run(database_url, *JUDGE, "--as", lookalike, "--new-user")
    assert (judged.exit_code, judged.output.strip()) == (1, f"error: not saved: {expected}")
    assert people(team) == ["alice", "lena"] and judgments(team) == []


def test_a_chinese_name_spaced_otherwise_is_the_registered_one(
    team: Database, database_url: str
) -> None:
    """CJK names take no space between characters: 张 伟 (or with an ideographic space) is
    张伟 to anyone reading it, where "bo b" beside "bob" are two Latin names."""
    store_person(team, "张伟")  # a person row only: no server-wide login role
    for lookalike in ("张 伟", "张\u3000伟"):
        added = run(database_url, "users", "add", lookalike, "--as", "lena")
        assert added.exit_code == 1, added.output
        assert f"'{lookalike}' differs only in " in added.output and "from '张伟'" in added.output
    assert run(database_url, "users", "add", "Li 张伟", "Li 张 伟", "--as", "lena").exit_code == 1
    assert people(team) == sorted(["alice", "lena", "张伟"])
    assert same_name_key("bo b") != same_name_key("bob")  # Latin words keep their space


def test_a_joiner_at_either_end_of_a_name_is_refused(team: Database, database_url: str) -> None:
    """Between letters a joiner shapes them; at an end it only hides a second name."""
    for name in ("bob\u200d", "\u200cbob"):
        refused = run(database_url, "users", "add", name, "--as", "lena")
        code, what = ("U+200D", "ZERO WIDTH JOINER") if "\u200d" in name else (
            "U+200C", "ZERO WIDTH NON-JOINER")  # fmt: skip
        assert (refused.exit_code, refused.output.strip()) == (
            1,
            f"error: a name must not begin or end with {code} ({what}), which is invisible there",
        )
    assert people(team) == ["alice", "lena"]


def test_one_list_naming_one_person_twice_adds_nobody(team: Database, database_url: str) -> None:
    refused = run(database_url, "users", "add", "bob", "Bo\u200db", "--as", "lena")
    assert (refused.exit_code, refused.output.strip()) == (
        1,
        "error: 'bob' and 'Bo\u200db' differ only in invisible characters (U+200D) and case: "
        "name each person once",
    )
    assert people(team) == ["alice", "lena"]


def test_a_name_stored_before_the_rule_keeps_working(team: Database, database_url: str) -> None:
    """A name with a zero-width space registered before it was refused still acts, and is
    the person every look-alike is compared with."""
    with team.transaction() as session:  # as it was stored then: the rule refuses it now
        session.add(Person(name="bo\u200bb", role=Role.ANNOTATOR))
    assert run(database_url, *JUDGE, "--as", "bo\u200bb").exit_code == 0
    refused = run(database_url, "users", "add", "bob", "--as", "lena")
    assert refused.exit_code == 1
    assert "'bob' differs only in invisible characters (U+200B) from 'bo\u200bb'" in refused.output
    assert people(team) == ["alice", "bo\u200bb", "lena"] and len(judgments(team)) == 1


def test_the_first_person_of_an_empty_database_follows_the_name_rule(
    database: Database, database_url: str
) -> None:
    store_item(database, "o:1", key="ABCD")
    refused = run(database_url, *JUDGE, "--as", "a\tb")
    assert refused.exit_code == 1 and "printable text on one line" in refused.output
    assert people(database) == []


def register_events(db: Database) -> list[str]:
    with db.session() as session:
        return [event.target for event in read_audit(session, actions=["register"])]


def test_a_refused_judgment_registers_no_one(
    team: Database, database_url: str, tmp_path: Path
) -> None:
    """`--new-user` registers the person with their judgment, in its transaction: a judgment
    refused (a bad answer, an unknown item, an unreadable sheet) leaves nobody behind."""
    before = register_events(team)
    bad_answer = run(database_url, "judge", "o:1", "--answer", "X", "--verdict", "keep",
                     "--as", "newbie", "--new-user")  # fmt: skip
    assert bad_answer.exit_code == 1 and "not saved" in bad_answer.output
    unknown = run(database_url, "judge", "no:such", "--answer", "ABCD", "--verdict", "keep",
                  "--as", "newbie", "--new-user")  # fmt: skip
    assert unknown.exit_code == 1 and "there is no item 'no:such'" in unknown.output
    sheet = tmp_path / "bad.csv"
    sheet.write_text("garbage\n")
    bad_sheet = run(database_url, "judge", "--from", str(sheet), "--as", "fresh", "--new-user")
    assert bad_sheet.exit_code == 1
    for result in (bad_answer, unknown, bad_sheet):
        assert "note:" not in result.output  # no notice of a registration that did not happen
    assert people(team) == ["alice", "lena"] and judgments(team) == []
    assert register_events(team) == before


def test_a_refused_command_registers_no_first_person(database: Database, database_url: str) -> None:
    """On a database with items and no people, a command that is refused used to register
    the login as its first person first; now nothing is written."""
    store_item(database, "o:1", key="ABCD")
    commands = [
        ("undo",),
        ("export", "--format", "judging", "--out", "-"),
        ("judge", "no:such", "--answer", "ABCD", "--verdict", "keep"),
        ("check", "--model", "openai:x", "--item", "no:such"),
    ]
    for command in commands:
        refused = run(database_url, *command)
        assert refused.exit_code == 1, (command, refused.output)
        assert "note:" not in refused.output  # no registration notice
    assert "is not a registered person" in run(database_url, *commands[1]).output
    assert people(database) == [] and register_events(database) == []


def test_names_in_notices_and_receipts_are_shown_not_sent(
    team: Database, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A name stored before the rule (or written by hand) reaches the terminal as visible
    stand-ins, in the receipt of `judge` and in a notice alike."""
    legacy = "\x1b[2K\rmallory"
    with team.transaction() as session:
        session.add(Person(name=legacy, role=Role.ANNOTATOR))
    real = db.identity.resolve_identity

    def with_notice(*args: Any, **kwargs: Any) -> Identity:
        return replace(real(*args, **kwargs), notice=f"about {legacy}")

    monkeypatch.setattr(db.identity, "resolve_identity", with_notice)
    result = run(database_url, *JUDGE, "--as", legacy)
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output and "\r" not in result.output
    assert "saved judgment 1: ␛[2K␍mallory on o:1" in result.output
    assert "note: about ␛[2K␍mallory" in result.output


@pytest.mark.parametrize(
    "command",
    [
        ("flags", "recompute"),
        ("config", "set", "overlap", "3"),
        ("decide", "o:1", "--status", "approved"),
    ],
)
def test_a_command_only_leads_may_run_registers_no_one_when_it_refuses(
    database: Database, database_url: str, command: tuple[str, ...]
) -> None:
    """The first person of an empty database is registered as an annotator on first use;
    a lead-only command would refuse them right after, so it registers no one: refused,
    with how to become a lead, and nothing written."""
    store_item(database, "o:1", key="ABCD")
    with database.session() as session:
        before = [event.id for event in read_audit(session)]
    refused = run(database_url, *command, "--as", "alice")
    assert refused.exit_code == 1, refused.output
    assert "alice" in refused.output and "--role lead" in refused.output
    assert "registered as an annotator" not in refused.output
    assert people(database) == []
    with database.session() as session:
        assert [event.id for event in read_audit(session)] == before


def test_on_sqlite_the_person_is_the_login_by_default(db_path: Path) -> None:
    db = open_database(db_path)
    store_item(db, "o:1", key="ABCD")
    login = origin().os_login
    add_person(db, login, Role.ANNOTATOR, actor="test")
    result = run(db_path, *JUDGE)
    assert result.exit_code == 0 and f"saved judgment 1: {login} on o:1" in result.output
    identity = resolve_identity(db)
    assert (identity.name, identity.on_behalf, identity.db_role) == (login, False, None)
    db.dispose()


def test_on_sqlite_as_someone_else_is_allowed_and_the_audit_keeps_the_login(
    db_path: Path,
) -> None:
    db = open_database(db_path)
    store_item(db, "o:1", key="ABCD")
    add_person(db, "alice", Role.ANNOTATOR, actor="test")
    assert run(db_path, *JUDGE, "--as", "alice").exit_code == 0
    with db.session() as session:
        (event,) = read_audit(session, target="o:1")
    assert (event.actor, event.action) == ("alice", "judge")
    assert event.os_login == origin().os_login and event.host == origin().host
    assert resolve_identity(db, "alice").on_behalf is (origin().os_login != "alice")
    db.dispose()


def test_read_only_commands_do_not_register_but_still_catch_typos(
    team: Database, database_url: str
) -> None:
    # agreement with the login (unknown here): figures without lead-only details, nobody added
    plain = run(database_url, "agreement", "--bootstrap", "0")
    assert plain.exit_code == 0 and "only leads see it" in plain.output
    typo = run(database_url, "agreement", "--as", "lenna", "--bootstrap", "0")
    assert typo.exit_code == 1 and "did you mean lena?" in typo.output
    assert people(team) == ["alice", "lena"]


def test_an_empty_name_is_refused(team: Database) -> None:
    with pytest.raises(IdentityRefused, match="--as needs a name"):
        resolve_identity(team, "   ")


def test_settings_are_for_leads(team: Database, database_url: str) -> None:
    refused = run(database_url, "config", "set", "overlap", "3", "--as", "alice")
    assert refused.exit_code == 1
    assert "only leads change settings; alice is an annotator" in refused.output
    done = run(database_url, "config", "set", "overlap", "3", "--as", "lena")
    assert done.exit_code == 0 and "overlap = 3 (was 2)" in done.output
    with team.session() as session:
        (event,) = read_audit(session, actions=["config"])
    assert (event.actor, event.target, event.changes) == (
        "lena",
        "overlap",
        {"old": "2", "new": "3"},
    )


def test_lead_only_commands_say_to_name_a_lead_not_to_register(db_path: Path) -> None:
    """Once the database has a lead, registering the login (as an annotator, or as a lead:
    only a lead adds one) runs no lead-only command: the refusal says to name a lead with
    --as and lists the leads, and doing so works.  Nothing is written on the way."""
    db = open_database(db_path)
    store_item(db, "o:1", key="ABCD")
    add_person(db, "lena", Role.LEAD, actor="test")
    add_person(db, "mia", Role.LEAD, actor="lena")
    add_person(db, "alice", Role.ANNOTATOR, actor="test")
    assert origin().os_login not in people(db)
    for command in (
        ("gold", "list"),  # reads: the login is not registered, the lead check refuses
        ("config", "set", "overlap", "3"),  # writes: the login is refused up front
        ("gold", "add", "o:1", "--as", "alice"),
        ("config", "set", "overlap", "3", "--as", "alice"),
    ):
        refused = run(db_path, *command)
        assert refused.exit_code == 1, refused.output
        assert "name a lead with --as NAME (leads: lena, mia)" in refused.output, command
        assert "users add" not in refused.output and "--new-user" not in refused.output
    assert people(db) == ["alice", "lena", "mia"]
    assert run(db_path, "config", "set", "overlap", "3", "--as", "mia").exit_code == 0
    db.dispose()


def test_without_a_lead_lead_only_commands_say_how_to_register_the_first(db_path: Path) -> None:
    db = open_database(db_path)
    add_person(db, "alice", Role.ANNOTATOR, actor="test")
    refused = run(db_path, "config", "set", "overlap", "3", "--as", "alice")
    assert refused.exit_code == 1
    assert "no lead yet: add one with `vetbench users add alice --role lead`" in refused.output
    assert run(db_path, "users", "add", "alice", "--role", "lead", "--as", "alice").exit_code == 0
    assert run(db_path, "config", "set", "overlap", "3", "--as", "alice").exit_code == 0
    db.dispose()


def test_setting_the_value_a_setting_has_writes_nothing(team: Database, database_url: str) -> None:
    same = run(database_url, "config", "set", "overlap", "02", "--as", "lena")  # 02 is 2
    assert same.exit_code == 0
    assert same.output.strip() == "overlap = 2 already; nothing changed"
    with team.session() as session:
        assert read_audit(session, actions=["config"]) == []
        assert session.get(Setting, "overlap") is None  # still the default, not a stored copy


def test_close_names_ranks_by_similarity() -> None:
    assert close_names("lenna", ["alice", "lena", "lennart", "bob"])[0] == "lena"
    assert close_names("Lena", ["lena"]) == ["lena"]
    assert close_names("zzz", ["alice", "bob"]) == []


async def test_the_review_app_shows_the_registration_notice(db_path: Path) -> None:
    from reviewer.tui.app import make_app
    from reviewer.tui.widgets.progress import ProgressLine

    db = open_database(db_path)
    store_item(db, "o:1", key="ABCD")
    identity = resolve_identity(db, "alice")
    assert identity.notice is not None and "first person" in identity.notice
    app = make_app(db, identity.name, notice=identity.notice)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        # in the status line, not a toast over the verdict keys (tests/test_narrow_screens.py)
        assert app.review_screen.query_one(ProgressLine).notice == f"Who you are: {identity.notice}"
        assert not app._notifications
    db.dispose()
