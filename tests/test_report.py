"""The Markdown review report: sources, removals by reason, final counts, agreement, wrong keys."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from helpers import store_draft, store_item, store_judgment, store_person

from db.engine import open_database
from db.validation import ItemDraft
from db.vocabulary import Role
from reviewer.adjudication import decide
from reviewer.agreement import compute_agreement
from reviewer.agreement.rows import value_text
from reviewer.cli import cli
from reviewer.judging import ItemEdit, edit_item
from reviewer.report import build_report, review_summary


def store_generated(db, item_id: str) -> None:  # type: ignore[no-untyped-def]
    draft = ItemDraft(
        kind="ordering",
        prompt="A firm | expands.",
        choices={"A": "Hire", "B": "Build", "C": "Sell", "D": "Profit"},
        key="ABCD",
        provenance={"model": "gpt-4o", "article": "a1"},
    )
    store_draft(db, item_id, draft, source="gen", author="generator")


@pytest.fixture
def reviewed(database):  # type: ignore[no-untyped-def]
    """Six items from two sources, judged by two annotators and decided by a lead."""
    store_person(database, "lea", Role.LEAD)
    for index in range(3):
        store_generated(database, f"g:{index}")
    store_item(database, "c:1", kind="single", key="B", source="cflue")
    store_item(database, "c:2", kind="multi", key="AB", source="cflue")
    store_item(database, "c:3", kind="truefalse", key="A", source="cflue")
    judgments = {
        "g:0": [("ABCD", "keep"), ("ABCD", "keep")],
        "g:1": [("BACD", "ambiguous"), ("ABCD", "no-order")],
        "g:2": [("DCBA", "wrong-key"), ("DCBA", "wrong-key")],  # a likely wrong key
        "c:1": [("B", "keep"), ("C", "flawed")],
        "c:2": [("AB", "keep"), ("ABC", "keep")],
        "c:3": [("A", "keep"), ("A", "sensitive")],
    }
    for item_id, pair in judgments.items():
        for who, (answer, verdict) in zip(("ann", "bo"), pair, strict=True):
            store_judgment(database, item_id, who, answer, verdict)
    decide(database, "lea", "g:0", "approved")
    decide(database, "lea", "g:1", "rejected", reason="several-valid-orders")
    decide(database, "lea", "g:2", "approved", key="DCBA")
    decide(database, "lea", "c:1", "rejected", reason="flawed")
    decide(database, "lea", "c:3", "approved")
    decide(database, "lea", "c:3", "rejected", reason="sensitive")  # revised
    return database


def test_summary_counts(reviewed) -> None:  # type: ignore[no-untyped-def]
    summary = review_summary(reviewed)
    assert summary.items == 6
    assert summary.generated_by_source == {"gen": 3}
    assert dict(summary.by_source["cflue"]) == {"single": 1, "multi": 1, "truefalse": 1}
    assert summary.removed_by_reason == {"several-valid-orders": 1, "flawed": 1, "sensitive": 1}
    # a multiple-choice item's "several-valid-orders" is counted and named as what it is
    decide(reviewed, "lea", "c:2", "rejected", reason="several-valid-orders")
    again = review_summary(reviewed).removed_by_reason
    assert again["several-valid-orders"] == 1 and again["several-valid-answers"] == 1
    assert "| more than one valid answer | 1 |" in build_report(reviewed, resamples=0)
    assert summary.approved_by_kind == {"ordering": 2}
    assert summary.keys_corrected_by_kind == {"ordering": 1}
    assert summary.revised_decisions == 1
    assert summary.by_status["conflict"] == 1  # c:2 awaits a decision


def test_decisions_about_an_older_revision_count_no_longer(reviewed) -> None:  # type: ignore[no-untyped-def]
    """An edit after a decision makes a new revision, pending again: the report counted the
    old approval and rejection still ("1 item is approved. 34 still await a decision (36
    pending)")."""
    edit_item(reviewed, "ann", "g:0", ItemEdit("typo", prompt="A firm | expands fast."))
    edit_item(reviewed, "ann", "c:1", ItemEdit("typo", prompt="Which one, then?"))
    summary = review_summary(reviewed)
    assert summary.approved_by_kind == {"ordering": 1}  # g:2 alone
    assert summary.removed_by_reason == {"several-valid-orders": 1, "sensitive": 1}
    assert summary.by_status["pending"] == 2
    text = build_report(reviewed, resamples=0)
    assert "Review removed 2 of 6 items (33.3%)" in text
    assert "1 item is approved, 1 of them with a key corrected by a lead" in text


