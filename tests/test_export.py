"""Exporting: what was imported comes back as the same records, in every format, and a
format that cannot hold the selection is refused before anything is written."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from helpers import CFLUE_MULTI_RECORD, FIXTURES, decide_items, run_cli, write_file
from sqlalchemy import MetaData, select, update
from sqlmodel import col

from db.audit import read_audit
from db.engine import Database, open_database
from db.formats import read_records
from db.importer import import_files
from db.items import add_revision
from db.models import Decision, Item
from db.people import ensure_person
from db.vocabulary import Role
from evaluator.exports.item_files import ExportError, Selection, export_items

ORDERING_CSV = (
    "Question,A,B,C,D,E,Answer,Explanation\n"
    '"A port strike, then ""shortages"".",Strike,Delays,Shortages,Prices,,"A, B, C, D",Chain.\n'
    'A harvest fails.,Rain,Crop loss,Price rise,Imports,Rationing,"A, B, C, E, D",\n'
    'A bank raises rates.,Rates up,Loans dearer,Borrowing falls,Growth slows,,"A, B, C, D",Why.\n'
)
CFLUE_RECORDS = [
    {
        "名称": "银行从业资格",
        "task": "单项选择题",
        "question": "下列属于货币政策工具的是（　）。\r\n",
        "choices": "{'A': '公开市场操作', 'B': '财政补贴', 'C': \"It's\", 'D': '国债'}",
        "answer": "A",
        "analysis": None,
    },
    CFLUE_MULTI_RECORD,
    {
        "名称": "反假货币知识",
        "task": "判断题",
        "question": "第四套人民币50元券使用的是毛泽东头像水印。（）",
        "choices": "{'A': '对', 'B': '错'}",
        "answer": "B",
        "analysis": "略。",
    },
]


def import_econ_and_exam(database: Database, tmp_path: Path) -> None:
    """ORDERING_CSV as econ:1..3 and CFLUE_RECORDS as exam:1..3, each its own import."""
    import_files(database, [write_file(tmp_path, "econ.csv", ORDERING_CSV)])
    exam = json.dumps(CFLUE_RECORDS, ensure_ascii=False)
    import_files(database, [write_file(tmp_path, "exam.json", exam)])


def approve_all(database: Database) -> None:
    with database.session() as session:
        ids = list(session.execute(select(Item.id)).scalars())
    decide_items(database, ids)


def parsed(path: Path, format_name: str) -> list[tuple[Any, ...]]:
    """Each record as (kind, prompt, choices, key, explanation, meta), after validation."""
    from db.validation import validate_draft

    rows = []
    for record in read_records(path, format_name):
        assert record.draft is not None and validate_draft(record.draft) == []
        draft = record.draft
        rows.append(
            (draft.kind, draft.prompt, draft.choices, draft.key, draft.explanation, draft.meta)
        )
    return rows


def _comparable(value: Any) -> Any:
    # Reflected SQLite columns hand back naive times (stored in UTC), PostgreSQL aware ones.
    if isinstance(value, datetime) and value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value


def table_rows(database: Database, *names: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of the named tables (revision ids left out: they are only row numbers)."""
    metadata = MetaData()
    metadata.reflect(database.engine, only=list(names))
    with database.engine.connect() as connection:
        return {
            name: sorted(
                (
                    tuple(
                        _comparable(v)
                        for k, v in row._mapping.items()
                        if k != "id" or name == "item"
                    )
                    for row in connection.execute(select(metadata.tables[name]))
                ),
                key=repr,
            )
            for name in names
        }


def test_econlogicqa_export_gives_back_the_imported_records(
    database: Database, tmp_path: Path
) -> None:
    source = write_file(tmp_path, "econ.csv", ORDERING_CSV)
    import_files(database, [source])
    approve_all(database)
    out = tmp_path / "out" / "econ.csv"
    out.parent.mkdir()  # an export makes no folder
    summary = export_items(database, out, format="econlogicqa")
    assert (summary.count, summary.by_kind) == (3, {"ordering": 3})
    assert parsed(out, "econlogicqa") == parsed(source, "econlogicqa")
    with out.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == ["Question", "A", "B", "C", "D", "E", "Answer", "Explanation"]
    assert rows[2][6] == "A, B, C, E, D"


