"""The evaluation screen, driven with Pilot: it shows what runs wrote to the database (live,
whoever wrote it), starts and stops runs of its own, ranks runs, and lists suspect keys."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import replace
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from eval_helpers import MIXED_SET_ANSWERS
from helpers import APPROVED_ITEMS, ScreenHost, notices, screen_text, settle, wait_until
from sqlalchemy.exc import OperationalError
from sqlmodel import select
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import Checkbox, DataTable, Input, Static, TabbedContent
from textual.worker import WorkerFailed

from db.engine import Database
from db.models import EvalRun, Prediction
from db.vocabulary import EvalMode, EvalProtocol, RunStatus
from db.words import counted
from evaluator.backends.scripted import ScriptedBackend
from evaluator.item_filter import ItemFilter
from evaluator.results import RunOverview
from evaluator.runner import create_run, execute_run
from reviewer.tui.app import ReviewApp
from reviewer.tui.screens.evaluation import EvaluationScreen, leaderboard_bars


def evaluate(database: Database, backend: ScriptedBackend, kinds: tuple[str, ...] = ()) -> int:
    run_id = create_run(
        database,
        backend.info,
        mode="generate",
        shots=1,
        item_filter=ItemFilter(statuses=("approved",), kinds=kinds),
    )
    execute_run(database, run_id, backend)
    return run_id


@asynccontextmanager
async def mounted(screen: EvaluationScreen) -> AsyncIterator[Pilot[None]]:
    """``screen`` alone in a 140 x 45 app, mounted; the pilot driving it."""
    async with ScreenHost(screen).run_test(size=(140, 45)) as pilot:
        await pilot.pause()
        yield pilot


async def open_f4(app: ReviewApp, pilot: Pilot[None], backend: ScriptedBackend) -> EvaluationScreen:
    """F4 opened from the review app with its key, its models ``backend``."""
    await pilot.pause()
    await pilot.press("f4")
    await wait_until(pilot, lambda: isinstance(app.screen, EvaluationScreen), "the screen")
    screen = app.screen
    assert isinstance(screen, EvaluationScreen) and screen.person_name == "alice"
    screen.open_model = lambda _spec, _settings: backend
    return screen


def held_backend(answer: int) -> tuple[ScriptedBackend, threading.Event, threading.Event]:
    """A scripted model that holds before its ``answer``-th answer (of all its runs), the
    event set when it holds, and the one that lets it go on."""
    held, release = threading.Event(), threading.Event()
    answers = [0]

    def gate(_position: int, _item_id: str) -> None:
        answers[0] += 1
        if answers[0] == answer:
            held.set()
            release.wait(timeout=30)

    return ScriptedBackend(MIXED_SET_ANSWERS, model="slow", before_answer=gate), held, release


def allow_fewer_shots(screen: EvaluationScreen) -> None:
    screen.query_one("#fewer-shots", Checkbox).value = True


def cells(table: DataTable[Any], key: str) -> list[str]:
    return [str(cell) for cell in table.get_row(key)]


def static_text(screen: EvaluationScreen, selector: str) -> str:
    content = screen.query_one(selector, Static).render()
    return content.plain if hasattr(content, "plain") else str(content)


def form_message(screen: EvaluationScreen) -> str:
    """What the start form says about the last Start that made no run ("" when hidden)."""
    said = screen.query_one("#start-message", Static)
    return static_text(screen, "#start-message") if said.display else ""


async def test_shows_run_figures_leaderboard_and_suspects(
    database: Database, approved: list[str]
) -> None:
    good = dict(MIXED_SET_ANSWERS)
    good["cflue:2"] = "答案：A"  # wrong
    good["econ:2"] = "I cannot tell."  # unparsed
    # everything A: right only where the key is A
    weak = {item: "答案：A" for item in MIXED_SET_ANSWERS}
    weak["econ:1"] = "A, B, C, D"
    evaluate(database, ScriptedBackend(good, model="model-good"))
    weak_run = evaluate(database, ScriptedBackend(weak, model="model-weak"))

    screen = EvaluationScreen(database, "lead")
    async with ScreenHost(screen).run_test(size=(140, 45)) as pilot:
        figures = screen.query_one("#figures", DataTable)
        await wait_until(pilot, lambda: figures.row_count > 0, "the run's figures")
        # the newest run is followed when no run is running
        assert f"Run {weak_run}" in static_text(screen, "#run-title")
        screen.followed_run_id = weak_run - 1
        screen.action_refresh()
        await wait_until(
            pilot, lambda: "model-good" in static_text(screen, "#run-title"), "the chosen run"
        )
        # 6 of 8 right: 75.0%, Wilson interval [40.9, 92.9]
        row = cells(figures, "all")
        assert row[:5] == ["all", "8", "75.0%", "[40.9, 92.9]", "12.5%"]
        assert cells(figures, "ordering")[:3] == ["ordering", "2", "50.0%"]
        assert "pairwise" in cells(figures, "ordering")[6]
        assert cells(figures, "multi")[6].startswith("weighted F1")
        assert "8 / 8 items" in static_text(screen, "#speed")

        predictions = screen.query_one("#predictions", DataTable)
        await wait_until(pilot, lambda: predictions.row_count == 8, "latest predictions")
        assert cells(predictions, "cflue:2")[2:] == ["C", "A", "wrong"]
        assert cells(predictions, "econ:2")[3:] == ["—", "unparsed"]

        runs = screen.query_one("#runs", DataTable)
        assert runs.row_count == 2
        ranked = [str(runs.get_row_at(i)[1]) for i in range(2)]
        assert ranked == ["model-good", "model-weak"]
        chart = static_text(screen, "#accuracy-chart")
        assert "model-good" in chart and "75.0%" in chart and "█" in chart

        suspects = screen.query_one("#suspects", DataTable)
        await wait_until(pilot, lambda: suspects.row_count > 0, "suspect keys")
        # both models answer A on cflue:2 (key C): a suspect key; nothing else is shared-wrong
        assert [str(suspects.get_row_at(i)[0]) for i in range(suspects.row_count)] == ["cflue:2"]
        assert cells(suspects, "cflue:2")[2:] == ["C", "A", "model-good, model-weak"]


async def test_follows_a_run_written_by_someone_else(
    database: Database, approved: list[str]
) -> None:
    screen = EvaluationScreen(database, "watcher")
    async with mounted(screen) as pilot:
        assert "No evaluation run yet" in static_text(screen, "#run-title")
        # another process would do exactly this: create a run and write predictions
        evaluate(
            database, ScriptedBackend(MIXED_SET_ANSWERS, model="elsewhere"), kinds=("ordering",)
        )
        figures = screen.query_one("#figures", DataTable)
        await wait_until(
            pilot,
            lambda: figures.row_count > 0 and cells(figures, "all")[1] == "2",
            "the other run's predictions",
        )
        assert cells(figures, "all")[2] == "100.0%"
        assert "elsewhere" in static_text(screen, "#run-title")


async def test_no_progress_bar_before_any_run(database: Database, approved: list[str]) -> None:
    """With no run at all, the bar animated an indeterminate "--%", as if something were
    going on; it shows once there is a run."""
    screen = EvaluationScreen(database, "watcher")
    async with mounted(screen) as pilot:
        bar = screen.query_one("#progress")
        await wait_until(
            pilot, lambda: "Choose a model" in static_text(screen, "#run-title"), "no run read"
        )
        assert not bar.display and "--%" not in screen_text(pilot.app)
        evaluate(database, ScriptedBackend(MIXED_SET_ANSWERS, model="other"), kinds=("ordering",))
        await wait_until(pilot, lambda: bar.display, "the bar of the run")
        await wait_until(pilot, lambda: "100%" in screen_text(pilot.app), "the run's progress")


async def test_a_runs_notes_are_under_it_and_its_notice_one_line_at_80_columns(
    database: Database, approved: list[str]
) -> None:
    """A run that starts with notes said them all in one toast, for 12 s: at 80x24 it
    covered the right half of the screen and ran past its bottom edge, over the run's
    progress.  The notes are under the run, in full; the notice is one line."""
    from textual.widgets._toast import Toast, ToastRack  # no public module (8.2.8)

    from reviewer.tui.app import make_app

    backend = ScriptedBackend(MIXED_SET_ANSWERS, model="noted")
    app = make_app(database, "alice")
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        screen = await open_f4(app, pilot, backend)
        allow_fewer_shots(screen)  # the small set has 1 shot per kind: notes say so
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: not screen.query_one("#start").disabled, "the run's end")
        panel = screen.query_one("#run-notes", Static)
        await wait_until(pilot, lambda: panel.display, "the run's notes")
        with database.session() as session:
            run = session.get(EvalRun, 1)
            assert run is not None and run.status == "finished"
            notes = run.params["shot_notes"]
        shown = " ".join(static_text(screen, "#run-notes").split())
        assert notes and all(" ".join(note.split()) in shown for note in notes), shown
        started = [said for said in notices(app) if "started" in said]
        assert started == [f"Run 1 started: {counted(len(notes), 'note')} below"]
        bar = screen.query_one("#progress")
        assert bar.display and screen.region.contains_region(bar.region)

        def toasts() -> list[Toast]:
            return [toast for rack in screen.query(ToastRack) for toast in rack.query(Toast)]

        await wait_until(pilot, lambda: len(toasts()) == len(notices(app)), "the notices")
        assert "Run 1 started" in screen_text(app)
        for toast in toasts():  # one line each, over none of the run
            assert toast.region.height == 1, toast.region
            assert not toast.region.overlaps(bar.region), toast.region
            assert not toast.region.overlaps(panel.region), toast.region


@pytest.mark.parametrize("size", [(120, 35), (80, 24)])
async def test_the_figures_fit_the_width_their_also_column_wrapped(
    database: Database, approved: list[str], size: tuple[int, int]
) -> None:
    """At 120 columns the figures' "also" column ran off the right edge ("…chance 6.7%"
    ended in "c"): it wraps in the width the other columns leave, and again after the
    terminal is resized."""
    evaluate(database, ScriptedBackend(MIXED_SET_ANSWERS, model="every-kind"))
    screen = EvaluationScreen(database, "lead")
    async with ScreenHost(screen).run_test(size=(140, 45)) as pilot:
        figures = screen.query_one("#figures", DataTable)
        await wait_until(pilot, lambda: figures.row_count > 0, "the run's figures")
        also = cells(figures, "all")[-1]
        assert also.count(",") >= 2, also  # several figures: wider than 120 columns leave
        await pilot.resize_terminal(*size)
        await wait_until(pilot, lambda: screen.size.width == size[0], "the new width")

        def fitted() -> bool:
            return figures.virtual_size.width <= figures.scrollable_content_region.width

        await wait_until(pilot, fitted, f"the figures fitted in {size[0]} columns")
        assert cells(figures, "all")[-1] == also  # all of it, wrapped
        figures.scroll_visible(animate=False)
        await pilot.pause()
        shown = screen_text(pilot.app)
        assert also.split()[-1] in shown and also.split()[0] in shown


async def test_starts_a_run_of_a_scripted_model_through_the_registry(
    database: Database, approved: list[str], tmp_path: Path
) -> None:
    """The model field takes any spec the registry knows: here a script file."""
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps(MIXED_SET_ANSWERS, ensure_ascii=False), encoding="utf-8")
    screen = EvaluationScreen(database, "ann")
    async with mounted(screen) as pilot:
        allow_fewer_shots(screen)  # the small set has 1 shot per kind; 5 is the default
        screen.query_one("#model-spec").value = f"scripted:{answers}"  # type: ignore[attr-defined]
        await pilot.click("#start")
        predictions = screen.query_one("#predictions", DataTable)
        await wait_until(pilot, lambda: predictions.row_count == 8, "the run's predictions")
        await wait_until(pilot, lambda: not screen.query_one("#start").disabled, "Start again")
        with database.session() as session:
            run = session.get(EvalRun, 1)
            assert run is not None and run.model == str(answers.resolve())
            assert run.backend == "scripted" and run.status == "finished"
            assert run.shots == 5 and run.filters["status"] == ["approved"]
            notes = run.params["shot_notes"]
        # the notes `vetbench eval` starts with (here: fewer shots than asked), said here too:
        # in full under the run, and in a notice of one line that points to them
        shown = static_text(screen, "#run-notes")
        assert shown.startswith(f"Run 1 started: scripted:{answers}")
        assert notes and all(note in shown for note in notes), shown
        assert f"Run 1 started: {counted(len(notes), 'note')} below" in notices(screen.app)
        assert cells(screen.query_one("#figures", DataTable), "all")[2] == "100.0%"
        predictions.move_cursor(row=predictions.get_row_index("cflue:1"))
        await pilot.pause()
        assert "答案：" in static_text(screen, "#prediction-detail")  # the prompt is shown


HOSTILE = "B [bold red]x[/] [link=https://evil.example]click[/link] \x1b]0;owned\x07\x1b[31mred\x00"


async def test_model_and_item_text_is_shown_literally(database: Database) -> None:
    """Markup, links, ANSI/OSC escapes and control characters in a model's output, an item id
    and a model name are shown as characters: nothing is interpreted, nothing reaches the
    terminal."""
    from db.items import add_item
    from db.validation import ItemDraft

    item_id = "evil:[bold]1[/bold]\x1b[2J"
    with database.transaction() as session:
        add_item(
            session,
            item_id,
            "evil",
            ItemDraft(
                kind="single",
                prompt="Which [i]one[/i]?",
                choices={"A": "a", "B": "b"},
                key="B",
            ),
            author="test",
        )
    model = "[blink]m[/blink]\x1b[5m"
    backend = ScriptedBackend({item_id: HOSTILE}, model=model)
    run_id = create_run(database, backend.info, shots=0, item_filter=ItemFilter(sources=("evil",)))
    execute_run(database, run_id, backend)
    screen = EvaluationScreen(database, "lead")
    async with ScreenHost(screen).run_test(size=(160, 50)) as pilot:
        predictions = screen.query_one("#predictions", DataTable)
        await wait_until(pilot, lambda: predictions.row_count == 1, "the prediction")
        await pilot.pause()
        detail = static_text(screen, "#prediction-detail")
        # the NUL is stored as U+FFFD (PostgreSQL text cannot hold it), on every database
        visible_output = (
            "B [bold red]x[/] [link=https://evil.example]click[/link] ␛]0;owned␇␛[31mred\ufffd"
        )
        assert visible_output in detail
        assert "evil:[bold]1[/bold]␛[2J" in detail and "Which [i]one[/i]?" in detail
        assert "\x1b" not in detail and "\x07" not in detail and "\x00" not in detail
        rendered = screen.query_one("#prediction-detail", Static).render()
        assert not any(span.style and "link" in str(span.style) for span in rendered.spans)  # type: ignore[union-attr]
        assert "[blink]m[/blink]␛[5m" in static_text(screen, "#run-title")
        (row,) = [predictions.get_row_at(0)]
        assert str(row[0]) == "evil:[bold]1[/bold]␛[2J"
        runs = screen.query_one("#runs", DataTable)
        assert str(runs.get_row_at(0)[1]) == "[blink]m[/blink]␛[5m"
        assert "[blink]m[/blink]␛[5m" in static_text(screen, "#accuracy-chart")


async def test_stop_halts_a_run_after_the_current_prediction(
    database: Database, approved: list[str]
) -> None:
    release = threading.Event()
    first_stored = threading.Event()

    def gate(position: int, _item_id: str) -> None:
        if position:  # hold the run after its first answer
            first_stored.set()
            release.wait(timeout=30)

    backend = ScriptedBackend(MIXED_SET_ANSWERS, model="slow", before_answer=gate)
    screen = EvaluationScreen(database, "ann", open_model=lambda _spec, _settings: backend)
    async with mounted(screen) as pilot:
        allow_fewer_shots(screen)  # the small set has 1 shot per kind; 5 is the default
        await pilot.press("ctrl+s")
        await wait_until(pilot, first_stored.is_set, "the first prediction")
        await pilot.press("ctrl+x")
        release.set()
        await wait_until(pilot, lambda: backend.closed, "the run to stop")
        await wait_until(pilot, lambda: not screen.query_one("#start").disabled, "Start again")
    with database.session() as session:
        run = session.get(EvalRun, 1)
        assert run is not None and run.status == "interrupted"
        stored = len(session.exec(select(Prediction).where(Prediction.run_id == 1)).all())
    assert stored == 2  # the one in progress when Stop was pressed is kept, nothing after


def unreadable_model_folder(folder: Path) -> str:
    """A model folder whose config names an architecture transformers does not know."""
    folder.mkdir()
    (folder / "config.json").write_text('{"model_type": "no_such_arch"}', encoding="utf-8")
    return str(folder)


@pytest.mark.parametrize(
    ("spec", "said", "looked_at_first"),
    [
        (lambda _tmp: "scripted:/no/such/answers.json", "answers.json: cannot read the file", True),
        (lambda _tmp: "openai:gpt-4o-mini", "no API key: set the environment variable", True),
        (lambda tmp: unreadable_model_folder(tmp / "model"), "model: cannot load the model", False),
    ],
    ids=["missing-script", "no-api-key", "unreadable-folder"],
)
async def test_a_model_that_does_not_load_is_reported(
    database: Database,
    approved: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    spec: Callable[[Path], str],
    said: str,
    looked_at_first: bool,
) -> None:
    """What a look can tell (a missing file, no API key) is said before the shots are
    counted: the small set has 1 shot per kind and the form asks 5 (a model checked after
    them was said only once the shots were fixed).  A folder that fails to load is known
    only by loading it, after the shots."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    screen = EvaluationScreen(database, "ann")
    async with mounted(screen) as pilot:
        if not looked_at_first:
            allow_fewer_shots(screen)
        screen.query_one("#model-spec", Input).value = spec(tmp_path)
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: not screen.query_one("#start").disabled, "Start again")
        await wait_until(pilot, lambda: said in form_message(screen), said)
        assert pilot.app.is_running
    with database.session() as session:
        assert session.exec(select(EvalRun)).all() == []


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)  # no SQL involved
async def test_a_bug_while_a_model_loads_ends_the_app(
    database: Database, approved: list[str]
) -> None:
    """The app's one rule for errors: a bug is not a notice (tests/test_tui_errors.py)."""

    def broken(_spec: str, _settings: object) -> ScriptedBackend:
        raise ZeroDivisionError("a bug in a backend")

    screen = EvaluationScreen(database, "ann", open_model=broken)
    with pytest.raises((ZeroDivisionError, WorkerFailed)):
        async with mounted(screen) as pilot:
            allow_fewer_shots(screen)
            await pilot.press("ctrl+s")
            await pilot.pause(0.5)


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)  # the fault is made up
async def test_a_database_fault_while_a_run_starts_is_a_notice_and_frees_the_form(
    database: Database, approved: list[str]
) -> None:
    locked = OperationalError("UPDATE item", {}, sqlite3.OperationalError("database is locked"))

    def cannot_write(_spec: str, _settings: object) -> ScriptedBackend:
        raise locked

    screen = EvaluationScreen(database, "ann", open_model=cannot_write)
    async with mounted(screen) as pilot:
        allow_fewer_shots(screen)
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: not screen.query_one("#start").disabled, "Start again")
        messages = notices(pilot.app)
        assert any("locked by another writer" in m for m in messages), messages
        assert pilot.app.is_running and screen.own_run_id is None


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)  # no SQL involved
async def test_the_form_takes_whole_numbers_in_the_cores_ranges(
    database: Database, approved: list[str]
) -> None:
    """The form reads whole numbers; the evaluation core says what it takes (the CLI's
    ranges), and nothing is started for a number out of range."""
    screen = EvaluationScreen(database, "ann")
    too_long = "9" * 10
    async with mounted(screen) as pilot:
        allow_fewer_shots(screen)

        def said(line: str) -> bool:
            return form_message(screen) == f"No run started: {line}"

        for selector, typed, line in (
            ("#repeats", "0", "repeats must be from 1 to 100 (0)"),
            ("#max-tokens", "-2", "Max new tokens: write a whole number, not '-2'"),
            ("#max-tokens", too_long, f"Max new tokens: write a whole number, not '{too_long}'"),
        ):
            field = screen.query_one(selector, Input)
            field.value = ""
            field.focus()
            await pilot.press(*typed)
            await pilot.press("ctrl+s")
            await wait_until(pilot, partial(said, line), line)
            await wait_until(pilot, lambda: not screen.query_one("#start").disabled, "Start")
            field.value = "1"
    with database.session() as session:
        assert session.exec(select(EvalRun)).all() == []


