"""The evaluation screen: start a run on the approved set and watch accuracy arrive live.

Everything shown is read from the database by a polling thread worker (about once
a second), so a run started here, from ``vetbench eval`` in another terminal, or on
another machine sharing the database looks the same.  A run started here executes
in its own thread worker (model inference never blocks the interface), writing
each prediction as it finishes; Stop asks it to halt after the current prediction,
and ``vetbench eval --resume RUN`` continues it later.

Tabs: the live run (progress, items per second, ETA, accuracy with its Wilson 95%
interval per kind, unparsed rate, the latest predictions with prompt, raw output,
parsed answer and key), the leaderboard (every run, with a bar chart of accuracy),
and suspect keys (items every model gets wrong with the same non-key answer).
Item and model text is shown as plain text, never interpreted as markup.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import (
    Button,
    DataTable,
    Header,
    Input,
    Label,
    ProgressBar,
    Select,
    Static,
    TabbedContent,
    TabPane,
)
from textual.worker import Worker, WorkerState, get_current_worker

from db.answers import format_answer
from db.vocabulary import ItemKind, values
from reviewer.tui.literal import line_broken
from reviewer.tui.widgets.footer import KeyFooter

if TYPE_CHECKING:
    from db.engine import Database
    from evaluator.backends.base import Backend

SHOT_CHOICES = (0, 1, 5)
LATEST_SHOWN = 20
LEADERBOARD_BARS = 15
BAR_WIDTH = 40
SUSPECTS_EVERY = 5  # suspect keys are re-read every this many polls (a heavier query)

BackendFactory = Callable[["Database", str], "Backend"]


# ------------------------------------------------------------------ plain data


@dataclass(frozen=True)
class EvaluationSnapshot:
    """What the screen shows, read from the database in one go by the polling worker."""

    runs: list[dict[str, Any]]
    followed: dict[str, Any] | None  # evaluator.runs.run_figures of the followed run
    latest: list[Any]  # evaluator.runs.PredictionView, newest first
    suspects: list[dict[str, Any]] | None  # None: not re-read this time


def open_backend(database: Database, spec: str) -> Backend:
    """The backend for a model spec as ``vetbench eval --model`` takes it: ``demo``, a model
    folder, a cached hub id, a ``.gguf`` file, or ``openai:NAME``."""
    if spec.startswith("openai:"):
        from evaluator.backends.openai_backend import OpenAIBackend

        return OpenAIBackend(spec.removeprefix("openai:"), database=database)
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # vetbench never downloads models
    from evaluator.backends.transformers_backend import TransformersBackend

    return TransformersBackend(spec, device="auto", batch_size="auto")


def _run_state(run: dict[str, Any]) -> tuple[Any, ...]:
    """What changes when a run stores a prediction or changes status."""
    return (run["id"], run["done"], run["infrastructure_failures"], run["status"], run["stale"])


def read_snapshot(
    database: Database,
    followed_run_id: int | None,
    *,
    with_suspects: bool,
    previous: EvaluationSnapshot | None = None,
) -> EvaluationSnapshot:
    """Runs, the followed run's figures and latest predictions (the newest running run, or
    the newest run, when none is chosen), and, when asked, the suspect keys.

    The followed run's figures are read again only when it changed since ``previous``
    (the run list's counts say so cheaply), so watching an idle run costs one small query.
    """
    from evaluator.runs import RunNotFound, latest_predictions, list_runs, run_figures, suspect_keys

    runs = list_runs(database)
    run_id = followed_run_id
    if run_id is None and runs:
        running = [run for run in runs if run["status"] == "running" and not run["stale"]]
        run_id = (running or runs)[0]["id"]
    followed, latest = None, []
    state = next((_run_state(run) for run in runs if run["id"] == run_id), None)
    if previous is not None and previous.followed is not None and state is not None:
        before = next((_run_state(r) for r in previous.runs if r["id"] == run_id), None)
        if before == state and previous.followed["run"]["id"] == run_id:
            followed, latest = previous.followed, previous.latest
    if followed is None and run_id is not None:
        try:
            followed = run_figures(database, run_id)
            latest = latest_predictions(database, run_id, LATEST_SHOWN)
        except RunNotFound:
            followed = None
    suspects = suspect_keys(database) if with_suspects else None
    return EvaluationSnapshot(runs=runs, followed=followed, latest=latest, suspects=suspects)


# ------------------------------------------------------------------ formatting


def percent(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


def interval(bounds: Any) -> str:
    if not bounds:
        return "—"
    low, high = bounds
    return f"[{100 * low:.1f}, {100 * high:.1f}]"


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def answer_cell(kind: str, answer: str | None) -> str:
    """An answer as people read it: ``D, A, C, B`` for orders, ``ABD`` for choices."""
    return format_answer(kind, answer)


def mark(view: Any) -> Text:
    if view.failure_kind == "infrastructure":
        return Text("failed", style="bold red")
    if view.failure_kind == "unparsed":
        return Text("unparsed", style="yellow")
    return Text("right", style="green") if view.correct else Text("wrong", style="red")


def secondary_figure(figures: dict[str, Any]) -> str:
    """Pairwise accuracy for ordering, weighted F1 (and set F1) for multiple choice."""
    parts = []
    if figures.get("pairwise_accuracy") is not None:
        parts.append(f"pairwise {percent(figures['pairwise_accuracy'])}")
    if figures.get("weighted_f1") is not None:
        parts.append(f"wF1 {figures['weighted_f1']:.3f}")
    if figures.get("set_f1") is not None:
        parts.append(f"set F1 {figures['set_f1']:.3f}")
    return ", ".join(parts) or "—"


def accuracy_bars(runs: list[dict[str, Any]], width: int = BAR_WIDTH) -> Text:
    """One horizontal bar per run (best first): the accuracy, with its interval as text."""
    ranked = sorted(
        (run for run in runs if run["accuracy"] is not None),
        key=lambda run: (-run["accuracy"], run["id"]),
    )[:LEADERBOARD_BARS]
    if not ranked:
        return Text("No run has an answer yet.", style="dim")
    eighths = " ▏▎▍▌▋▊▉"
    chart = Text()
    for run in ranked:
        filled = run["accuracy"] * width
        full, rest = int(filled), int((filled - int(filled)) * 8)
        bar = "█" * full + (eighths[rest] if rest and full < width else "")
        chart.append(f"#{run['id']:<4} ", style="dim")
        chart.append(f"{run['model'][:28]:<28} ")
        chart.append(bar.ljust(width), style="green")
        chart.append(f" {percent(run['accuracy']):>6} {interval(run['accuracy_ci'])}")
        chart.append(f"  n={run['done']}\n", style="dim")
    chart.rstrip()
    return chart


def prediction_detail(view: Any) -> Text:
    """Prompt, raw output, parsed answer and key of one prediction, as plain text."""
    text = Text()
    text.append(f"{view.item_id}  ({view.kind}, revision {view.revision})\n", style="bold")
    text.append("key ", style="dim")
    text.append(answer_cell(view.kind, view.key), style="bold")
    text.append("   parsed ", style="dim")
    text.append(answer_cell(view.kind, view.parsed_answer), style="bold")
    text.append("   ")
    text.append_text(mark(view))
    text.append(f"   {view.latency_s:.2f} s\n", style="dim")
    if view.error:
        text.append("error: ", style="bold red")
        text.append(view.error + "\n")
    text.append("\nraw output\n", style="bold underline")
    text.append((view.raw_output or "(empty)") + "\n")
    text.append("\nprompt\n", style="bold underline")
    text.append(view.prompt)
    return text


# -------------------------------------------------------------------- screen


class EvaluationScreen(Screen[None]):
    """Start evaluation runs and follow every run's accuracy as it is written."""

    CSS_PATH = "evaluation.tcss"
    TITLE = "Evaluation"
    POLL_SECONDS: ClassVar[float] = 1.0

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "start_run", "Start run", priority=True),
        Binding("ctrl+x", "stop_run", "Stop run", priority=True),
        Binding("n", "follow_newest", "Follow newest run"),
        Binding("ctrl+r", "refresh", "Refresh"),
        Binding("escape", "leave", "Back"),
    ]

    @dataclass
    class SnapshotRead(Message):
        """The polling worker read the database."""

        snapshot: EvaluationSnapshot

    @dataclass
    class RunStarted(Message):
        """A run started from this screen has been created and is executing."""

        run_id: int
        model: str

    @dataclass
    class RunEnded(Message):
        """A run started from this screen ended: finished, interrupted, failed, or never began
        (``run_id`` None: the model did not load or there was nothing to evaluate)."""

        run_id: int | None
        status: str
        reason: str = ""

    def __init__(
        self,
        database: Database,
        person_name: str,
        *,
        backend_factory: BackendFactory | None = None,
    ) -> None:
        super().__init__()
        self.database = database
        self.person_name = person_name
        self.backend_factory: BackendFactory = backend_factory or open_backend
        self.followed_run_id: int | None = None
        """The run shown on the live tab; None follows the newest running (else newest) run."""
        self.own_run_id: int | None = None
        """The run this screen is executing, if any."""
        self._run_active = False  # a run worker of this screen is loading or evaluating
        self._wake = threading.Event()
        self._latest: dict[str, Any] = {}
        self._suspects: list[dict[str, Any]] = []
        self._shown: EvaluationSnapshot | None = None

    # ----------------------------------------------------------- layout

    def compose(self) -> ComposeResult:
        yield Header()
        with TabbedContent(initial="live-tab"):
            with TabPane("Live run", id="live-tab"):
                with Horizontal(id="start-form"):
                    yield Label("Model", classes="field-label")
                    yield Input(
                        value="demo",
                        placeholder="demo, a model folder, or openai:NAME",
                        id="model-spec",
                    )
                    yield Label("Shots", classes="field-label")
                    yield Select(
                        [(str(n), n) for n in SHOT_CHOICES],
                        value=5,
                        allow_blank=False,
                        id="shots",
                    )
                    yield Label("Kind", classes="field-label")
                    yield Select(
                        [("all kinds", "all"), *[(kind, kind) for kind in values(ItemKind)]],
                        value="all",
                        allow_blank=False,
                        id="kind",
                    )
                    yield Button("Start", id="start", variant="primary")
                    yield Button("Stop", id="stop", variant="error", disabled=True)
                with Vertical(id="run-panel"):
                    yield Static("No evaluation run yet.", id="run-title")
                    yield ProgressBar(id="progress", show_eta=False)
                    yield Static("", id="speed")
                    yield DataTable(id="figures", cursor_type="none", zebra_stripes=True)
                with Horizontal(id="predictions-area"):
                    yield DataTable(id="predictions", cursor_type="row", zebra_stripes=True)
                    with VerticalScroll(id="detail-scroll"):
                        yield Static("", id="prediction-detail")
            with TabPane("Leaderboard", id="leaderboard-tab"):
                yield DataTable(id="runs", cursor_type="row", zebra_stripes=True)
                with VerticalScroll(id="chart-scroll"):
                    yield Static("", id="accuracy-chart")
            with TabPane("Suspect keys", id="suspects-tab"):
                yield Static(
                    "Items that every model answered wrongly with one and the same answer: "
                    "the key may be wrong. Select one to see the models' answer.",
                    id="suspects-help",
                )
                yield DataTable(id="suspects", cursor_type="row", zebra_stripes=True)
        yield KeyFooter()

    def on_mount(self) -> None:
        self.query_one("#figures", DataTable).add_columns(
            "kind", "answered", "accuracy", "95% CI", "unparsed", "failed", "also"
        )
        self.query_one("#predictions", DataTable).add_columns(
            "item", "kind", "key", "parsed", "result"
        )
        self.query_one("#runs", DataTable).add_columns(
            "run", "model", "mode", "shots", "status", "done", "accuracy", "95% CI", "started"
        )
        self.query_one("#suspects", DataTable).add_columns(
            "item", "kind", "key", "models' answer", "models"
        )
        self.poll_database()

    # ---------------------------------------------------------- actions

    def action_leave(self) -> None:
        if len(self.app.screen_stack) > 1:
            self.app.pop_screen()

    def action_refresh(self) -> None:
        self._wake.set()

    def action_follow_newest(self) -> None:
        self.followed_run_id = None
        self._wake.set()

    def action_start_run(self) -> None:
        if self._run_active:
            self.notify("A run started here is still going; stop it first.", severity="warning")
            return
        spec = self.query_one("#model-spec", Input).value.strip()
        if not spec:
            self.notify("Give a model: demo, a model folder, or openai:NAME.", severity="error")
            return
        shots = self.query_one("#shots", Select).value
        kind = self.query_one("#kind", Select).value
        self._set_run_active(True)
        self.notify(f"Loading {spec} ...")
        self.run_evaluation(spec, int(shots), None if kind == "all" else str(kind))  # type: ignore[arg-type]

    def action_stop_run(self) -> None:
        if not self._run_active:
            return
        # The run's should_stop sees the cancellation after the prediction in progress.
        self.workers.cancel_group(self, "run")
        self.notify("Stopping after the current prediction ...")

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

    @work(thread=True, exclusive=True, exit_on_error=False, group="poll")
    def poll_database(self) -> None:
        """Read the database about once a second and hand the snapshot to the screen."""
        worker = get_current_worker()
        polls = 0
        snapshot: EvaluationSnapshot | None = None
        while not worker.is_cancelled:
            snapshot = read_snapshot(
                self.database,
                self.followed_run_id,
                with_suspects=polls % SUSPECTS_EVERY == 0,
                previous=snapshot,
            )
            polls += 1
            if worker.is_cancelled:
                break
            self.post_message(self.SnapshotRead(snapshot))
            self._wake.wait(self.POLL_SECONDS)
            self._wake.clear()

    @work(thread=True, exclusive=True, exit_on_error=False, group="run")
    def run_evaluation(self, spec: str, shots: int, kind: str | None) -> None:
        """Load the model, freeze the approved set, and evaluate it, storing each prediction."""
        from evaluator.runner import create_run, execute_run

        worker = get_current_worker()
        run_id: int | None = None
        outcome = "failed"
        reason = ""
        try:
            backend = self.backend_factory(self.database, spec)
        except Exception as error:
            self.post_message(self.RunEnded(None, "failed", f"cannot load {spec}: {error}"))
            return
        try:
            if worker.is_cancelled:
                outcome = "stopped before it began"
                return
            try:
                run_id = create_run(
                    self.database,
                    backend.info,
                    mode="generate",
                    shots=shots,
                    filters={"status": ["approved"], "kind": [kind] if kind else []},
                    shot_file=None,
                    templates_dir=None,
                    actor=self.person_name,
                )
            except ValueError as error:  # RunSetupError, TemplateError: nothing to evaluate, ...
                reason = str(error)
                return
            self.post_message(self.RunStarted(run_id, spec))
            outcome = str(
                execute_run(
                    self.database,
                    run_id,
                    backend,
                    on_progress=lambda _progress: self._wake.set(),
                    should_stop=lambda: worker.is_cancelled,
                )
            )
        except Exception as error:
            reason = f"{type(error).__name__}: {error}"
            raise
        finally:
            backend.close()
            self.post_message(self.RunEnded(run_id, outcome, reason))

    @on(Worker.StateChanged)
    def _poll_failed(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        if worker.group == "poll" and event.state is WorkerState.ERROR:
            self.notify(f"Reading the database failed: {worker.error}", severity="error")
            if self.is_mounted:  # try again a little later: the database may come back
                self.set_timer(self.POLL_SECONDS * 5, self.poll_database)

    # --------------------------------------------------------- messages

    def on_evaluation_screen_run_started(self, message: RunStarted) -> None:
        self.own_run_id = message.run_id
        self.followed_run_id = message.run_id
        self.notify(f"Run {message.run_id} started: {message.model}")
        self._wake.set()

    def on_evaluation_screen_run_ended(self, message: RunEnded) -> None:
        self.own_run_id = None
        self._set_run_active(False)
        what = "The run" if message.run_id is None else f"Run {message.run_id}"
        if message.status == "finished":
            self.notify(f"{what} finished.")
        else:
            detail = f": {message.reason}" if message.reason else "."
            self.notify(f"{what} {message.status}{detail}", severity="warning", timeout=10)
        self._wake.set()

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
        self._wake.set()

    @on(DataTable.RowHighlighted, "#suspects")
    def _suspect_highlighted(self, event: DataTable.RowHighlighted) -> None:
        index = event.cursor_row
        if 0 <= index < len(self._suspects):
            suspect = self._suspects[index]
            self.query_one("#suspects-help", Static).update(
                Text(
                    f"{suspect['item_id']}: key {suspect['key']}, but "
                    f"{', '.join(suspect['models'])} all answered {suspect['answer']} "
                    f"(runs {', '.join(map(str, suspect['runs']))})."
                )
            )

    # ------------------------------------------------------------ views

    def _show_run(self, figures: dict[str, Any] | None) -> None:
        title = self.query_one("#run-title", Static)
        table = self.query_one("#figures", DataTable)
        bar = self.query_one("#progress", ProgressBar)
        speed = self.query_one("#speed", Static)
        if figures is None:
            title.update("No evaluation run yet. Choose a model and press Start (ctrl+s).")
            table.clear()
            speed.update("")
            return
        run, progress = figures["run"], figures["progress"]
        status = run["status"] + (" (stale: its process is gone)" if run["stale"] else "")
        title.update(
            Text.assemble(
                (f"Run {run['id']}  ", "bold"),
                (run["model"], "bold"),
                f"  {run['backend']}, {run['mode']}, {run['shots']}-shot  ",
                (status, "italic"),
                *([("  " + run["error"], "yellow")] if run.get("error") else []),
            )
        )
        bar.update(total=max(progress["total"], 1), progress=progress["done"])
        speed.update(
            Text(
                f"{progress['done']} / {progress['total']} items   "
                f"{_rate(progress['items_per_second'])}   ETA {duration(progress['eta_s'])}   "
                f"unparsed {percent(figures['unparsed_rate'])}"
            )
        )
        table.clear()
        table.add_row(*_figure_cells("all", figures), key="all")
        for kind, sub in figures["by_kind"].items():
            table.add_row(*_figure_cells(kind, sub), key=kind)

    def _show_latest(self, latest: list[Any]) -> None:
        table = self.query_one("#predictions", DataTable)
        previous = self._cursor_key(table)
        self._latest = {view.item_id: view for view in latest}
        table.clear()
        for view in latest:
            table.add_row(
                Text(view.item_id),
                view.kind,
                Text(answer_cell(view.kind, view.key)),
                Text(answer_cell(view.kind, view.parsed_answer)),
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

    def _show_leaderboard(self, runs: list[dict[str, Any]]) -> None:
        table = self.query_one("#runs", DataTable)
        previous = self._cursor_key(table)
        ranked = sorted(
            runs,
            key=lambda run: (run["accuracy"] is None, -(run["accuracy"] or 0.0), -run["id"]),
        )
        table.clear()
        for run in ranked:
            table.add_row(
                str(run["id"]),
                Text(run["model"]),
                run["mode"],
                str(run["shots"]),
                run["status"] + (" (stale)" if run["stale"] else ""),
                f"{run['done']}/{run['total']}",
                percent(run["accuracy"]),
                interval(run["accuracy_ci"]),
                run["started_at"].strftime("%Y-%m-%d %H:%M"),
                key=str(run["id"]),
            )
        keys = [str(run["id"]) for run in ranked]
        if previous in keys:
            table.move_cursor(row=keys.index(previous))
        self.query_one("#accuracy-chart", Static).update(accuracy_bars(runs))

    def _show_suspects(self, suspects: list[dict[str, Any]]) -> None:
        self._suspects = suspects
        table = self.query_one("#suspects", DataTable)
        table.clear()
        for suspect in suspects:
            table.add_row(
                Text(suspect["item_id"]),
                suspect["kind"],
                Text(answer_cell(suspect["kind"], suspect["key"])),
                Text(answer_cell(suspect["kind"], suspect["answer"])),
                Text(", ".join(suspect["models"])),
                key=suspect["item_id"],
            )

    @staticmethod
    def _cursor_key(table: DataTable[Any]) -> str | None:
        if table.row_count == 0:
            return None
        try:
            row_key, _ = table.coordinate_to_cell_key(table.cursor_coordinate)
        except Exception:  # no valid cursor (empty or just cleared)
            return None
        return None if row_key.value is None else str(row_key.value)

    def on_unmount(self) -> None:
        self.workers.cancel_group(self, "poll")
        self._wake.set()


def _rate(items_per_second: float | None) -> str:
    return "— items/s" if items_per_second is None else f"{items_per_second:.2f} items/s"


def _figure_cells(name: str, figures: dict[str, Any]) -> tuple[str, ...]:
    return (
        name,
        str(figures["scored"]),
        percent(figures["accuracy"]),
        interval(figures["accuracy_ci"]),
        percent(figures["unparsed_rate"]),
        str(figures["infrastructure_failures"]),
        secondary_figure(figures),
    )