def test_cflue_export_gives_back_the_imported_records_exactly(
    database: Database, tmp_path: Path
) -> None:
    source = write_file(tmp_path, "exam.json", json.dumps(CFLUE_RECORDS, ensure_ascii=False))
    import_files(database, [source])
    out = tmp_path / "exam-out.json"
    export_items(database, out, format="cflue", selection=Selection(statuses=()))
    assert json.loads(out.read_text(encoding="utf-8")) == CFLUE_RECORDS


def test_the_current_revision_is_what_gets_exported(database: Database, tmp_path: Path) -> None:
    import_files(database, [write_file(tmp_path, "econ.csv", ORDERING_CSV)])
    with database.transaction() as session:
        add_revision(session, "econ:3", author="ann", change_note="edit", key="BACD")
    out = tmp_path / "out.csv"
    export_items(database, out, format="econlogicqa", selection=Selection(statuses=()))
    assert [row[3] for row in parsed(out, "econlogicqa")] == ["ABCD", "ABCED", "BACD"]


def test_jsonl_export_round_trips_items_and_revisions_into_another_database(
    database: Database, tmp_path: Path
) -> None:
    import_econ_and_exam(database, tmp_path)
    with database.transaction() as session:
        add_revision(
            session, "exam:2", author="ann", change_note="edit: typo", prompt="我国金融市场包括"
        )
        session.execute(
            update(Item)
            .where(col(Item.id) == "econ:2")
            .values(suspected_duplicate_of="econ:1", duplicate_similarity=91.5)
        )
    decide_items(database, ["econ:2"], "rejected")
    first = tmp_path / "all.jsonl"
    assert (
        export_items(database, first, format="jsonl", selection=Selection(statuses=())).count == 6
    )

    other = open_database(tmp_path / "other.db")
    try:
        with other.transaction() as session:
            ensure_person(session, "lena", Role.LEAD)
        # The rejected status comes back as a decision by the lead who imports it.
        report = import_files(other, [first], actor="lena")
        assert report.tally.added == 6 and report.ok
        with other.session() as session:
            (decision,) = session.execute(select(Decision)).scalars().all()
            (event,) = read_audit(session, actions=["decide"])
        assert (decision.item_id, decision.status) == ("econ:2", "rejected")
        assert decision.comment == "status stated by all.jsonl: line 2"
        assert (event.actor, event.target, event.changes["stated_by"]) == (
            "lena",
            "econ:2",
            "all.jsonl: line 2",
        )
        assert table_rows(other, "item", "item_revision") == table_rows(
            database, "item", "item_revision"
        )
        second = tmp_path / "again.jsonl"
        export_items(other, second, format="jsonl", selection=Selection(statuses=()))
        assert second.read_text(encoding="utf-8") == first.read_text(encoding="utf-8")
    finally:
        other.dispose()


