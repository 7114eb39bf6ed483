"""The agreement screen: how far the reviews can be trusted, refreshed as judgments arrive.

A thread worker checks the database every few seconds with one cheap query
(how many judgments and decisions, the newest ids); only when something changed
does it recompute every figure (``reviewer.agreement``) and post the result.
Computing never runs on the interface thread.

Tabs: the headline figures with 95% bootstrap intervals, and in words why a
figure is undefined or paradoxical (high raw agreement with a kappa near zero);
the annotators (their own figures with their keep rate and gold accuracy, their
keep rates and median times per item as bars, each annotator's and model's
reliability by the consensus model (``db.consensus``), and a heat map of Cohen's kappa for
every pair, all verdicts or keep/drop); breakdowns by kind and by source; likely wrong keys (listed for
leads only: the list shows what annotators answered, which annotators must not
see before giving their own answer).  The reliability comes after the figures, from a
worker of its own: the consensus fit can take seconds (7 s on the demo database) that the
figures need not wait for, and its title says while it is being estimated.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import DataTable, Header, Static, TabbedContent, TabPane
from textual.worker import Worker, WorkerState, get_current_worker

from db.answers import format_answer
from db.vocabulary import QualificationStatus
from db.words import counted
from reviewer.tui.expected import show_expected_error
from reviewer.tui.literal import literal, none_row
from reviewer.tui.polling import PollingScreen
from reviewer.tui.responsive import apply_size_classes
from reviewer.tui.screens.area import TAB_BINDINGS, AreaScreen
from reviewer.tui.widgets.bars import Bar, BarChart
from reviewer.tui.widgets.footer import KeyFooter
from reviewer.tui.widgets.table_fit import fill_fitted, fits

if TYPE_CHECKING:
    from db.consensus import RaterReliability
    from db.engine import Database
    from db.qualification import Qualification
    from reviewer.agreement import AgreementFigures, AgreementReport, Figure
    from reviewer.agreement.verdicts import PairKappa

DEFAULT_RESAMPLES = 1000  # reviewer.agreement.DEFAULT_RESAMPLES (imported lazily)
DEFAULT_SEED = 20240601
FIGURE_COLUMNS = ("statistic", "value", "95% CI", "n", "note")
RELIABILITY_TITLE = "Reliability by the consensus: expected share of right answers, 95% interval"
ANNOTATOR_COLUMNS = (
    "annotator",
    "judged",
    "keep\nrate",
    "gold\naccuracy",
    "verdicts\nagree",
    "answers\nagree",
    "answer\n= key",
    "agrees with\ndecision",
    "median\ns",
    "verdicts\ngiven",
)
"""The Annotators table's columns, in two-line headings."""
CHARTED_COLUMNS = tuple(
    ANNOTATOR_COLUMNS.index(label) for label in ("judged", "keep\nrate", "median\ns")
)
"""Columns the charts under the table show too (keep rate "78% of 49", median time), left
out of the table where it has no room for them (80 columns)."""
_ANNOTATOR_WRAP = (0, len(ANNOTATOR_COLUMNS) - 1)  # the names and the verdicts given wrap

# Heat map colours: kappa 0 or below is red, 0.4 amber, 0.8 and above green (Landis & Koch's
# "moderate" and "almost perfect" bands).
_RED, _AMBER, _GREEN = (0xC0, 0x39, 0x2B), (0xE6, 0xA2, 0x3C), (0x2E, 0x9E, 0x4F)


def kappa_colour(value: float | None) -> str:
    """Background colour of a heat-map cell for a kappa value (grey when undefined)."""
    if value is None:
        return "#555555"
    if value <= 0.4:
        low, high, share = _RED, _AMBER, max(0.0, value) / 0.4
    else:
        low, high, share = _AMBER, _GREEN, min(1.0, (value - 0.4) / 0.4)
    red, green, blue = (round(a + (b - a) * share) for a, b in zip(low, high, strict=True))
    return f"#{red:02x}{green:02x}{blue:02x}"


class FigureNotes(Static):
    """Sentences under the figures: why one is undefined, or paradoxically low."""

    def show(self, notes: list[str], *, bullet: str = "• ") -> None:
        """One note a line, each after ``bullet`` (none for notes that bring their own
        number, as a table's cells refer to them)."""
        self.display = bool(notes)
        text = Text()
        for index, note in enumerate(notes):
            if index:
                text.append("\n")
            text.append(bullet)
            text.append_text(literal(note))
        self.update(text)


