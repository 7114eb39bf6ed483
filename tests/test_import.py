"""Importing files into a real database: validation rules, atomic failure, idempotent
re-import, revisions on change, ids, duplicates, the fixtures and the real CFLUE file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import FIXTURES, cflue_record, jsonl_record, run_cli, write_file
from sqlalchemy import MetaData, select, text, update
from sqlmodel import Session, col

from db.engine import Database, open_database
from db.errors import VetbenchError
from db.formats import UnknownFormat, get_format
from db.import_report import FileReport, ImportProgress
from db.importer import ImportOptionError, import_files, source_slug
from db.items import ItemSnapshot, add_revision, get_item, get_revisions, iter_items
from db.models import AuditEvent, Item
from db.people import ensure_person
from db.vocabulary import Role

HEADER = "Question,A,B,C,D,Answer,Explanation\n"


WORDS = [
    "bank",
    "supplier",
    "harvest",
    "tariff",
    "shipping",
    "factory",
    "wages",
    "bond",
    "merger",
    "plant",
    "rival",
    "retailer",
    "inventory",
    "demand",
    "price",
    "credit",
    "loan",
    "export",
    "import",
    "drought",
    "strike",
    "airline",
    "port",
    "fuel",
    "dividend",
    "audit",
    "rating",
    "brand",
    "startup",
    "platform",
    "subsidy",
    "quota",
    "currency",
    "rally",
    "slump",
    "order",
]


def sentence(seed: int, words: int = 10) -> str:
    """A made-up sentence; different seeds give texts far below any duplicate threshold."""
    import random

    rng = random.Random(seed)
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def ordering_row(question: str, key: str = "B, C, A, D", events: str | None = None) -> str:
    if events is None:
        seed = sum(map(ord, question)) * 31 + len(question)
        events = ",".join(sentence(seed + i, 5) for i in range(4))
    return f'"{question}",{events},"{key}",Because.\n'


def write_cflue(tmp_path: Path, records: list[Any], name: str = "exam.json") -> Path:
    return write_file(tmp_path, name, json.dumps(records, ensure_ascii=False))


def database_content(database: Database) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table, for before/after comparisons."""
    metadata = MetaData()
    metadata.reflect(database.engine)
    with database.engine.connect() as connection:
        return {
            name: sorted((tuple(row) for row in connection.execute(select(table))), key=repr)
            for name, table in metadata.tables.items()
        }


def item_at(session: Session, item_id: str) -> ItemSnapshot:
    found = get_item(session, item_id)
    assert found is not None, item_id
    return found


def only(report) -> FileReport:  # type: ignore[no-untyped-def]
    [file_report] = report.files
    return file_report


def distinct_questions(count: int) -> list[str]:
    return [f"{sentence(1000 + i)} Order the events." for i in range(count)]


def csv_file(tmp_path: Path, rows: list[str], name: str = "econ.csv") -> Path:
    return write_file(tmp_path, name, HEADER + "".join(rows))


# --- validation rules: each makes the whole file fail, naming file, place and field --------


@pytest.mark.parametrize(
    ("row", "field", "words"),
    [
        (ordering_row("Q?", key="D, A, C, A"), "Answer", "more than once"),
        (ordering_row("Q?", key="D, A, C"), "Answer", "missing B"),
        (ordering_row("Q?", key="D, A, C, E"), "Answer", "'E' is not one of the events"),
        (ordering_row("Q?", key=""), "Answer", "is missing"),
        (ordering_row(" "), "Question", "is empty"),
        (ordering_row("Q?", events="Hire,,Fund,Sell"), "column B", "is empty"),
    ],
)
def test_an_invalid_csv_record_rejects_the_file(
    database: Database, tmp_path: Path, row: str, field: str, words: str
) -> None:
    questions = distinct_questions(2)
    path = csv_file(tmp_path, [ordering_row(questions[0]), row, ordering_row(questions[1])])
    report = only(import_files(database, [path]))
    assert report.rejected and not report.stored and report.invalid == 1
    [problem] = report.problems
    assert problem.startswith(f"{path}: line 3: {field}: ")
    assert words in problem
    with database.session() as session:
        assert list(iter_items(session)) == []


@pytest.mark.parametrize(
    ("record", "field", "words"),
    [
        (cflue_record(task="多项选择题", answer="ABF"), "answer", "'F' is not one of the choices"),
        (cflue_record(answer="E"), "answer", "'E' is not one of the choices"),
        (cflue_record(answer="AC"), "answer", "exactly one letter"),
        (
            cflue_record(task="判断题", choices="{'A': '对', 'B': '错'}", answer="AB"),
            "answer",
            "exactly one letter",
        ),
        (
            cflue_record(
                task="判断题", choices="{'A': '对', 'B': '错', 'C': '不确定'}", answer="A"
            ),
            "choices",
            "exactly 2 choices",
        ),
        (cflue_record(choices="{'A': '只有一个'}"), "choices", "2 to 8 choices"),
        (
            cflue_record(choices="{'B': 'x', 'A': 'y'}", answer="A"),
            "choices",
            "labels must be A, B",
        ),
        (
            cflue_record(choices="{'1': 'x', '2': 'y'}", answer="1"),
            "choices",
            "labels must be A, B in order, got 1, 2",
        ),
        (cflue_record(question=""), "question", "is empty"),
        (cflue_record(answer=None), "answer", "is missing"),
        (cflue_record(choices="{'A': '', 'B': 'y'}"), "choices['A']", "is empty"),
    ],
)
def test_an_invalid_cflue_record_rejects_the_file(
    database: Database, tmp_path: Path, record: dict[str, Any], field: str, words: str
) -> None:
    path = write_cflue(tmp_path, [cflue_record(question="第一题"), record])
    report = only(import_files(database, [path]))
    assert report.rejected and report.invalid == 1
    assert any(
        p.startswith(f"{path}: record 2: {field}: ") and words in p for p in report.problems
    ), report.problems