async def test_an_empty_number_field_is_not_marked_invalid(
    database: Database, approved: list[str]
) -> None:
    """Empty Repeats and Max new tokens mean one run and the protocol's budget: once focus
    leaves them they are not shown as invalid (red), while a letter typed there is."""
    screen = EvaluationScreen(database, "ann")
    async with mounted(screen) as pilot:
        for selector in ("#repeats", "#max-tokens"):
            field = screen.query_one(selector, Input)
            field.value = ""
            field.focus()
            await pilot.press("tab")
            await pilot.pause()
            assert not field.has_class("-invalid"), selector
        field = screen.query_one("#max-tokens", Input)
        field.focus()
        await pilot.press("-", "tab")
        await pilot.pause()
        assert field.has_class("-invalid")


def overview(run_id: int, model: str, accuracy: float | None, done: int) -> RunOverview:
    interval = None if accuracy is None else (max(accuracy - 0.2, 0.0), min(accuracy + 0.2, 1.0))
    return RunOverview(
        id=run_id,
        model=model,
        backend="scripted",
        mode=EvalMode.GENERATE,
        shots=0,
        status=RunStatus.FINISHED,
        stale=False,
        done=done,
        total=10,
        infrastructure_failures=0,
        correct=round((accuracy or 0) * done),
        accuracy=accuracy,
        accuracy_ci=interval,
        started_at=datetime(2025, 1, 1, tzinfo=UTC),
        finished_at=None,
    )