def test_reimporting_an_export_says_what_it_decided_or_left_for_a_lead(
    database: Database, tmp_path: Path
) -> None:
    """The CLI round trip a lead follows: an annotator's import leaves the stated statuses
    for a lead and says so; the lead imports again with --as and is told what was
    decided; importing into the database it came from says nothing of statuses, since
    every item has its stated one already."""
    import_econ_and_exam(database, tmp_path)
    decide_items(database, ["econ:2"], "rejected")
    decide_items(database, ["exam:1", "exam:2"], "approved")
    exported = tmp_path / "all.jsonl"
    assert run_cli(database, "export", "--status", "all", str(exported)).exit_code == 0

    other = tmp_path / "other.db"
    assert run_cli(str(other), "users", "add", "alice").exit_code == 0  # --as names a person
    first = run_cli(str(other), "import", str(exported), "--as", "alice")
    assert first.exit_code == 0, first.output
    assert f"{exported} (jsonl, sources econ, exam): 6 records" in first.stdout
    assert first.stderr == (
        "note: all.jsonl: 3 records state a decision their items lack (approved 2, rejected 1; "
        "first: all.jsonl: line 2); only a lead's decision approves or rejects: a lead "
        "importing the file again (--as LEAD) decides them\n"
    )
    assert run_cli(str(other), "users", "add", "lena", "--role", "lead").exit_code == 0
    again = run_cli(str(other), "import", str(exported), "--as", "lena")
    assert "nothing new: all 6 valid records are unchanged" in again.stdout
    assert again.stderr == (
        "note: all.jsonl: decided 3 items as the file states (approved 2, rejected 1), in "
        "lena's name; each decision's comment names its line\n"
    )
    statuses = json.loads(run_cli(str(other), "items", "--json").output)
    assert {item["id"]: item["status"] for item in statuses if item["status"] != "pending"} == {
        "econ:2": "rejected",
        "exam:1": "approved",
        "exam:2": "approved",
    }
    assert run_cli(str(other), "import", str(exported), "--as", "lena").stderr == ""
    assert run_cli(database, "import", str(exported)).stderr == ""


def test_a_reader_that_goes_away_stops_the_export_quietly(
    database: Database, tmp_path: Path
) -> None:
    """`vetbench export - | head`: the reader asked for no more, so no error is printed (as
    click does for every other command: exit 1, nothing on stderr), and no file is made."""
    import_econ_and_exam(database, tmp_path)
    url = database.engine.url.render_as_string(hide_password=False)
    command = [sys.executable, "-m", "reviewer.cli", "--db", url, "export", "-", "--status"]
    before = sorted(tmp_path.iterdir())
    reader, writer = os.pipe()
    os.close(reader)  # gone before the first byte
    try:
        done = subprocess.run(
            [*command, "all", "--format", "jsonl"],
            stdout=writer,
            stderr=subprocess.PIPE,
            timeout=60,
            check=False,
        )
    finally:
        os.close(writer)
    assert (done.returncode, done.stderr.decode()) == (1, "")
    assert sorted(tmp_path.iterdir()) == before


def test_real_cflue_file_round_trips(
    database: Database, tmp_path: Path, cflue_knowledge: Path
) -> None:
    import_files(database, [cflue_knowledge])
    out = tmp_path / "knowledge.json"
    export_items(database, out, format="cflue", selection=Selection(statuses=()))
    original = json.loads(cflue_knowledge.read_text(encoding="utf-8"))
    assert json.loads(out.read_text(encoding="utf-8")) == original


@pytest.mark.parametrize("name", ["econ_ordering.csv", "cflue_mcq.json"])
def test_fixtures_round_trip(database: Database, tmp_path: Path, name: str) -> None:
    source = FIXTURES / name
    if not source.exists():
        pytest.skip(f"{source} not written yet")
    import_files(database, [source])
    format_name = "econlogicqa" if name.endswith(".csv") else "cflue"
    out = tmp_path / name
    export_items(database, out, format=format_name, selection=Selection(statuses=()))
    assert parsed(out, format_name) == parsed(source, format_name)


# --- selection and refusals ---------------------------------------------------------------------


def test_only_approved_items_by_default_and_filters_narrow_the_selection(
    database: Database, tmp_path: Path
) -> None:
    import_econ_and_exam(database, tmp_path)
    decide_items(database, ["econ:2", "exam:1"])
    out = tmp_path / "approved.jsonl"
    summary = export_items(database, out, format="jsonl")
    assert summary.by_kind == {"ordering": 1, "single": 1}
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == ["econ:2", "exam:1"]
    only_exam = export_items(
        database, out, format="jsonl", selection=Selection(statuses=(), sources=("exam",))
    )
    assert only_exam.count == 3
    multi = export_items(
        database, out, format="cflue", selection=Selection(statuses=(), kinds=("multi",))
    )
    assert [r["task"] for r in json.loads(out.read_text(encoding="utf-8"))] == ["多项选择题"]
    assert multi.count == 1