def test_jsonl_problems_name_the_native_fields_and_the_revision(
    database: Database, tmp_path: Path
) -> None:
    hand_written = {"kind": "ordering", "prompt": " ", "choices": {"A": "x", "B": ""}, "key": "AB"}
    revised = {
        "id": "z:1",
        "kind": "single",
        "revisions": [
            {"number": 1, "prompt": "q", "choices": {"A": "x", "B": "y"}, "key": "A"},
            {"number": 2, "prompt": "q", "choices": {"A": "x", "B": "y"}, "key": "C"},
        ],
    }
    lines = "".join(json.dumps(record) + "\n" for record in (hand_written, revised))
    report = only(import_files(database, [write_file(tmp_path, "items.jsonl", lines)]))
    assert report.rejected
    problems = [p.split(": ", 1)[1] for p in report.problems]
    assert problems == [
        "line 1: prompt: is empty",
        "line 1: choices.B: is empty",
        "line 2: revisions[2].key: 'C': 'C' is not one of the choices AB",
    ]


def test_a_jsonl_record_says_every_problem_at_once(database: Database, tmp_path: Path) -> None:
    """A misspelt field, a bad status and a key that is no choice: all three at once, as
    `judge --from` lists a line's every problem (before, only the misspelt field, and the
    key only after it was fixed).  A record without a kind or its text says only that."""
    records = [
        jsonl_record(key="C", explanaton="because", status="weird", author=5),
        {"id": "z:1", "kind": "single", "revisions": [
            {"number": 1, "prompt": "q", "choices": {"A": "x", "B": "y"}, "key": "C", "autor": "x"},
        ]},
        jsonl_record(kind="essay", key="C"),
        jsonl_record(prompt=None, key="C", explanaton="b"),
    ]  # fmt: skip
    lines = "".join(json.dumps(record) + "\n" for record in records)
    report = only(import_files(database, [write_file(tmp_path, "items.jsonl", lines)]))
    assert report.rejected and report.tally.added == 0
    assert [p.split(": ", 1)[1] for p in report.problems] == [
        "line 1: explanaton: is not a field of vetbench JSONL; did you mean explanation?",
        "line 1: status: 'weird' is not one of pending, in_review, conflict, agreed, approved, "
        "rejected",
        "line 1: author: must be text, got int",
        "line 1: key: 'C': 'C' is not one of the choices AB",
        "line 2: revisions[1].autor: is not a field of vetbench JSONL; did you mean author?",
        "line 2: revisions[1].key: 'C': 'C' is not one of the choices AB",
        "line 3: kind: 'essay' is not one of ordering, single, multi, truefalse",
        "line 4: explanaton: is not a field of vetbench JSONL; did you mean explanation?",
        "line 4: prompt: is missing",
    ]


def test_choice_labels_that_are_not_letters_are_named_whatever_the_key_says(
    database: Database, tmp_path: Path
) -> None:
    lines = "".join(
        json.dumps(
            {"kind": "single", "prompt": f"Q{key}", "choices": {"1": "x", "2": "y"}, "key": key}
        )
        + "\n"
        for key in ("1", "A")
    )
    path = write_file(tmp_path, "c3.jsonl", lines)
    result = run_cli(database, "import", str(path))
    assert result.exit_code == 1
    for line in (1, 2):
        assert f"{path}: line {line}: choices: labels must be A, B in order, got 1, 2" in (
            result.stderr
        )
    assert "'1'" not in result.stderr  # the key is not what is wrong


def test_bytes_that_are_not_utf8_reject_the_file_naming_line_and_field(
    database: Database, tmp_path: Path
) -> None:
    good = (HEADER + ordering_row("Fine question")).encode()
    bad = ordering_row("Caf\xe9 prices").encode("latin-1")
    path = write_file(tmp_path, "latin1.csv", good + bad)
    report = only(import_files(database, [path]))
    assert report.rejected
    assert report.problems == [f"{path}: line 3: Question: is not valid UTF-8 text"]
    assert any("not UTF-8 (first on line 3)" in note for note in report.notes)


