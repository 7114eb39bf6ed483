"""Runs on releases: `eval --release` evaluates the revisions frozen, whatever was edited or
decided since; every run records its release or the hash of its ad hoc item set; `runs
table` and `runs compare` never mix runs on different item sets without saying so; and
`runs rescore` reads stored outputs again without a model and writes nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sqlalchemy as sa
from conftest import BuiltDatabases
from eval_helpers import MIXED_SET_ANSWERS, mixed_set, ok
from helpers import run_cli, store_person

from db.engine import Database
from db.models import EvalRun, Prediction
from db.releases import backfill_item_sets, get_release
from db.vocabulary import ItemKind, Role
from evaluator.item_filter import filter_differences
from reviewer.adjudication import decide
from reviewer.judging import ItemEdit, edit_item


@pytest.fixture
def releases(database: Database, built_databases: BuiltDatabases) -> Database:
    """``store_releases``'s state, built once per test process and backend and copied."""
    built_databases.fill(database, store_releases)
    return database


def store_releases(database: Database) -> None:
    """v1 of the mixed set; an edit of econ:1 and the rejection of cflue:2; v2."""
    mixed_set(database)
    store_person(database, "lena", Role.LEAD)
    ok(run_cli(database, "release", "create", "v1", "--as", "lena"))
    edit_item(database, "lena", "econ:1", ItemEdit(note="clearer", prompt="Order these."))
    decide(database, "lena", "econ:1", "approved")
    decide(database, "lena", "cflue:2", "rejected", reason="flawed", comment="needs a table")
    ok(run_cli(database, "release", "create", "v2", "--as", "lena"))


@pytest.fixture
def model(tmp_path: Path) -> str:
    """A scripted model that answers every item right."""
    path = tmp_path / "answers.json"
    path.write_text(json.dumps(MIXED_SET_ANSWERS, ensure_ascii=False), encoding="utf-8")
    return f"scripted:{path}"


def evaluate(database: Database, model: str, *args: str) -> dict[str, object]:
    result = ok(run_cli(database, "eval", "--model", model, "--shots", "0", "--json", *args))
    return json.loads(result.stdout)


def _run(database: Database, run_id: int) -> EvalRun:
    with database.session() as session:
        run = session.get(EvalRun, run_id)
    assert run is not None
    return run


def _release_hash(database: Database, name: str) -> str:
    with database.session() as session:
        return get_release(session, name).hash


def test_eval_on_a_release_asks_the_frozen_revisions(releases: Database, model: str) -> None:
    first = evaluate(releases, model, "--release", "v1")
    run = _run(releases, int(first["run_id"]))  # type: ignore[arg-type]
    assert sorted(run.item_ids) == sorted(MIXED_SET_ANSWERS)  # cflue:2, rejected since, is in v1
    assert (run.release_name, run.item_set_hash) == ("v1", _release_hash(releases, "v1"))
    with releases.session() as session:
        econ = session.exec(
            sa.select(Prediction).where(Prediction.run_id == run.id, Prediction.item_id == "econ:1")
        ).one()[0]
    assert econ.revision_number == 1 and "Order these." not in econ.prompt
    recorded = first["run"]
    assert isinstance(recorded, dict)
    assert recorded["item_set"] == {"release": "v1", "hash": run.item_set_hash}

    # the approved set today is v2's items exactly: an ad hoc run has v2's hash
    today = _run(releases, int(evaluate(releases, model)["run_id"]))  # type: ignore[arg-type]
    assert today.release_name is None
    assert today.item_set_hash == _release_hash(releases, "v2")
    # a part of a release: drawn from it, its own items
    part = _run(
        releases,
        int(evaluate(releases, model, "--release", "v1", "--kind", "ordering")["run_id"]),  # type: ignore[arg-type]
    )
    assert part.release_name == "v1" and part.item_set_hash not in {
        _release_hash(releases, "v1"),
        _release_hash(releases, "v2"),
    }
    refused = run_cli(releases, "eval", "--model", model, "--release", "v1", "--status", "all")
    assert refused.exit_code == 1 and "--status does not apply" in refused.output
    unknown = run_cli(releases, "eval", "--model", model, "--release", "v9")
    assert unknown.exit_code == 1 and "no release named 'v9'" in unknown.output


