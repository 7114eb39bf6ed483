"""The Hugging Face export: `datasets.load_dataset(DIR)` reads it back, row for row."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from eval_helpers import mixed_set, ordering, store

from db.engine import Database
from db.items import iter_items
from db.vocabulary import ItemStatus
from evaluator.exports.folder import MANIFEST_NAME
from evaluator.exports.hf_dataset import export_hf, item_row
from evaluator.exports.selection import ExportError, Selection

datasets = pytest.importorskip("datasets")


def load(path: Path):  # type: ignore[no-untyped-def]
    return datasets.load_dataset(str(path), split="test", cache_dir=str(path.parent / "hf-cache"))


def test_load_dataset_reads_the_exported_items(database: Database, tmp_path: Path) -> None:
    approved = mixed_set(database)
    out = tmp_path / "hf"
    summary = export_hf(database, out)

    assert summary.count == len(approved) == 8
    assert summary.by_kind == {"multi": 2, "ordering": 2, "single": 2, "truefalse": 2}
    assert {"README.md", "data/test.jsonl", "vetbench-export.json"} <= set(summary.files)

    dataset = load(out)
    with database.session() as session:
        expected = [item_row(item) for item in iter_items(session, statuses=["approved"])]
    assert dataset.num_rows == 8
    assert dataset.to_list() == expected
    row = dataset.to_list()[0]
    assert row["labels"] == ["A", "B", "C", "D"] and row["answer_text"] == "D, A, C, B"
    # the schema in the card holds even where every value is empty
    assert dataset.features["explanation"].dtype == "string"
    assert dataset.features["revision"].dtype == "int32"
    zh = next(r for r in dataset.to_list() if r["id"] == "cflue:1")
    assert json.loads(zh["meta"]) == {"名称": "证券从业资格"}
    assert zh["choices"] == ["T+0", "T+1", "T+2", "T+3"]


def test_explanations_all_missing_still_load_as_strings(database: Database, tmp_path: Path) -> None:
    from eval_helpers import multi_en

    store(database, [("m:1", multi_en(1)), ("m:2", multi_en(2, "CD"))])
    dataset = load(export_hf(database, tmp_path / "hf").path)
    assert dataset["explanation"] == [None, None]
    assert dataset.features["explanation"].dtype == "string"


def test_filters_and_card(database: Database, tmp_path: Path) -> None:
    mixed_set(database)
    summary = export_hf(database, tmp_path / "only", selection=Selection(kinds=("ordering",)))
    assert summary.count == 2 and summary.by_kind == {"ordering": 2}
    card = (tmp_path / "only" / "README.md").read_text(encoding="utf-8")
    assert card.startswith("---\n") and "| `answer` |" in card and "2 items (2 ordering)" in card
    everything = export_hf(database, tmp_path / "all", selection=Selection(statuses=()))
    assert everything.count == 12
    agreed = export_hf(
        database,
        tmp_path / "agreed",
        selection=Selection(statuses=(ItemStatus.AGREED,), sources=("shots",)),
    )
    assert agreed.count == 4
    several = export_hf(
        database, tmp_path / "several", selection=Selection(statuses=(), sources=("econ", "shots"))
    )
    assert several.count == 6 and several.by_kind["ordering"] == 3


def test_nothing_to_export_is_a_clear_error(database: Database, tmp_path: Path) -> None:
    store(database, [("x:1", ordering(1))], status=ItemStatus.PENDING)
    with pytest.raises(ExportError, match="no items to export .*status approved"):
        export_hf(database, tmp_path / "hf")
    assert not (tmp_path / "hf").exists()


def test_refuses_a_foreign_folder_and_replaces_its_own(database: Database, tmp_path: Path) -> None:
    mixed_set(database)
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(ExportError, match="not empty"):
        export_hf(database, foreign)
    assert [p.name for p in foreign.iterdir()] == ["notes.txt"]

    out = tmp_path / "hf"
    export_hf(database, out)
    # a file the earlier export wrote (its manifest lists it) and the next one does not
    (out / "stale.txt").write_text("old", encoding="utf-8")
    manifest = json.loads((out / MANIFEST_NAME).read_text(encoding="utf-8"))
    manifest["files"].append("stale.txt")
    (out / MANIFEST_NAME).write_text(json.dumps(manifest), encoding="utf-8")
    export_hf(database, out, selection=Selection(kinds=("single",)))
    assert not (out / "stale.txt").exists()
    assert load(out).num_rows == 2
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