def test_leaderboard_bars_rank_runs_best_first() -> None:
    runs = [overview(1, "a", 0.5, 10), overview(2, "b", 1.0, 10), overview(3, "c", None, 0)]
    bars = leaderboard_bars(runs)
    assert [bar.label for bar in bars] == ["#2 b", "#1 a"]
    assert [bar.value for bar in bars] == [1.0, 0.5]
    assert [bar.interval for bar in bars] == [(0.8, 1.0), (0.3, 0.7)]
    assert "100.0%" in bars[0].figure and "n=10" in bars[0].figure
    assert leaderboard_bars([runs[2]]) == []
    econ = replace(overview(4, "a", 0.25, 8), protocol=EvalProtocol.ECONLOGICQA)
    assert [bar.label for bar in leaderboard_bars([econ])] == ["#4 a (econlogicqa)"]


async def test_opens_from_the_review_app_once_and_goes_back(
    database: Database, approved: list[str]
) -> None:
    """F4 opens once.  F4 pressed on it stacked a second F4 (and F4, F2, F4 ... without
    end): now its key brings back the one screen, its run still going, and Esc goes back
    the way the person came, closing each screen it leaves, except one whose run goes on:
    Esc stopped the run; now F4 stays open behind, and quitting asks first."""
    from reviewer.tui.app import make_app
    from reviewer.tui.screens.agreement import AgreementScreen
    from reviewer.tui.screens.lead_modals import ConfirmModal
    from reviewer.tui.screens.review import ReviewScreen

    backend, first_stored, release = held_backend(2)  # held after the run's first answer
    app = make_app(database, "alice")
    async with app.run_test(size=(140, 45)) as pilot:
        screen = await open_f4(app, pilot, backend)
        allow_fewer_shots(screen)  # the small set has 1 shot per kind; 5 is the default
        await pilot.press("ctrl+s")
        await wait_until(pilot, first_stored.is_set, "the first prediction")
        await pilot.press("f4")  # its own key: nothing new
        await pilot.pause()
        assert app.screen is screen
        await pilot.press("f2")
        await wait_until(pilot, lambda: isinstance(app.screen, AgreementScreen), "F2")
        agreement = app.screen
        await pilot.press("f4")  # the same screen, its run going
        await wait_until(pilot, lambda: app.screen is screen, "F4 again")
        assert screen.query_one("#start").disabled and not backend.closed
        assert isinstance(screen, EvaluationScreen)
        polled = screen  # its reads, noted
        shown_at_reads: list[bool] = []
        read_database = polled.read_database

        def read_and_note() -> EvaluationScreen.SnapshotRead:
            shown_at_reads.append(polled.is_current)
            return read_database()

        polled.read_database = read_and_note  # type: ignore[method-assign]
        await pilot.press("escape")  # back to F2; the run goes on, F4 open behind
        await wait_until(pilot, lambda: app.screen is agreement, "F2, the run going")
        assert screen.is_attached and not backend.closed
        polled.wake_poller()  # as a stored prediction does: still no read while hidden
        await pilot.pause(2 * polled.POLL_SECONDS)
        assert all(shown_at_reads)  # never read behind F2
        await pilot.press("q")  # quitting would stop the run: asked first
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmModal), "the question")
        assert "Run 1 is going: quitting stops it" in screen_text(app)
        await pilot.press("n")
        await pilot.press("f4")  # the same screen again, its run still going
        await wait_until(pilot, lambda: app.screen is screen, "F4 with its run")
        assert not backend.closed
        reads_before = len(shown_at_reads)
        await wait_until(pilot, lambda: len(shown_at_reads) > reads_before, "a read when shown")
        release.set()
        await wait_until(pilot, lambda: backend.closed, "the run's end")
        await pilot.press("escape")  # back the way it came: F2, then the review screen
        await wait_until(pilot, lambda: app.screen is agreement, "F2 again")
        await wait_until(pilot, lambda: not screen.is_attached, "F4 closed")
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, ReviewScreen), "the review screen")
    with database.session() as session:
        run = session.get(EvalRun, 1)
        assert run is not None and run.status == "finished"