def test_every_problem_is_collected_and_shown_up_to_a_cap(
    database: Database, tmp_path: Path
) -> None:
    rows = [ordering_row(q, key="A, A, B, C") for q in distinct_questions(60)]
    report = only(import_files(database, [csv_file(tmp_path, rows)]))
    assert report.invalid == 60 and len(report.problems) == 60
    shown = report.problem_lines(limit=50)
    assert len(shown) == 51 and shown[-1].startswith("... and 10 more problems")
    assert "line 61" in report.problems[-1]


@pytest.mark.parametrize(
    ("name", "content", "words"),
    [
        ("empty.csv", "", "the file is empty"),
        ("header.csv", HEADER, "no records"),
        ("quote.csv", HEADER + ordering_row("Fine") + '"open,a,b\n', "line 3: malformed CSV"),
        ("broken.json", '[{"task": "判断题",\n  "question": ', "line 2: malformed JSON"),
        ("none.json", "[]", "no records"),
        ("blank.jsonl", "\n\n", "empty"),
    ],
)
def test_unreadable_files_are_reported_not_raised(
    database: Database, tmp_path: Path, name: str, content: str, words: str
) -> None:
    path = write_file(tmp_path, name, content)
    report = only(import_files(database, [path]))
    assert report.error is not None and words in report.error and str(path) in report.error
    assert not report.stored


# --- atomicity ------------------------------------------------------------------------------


def test_a_failed_import_leaves_every_table_exactly_as_it_was(
    database: Database, tmp_path: Path
) -> None:
    questions = distinct_questions(6)
    first = csv_file(tmp_path, [ordering_row(q) for q in questions[:3]], name="first.csv")
    assert only(import_files(database, [first])).tally.added == 3
    before = database_content(database)
    # Record 2 changes an existing item and record 4 is new, but record 3 is invalid.
    second = csv_file(
        tmp_path,
        [
            ordering_row(questions[0]),
            ordering_row(questions[1] + " Changed."),
            ordering_row(questions[2], key="A, B"),
            ordering_row(questions[3]),
        ],
        name="first.csv",
    )
    report = only(import_files(database, [second]))
    assert report.rejected
    assert database_content(database) == before


def test_an_import_gathers_the_planners_statistics_and_a_failed_one_leaves_none(
    tmp_path: Path,
) -> None:
    """Without statistics SQLite walked every open item by its status to find one whose key
    the person had seen (db.planner_statistics): an import gathers them with its rows."""
    database = open_database(tmp_path / "statistics.db")

    def item_statistics() -> dict[str, str]:
        with database.session() as session:
            if session.scalar(text("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_stat1'")):
                rows = session.execute(
                    text("SELECT idx, stat FROM sqlite_stat1 WHERE tbl = 'item'")
                )
                return {str(index): str(stat) for index, stat in rows}
        return {}

    questions = distinct_questions(4)
    rows = [ordering_row(questions[0]), ordering_row(questions[1], key="A, B")]
    assert only(import_files(database, [csv_file(tmp_path, rows, name="bad.csv")])).rejected
    assert item_statistics() == {}
    good = csv_file(tmp_path, [ordering_row(q) for q in questions], name="good.csv")
    assert only(import_files(database, [good])).tally.added == 4
    assert item_statistics()["ix_item_status"].split()[0] == "4"  # rows, then rows a status
    database.dispose()


def test_a_kind_change_found_inside_the_transaction_also_rolls_back(
    database: Database, tmp_path: Path
) -> None:
    path = write_cflue(tmp_path, [cflue_record(question="一"), cflue_record(question="二")])
    import_files(database, [path])
    before = database_content(database)
    changed = write_cflue(
        tmp_path, [cflue_record(question="一 (改)"), cflue_record(question="二", task="多项选择题")]
    )
    report = only(import_files(database, [changed]))
    assert report.rejected
    assert any("exists as a single item" in p for p in report.problems)
    assert not any("(from" in p for p in report.problems)  # the same file: no other file named
    assert database_content(database) == before


def test_a_kind_clash_with_another_files_items_names_that_file_and_source(
    database: Database, tmp_path: Path
) -> None:
    """items.csv, then items.json: the same stem gives the same ids, and the refusal said
    only "exists as a ordering item; an import cannot make it single"."""
    import_files(database, [write_file(tmp_path, "items.csv", HEADER + ordering_row("An order"))])
    before = database_content(database)
    other = write_file(tmp_path, "items.json", json.dumps([cflue_record()], ensure_ascii=False))
    report = only(import_files(database, [other]))
    assert report.rejected and report.problems == [
        f"{other}: record 1: kind: item items:1 exists as an ordering item; an import cannot "
        "make it single (from items.csv: if this file's records are other items, import it "
        "with its own --source)"
    ]
    assert database_content(database) == before
    assert only(import_files(database, [other], source="items_mcq")).tally.added == 1


# --- skip-invalid -------------------------------------------------------------------------


def test_skip_invalid_stores_the_good_records_and_lists_the_bad(
    database: Database, tmp_path: Path
) -> None:
    questions = distinct_questions(3)
    path = csv_file(
        tmp_path,
        [
            ordering_row(questions[0]),
            ordering_row(questions[1], key="A"),
            ordering_row(questions[2]),
        ],
    )
    report = only(import_files(database, [path], skip_invalid=True))
    assert report.stored and report.invalid == 1 and report.tally.added == 2
    assert report.problems[0].startswith(f"{path}: line 3: Answer:")
    with database.session() as session:
        assert [item.id for item in iter_items(session)] == ["econ:1", "econ:3"]


