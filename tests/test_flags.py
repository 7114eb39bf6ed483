"""Item flags end to end: raised when a revision is made (import, re-import, edit, key
correction, generation), stored per revision with their evidence, backfilled by the
migration that added them, recomputed by a lead, shown by `items`, `stats` and `flags
show`, and acted on with `decide --flag` after the count is shown and confirmed."""

from __future__ import annotations

import ast
import csv
import json
import re
from pathlib import Path

import pytest
from alembic import command
from click.testing import CliRunner, Result
from helpers import store_item, store_person
from sqlalchemy import text
from sqlmodel import select

from db.engine import Database, make_engine, open_database
from db.flag_recompute import recompute_flags
from db.flags import current_flags, revision_flags
from db.importer import import_files
from db.migrate import alembic_config, upgrade_to
from db.models import AuditEvent, Decision, Item, StoredFlag
from db.vocabulary import FlagName, Role
from reviewer.adjudication import decide
from reviewer.cli import cli
from reviewer.judging import ItemEdit, edit_item

HEADER = "Question,A,B,C,D,Answer,Explanation\n"
ROWS = [
    # 1: sound
    "Inflation runs above target. Put the events in order.,The bank raises rates.,"
    'Loan rates rise.,Inflation climbs.,Borrowing slows.,"C, A, B, D",Inflation comes first.\n',
    # 2: events already in key order
    "A port strike hits exports. Order the events.,Dockworkers walk out.,Ships queue offshore.,"
    'Exporters miss deliveries.,Orders move to rivals.,"A, B, C, D",One follows the other.\n',
    # 3: the explanation names another order
    "A chain faces a bean price shock. Order the events.,Costs per cup rise.,Bean prices jump.,"
    'Sales dip.,Prices go up.,"B, A, D, C","The correct order is B, D, A, C."\n',
    # 4: refers to a table it lacks
    "Use the following table of quarterly sales. Order the events.,Sales fall.,Stock piles up.,"
    'Prices are cut.,Sales recover.,"A, B, C, D",\n',
]


def run(db: str | Path, *args: str, input: str | None = None) -> Result:
    return CliRunner().invoke(cli, ["--db", str(db), *args], input=input)


def flag_names(db: Database, item_id: str, revision: int | None = None) -> list[str]:
    with db.session() as session:
        if revision is None:
            return [flag.name.value for flag in current_flags(session, [item_id]).get(item_id, [])]
        return [flag.name.value for flag in revision_flags(session, item_id, revision)]


@pytest.fixture
def econ(tmp_path: Path) -> Path:
    path = tmp_path / "econ.csv"
    path.write_text(HEADER + "".join(ROWS), encoding="utf-8")
    return path


def test_an_import_flags_each_revision_with_its_evidence(database: Database, econ: Path) -> None:
    assert import_files(database, [econ]).ok
    assert flag_names(database, "econ:1") == []
    assert flag_names(database, "econ:2") == ["order-leak"]
    assert flag_names(database, "econ:3") == ["key-mismatch"]
    assert flag_names(database, "econ:4") == ["needs-media", "order-leak"]
    with database.session() as session:
        [mismatch] = current_flags(session, ["econ:3"])["econ:3"]
    assert mismatch.revision == 1 and mismatch.source.value == "auto"
    assert mismatch.evidence["explanation_says"] == "BDAC" and mismatch.evidence["key"] == "BADC"
    assert mismatch.summary.startswith("the explanation says B, D, A, C")


