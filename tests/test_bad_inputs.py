"""The bad-input sweep: every file in ``tests/data/bad/`` meets the outcome ``expected.json`` gives it.

Each file is imported through the real command line (``vetbench --db DB import FILE --format F``)
into a database that already holds one valid fixture import.

- ``error``: exit status 1, no traceback, the output names the file, the place (``line N`` or
  ``record N``, and no other place), the field when one is given and the expected words; and
  the database content is the same as before (every row of every table).  Nothing that a
  ``choices`` string holds is ever run: the marker file its code would create never appears.
- ``accepted``: exit status 0 and every record's text is stored exactly as the file holds it,
  Rich markup and terminal escape characters included.

Files too big to commit are made on the fly by ``tests/data/bad/make_large.py``.
"""

from __future__ import annotations

import ast
import csv
import importlib.util
import io
import json
import re
import shutil
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from click.testing import CliRunner, Result

from db.engine import open_database
from db.items import ItemSnapshot, iter_items
from reviewer.cli import cli

BAD_DIR = Path(__file__).resolve().parent / "data" / "bad"
EXPECTED: dict[str, dict[str, Any]] = json.loads(
    (BAD_DIR / "expected.json").read_text(encoding="utf-8")
)
SEED_FILE = Path(__file__).resolve().parent.parent / "fixtures" / "econ_ordering.csv"
# The file the code inside the hostile ``choices`` strings would create if it ever ran.
PWNED_MARKER = "vetbench_pwned"

ERROR_CASES = sorted(name for name, case in EXPECTED.items() if case["outcome"] == "error")
ACCEPTED_CASES = sorted(name for name, case in EXPECTED.items() if case["outcome"] == "accepted")


def _load_make_large() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_large", BAD_DIR / "make_large.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_import(db: Path, path: Path, file_format: str) -> Result:
    return CliRunner().invoke(
        cli, ["--db", str(db), "import", str(path), "--format", file_format], catch_exceptions=True
    )