def test_a_format_that_cannot_hold_the_kinds_is_refused_and_writes_nothing(
    database: Database, tmp_path: Path
) -> None:
    import_econ_and_exam(database, tmp_path)
    out = tmp_path / "out.csv"
    with pytest.raises(ExportError) as raised:
        export_items(database, out, format="econlogicqa", selection=Selection(statuses=()))
    message = str(raised.value)
    assert "econlogicqa holds ordering items only" in message
    assert "1 multi, 1 single, 1 truefalse" in message and "--kind" in message
    with pytest.raises(ExportError, match="cflue holds multi, single, truefalse items only"):
        export_items(database, out, format="cflue", selection=Selection(statuses=()))
    assert list(tmp_path.glob("out*")) == [] and list(tmp_path.glob(".out*")) == []


def test_the_destination_may_be_named_alone_and_its_extension_names_the_format(
    database: Database, tmp_path: Path
) -> None:
    """`vetbench export approved.jsonl`, as import takes FILE: .jsonl is jsonl and .json
    cflue; where the extension leaves a choice the command asks and writes nothing."""
    import_econ_and_exam(database, tmp_path)
    jsonl = run_cli(database, "export", str(tmp_path / "all.jsonl"), "--status", "all")
    assert jsonl.exit_code == 0, jsonl.output
    assert jsonl.output.rstrip().endswith("all.jsonl as jsonl")
    assert len((tmp_path / "all.jsonl").read_text(encoding="utf-8").splitlines()) == 6
    mcq = tmp_path / "mcq.json"
    cflue = run_cli(database, "export", str(mcq), "--status", "all", "--kind", "single")
    assert cflue.exit_code == 0 and cflue.output.rstrip().endswith("mcq.json as cflue")
    assert [r.draft and r.draft.kind for r in read_records(mcq)] == ["single"]

    asked = {
        "x.csv": "x.csv could be econlogicqa or judging: say it with --format",
        "folder": "folder could be econlogicqa, cflue, jsonl, judging, lm-eval or hf: say",
        "-": "standard output could be econlogicqa, cflue, jsonl or judging: say it",
    }
    for name, said in asked.items():
        refused = run_cli(database, "export", name if name == "-" else str(tmp_path / name))
        assert refused.exit_code == 1 and said in refused.output, refused.output
    both = run_cli(database, "export", str(tmp_path / "a.jsonl"), "--out", "b.jsonl")
    assert "two destinations" in both.output and both.exit_code == 1
    assert "no destination" in run_cli(database, "export", "--format", "jsonl").output
    assert not (tmp_path / "x.csv").exists() and not (tmp_path / "folder").exists()
    assert not (tmp_path / "a.jsonl").exists() and not Path("b.jsonl").exists()


def test_every_status_given_is_exported(database: Database, tmp_path: Path) -> None:
    """--status is repeatable, as on items, eval, triage and release create: click kept the
    last --status alone, so `--status approved --status agreed` once wrote the agreed items
    only, without a word; then a second status was refused."""
    import_econ_and_exam(database, tmp_path)
    decide_items(database, ["econ:2", "exam:1"])
    out = tmp_path / "out.jsonl"

    def exported(*statuses: str) -> list[str]:
        flags = [part for status in statuses for part in ("--status", status)]
        result = run_cli(database, "export", str(out), *flags)
        assert result.exit_code == 0, result.output
        return [json.loads(line)["id"] for line in out.read_text().splitlines()]

    assert exported("approved") == ["econ:2", "exam:1"]
    assert exported("pending") == ["econ:1", "econ:3", "exam:2", "exam:3"]
    everything = ["econ:1", "econ:2", "econ:3", "exam:1", "exam:2", "exam:3"]
    assert exported("approved", "pending") == everything
    assert exported("pending", "pending") == ["econ:1", "econ:3", "exam:2", "exam:3"]
    assert exported("rejected", "all") == everything
    none = run_cli(
        database, "export", str(tmp_path / "no.jsonl"), "--status", "agreed", "--status", "conflict"
    )
    assert none.exit_code == 1 and "no items match status agreed, conflict" in none.output
    assert not (tmp_path / "no.jsonl").exists()


