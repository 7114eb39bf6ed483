"""The one evaluation core: `vetbench eval` and the app's evaluation screen (F4) plan and
make runs through ``evaluator.session``, so the same choices make the same stored runs."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import click
import pytest
from eval_helpers import MIXED_SET_ANSWERS, mixed_set, ok
from helpers import FIXTURES, ScreenHost, run_cli, store_person, wait_until
from sqlmodel import col, select
from test_tui_evaluation import form_message
from textual.pilot import Pilot
from textual.widgets import Checkbox, Input, Select

from db.engine import Database
from db.models import EvalRun, Prediction
from db.vocabulary import EvalMode, EvalProtocol, Role
from evaluator.backends.scripted import ScriptedBackend
from evaluator.run_create import RunSetupError
from evaluator.run_params import Repeat
from evaluator.session import (
    DEFAULT_SHOTS,
    MOST_NEW_TOKENS,
    MOST_REPEATS,
    EvalChoices,
    PlannedRun,
    SeriesControls,
    check_choices,
    plan_runs,
    run_series,
    series_figures,
)
from reviewer.adjudication import decide
from reviewer.cli.eval_commands import eval_command
from reviewer.tui.screens.evaluation import EvaluationScreen

SESSION_KEYS = ("pid", "session_started_at", "session_done_before", "session_device")


def test_plans_each_shot_setting_times_each_repeat_with_its_seed() -> None:
    assert plan_runs(EvalChoices()) == (PlannedRun(DEFAULT_SHOTS, 1234, None),)
    lone = plan_runs(EvalChoices(shots=0, seed=7, repeats=2), series="s")
    assert lone == (PlannedRun(0, 7, Repeat("s", 0, 2)), PlannedRun(0, 8, Repeat("s", 1, 2)))
    paper = plan_runs(EvalChoices(protocol=EvalProtocol.ECONLOGICQA, repeats=2))
    assert [(run.shots, run.seed) for run in paper] == [(1, 1234), (1, 1235), (5, 1234), (5, 1235)]
    series = {run.repeat.series for run in paper if run.repeat is not None}
    assert len(series) == 1 and len(series.pop()) == 12  # one new series id for all four
    # one of the protocol's own settings, asked for: that run alone
    five = plan_runs(EvalChoices(protocol=EvalProtocol.ECONLOGICQA, shots=5))
    assert five == (PlannedRun(5, 1234, None),)
    assert plan_runs(EvalChoices(protocol=EvalProtocol.CFLUE, shots=0)) == (
        PlannedRun(0, 1234, None),
    )


@pytest.mark.parametrize(
    ("choices", "message"),
    [
        (
            EvalChoices(protocol=EvalProtocol.CFLUE, shots=1),
            "fixes its shots (0); leave out --shots",
        ),
        (
            EvalChoices(protocol=EvalProtocol.ECONLOGICQA, shots=0),
            "fixes its shots (1 and 5); leave out --shots, or give one of those",
        ),
        (
            EvalChoices(protocol=EvalProtocol.ECONLOGICQA, shots_by_kind={"ordering": 0}),
            "fixes its shots (1 and 5); leave out --shots-for",  # the option given, alone
        ),
        (
            EvalChoices(protocol=EvalProtocol.CFLUE, shots_by_kind={"single": 2}),
            "the cflue protocol fixes its shots (0); leave out --shots-for",
        ),
        (
            EvalChoices(protocol=EvalProtocol.ECONLOGICQA, shots=3, shots_by_kind={"ordering": 0}),
            "(1 and 5); leave out --shots and --shots-for, or give one of those",
        ),
        (EvalChoices(protocol=EvalProtocol.CFLUE, mode=EvalMode.SCORE), "generates answers"),
        (EvalChoices(repeats=0), "repeats must be from 1 to 100 (0)"),
        (EvalChoices(repeats=101), "repeats must be from 1 to 100 (101)"),
        (EvalChoices(max_new_tokens=0), "max new tokens must be from 1 to 8192 (0)"),
        (EvalChoices(max_new_tokens=8193), "max new tokens must be from 1 to 8192 (8193)"),
    ],
)
def test_refuses_choices_that_cannot_make_a_run(choices: EvalChoices, message: str) -> None:
    with pytest.raises(RunSetupError, match=re.escape(message)) as raised:
        plan_runs(choices)
    if choices.shots is None:  # an option not given is never the one to leave out
        assert "--shots," not in str(raised.value) and not str(raised.value).endswith("--shots")


def test_the_command_line_takes_the_ranges_the_core_takes() -> None:
    """`vetbench eval` says its ranges before anything runs (click); F4 has the core's word
    for them: the same numbers."""
    ranges = {
        option.name: (option.type.min, option.type.max)
        for option in eval_command.params
        if isinstance(option.type, click.IntRange)
    }
    assert ranges["repeats"] == (1, MOST_REPEATS)
    assert ranges["max_new_tokens"] == (1, MOST_NEW_TOKENS)


def test_an_empty_selection_is_refused_before_a_model_loads(database: Database) -> None:
    mixed_set(database)
    with pytest.raises(RunSetupError, match="no items to evaluate"):
        check_choices(database, EvalChoices(sources=("nowhere",)))
    assert len(check_choices(database, EvalChoices(shots=1, kinds=("single",))).items) == 2


def test_runs_a_series_reporting_through_one_callback(database: Database) -> None:
    mixed_set(database)
    # The oracle answers in the shown labels: 0-shot repeats differ only in option order.
    backend = ScriptedBackend(model="oracle", oracle=True)
    updates: list[Any] = []
    outcome = run_series(
        database,
        backend,
        EvalChoices(shots=0, repeats=2, permute_options=True),
        actor="tester",
        controls=SeriesControls(on_update=updates.append),
    )
    assert len(outcome.run_ids) == 2 and not outcome.failed
    starts = [update for update in updates if update.starting]
    assert [(u.run_id, u.position, u.runs) for u in starts] == [
        (outcome.run_ids[0], 0, 2),
        (outcome.run_ids[1], 1, 2),
    ]
    assert len(updates) == 2 + 2 * 8  # a start and one update per prediction, per run
    assert updates[-1].progress.done == 8 and updates[-1].progress.correct == 8
    figures = series_figures(database, outcome.run_ids)
    (spread,) = figures.spreads
    assert spread.shots == 0 and spread.run_ids == outcome.run_ids
    assert spread.figures["accuracy"].mean == 1.0 and spread.figures["accuracy"].sd == 0.0
    data = json.loads(json.dumps(figures.to_json()))
    assert data["run_id"] == outcome.run_ids[0] and data["runs"] == list(outcome.run_ids)


def _stored_runs(database: Database, run_ids: list[int]) -> list[dict[str, Any]]:
    """The stored runs and their predictions, less what differs between any two sessions:
    ids, times, the process and the series id (a new one per series)."""
    shown = []
    with database.session() as session:
        for run_id in run_ids:
            run = session.get(EvalRun, run_id)
            assert run is not None
            params = {k: v for k, v in run.params.items() if k not in SESSION_KEYS}
            if params.get("repeat"):
                params["repeat"] = {**params["repeat"], "series": "—"}
            predictions = session.exec(
                select(Prediction).where(Prediction.run_id == run_id).order_by(col(Prediction.id))
            ).all()
            shown.append(
                {
                    "model": run.model,
                    "backend": run.backend,
                    "mode": run.mode,
                    "shots": run.shots,
                    "status": run.status,
                    "error": run.error,
                    "filters": run.filters,
                    "item_ids": run.item_ids,
                    "params": params,
                    "predictions": sorted(
                        (p.item_id, p.prompt_hash, p.raw_output, p.parsed_answer, p.correct)
                        for p in predictions
                    ),
                }
            )
    return shown


async def _start_and_finish(pilot: Pilot[None], screen: EvaluationScreen) -> None:
    """Start (ctrl+s) and wait until Start can be pressed again: every planned run ended."""
    await pilot.press("ctrl+s")
    await pilot.pause()
    await wait_until(pilot, lambda: not screen.query_one("#start").disabled, "the runs")


def _runs_by_cli_and_app(
    database: Database, *, by_cli: int, by_app: int
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The stored runs, oldest first: the CLI's (made first), then the app's."""
    with database.session() as session:
        run_ids = [
            run.id or 0 for run in session.exec(select(EvalRun).order_by(col(EvalRun.id))).all()
        ]
    assert len(run_ids) == by_cli + by_app
    return _stored_runs(database, run_ids[:by_cli]), _stored_runs(database, run_ids[by_cli:])


