"""`vetbench release verify --export` on exports whose text the readers could get wrong:
line separators inside item text (U+2028, U+2029, U+0085) and an empty explanation,
which EconLogicQA CSV cannot tell from none."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from eval_helpers import ok
from helpers import run_cli, store_person, write_file

from db.engine import Database
from db.importer import import_files
from db.releases import release_items
from db.vocabulary import Role
from reviewer.adjudication import decide
from reviewer.judging import ItemEdit, edit_item

SEPARATORS = "Which\u2028rate\u2029 is it?\x85 (NEL)"


def _release(database: Database, tmp_path: Path, *records: dict[str, Any]) -> None:
    """Import ``records`` as source ``u`` (JSONL), approve them all and make release v1."""
    lines = "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records)
    import_files(database, [write_file(tmp_path, "u.jsonl", lines)])
    store_person(database, "lena", Role.LEAD)
    for number in range(1, len(records) + 1):
        decide(database, "lena", f"u:{number}", "approved")
    ok(run_cli(database, "release", "create", "v1", "--as", "lena"))


def _verify(database: Database, out: Path, release: str = "v1", part: str = "") -> None:
    """``out`` verifies: as release ``release``, or as its ``part`` ("the ordering items")."""
    result = run_cli(database, "release", "verify", "--export", str(out))
    said = f"matches {part} of release {release}:" if part else f"matches release {release}:"
    assert result.exit_code == 0 and said in result.output, result.output


@pytest.mark.parametrize(
    ("format_name", "name"),
    [("jsonl", "r.jsonl"), ("econlogicqa", "r.csv"), ("hf", "hf"), ("lm-eval", "lm")],
)
def test_an_export_with_line_separators_in_its_text_verifies(
    database: Database, tmp_path: Path, format_name: str, name: str
) -> None:
    _release(
        database,
        tmp_path,
        {
            "kind": "ordering",
            "prompt": SEPARATORS,
            "choices": {"A": "x\x85y", "B": "z"},
            "key": "BA",
        },
        {
            "kind": "single",
            "prompt": SEPARATORS,
            "choices": {"A": "a\u2028b", "B": "c"},
            "key": "A",
        },
    )
    out = tmp_path / name
    args = ["export", "--format", format_name, "--release", "v1", "--out", str(out)]
    if format_name == "econlogicqa":
        args += ["--kind", "ordering"]
    ok(run_cli(database, *args))
    _verify(database, out, part="the ordering items" if format_name == "econlogicqa" else "")


ORDERING = {"kind": "ordering", "prompt": "Order these.", "choices": {"A": "a", "B": "b"}}


def test_a_csv_export_verifies_whether_an_explanation_was_empty_or_none(
    database: Database, tmp_path: Path
) -> None:
    """The CSV writes both as an empty cell: one read as an item of a new import states
    it (none), one of a release made before, with an empty explanation stored, verifies."""
    _release(
        database,
        tmp_path,
        {**ORDERING, "key": "AB", "explanation": ""},
        {**ORDERING, "key": "BA", "explanation": "Because."},
        {**ORDERING, "key": "AB", "explanation": "Cleared below."},
    )
    edit_item(database, "lena", "u:3", ItemEdit(note="no explanation", explanation=""))
    decide(database, "lena", "u:3", "approved")
    ok(run_cli(database, "release", "create", "v2", "--as", "lena"))
    with database.session() as session:
        assert [item.explanation for item in release_items(session, "v2")] == [
            None,
            "Because.",
            "",
        ]
    for release in ("v1", "v2"):
        out = tmp_path / f"{release}.csv"
        args = ["export", "--format", "econlogicqa", "--release", release, "--out", str(out)]
        ok(run_cli(database, *args))
        _verify(database, out, release)
