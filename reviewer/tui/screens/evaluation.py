"""The evaluation screen: start a run on the approved set and watch accuracy arrive live.

Everything shown is read from the database by a polling thread worker (about once
a second), so a run started here, from ``vetbench eval`` in another terminal, or on
another machine sharing the database looks the same.  A run started here executes
in its own thread worker (model inference never blocks the interface), writing
each prediction as it finishes; Stop asks it to halt after the current prediction,
and ``vetbench eval --resume RUN`` continues it later.

Tabs: the live run (progress, items per second, time left, accuracy with its Wilson 95%
interval per kind, unparsed rate, the latest predictions with prompt, raw output,
parsed answer and key, accuracy by kind as bars with whiskers and accuracy as the
run goes as a line), the leaderboard (every run, with accuracy as bars with whiskers),
and suspect keys (items every model gets wrong with the same non-key answer).
Item and model text (ids, model names, answers, raw outputs, prompts, errors) goes
through the one literal-display helper (``reviewer/tui/literal.py``): never markup,
control characters shown, never sent.  What is read and how figures are written as
text lives in ``evaluator/live.py`` and ``evaluator/run_text.py`` (shared with the CLI); models are opened by the evaluator's registry
with the settings ``vetbench review`` was given (``--base-url``, ``--threads`` ...).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import (
    Button,
    Checkbox,
    DataTable,
    Header,
    Input,
    ProgressBar,
    Select,
    Static,
    TabbedContent,
    TabPane,
)
from textual.widgets.data_table import CellDoesNotExist
from textual.worker import Worker, WorkerState, get_current_worker

from db.errors import VetbenchError
from db.vocabulary import ALL, EvalMode, EvalProtocol, RunStatus
from db.words import counted
from evaluator import run_text
from evaluator.backends.settings import BackendSettings
from evaluator.live import EvaluationSnapshot, read_snapshot
from reviewer.tui.expected import show_expected_error
from reviewer.tui.literal import line_broken, literal, notify_literally
from reviewer.tui.polling import PollingScreen
from reviewer.tui.responsive import apply_size_classes
from reviewer.tui.screens.area import TAB_BINDINGS, AreaModes, AreaScreen
from reviewer.tui.screens.evaluation_form import (
    APPROVED_ITEMS,
    RELEASE_PREFIX,
    SHOTS_DEFAULT,
    fewer_shots_hint,
    shots_from_field,
    start_form,
    whole_number,
)
from reviewer.tui.screens.evaluation_text import (
    FIGURE_COLUMNS,
    accuracy_bar,
    answered_item_cells,
    extraction_summary,
    figure_cells,
    leaderboard_bars,
    leaderboard_row,
    mark,
    percent,
    position_summary,
    prediction_detail,
    quit_while_running,
    run_notes,
    run_started,
    run_title,
    series_run,
    suspect_text,
)
from reviewer.tui.widgets.accuracy_curve import AccuracyCurve
from reviewer.tui.widgets.bars import BarChart
from reviewer.tui.widgets.footer import KeyFooter
from reviewer.tui.widgets.table_fit import fill_fitted

if TYPE_CHECKING:
    from db.engine import Database
    from evaluator.backends.base import Backend
    from evaluator.results import PredictionView, RunFigures, RunOverview, SuspectKey
    from evaluator.session import EvalChoices, RunUpdate

SUSPECTS_EVERY = 5  # suspect keys are re-read every this many polls (a heavier query)


BackendOpener = Callable[[str, "BackendSettings"], "Backend"]
"""Opens the backend for a model spec with the settings chosen; the screen's default goes
through the registry."""


# -------------------------------------------------------------------- screen


class EvaluationScreen(AreaScreen, PollingScreen[None]):
    """Start evaluation runs and follow every run's accuracy as it is written."""

    CSS_PATH = "evaluation.tcss"
    TITLE = "Evaluation"
    POLL_SECONDS: ClassVar[float] = 1.0

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "start_run", "Start run", priority=True),
        Binding("ctrl+x", "stop_run", "Stop run", priority=True),
        Binding("n", "follow_newest", "Follow newest"),  # short: 80 columns fit [ ] Tabs
        *TAB_BINDINGS,  # before Refresh, which the footer drops first (the screen polls)
        Binding("ctrl+r", "refresh", "Refresh"),
        Binding("escape", "leave", "Back"),
    ]

    @dataclass
    class SnapshotRead(Message):
        """The polling worker read the database."""

        snapshot: EvaluationSnapshot

    @dataclass
    class ModelNoticed(Message):
        """What the person should know while a model opens: that it is loading, once the
        choices passed their checks, and a long first conversion."""

        note: str

    @dataclass
    class RunStarted(Message):
        """A run started from this screen has been created and is executing."""

        run_id: int
        model: str
        position: int = 0  # within the series the choices made
        runs: int = 1
        notes: tuple[str, ...] = ()  # what `vetbench eval` prints as notes at the start

    @dataclass
    class RunEnded(Message):
        """The runs started from this screen ended: finished, interrupted, failed, or never
        began (no ``run_ids``: the model did not load or there was nothing to evaluate)."""

        run_ids: tuple[int, ...]
        status: str
        reason: str = ""

    def __init__(
        self,
        database: Database,
        person_name: str,
        *,
        backend_settings: BackendSettings | None = None,
        open_model: BackendOpener | None = None,
    ) -> None:
        super().__init__(database, person_name)
        self.backend_settings = backend_settings
        """How models are opened (device, threads, API settings ...); None: the defaults."""
        self.open_model: BackendOpener = open_model or self._open_from_registry
        self.followed_run_id: int | None = None
        """The run shown on the live tab; None follows the newest running (else newest) run."""
        self.own_run_id: int | None = None
        """The run this screen is executing, if any."""
        self._series_at: tuple[int, int] = (0, 1)  # that run's place in its series, of how many
        self._notes_said: tuple[str, ...] = ()  # the series' notes said last (each run has them)
        self._notes_run: int | None = None  # the run #run-notes is about (shown with it only)
        self._run_active = False  # a run worker of this screen is loading or evaluating
        self._form_when_said: tuple[object, ...] = ()  # the form the start message is about
        self._latest: dict[str, PredictionView] = {}
        self._figure_rows: list[tuple[str, tuple[str | Text, ...]]] = []  # the figures shown
        self._suspects: list[SuspectKey] = []
        self._shown: EvaluationSnapshot | None = None
        self._polls = 0  # worker only
        self._read: EvaluationSnapshot | None = None  # worker only: the last snapshot read

    # ----------------------------------------------------------- layout

    def compose(self) -> ComposeResult:
        apply_size_classes(self)
        yield Header()
        with TabbedContent(initial="live-tab"):
            with TabPane("Live run", id="live-tab"), VerticalScroll(id="live-body"):
                yield from start_form()
                with Vertical(id="run-panel"):
                    yield Static("No evaluation run yet.", id="run-title")
                    yield ProgressBar(id="progress", show_eta=False)
                    yield Static("", id="speed")
                    yield Static("", id="run-notes")  # the notes the run started here began with
                with Horizontal(id="live-charts"):
                    with Vertical(id="kind-chart"):
                        yield Static("Accuracy by kind, with 95% intervals", classes="chart-title")
                        yield BarChart(id="kind-bars", empty="No answers yet.")
                    yield AccuracyCurve(id="accuracy-curve")
                yield DataTable(id="figures", cursor_type="none", zebra_stripes=True)
                with Horizontal(id="predictions-area"):
                    yield DataTable(id="predictions", cursor_type="row", zebra_stripes=True)
                    with VerticalScroll(id="detail-scroll"):
                        yield Static("", id="prediction-detail")
            with TabPane("Leaderboard", id="leaderboard-tab"):
                yield DataTable(id="runs", cursor_type="row", zebra_stripes=True)
                with VerticalScroll(id="chart-scroll"):
                    yield Static("Accuracy with 95% intervals", classes="chart-title")
                    yield BarChart(id="accuracy-chart", empty="No run has an answer yet.")
            with TabPane("Suspect keys", id="suspects-tab"):
                yield Static(
                    "Items that every model answered wrongly with one and the same answer: "
                    "the key may be wrong. Select one to see the models' answer.",
                    id="suspects-help",
                )
                yield DataTable(id="suspects", cursor_type="row", zebra_stripes=True)
        yield KeyFooter(compact=True)

    def on_mount(self) -> None:
        self.query_one("#figures", DataTable).add_columns(*FIGURE_COLUMNS)
        self.query_one("#predictions", DataTable).add_columns(
            "item", "kind", "key", "parsed", "result"
        )
        self.query_one("#runs", DataTable).add_columns(
            "run", "model", "mode", "shots", "status", "done", "accuracy", "95% CI", "started"
        )
        self.query_one("#suspects", DataTable).add_columns(
            "item", "kind", "key", "models' answer", "models"
        )
        self.list_releases()
        self.start_polling()
        # The first field, where the tab bar had the focus and a person saw none.
        self.query_one("#model-spec", Input).focus(scroll_visible=False)

    def list_releases(self) -> None:
        """Offer each release under Items (newest first), keeping the choice made when
        its release is still there."""
        from db.releases import list_releases

        with self.database.session() as session:
            names = [release.name for release in reversed(list_releases(session))]
        items = self.query_one("#items", Select)
        chosen = items.value
        items.set_options(
            [
                ("approved items", APPROVED_ITEMS),
                # a release's name is user text: shown as typed, never read as markup
                *[(literal(f"release {name}"), RELEASE_PREFIX + name) for name in names],
            ]
        )
        offered = {APPROVED_ITEMS, *(RELEASE_PREFIX + name for name in names)}
        items.value = chosen if chosen in offered else APPROVED_ITEMS

    # ---------------------------------------------------------- actions

    def action_refresh(self) -> None:
        self.list_releases()
        self.wake_poller()

    def action_follow_newest(self) -> None:
        self.followed_run_id = None
        self.wake_poller()

    def action_start_run(self) -> None:
        if self._run_active:
            notify_literally(
                self, "A run started here is still going; stop it first.", severity="warning"
            )
            return
        self.say_in_form("")  # a new start: the last one's reason no longer applies
        spec = self.query_one("#model-spec", Input).value.strip()
        if not spec:
            self.say_in_form(
                "No run started: give a model: demo, a model folder, openai:NAME or scripted:FILE."
            )
            return
        from evaluator.session import plan_runs, protocol_settings

        try:
            choices = self._choices()
            plan_runs(choices)  # the core's checks that need no database, said before "Loading"
        except VetbenchError as error:  # a number the form or the core cannot take
            self.say_in_form(f"No run started: {error}")
            return
        settings = protocol_settings(
            choices,
            replace(self.backend_settings or BackendSettings(), dtype=self._value("#dtype")),
        )
        self._set_run_active(True)
        # A run started from a text field left the focus there: ] typed into the path
        # (shots_*.jsonl]]) instead of switching tabs.  The form is done with: the tab bar.
        if self.focused is not None and self.query_one("#start-form") in self.focused.ancestors:
            self.focus_tab_bar()
        self.run_evaluation(spec, choices, settings)

    def say_in_form(self, message: str) -> None:
        """Say under the start form why no run started (empty: nothing to say).  It stays,
        wrapped in full, until the form changes or Start is pressed again: a toast would
        cover the fields it is about, and go before it is read."""
        said = self.query_one("#start-message", Static)
        said.update(literal(message))  # it may quote a path or a spec the person typed
        said.display = bool(message)
        self._form_when_said = self._form_values()
        if message:
            said.scroll_visible()

    def _form_values(self) -> tuple[object, ...]:
        """Every field of the start form, as it holds now."""
        form = self.query_one("#start-form")
        return (
            *(field.value for field in form.query(Input)),
            *(field.value for field in form.query(Select)),
            *(field.value for field in form.query(Checkbox)),
        )

    @on(Input.Changed, "#start-form Input")
    @on(Select.Changed, "#start-form Select")
    @on(Checkbox.Changed, "#start-form Checkbox")
    def _form_changed(self) -> None:
        # A change message can arrive after the message it should clear (it bubbles up from
        # the field; a quick refusal is posted straight to this screen): only a form that
        # differs from the one the message was about clears it.
        if self._form_values() != self._form_when_said:
            self.say_in_form("")

    def _value(self, selector: str) -> str:
        return str(self.query_one(selector, Select).value)

    def _number(self, selector: str, name: str) -> int | None:
        return whole_number(self.query_one(selector, Input).value, name)

    def _choices(self) -> EvalChoices:
        """The form as the evaluation core's choices (the same as ``vetbench eval``'s flags)."""
        from evaluator.session import EvalChoices  # with the evaluator: not at app start

        kind, shots = self._value("#kind"), self._value("#shots")
        repeats = self._number("#repeats", "Repeats")
        items = self._value("#items")
        shot_files, shots_from = shots_from_field(self.query_one("#shots-from", Input).value)
        return EvalChoices(
            shot_files=shot_files,
            shots_from=shots_from,
            protocol=EvalProtocol(self._value("#protocol")),
            mode=EvalMode(self._value("#mode")),
            release=items.removeprefix(RELEASE_PREFIX) if items != APPROVED_ITEMS else None,
            shots=None if shots == SHOTS_DEFAULT else int(shots),
            kinds=() if kind == ALL else (kind,),
            repeats=1 if repeats is None else repeats,  # empty: one run
            permute_options=self.query_one("#permute", Checkbox).value,
            max_new_tokens=self._number("#max-tokens", "Max new tokens"),
            allow_fewer_shots=self.query_one("#fewer-shots", Checkbox).value,
        )

    def work_going_on(self) -> str | None:
        """The run this screen executes (or the model it opens for one): Esc keeps the
        screen open then, and quitting asks first."""
        return series_run(self.own_run_id, *self._series_at) if self._run_active else None

    def quit_question(self) -> str | None:
        return quit_while_running(self.own_run_id, *self._series_at) if self._run_active else None

    def action_stop_run(self) -> None:
        if not self._run_active:
            return
        # The run's should_stop sees the cancellation after the prediction in progress.
        self.workers.cancel_group(self, "run")
        notify_literally(self, "Stopping after the current prediction ...")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Start only when this screen runs nothing; Stop only while it does."""
        if action == "start_run":
            return not self._run_active
        if action == "stop_run":
            return self._run_active
        return True

    def _set_run_active(self, active: bool) -> None:
        self._run_active = active
        self.query_one("#start", Button).disabled = active
        self.query_one("#stop", Button).disabled = not active
        self.refresh_bindings()

    @on(Button.Pressed, "#start")
    @on(Input.Submitted, "#model-spec")
    def _start_pressed(self) -> None:
        self.action_start_run()

    @on(Button.Pressed, "#stop")
    def _stop_pressed(self) -> None:
        self.action_stop_run()

    # ---------------------------------------------------------- workers

    def read_database(self) -> SnapshotRead:
        """The runs, the followed run and (every few polls) the suspect keys, in one snapshot."""
        self._read = read_snapshot(
            self.database,
            self.followed_run_id,
            with_suspects=self._polls % SUSPECTS_EVERY == 0,
            previous=self._read,
        )
        self._polls += 1
        return self.SnapshotRead(self._read)

    def _open_from_registry(self, spec: str, settings: BackendSettings) -> Backend:
        """The registry's backend for ``spec``, with these settings (worker thread)."""
        from evaluator.backends.registry import open_backend

        def notice(note: str) -> None:
            self.post_message(self.ModelNoticed(note))

        return open_backend(spec, settings, database=self.database, notify=notice)

    @work(thread=True, exclusive=True, exit_on_error=False, group="run")
    def run_evaluation(self, spec: str, choices: EvalChoices, settings: BackendSettings) -> None:
        """Check the choices, load the model, and run the series the evaluation core plans
        (one run per shot setting and repeat), storing each prediction."""
        from evaluator.run_create import FewerShotsError
        from evaluator.session import RunFailed, SeriesControls, check_choices, run_series

        worker = get_current_worker()
        run_ids: tuple[int, ...] = ()
        outcome = RunStatus.FAILED.value
        reason = ""
        try:  # before a model loads: bad choices and an empty selection are said at once
            check_choices(self.database, choices, model=spec, settings=settings)
            self.post_message(self.ModelNoticed(f"Loading {spec} ..."))
            backend = self.open_model(spec, settings)
        except FewerShotsError as error:  # said with this form's words, not the CLI's
            self.post_message(self.RunEnded((), outcome, f"{error.what}. {fewer_shots_hint()}"))
            return
        except VetbenchError as error:  # a model that cannot load says why (BackendError)
            self.post_message(self.RunEnded((), outcome, str(error)))
            return

        def follow(update: RunUpdate) -> None:
            if update.starting:
                self.post_message(
                    self.RunStarted(update.run_id, spec, update.position, update.runs, update.notes)
                )
            self.wake_poller()

        try:
            if worker.is_cancelled:
                outcome = "stopped before it began"
                return
            series = run_series(
                self.database,
                backend,
                choices,
                actor=self.person_name,
                controls=SeriesControls(on_update=follow, should_stop=lambda: worker.is_cancelled),
            )
            run_ids, outcome = series.run_ids, series.statuses[-1].value
        except RunFailed as error:
            run_ids, reason = (error.run_id,), str(error)
        except VetbenchError as error:  # a setting the core refused, a changed template ...
            reason = str(error)
        finally:  # anything else is a bug: `_run_crashed` ends the app with it
            backend.close()
            self.post_message(self.RunEnded(run_ids, outcome, reason))

    # --------------------------------------------------------- messages

    def on_evaluation_screen_model_noticed(self, message: ModelNoticed) -> None:
        notify_literally(self, message.note)

    def on_evaluation_screen_run_started(self, message: RunStarted) -> None:
        self.own_run_id = message.run_id
        self.followed_run_id = message.run_id
        self._series_at = where = (message.position, message.runs)
        notes, said = message.notes, self._notes_said
        self._notes_said = notes
        self._notes_run = message.run_id if notes else None
        if notes:  # in full under the run, which they are about, until another run shows
            shown = run_notes(message.run_id, message.model, where, notes)
            self.query_one("#run-notes", Static).update(shown)
        self._show_notes_with(self._shown.followed if self._shown else None)
        if started := run_started(message.run_id, message.model, where, notes, said):
            notify_literally(self, started, severity="warning" if notes else "information")
        self.wake_poller()

    @on(Worker.StateChanged)
    def _run_crashed(self, event: Worker.StateChanged) -> None:
        # The run worker says the core's and the backends' errors itself (RunEnded). What
        # reaches here is a database fault (a notice, and the form is free again) or a
        # bug, which the app's one rule raises again, ending the app with it.
        if event.worker.group == "run" and event.state is WorkerState.ERROR:
            self.own_run_id = None
            self._set_run_active(False)
            show_expected_error(self, event.worker.error, title="Evaluation failed")

    def on_evaluation_screen_run_ended(self, message: RunEnded) -> None:
        self.own_run_id, self._series_at, self._notes_said = None, (0, 1), ()
        self._set_run_active(False)
        ids = message.run_ids
        if not ids:  # refused, or the model did not load, before any run was made
            self.say_in_form(f"No run started: {message.reason or message.status}")
            self.wake_poller()
            return
        what = f"Run {ids[0]}" if len(ids) == 1 else f"Runs {ids[0]}–{ids[-1]}"
        said = f"{what} {message.status}" + (f": {message.reason}" if message.reason else ".")
        if isinstance(self.app, AreaModes) and self.app.work_ended(said):
            pass  # said in the quit question open now, not in a notice over it
        elif message.status == RunStatus.FINISHED:
            notify_literally(self, said)
        else:
            notify_literally(self, said, severity="warning", timeout=10)
        self.wake_poller()

    def on_evaluation_screen_snapshot_read(self, message: SnapshotRead) -> None:
        snapshot, shown = message.snapshot, self._shown
        # Redraw only what changed, so an idle run does not reset cursors every second.
        if shown is None or snapshot.followed is not shown.followed:
            self._show_run(snapshot.followed)
            self._show_latest(snapshot.latest)
        if shown is None or snapshot.runs != shown.runs:
            self._show_leaderboard(snapshot.runs)
        if snapshot.suspects is not None and snapshot.suspects != self._suspects:
            self._show_suspects(snapshot.suspects)
        self._shown = snapshot

    @on(DataTable.RowHighlighted, "#predictions")
    def _prediction_highlighted(self, event: DataTable.RowHighlighted) -> None:
        view = self._latest.get(str(event.row_key.value))
        if view is not None:
            self.query_one("#prediction-detail", Static).update(
                line_broken(prediction_detail(view))
            )

    @on(DataTable.RowSelected, "#runs")
    def _run_selected(self, event: DataTable.RowSelected) -> None:
        self.followed_run_id = int(str(event.row_key.value))
        self.query_one(TabbedContent).active = "live-tab"
        self.wake_poller()

    @on(DataTable.RowHighlighted, "#suspects")
    def _suspect_highlighted(self, event: DataTable.RowHighlighted) -> None:
        index = event.cursor_row
        if 0 <= index < len(self._suspects):
            self.query_one("#suspects-help", Static).update(suspect_text(self._suspects[index]))

    # ------------------------------------------------------------ views

    def _show_run(self, figures: RunFigures | None) -> None:
        title = self.query_one("#run-title", Static)
        table = self.query_one("#figures", DataTable)
        bar = self.query_one("#progress", ProgressBar)
        speed = self.query_one("#speed", Static)
        self._show_notes_with(figures)
        # No run yet: no bar (an empty one animates "--%", as if something were going on).
        bar.display = figures is not None
        if figures is None:
            title.update("No evaluation run yet. Choose a model and press Start (ctrl+s).")
            table.clear()
            speed.update("")
            self.query_one("#kind-bars", BarChart).show([])
            self.query_one("#accuracy-curve", AccuracyCurve).show([])
            return
        progress, summary = figures.progress, figures.summary
        title.update(run_title(figures))
        bar.update(total=max(progress.total, 1), progress=progress.done)
        lines = [
            f"{progress.done:,} / {counted(progress.total, 'item')}   "
            f"{run_text.speed(progress)}   "
            f"unparsed {percent(summary.unparsed_rate)}",
            extraction_summary(summary),
            position_summary(summary),
        ]
        # Extractor names and position labels come from the evaluator, not from models.
        speed.update(Text("\n".join(line for line in lines if line)))
        table.clear()
        self._figure_rows = [(ALL, figure_cells("all", summary))]
        self._figure_rows += [(kind, figure_cells(kind, g)) for kind, g in summary.by_kind.items()]
        self._fit_figures()
        self.query_one("#kind-bars", BarChart).show(
            [accuracy_bar("all", summary)]
            + [accuracy_bar(kind, group) for kind, group in summary.by_kind.items()]
        )
        self.query_one("#accuracy-curve", AccuracyCurve).show(figures.accuracy_curve)

    def _fit_figures(self) -> None:
        """The figures' columns fitted to the table's width: "also" wraps (at 120 columns
        it ran off the edge, "chance 6.7%" cut to "c")."""
        table = self.query_one("#figures", DataTable)
        fill_fitted(table, FIGURE_COLUMNS, self._figure_rows, wrap=(FIGURE_COLUMNS.index("also"),))

    def on_resize(self) -> None:
        if self._figure_rows:  # fitted to the width the table had
            self.call_after_refresh(self._fit_figures)

    def _show_notes_with(self, figures: RunFigures | None) -> None:
        """The notes a run started here began with, while that run is the one shown."""
        in_sight = figures is not None and figures.run.id == self._notes_run
        self.query_one("#run-notes").display = in_sight

    def _show_latest(self, latest: list[PredictionView]) -> None:
        table = self.query_one("#predictions", DataTable)
        previous = self._cursor_key(table)
        self._latest = {view.item_id: view for view in latest}
        table.clear()
        for view in latest:
            table.add_row(
                *answered_item_cells(view.item_id, view.kind, view.key, view.parsed_answer),
                mark(view),
                key=view.item_id,
            )
        if not latest:
            self.query_one("#prediction-detail", Static).update("")
            return
        keys = [view.item_id for view in latest]
        row = keys.index(previous) if previous in keys else 0
        table.move_cursor(row=row)
        self.query_one("#prediction-detail", Static).update(
            line_broken(prediction_detail(latest[row]))
        )

    def _show_leaderboard(self, runs: list[RunOverview]) -> None:
        table = self.query_one("#runs", DataTable)
        previous = self._cursor_key(table)
        ranked = sorted(
            runs, key=lambda run: (run.accuracy is None, -(run.accuracy or 0.0), -run.id)
        )
        table.clear()
        for run in ranked:
            table.add_row(*leaderboard_row(run), key=str(run.id))
        keys = [str(run.id) for run in ranked]
        if previous in keys:
            table.move_cursor(row=keys.index(previous))
        self.query_one("#accuracy-chart", BarChart).show(leaderboard_bars(runs))

    def _show_suspects(self, suspects: list[SuspectKey]) -> None:
        self._suspects = suspects
        table = self.query_one("#suspects", DataTable)
        table.clear()
        for suspect in suspects:
            table.add_row(
                *answered_item_cells(suspect.item_id, suspect.kind, suspect.key, suspect.answer),
                literal(", ".join(suspect.models)),
                key=suspect.item_id,
            )

    @staticmethod
    def _cursor_key(table: DataTable[Any]) -> str | None:
        if table.row_count == 0:
            return None
        try:
            row_key, _ = table.coordinate_to_cell_key(table.cursor_coordinate)
        except CellDoesNotExist:  # no valid cursor (empty or just cleared)
            return None
        return None if row_key.value is None else str(row_key.value)