def test_a_new_revision_gets_its_own_flags_and_the_old_one_keeps_its_own(
    database: Database, econ: Path, tmp_path: Path
) -> None:
    import_files(database, [econ])
    store_person(database, "alice")
    store_person(database, "lena", Role.LEAD)
    # a re-import of a changed record: a new revision with its own flags
    changed = ROWS[3].replace("Use the following table of quarterly sales.", "Sales slump.")
    again = tmp_path / "econ.csv"
    again.write_text(HEADER + "".join([*ROWS[:3], changed]), encoding="utf-8")
    report = import_files(database, [again])
    assert report.files[0].revised == ["econ:4"]
    assert flag_names(database, "econ:4") == ["order-leak"]
    assert flag_names(database, "econ:4", 1) == ["needs-media", "order-leak"]
    # an edit: the key no longer lists the events in order
    edit_item(database, "alice", "econ:2", ItemEdit("key fixed", key="BACD"))
    assert flag_names(database, "econ:2") == []
    assert flag_names(database, "econ:2", 1) == ["order-leak"]
    # a lead's key correction: a revision too
    decide(database, "lena", "econ:3", "approved", key="B, D, A, C")
    assert flag_names(database, "econ:3") == []
    assert flag_names(database, "econ:3", 1) == ["key-mismatch"]


def test_an_edit_that_makes_a_copy_is_flagged_at_once_with_what_differs(
    database: Database,
) -> None:
    store_item(database, "bank:1", kind="single", prompt="Which is a monetary policy tool?",
               choices={"A": "Open market operations", "B": "Income tax", "C": "Tariffs"}, key="A")  # fmt: skip
    store_item(database, "bank:2", kind="single", prompt="Which is a fiscal policy tool?",
               choices={"A": "Income tax", "B": "Tariffs", "C": "Interest on reserves"}, key="A")  # fmt: skip
    store_person(database, "alice")
    assert flag_names(database, "bank:2") == []
    edit_item(
        database,
        "alice",
        "bank:2",
        ItemEdit(
            "reworded",
            prompt="Which is a monetary policy tool ?",
            choices={"A": "Income tax", "B": "Tariffs", "C": "Open market operations"},
            key="C",
        ),
    )
    with database.session() as session:
        [flag] = current_flags(session, ["bank:2"])["bank:2"]
        item = session.get(Item, "bank:2")
        assert item is not None
        assert (item.suspected_duplicate_of, item.duplicate_similarity) == ("bank:1", 100.0)
    assert flag.name is FlagName.DUPLICATE and flag.evidence["of"] == "bank:1"
    assert flag.summary == (
        "copies bank:1 (100% similar): spacing in the question; choices reordered; "
        "key remapped (A -> C)"
    )


def test_an_edit_of_the_original_flags_what_recompute_flags(database: Database) -> None:
    """Of two near-copies the later is the copy, whichever is edited: a key corrected on
    the original does not flag the original as a copy of its own copy (it did, and a
    recompute then took the flag back), and a recompute finds nothing to change."""
    choices = {"A": "Open market operations", "B": "Income tax", "C": "Tariffs"}
    store_item(database, "bank:1", kind="single", prompt="Which is a monetary policy tool?",
               choices=choices, key="A")  # fmt: skip
    store_item(database, "bank:2", kind="single", prompt="Which is a monetary policy tool ?",
               choices=choices, key="A")  # fmt: skip
    store_person(database, "lena", Role.LEAD)
    with database.transaction() as session:
        recompute_flags(session, "lena")
    assert (flag_names(database, "bank:1"), flag_names(database, "bank:2")) == ([], ["duplicate"])
    decide(database, "lena", "bank:1", "approved", key="B", reason="wrong-key")
    assert flag_names(database, "bank:1") == []
    with database.transaction() as session:
        report = recompute_flags(session, "lena")
    assert (report.added, report.removed) == (0, 0)
    # the copy edited: it is checked against the original, and says what differs now
    edit_item(database, "lena", "bank:2", ItemEdit("key", key="C"))
    with database.session() as session:
        [flag] = current_flags(session, ["bank:2"])["bank:2"]
    assert flag.evidence["of"] == "bank:1" and "a different key" in flag.summary