def figure_cells(figure: Figure) -> tuple[str, str]:
    """Value and interval (or the reason it is undefined) as table cells."""
    from reviewer.agreement.rows import detail_text, value_text

    return value_text(figure), detail_text(figure)


def kappa_matrix(names: list[str], pairs: list[PairKappa]) -> list[list[Text]]:
    """Rows of heat-map cells: one row and one column per annotator."""
    lookup = {}
    for pair in pairs:
        lookup[(pair.first, pair.second)] = lookup[(pair.second, pair.first)] = pair.kappa
    rows = []
    for row_name in names:
        cells = []
        for column_name in names:
            if row_name == column_name:
                cells.append(Text(" · ", style="dim", justify="center"))
                continue
            figure = lookup.get((row_name, column_name))
            if figure is None:
                cells.append(Text("none shared", style="dim", justify="center"))
                continue
            value = figure.value
            label = "  —  " if value is None else f"{value:+.2f}"
            cells.append(
                Text(f" {label} ", style=f"bold #000000 on {kappa_colour(value)}", justify="center")
            )
        rows.append(cells)
    return rows


class AgreementScreen(AreaScreen, PollingScreen[None]):
    """Inter-annotator agreement, kept current while annotators work."""

    CSS_PATH = "lead.tcss"
    TITLE = "Agreement"
    POLL_SECONDS: ClassVar[float] = 3.0
    POLL_FAILURE: ClassVar[str] = "Computing agreement failed"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "refresh", "Recompute"),
        # Short: at 80 columns r, k, Esc, [ ], F3 F4, ? and q fit (the map's title says more).
        Binding("k", "toggle_coding", "Switch heat map"),
        Binding("escape", "leave", "Back"),
        *TAB_BINDINGS,
    ]

    @dataclass
    class AgreementComputed(Message):
        """The worker computed the figures from the judgments as they are now."""

        report: AgreementReport
        lead: bool  # whether the person may see item-level answers
        left_out: tuple[Qualification, ...] = ()  # people the qualification gate leaves out

    @dataclass
    class ReliabilityEstimated(Message):
        """The consensus model's reliability of each rater (after the figures: the fit
        takes seconds, and the figures need not wait for it)."""

        raters: tuple[RaterReliability, ...]

    def __init__(
        self,
        database: Database,
        person_name: str,
        *,
        resamples: int = DEFAULT_RESAMPLES,
        seed: int = DEFAULT_SEED,
    ) -> None:
        super().__init__(database, person_name)
        self.resamples = resamples
        self.seed = seed
        self.report: AgreementReport | None = None
        """The figures on screen (None until the first computation ends)."""
        self.keep_drop_map = False
        """Whether the heat map shows kappa on keep/drop instead of all verdicts."""
        self.computations = 0
        """How many times the figures were computed (tests wait on it)."""
        self.reliability_pending = False
        """Whether the raters' reliability for the figures shown is still being estimated."""
        self.annotator_rows: list[tuple[str | None, tuple[Text | str, ...]]] = []
        """The Annotators table's rows with every column, fitted to its width when shown."""
        self.breakdown_rows: list[tuple[str | None, tuple[Text | str, ...]]] = []
        """The breakdown's rows, fitted to its width when shown."""
        self.breakdown_labels: tuple[str, ...] = ()
        self._force = threading.Event()
        self._seen: tuple[int, ...] | None = None  # the judgments last computed (worker only)

    def compose(self) -> ComposeResult:
        apply_size_classes(self)
        yield Header()
        yield Static("Computing agreement …", id="agreement-summary")
        with TabbedContent(initial="figures-tab"):
            with TabPane("Figures", id="figures-tab"):
                yield DataTable(id="agreement-figures", cursor_type="row", zebra_stripes=True)
                yield FigureNotes(id="agreement-notes")
            with TabPane("Annotators", id="annotators-tab"), VerticalScroll(id="annotators-body"):
                yield DataTable(id="annotator-table", cursor_type="row", zebra_stripes=True)
                note = Static("", id="qualification-note")
                note.display = False  # shown only while the gate leaves someone out
                note.styles.padding = (0, 1)
                yield note
                yield Static(RELIABILITY_TITLE, id="reliability-title")
                yield DataTable(id="reliability-table", cursor_type="row", zebra_stripes=True)
                with Horizontal(id="annotator-charts"):
                    with Vertical(classes="annotator-chart"):
                        yield Static("Keep rate", classes="chart-title")
                        yield BarChart(id="keep-rate-bars", empty="No judgments yet.")
                    with Vertical(classes="annotator-chart"):
                        yield Static("Median time per item", classes="chart-title")
                        yield BarChart(id="seconds-bars", scale=None, empty="No timed judgments.")
                yield Static("", id="heatmap-title")
                yield DataTable(id="kappa-map", cursor_type="cell", show_cursor=False)
            with TabPane("By kind and source", id="breakdown-tab"):
                yield DataTable(id="breakdown", cursor_type="row", zebra_stripes=True)
                yield FigureNotes(id="breakdown-notes")
            with TabPane("Likely wrong keys", id="wrong-keys-tab"):
                yield DataTable(id="wrong-keys", cursor_type="row", zebra_stripes=True)
        yield KeyFooter(compact=True)

    def on_mount(self) -> None:
        from reviewer.agreement.rows import BREAKDOWN_COLUMNS

        self.query_one("#agreement-figures", DataTable).add_columns(*FIGURE_COLUMNS)
        annotators = self.query_one("#annotator-table", DataTable)
        annotators.header_height = 2
        annotators.add_columns(*ANNOTATOR_COLUMNS)
        self.query_one("#reliability-table", DataTable).add_columns(
            "rater", "kind", "reliability", "95% interval", "answers", "note"
        )
        # in two-line headings ("alpha" over "verdicts"): the figures under them are narrow
        self.breakdown_labels = ("group", *(c.replace(" ", "\n", 1) for c in BREAKDOWN_COLUMNS))
        breakdown = self.query_one("#breakdown", DataTable)
        breakdown.header_height = 2
        breakdown.add_columns(*self.breakdown_labels)
        self.query_one("#wrong-keys", DataTable).add_columns(
            "item", "revision", "kind", "key", "annotators' answer", "annotators", "decision"
        )
        self.start_polling()

    # ---------------------------------------------------------- actions

    def action_refresh(self) -> None:
        self._force.set()
        self.wake_poller()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """k only where the heat map it recodes is: the Annotators tab (so that at 80
        columns the footer has room for the tab keys elsewhere)."""
        if action == "toggle_coding":
            return self.query_one(TabbedContent).active == "annotators-tab"
        return True

    def action_toggle_coding(self) -> None:
        self.keep_drop_map = not self.keep_drop_map
        if self.report is not None:
            self._show_heat_map(self.report)

    # ---------------------------------------------------------- worker

    def read_database(self) -> AgreementComputed | None:
        """Recompute whenever judgments or decisions change (checked every few seconds)."""
        from db.qualification import left_out
        from reviewer.agreement import compute_agreement
        from reviewer.agreement.data import judgments_fingerprint
        from reviewer.conflict_cases import is_lead

        fingerprint = judgments_fingerprint(self.database)
        if fingerprint == self._seen and not self._force.is_set():
            return None
        self._force.clear()
        report = compute_agreement(self.database, resamples=self.resamples, seed=self.seed)
        lead = is_lead(self.database, self.person_name)
        self._seen = fingerprint
        return self.AgreementComputed(report, lead, tuple(left_out(self.database)))

    @work(thread=True, exclusive=True, exit_on_error=False, group="reliability")
    def estimate_reliability(self) -> None:
        """The consensus fit behind the reliability table, in a worker of its own."""
        from db.consensus import consensus_of

        raters = consensus_of(self.database).raters
        if not get_current_worker().is_cancelled:
            self.post_message(self.ReliabilityEstimated(raters))

    @on(Worker.StateChanged)
    def _reliability_failed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "reliability" and event.state is WorkerState.ERROR:
            show_expected_error(self, event.worker.error, title="Estimating reliability failed")
            self._reliability_shown(pending=False)

    # ---------------------------------------------------------- display

    @on(TabbedContent.TabActivated)
    def _tab_shown(self, event: TabbedContent.TabActivated) -> None:
        """A table filled while its tab was hidden was fitted to the screen's width, not its
        own: fitted again once it shows."""
        self.refresh_bindings()  # k applies on one tab only
        if event.pane.id == "annotators-tab" and self.annotator_rows:
            self.call_after_refresh(self._fit_annotators)
        if event.pane.id == "breakdown-tab" and self.breakdown_rows:
            self.call_after_refresh(self._fit_breakdown)

    def on_resize(self) -> None:
        if self.annotator_rows:
            self.call_after_refresh(self._fit_annotators)
        if self.breakdown_rows:
            self.call_after_refresh(self._fit_breakdown)

    def on_agreement_screen_agreement_computed(self, message: AgreementComputed) -> None:
        report = message.report
        self.report = report
        self.computations += 1
        figures = report.figures
        settings = report.settings
        intervals = (
            f"95% intervals from {settings.resamples} bootstrap resamples"
            if settings.resamples
            else "no intervals"
        )
        self.query_one("#agreement-summary", Static).update(
            Text(
                f"{counted(figures.items_compared, 'item')} compared of "
                f"{figures.items_judged:,} judged · {counted(figures.judgments, 'judgment')} by "
                f"{counted(figures.annotators, 'annotator')} · {intervals}"
            )
        )
        self._show_figures(figures)
        self.query_one("#agreement-notes", FigureNotes).show(report.reader_notes)
        self._show_annotators(report)
        self._show_left_out(message.left_out)
        self._reliability_shown(pending=True)
        self.estimate_reliability()
        self._show_annotator_charts(report)
        self._show_heat_map(report)
        self._show_breakdowns(report)
        self._show_wrong_keys(figures, message.lead)

    def _show_figures(self, figures: AgreementFigures) -> None:
        from reviewer.agreement.rows import headline_rows

        table = self.query_one("#agreement-figures", DataTable)
        if not figures.judgments:
            table.clear()
            table.add_row(Text("none: no judgments yet", style="dim"), "", "", "", "")
            return
        rows: list[tuple[str | None, tuple[Text | str, ...]]] = []
        for row in headline_rows(figures):
            value, detail = figure_cells(row.figure)
            cells = (literal(row.label), value, literal(detail), f"{row.figure.n:,}")
            rows.append((None, (*cells, literal(row.note))))
        # the note wraps in the width the figures leave (80 columns cut it)
        fill_fitted(table, FIGURE_COLUMNS, rows, wrap=(0, FIGURE_COLUMNS.index("note")))

    def _show_annotators(self, report: AgreementReport) -> None:
        from reviewer.agreement.rows import annotator_cells, percent_text

        rows: list[tuple[str | None, tuple[Text | str, ...]]] = []
        if not report.per_annotator:
            rows.append((None, tuple(none_row(len(ANNOTATOR_COLUMNS)))))
        for stats in report.per_annotator:
            cells = annotator_cells(stats)
            gold = report.gold_of(stats.name)
            row: tuple[Text | str, ...] = (
                literal(stats.name),
                cells.judged,
                cells.keep_rate,
                "—" if gold is None else f"{percent_text(gold.both)} of {gold.judged}",
                *cells.agreement,
                cells.median_seconds,
                literal(cells.verdicts_given),
            )
            rows.append((stats.name, row))
        self.annotator_rows = rows
        self._fit_annotators()

    def _fit_annotators(self) -> None:
        """The Annotators table at the width it has: every column where they fit, else
        without those the charts under it show too; names and verdicts wrap."""
        table = self.query_one("#annotator-table", DataTable)
        labels: tuple[str, ...] = ANNOTATOR_COLUMNS
        rows = self.annotator_rows
        if not fits(table, labels, rows, wrap=_ANNOTATOR_WRAP):
            kept = [i for i in range(len(labels)) if i not in CHARTED_COLUMNS]
            labels = tuple(labels[i] for i in kept)
            rows = [(key, tuple(cells[i] for i in kept)) for key, cells in rows]
        fill_fitted(table, labels, rows, wrap=(0, len(labels) - 1))

    def _show_left_out(self, people: tuple[Qualification, ...]) -> None:
        """Who the qualification gate leaves out of every figure, and why."""
        note = self.query_one("#qualification-note", Static)
        note.display = bool(people)
        text = Text("Not counted until they pass the qualification: ", style="bold")
        for number, standing in enumerate(people):
            text.append("; " if number else "")
            text.append_text(literal(standing.name))
            style = "red" if standing.status is QualificationStatus.FAILED else ""
            text.append(f" {standing.describe()}", style=style)
        note.update(text)

    def _reliability_shown(self, *, pending: bool) -> None:
        """Say above the reliability table whether it is being estimated again (the rows
        of the last estimate stay meanwhile)."""
        self.reliability_pending = pending
        title = RELIABILITY_TITLE
        if pending:
            title += " · being estimated…"
        self.query_one("#reliability-title", Static).update(title)

    def on_agreement_screen_reliability_estimated(self, message: ReliabilityEstimated) -> None:
        from reviewer.tui.screens.consensus_view import reliability_cells

        raters = message.raters
        table = self.query_one("#reliability-table", DataTable)
        table.clear()
        if not raters:
            table.add_row(*none_row(len(table.columns)))
        for rater in raters:
            table.add_row(*reliability_cells(rater), key=f"{rater.kind}:{rater.name}")
        self._reliability_shown(pending=False)

    def _show_annotator_charts(self, report: AgreementReport) -> None:
        people = report.per_annotator
        self.query_one("#keep-rate-bars", BarChart).show(
            [
                Bar(
                    stats.name,
                    stats.keep_rate.value,
                    f"{stats.keep_rate.value:>4.0%} of {stats.judgments:,}"
                    if stats.keep_rate.value is not None
                    else "—",
                )
                for stats in people
            ]
        )
        from reviewer.agreement.rows import median_seconds_text

        self.query_one("#seconds-bars", BarChart).show(
            [
                Bar(
                    stats.name,
                    stats.median_seconds,
                    median_seconds_text(stats, "{:>4.0f} s"),
                )
                for stats in people
            ]
        )

    def _show_heat_map(self, report: AgreementReport) -> None:
        figures = report.figures
        pairs = figures.keep_drop.cohen if self.keep_drop_map else figures.verdict.cohen
        coding = "keep/drop" if self.keep_drop_map else "all verdicts"
        self.query_one("#heatmap-title", Static).update(
            Text(f"Cohen's kappa for each pair of annotators, {coding} (k switches)", style="bold")
        )
        names = [stats.name for stats in report.per_annotator]
        table = self.query_one("#kappa-map", DataTable)
        table.clear(columns=True)
        table.add_column("", key="row-names")
        for name in names:
            table.add_column(literal(name), key=f"column:{name}")
        for name, cells in zip(names, kappa_matrix(names, pairs), strict=True):
            table.add_row(literal(name, "bold"), *cells, key=f"row:{name}")

    def _show_breakdowns(self, report: AgreementReport) -> None:
        from reviewer.agreement.rows import breakdown_cells, numbered_notes

        rows: list[tuple[str | None, tuple[Text | str, ...]]] = []
        if not report.by_kind and not report.by_source:
            rows.append((None, tuple(none_row(len(self.breakdown_labels)))))
        reasons: list[str] = []  # what the cells' "— (1)" refer to, under the table
        for label, groups in (("kind", report.by_kind), ("source", report.by_source)):
            for name, group in groups.items():
                # an interval under its value: wrapped at its own space, "[-0.29," ended a
                # line and "0.00]" began the next
                cells = [cell.replace(" [", "\n[", 1) for cell in breakdown_cells(group, reasons)]
                rows.append((None, (literal(f"{label}: {name}"), *map(literal, cells))))
        self.breakdown_rows = rows
        self._fit_breakdown()
        self.query_one("#breakdown-notes", FigureNotes).show(numbered_notes(reasons), bullet="")

    def _fit_breakdown(self) -> None:
        """The breakdown at the width it has: its figures wrap at their spaces, its headings
        take two lines (it ran 60 columns past 80)."""
        table = self.query_one("#breakdown", DataTable)
        labels = self.breakdown_labels
        wrap = tuple(i for i, label in enumerate(labels) if label != "compared")  # a count
        fill_fitted(table, labels, self.breakdown_rows, wrap=wrap)

    def _show_wrong_keys(self, figures: AgreementFigures, lead: bool) -> None:
        table = self.query_one("#wrong-keys", DataTable)
        table.clear()
        if not lead:  # the list shows what annotators answered: not for other annotators
            count = len(figures.key.likely_wrong_keys)
            table.add_row(
                Text(f"{counted(count, 'likely wrong key')}; only leads see the list"),
                *[""] * (len(table.columns) - 1),
            )
            return
        if not figures.key.likely_wrong_keys:
            table.add_row(*none_row(len(table.columns)))
        for entry in figures.key.likely_wrong_keys:
            table.add_row(
                literal(entry.item_id),
                f"{entry.revision}{'' if entry.is_current else ' (revised)'}",
                literal(entry.kind),
                literal(format_answer(entry.kind, entry.key)),
                literal(format_answer(entry.kind, entry.agreed_answer)),
                str(entry.annotators),
                literal(entry.decision or "—"),
            )
