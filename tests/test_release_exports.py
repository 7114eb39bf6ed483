"""Folder exports of a release: the Hugging Face dataset loads with `datasets` with no
warning (warnings made errors) and its card shows the license, hash, counts, review
figures, changelog and citation; the lm-eval task of a release loads in lm-eval; both
verify against the release, and an altered one does not."""

from __future__ import annotations

import json
import logging
import re
import warnings
from pathlib import Path

import pytest
import yaml
from eval_helpers import mixed_set, ok
from helpers import run_cli, store_person

from db.engine import Database
from db.releases import verify_release
from db.vocabulary import Role
from reviewer.adjudication import decide
from reviewer.judging import ItemEdit, edit_item

datasets = pytest.importorskip("datasets")


@pytest.fixture
def two_releases(database: Database) -> Database:
    """v1 of the mixed set; then an edit and a rejection; then v2."""
    mixed_set(database)
    store_person(database, "lena", Role.LEAD)
    ok(run_cli(database, "config", "set", "license", "cc-by-4.0", "--as", "lena"))
    ok(run_cli(database, "release", "create", "v1", "--as", "lena"))
    edit_item(database, "lena", "econ:1", ItemEdit(note="clearer scenario", prompt="Order these."))
    decide(database, "lena", "econ:1", "approved")
    decide(database, "lena", "cflue:2", "rejected", reason="flawed", comment="needs a table")
    ok(run_cli(database, "release", "create", "v2", "--as", "lena", "--note", "second"))
    return database