def test_runs_on_different_releases_are_never_mixed(releases: Database, model: str) -> None:
    on_v1 = int(evaluate(releases, model, "--release", "v1")["run_id"])  # type: ignore[arg-type]
    on_v2 = int(evaluate(releases, model, "--release", "v2")["run_id"])  # type: ignore[arg-type]
    again_v1 = int(evaluate(releases, model, "--release", "v1")["run_id"])  # type: ignore[arg-type]

    compared = ok(run_cli(releases, "runs", "compare", str(on_v1), str(on_v2))).output
    assert "different item sets: A on release v1 (items" in compared
    assert "B on release v2 (items" in compared
    assert "1 of them at different revisions: econ:1" in compared
    as_json = json.loads(
        ok(run_cli(releases, "runs", "compare", str(on_v1), str(on_v2), "--json")).stdout
    )
    assert as_json["same_item_set"] is False and as_json["other_revisions"] == ["econ:1"]
    assert as_json["item_sets"]["a"]["release"] == "v1"
    same = ok(run_cli(releases, "runs", "compare", str(on_v1), str(again_v1))).output
    assert "same item set: release v1 (items" in same and "different item sets" not in same

    tables = json.loads(ok(run_cli(releases, "runs", "table", "--json")).stdout)
    by_release = {table["release"]: table for table in tables}
    assert set(by_release) == {"v1", "v2"}
    for name, table in by_release.items():
        assert table["title"].endswith(f"on release {name}") and table["notes"] == []
        runs = {run for row in table["rows"] for run in row["runs"]}
        assert runs == ({again_v1} if name == "v1" else {on_v2})  # the latest series of v1
    text = ok(run_cli(releases, "runs", "table")).output
    assert "on release v1" in text and "on release v2" in text


def test_a_run_on_a_release_says_so_in_runs_show_and_the_run_list(
    releases: Database, model: str
) -> None:
    """Before, only `runs compare` named a run's release: `runs show` and the list did not."""
    on_v1 = evaluate(releases, model, "--release", "v1")["run_id"]
    ad_hoc = evaluate(releases, model)["run_id"]
    hash_shown = _release_hash(releases, "v1")[:12]
    shown = ok(run_cli(releases, "runs", "show", str(on_v1))).stdout.splitlines()
    assert shown[1] == f"item set      release v1 (items {hash_shown})"
    plain = ok(run_cli(releases, "runs", "show", str(ad_hoc))).stdout.splitlines()
    assert not any(line.startswith(("item set", "release")) for line in plain)
    _header, ad_hoc_row, v1_row, *under = ok(run_cli(releases, "runs")).stdout.splitlines()
    assert ad_hoc_row.split()[0] == str(ad_hoc) and v1_row.split()[0] == str(on_v1)
    assert under == ["      release v1"]  # under its run, within 80 columns
    listed = json.loads(ok(run_cli(releases, "runs", "--json")).stdout)
    assert [run["release"] for run in listed] == [None, "v1"]


def test_runs_on_the_same_items_drawn_otherwise_are_compared_as_one_item_set(
    releases: Database, model: str
) -> None:
    """Today's approved items are v2's exactly: an ad hoc run and a run on v2 evaluated the
    same items.  Before, `runs compare` said they were different item sets (same hash)."""
    ad_hoc = int(evaluate(releases, model)["run_id"])  # type: ignore[arg-type]
    on_v2 = int(evaluate(releases, model, "--release", "v2")["run_id"])  # type: ignore[arg-type]
    compared = ok(run_cli(releases, "runs", "compare", str(ad_hoc), str(on_v2))).output
    digest = _release_hash(releases, "v2")[:12]
    assert f"same item set ({digest}): A ad hoc, B from release v2" in compared
    assert "different item sets" not in compared
    as_json = json.loads(
        ok(run_cli(releases, "runs", "compare", str(ad_hoc), str(on_v2), "--json")).stdout
    )
    assert as_json["same_item_set"] is True


