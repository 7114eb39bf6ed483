"""Batch judgments: `vetbench export --format judging` writes the items waiting for a person,
`vetbench judge --from FILE|-` reads them back filled in: every row checked first (file, line,
field; every problem), then all stored through the single judgment's rules and audit, or
nothing; on PostgreSQL an annotator's batch writes only their own judgments and decides
nothing."""

from __future__ import annotations

import csv
import io
import json
import shlex
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from helpers import item_status, run_cli, run_process, store_item, store_person, stored_judgments
from role_helpers import RoleNames, team_database

from db.audit import read_audit
from db.engine import Database, open_database
from db.reveals import reveals_by
from db.vocabulary import Role
from reviewer.cli import cli
from reviewer.judging import ItemEdit, edit_item, submit_judgment

MCQ = {"A": "贷款", "B": "存款", "C": "股票", "D": "债券"}


@pytest.fixture
def team(database: Database) -> Database:
    """Ordering items o:1, o:2, o:3, multi m:1 (key ABD), true/false t:1; alice, bob, lena
    (lead); bob has judged o:3 already (o:3 still waits for alice)."""
    for item_id in ("o:1", "o:2", "o:3"):
        store_item(database, item_id, key="DABC")
    store_item(
        database, "m:1", kind="multi", key="ABD", choices=MCQ, prompt="下列属于金融资产的有（）。"
    )
    store_item(database, "t:1", kind="truefalse", key="A", prompt="人民币是我国的法定货币。")
    for name in ("alice", "bob"):
        store_person(database, name)
    store_person(database, "lena", Role.LEAD)
    submit_judgment(
        database, "bob", "o:3", revision_number=None, blind_answer="DABC", verdict="keep"
    )
    return database


def sheet(database: Database, who: str, *extra: str) -> list[dict[str, str]]:
    result = run_cli(database, "export", "--format", "judging", "--as", who, "--out", "-", *extra)
    assert result.exit_code == 0, result.output
    return list(csv.DictReader(io.StringIO(result.stdout)))