async def test_shows_the_cflue_protocols_figures_as_they_accrue(
    database: Database, approved: list[str]
) -> None:
    outputs = {
        "cflue:1": "答案：B\n解析：A股实行T+1交易制度。",
        "cflue:2": "答案：A\n解析：A股实行T+1。",
        "cflue:5": "好的\n答案：A",  # CFLUE's rule reads only the first of two lines
    }
    backend = ScriptedBackend(outputs, model="expert")
    run_id = create_run(database, backend.info, protocol="cflue", item_filter=APPROVED_ITEMS)
    screen = EvaluationScreen(database, "lead")
    async with ScreenHost(screen).run_test(size=(160, 45)) as pilot:
        figures = screen.query_one("#figures", DataTable)
        await wait_until(
            pilot, lambda: "cflue protocol" in static_text(screen, "#run-title"), "run"
        )
        execute_run(database, run_id, backend)  # written while the screen watches
        screen.action_refresh()
        await wait_until(
            pilot,
            lambda: figures.row_count > 0 and "BLEU-1/4" in cells(figures, "all")[6],
            "the explanation metrics",
        )
        also = cells(figures, "all")[6]
        assert "weighted F1" in also and "ROUGE-1/2/L" in also and "chance" in also
        # The screen polls the run while execute_run writes it: on a loaded machine a poll
        # can land before the last prediction (seen: 5 / 6 with the table's metrics shown).
        await wait_until(
            pilot, lambda: "6 / 6 items" in static_text(screen, "#speed"), "the last item"
        )
        speed = static_text(screen, "#speed")
        assert "6 / 6 items" in speed
        assert (
            "extractors: cflue read 2 of 6, right 1 (16.7%); lenient read 3 of 6, right 2" in speed
        )
        assert "by key position:" in speed and "bias" in speed