# --- ids, idempotence, revisions ------------------------------------------------------------


def test_ids_are_source_and_row_and_source_can_be_named(database: Database, tmp_path: Path) -> None:
    questions = distinct_questions(3)
    path = csv_file(tmp_path, [ordering_row(q) for q in questions], name="Econ Test 2024.csv")
    assert source_slug(path) == "econ-test-2024"
    import_files(database, [path])
    import_files(database, [path], source="econ-test")
    with database.session() as session:
        ids = [item.id for item in iter_items(session)]
        assert ids[:3] == ["econ-test-2024:1", "econ-test-2024:2", "econ-test-2024:3"]
        assert ids[3:] == ["econ-test:1", "econ-test:2", "econ-test:3"]
        item = item_at(session, "econ-test:2")
        assert (item.source, item.source_ref) == ("econ-test", "line 3")
        assert get_revisions(session, "econ-test:2")[0].provenance == {
            "file": "Econ Test 2024.csv",
            "line": 3,
            "format": "econlogicqa",
        }


def test_two_files_with_one_source_in_one_run_are_refused(
    database: Database, tmp_path: Path
) -> None:
    questions = distinct_questions(2)
    (tmp_path / "a").mkdir()
    first = csv_file(tmp_path, [ordering_row(questions[0])], name="a/econ.csv")
    second = csv_file(tmp_path, [ordering_row(questions[1])], name="econ.csv")
    report = import_files(database, [first, second])
    assert report.files[0].stored and not report.files[1].stored
    assert "import the files one at a time" in str(report.files[1].error)


def test_reimporting_the_same_file_adds_nothing(database: Database, tmp_path: Path) -> None:
    path = csv_file(tmp_path, [ordering_row(q) for q in distinct_questions(5)])
    assert only(import_files(database, [path])).tally.added == 5
    before = database_content(database)
    again = only(import_files(database, [path]))
    assert (again.tally.added, again.tally.updated, again.tally.unchanged) == (0, 0, 5)
    assert database_content(database) == before


def test_a_changed_record_becomes_a_new_revision(database: Database, tmp_path: Path) -> None:
    questions = distinct_questions(3)
    path = csv_file(tmp_path, [ordering_row(q) for q in questions])
    import_files(database, [path])
    with database.transaction() as session:
        session.execute(update(Item).where(col(Item.id) == "econ:2").values(status="conflict"))
    path = csv_file(
        tmp_path,
        [ordering_row(questions[0]), ordering_row(questions[1], key="C, B, A, D"),
         ordering_row(questions[2])],
    )  # fmt: skip
    report = only(import_files(database, [path], actor="carol"))
    assert (report.tally.added, report.tally.updated, report.tally.unchanged) == (0, 1, 2)
    with database.session() as session:
        item = item_at(session, "econ:2")
        assert (item.revision, item.key, item.status) == (2, "CBAD", "pending")
        revisions = get_revisions(session, "econ:2")
        assert [r.key for r in revisions] == ["BCAD", "CBAD"]
        assert (revisions[1].author, revisions[1].change_note) == ("carol", "re-import: econ.csv")
        actions = session.execute(select(col(AuditEvent.action), col(AuditEvent.target))).all()
        assert ("revise", "econ:2") in actions


def test_a_reimport_numbers_its_revision_after_the_newest_not_the_current(
    database: Database, tmp_path: Path
) -> None:
    questions = distinct_questions(2)
    import_files(database, [csv_file(tmp_path, [ordering_row(q) for q in questions])])
    with database.transaction() as session:
        add_revision(session, "econ:1", author="dora", change_note="edit", key="CBAD")
        # Revision 1 current again: the newest revision (2) is not the current one.
        session.execute(update(Item).where(col(Item.id) == "econ:1").values(current_revision=1))
    changed = [ordering_row(questions[0], key="D, C, B, A"), ordering_row(questions[1])]
    report = only(import_files(database, [csv_file(tmp_path, changed)]))
    assert report.revised == ["econ:1"]
    with database.session() as session:
        assert [r.number for r in get_revisions(session, "econ:1")] == [1, 2, 3]
        assert (item_at(session, "econ:1").revision, item_at(session, "econ:1").key) == (3, "DCBA")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"format": "xml"}, "unknown format 'xml' (known: auto, econlogicqa, cflue, jsonl)"),
        ({"source": "  "}, "--source must not be empty"),
        ({"source": "s" * 300}, "--source: is 300 characters long (limit 255)"),
        ({"source": "a\nb"}, "--source: must be printable text on one line; it holds U+000A"),
    ],
)
def test_impossible_options_are_expected_errors_that_read_nothing(
    database: Database, tmp_path: Path, options: dict[str, Any], message: str
) -> None:
    path = csv_file(tmp_path, [ordering_row(q) for q in distinct_questions(2)])
    before = database_content(database)
    with pytest.raises(ImportOptionError) as raised:
        import_files(database, [path], **options)
    assert isinstance(raised.value, VetbenchError) and str(raised.value).startswith(message)
    assert database_content(database) == before
    with pytest.raises(UnknownFormat, match="unknown format 'xml'"):
        get_format("xml")