def write_rows(path: Path, rows: list[dict[str, str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def audit_events(database: Database) -> list[tuple[str, str, str]]:
    with database.session() as session:
        return [(e.actor, e.action, e.target) for e in read_audit(session, limit=None)]


def test_a_judging_sheet_round_trips_into_judge_from(team: Database, tmp_path: Path) -> None:
    rows = sheet(team, "alice")
    assert [row["item_id"] for row in rows] == ["o:1", "o:2", "o:3", "m:1", "t:1"]
    first = rows[0]
    assert (
        first["revision"] == "1" and first["kind"] == "ordering" and first["annotator"] == "alice"
    )
    # Nobody answered blind yet: no key, no explanation (the second pass shows them).
    assert first["key"] == first["explanation"] == first["answer"] == first["verdict"] == ""
    assert rows[3]["A"] == "贷款" and rows[3]["key"] == ""
    # bob already judged o:3: it no longer waits for him
    assert [row["item_id"] for row in sheet(team, "bob")] == ["o:1", "o:2", "m:1", "t:1"]

    rows[0].update(answer="D, A, B, C", verdict="keep", seconds="12.5")
    rows[1].update(answer="ABCD", verdict="ambiguous", alt="B,A,D,C | A,B,D,C")
    rows[2].update(answer="DABC", verdict="keep")  # completes o:3's overlap of 2
    rows[3].update(answer="AB", verdict="wrong-key", corrected="AB", comment="D 不是金融资产")
    # t:1 left blank: not judged
    filled = write_rows(tmp_path / "alice.csv", rows)
    before = len(audit_events(team))
    result = run_cli(team, "judge", "--from", str(filled), "--as", "alice")
    assert result.exit_code == 0, result.output
    assert "saved 4 judgments by alice" in result.output
    assert "1 row left blank was not judged" in result.output
    judged = {(j.item_id, j.verdict, j.seconds) for j in stored_judgments(team)}
    assert {("o:1", "keep", 12.5), ("m:1", "wrong-key", 0.0)} <= judged
    [ambiguous] = [j for j in stored_judgments(team) if j.item_id == "o:2"]
    assert ambiguous.alternative_orders == ["BADC", "ABDC"]
    assert item_status(team, "o:3") == "agreed" and item_status(team, "t:1") == "pending"
    # the audit of single judgments: one `judge` event per judgment, in alice's name
    events = audit_events(team)[before:]
    assert events == [("alice", "judge", item) for item in ("o:1", "o:2", "o:3", "m:1")]
    assert [row["item_id"] for row in sheet(team, "alice")] == ["t:1"]


def reveals(database: Database, who: str) -> dict[tuple[str, int], tuple[str, float]]:
    with database.session() as session:
        return {key: (r.blind_answer, r.seconds) for key, r in reveals_by(session, who).items()}


def test_a_sheet_shows_a_key_only_after_its_blind_answer_is_stored(
    team: Database, tmp_path: Path
) -> None:
    rows = sheet(team, "alice")
    assert {row["key"] for row in rows} == {row["explanation"] for row in rows} == {""}
    by_id = {row["item_id"]: row for row in rows}
    by_id["o:1"].update(answer="A, B, C, D", seconds="30")  # blind answers only
    by_id["m:1"].update(answer="AB")
    by_id["t:1"].update(answer="A", verdict="keep")  # judged without the key: as today
    first = write_rows(tmp_path / "first.csv", rows)
    before = len(audit_events(team))
    loaded = run_cli(team, "judge", "--from", str(first), "--as", "alice")
    assert loaded.exit_code == 0, loaded.output
    url = shlex.quote(team.engine.url.render_as_string(hide_password=True))
    assert loaded.output == (
        f"saved 1 judgment by alice from {first}; 2 rows left blank were not judged; items "
        "now: 1 in_review\n"
        f"stored 2 blind answers by alice from {first}; to see the keys and give your "
        f"verdicts, export the sheet again: vetbench --db {url} export --format judging --as "
        f"alice --out {shlex.quote(str(first))}\n"
    )
    assert reveals(team, "alice") == {("o:1", 1): ("ABCD", 30.0), ("m:1", 1): ("AB", 0.0)}
    assert [(j.item_id, j.blind_answer) for j in stored_judgments(team)] == [
        ("o:3", "DABC"),  # bob's, from the fixture
        ("t:1", "A"),
    ]
    assert audit_events(team)[before:] == [
        ("alice", "reveal", "o:1"),
        ("alice", "reveal", "m:1"),
        ("alice", "judge", "t:1"),
    ]
    # The second pass: the key, the explanation and the stored answer of what she answered.
    exported = run_cli(team, "export", "--format", "judging", "--as", "alice", "--out", "-")
    assert exported.stderr.startswith(
        "exported 4 items waiting for alice to standard output as a judging sheet; 2 items "
        "without their key: fill answer blind (the next sheet shows the key); 2 items with "
        "their key and your blind answer: fill verdict; then: "
    )
    second = {row["item_id"]: row for row in sheet(team, "alice")}
    assert list(second) == ["o:1", "o:2", "o:3", "m:1"]
    shown = ("answer", "seconds", "key", "explanation", "verdict")
    because = "Inflation comes first; the bank reacts; borrowing costs follow."  # store_item's
    assert [second["o:1"][name] for name in shown] == [
        "A, B, C, D",
        "30",
        "D, A, B, C",
        because,
        "",
    ]
    assert [second["m:1"][name] for name in shown] == ["AB", "0", "ABD", because, ""]
    assert [second["o:2"][name] for name in shown] == ["", "", "", "", ""]  # still blind
    # Loaded again unchanged: nothing new.
    again = write_rows(tmp_path / "again.csv", list(second.values()))
    unchanged = run_cli(team, "judge", "--from", str(again), "--as", "alice")
    assert unchanged.exit_code == 0, unchanged.output
    assert unchanged.output.startswith(
        "2 rows give the blind answer stored before and no verdict; 2 rows left blank were "
        "not judged; to see the keys"
    )
    # The stored answer stays: another one, now that the key is shown, is refused.
    second["o:1"].update(answer="D, A, B, C", verdict="keep")
    second["m:1"].update(verdict="wrong-key", corrected="AB")
    second["o:2"].update(answer="BADC")  # a new blind answer in the same file
    changed = write_rows(tmp_path / "changed.csv", list(second.values()))
    before = len(audit_events(team))
    refused = run_cli(team, "judge", "--from", str(changed), "--as", "alice")
    assert refused.exit_code == 1
    assert refused.stderr == (
        f"error: {changed}: 1 of 3 rows refused; nothing was stored\n"
        f"  {changed}: line 2: answer: alice saw the key of item o:1 revision 1 after "
        "answering A, B, C, D blind; an answer given after the key is not blind, so a "
        "judgment of it keeps A, B, C, D\n"
    )
    assert len(audit_events(team)) == before and ("o:2", 1) not in reveals(team, "alice")
    assert len(stored_judgments(team)) == 2
    second["o:1"]["answer"] = "A, B, C, D"
    judged = run_cli(
        team, "judge", "--from", str(write_rows(changed, list(second.values()))), "--as", "alice"
    )
    assert judged.exit_code == 0, judged.output
    assert "saved 2 judgments by alice" in judged.output
    assert "stored 1 blind answer by alice" in judged.output
    mine = {j.item_id: (j.blind_answer, j.verdict) for j in stored_judgments(team)[2:]}
    assert mine == {"o:1": ("ABCD", "keep"), "m:1": ("AB", "wrong-key")}
    assert ("o:2", 1) in reveals(team, "alice")
    assert [row["item_id"] for row in sheet(team, "alice")] == ["o:2", "o:3"]


def test_a_row_without_verdict_gives_the_answer_alone(team: Database, tmp_path: Path) -> None:
    rows = sheet(team, "alice")
    by_id = {row["item_id"]: row for row in rows}
    by_id["o:1"].update(answer="DABC")  # a blind answer: valid, stored only if all are
    by_id["o:2"].update(answer="DABC", comment="odd wording")  # a comment goes with a verdict
    by_id["o:3"].update(answer="DABZ")  # not an order
    by_id["m:1"].update(answer="AB", seconds="-1")
    by_id["t:1"].update(answer="A", annotator="bob")
    bad = write_rows(tmp_path / "bad.csv", rows)
    before = audit_events(team)
    result = run_cli(team, "judge", "--from", str(bad), "--as", "alice")
    assert result.exit_code == 1
    problems = [line.strip().removeprefix(f"{bad}: ") for line in result.stderr.splitlines()]
    assert problems == [
        f"error: {bad}: 4 of 5 rows refused; nothing was stored",
        "line 3: verdict: is missing",
        "line 4: answer: blind answer 'DABZ': 'Z' is not one of the events A, B, C, D",
        "line 5: seconds: seconds must be a non-negative number, got -1.0",
        "line 6: annotator: this row is bob's; a batch is stored in your own name (alice) "
        "only: bob loads it as themselves",
    ]
    assert audit_events(team) == before and reveals(team, "alice") == {}
    # bob judged o:3 already: his answer to it is given with its verdict
    by_id["o:3"].update(answer="DABC")
    result = run_cli(team, "judge", "--from", str(write_rows(bad, [by_id["o:3"]])), "--as", "bob")
    assert result.exit_code == 1
    assert "line 2: item_id: bob already judged item o:3 revision 1" in result.stderr
    # --json keeps its keys: the blind answers are told in words only
    done = run_cli(
        team, "judge", "--from", str(write_rows(bad, [by_id["o:1"]])), "--as", "alice", "--json"
    )
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout) == {"file": str(bad), "stored": 0, "blank": 0, "judgments": []}
    assert reveals(team, "alice") == {("o:1", 1): ("DABC", 0.0)}


def test_a_sheet_loaded_again_with_more_rows_filled_stores_the_new_ones(
    team: Database, tmp_path: Path
) -> None:
    """The rows stored by the first load are the same judgments the second time: left alone
    and counted, the new rows stored; a row that differs from its stored judgment is refused
    with what to do, and nothing is stored."""
    rows = sheet(team, "alice")
    by_id = {row["item_id"]: row for row in rows}
    by_id["o:1"].update(answer="DABC", verdict="keep")
    by_id["o:2"].update(answer="DACB", verdict="wrong-key", corrected="D,A,C,B", comment="see 2")
    path = write_rows(tmp_path / "alice.csv", rows)
    first = run_cli(team, "judge", "--from", str(path), "--as", "alice")
    assert first.exit_code == 0, first.output
    by_id["m:1"].update(answer="ABD", verdict="keep")
    by_id["o:2"].update(answer="D, A, C, B")  # the same answer, written another way
    write_rows(path, rows)
    before = len(audit_events(team))
    again = run_cli(team, "judge", "--from", str(path), "--as", "alice")
    assert again.exit_code == 0, again.output
    assert again.output.startswith(
        f"saved 1 judgment by alice from {path}; 2 rows left blank were not judged; "
        "2 rows already stored (their judgment as it is, left alone); items now: "
    ), again.output
    judged = [(j.item_id, j.verdict) for j in stored_judgments(team) if j.item_id != "o:3"]
    assert sorted(judged) == [("m:1", "keep"), ("o:1", "keep"), ("o:2", "wrong-key")]
    assert len(audit_events(team)) == before + 1  # the one new judgment's event
    # all stored already: said so, and --json keeps its keys
    said = run_cli(team, "judge", "--from", str(path), "--as", "alice")
    assert said.output == (
        f"saved 0 judgments by alice from {path}; 2 rows left blank were not judged; "
        "3 rows already stored (their judgment as it is, left alone)\n"
    )
    once_more = run_cli(team, "judge", "--from", str(path), "--as", "alice", "--json")
    assert json.loads(once_more.stdout) == {
        "file": str(path),
        "stored": 0,
        "blank": 2,
        "judgments": [],
    }
    by_id["o:1"].update(verdict="flawed", comment="two events are the same")
    changed = run_cli(team, "judge", "--from", str(write_rows(path, rows)), "--as", "alice")
    assert changed.exit_code == 1
    assert changed.stderr.splitlines()[1:] == [
        f"  {path}: line 2: item_id: alice already judged item o:1 revision 1 (verdict "
        "keep); this row differs from it: undo it first to judge again, or remove the row"
    ]
    assert len(audit_events(team)) == before + 1


def test_a_sheets_errors_name_its_columns_not_the_options(team: Database, tmp_path: Path) -> None:
    rows = sheet(team, "alice")
    by_id = {row["item_id"]: row for row in rows}
    by_id["o:1"].update(answer="DABC", verdict="wrong-key")
    by_id["o:2"].update(answer="DABC", verdict="duplicate")
    by_id["o:3"].update(answer="DABC", verdict="ambiguous")
    by_id["m:1"].update(answer="ABD", verdict="flawed")
    result = run_cli(
        team, "judge", "--from", str(write_rows(tmp_path / "s.csv", rows)), "--as", "alice"
    )
    assert result.exit_code == 1
    assert "--" not in result.stderr
    for column in ("corrected", "duplicate_of", "alt", "comment"):
        assert f": {column}: the verdict " in result.stderr
        assert f" (the {column} column)\n" in result.stderr
    single = run_cli(
        team, "judge", "o:1", "--as", "alice", "--answer", "DABC", "--verdict", "wrong-key"
    )
    assert "the verdict wrong-key needs the corrected key (--corrected)" in single.stderr


def test_the_export_says_the_command_that_loads_its_sheet(team: Database, tmp_path: Path) -> None:
    path = tmp_path / "alice.csv"
    written = run_cli(team, "export", "--format", "judging", "--as", "alice", "--out", str(path))
    url = team.engine.url.render_as_string(hide_password=True)
    assert written.output.endswith(
        "5 items without their key: fill answer blind (the next sheet shows the key); then: "
        f"vetbench --db {shlex.quote(url)} judge --from {shlex.quote(str(path))} --as alice\n"
    )
    piped = run_cli(team, "export", "--format", "judging", "--as", "alice", "--out", "-")
    assert piped.stderr.endswith(" judge --from FILE --as alice\n")


def test_same_rules_and_messages_as_a_single_judgment(team: Database, tmp_path: Path) -> None:
    single = run_cli(
        team, "judge", "o:1", "--as", "alice", "--answer", "DABC", "--verdict", "flawed"
    )
    assert single.exit_code == 1
    message = "the verdict flawed needs an edit of the text or a comment saying what is wrong"
    assert message in single.output
    batch = tmp_path / "one.jsonl"
    batch.write_text('{"item_id": "o:1", "answer": "DABC", "verdict": "flawed"}\n')
    result = run_cli(team, "judge", "--from", str(batch), "--as", "alice")
    assert result.exit_code == 1
    assert f"{batch}: line 1: comment: {message}" in result.stderr


def test_a_batch_with_bad_rows_names_every_problem_and_changes_nothing(
    team: Database, tmp_path: Path
) -> None:
    edit_item(team, "lena", "o:2", ItemEdit(note="clearer", prompt="Order these four events."))
    rows = sheet(team, "alice")
    by_id = {row["item_id"]: row for row in rows}
    by_id["o:1"].update(answer="DABC", verdict="keep")  # valid: stored only if all are
    by_id["o:2"].update(answer="DABC", verdict="keep", revision="1")  # revised since: now 2
    by_id["o:3"].update(answer="A,B", verdict="keep")  # not a whole order
    by_id["m:1"].update(answer="AB", verdict="sensitive", seconds="soon")  # no comment, bad seconds
    by_id["t:1"].update(answer="对", verdict="keep", annotator="bob")  # someone else's row
    extra = dict(by_id["o:1"])  # o:1 a second time
    unknown = {**by_id["o:1"], "item_id": "o:404"}
    filled = write_rows(tmp_path / "bad.csv", [*rows, extra, unknown])
    before_audit = audit_events(team)
    before_judgments = len(stored_judgments(team))
    result = run_cli(team, "judge", "--from", str(filled), "--as", "alice")
    assert result.exit_code == 1
    err = result.stderr
    assert f"error: {filled}: 6 of 7 rows refused; nothing was stored" in err
    for expected in (
        "line 3: revision: item o:2 is now at revision 2, not revision 1",
        "line 4: answer: blind answer 'A,B'",
        "line 5: comment: the verdict sensitive needs a comment",
        "line 5: seconds: must be a number, got 'soon'",
        "line 6: annotator: this row is bob's",
        "line 7: item_id: o:1 is judged on line 2 of this file already",
        "line 8: item_id: there is no item 'o:404'",
    ):
        assert f"{filled}: {expected}" in err, expected
    assert "line 2:" not in err
    assert len(stored_judgments(team)) == before_judgments
    assert audit_events(team) == before_audit  # the audit trail too
    assert item_status(team, "o:1") == "pending"


def test_every_problem_of_a_row_is_named_not_just_the_first(team: Database, tmp_path: Path) -> None:
    rows = sheet(team, "alice")
    by_id = {row["item_id"]: row for row in rows}
    by_id["o:1"].update(answer="DABC", verdict="keep")  # valid: stored only if all are
    by_id["o:2"].update(answer="DABZ", verdict="kepp")  # a bad answer and a bad verdict
    by_id["o:3"].update(answer="DABZ", verdict="ambiguous", corrected="ABCD", seconds="-2")
    by_id["m:1"].update(answer="", verdict="sensitive")  # no answer: the verdict still checked
    by_id["t:1"].update(answer="错", verdict="kepp", annotator="bob")
    again = {**by_id["o:1"], "answer": "ABCZ", "verdict": "duplicate", "duplicate_of": "o:1"}
    filled = write_rows(tmp_path / "many.csv", [*rows, again])
    before_audit = audit_events(team)
    before_judgments = len(stored_judgments(team))
    result = run_cli(team, "judge", "--from", str(filled), "--as", "alice")
    assert result.exit_code == 1
    problems = [line.strip() for line in result.stderr.splitlines()[1:]]
    named = [problem.removeprefix(f"{filled}: ") for problem in problems]
    assert named == [
        "line 3: verdict: 'kepp' is not a verdict; use one of keep, ambiguous, no-order, "
        "wrong-key, flawed, sensitive, duplicate",
        "line 3: answer: blind answer 'DABZ': 'Z' is not one of the events A, B, C, D",
        "line 4: seconds: seconds must be a non-negative number, got -2.0",
        "line 4: answer: blind answer 'DABZ': 'Z' is not one of the events A, B, C, D",
        "line 4: corrected: a corrected key goes with the verdict wrong-key only",
        "line 4: alt: the verdict ambiguous needs at least one valid order besides the key "
        "(the alt column)",
        "line 5: answer: is missing",
        "line 5: comment: the verdict sensitive needs a comment saying what is sensitive",
        "line 6: annotator: this row is bob's; a batch is stored in your own name (alice) "
        "only: bob loads it as themselves",
        "line 6: verdict: 'kepp' is not a verdict; use one of keep, ambiguous, no-order, "
        "wrong-key, flawed, sensitive, duplicate",
        "line 7: item_id: o:1 is judged on line 2 of this file already",
        "line 7: answer: blind answer 'ABCZ': 'Z' is not one of the events A, B, C, D",
        "line 7: duplicate_of: item o:1 cannot be a duplicate of itself",
    ]
    assert result.stderr.splitlines()[0] == (
        f"error: {filled}: 5 of 6 rows refused; nothing was stored"
    )
    assert len(stored_judgments(team)) == before_judgments
    assert audit_events(team) == before_audit
    assert item_status(team, "o:1") == "pending"
    # a single judgment is still refused with the first of them
    single = run_cli(
        team, "judge", "o:3", "--as", "alice", "--answer", "DABZ", "--verdict", "ambiguous",
        "--corrected", "ABCD", "--seconds", "-2",
    )  # fmt: skip
    assert single.exit_code == 1
    assert single.output == "error: not saved: seconds must be a non-negative number, got -2.0\n"
    # an item twice is refused at its second line, even when its first line is refused
    refused, twice = {**by_id["o:1"], "answer": "DABZ"}, by_id["o:1"]
    twice_file = write_rows(tmp_path / "twice.csv", [refused, twice])
    result = run_cli(team, "judge", "--from", str(twice_file), "--as", "alice")
    assert result.exit_code == 1
    assert "line 3: item_id: o:1 is judged on line 2 of this file already" in result.stderr


def judge_from_stdin(url: str, data: bytes, *args: str) -> subprocess.CompletedProcess[bytes]:
    """`vetbench judge --from -` in a real process, ``data`` on its standard input (a pipe)."""
    return run_process("--db", url, "judge", "--from", "-", *args, stdin=data, timeout=120)


def test_judge_from_reads_standard_input_by_its_content(team: Database) -> None:
    url = team.engine.url.render_as_string(hide_password=False)
    lines = [
        {"item_id": "o:1", "revision": 1, "answer": "D,A,B,C", "verdict": "keep"},
        {"item_id": "m:1", "revision": "1", "answer": "ABD", "verdict": "keep", "seconds": 4},
    ]
    jsonl = "".join(json.dumps(line) + "\n" for line in lines).encode()
    done = judge_from_stdin(url, jsonl, "--as", "alice", "--json")
    assert done.returncode == 0, done.stderr.decode()
    printed = json.loads(done.stdout)
    assert list(printed) == ["file", "stored", "blank", "judgments"]
    assert printed["file"] == "<stdin>" and printed["stored"] == 2
    assert [j["item_id"] for j in printed["judgments"]] == ["o:1", "m:1"]
    assert list(printed["judgments"][0]) == [
        "judgment_id",
        "item_id",
        "revision",
        "annotator",
        "verdict",
        "blind_answer",
        "matches_key",
        "item_status",
    ]  # fmt: skip: the keys of `judge --json`
    # The revision says which text was judged: a batch is made from text read earlier.
    unrevised = judge_from_stdin(url, b"item_id,answer,verdict\no:2,DABC,keep\n", "--as", "bob")
    assert unrevised.returncode == 1 and unrevised.stderr.decode().endswith(
        "<stdin>: line 2: revision: is missing (the revision of the text you judged)\n"
    )
    table = b"item_id,revision,answer,verdict\no:2,1,DABC,keep\n"
    done = judge_from_stdin(url, table, "--as", "bob")
    assert done.returncode == 0, done.stderr.decode()
    assert "saved 1 judgment by bob from <stdin>" in done.stdout.decode()


def test_a_batch_holds_judgments_only(team: Database, tmp_path: Path) -> None:
    decided = tmp_path / "decided.csv"
    decided.write_text("item_id,answer,verdict,status\no:1,DABC,keep,approved\n")
    result = run_cli(team, "judge", "--from", str(decided), "--as", "lena")
    assert result.exit_code == 1
    assert f"{decided}: line 1: column status: a batch holds judgments" in result.output
    typo = tmp_path / "typo.csv"
    typo.write_text("item_id,answer,verdcit\no:1,DABC,keep\n")
    result = run_cli(team, "judge", "--from", str(typo), "--as", "lena")
    assert result.exit_code == 1 and "unknown column verdcit" in result.output
    # European Excel saves CSV with semicolons: said as import says it, not as a column.
    semicolons = tmp_path / "semicolons.csv"
    semicolons.write_text("item_id;revision;answer;verdict\no:1;1;DABC;keep\n")
    result = run_cli(team, "judge", "--from", str(semicolons), "--as", "lena")
    assert result.exit_code == 1
    assert (
        f"{semicolons}: line 1: the columns are separated by semicolons; save the file as "
        "comma-separated CSV" in result.output
    )
    latin1 = tmp_path / "latin1.csv"  # a header saved in another encoding: said as such
    latin1.write_bytes(
        "item_id,answer,verdict,commentaire_été\no:1,DABC,keep,x\n".encode("latin-1")
    )
    result = run_cli(team, "judge", "--from", str(latin1), "--as", "lena")
    assert result.exit_code == 1
    assert f"{latin1}: line 1: the header is not UTF-8 text" in result.output
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text(
        '{"item_id": "o:1", "answer": "DABC", "verdict": "keep", "reason": "duplicate"}\n'
        "not json\n"
        "\n"
        '["o:2"]\n'
    )
    result = run_cli(team, "judge", "--from", str(mixed), "--as", "lena")
    assert result.exit_code == 1
    assert (
        f"{mixed}: line 1: reason: a batch holds judgments; decisions are a lead's" in result.stderr
    )
    assert f"{mixed}: line 2: is not JSON" in result.stderr
    assert f"{mixed}: line 4: must be a JSON object, got list" in result.stderr
    assert stored_judgments(team) and len(stored_judgments(team)) == 1  # bob's, from the fixture
    blank = tmp_path / "blank.csv"
    write_rows(blank, sheet(team, "alice"))
    result = run_cli(team, "judge", "--from", str(blank), "--as", "alice")
    assert result.exit_code == 1 and "no judgments: every one of its 5 rows" in result.output
    write_rows(blank, sheet(team, "alice")[:1])
    result = run_cli(team, "judge", "--from", str(blank), "--as", "alice")
    assert result.exit_code == 1 and "no judgments: its one row leaves answer" in result.output


def test_judge_from_and_a_single_judgment_do_not_mix(team: Database, tmp_path: Path) -> None:
    batch = tmp_path / "b.csv"
    batch.write_text("item_id,answer,verdict\no:1,DABC,keep\n")
    mixed = run_cli(team, "judge", "o:1", "--from", str(batch), "--verdict", "keep")
    assert mixed.exit_code == 1
    assert "--from reads every judgment from the file; ITEM_ID, --verdict do not apply" in (
        mixed.output
    )
    one = run_cli(team, "judge", "--from", str(batch), "--answer", "DABC")
    assert "the file; --answer does not apply" in one.output
    stray = run_cli(
        team, "judge", "o:1", "--answer", "DABC", "--verdict", "keep", "--format", "csv"
    )
    assert stray.exit_code == 1 and "--format is the format of a --from file" in stray.output
    neither = run_cli(team, "judge", "o:1", "--as", "alice")
    assert neither.exit_code == 2 and "give --answer (your blind answer, then the key" in (
        neither.output
    )
    no_id = run_cli(team, "judge", "--as", "alice")
    assert (
        no_id.exit_code == 2
        and "give ITEM_ID (with --answer, --verdict or both), or --from FILE" in (no_id.output)
    )


def test_export_judging_refuses_what_does_not_apply(team: Database) -> None:
    other = run_cli(team, "export", "--format", "jsonl", "--out", "-", "--as", "alice")
    assert other.exit_code == 1 and "--as applies to --format judging only" in other.output
    status = run_cli(team, "export", "--format", "judging", "--as", "alice", "--status", "all",
                     "--out", "-")  # fmt: skip
    assert status.exit_code == 1 and "--status and --release do not apply" in status.output
    only_mcq = sheet(team, "alice", "--kind", "multi")
    assert [row["item_id"] for row in only_mcq] == ["m:1"]


# --- PostgreSQL: real roles ---------------------------------------------------------------


def run_as(url: str, *args: str) -> Result:
    result = CliRunner().invoke(cli, ["--db", url, *args])
    assert "Traceback" not in result.output, result.output
    return result


@pytest.fixture
def roles_db() -> Iterator[tuple[str, RoleNames]]:
    yield from team_database("o:1", "o:2")


@pytest.mark.postgres
def test_an_annotators_batch_writes_only_their_own_judgments(
    roles_db: tuple[str, RoleNames], tmp_path: Path
) -> None:
    url, roles = roles_db
    alice, bob = roles.name("alice"), roles.name("bob")
    for person in (alice, bob):
        added = run_as(url, "users", "add", person, "--role", "annotator", "--no-password")
        assert added.exit_code == 0, added.output
    as_alice = roles.url_for(alice)
    exported = run_as(as_alice, "export", "--format", "judging", "--out", str(tmp_path / "s.csv"))
    assert exported.exit_code == 0, exported.output
    rows = list(csv.DictReader((tmp_path / "s.csv").open(encoding="utf-8")))
    assert {row["annotator"] for row in rows} == {alice}
    rows[0].update(answer="ABCD", verdict="keep")
    rows[1].update(answer="ABCD", verdict="keep", annotator=bob)  # bob's row in alice's file
    filled = write_rows(tmp_path / "filled.csv", rows)
    refused = run_as(as_alice, "judge", "--from", str(filled))
    assert refused.exit_code == 1 and f"annotator: this row is {bob}'s" in refused.stderr
    speaking_for = run_as(as_alice, "judge", "--from", str(filled), "--as", bob)
    assert speaking_for.exit_code == 1 and f"--as {bob} is refused" in speaking_for.output
    rows[1]["annotator"] = ""
    decided = write_rows(tmp_path / "decided.csv", [{**row, "status": "approved"} for row in rows])
    assert run_as(as_alice, "judge", "--from", str(decided)).exit_code == 1
    owner = open_database(url)
    try:
        assert stored_judgments(owner) == []
        with owner.session() as session:
            assert [e.action for e in read_audit(session, limit=None)].count("judge") == 0
    finally:
        owner.dispose()
    stored = run_as(as_alice, "judge", "--from", str(write_rows(tmp_path / "ok.csv", rows)))
    assert stored.exit_code == 0, stored.output
    owner = open_database(url)
    try:
        judged = stored_judgments(owner)
        assert len(judged) == 2
        with owner.session() as session:
            names = {e.actor for e in read_audit(session, limit=None) if e.action == "judge"}
        assert names == {alice}
        assert {item_status(owner, item) for item in ("o:1", "o:2")} <= {"in_review", "agreed"}
    finally:
        owner.dispose()
