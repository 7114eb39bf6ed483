"""Figures about runs read back from the database: the run list, one run's figures and
progress, the latest predictions, two runs compared item by item, and suspect keys."""

from __future__ import annotations

import json

import pytest
from eval_helpers import mixed_set
from helpers import APPROVED_ITEMS, run_cli, store_item, store_person
from scipy.stats import binomtest

from db.engine import Database
from db.vocabulary import ItemKind, Role
from evaluator.backends.scripted import Script, ScriptedBackend
from evaluator.metrics import wilson_interval
from evaluator.results import RunFigures, SuspectKey
from evaluator.runner import RunProgress, create_run, execute_run
from evaluator.runs import (
    RunNotFound,
    compare_runs,
    get_prediction,
    latest_predictions,
    list_runs,
    run_figures,
    suspect_keys,
)
from reviewer.adjudication import decide
from reviewer.judging import ItemEdit, edit_item

ANSWERS = {
    "econ:1": " D, A, C, B",  # right
    "econ:2": " A, B, C, D",  # wrong
    "cflue:1": "B",  # right
    "cflue:2": "?",  # unparsed
    "cflue:3": "AB",  # wrong
    "cflue:4": "BC",  # right
    "cflue:5": "A",  # right
    "cflue:6": "A",  # wrong (key B)
}


def run(
    database: Database,
    answers: dict[str, str],
    model: str = "scripted",
    failing: frozenset[str] = frozenset(),
) -> int:
    """A finished 0-shot run of ``model`` answering ``answers``; ``failing`` items time out."""
    script = Script(answers, failures=dict.fromkeys(failing, "timed out after 60 s"))
    backend = ScriptedBackend(script, model=model)
    run_id = create_run(database, backend.info, shots=0, item_filter=APPROVED_ITEMS)
    execute_run(database, run_id, backend)
    return run_id


def test_run_figures_summarize_the_stored_predictions(database: Database) -> None:
    mixed_set(database)
    run_id = run(database, ANSWERS, failing=frozenset({"cflue:6"}))
    figures = run_figures(database, run_id)
    assert figures.run.id == run_id and figures.run.status == "finished"
    summary = figures.summary
    assert summary.n == 8 and summary.scored == 7 and summary.correct == 4
    assert summary.infrastructure_failures == 1
    assert summary.accuracy == pytest.approx(4 / 7)
    assert summary.accuracy_ci == pytest.approx(wilson_interval(4, 7))
    assert summary.unparsed == 1
    assert summary.pairwise_accuracy == pytest.approx((1 + 4 / 6) / 2)
    assert set(summary.by_kind) == {"ordering", "single", "multi", "truefalse"}
    assert set(summary.by_source) == {"econ", "cflue"}
    progress = figures.progress
    assert progress.done == 7 and progress.total == 8 and progress.remaining == 1
    assert progress.eta_s is None  # the run is not running


def test_runs_show_counts_what_its_json_counts_and_names_the_failures(
    database: Database,
) -> None:
    """A kind's ``n`` is every prediction in the text as in ``--json``; the rates are over
    those scored, and the failures left out of them are counted on the line."""
    mixed_set(database)
    run_id = run(database, ANSWERS, failing=frozenset({"cflue:6"}))
    by_kind = json.loads(run_cli(database, "runs", "show", str(run_id), "--json").output)
    truefalse = by_kind["by_kind"]["truefalse"]
    assert (truefalse["n"], truefalse["scored"]) == (2, 1)
    text = run_cli(database, "runs", "show", str(run_id)).output
    line = next(line for line in text.splitlines() if line.strip().startswith("truefalse"))
    assert "n=2 " in line and line.endswith("failed 1")
    ordering = next(line for line in text.splitlines() if line.strip().startswith("ordering"))
    assert "n=2 " in ordering and "failed" not in ordering


def test_unknown_runs_are_reported(database: Database) -> None:
    with pytest.raises(RunNotFound, match="no run 42"):
        run_figures(database, 42)