def test_an_empty_selection_is_refused_with_a_hint(database: Database, tmp_path: Path) -> None:
    import_files(database, [write_file(tmp_path, "econ.csv", ORDERING_CSV)])
    with pytest.raises(ExportError, match=r"no items match status approved \(try --status all\)"):
        export_items(database, tmp_path / "x.csv", format="econlogicqa")
    with pytest.raises(ExportError, match="unknown format"):
        export_items(database, tmp_path / "x.csv", format="xml", selection=Selection(statuses=()))
    with pytest.raises(ExportError, match="unknown status"):
        export_items(
            database, tmp_path / "x.csv", format="jsonl", selection=Selection(statuses=("done",))
        )


@pytest.mark.parametrize(
    ("format_name", "kind", "meta", "said"),
    [
        ("econlogicqa", "ordering", {"extra_columns": "oops"}, "meta.extra_columns: must be"),
        ("econlogicqa", "ordering", {"extra_columns": {"E": "ee"}}, "E is a column of"),
        ("cflue", "single", {"名称": 7}, "meta.名称: must be text, got int"),
        ("cflue", "single", {"extra_fields": {"answer": "B"}}, "answer is a field of CFLUE"),
    ],
)
def test_a_stored_item_with_meta_the_format_cannot_hold_is_refused_in_one_line(
    database: Database, tmp_path: Path, format_name: str, kind: str, meta: Any, said: str
) -> None:
    """Meta that reached the database another way than an import (which refuses it)."""
    import_econ_and_exam(database, tmp_path)
    item_id = "econ:1" if kind == "ordering" else "exam:1"
    with database.transaction() as session:
        session.execute(update(Item).where(col(Item.id) == item_id).values(meta=meta))
    out = tmp_path / "out"
    result = run_cli(
        database,
        "export",
        "--format",
        format_name,
        "--kind",
        kind,
        "--status",
        "all",
        "--out",
        str(out),
    )
    assert result.exit_code == 1 and f"item {item_id}: " in result.output and said in result.output
    assert not out.exists()


def test_an_unchanged_round_trip_is_reported_unchanged(database: Database, tmp_path: Path) -> None:
    """Nothing is invented on the way: no empty 名称 for a record without one, no empty
    extra column for an item without it (written beside one with it)."""
    ordering = {"kind": "ordering", "source": "econ", "choices": {"A": "a", "B": "b"}}
    lines = [
        {**ordering, "id": "econ:1", "source_ref": "line 2", "prompt": "One.", "key": "AB"},
        {
            **ordering,
            "id": "econ:2",
            "source_ref": "line 3",
            "prompt": "Two.",
            "key": "BA",
            "meta": {"extra_columns": {"Notes": "checked"}},
        },
    ]
    records = "".join(json.dumps(line) + "\n" for line in lines)
    import_files(database, [write_file(tmp_path, "econ.jsonl", records)])
    unnamed = {key: value for key, value in CFLUE_RECORDS[0].items() if key != "名称"}
    import_files(
        database, [write_file(tmp_path, "exam.json", json.dumps([unnamed, CFLUE_MULTI_RECORD]))]
    )
    out = tmp_path / "out"
    out.mkdir()
    for name, format_name, kind in (
        ("econ.csv", "econlogicqa", "ordering"),
        ("exam.json", "cflue", None),
    ):
        kinds = (kind,) if kind else ("single", "multi")
        export_items(
            database, out / name, format=format_name, selection=Selection(statuses=(), kinds=kinds)
        )
    assert "名称" not in json.loads((out / "exam.json").read_text(encoding="utf-8"))[0]
    with database.session() as session:
        before = {entry.id for entry in read_audit(session)}
    report = import_files(database, [out / "econ.csv", out / "exam.json"])
    for file_report in report.files:
        assert file_report.tally.unchanged == 2 and file_report.tally.updated == 0
        assert file_report.metadata_updated == [] and file_report.revised == []
    with database.session() as session:
        new = [entry for entry in read_audit(session) if entry.id not in before]
    assert [entry.target for entry in new if ":" in entry.target] == []