def test_a_file_named_twice_is_refused_before_anything_is_read(
    database: Database, tmp_path: Path
) -> None:
    path = csv_file(tmp_path, [ordering_row(q) for q in distinct_questions(2)])
    before = database_content(database)
    with pytest.raises(
        ImportOptionError, match=f"^{path} is named twice: each file is imported once$"
    ):
        import_files(database, [path, tmp_path / "." / path.name])
    assert database_content(database) == before


def test_text_is_stored_exactly_as_given(database: Database, tmp_path: Path) -> None:
    question = "  Leading spaces,\r\nCRLF, [bold]markup[/bold] and \x1b[31mescapes\x1b[0m  "
    content = HEADER + '"' + question + '", a ,b,c,d ,"D,A,C,B",\n'
    import_files(database, [write_file(tmp_path, "exact.csv", content)])
    with database.session() as session:
        item = item_at(session, "exact:1")
    assert item.prompt == question
    assert item.choices == {"A": " a ", "B": "b", "C": "c", "D": "d "}
    assert (item.key, item.explanation) == ("DACB", None)


def test_an_audit_event_records_each_import_that_changed_something(
    database: Database, tmp_path: Path
) -> None:
    path = csv_file(tmp_path, [ordering_row(q) for q in distinct_questions(2)])
    import_files(database, [path], actor="dora")
    import_files(database, [path], actor="dora")
    with database.session() as session:
        events = session.execute(select(AuditEvent).where(col(AuditEvent.action) == "import")).all()
    [(event,)] = events
    assert (event.actor, event.target) == ("dora", "econ.csv")
    assert event.payload["added"] == 2 and event.payload["format"] == "econlogicqa"


def test_progress_reports_count_up_to_the_total(database: Database, tmp_path: Path) -> None:
    events: list[ImportProgress] = []
    path = csv_file(tmp_path, [ordering_row(q) for q in distinct_questions(40)])
    import_files(database, [path], progress=events.append)
    reading = [e for e in events if e.phase == "reading"]
    checking = [e for e in events if e.phase == "checking duplicates"]
    assert reading and all(e.total == path.stat().st_size for e in reading)
    assert [e.done for e in reading] == sorted(e.done for e in reading)
    assert reading[-1].done == path.stat().st_size
    assert checking[-1].done == checking[-1].total == 40
    assert events == reading + checking


# --- duplicates -------------------------------------------------------------------------------


def test_near_duplicates_are_marked_not_dropped(database: Database, tmp_path: Path) -> None:
    questions = distinct_questions(4)
    first = csv_file(tmp_path, [ordering_row(q) for q in questions[:3]], name="first.csv")
    import_files(database, [first])

    def events_of(question: str) -> str:
        return ordering_row(question).split('"')[2].strip(",")

    near_existing = questions[1].replace("e", "a", 1)
    second = csv_file(
        tmp_path,
        [ordering_row(questions[3]),
         ordering_row(near_existing, events=events_of(questions[1])),
         ordering_row(questions[3] + "  ", events=events_of(questions[3]))],
        name="second.csv",
    )  # fmt: skip
    report = only(import_files(database, [second]))
    assert report.tally.added == 3 and report.tally.duplicates == 2
    assert report.by_kind["ordering"].duplicates == 2
    with database.session() as session:
        assert item_at(session, "second:1").suspected_duplicate_of is None
        marked = item_at(session, "second:2")
        assert marked.suspected_duplicate_of == "first:2"
        assert marked.duplicate_similarity is not None
        assert 90 <= marked.duplicate_similarity < 100
        copy = item_at(session, "second:3")
        assert copy.suspected_duplicate_of == "second:1"
        assert item_at(session, "first:2").suspected_duplicate_of is None


def test_a_revised_text_is_checked_for_duplicates_again(database: Database, tmp_path: Path) -> None:
    """Re-importing with new text re-checks that text: flagged when it now copies another
    item, cleared when it no longer does."""
    questions = distinct_questions(3)
    rows = [ordering_row(q) for q in questions]
    import_files(database, [csv_file(tmp_path, rows)])

    # econ:3 now says exactly what econ:1 says: another question, so replace_unrelated
    rows[2] = rows[0]
    report = only(import_files(database, [csv_file(tmp_path, rows)], replace_unrelated=True))
    assert (report.tally.updated, report.tally.duplicates) == (1, 1)
    with database.session() as session:
        assert item_at(session, "econ:3").suspected_duplicate_of == "econ:1"
        assert item_at(session, "econ:3").revision == 2
        assert item_at(session, "econ:1").suspected_duplicate_of is None

    rows[2] = ordering_row(questions[2] + " Revised again.")  # its own question again
    report = only(import_files(database, [csv_file(tmp_path, rows)], replace_unrelated=True))
    assert (report.tally.updated, report.tally.duplicates) == (1, 0)
    with database.session() as session:
        item = item_at(session, "econ:3")
        assert (item.suspected_duplicate_of, item.duplicate_similarity) == (None, None)