def test_a_comparison_says_how_the_runs_filters_chose_their_items(
    releases: Database, model: str
) -> None:
    """Both on release v1, but one cut by --limit or --kind: the item-set note says which
    (before, it named two hashes of "release v1" and nothing else)."""
    whole = int(evaluate(releases, model, "--release", "v1")["run_id"])  # type: ignore[arg-type]
    limited = int(evaluate(releases, model, "--release", "v1", "--limit", "2")["run_id"])  # type: ignore[arg-type]
    ordering = int(evaluate(releases, model, "--release", "v1", "--kind", "ordering")["run_id"])  # type: ignore[arg-type]
    assert _run(releases, limited).item_ids == ["cflue:1", "cflue:2"]  # the first 2 by id

    compared = ok(run_cli(releases, "runs", "compare", str(whole), str(limited))).output
    note = compared.splitlines()[1]
    assert note.startswith("different item sets: A on release v1 (items ")
    assert note.endswith(
        "; B limited to 2 items, A not limited; compared on the 2 items both answered"
    )
    reversed_note = ok(run_cli(releases, "runs", "compare", str(limited), str(whole))).output
    assert "; A limited to 2 items, B not limited;" in reversed_note
    kinds = ok(run_cli(releases, "runs", "compare", str(whole), str(ordering))).output
    assert "; A any kind, B kind ordering; compared on the 2 items" in kinds
    as_json = json.loads(
        ok(run_cli(releases, "runs", "compare", str(whole), str(limited), "--json")).stdout
    )  # the JSON is as it was: the runs' filters are in `runs show --json`
    assert "filter_differences" not in as_json and as_json["same_item_set"] is False
    assert "the first N chosen, by item id as text" in " ".join(
        ok(run_cli(releases, "eval", "--help")).output.split()
    )


def test_filter_differences_name_each_filter_that_differs() -> None:
    assert filter_differences({"release": "v1"}, {"release": "v1"}) == ()
    assert filter_differences({"limit": 5}, {"limit": 20}) == ("A limited to 5 items, B to 20",)
    assert filter_differences(
        {"source": ["econ"], "status": ["approved"]}, {"source": ["cflue", "econ"]}
    ) == ("A status approved, B any status", "A source econ, B source cflue, econ")
    assert filter_differences({"kind": ["single", "multi"]}, {"kind": ["multi", "single"]}) == ()


def test_runs_that_share_no_items_are_not_compared(releases: Database, model: str) -> None:
    """Before: a table of zeros, exit 0."""
    orders = int(evaluate(releases, model, "--kind", "ordering")["run_id"])  # type: ignore[arg-type]
    singles = int(evaluate(releases, model, "--kind", "single")["run_id"])  # type: ignore[arg-type]
    refused = run_cli(releases, "runs", "compare", str(orders), str(singles))
    assert refused.exit_code == 1
    assert refused.output.strip().splitlines() == [
        f"error: runs {orders} and {singles} share no answered items: nothing to compare "
        "(A answered 2 items, B 1 item)"
    ]


def test_a_table_says_when_runs_side_by_side_saw_other_items(
    releases: Database, model: str, tmp_path: Path
) -> None:
    first = int(evaluate(releases, model)["run_id"])  # type: ignore[arg-type]
    decide(releases, "lena", "cflue:4", "rejected", reason="duplicate")
    other = tmp_path / "other.json"
    other.write_text(json.dumps(MIXED_SET_ANSWERS, ensure_ascii=False), encoding="utf-8")
    second = int(evaluate(releases, f"scripted:{other}")["run_id"])  # type: ignore[arg-type]
    (table,) = json.loads(ok(run_cli(releases, "runs", "table", "--json")).stdout)
    assert table["release"] is None and table["title"].endswith("on items chosen without a release")
    hashes = [_run(releases, run).item_set_hash or "" for run in (first, second)]
    assert table["notes"] == [
        "multi, ordering, single, truefalse (custom, generate): not the same items "
        f"(run {first} on items {hashes[0][:12]}; run {second} on items {hashes[1][:12]})"
    ]
    text = ok(run_cli(releases, "runs", "table")).output
    assert f"note: {table['notes'][0]}" in text