async def test_the_app_and_the_cli_make_identical_runs_for_the_same_choices(
    database: Database, tmp_path: Path
) -> None:
    """Protocol, shots, repeats, permutation, dtype, answer budget and shot files chosen in
    F4's form make the runs `vetbench eval` makes with the same flags: the same stored rows
    (the form's "Shots from" takes a pattern for the files, as a shell would expand it)."""
    mixed_set(database)
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps(MIXED_SET_ANSWERS, ensure_ascii=False), encoding="utf-8")
    spec = f"scripted:{answers}"
    ok(
        run_cli(
            database,
            "eval",
            "--model",
            spec,
            "--protocol",
            "custom",
            "--shots",
            "1",
            "--kind",
            "multi",
            "--repeats",
            "2",
            "--permute-options",
            "--dtype",
            "float32",
            "--max-new-tokens",
            "24",
            "--shot-file",
            str(FIXTURES / "shots_multi.jsonl"),
            "--json",
        )
    )
    screen = EvaluationScreen(database, "lead")
    async with ScreenHost(screen).run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen.query_one("#model-spec", Input).value = spec
        screen.query_one("#protocol", Select).value = "custom"
        screen.query_one("#kind", Select).value = "multi"
        screen.query_one("#shots", Select).value = "1"
        screen.query_one("#dtype", Select).value = "float32"
        screen.query_one("#shots-from", Input).value = str(FIXTURES / "shots_mul*.jsonl")
        for selector, typed in (("#repeats", "2"), ("#max-tokens", "24")):
            field = screen.query_one(selector, Input)
            field.value = ""
            field.focus()
            await pilot.press(*typed)
        screen.query_one("#permute", Checkbox).focus()
        await pilot.press("space")
        await _start_and_finish(pilot, screen)
    by_cli, by_app = _runs_by_cli_and_app(database, by_cli=2, by_app=2)
    assert by_app == by_cli
    assert by_cli[0]["params"]["permute_options"] is True
    assert by_cli[0]["params"]["shot_file"] == str(FIXTURES / "shots_multi.jsonl")
    assert by_cli[0]["params"]["max_new_tokens"] == 24 and by_cli[1]["params"]["seed"] == 1235
    assert by_cli[0]["status"] == "finished" and len(by_cli[0]["predictions"]) == 2