async def test_why_no_run_started_stays_in_the_form_in_full_at_80_columns(
    database: Database, approved: list[str]
) -> None:
    """The reason a Start made no run (here: too few shots for the default 5) is shown
    under the form, wrapped in full and covering no field, not as a toast that goes; it
    stays until the form changes."""
    screen = EvaluationScreen(database, "ann")
    async with ScreenHost(screen).run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: bool(form_message(screen)), "why no run started")
        await wait_until(pilot, lambda: not screen.query_one("#start").disabled, "Start again")
        message = form_message(screen)
        assert message.startswith("No run started: too few shots")
        assert message.endswith("or a source or status."), message
        assert not [said for said in notices(pilot.app) if "No run started" in said]
        # Its lines start with the border's bar; where they wrap depends on the path quoted.
        shown = " ".join(screen_text(pilot.app).replace("▊", " ").split())
        assert "No run started: too few shots" in shown and "or a source or status." in shown
        said = screen.query_one("#start-message", Static).region
        for field in ("#model-spec", "#kind", "#shots", "#shots-from"):  # nothing covered
            assert not said.overlaps(screen.query_one(field).region), field
        assert screen.region.contains_region(said)
        await pilot.press("ctrl+r")  # a refresh keeps it
        await pilot.pause()
        assert form_message(screen) == message
        # A change message that arrives after the refusal, for a field that holds what it
        # held at Start (a slow machine bubbles it up after a quick refusal), keeps it too.
        spec = screen.query_one("#model-spec", Input)
        screen.post_message(Input.Changed(spec, spec.value))
        await pilot.pause()
        assert form_message(screen) == message
        screen.query_one("#fewer-shots", Checkbox).value = True
        await wait_until(pilot, lambda: not form_message(screen), "the message to go")


