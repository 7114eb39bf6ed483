"""`vetbench judge`, `undo` and `config`: the same rules as the app, clear refusals, exit 1;
`vetbench review` starts only in a terminal."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import run_in_terminal, store_item, stored_judgments
from sqlmodel import select

from db.audit import read_audit
from db.engine import Database, open_database
from db.models import Person
from db.people import add_person
from db.vocabulary import Role
from reviewer.cli import cli


def run(db_path: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["--db", str(db_path), *args])
    return result.exit_code, result.output


@pytest.fixture
def items(db_path: Path) -> Path:
    db = open_database(db_path)
    store_item(db, "econ:1", key="DABC")
    store_item(db, "econ:2", key="ABCD")
    store_item(db, "mcq:1", kind="multi", key="ABD", choices={k: k * 3 for k in "ABCD"})
    for name in ("alice", "bob"):  # registering is explicit (users add)
        add_person(db, name, Role.ANNOTATOR, actor="test")
    db.dispose()
    return db_path


def judgments(db_path: Path) -> list:  # type: ignore[type-arg]
    db: Database = open_database(db_path)
    try:
        return stored_judgments(db)
    finally:
        db.dispose()


def test_judge_stores_and_reports(items: Path) -> None:
    code, output = run(
        items,
        "judge",
        "econ:1",
        "--as",
        "alice",
        "--answer",
        "D,A,C,B",
        "--verdict",
        "keep",
        "--seconds",
        "9",
    )
    assert code == 0, output
    assert "saved judgment 1: alice on econ:1 revision 1, verdict keep" in output
    assert "differs from the key" in output
    code, output = run(
        items,
        "judge",
        "econ:2",
        "--as",
        "alice",
        "--answer",
        "ABCD",
        "--verdict",
        "ambiguous",
        "--alt",
        "B,A,C,D",
        "--alt",
        "A B D C",
        "--comment",
        "two orders fit",
        "--json",
    )
    assert code == 0, output
    assert json.loads(output)["verdict"] == "ambiguous"
    code, output = run(
        items,
        "judge",
        "mcq:1",
        "--as",
        "bob",
        "--answer",
        "DBA",
        "--verdict",
        "wrong-key",
        "--corrected",
        "AB",
    )
    assert code == 0, output
    stored = judgments(items)
    assert [(j.item_id, j.blind_answer, j.verdict) for j in stored] == [
        ("econ:1", "DACB", "keep"),
        ("econ:2", "ABCD", "ambiguous"),
        ("mcq:1", "ABD", "wrong-key"),
    ]
    assert stored[0].seconds == 9 and stored[1].alternative_orders == ["BACD", "ABDC"]
    assert stored[2].corrected_key == "AB"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--answer", "DAC", "--verdict", "keep"], "must place all 4 events; missing B"),
        (["--answer", "DAXB", "--verdict", "keep"], "'X' is not one of the events A, B, C, D"),
        (["--answer", "DACB", "--verdict", "ambiguous"], "needs at least one valid order besides"),
        (["--answer", "DACB", "--verdict", "wrong-key"], "needs the corrected key"),
        (
            ["--answer", "DACB", "--verdict", "duplicate", "--duplicate-of", "econ:9"],
            "no item 'econ:9'",
        ),
        (
            ["--answer", "DACB", "--verdict", "keep", "--revision", "2"],
            "now at revision 1, not revision 2 (it has no revision 2)",
        ),
    ],
)
def test_judge_refuses_clearly(items: Path, args: list[str], message: str) -> None:
    code, output = run(items, "judge", "econ:1", "--as", "alice", *args)
    assert code == 1
    assert message in output and "Traceback" not in output
    # The refusal stores no blind answer, so it must not tell the key (D, A, B, C).
    assert "D, A, B, C" not in output and "DABC" not in output
    assert judgments(items) == []


def test_judge_refuses_unknown_items_and_verdicts(items: Path) -> None:
    code, output = run(
        items, "judge", "econ:404", "--as", "alice", "--answer", "ABCD", "--verdict", "keep"
    )
    assert (code, "there is no item 'econ:404'" in output) == (1, True)
    code, output = run(
        items, "judge", "econ:1", "--as", "alice", "--answer", "ABCD", "--verdict", "fine"
    )
    assert code == 2 and "'fine' is not one of" in output


def test_undo(items: Path) -> None:
    run(items, "judge", "econ:1", "--as", "alice", "--answer", "DABC", "--verdict", "keep")
    code, output = run(items, "undo", "--as", "alice")
    assert code == 0 and "retracted judgment 1 (keep) on econ:1" in output
    code, output = run(items, "undo", "--as", "alice")
    assert code == 1 and "alice has no judgment to undo" in output
    assert [j.retracted for j in judgments(items)] == [True]


def test_config(items: Path) -> None:
    code, output = run(items, "config", "get", "overlap")
    assert (code, output.strip()) == (0, "2")
    run(items, "judge", "econ:1", "--as", "alice", "--answer", "DABC", "--verdict", "keep")
    run(items, "judge", "econ:1", "--as", "bob", "--answer", "DABC", "--verdict", "keep")
    code, output = run(items, "config", "set", "overlap", "3", "--as", "alice")
    assert code == 1 and "only leads change settings; alice is an annotator" in output
    code, output = run(items, "users", "add", "lena", "--role", "lead")
    code, output = run(items, "config", "set", "overlap", "3", "--as", "lena")
    assert code == 0 and "overlap = 3 (was 2)" in output and "1 changed" in output
    code, output = run(items, "config", "list")
    assert "overlap = 3" in output and "duplicate_threshold = 90 (default)" in output
    code, output = run(items, "config", "list", "--json")
    listed = {entry["name"]: entry for entry in json.loads(output)}
    assert listed["overlap"] == {
        "name": "overlap",
        "value": "3",
        "default": "2",
        "valid": True,
        "help": "independent judgments each item needs (k)",
    }
    # A setting the routing in force does not read is kept, with a note saying when it counts.
    code, output = run(items, "config", "set", "max_overlap", "4", "--as", "lena")
    assert code == 0 and output.splitlines()[:2] == [
        "max_overlap = 4 (was 3)",
        "note: max_overlap is read by adaptive routing; routing is fixed, so it takes effect "
        "after `vetbench config set routing adaptive`",
    ]
    code, output = run(items, "config", "set", "routing", "adaptive", "--as", "lena")
    code, output = run(items, "config", "set", "overlap", "2", "--as", "lena")
    assert code == 0 and "note: overlap is read by fixed routing; routing is adaptive" in output
    code, output = run(items, "config", "set", "target_confidence", "0.9", "--as", "lena")
    assert code == 0 and "note:" not in output
    code, output = run(items, "config", "set", "overlap", "3", "--as", "lena")
    code, output = run(items, "config", "set", "overlap", "zero", "--as", "lena")
    assert code == 1 and "overlap must be a whole number" in output
    code, output = run(items, "config", "get", "colour")
    assert code == 1 and "unknown setting 'colour'" in output


def test_a_setting_written_around_vetbench_is_one_line_naming_it(items: Path) -> None:
    """A lead's `UPDATE setting SET value='abc'` in the database: `judge` says which setting
    is wrong in one line (it raised ValueError), `config list` shows it, `config set` mends it."""
    code, output = run(items, "users", "add", "lena", "--role", "lead")
    assert code == 0, output
    with sqlite3.connect(items) as connection:
        connection.execute("INSERT INTO setting (key, value) VALUES ('overlap', 'abc')")
    code, output = run(
        items, "judge", "econ:1", "--as", "alice", "--answer", "DABC", "--verdict", "keep"
    )
    assert code == 1 and "Traceback" not in output and len(output.splitlines()) == 1
    assert (
        "the stored setting overlap is not valid (overlap must be a whole number, got 'abc')"
        in output
    )
    assert "vetbench config set overlap VALUE" in output
    code, output = run(items, "config", "get", "overlap")
    assert code == 1 and "the stored setting overlap is not valid" in output
    code, output = run(items, "config", "list")
    assert code == 0 and "overlap = abc (not valid: a lead sets it again)" in output
    code, output = run(items, "config", "list", "--json")
    assert {"name": "overlap", "value": "abc", "valid": False}.items() <= json.loads(output)[
        0
    ].items()
    code, output = run(items, "config", "set", "overlap", "2", "--as", "lena")
    assert code == 0 and "overlap = 2 (was abc)" in output
    code, output = run(
        items, "judge", "econ:1", "--as", "alice", "--answer", "DABC", "--verdict", "keep"
    )
    assert code == 0, output
    with sqlite3.connect(items) as connection:
        connection.execute("UPDATE setting SET value = '500' WHERE key = 'overlap'")
    code, output = run(
        items, "judge", "econ:2", "--as", "bob", "--answer", "ABCD", "--verdict", "keep"
    )
    assert code == 1 and "overlap must be at most 100, got 500" in output


def test_review_app_starts_without_heavy_libraries(items: Path) -> None:
    probe = (
        "import sys\n"
        "from reviewer.tui.app import make_app\n"
        f"app = make_app({str(items)!r}, 'alice')\n"
        "import reviewer.tui.screens.review, reviewer.tui.screens.edit\n"
        "print(sorted(m for m in ('torch', 'transformers') if m in sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).parent.parent,
    )
    assert result.stdout.strip() == "[]"


def test_review_refuses_an_unknown_source_and_an_empty_name(items: Path) -> None:
    code, output = run_in_terminal(items, "review", "--as", "alice", "--source", "nope")
    assert code == 1 and "no items come from source 'nope'; sources: test" in output
    code, output = run_in_terminal(items, "review", "--as", "  ")
    assert code == 1 and "--as needs a name" in output


NO_TERMINAL = (
    "error: the review app needs a terminal, and standard output is not one; without one, "
    "judge an item with `vetbench judge ITEM_ID --answer ... --verdict ...`, or many with "
    "`vetbench judge --from FILE` (a sheet from `vetbench export --format judging`)\n"
)


def test_review_with_its_output_piped_or_in_a_file_is_refused_and_writes_nothing(
    items: Path, tmp_path: Path
) -> None:
    """`vetbench review --as ann | cat`, or `> out.txt`: one error on the terminal (broken
    at words to its width, as every error there is), exit 1, nothing written to the
    database (a new user is not registered) nor to the output."""

    def people_and_events() -> tuple[list[str], list[tuple[str, str]]]:
        db = open_database(items)
        try:
            with db.session() as session:
                names = sorted(session.exec(select(Person.name)))
                events = [(e.actor, e.action) for e in read_audit(session, limit=None)]
            return names, events
        finally:
            db.dispose()

    before = people_and_events()
    piped = subprocess.PIPE
    code, shown = run_in_terminal(items, "review", "--as", "cy", "--new-user", stdout=piped)
    assert (code, shown.split()) == (1, NO_TERMINAL.split())
    out = tmp_path / "out.txt"
    with out.open("wb") as file:
        code, shown = run_in_terminal(items, "review", "--as", "alice", stdout=file)
    assert (code, shown.split()) == (1, NO_TERMINAL.split())
    assert out.read_bytes() == b""
    assert people_and_events() == before
    # without any terminal (a script, a job) each stream that is not one is named
    code, output = run(items, "review", "--as", "alice")
    assert code == 1 and "standard input, output and error are not terminals;" in output