def test_latest_predictions_come_newest_first(database: Database) -> None:
    approved = mixed_set(database)
    run_id = run(database, ANSWERS)
    latest = latest_predictions(database, run_id, 3)
    assert [view.item_id for view in latest] == list(reversed(approved))[:3]
    newest = latest[0]
    assert newest.key == "B" and newest.parsed_answer == "A" and newest.correct is False
    assert newest.prompt.endswith("答案：") and newest.raw_output == "A"


def test_one_prediction_can_be_fetched(database: Database) -> None:
    mixed_set(database)
    run_id = run(database, ANSWERS)
    view = get_prediction(database, run_id, "econ:1")
    assert (
        view is not None
        and view.parsed_answer == "DACB"
        and view.scores is not None
        and view.scores.pairwise == 1.0
    )
    assert get_prediction(database, run_id, "nothing:1") is None


def test_the_run_list_shows_progress_and_accuracy_newest_first(database: Database) -> None:
    mixed_set(database)
    first = run(database, ANSWERS)
    second = run(database, {**ANSWERS, "econ:2": " B, A, D, C"}, failing=frozenset({"cflue:2"}))
    listed = list_runs(database)
    assert [entry.id for entry in listed] == [second, first]
    newest = listed[0]
    assert newest.done == 7 and newest.total == 8 and newest.correct == 5
    assert newest.infrastructure_failures == 1
    assert newest.accuracy == pytest.approx(5 / 7)
    assert newest.accuracy_ci == pytest.approx(wilson_interval(5, 7))
    assert listed[1].accuracy == pytest.approx(4 / 8)


def test_the_run_list_says_why_a_run_failed(database: Database) -> None:
    """The run's note stands under it in the list, as in `runs show` and F4; a finished
    run without one gets no line; ``--json`` keeps its keys."""
    mixed_set(database)
    finished = run(database, ANSWERS)
    failed = run(database, ANSWERS, failing=frozenset(ANSWERS))
    _header, failed_row, *under, finished_row = run_cli(database, "runs").output.splitlines()
    assert failed_row.split()[:2] == [str(failed), "failed"]
    assert finished_row.split()[:2] == [str(finished), "finished"]  # and nothing under it
    assert " ".join(line.strip() for line in under) == (
        "note: all 8 predictions failed: timed out after 60 s; resume the run to retry them"
    )
    assert all(line.startswith(" " * 6) and len(line) <= 80 for line in under)
    listed = json.loads(run_cli(database, "runs", "--json").output)
    assert [sorted(entry) for entry in listed] == [sorted(listed[1])] * 2
    assert "error" not in listed[0]


def test_two_runs_compared_item_by_item(database: Database) -> None:
    mixed_set(database)
    a = run(database, ANSWERS)
    b = run(
        database,
        {**ANSWERS, "econ:2": " B, A, D, C", "cflue:1": "C", "cflue:3": "ABD", "cflue:6": "B"},
        model="other",
    )
    comparison = compare_runs(database, a, b)
    assert comparison.shared_items == 8
    assert comparison.only_a == ("cflue:1",)
    assert sorted(comparison.only_b) == ["cflue:3", "cflue:6", "econ:2"]
    assert sorted(comparison.both_right) == ["cflue:4", "cflue:5", "econ:1"]
    assert comparison.both_wrong == ("cflue:2",)
    assert comparison.counts == {"both_right": 3, "both_wrong": 1, "only_a": 1, "only_b": 3}
    assert {row.item_id for row in comparison.different_answers} == {
        "econ:2",
        "cflue:1",
        "cflue:3",
        "cflue:6",
    }
    # econ:1, cflue:4 and cflue:5 alike; cflue:2 unparsed in both is no shared answer
    assert comparison.agreement == pytest.approx(3 / 8)
    assert comparison.mcnemar_p == pytest.approx(binomtest(1, 4, 0.5).pvalue)