async def test_a_series_is_one_notice_and_the_quit_question_follows_its_end(
    database: Database, approved: list[str]
) -> None:
    """Repeats 40 stacked a notice per repeat over the quit question, which still said
    "Run 9 is going ... --resume 9 finishes it" after "Runs 2–41 finished."; --resume
    finishes the one run, not the repeats after it."""
    from reviewer.tui.app import make_app
    from reviewer.tui.screens.lead_modals import ConfirmModal

    # held after the second run's first answer
    backend, second_run, release = held_backend(len(approved) + 2)
    app = make_app(database, "alice")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_f4(app, pilot, backend)
        allow_fewer_shots(screen)
        screen.query_one("#repeats", Input).value = "3"
        screen.query_one("#permute", Checkbox).value = True  # repeats that can differ
        await pilot.press("ctrl+s")
        await wait_until(pilot, second_run.is_set, "the second run")
        await pilot.press("q")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmModal), "the question")
        question = app.screen
        assert isinstance(question, ConfirmModal)
        assert question.question == (
            "Run 2 (2 of 3) is going: quitting stops it, its answers so far kept. "
            "`vetbench eval --resume 2` finishes run 2 only: 1 more planned run of the "
            "series is never started. Quit?"
        )
        started = [said for said in notices(app) if "started" in said]
        assert len(started) == 1 and started[0].startswith("Series of 3 runs started"), started
        said_before = len(notices(app))
        release.set()
        await wait_until(pilot, lambda: backend.closed, "the series' end")
        await wait_until(pilot, lambda: "finished" in question.question, "the question updated")
        assert question.question == "Runs 1–3 finished. Quit?"
        assert "Runs 1–3 finished." in screen_text(app)
        assert len(notices(app)) == said_before  # nothing new over the question
        await pilot.press("y")
        await wait_until(pilot, lambda: app.return_code is not None, "the app quit")


