"""The hand-written fixtures are well formed, pass validation, and their flaws are the listed ones.

The static checks read the files with the standard library only (csv, json, ast), so
they say whether the *data* is right regardless of the importer.  The last tests import
the fixtures through the real command line and check that exactly the near-duplicates
listed in ``fixtures/README.md`` are flagged.
"""

from __future__ import annotations

import ast
import csv
import itertools
import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from rapidfuzz import fuzz

from db.formats.cflue import TASK_KINDS
from db.validation import ItemDraft, validate_draft
from db.vocabulary import ItemKind
from reviewer.cli import cli

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
ORDERING_CSV = FIXTURES / "econ_ordering.csv"
FIVE_EVENTS_CSV = FIXTURES / "econ_ordering_5events.csv"
CFLUE_JSON = FIXTURES / "cflue_mcq.json"
ARTICLES_JSONL = FIXTURES / "articles.jsonl"
ARTICLES_CSV = FIXTURES / "articles.csv"
SHOTS_JSONL = FIXTURES / "shots_ordering.jsonl"
README = FIXTURES / "README.md"
DUPLICATE_THRESHOLD = 90  # rapidfuzz ratio; the near-duplicates are far above, the rest far below


def read_csv(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        rows = list(reader)
        return list(reader.fieldnames or []), rows


def read_cflue() -> list[dict[str, Any]]:
    return json.loads(CFLUE_JSON.read_text(encoding="utf-8"))


def flawed_ids() -> dict[str, str]:
    """``{item id: flaw}`` from the README's table of deliberately flawed items."""
    table = re.findall(r"^\| `(\w+:\d+)` \| (.+) \|$", README.read_text(encoding="utf-8"), re.M)
    return dict(table)


def is_chinese(text: str) -> bool:
    return re.search(r"[\u4e00-\u9fff]", text) is not None


@pytest.mark.parametrize(
    ("path", "events", "count"), [(ORDERING_CSV, "ABCD", 36), (FIVE_EVENTS_CSV, "ABCDE", 3)]
)
def test_ordering_csv_is_valid(path: Path, events: str, count: int) -> None:
    header, rows = read_csv(path)
    assert header == ["Question", *events, "Answer", "Explanation"]
    assert len(rows) == count
    for number, row in enumerate(rows, start=1):
        assert None not in row, f"row {number} has extra cells"
        order = [letter.strip() for letter in row["Answer"].split(",")]
        assert sorted(order) == list(events), f"row {number}: {row['Answer']}"
        assert "".join(order) != events, f"row {number} lists its events in logical order"
        draft = ItemDraft(
            kind="ordering",
            prompt=row["Question"],
            choices={label: row[label] for label in events},
            key=row["Answer"],
            explanation=row["Explanation"],
        )
        assert validate_draft(draft) == [], f"row {number}"
    assert len({row["Answer"] for row in rows}) >= min(count, 10), "keys should vary"


def test_cflue_json_is_valid() -> None:
    records = read_cflue()
    assert len(records) >= 36
    for number, record in enumerate(records, start=1):
        assert set(record) == {"名称", "task", "question", "choices", "answer", "analysis"}
        assert isinstance(record["choices"], str), f"record {number}: choices must be a string"
        choices = ast.literal_eval(record["choices"])
        assert isinstance(choices, dict) and all(isinstance(v, str) for v in choices.values())
        kind = TASK_KINDS[record["task"]]
        assert set(record["answer"]) <= set(choices), f"record {number}"
        if kind is ItemKind.TRUEFALSE:
            assert choices == {"A": "对", "B": "错"}, f"record {number}"
        else:
            assert 4 <= len(choices) <= 5, f"record {number}"
        if kind is ItemKind.MULTI:
            assert len(record["answer"]) >= 2, f"record {number}"
        draft = ItemDraft(
            kind=kind.value,
            prompt=record["question"],
            choices=choices,
            key=record["answer"],
            explanation=record["analysis"],
        )
        assert validate_draft(draft) == [], f"record {number}"


def test_cflue_mix_of_kinds_and_languages() -> None:
    records = read_cflue()
    kinds = [TASK_KINDS[r["task"]] for r in records]
    assert kinds.count(ItemKind.SINGLE) >= 16
    assert kinds.count(ItemKind.MULTI) >= 8
    assert kinds.count(ItemKind.TRUEFALSE) >= 6
    chinese = sum(is_chinese(r["question"]) for r in records)
    assert 0.55 <= chinese / len(records) <= 0.75
    assert any(r["analysis"] is None for r in records)


def test_articles_agree_and_fit_the_length() -> None:
    from_jsonl = [
        json.loads(line) for line in ARTICLES_JSONL.read_text(encoding="utf-8").splitlines()
    ]
    header, from_csv = read_csv(ARTICLES_CSV)
    assert header == ["id", "title", "text"]
    assert from_jsonl == from_csv
    assert len(from_jsonl) == 10
    assert len({a["id"] for a in from_jsonl}) == 10
    assert sum(is_chinese(a["text"]) for a in from_jsonl) == 2
    for article in from_jsonl:
        if is_chinese(article["text"]):
            assert 200 <= len(article["text"]) <= 600, article["id"]
        else:
            assert 120 <= len(article["text"].split()) <= 250, article["id"]


def test_shots_are_valid_ordering_items_unlike_the_csv() -> None:
    shots = [json.loads(line) for line in SHOTS_JSONL.read_text(encoding="utf-8").splitlines()]
    assert len(shots) == 5
    _, rows = read_csv(ORDERING_CSV)
    for shot in shots:
        assert set(shot) == {"kind", "prompt", "choices", "key", "explanation"}
        draft = ItemDraft(**shot)
        assert validate_draft(draft) == []
        closest = max(fuzz.ratio(shot["prompt"], row["Question"]) for row in rows)
        assert closest < 80, shot["prompt"]


def _near_duplicate_pairs(texts: list[str]) -> set[tuple[int, int]]:
    return {
        (i + 1, j + 1)
        for i, j in itertools.combinations(range(len(texts)), 2)
        if fuzz.ratio(texts[i], texts[j]) >= DUPLICATE_THRESHOLD
    }


def test_readme_lists_the_flaws_that_are_there() -> None:
    flaws = flawed_ids()
    _, rows = read_csv(ORDERING_CSV)
    records = read_cflue()
    sizes = {"econ_ordering": len(rows), "cflue_mcq": len(records)}
    for item_id in flaws:
        source, row = item_id.split(":")
        assert 1 <= int(row) <= sizes[source], item_id
    # Every stated key is the key the file holds.
    for item_id, flaw in flaws.items():
        source, row = item_id.split(":")
        stated = re.search(r"(?:file says|key) `([A-F, ]+)`", flaw)
        if stated:
            held = (
                rows[int(row) - 1]["Answer"]
                if source == "econ_ordering"
                else records[int(row) - 1]["answer"]
            )
            assert stated.group(1) == held, item_id
    # The near-duplicates, and only they, are above the duplicate threshold.
    duplicates = {item_id for item_id, flaw in flaws.items() if flaw.startswith("near-duplicate")}
    scenario_pairs = _near_duplicate_pairs([row["Question"] for row in rows])
    question_pairs = _near_duplicate_pairs([record["question"] for record in records])
    found = {f"econ_ordering:{j}" for _, j in scenario_pairs} | {
        f"cflue_mcq:{j}" for _, j in question_pairs
    }
    assert found == duplicates
    counts = [flaw.split(":")[0] for flaw in flaws.values()]
    assert counts.count("two valid orders") >= 2
    assert counts.count("wrong key") + counts.count("wrong key (multi)") >= 4
    assert counts.count("no clear order") >= 1
    assert counts.count("two correct options on a single-answer item") >= 1


@pytest.mark.parametrize(
    ("path", "file_format", "count"),
    [
        (ORDERING_CSV, "econlogicqa", 36),
        (FIVE_EVENTS_CSV, "econlogicqa", 3),
        (CFLUE_JSON, "cflue", 38),
        (SHOTS_JSONL, "jsonl", 5),
    ],
)
def test_fixture_imports_cleanly(path: Path, file_format: str, count: int, db_path: Path) -> None:
    result = CliRunner().invoke(
        cli, ["--db", str(db_path), "import", str(path), "--format", file_format]
    )
    assert result.exit_code == 0, result.output
    with sqlite3.connect(db_path) as connection:
        (stored,) = connection.execute("SELECT count(*) FROM item").fetchone()
    assert stored == count


@pytest.mark.parametrize(
    ("path", "file_format"), [(ORDERING_CSV, "econlogicqa"), (CFLUE_JSON, "cflue")]
)
def test_import_flags_exactly_the_listed_near_duplicates(
    path: Path, file_format: str, db_path: Path
) -> None:
    result = CliRunner().invoke(
        cli, ["--db", str(db_path), "import", str(path), "--format", file_format]
    )
    assert result.exit_code == 0, result.output
    source = path.stem
    listed = {
        item_id
        for item_id, flaw in flawed_ids().items()
        if item_id.startswith(f"{source}:") and flaw.startswith("near-duplicate")
    }
    with sqlite3.connect(db_path) as connection:
        flagged = connection.execute(
            "SELECT source_ref FROM item WHERE suspected_duplicate_of IS NOT NULL"
        ).fetchall()
    # source_ref is "line N" (CSV, header = line 1) or "record N" (JSON).
    rows = {int(ref.split()[1]) - (1 if ref.startswith("line") else 0) for (ref,) in flagged}
    assert {f"{source}:{row}" for row in rows} == listed