def test_an_item_asked_with_another_key_is_left_out_of_the_paired_comparison(
    database: Database,
) -> None:
    """Run B evaluated cflue:1 after its key was changed (B to A): not the same question
    as A's, so it is neither "both right" nor in agreement or McNemar, and it is listed
    with each run's revision and key; cflue:5, whose explanation alone was edited, still
    asks the same question and stays paired."""
    mixed_set(database)
    store_person(database, "lena", Role.LEAD)
    a = run(database, ANSWERS)
    decide(database, "lena", "cflue:1", "approved", key="A", reason="wrong-key")
    edit_item(database, "lena", "cflue:5", ItemEdit(note="clearer", explanation="Because."))
    decide(database, "lena", "cflue:5", "approved")
    b = run(database, {**ANSWERS, "cflue:1": "A"}, model="other")

    comparison = compare_runs(database, a, b)
    assert sorted(comparison.both_right) == ["cflue:4", "cflue:5", "econ:1"]
    assert comparison.only_a == comparison.only_b == ()
    assert comparison.different_answers == ()
    assert comparison.agreement == pytest.approx(6 / 7)  # cflue:2 unparsed in both
    assert comparison.mcnemar_p is None
    assert comparison.shared_items == 8 and comparison.paired_items == 7
    assert comparison.other_revisions == ("cflue:1", "cflue:5")

    text = run_cli(database, "runs", "compare", str(a), str(b)).output
    assert "both right    3" in text and "compared on the 7 items both answered" in text
    assert (
        "  cflue:1 (key): A at revision 1, key B, answered B (right); "
        "B at revision 2, key A, answered A (right)"
    ) in text
    as_json = json.loads(run_cli(database, "runs", "compare", str(a), str(b), "--json").output)
    assert as_json["counts"]["both_right"] == 3 and as_json["paired_items"] == 7
    assert as_json["changed_items"] == [
        {
            "item_id": "cflue:1",
            "changed": ["key"],
            "revision_a": 1,
            "key_a": "B",
            "a": "B",
            "correct_a": True,
            "revision_b": 2,
            "key_b": "A",
            "b": "A",
            "correct_b": True,
        }
    ]


def test_runs_whose_every_shared_item_changed_say_there_is_nothing_to_pair(
    database: Database,
) -> None:
    """Both runs answered cflue:1 and cflue:6 only, and both keys changed between them:
    no item is the same question in both, so the text says there is nothing to pair
    instead of rows of zeros, and still lists the two items; the JSON keeps its shape:
    no pairs, zero counts, no agreement and no McNemar test."""
    mixed_set(database)
    store_person(database, "lena", Role.LEAD)
    others = frozenset(ANSWERS) - {"cflue:1", "cflue:6"}
    a = run(database, ANSWERS, failing=others)
    decide(database, "lena", "cflue:1", "approved", key="A", reason="wrong-key")
    decide(database, "lena", "cflue:6", "approved", key="A", reason="wrong-key")
    b = run(database, {**ANSWERS, "cflue:1": "A"}, model="other", failing=others)

    text = run_cli(database, "runs", "compare", str(a), str(b)).output
    lines = text.splitlines()
    assert lines[0] == f"runs {a} (A) and {b} (B): 2 shared items"
    assert "no item both answered was asked as the same question" in lines[1]
    assert "compared on the 0 items" not in text
    assert (
        "nothing to pair: no item was evaluated at the same revision, or at revisions with "
        "the same key and text, in both runs (the 2 shared items are listed below with each "
        "run's own)"
    ) in lines
    assert not any(line.startswith(("both right", "only A right", "same answer")) for line in lines)
    assert (
        "not compared: 2 items whose key or text differs between the revisions the runs evaluated:"
    ) in lines
    assert (
        "  cflue:1 (key): A at revision 1, key B, answered B (right); "
        "B at revision 2, key A, answered A (right)"
    ) in lines
    assert any(line.startswith("  cflue:6 (key): ") for line in lines)

    as_json = json.loads(run_cli(database, "runs", "compare", str(a), str(b), "--json").output)
    assert as_json["shared_items"] == 2 and as_json["paired_items"] == 0
    assert as_json["counts"] == {"both_right": 0, "both_wrong": 0, "only_a": 0, "only_b": 0}
    assert as_json["agreement"] is None and as_json["mcnemar_p"] is None
    assert [row["item_id"] for row in as_json["changed_items"]] == ["cflue:1", "cflue:6"]
    earlier = json.loads(run_cli(database, "runs", "compare", str(a), str(a), "--json").output)
    assert sorted(as_json) == sorted(earlier)  # the keys every comparison has