async def test_the_app_and_the_cli_make_identical_score_runs_on_a_release(
    database: Database, tmp_path: Path
) -> None:
    """Score mode and a release's frozen items, chosen in F4's form under Mode and Items,
    make the run `vetbench eval --mode score --release NAME` makes; a release made while
    the screen is open is offered after a refresh (ctrl+r)."""
    mixed_set(database)
    store_person(database, "lena", Role.LEAD)
    ok(run_cli(database, "release", "create", "v1", "--as", "lena"))
    decide(database, "lena", "cflue:2", "rejected", reason="flawed", comment="needs a table")
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps(MIXED_SET_ANSWERS, ensure_ascii=False), encoding="utf-8")
    spec = f"scripted:{answers}"
    common = ("--model", spec, "--shots", "0", "--mode", "score", "--release", "v1", "--json")
    ok(run_cli(database, "eval", *common))
    screen = EvaluationScreen(database, "lead")
    async with ScreenHost(screen).run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        items = screen.query_one("#items", Select)
        # Select has no public list of its options (Textual 8.2.8)
        assert [value for _label, value in items._options] == ["approved", "release:v1"]
        ok(run_cli(database, "release", "create", "v2", "--as", "lena"))
        await pilot.press("ctrl+r")
        await pilot.pause()
        offered = [(str(label), value) for label, value in items._options]
        assert offered == [
            ("approved items", "approved"),
            ("release v2", "release:v2"),
            ("release v1", "release:v1"),
        ]
        screen.query_one("#model-spec", Input).value = spec
        screen.query_one("#shots", Select).value = "0"
        screen.query_one("#mode", Select).value = "score"
        items.value = "release:v1"
        await _start_and_finish(pilot, screen)
    by_cli, by_app = _runs_by_cli_and_app(database, by_cli=1, by_app=1)
    assert by_app == by_cli
    assert by_cli[0]["mode"] == "score" and by_cli[0]["filters"]["release"] == "v1"
    # v1 froze cflue:2 before its rejection: the release's items, not today's approved ones
    assert "cflue:2" in by_cli[0]["item_ids"] and by_cli[0]["status"] == "finished"