def _load_strictly(path: Path) -> datasets.Dataset:
    """``datasets.load_dataset`` with every warning an error, logged ones included."""

    class Fail(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            raise AssertionError(f"datasets warned: {record.getMessage()}")

    handler = Fail(level=logging.WARNING)
    logger = logging.getLogger("datasets")
    logger.addHandler(handler)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            return datasets.load_dataset(
                str(path), split="test", cache_dir=str(path.parent / f"{path.name}-cache")
            )
    finally:
        logger.removeHandler(handler)


def test_hf_export_of_a_release_loads_without_warnings_and_is_as_frozen(
    two_releases: Database, tmp_path: Path
) -> None:
    database = two_releases
    out = tmp_path / "hf-v1"
    ok(run_cli(database, "export", "--format", "hf", "--out", str(out), "--release", "v1"))
    rows = _load_strictly(out).to_list()
    assert len(rows) == 8  # cflue:2 was rejected after v1: still in it
    econ = next(row for row in rows if row["id"] == "econ:1")
    assert econ["revision"] == 1 and econ["question"] != "Order these."
    card = (out / "README.md").read_text(encoding="utf-8")
    header = yaml.safe_load(card.split("---\n")[1])
    assert header["license"] == "cc-by-4.0"
    (split,) = header["dataset_info"]["splits"]
    data_bytes = (out / "data" / "test.jsonl").stat().st_size
    assert split == {"name": "test", "num_bytes": data_bytes, "num_examples": 8}
    with database.session() as session:
        v1_hash = verify_release(session, "v1").stored_hash
    assert v1_hash in card and "The first release" in card and "@misc{vetbench_v1" in card
    assert "Krippendorff's alpha, verdicts" in card
    assert ok(run_cli(database, "release", "verify", "--export", str(out))).exit_code == 0


def test_the_next_release_card_carries_its_changelog(
    two_releases: Database, tmp_path: Path
) -> None:
    out = tmp_path / "hf-v2"
    ok(run_cli(two_releases, "export", "--format", "hf", "--out", str(out), "--release", "v2"))
    assert len(_load_strictly(out)) == 7
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "### v2 (from v1)" in card
    assert "0 added, 1 removed, 1 changed, 6 unchanged" in card
    assert "rejected (flawed)" in card and "needs a table" in card and "clearer scenario" in card
    assert "| items the review rejected, by reason | 1 flawed |" in card
    manifest = json.loads((out / "vetbench-export.json").read_text(encoding="utf-8"))
    assert manifest["release"] == "v2"

    # an altered row no longer verifies
    data = out / "data" / "test.jsonl"
    data.write_text(data.read_text(encoding="utf-8").replace('"DACB"', '"ABCD"', 1), "utf-8")
    refused = run_cli(two_releases, "release", "verify", "--export", str(out))
    assert refused.exit_code == 1 and "differs from the release's" in refused.output


def test_a_plain_export_still_loads_without_warnings(database: Database, tmp_path: Path) -> None:
    mixed_set(database)
    out = tmp_path / "hf"
    ok(run_cli(database, "export", "--format", "hf", "--out", str(out)))
    assert len(_load_strictly(out)) == 8
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "license: unknown" in card and "Not a release" in card
    refused = run_cli(database, "release", "verify", "--export", str(out))
    assert refused.exit_code == 1 and "names no release" in refused.output


@pytest.mark.slow
def test_the_lm_eval_task_of_a_release_loads_in_lm_eval(
    two_releases: Database, tmp_path: Path
) -> None:
    lm_eval_tasks = pytest.importorskip("lm_eval.tasks")
    out = tmp_path / "task"
    ok(run_cli(two_releases, "export", "--format", "lm-eval", "--out", str(out), "--release", "v1"))
    # lm-eval's own tasks left out of the index (8 s of reading YAML): that the exported
    # names clash with none of them is tests/test_export_lm_eval.py's to check
    manager = lm_eval_tasks.TaskManager(include_path=str(out), include_defaults=False)
    loaded = manager.load(["vetbench"])
    docs = {doc["id"]: doc for task in loaded["tasks"].values() for doc in task.test_docs()}
    assert len(docs) == 8 and docs["econ:1"]["revision"] == 1
    assert "Order these." not in docs["econ:1"]["prompt"]
    assert ok(run_cli(two_releases, "release", "verify", "--export", str(out))).exit_code == 0
    verified = run_cli(two_releases, "release", "verify", "v2", "--export", str(out))
    assert verified.exit_code == 1 and "is an export of release v1, not v2" in verified.output


def test_the_changelog_sits_under_the_card_headings_code_untouched() -> None:
    from evaluator.exports.hf_dataset import _demoted

    changelog = (
        "## v2 (from v1)\n\n```diff\n-# an item text starting with a hash\n# kept\n```\n### Removed"
    )
    assert _demoted(changelog).splitlines() == [
        "### v2 (from v1)",
        "",
        "```diff",
        "-# an item text starting with a hash",
        "# kept",
        "```",
        "#### Removed",
    ]


def test_the_citation_escapes_what_latex_would_read_as_commands() -> None:
    from datetime import datetime

    from db.releases import ReleaseInfo
    from evaluator.exports.hf_dataset import _bibtex

    name = "2026_Q4 50% {draft} & 金融 #2"
    entry = _bibtex(ReleaseInfo(name, "ab" * 32, "", {}, 8, {}, "lena", datetime(2026, 12, 3)))
    key = entry.splitlines()[0]
    assert re.fullmatch(r"@misc\{vetbench_2026_Q4_50___draft_+2,", key)  # plain BibTeX's
    assert r"release 2026\_Q4 50\% \{draft\} \& 金融 \#2}," in entry
    body = entry.replace(r"\{", "").replace(r"\}", "")
    assert body.count("{") == body.count("}")  # the entry's own braces still balance


def test_a_release_export_refuses_a_status_and_writes_nothing(
    two_releases: Database, tmp_path: Path
) -> None:
    """A release is exported as frozen: any --status beside it, `all` too, is refused."""
    for statuses in (["approved"], ["approved", "rejected"], ["all"]):
        out = tmp_path / "v1.jsonl"
        flags = [part for status in statuses for part in ("--status", status)]
        refused = run_cli(two_releases, "export", str(out), "--release", "v1", *flags)
        assert refused.exit_code == 1
        assert "--release exports the release's items as frozen; --status does not apply" in (
            refused.output
        )
        assert not out.exists()