def test_rescore_reads_stored_outputs_again_and_writes_nothing(
    releases: Database, model: str
) -> None:
    run_id = int(evaluate(releases, model, "--release", "v2")["run_id"])  # type: ignore[arg-type]
    unchanged = ok(run_cli(releases, "runs", "rescore", str(run_id))).output
    assert "every figure is as stored (7 predictions)" in unchanged

    # as if an older reader had missed econ:2's order
    with releases.transaction() as session:
        session.execute(
            sa.update(Prediction)
            .where(Prediction.run_id == run_id, Prediction.item_id == "econ:2")
            .values(
                parsed_answer=None,
                correct=False,
                failure_kind="unparsed",
                scores={"correct": False},
            )
        )
    with releases.session() as session:
        before = [tuple(row) for row in session.execute(sa.select(Prediction.__table__))]
    text = ok(run_cli(releases, "runs", "rescore", str(run_id))).output
    assert "1 prediction read differently today" in text
    assert "econ:2: — -> BADC (answer, correct, failure, scores)" in text
    # Fractions in percent, as every run command prints them (two decimals: a change of
    # one prediction in thousands still shows); counts as they are; --json keeps fractions.
    changes = dict(line.strip().split(maxsplit=1) for line in text.splitlines()[1:])
    assert changes["accuracy"] == "85.71% -> 100.00%"
    assert changes["accuracy_ci"] == "[48.69, 97.43] -> [64.57, 100.00]"
    assert changes["by_kind.ordering.unparsed_rate"] == "50.00% -> 0.00%"
    assert changes["unparsed"] == "1 -> 0"
    as_json = json.loads(ok(run_cli(releases, "runs", "rescore", str(run_id), "--json")).stdout)
    assert as_json["changed"] is True and as_json["after"]["accuracy"] == 1.0
    assert {"figure": "unparsed", "stored": 1, "now": 0} in as_json["figures"]
    with releases.session() as session:
        assert [tuple(row) for row in session.execute(sa.select(Prediction.__table__))] == before

    with releases.transaction() as session:
        session.execute(sa.update(EvalRun).where(EvalRun.id == run_id).values(status="running"))
    refused = run_cli(releases, "runs", "rescore", str(run_id))
    assert refused.exit_code == 1 and "only a finished run is rescored" in refused.output


def test_the_migration_gives_earlier_runs_the_hash_of_what_they_evaluated(
    releases: Database, model: str
) -> None:
    on_v1 = int(evaluate(releases, model, "--release", "v1")["run_id"])  # type: ignore[arg-type]
    today = int(evaluate(releases, model)["run_id"])  # type: ignore[arg-type]
    expected = {run: _run(releases, run).item_set_hash for run in (on_v1, today)}
    with releases.engine.begin() as connection:
        connection.execute(sa.update(EvalRun).values(item_set_hash=None, release_name=None))
        assert backfill_item_sets(connection) == 2
    assert {run: _run(releases, run).item_set_hash for run in (on_v1, today)} == expected


def test_a_release_run_of_one_kind_takes_the_kind_each_item_was_frozen_in(
    releases: Database, model: str
) -> None:
    """An edit after v1 made cflue:1 (single in v1) a multi item: `--release v1 --kind
    single` still evaluates it, as frozen, and `--kind multi` does not. Before, the kind
    was the item's current one, so the multi run asked a single-choice revision and the
    single run missed it."""
    edit_item(releases, "lena", "cflue:1", ItemEdit(note="two may be right", kind=ItemKind.MULTI))
    single = evaluate(releases, model, "--release", "v1", "--kind", "single")
    multi = evaluate(releases, model, "--release", "v1", "--kind", "multi")
    single_run = _run(releases, int(single["run_id"]))  # type: ignore[arg-type]
    multi_run = _run(releases, int(multi["run_id"]))  # type: ignore[arg-type]
    assert sorted(single_run.item_ids) == ["cflue:1", "cflue:2"]
    assert sorted(multi_run.item_ids) == ["cflue:3", "cflue:4"]
    assert set(single["by_kind"]) == {"single"}  # type: ignore[arg-type]
    assert set(multi["by_kind"]) == {"multi"}  # type: ignore[arg-type]