def test_report_text(reviewed) -> None:  # type: ignore[no-untyped-def]
    text = build_report(reviewed, resamples=100, seed=1)
    assert text.startswith("# Review report\n")
    assert "Review removed 3 of 6 items (50.0%)" in text
    assert "1 for more than one valid order" in text and "1 for sensitive content" in text
    assert "2 items are approved, 1 of them with a key corrected by a lead" in text
    assert "| gen | 3 | 0 | 0 | 0 | 3 | 3 | 0 |" in text
    assert "| cflue | 0 | 1 | 1 | 1 | 3 | 0 | 3 |" in text
    assert "| ordering | 2 | 1 |" in text
    agreement = compute_agreement(reviewed, resamples=100, seed=1).figures
    expected_alpha = value_text(agreement.verdict.alpha)
    assert f"| Krippendorff's alpha, verdicts | {expected_alpha} |" in text
    assert "| g:2 | 1 (revised since) | ordering | A, B, C, D | D, C, B, A | 2 | approved |" in text
    assert "1 item had a decision revised later" in text


def test_report_on_an_empty_database(database) -> None:  # type: ignore[no-untyped-def]
    text = build_report(database, resamples=0)
    assert "Review has removed none of the 0 items so far." in text
    assert "No judgments yet." in text and "No item has been approved yet." in text


def test_report_on_one_item_says_it_in_the_singular(database) -> None:  # type: ignore[no-untyped-def]
    store_person(database, "lea", Role.LEAD)
    store_person(database, "ann")
    store_item(database, "g:0", key="ABCD")
    store_judgment(database, "g:0", "ann", "ABCD", "keep")
    decide(database, "lea", "g:0", "approved")
    text = build_report(database, resamples=0)
    assert "Review has removed none of the 1 item so far. 1 item is approved." in text
    assert "1 judgment by 1 annotator on 1 item revision, 0 of them judged by two" in text


def test_report_command_writes_a_file(reviewed, db_path, tmp_path) -> None:  # type: ignore[no-untyped-def]
    if not reviewed.is_sqlite:
        pytest.skip("the command reads the SQLite file")
    out = tmp_path / "review.md"
    result = CliRunner().invoke(
        cli, ["--db", str(db_path), "report", "--out", str(out), "--bootstrap", "50"]
    )
    assert result.exit_code == 0, result.output
    assert f"wrote the review report to {out}" in result.output
    assert out.read_text(encoding="utf-8").startswith("# Review report")
    bad = CliRunner().invoke(
        cli, ["--db", str(db_path), "report", "--out", str(tmp_path / "no" / "dir.md")]
    )
    assert bad.exit_code == 1 and "cannot write" in bad.output and "Traceback" not in bad.output
    reopened = open_database(db_path)
    assert "Review removed 3 of 6" in build_report(reopened, resamples=0)
    reopened.dispose()


def test_the_likely_wrong_keys_are_listed_for_leads_only(reviewed, db_path) -> None:  # type: ignore[no-untyped-def]
    """As in the agreement (F2, `agreement --json`): the list shows what the annotators
    answered, which annotators must not see before their own answer."""
    if not reviewed.is_sqlite:
        pytest.skip("the command reads the SQLite file")
    row = "| g:2 | 1 (revised since) | ordering | A, B, C, D | D, C, B, A | 2 | approved |"
    for who in ((), ("--as", "ann")):  # the login, and an annotator
        result = CliRunner().invoke(cli, ["--db", str(db_path), "report", "--bootstrap", "0", *who])
        assert result.exit_code == 0, result.output
        section = result.output.split("## Likely wrong keys")[1]
        assert "1 item revision where every annotator gave the same blind answer" in section
        assert "it is for leads (`vetbench report --as` a lead)" in section
        assert "D, C, B, A" not in section
    lead = CliRunner().invoke(
        cli, ["--db", str(db_path), "report", "--bootstrap", "0", "--as", "lea"]
    )
    assert row in lead.output and "is for leads" not in lead.output