def test_another_question_under_a_stored_id_is_refused_not_made_a_revision(
    database: Database, tmp_path: Path
) -> None:
    """Two batches in files of the same name give their records the same ids: the second
    would silently replace the first's questions.  A record that shares little with its
    stored item is refused (the file imports nothing), a corrected one is a revision, and
    --replace-unrelated lets the replacement through when it is meant."""
    first, second = distinct_questions(2), [f"{sentence(2000 + i)} Rank them." for i in range(2)]
    import_files(database, [csv_file(tmp_path, [ordering_row(q) for q in first])])
    before = database_content(database)
    batch = tmp_path / "batch2"
    batch.mkdir()
    other = csv_file(batch, [ordering_row(q) for q in second])
    result = run_cli(database, "import", str(other))
    assert result.exit_code == 1
    assert f"{other}: line 2: Question: item econ:1 holds another question (" in result.output
    assert "import another batch with its own --source, or pass --replace-unrelated" in (
        result.output
    )
    assert database_content(database) == before

    # A corrected record (a word changed, the events kept) is still a revision.
    events = ",".join(sentence(3000 + i, 5) for i in range(4))
    rows = [ordering_row(first[0], events=events), ordering_row(first[1])]
    import_files(database, [csv_file(tmp_path, rows)], replace_unrelated=True)
    rows[0] = ordering_row(first[0].replace("Order", "Arrange"), events=events)
    corrected = only(import_files(database, [csv_file(tmp_path, rows)]))
    assert (corrected.rejected, corrected.revised, corrected.metadata_updated) == (
        False,
        ["econ:1"],
        [],
    )

    replaced = run_cli(database, "import", "--replace-unrelated", "--json", str(other))
    assert replaced.exit_code == 0, replaced.output
    [summary] = json.loads(replaced.output)
    assert summary["revised"] == ["econ:1", "econ:2"] and summary["metadata_updated"] == []
    with database.session() as session:
        assert item_at(session, "econ:2").prompt == second[1]


def test_the_duplicate_threshold_comes_from_the_argument_or_the_setting(
    database: Database, tmp_path: Path
) -> None:
    from db.settings import set_setting

    def near_pair(seed: int) -> list[str]:
        base = f"{sentence(seed, 14)} Order the events."
        near = base[:-2] + "z."  # one letter (punctuation alone would not count): ratio ~99
        events = ",".join(sentence(seed * 10 + i, 6) for i in range(4))
        return [ordering_row(base, events=events), ordering_row(near, events=events)]

    def duplicates(name: str, seed: int, threshold: float | None = None) -> int:
        path = csv_file(tmp_path, near_pair(seed), name)
        return only(import_files(database, [path], duplicate_threshold=threshold)).tally.duplicates

    assert duplicates("a.csv", 1) == 1  # the default setting, 90
    assert duplicates("b.csv", 2, threshold=99.9) == 0
    with database.transaction() as session:
        set_setting(session, "duplicate_threshold", "100")
    assert duplicates("c.csv", 3) == 0
    assert duplicates("d.csv", 4, threshold=95) == 1


# --- JSONL: its own ids and every field ----------------------------------------------------------


def test_jsonl_items_keep_their_ids_status_history_and_duplicate_links(
    database: Database, tmp_path: Path
) -> None:
    lines = [
        {
            "id": "gen:7", "kind": "multi", "source": "generated", "source_ref": "article a01",
            "language": "en", "status": "approved", "meta": {"model": "m"}, "current_revision": 2,
            "suspected_duplicate_of": "gen:8", "duplicate_similarity": 91.0,
            "created_at": "2026-01-02T03:04:05+00:00",
            "revisions": [
                {"number": 1, "prompt": "Which?", "choices": {"A": "x", "B": "y", "C": "z"},
                 "key": "AB", "explanation": None, "author": "gpt", "change_note": "generated",
                 "provenance": {"model": "m"}, "created_at": "2026-01-02T03:04:05+00:00"},
                {"number": 2, "prompt": "Which two?", "choices": {"A": "x", "B": "y", "C": "z"},
                 "key": "B, A", "explanation": "Both.", "author": "ann", "change_note": "edit",
                 "provenance": {}, "created_at": "2026-01-03T00:00:00+00:00"},
            ],
        },
        {"id": "gen:8", "kind": "single", "prompt": "Where does the bank book the loan?",
         "key": "C", "choices": {"A": "asset", "B": "liability", "C": "equity"}},
    ]  # fmt: skip
    path = write_file(tmp_path, "items.jsonl", "\n".join(json.dumps(x) for x in lines) + "\n")
    report = only(import_files(database, [path], source="fallback"))
    assert report.tally.added == 2 and report.tally.duplicates == 1
    # Only a lead's decision approves: imported by someone else, the item waits for one.
    assert any("1 record states a decision its item lacks (approved 1; first: items.jsonl: "
               "line 1)" in note for note in report.notes)  # fmt: skip
    with database.session() as session:
        assert item_at(session, "gen:7").status == "pending"
        ensure_person(session, "lena", Role.LEAD)
        session.commit()
    again = only(import_files(database, [path], source="fallback", actor="lena"))
    assert again.tally.unchanged == 2 and again.notes == [
        "items.jsonl: decided 1 item as the file states (approved 1), in lena's name; each "
        "decision's comment names its line"
    ]
    with database.session() as session:
        item = item_at(session, "gen:7")
        assert (item.status, item.revision, item.key, item.source) == (
            "approved",
            2,
            "AB",
            "generated",
        )
        assert (item.suspected_duplicate_of, item.duplicate_similarity) == ("gen:8", 91.0)
        assert item.meta == {"model": "m"} and item.source_ref == "article a01"
        revisions = get_revisions(session, "gen:7")
        assert [(r.author, r.change_note) for r in revisions] == [
            ("gpt", "generated"),
            ("ann", "edit"),
        ]
        other = item_at(session, "gen:8")
        assert (other.source, other.status, other.source_ref) == ("fallback", "pending", "line 2")