async def test_the_app_refuses_choices_the_core_refuses(database: Database) -> None:
    mixed_set(database)
    screen = EvaluationScreen(database, "lead")
    async with ScreenHost(screen).run_test(size=(120, 35)) as pilot:
        await pilot.pause()
        screen.query_one("#model-spec", Input).value = "scripted:/no/such/file.json"
        screen.query_one("#protocol", Select).value = "cflue"
        screen.query_one("#shots", Select).value = "1"
        await pilot.pause()  # the form's changes are handled, as a person's are, before Start
        await pilot.press("ctrl+s")
        said = "the cflue protocol fixes its shots (0)"
        await wait_until(pilot, lambda: said in form_message(screen), said)  # under the form
        assert not screen.query_one("#start").disabled
        screen.query_one("#protocol", Select).value = "custom"
        screen.query_one("#shots-from", Input).value = "no_such_shots.jsonl"
        await pilot.pause()
        await pilot.press("ctrl+s")
        said = "Shots from: no file 'no_such_shots.jsonl'"
        await wait_until(pilot, lambda: said in form_message(screen), said)
        assert not screen.query_one("#start").disabled  # refused before anything began
    with database.session() as session:
        assert session.exec(select(EvalRun)).all() == []


def test_shots_from_takes_shot_files_or_one_source_or_status(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """F4's "Shots from": files (a pattern stands for what it matches), or one word that
    names no file, a source or status; a file that is not there is refused before a run."""
    from reviewer.tui.screens.evaluation_form import shots_from_field

    for name in ("shots_a.jsonl", "shots_b.jsonl", "pending"):
        (tmp_path / name).write_text("", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert shots_from_field("  ") == ((), None)
    assert shots_from_field("cflue") == ((), "cflue")
    assert shots_from_field("shots_*.jsonl") == (
        (Path("shots_a.jsonl"), Path("shots_b.jsonl")),
        None,
    )
    assert shots_from_field("pending") == ((Path("pending"),), None)  # a file of that name
    absolute = shots_from_field(f"{tmp_path}/shots_b.jsonl {tmp_path}/shots_a.jsonl")
    assert absolute == ((tmp_path / "shots_b.jsonl", tmp_path / "shots_a.jsonl"), None)
    for text, said in (
        ("nothing_*.jsonl", "no file matches 'nothing_*.jsonl'"),
        ("missing.jsonl", "no file 'missing.jsonl'"),
        ("shots_a.jsonl cflue", "no file 'cflue' (give shot files, or one source or status)"),
    ):
        with pytest.raises(RunSetupError, match=re.escape(said)):
            shots_from_field(text)