def test_the_migration_backfills_flags_for_items_stored_before_it(
    db_path: Path, econ: Path
) -> None:
    engine = make_engine(db_path)
    upgrade_to(engine, "0003_identity_audit")
    # items stored the way the schema before flags stored them: rows, no flags
    with engine.begin() as connection:
        for index, row in enumerate(ROWS, start=1):
            fields = next(csv.reader([row]))
            connection.execute(
                text(
                    "INSERT INTO item (id, kind, source, source_ref, language, status, "
                    "current_revision, meta, created_at) VALUES (:id, 'ordering', 'econ', '', "
                    "'en', 'pending', 1, '{}', :at)"
                ),
                {"id": f"econ:{index}", "at": f"2026-01-0{index} 00:00:00"},
            )
            connection.execute(
                text(
                    "INSERT INTO item_revision (item_id, number, prompt, choices, key, explanation,"
                    " author, change_note, provenance, created_at) VALUES (:id, 1, :prompt, "
                    ":choices, :key, :explanation, 'import', 'import', '{}', :at)"
                ),
                {
                    "id": f"econ:{index}",
                    "prompt": fields[0],
                    "choices": json.dumps(dict(zip("ABCD", fields[1:5], strict=True))),
                    "key": fields[5].replace(", ", ""),
                    "explanation": fields[6] or None,
                    "at": f"2026-01-0{index} 00:00:00",
                },
            )
    engine.dispose()
    database = open_database(db_path)  # upgrades to the head: 0005 adds and backfills flags
    try:
        assert flag_names(database, "econ:2") == ["order-leak"]
        assert flag_names(database, "econ:3") == ["key-mismatch"]
        assert flag_names(database, "econ:4") == ["needs-media", "order-leak"]
        with database.session() as session:
            [event] = session.exec(select(AuditEvent).where(AuditEvent.action == "flags")).all()
        assert (event.actor, event.target, event.payload["added"]) == ("migration", "recompute", 4)
    finally:
        database.dispose()


def test_0014_raises_same_choices_on_items_stored_before_it_and_takes_it_back(
    db_path: Path,
) -> None:
    engine = make_engine(db_path)
    upgrade_to(engine, "0013_review_filters")
    engine.dispose()
    database = open_database(db_path, migrate=False)  # at 0013, as the vetbench of then left it
    choices = {"A": "Ⅰ、Ⅱ、Ⅲ", "B": "Ⅲ、Ⅳ", "C": "Ⅰ、Ⅱ、Ⅲ", "D": "Ⅰ、Ⅱ"}
    store_item(database, "cflue:1", kind="single", key="A", choices=choices)
    store_item(database, "cflue:2", kind="single", key="B", choices={**choices, "C": "Ⅱ、Ⅳ"})
    with database.transaction() as session:  # that vetbench raised no such flag
        session.execute(text("DELETE FROM item_flag WHERE name = 'same-choices'"))
    database.dispose()
    database = open_database(db_path)  # upgrades to the head: 0014 raises it
    try:
        assert flag_names(database, "cflue:1") == ["same-choices"]
        assert flag_names(database, "cflue:2") == []
        with database.session() as session:
            [event] = session.exec(select(AuditEvent).where(AuditEvent.action == "flags")).all()
        assert (event.actor, event.target) == ("migration", "backfill")
        assert event.payload == {"flag": "same-choices", "added": 1}
        command.downgrade(alembic_config(database.engine), "0013_review_filters")
        with database.session() as session:
            assert session.exec(select(StoredFlag)).all() == []
    finally:
        database.dispose()