def test_a_revised_jsonl_record_keeps_the_duplicate_link_it_states(
    database: Database, tmp_path: Path
) -> None:
    def line(item_id: str, prompt: str, **fields: object) -> str:
        choices = {"A": "asset", "B": "liability"}
        return json.dumps({"id": item_id, "kind": "single", "prompt": prompt,
                           "choices": choices, "key": "A", **fields})  # fmt: skip

    same = "Where does the bank book a loan it made?"
    first = [line("x:1", same), line("x:2", "Something else entirely, about deposits.")]
    import_files(database, [write_file(tmp_path, "x.jsonl", "\n".join(first))])

    # x:2 is revised into a copy of x:1 but states that it has no duplicate: kept so.
    stated_none = [first[0], line("x:2", same, suspected_duplicate_of=None)]
    report = only(import_files(database, [write_file(tmp_path, "x.jsonl", "\n".join(stated_none))]))
    assert (report.tally.updated, report.tally.duplicates) == (1, 0)
    with database.session() as session:
        assert item_at(session, "x:2").suspected_duplicate_of is None

    # Revised again, stating a link: the stated link is stored.
    stated = [
        first[0],
        line("x:2", same + " (v3)", suspected_duplicate_of="x:1", duplicate_similarity=97.5),
    ]
    report = only(import_files(database, [write_file(tmp_path, "x.jsonl", "\n".join(stated))]))
    assert (report.tally.updated, report.tally.duplicates) == (1, 1)
    with database.session() as session:
        item = item_at(session, "x:2")
        assert (item.suspected_duplicate_of, item.duplicate_similarity) == ("x:1", 97.5)


def test_jsonl_duplicate_links_to_unknown_items_are_left_out_with_a_note(
    database: Database, tmp_path: Path
) -> None:
    line = jsonl_record(id="x:1", suspected_duplicate_of="elsewhere:9", duplicate_similarity=95)
    report = only(import_files(database, [write_file(tmp_path, "x.jsonl", json.dumps(line))]))
    assert report.stored and report.tally.duplicates == 0
    assert any("elsewhere:9" in note for note in report.notes)


def test_ids_repeated_within_a_file_are_invalid(database: Database, tmp_path: Path) -> None:
    line = jsonl_record(id="x:1")
    content = json.dumps(line) + "\n" + json.dumps({**line, "prompt": "Other"}) + "\n"
    report = only(import_files(database, [write_file(tmp_path, "x.jsonl", content)]))
    assert report.rejected
    assert report.problems == [f"{tmp_path / 'x.jsonl'}: line 2: id: 'x:1' already used at line 1"]


# --- the team's fixtures and the real CFLUE file ------------------------------------------------


FIXTURE_COUNTS = {
    "econ_ordering.csv": {"ordering": 36},
    "econ_ordering_5events.csv": {"ordering": 3},
    "cflue_mcq.json": {"single": 20, "multi": 10, "truefalse": 8},
    "shots_ordering.jsonl": {"ordering": 5},
}


@pytest.mark.parametrize("name", sorted(FIXTURE_COUNTS))
def test_fixture_files_import_cleanly(database: Database, name: str) -> None:
    path = FIXTURES / name
    if not path.exists():
        pytest.skip(f"{path} not written yet")
    report = only(import_files(database, [path]))
    assert report.stored and report.invalid == 0, report.problems
    assert {kind: t.added for kind, t in report.by_kind.items()} == FIXTURE_COUNTS[name]
    assert only(import_files(database, [path])).tally.added == 0


def test_fixture_near_duplicates_are_flagged(database: Database) -> None:
    if not (FIXTURES / "econ_ordering.csv").exists():
        pytest.skip("fixtures not written yet")
    import_files(database, [FIXTURES / "econ_ordering.csv", FIXTURES / "cflue_mcq.json"])
    with database.session() as session:
        flagged = {
            item.id: item.suspected_duplicate_of
            for item in iter_items(session)
            if item.suspected_duplicate_of
        }
    assert flagged == {"econ_ordering:34": "econ_ordering:1", "cflue_mcq:37": "cflue_mcq:2"}