async def test_f4s_keys_work_from_its_fields_and_its_palette(
    database: Database, approved: list[str]
) -> None:
    """At 80×24 F4 opened with no field focused; ] and [ did nothing in the Items or Mode
    list (the pane going out of sight took the focus on to its next field, and showed
    again); after Start from "Shots from", ] was typed into the path; and Ctrl+P found
    no F4 action."""
    from reviewer.tui.app import make_app

    backend = ScriptedBackend(MIXED_SET_ANSWERS, model="quick")
    app = make_app(database, "alice")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_f4(app, pilot, backend)
        assert screen.focused is screen.query_one("#model-spec")  # the first field
        tabs = screen.query_one(TabbedContent)

        async def shown(pane: str, after: str) -> None:
            # A tab switch is a chain of messages (Tabs, then TabbedContent), which one
            # pause did not always see through on a loaded machine; once shown, the tab
            # must stay (the bug: the pane left showed itself again).
            await wait_until(pilot, lambda: tabs.active == pane, f"{pane} after {after}")
            await settle(pilot)
            assert tabs.active == pane, after

        async def focus(widget: Widget) -> None:
            # As a person does, the key comes after the focus has landed: a focus is a chain
            # of messages too, and the pane's "a field of mine has focus" arriving after the
            # switch showed that pane again (1 run in 10 on a loaded machine).
            widget.focus()
            await wait_until(pilot, lambda: screen.focused is widget, f"focus on {widget.id}")
            await settle(pilot)

        for field in ("#items", "#mode", "#permute"):
            await focus(screen.query_one(field))
            await pilot.press("right_square_bracket")
            await shown("leaderboard-tab", f"] from {field}")
            await pilot.press("left_square_bracket", "left_square_bracket")
            await shown("suspects-tab", f"[ [ from {field}")
            tabs.active = "live-tab"
            await shown("live-tab", "going back")
        allow_fewer_shots(screen)
        shots_from = screen.query_one("#shots-from", Input)
        await focus(shots_from)
        await pilot.press("ctrl+s")  # the run starts: the form is left
        await pilot.press("right_square_bracket")
        await shown("leaderboard-tab", "] after Start")
        assert shots_from.value == ""
        await wait_until(pilot, lambda: backend.closed, "the run's end")
        titles = [command.title for command in app.get_system_commands(screen)]
        assert {"Start run (Ctrl+S)", "Previous tab ([)", "Refresh (Ctrl+R)"} <= set(titles)
        assert "Stop run (Ctrl+X)" not in titles  # nothing to stop
        await pilot.press("ctrl+p", *"next tab", "enter")
        await wait_until(pilot, lambda: tabs.active == "suspects-tab", "the palette's Next tab")