def test_suspect_keys_are_items_every_model_gets_wrong_the_same_way(
    database: Database,
) -> None:
    mixed_set(database)
    run(database, ANSWERS, model="model-a")
    run(database, {**ANSWERS, "econ:2": " D, C, B, A"}, model="model-b")
    suspects = suspect_keys(database)
    # cflue:3 (AB for ABD) and cflue:6 (A for B): both models, same wrong answer.
    # econ:2 differs between the models; cflue:2 is unparsed, not an answer.
    assert [row.item_id for row in suspects] == ["cflue:3", "cflue:6"]
    assert suspects[1] == SuspectKey(
        item_id="cflue:6",
        kind=ItemKind.TRUEFALSE,
        key="B",
        answer="A",
        models=("model-a", "model-b"),
        runs=(1, 2),
    )
    # One model that answers right clears the item.
    run(database, {**ANSWERS, "cflue:6": "B"}, model="model-c")
    assert [row.item_id for row in suspect_keys(database)] == ["cflue:3"]


def test_suspects_say_how_many_models_answered_them_in_id_order(database: Database) -> None:
    """Two of three models answered the items: "every model" would overstate it; ids go
    as people number them (test:9 before test:37)."""
    for item_id in ("test:37", "test:9", "test:1"):
        store_item(database, item_id, key="DABC", status="approved")
    wrong = {"test:9": " A, B, C, D", "test:37": " A, B, C, D", "test:1": " D, A, B, C"}
    run(database, wrong, model="model-a")
    run(database, wrong, model="model-b")
    run(database, wrong, model="model-c", failing=frozenset({"test:9", "test:37"}))
    suspects = suspect_keys(database)
    assert [row.item_id for row in suspects] == ["test:9", "test:37"]
    assert suspects[0].other_models == 1 and suspects[0].models == ("model-a", "model-b")
    assert suspects[0].agreement == (
        "both models that answered it (model-a, model-b) answer ABCD; "
        "1 other model did not answer it"
    )
    assert "other_models" not in suspects[0].to_json()  # the JSON's keys stay as they were
    run(database, wrong, model="model-d")
    assert suspect_keys(database)[0].agreement == (
        "all 3 models that answered it (model-a, model-b, model-d) answer ABCD; "
        "1 other model did not answer it"
    )


def test_one_model_alone_makes_no_suspects(database: Database) -> None:
    mixed_set(database)
    run(database, ANSWERS, model="model-a")
    run(database, ANSWERS, model="model-a")  # the same model twice is still one model
    assert suspect_keys(database) == []
    assert [row.item_id for row in suspect_keys(database, min_models=1)] == [
        "cflue:3",
        "cflue:6",
        "econ:2",
    ]


def test_progress_while_running_has_a_speed_and_an_eta(database: Database) -> None:
    mixed_set(database)
    backend = ScriptedBackend(ANSWERS)
    run_id = create_run(database, backend.info, shots=0, item_filter=APPROVED_ITEMS)
    seen: list[RunFigures] = []

    def look(progress: RunProgress) -> None:
        if progress.done == 4:
            seen.append(run_figures(database, run_id))

    execute_run(database, run_id, backend, on_progress=look)
    (during,) = seen
    assert during.run.status == "running" and during.is_running
    assert during.progress.done == 4 and during.progress.remaining == 4
    rate = during.progress.items_per_second
    assert rate is not None and rate > 0
    assert during.progress.eta_s == pytest.approx(4 / rate)
    after = run_figures(database, run_id).progress
    assert after.items_per_second is not None and after.items_per_second > 0
    assert after.eta_s is None
