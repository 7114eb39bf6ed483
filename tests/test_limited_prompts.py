"""A limited run asks the same questions as the full run: its shots are drawn from outside
the whole evaluated set, not just outside the items the limit keeps, so `--limit N`
evaluates the first N items with the prompts of the full run; `runs compare` says whether
the paired items' prompts are the same."""

from __future__ import annotations

from dataclasses import replace

import pytest
from eval_helpers import mixed_set
from helpers import APPROVED_ITEMS, run_cli
from sqlmodel import col, select

from db.engine import Database
from db.models import Prediction
from evaluator.backends.scripted import ScriptedBackend
from evaluator.run_create import RunSetupError, ShotSource, check_shots, select_run_items
from evaluator.runner import create_run, execute_run


def _prompts(
    database: Database, shots: int, limit: int | None = None
) -> tuple[int, dict[str, str]]:
    """A finished oracle run of ``shots`` shots on the approved items (the first ``limit``),
    and its stored prompt hashes by item id."""
    backend = ScriptedBackend(model="oracle", oracle=True)
    run_id = create_run(
        database, backend.info, shots=shots, item_filter=replace(APPROVED_ITEMS, limit=limit)
    )
    execute_run(database, run_id, backend)
    with database.session() as session:
        rows = session.exec(
            select(Prediction.item_id, Prediction.prompt_hash).where(
                col(Prediction.run_id) == run_id
            )
        ).all()
    return run_id, dict(rows)


def test_a_limited_run_asks_the_full_runs_questions(database: Database) -> None:
    """The approved set holds two orders and two single-answer items, and agreed items of
    each kind serve as shots.  Limited to 1 or 3 items, the other approved order (or
    single-answer item) lay outside the evaluated items and used to be drawn as the
    shot (approved items first), so `--limit` changed the prompts; now every limited run's
    prompts are the full run's for the same items."""
    mixed_set(database)
    _, full = _prompts(database, shots=1)
    assert len(full) == 8
    for limit in (1, 2, 3, 5):
        _, limited = _prompts(database, shots=1, limit=limit)
        assert len(limited) == limit
        assert limited == {item_id: full[item_id] for item_id in limited}, limit


def test_runs_compare_says_whether_the_paired_prompts_are_the_same(database: Database) -> None:
    mixed_set(database)
    full, _ = _prompts(database, shots=1)
    limited, _ = _prompts(database, shots=1, limit=3)
    zero_shot, _ = _prompts(database, shots=0, limit=3)

    same = run_cli(database, "runs", "compare", str(full), str(limited)).output.splitlines()
    assert same[2] == "same prompts for the 3 paired items"
    other = run_cli(database, "runs", "compare", str(full), str(zero_shot)).output
    assert (
        "different prompts for 3 of the 3 paired items (other shots, templates or layout): "
        "econ:1, econ:2, cflue:1"
    ) in other
    as_json = run_cli(database, "runs", "compare", str(full), str(zero_shot), "--json").output
    assert "prompt" not in as_json  # the JSON is as it was


def test_a_limited_selection_checks_the_shots_the_full_run_would_leave(
    database: Database,
) -> None:
    """The shot check before a limited run draws as the run will: outside the whole set.
    Two orders approved and none other to draw from: a 1-shot run on the first order is
    refused, as the full run is (it used to take the second order as the shot)."""
    mixed_set(database)
    selection = select_run_items(database, replace(APPROVED_ITEMS, kinds=("ordering",), limit=1))
    assert [item.id for item in selection.items] == ["econ:1"]
    assert [item.id for item in selection.whole_set] == ["econ:1", "econ:2"]
    source = ShotSource.of(None, "approved")
    with pytest.raises(RunSetupError, match="ordering would get 0 of 1"):
        check_shots(database, selection, [(1, None)], source)