def checkpoint(db: Path) -> None:
    """Fold the WAL into the main file so that copying the file copies the whole database."""
    with sqlite3.connect(db) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def database_content(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table, sorted, so two snapshots compare equal only if nothing changed."""
    connection = sqlite3.connect(db)
    try:
        tables = [
            name
            for (name,) in connection.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
            )
        ]
        return {
            table: sorted(connection.execute(f'SELECT * FROM "{table}"').fetchall(), key=repr)
            for table in tables
        }
    finally:
        connection.close()


def input_file(name: str, case: dict[str, Any], tmp_path: Path) -> Path:
    if case.get("generated"):
        return _load_make_large().make_large(name, tmp_path)
    return BAD_DIR / name


def assert_clean_exit(result: Result) -> None:
    """Exit through click or ``sys.exit``, never through an unexpected exception."""
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"the command raised {result.exception!r}:\n{result.output}")
    assert "Traceback" not in result.output


@dataclass(frozen=True)
class ImportAttempt:
    """One file of the sweep imported, with what the database held before."""

    case: dict[str, Any]
    path: Path
    result: Result
    content_before: dict[str, list[tuple[Any, ...]]]
    ids_before: set[str]


def attempt_import(name: str, db: Path, tmp_path: Path, exit_code: int) -> ImportAttempt:
    """Import the file ``name`` as ``expected.json`` says; the command ends cleanly with
    ``exit_code``."""
    case = EXPECTED[name]
    path = input_file(name, case, tmp_path)
    content_before, ids_before = database_content(db), item_ids(db)
    result = run_import(db, path, case["format"])
    assert_clean_exit(result)
    assert result.exit_code == exit_code, result.output
    return ImportAttempt(case, path, result, content_before, ids_before)


@pytest.fixture(scope="module")
def seeded_database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database holding one valid fixture import, made once and copied for each case."""
    db = tmp_path_factory.mktemp("seed") / "seed.db"
    result = run_import(db, SEED_FILE, "econlogicqa")
    assert result.exit_code == 0, result.output
    checkpoint(db)
    return db


@pytest.fixture
def database_copy(seeded_database: Path, tmp_path: Path) -> Iterator[Path]:
    db = tmp_path / "vetbench.db"
    shutil.copyfile(seeded_database, db)
    yield db


def test_expected_json_lists_every_file() -> None:
    """Every corpus file has an expected outcome and every listed file exists or is generated."""
    on_disk = {
        path.name
        for path in BAD_DIR.iterdir()
        if path.is_file() and path.name not in {"expected.json", "make_large.py", ".gitattributes"}
    }
    listed = {name for name, case in EXPECTED.items() if not case.get("generated")}
    generated = {name for name, case in EXPECTED.items() if case.get("generated")}
    assert on_disk == listed
    assert generated <= set(_load_make_large().MAKERS)
    for name, case in EXPECTED.items():
        assert case["format"] in {"econlogicqa", "cflue", "jsonl"}, name
        assert case["outcome"] in {"error", "accepted"}, name
        if case["outcome"] == "error":
            assert case["message_contains"], name


@pytest.mark.parametrize("name", ERROR_CASES)
def test_bad_file_is_refused_and_changes_nothing(
    name: str, database_copy: Path, tmp_path: Path
) -> None:
    attempt = attempt_import(name, database_copy, tmp_path, exit_code=1)

    case, path, output = attempt.case, attempt.path, attempt.result.output
    assert path.name in output
    if case["place"]:
        # The bad place, and no other: good records around it are not blamed.
        places = set(re.findall(r"\b(?:line|record) \d+\b", output))
        assert places == {case["place"]}, f"expected only {case['place']!r}:\n{output}"
    if case["field"]:
        # Named as the file names it: "Answer" in EconLogicQA CSV, "answer" in CFLUE JSON.
        assert case["field"] in output, output
    assert case["message_contains"] in output, output
    assert "\x1b" not in output and "\x00" not in output  # shown, never sent to the terminal
    # Bytes that are not UTF-8 are named as such, never echoed as escapes ('\udcb5').
    assert not re.search(r"\\udc[89a-f][0-9a-f]|[\udc80-\udcff]", output), output
    checkpoint(database_copy)
    assert database_content(database_copy) == attempt.content_before
    assert not (tmp_path / PWNED_MARKER).exists()
    assert not (BAD_DIR / PWNED_MARKER).exists()


def expected_records(path: Path, file_format: str) -> list[dict[str, Any]]:
    """The text of each record, read straight from the file (independently of the importer)."""
    if file_format == "econlogicqa":
        text = path.read_bytes().decode("utf-8-sig")
        rows = list(csv.DictReader(io.StringIO(text, newline="")))
        return [
            {
                "prompt": row["Question"],
                "choices": {label: row[label] for label in "ABCDEFGH" if row.get(label)},
                "explanation": row.get("Explanation") or None,
            }
            for row in rows
        ]
    if file_format == "cflue":
        return [
            {
                "prompt": record["question"],
                "choices": ast.literal_eval(record["choices"]),  # our own trusted file
                "explanation": record["analysis"],
            }
            for record in json.loads(path.read_text(encoding="utf-8"))
        ]
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    return [
        {"prompt": r["prompt"], "choices": r["choices"], "explanation": r.get("explanation")}
        for r in records
    ]


def stored_records(db: Path, item_ids: set[str]) -> list[ItemSnapshot]:
    database = open_database(db)
    try:
        with database.session() as session:
            return list(iter_items(session, ids=item_ids))
    finally:
        database.dispose()


def item_ids(db: Path) -> set[str]:
    with sqlite3.connect(db) as connection:
        return {item_id for (item_id,) in connection.execute("SELECT id FROM item")}


def _canonical(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, sort_keys=True)


@pytest.mark.parametrize("name", ACCEPTED_CASES)
def test_hostile_but_valid_text_is_stored_exactly(
    name: str, database_copy: Path, tmp_path: Path
) -> None:
    attempt = attempt_import(name, database_copy, tmp_path, exit_code=0)

    new_ids = item_ids(database_copy) - attempt.ids_before
    stored = stored_records(database_copy, new_ids)
    got = sorted(
        _canonical({"prompt": s.prompt, "choices": s.choices, "explanation": s.explanation})
        for s in stored
    )
    want = sorted(
        _canonical(record) for record in expected_records(attempt.path, attempt.case["format"])
    )
    assert got == want


@pytest.mark.parametrize("name", [n for n in ACCEPTED_CASES if n.startswith("markup")])
def test_markup_is_listed_literally_and_escapes_never_reach_the_terminal(
    name: str, database_copy: Path
) -> None:
    """``vetbench items`` shows Rich markup as typed and never writes a raw ESC or BEL."""
    case = EXPECTED[name]
    assert run_import(database_copy, BAD_DIR / name, case["format"]).exit_code == 0

    result = CliRunner().invoke(cli, ["--db", str(database_copy), "items"])

    assert_clean_exit(result)
    assert result.exit_code == 0, result.output
    assert "[bold]" in result.output  # every markup file's first item opens with [bold]
    assert "\x1b" not in result.output
    assert "\x07" not in result.output