def test_the_real_cflue_file_imports_once(database: Database, cflue_knowledge: Path) -> None:
    report = only(import_files(database, [cflue_knowledge]))
    assert report.stored and report.invalid == 0
    assert report.tally.added == 3864
    assert {kind: t.added for kind, t in report.by_kind.items()} == {
        "single": 2345,
        "multi": 1171,
        "truefalse": 348,
    }
    again = only(import_files(database, [cflue_knowledge]))
    assert (again.tally.added, again.tally.updated, again.tally.unchanged) == (0, 0, 3864)
    with database.engine.connect() as connection:
        assert connection.execute(text("SELECT count(*) FROM item")).scalar() == 3864
        assert connection.execute(text("SELECT count(*) FROM item_revision")).scalar() == 3864
    with database.session() as session:
        first = item_at(session, "knowledge:1")
    assert first.meta == {"名称": "注册会计师"} and first.language == "zh"
    assert first.key == "D" and first.explanation is None


def test_the_report_json_is_what_import_json_prints(database: Database, tmp_path: Path) -> None:
    questions = distinct_questions(3)
    rows = [ordering_row(q) for q in questions]
    changed = [ordering_row(questions[0], key="D, C, B, A"), rows[1], "x\n"]
    twin = open_database(tmp_path / "twin.db")  # the same imports, made through the API
    try:
        for db in (database, twin):
            import_files(db, [csv_file(tmp_path, rows)])
        path = csv_file(tmp_path, changed)
        printed = json.loads(
            run_cli(database, "import", str(path), "--skip-invalid", "--json").stdout
        )
        assert printed == import_files(twin, [path], skip_invalid=True).to_json()
        assert (printed[0]["revised"], printed[0]["invalid"]) == (["econ:1"], 1)
    finally:
        twin.dispose()


@pytest.mark.parametrize("name", ["articles.csv", "articles.jsonl"])
def test_articles_given_to_import_are_named_and_change_nothing(
    database: Database, name: str
) -> None:
    """The fixtures' articles sit beside their items: import says what they are and what
    reads them, instead of listing every item field each article lacks."""
    refused = run_cli(database, "import", str(FIXTURES / name))
    assert refused.exit_code == 1
    assert f"{name}: line 1: these are articles (title, text), not items: " in refused.output
    assert "`vetbench generate --kind ordering --articles FILE`" in refused.output
    assert "is missing" not in refused.output
    with database.session() as session:
        assert list(iter_items(session)) == []
    assert run_cli(database, "audit", "--json").output.strip() == "[]"


def test_an_item_with_a_title_and_a_text_is_still_an_item(
    database: Database, tmp_path: Path
) -> None:
    """Read as an item, not refused as articles: its problems are the two fields vetbench
    JSONL lacks (whose text would be lost), and in meta they are kept."""
    record = {"kind": "single", "prompt": "Which?", "choices": {"A": "x", "B": "y"}, "key": "A"}
    path = write_file(tmp_path, "titled.jsonl", json.dumps({**record, "title": "t", "text": "u"}))
    assert [p.split(": ", 2)[2] for p in only(import_files(database, [path])).problems] == [
        "title: is not a field of vetbench JSONL",
        "text: is not a field of vetbench JSONL",
    ]
    path.write_text(json.dumps({**record, "meta": {"title": "t", "text": "u"}}), encoding="utf-8")
    assert only(import_files(database, [path])).tally.added == 1


def test_a_file_read_against_its_name_says_how_it_was_read(
    database: Database, tmp_path: Path
) -> None:
    """A CFLUE record without its array, in ``.json``, is read as JSONL (content wins): the
    refusal says so and what CFLUE JSON needs, instead of leaving "kind: is missing" unexplained."""
    bare = write_file(tmp_path, "one.json", json.dumps(cflue_record(), ensure_ascii=False))
    refused = run_cli(database, "import", str(bare))
    assert refused.exit_code == 1
    assert "one.json: line 1: kind: is missing" in refused.output
    assert (
        "note: " + str(bare) + ": read as vetbench JSONL, as its content says; as CFLUE "
        "knowledge JSON, as its name says, it would be one JSON array of objects"
    ) in refused.output
    assert "--format cflue" in refused.output
    with database.session() as session:
        assert list(iter_items(session)) == []
    # The same record in its array imports, and a file read as its name says gets no note.
    good = write_file(tmp_path, "two.json", json.dumps([cflue_record()], ensure_ascii=False))
    stored = run_cli(database, "import", str(good))
    assert stored.exit_code == 0 and "note:" not in stored.output
    # Nor does a file whose name names no format, nor one read with --format.
    named = write_file(tmp_path, "three.txt", json.dumps(cflue_record(), ensure_ascii=False))
    assert "read as" not in run_cli(database, "import", str(named)).output
    forced = run_cli(database, "import", str(bare), "--format", "jsonl")
    assert forced.exit_code == 1 and "read as" not in forced.output