def test_recompute_brings_flags_up_to_date_and_is_for_leads(db_path: Path, econ: Path) -> None:
    assert run(db_path, "import", str(econ)).exit_code == 0
    assert run(db_path, "users", "add", "lena", "--role", "lead").exit_code == 0
    assert run(db_path, "users", "add", "alice").exit_code == 0
    database = open_database(db_path)
    with database.transaction() as session:  # a flag the rules would not raise (stale)
        session.add(StoredFlag(item_id="econ:1", revision_number=1, name="html",
                               evidence={"summary": "stale"}))  # fmt: skip
    database.dispose()
    refused = run(db_path, "flags", "recompute", "--as", "alice")
    assert (refused.exit_code, refused.output.strip()) == (
        1,
        "error: only leads can recompute flags; 'alice' is an annotator: "
        "name a lead with --as NAME (leads: lena)",
    )  # it named deciding, which recomputing is not
    result = run(db_path, "flags", "recompute", "--as", "lena", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert (report["revisions"], report["added"], report["removed"]) == (4, 0, 1)
    assert report["by_flag"]["order-leak"] == 2 and report["by_flag"]["html"] == 0
    again = json.loads(run(db_path, "flags", "recompute", "--as", "lena", "--json").stdout)
    assert (again["added"], again["removed"]) == (0, 0)


def test_items_stats_and_flags_show_report_flags(db_path: Path, econ: Path) -> None:
    assert run(db_path, "import", str(econ)).exit_code == 0
    listed = json.loads(run(db_path, "items", "--flag", "order-leak", "--json").stdout)
    assert [item["id"] for item in listed] == ["econ:2", "econ:4"]
    flags = listed[1]["flags"]
    assert [flag["name"] for flag in flags] == ["needs-media", "order-leak"]
    assert set(flags[0]) == {"name", "source", "revision", "summary", "evidence"}
    assert flags[0]["evidence"]["references"][0]["found"] == "the following table"
    either = run(db_path, "items", "--flag", "key-mismatch", "--flag", "needs-media")
    assert [line.split()[0] for line in either.stdout.splitlines()] == ["econ:3", "econ:4"]
    stats = json.loads(run(db_path, "stats", "--json").stdout)
    assert list(stats)[-1] == "by_flag"
    assert stats["by_flag"] == {
        "duplicate": 0, "needs-media": 1, "html": 0, "key-mismatch": 1, "order-leak": 2,
        "same-choices": 0, "model-disagrees": 0, "second-opinion": 0,
    }  # fmt: skip
    shown = run(db_path, "flags", "show", "econ:4").stdout
    assert shown.startswith("revision 1 (current):\n  needs-media: the scenario refers to")
    assert run(db_path, "flags", "show", "econ:9").exit_code == 1
    names = run(db_path, "flags", "names").stdout.splitlines()
    assert [line.split()[0] for line in names] == [flag.value for flag in FlagName]


def test_decide_by_flag_shows_the_count_asks_and_audits_each_decision(
    db_path: Path, econ: Path
) -> None:
    assert run(db_path, "import", str(econ)).exit_code == 0
    assert run(db_path, "users", "add", "lena", "--role", "lead").exit_code == 0
    args = ("decide", "--flag", "order-leak", "--status", "rejected", "--reason", "flawed")
    declined = run(db_path, *args, "--as", "lena", input="n\n")
    assert declined.exit_code == 0
    assert "2 undecided items have the flag order-leak: econ:2, econ:4" in declined.output
    assert "Mark all 2 rejected (flawed) as lena?" in declined.output
    assert "nothing decided" in declined.output
    database = open_database(db_path)
    with database.session() as session:
        assert session.exec(select(Decision)).all() == []
    database.dispose()
    accepted = run(db_path, *args, "--as", "lena", input="y\n")
    assert (
        accepted.exit_code == 0 and "rejected 2 items with the flag order-leak" in accepted.output
    )
    database = open_database(db_path)
    with database.session() as session:
        decisions = session.exec(select(Decision)).all()
        statuses = {item.id: item.status for item in session.exec(select(Item))}
        events = session.exec(select(AuditEvent).where(AuditEvent.action == "decide")).all()
    database.dispose()
    assert sorted((d.item_id, d.status, d.reason) for d in decisions) == [
        ("econ:2", "rejected", "flawed"),
        ("econ:4", "rejected", "flawed"),
    ]
    assert statuses == {"econ:1": "pending", "econ:2": "rejected", "econ:3": "pending",
                        "econ:4": "rejected"}  # fmt: skip
    assert all(event.payload["flag"] == "order-leak" for event in events) and len(events) == 2
    # decided items are left out of the next round
    left = run(db_path, *args, "--yes", "--as", "lena")
    assert "no undecided items have the flag order-leak" in left.output
    assert run(db_path, "decide", "--status", "approved").exit_code == 1  # neither id nor flag
    both = run(db_path, "decide", "econ:1", "--flag", "html", "--status", "approved")
    assert both.exit_code == 1 and "either ITEM_ID or --flag" in both.output
    no_reason = run(
        db_path, "decide", "--flag", "key-mismatch", "--status", "rejected", "--yes", "--as", "lena"
    )
    assert no_reason.exit_code == 1 and "--reason" in no_reason.output


def test_decide_by_flag_lists_the_ids_as_people_number_them(db_path: Path, tmp_path: Path) -> None:
    """econ:2 before econ:10, as every other list of ids (db.items.id_order), not text order."""
    sound, leaking = ROWS[0], ROWS[1]
    rows = [
        (leaking if number in (2, 10) else sound)
        .replace("Order the events", f"Case {number}")
        .replace("Put the events in order", f"Case {number}")
        for number in range(1, 11)
    ]
    econ = tmp_path / "econ.csv"
    econ.write_text(HEADER + "".join(rows), encoding="utf-8")
    assert run(db_path, "import", str(econ)).exit_code == 0
    assert run(db_path, "users", "add", "lena", "--role", "lead").exit_code == 0
    asked = run(
        db_path, "decide", "--flag", "order-leak", "--status", "rejected", "--reason", "flawed",
        "--as", "lena", input="n\n",
    )  # fmt: skip
    assert "2 undecided items have the flag order-leak: econ:2, econ:10\n" in asked.output


@pytest.mark.slow
def test_real_cflue_items_that_need_media_or_repeat_a_choice_are_flagged(
    cflue_knowledge: Path, db_path: Path
) -> None:
    """The issue's measurement on the real file: every question with an HTML image tag, or a
    如表/如图/下表/下图 reference ("以下表述", the following statements, is none) whose text
    holds no table, is flagged needs-media; the flag quotes what it found.  The one question
    two of whose choices are written alike is flagged same-choices, and no other (Ⅰ、Ⅱ、Ⅳ
    and Ⅲ、Ⅳ, alike once punctuation and width forms go, are not)."""
    records = json.loads(cflue_knowledge.read_text(encoding="utf-8"))
    image = re.compile(r"<\s*img|&lt;\s*img|imgsrc", re.IGNORECASE)
    reference = re.compile(r"如表|如图|(?<!以)下表(?!述)|下图")
    expected = set()
    repeating = set()
    for position, record in enumerate(records, start=1):
        choices = list(ast.literal_eval(record["choices"]).values())
        text = record["question"] + " " + " ".join(choices)
        if image.search(text) or reference.search(text):
            expected.add(f"knowledge:{position}")
        if len({choice.strip() for choice in choices}) < len(choices):
            repeating.add(f"knowledge:{position}")
    assert len(repeating) == 1
    assert len(expected) >= 20  # 14 with an image tag, the rest with a reference
    database = open_database(db_path)
    try:
        assert import_files(database, [cflue_knowledge]).ok
        with database.session() as session:
            flagged = {
                item_id
                for item_id, flags in current_flags(session, sorted(expected)).items()
                if any(flag.name is FlagName.NEEDS_MEDIA for flag in flags)
            }
            everywhere = session.exec(
                select(StoredFlag.item_id).where(StoredFlag.name == "needs-media")
            ).all()
            same = session.exec(
                select(StoredFlag.item_id, StoredFlag.evidence).where(
                    StoredFlag.name == "same-choices"
                )
            ).all()
    finally:
        database.dispose()
    assert flagged == expected
    assert len(set(everywhere)) <= len(expected) + 2  # hardly anything else
    assert [(item_id, evidence["same"]) for item_id, evidence in same] == [
        (min(repeating), [{"labels": "AC", "text": "Ⅰ、Ⅱ、Ⅲ"}])
    ]


def test_an_edit_of_the_original_brings_its_copys_flag_up_to_date(database: Database) -> None:
    """A copy's flag says what it changed against its original as the original reads now:
    an edit of the original (by anyone) writes the copy's flag again, and a recompute then
    finds nothing to change; an original edited into another question leaves the copy a
    flag saying so, which a recompute takes back."""
    choices = {"A": "Open market operations", "B": "Income tax", "C": "Tariffs"}
    store_item(database, "bank:1", kind="single", prompt="Which is a monetary policy tool?",
               choices=choices, key="A")  # fmt: skip
    store_item(database, "bank:2", kind="single", prompt="Which is a monetary policy tool ?",
               choices=choices, key="A")  # fmt: skip
    store_person(database, "alice")
    store_person(database, "lena", Role.LEAD)
    with database.transaction() as session:
        recompute_flags(session, "lena")

    def copy_flag() -> str:
        with database.session() as session:
            [flag] = current_flags(session, ["bank:2"])["bank:2"]
        assert flag.name is FlagName.DUPLICATE and flag.evidence["of"] == "bank:1"
        return flag.summary

    assert copy_flag() == "copies bank:1 (100% similar): spacing in the question"
    edit_item(
        database,
        "alice",
        "bank:1",
        ItemEdit("reordered", choices={"A": "Tariffs", "B": "Income tax", "C": "Open market operations"}, key="C"),
    )  # fmt: skip
    assert copy_flag() == (
        "copies bank:1 (100% similar): spacing in the question; choices reordered; "
        "key remapped (C -> A)"
    )
    with database.transaction() as session:
        report = recompute_flags(session, "lena")
    assert (report.added, report.removed) == (0, 0)
    assert copy_flag() == (
        "copies bank:1 (100% similar): spacing in the question; choices reordered; "
        "key remapped (C -> A)"
    )
    edit_item(
        database,
        "alice",
        "bank:1",
        ItemEdit("another question", prompt="Who sets the policy rate in the euro area?",
                 choices={"A": "The ECB", "B": "The IMF", "C": "The Treasury"}, key="A"),
    )  # fmt: skip
    assert copy_flag().startswith(
        "copied an earlier text of bank:1, which was edited (revision 3) and no longer nearly "
        "repeats it ("
    )
    with database.transaction() as session:
        recompute_flags(session, "lena")
    assert flag_names(database, "bank:2") == []
    with database.session() as session:
        item = session.get(Item, "bank:2")
        assert item is not None and item.suspected_duplicate_of is None


def test_recompute_rewrites_a_needs_media_flag_in_the_old_words(database: Database) -> None:
    """A flag stored with "(and 2 more)" gets the words that say what, from `flags
    recompute` (the summary is stored text)."""
    store_item(database, "cflue:1", kind="single", prompt="<img src=a.png>则（）。",
               choices={"A": "<img src=b.png>", "B": "<img src=c.png>", "C": "丙"}, key="A")  # fmt: skip
    store_person(database, "lena", Role.LEAD)
    new_words = (
        "the question holds an <img> tag: the image is not in the text (and 2 more <img> tags)"
    )
    with database.transaction() as session:
        recompute_flags(session, "lena")
        [flag] = session.exec(
            select(StoredFlag).where(
                StoredFlag.item_id == "cflue:1", StoredFlag.name == "needs-media"
            )
        ).all()
        assert flag.evidence["summary"] == new_words
        old_words = new_words.replace(" <img> tags)", ")")
        flag.evidence = {**flag.evidence, "summary": old_words}
        session.add(flag)
    with database.transaction() as session:
        report = recompute_flags(session, "lena")
    assert report.removed and report.added == report.removed  # the revision's flags, again
    with database.session() as session:
        shown = current_flags(session, ["cflue:1"])["cflue:1"]
    assert [f.summary for f in shown if f.name is FlagName.NEEDS_MEDIA] == [new_words]
