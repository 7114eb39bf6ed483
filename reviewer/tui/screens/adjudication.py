"""The adjudication screen: a lead works through the conflict queue.

Left, the queue (items whose judgments disagree).  Right, the highlighted item:
first every judgment, in full and wrapped so nothing needs scrolling (verdict,
blind answer against the key, proposed key, other valid orders or sets,
duplicate-of, comment, time spent), then its current text, key and explanation,
earlier revisions and earlier decisions.  Keys: ``a`` approves, ``c`` approves
with a corrected key (a new revision), ``x`` rejects with a reason the lead
chooses (the one the verdicts point to is highlighted), ``u`` undoes the lead's last
decision (the row stays in the history) and puts the cursor back on its item, ``A``
approves every agreed item after showing how many, ``o`` shows the other items the case
names (its duplicate, the item a flag compares it with), read-only.  ↑↓ choose the case;
PgDn or Space (PgUp, Shift+Space) scroll it, with no Tab into it first.
Under the judgments, the consensus (``db.consensus``) on the item and what it would
decide; items it says have a wrong key or should be dropped join the queue even when
their judgments are not in conflict, and ``c`` offers its suggested key.

Reading and writing run in thread workers that post messages; the interface
never waits on the database.  Only leads can decide: for anyone else the screen
explains that and shows no judgments (annotators must not see each other's).
Item text is user data and is shown as plain text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import DataTable, Header, Static
from textual.worker import Worker, WorkerState, get_current_worker

from db.answers import format_answer
from db.vocabulary import ItemStatus, reason_word
from db.words import counted
from reviewer.tui.expected import show_expected_error
from reviewer.tui.literal import (
    line_broken,
    literal,
    none_row,
    notify_literally,
    withdraw_notice,
)
from reviewer.tui.responsive import apply_size_classes
from reviewer.tui.screens.adjudication_text import (
    case_text,
    history_text,
    judgments_text,
    related_items,
    suggested_reason,
    triage_text,
)
from reviewer.tui.screens.area import AreaScreen
from reviewer.tui.screens.consensus_view import DEFAULT_CONFIDENCE, consensus_text, referred_row
from reviewer.tui.screens.lead_modals import ConfirmModal, OtherItemsModal, ReasonModal, Rejection
from reviewer.tui.screens.prompt import PromptScreen, answer_validator
from reviewer.tui.widgets.footer import KeyFooter
from reviewer.tui.widgets.item_view import RAW_TITLE
from reviewer.tui.widgets.table_fit import fill_fitted, fits

if TYPE_CHECKING:
    from db.consensus import ItemConsensus
    from db.engine import Database
    from reviewer.adjudication import DecisionUndone
    from reviewer.conflict_cases import ConflictCase, DecisionRecord
    from reviewer.triage import TriageEntry

QUEUE_COLUMNS = ("item", "score", "kind", "source", "why")
NO_ROWS = "__none__"  # the key of the "none" row of an empty table
QUEUE_PAGE = 500  # conflicts listed at once; the rest follow as these are resolved


SAID_IN_FULL = {
    "a": "Approve the item as it stands",
    "c": "Approve with a corrected key (a new revision): type it, the consensus's or the "
    "annotators' suggestion ready",
    "x": "Reject for a reason you choose",
    "u": "Undo your last decision here (it stays in the item's history) and go back to its item",
    "o": "The items the case names side by side (the one it may duplicate, those its verdicts "
    "point to); only for a case that names one",
    "v": "The item's text exactly as stored",
    "A": "Approve every item whose judgments agree, after showing how many",
}
"""What ``?`` and the command palette say of the keys whose footer labels are short."""


class CaseJudgments(Static):
    """The judgments of the highlighted case, wrapped to the pane's width (never cut)."""


class AdjudicationScreen(AreaScreen):
    """Resolve conflicts into decisions (leads only)."""

    CSS_PATH = "lead.tcss"
    TITLE = "Adjudication"

    BINDINGS: ClassVar[list[BindingType]] = [
        # Short, so that at 80 columns a c x u o fit beside Esc, F2 F4, ? and q (u and o
        # were the first keys to go) and at 120 every key does; ? says each in full.
        Binding("a", "approve", "Approve", tooltip=SAID_IN_FULL["a"]),
        Binding("c", "approve_corrected", "Key…", tooltip=SAID_IN_FULL["c"]),
        Binding("x", "reject", "Reject…", tooltip=SAID_IN_FULL["x"]),
        Binding("u", "undo_decision", "Undo", tooltip=SAID_IN_FULL["u"]),
        Binding("o", "other_items", "Others", tooltip=SAID_IN_FULL["o"]),
        Binding("v", "toggle_raw", "Raw text", tooltip=SAID_IN_FULL["v"]),
        Binding("A", "approve_agreed", "Approve agreed…", tooltip=SAID_IN_FULL["A"]),
        Binding("r", "refresh", "Refresh"),
        Binding("escape", "leave", "Back"),
        # The case scrolls with the cursor in the queue (↑↓ choose the case): it needed a
        # Tab first, and PgDn moved the queue's cursor instead.
        Binding(
            "space,pagedown", "scroll_case(1)", "Scroll the case on", show=False, priority=True
        ),
        Binding(
            "shift+space,pageup",
            "scroll_case(-1)",
            "Scroll the case back",
            show=False,
            priority=True,
        ),
    ]

    @dataclass
    class QueueLoaded(Message):
        """The worker read the conflict queue (None: the person is not a lead)."""

        cases: list[ConflictCase] | None
        conflicts: int  # all conflicts, of which ``cases`` are the first QUEUE_PAGE
        agreed: int
        refusal: str = ""
        scores: dict[str, TriageEntry] = field(default_factory=dict)  # reviewer.triage
        newest_decision: int = 0  # db.decisions.newest_decision_id when it was read

    @dataclass
    class DecisionSaved(Message):
        record: DecisionRecord
        stored: bool = True  # False: the same decision was in force already

    @dataclass
    class DecisionRefused(Message):
        item_id: str
        reason: str

    @dataclass
    class UndoDone(Message):
        """The worker undid the lead's last decision."""

        undone: DecisionUndone

    @dataclass
    class AgreedCounted(Message):
        count: int

    @dataclass
    class AgreedApproved(Message):
        count: int

    @dataclass
    class ConsensusRead(Message):
        """The consensus on the items, and the cases it refers to the lead that the
        conflict queue does not list."""

        consensus: dict[str, ItemConsensus]
        referred: list[ConflictCase]
        confidence: float  # what the consensus decides at: the lead's target_confidence

    def __init__(self, database: Database, person_name: str) -> None:
        super().__init__(database, person_name)
        self.cases: dict[str, ConflictCase] = {}
        """The queue as last read, by item id, in queue order."""
        self.current: ConflictCase | None = None
        """The highlighted case."""
        self.refusal: str | None = None
        """Why this person may not decide (None for a lead, or before the first read)."""
        self.scores: dict[str, TriageEntry] = {}
        """The listed items' triage scores and reasons."""
        self.raw_text = False
        """Whether item text is shown exactly as stored instead of its display form."""
        self.decisions_before: int | None = None
        """The newest decision's id when the queue was first read: ``u`` undoes only the
        lead's decisions after it, those made here, never one from an earlier session."""
        self.consensus: dict[str, ItemConsensus] = {}
        self.consensus_confidence = DEFAULT_CONFIDENCE  # until the consensus is read
        """The consensus on each item, once read (after the queue)."""
        self.consensus_pending = False
        """Whether the consensus is being estimated (a second or more after each read of
        the queue): until it is, the screen says so rather than "nothing to resolve", since
        it may refer more items to the lead."""
        self.referred = 0
        """How many listed items the consensus referred to the lead in its last read."""
        self.queue_summary = Text()
        """The line above the queue, as the queue's read wrote it."""
        self.queue_rows: list[tuple[str, tuple[Text, ...]]] = []
        """The queue's rows as shown: item id (or ``NO_ROWS``) and cells."""
        self.follow: str | None = None
        """The item the cursor goes to when the queue is next read (the one just undone),
        rather than the highlighted one."""
        self._decisions_said: dict[str, str] = {}  # item id: the notice its decision got

    def compose(self) -> ComposeResult:
        apply_size_classes(self)
        yield Header()
        yield Static("Reading the conflict queue …", id="queue-summary")
        with Horizontal(id="adjudication-area"):
            yield DataTable(id="queue", cursor_type="row", zebra_stripes=True)
            with Vertical(id="case-pane"):
                yield CaseJudgments("", id="judgments")
                with VerticalScroll(id="case-scroll"):
                    yield Static("", id="case-text")
                    yield Static("", id="case-history")
        yield KeyFooter(compact=True)

    def on_mount(self) -> None:
        self.query_one("#queue", DataTable).add_columns(*QUEUE_COLUMNS)
        self.query_one("#judgments", CaseJudgments).border_title = "Judgments"
        self.load_queue()

    # ---------------------------------------------------------- workers

    @work(thread=True, exclusive=True, exit_on_error=False, group="queue")
    def load_queue(self) -> None:
        from db.decisions import newest_decision_id
        from db.people import PermissionDenied, require_lead
        from reviewer.conflict_cases import conflict_queue, count_agreed, count_status

        worker = get_current_worker()
        with self.database.session() as session:
            try:
                require_lead(session, self.person_name)
            except PermissionDenied as error:
                self.post_message(self.QueueLoaded(None, 0, 0, str(error)))
                return
            newest_decision = newest_decision_id(session)
        from reviewer.triage import triage_scores

        cases = conflict_queue(self.database, limit=QUEUE_PAGE)
        conflicts = count_status(self.database, "conflict")
        agreed = count_agreed(self.database)
        scores = triage_scores(self.database, [case.item.id for case in cases])
        # The most suspicious conflicts first (triage's score), then the oldest.
        cases.sort(key=lambda case: -scores[case.item.id].score if case.item.id in scores else 0)
        if not worker.is_cancelled:  # a newer read was asked for meanwhile
            self.post_message(
                self.QueueLoaded(
                    cases, conflicts, agreed, scores=scores, newest_decision=newest_decision
                )
            )

    @work(thread=True, exit_on_error=False, group="decide")
    def save_decision(
        self,
        item_id: str,
        status: str,
        key: str | None = None,
        reason: str | None = None,
        comment: str = "",
    ) -> None:
        from reviewer.adjudication import AdjudicationError, PermissionDenied, decide

        try:
            made = decide(
                self.database,
                self.person_name,
                item_id,
                status,
                key=key,
                reason=reason,
                comment=comment,
            )
        except (AdjudicationError, PermissionDenied) as error:
            self.post_message(self.DecisionRefused(item_id, str(error)))
            return
        self.post_message(self.DecisionSaved(made.record, stored=made.stored))

    @work(thread=True, exit_on_error=False, group="decide")
    def undo_last_decision(self) -> None:
        from reviewer.adjudication import AdjudicationError, PermissionDenied, undo_decision

        try:
            undone = undo_decision(
                self.database, self.person_name, made_after=self.decisions_before
            )
        except (AdjudicationError, PermissionDenied) as error:
            self.post_message(self.DecisionRefused("undo", str(error)))
            return
        self.post_message(self.UndoDone(undone))

    @work(thread=True, exclusive=True, exit_on_error=False, group="consensus")
    def load_consensus(self, listed: list[str]) -> None:
        from db.consensus import consensus_of, decision_confidence
        from reviewer.consensus_decisions import referred_cases

        worker = get_current_worker()
        consensus = consensus_of(self.database)
        confidence = decision_confidence(self.database)
        referred = referred_cases(self.database, consensus, confidence, exclude=listed)
        if not worker.is_cancelled:
            entries = {entry.item_id: entry for entry in consensus.items}
            self.post_message(self.ConsensusRead(entries, referred, confidence))

    @work(thread=True, exit_on_error=False, group="decide")
    def count_agreed_items(self) -> None:
        from reviewer.conflict_cases import count_agreed

        self.post_message(self.AgreedCounted(count_agreed(self.database)))

    @work(thread=True, exit_on_error=False, group="decide")
    def approve_all_agreed(self) -> None:
        from reviewer.adjudication import PermissionDenied, approve_agreed

        try:
            count = approve_agreed(self.database, self.person_name)
        except PermissionDenied as error:
            self.post_message(self.DecisionRefused("agreed items", str(error)))
            return
        self.post_message(self.AgreedApproved(count))

    @on(Worker.StateChanged)
    def _worker_failed(self, event: Worker.StateChanged) -> None:
        groups = ("queue", "decide", "consensus")
        if event.state is WorkerState.ERROR and event.worker.group in groups:
            show_expected_error(self, event.worker.error)
            if event.worker.group == "consensus" and self.refusal is None:
                self.consensus_pending = False  # the notice says why; nothing more is coming
                self._show_summary()
                self._show_case(self.current)

    # ---------------------------------------------------------- actions

    def _case_to_decide(self) -> ConflictCase | None:
        """The highlighted case, if this person may decide it (else say why, and None)."""
        if self.refusal is not None:
            notify_literally(self, self.refusal, severity="error")
            return None
        if self.current is None:
            notify_literally(self, "No conflict is selected.", severity="warning")
        return self.current

    def action_approve(self) -> None:
        case = self._case_to_decide()
        if case is not None:
            self.save_decision(case.item.id, ItemStatus.APPROVED)

    def action_approve_corrected(self) -> None:
        case = self._case_to_decide()
        if case is None:
            return
        item = case.item
        prompt = PromptScreen(
            f"Approve {item.id} with a corrected key",
            f"The current key is {format_answer(item.kind, item.key)}. Type the right one; "
            "Enter approves with it, Esc cancels.",
            answer_validator(item, "that is the current key; approve with a instead"),
            format_answer(item.kind, self._suggested_key(case)),
        )

        def approve_with(key: str | None) -> None:
            if key:
                self.save_decision(item.id, ItemStatus.APPROVED, key=key)

        self.app.push_screen(prompt, approve_with)

    def _suggested_key(self, case: ConflictCase) -> str:
        """The consensus's suggested key, else the annotators' (``key_to_offer``)."""
        entry = self.consensus.get(case.item.id)
        if entry is not None and entry.suggested_key is not None:
            return entry.suggested_key
        return case.key_to_offer

    def action_reject(self) -> None:
        case = self._case_to_decide()
        if case is None:
            return

        def reject_for(rejection: Rejection | None) -> None:
            if rejection is not None:
                self.save_decision(
                    case.item.id,
                    ItemStatus.REJECTED,
                    reason=rejection.reason,
                    comment=rejection.comment,
                )

        self.app.push_screen(
            ReasonModal(case.item.id, case.item.kind, suggested_reason(case)), reject_for
        )

    def _named_items(self) -> list[str]:
        """The other items the highlighted case names (its duplicate, a compared item)."""
        if self.current is None or self.refusal is not None:
            return []
        return related_items(self.current, self.scores.get(self.current.item.id))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """o only for a case that names another item."""
        if action == "other_items":
            return bool(self._named_items())
        return True

    def action_other_items(self) -> None:
        named = self._named_items()
        if self.current is not None and named:
            modal = OtherItemsModal(self.database, self.current.item.id, named, raw=self.raw_text)
            self.app.push_screen(modal)

    def action_undo_decision(self) -> None:
        if self.refusal is not None:
            notify_literally(self, self.refusal, severity="error")
            return
        if self.decisions_before is None:  # the queue is still being read
            return
        self.undo_last_decision()

    def action_approve_agreed(self) -> None:
        if self.refusal is not None:
            notify_literally(self, self.refusal, severity="error")
            return
        self.count_agreed_items()

    def action_refresh(self) -> None:
        self.load_queue()

    def action_scroll_case(self, pages: int) -> None:
        """The case's text and history a page on (or back), wherever the focus is."""
        case = self.query_one("#case-scroll", VerticalScroll)
        (case.scroll_page_down if pages > 0 else case.scroll_page_up)(animate=False)

    def action_toggle_raw(self) -> None:
        self.raw_text = not self.raw_text
        self.query_one("#case-scroll").border_title = RAW_TITLE if self.raw_text else ""
        if self.current is not None:
            self._show_case(self.current)

    # ---------------------------------------------------------- messages

    def on_adjudication_screen_queue_loaded(self, message: QueueLoaded) -> None:
        table = self.query_one("#queue", DataTable)
        summary = self.query_one("#queue-summary", Static)
        if message.cases is None:
            self.refusal = message.refusal
            summary.update(literal(f"{message.refusal}. This screen is for leads.", "bold red"))
            return
        self.refusal = None
        if self.decisions_before is None:
            self.decisions_before = message.newest_decision
        previous = self.current.item.id if self.current else None
        if self.follow is not None:  # the item an undo put back: the lead looks at it again
            previous, self.follow = self.follow, None
        self.cases = {case.item.id: case for case in message.cases}
        self.scores = message.scores
        rows: list[tuple[str, tuple[Text, ...]]] = []
        if not message.cases:
            rows.append((NO_ROWS, tuple(none_row(len(QUEUE_COLUMNS)))))
        for case in message.cases:
            item = case.item
            why = "\n".join(case.disagreements) or "—"  # one line per annotator, wrapped
            entry = message.scores.get(item.id)
            cells = (
                literal(item.id),
                Text(f"{entry.score:.1f}" if entry else "—", justify="right"),
                literal(item.kind.value),
                literal(item.source),
                literal(why),
            )
            rows.append((item.id, cells))
        self._fill_queue(rows)
        shown = (
            f" (the first {len(message.cases):,} listed)"
            if message.conflicts > len(message.cases)
            else ""
        )
        self.queue_summary = Text(
            f"{counted(message.conflicts, 'conflict')} to resolve{shown} · "
            f"{counted(message.agreed, 'agreed item')} waiting for approval (A) · "
            "u undoes your last decision here"
        )
        self.referred = 0
        self.consensus_pending = True
        self._show_summary()
        self.load_consensus(list(self.cases))
        if not message.cases:
            self._show_case(None)
            return
        ids = list(self.cases)
        row = ids.index(previous) if previous in self.cases else 0
        table.move_cursor(row=row)
        self._show_case(self.cases[ids[row]])

    def _fill_queue(self, rows: list[tuple[str, tuple[Text, ...]]]) -> None:
        """The queue's rows, kept in ``queue_rows``.  Columns sized here, with the rows,
        rather than by the table when it is next idle: the queue never shows header-wide
        columns that jump a moment later."""
        self.queue_rows = rows
        table = self.query_one("#queue", DataTable)
        # "source" and "why" wrap in the width the other columns leave (80 columns cut
        # them); where even then "why" does not fit, it goes (the case pane says why):
        # out of sight to the right, it still made every row as tall as its lines.
        labels: tuple[str, ...] = QUEUE_COLUMNS
        wrap: tuple[int, ...] = (QUEUE_COLUMNS.index("source"), QUEUE_COLUMNS.index("why"))
        if not fits(table, labels, rows, wrap=wrap):
            labels, wrap = labels[:-1], wrap[:-1]
            rows = [(key, cells[: len(labels)]) for key, cells in rows]
        fill_fitted(table, labels, rows, wrap=wrap)

    def on_resize(self) -> None:
        # fitted to the width the queue had: "why", left out beside the case at 120
        # columns, stayed out at 80 (the case below it), and came back out of sight
        if self.queue_rows:
            self.call_after_refresh(self._fit_queue_again)

    def _fit_queue_again(self) -> None:
        table = self.query_one("#queue", DataTable)
        row = table.cursor_row
        self._fill_queue(self.queue_rows)
        table.move_cursor(row=row)

    def _show_summary(self) -> None:
        """The line above the queue: the queue's read, after what the consensus adds."""
        if self.consensus_pending:
            told = Text("estimating the consensus (it may refer more items) · ", style="dim")
        elif self.referred:
            told = Text(f"{counted(self.referred, 'item')} the consensus refers to you · ")
        else:
            told = Text()
        self.query_one("#queue-summary", Static).update(told + self.queue_summary)

    def on_adjudication_screen_consensus_read(self, message: ConsensusRead) -> None:
        self.consensus = message.consensus
        self.consensus_confidence = message.confidence
        referred = [case for case in message.referred if case.item.id not in self.cases]
        if referred:
            table = self.query_one("#queue", DataTable)
            cursor = table.cursor_row if self.cases else 0
            self.cases.update((case.item.id, case) for case in referred)
            self._fill_queue(
                [row for row in self.queue_rows if row[0] != NO_ROWS]
                + [
                    (c.item.id, referred_row(c, message.consensus[c.item.id], message.confidence))
                    for c in referred
                ]
            )
            table.move_cursor(row=cursor)
        self.referred = len(referred)
        self.consensus_pending = False
        self._show_summary()
        if self.current is None and self.cases:
            self._show_case(next(iter(self.cases.values())))
        else:
            self._show_case(self.current)  # None: the empty queue's text, now final

    @on(DataTable.RowHighlighted, "#queue")
    def _case_highlighted(self, event: DataTable.RowHighlighted) -> None:
        case = self.cases.get(str(event.row_key.value))
        if case is not None:
            self._show_case(case)

    def _show_case(self, case: ConflictCase | None) -> None:
        if case is None or self.current is None or case.item.id != self.current.item.id:
            # another case opens at its top: the last one's page-downs showed the middle
            # of the next (the same case redrawn, by the consensus or v, stays put)
            self.query_one("#case-scroll", VerticalScroll).scroll_home(animate=False)
        self.current = case
        self.refresh_bindings()  # o applies to a case that names another item
        judgments = self.query_one("#judgments", CaseJudgments)
        if case is None:
            judgments.display = False
            nothing = (
                "No conflicts so far; the consensus is being estimated and may refer items to you."
                if self.consensus_pending
                else "No conflicts: nothing to resolve."
            )
            self.query_one("#case-text", Static).update(Text(nothing))
            self.query_one("#case-history", Static).update("")
            return
        judgments.display = True
        judgments.border_title = f"Judgments of revision {case.item.revision}"
        shown = judgments_text(case)
        if case.item.id in self.consensus:
            on_item = self.consensus[case.item.id]
            shown.append_text(consensus_text(on_item, self.consensus_confidence))
        elif self.consensus_pending:
            shown.append_text(Text("\nconsensus  being estimated…", style="dim"))
        judgments.update(line_broken(shown))
        self.query_one("#case-text", Static).update(line_broken(case_text(case, raw=self.raw_text)))
        history = history_text(case)
        entry = self.scores.get(case.item.id)
        if entry is not None:
            history.append_text(triage_text(entry))
        if named := related_items(case, entry):
            history.append("\no ", style="bold")
            history.append_text(literal(f"shows {', '.join(named)} beside this case", "dim"))
        self.query_one("#case-history", Static).update(line_broken(history))

    def on_adjudication_screen_decision_saved(self, message: DecisionSaved) -> None:
        record = message.record
        detail = ""
        case = self.cases.get(record.item_id)  # gone only if a reload dropped it meanwhile
        if record.corrected_key and record.final_key:
            key = format_answer(case.item.kind, record.final_key) if case else record.final_key
            detail = f" with key {key}"
        why = ""
        if record.reason and record.status == "rejected":
            why = f" ({reason_word(record.reason, case.item.kind if case else ())})"
        if message.stored:
            said = f"{record.item_id} {record.status}{detail}{why} · u undoes it"
            self._decisions_said[record.item_id] = said
            notify_literally(self, said)
        else:
            notify_literally(self, f"{record.item_id} was {record.status} already; nothing stored")
        self._drop_case(record.item_id)
        self.load_queue()  # in the background: other leads may have decided meanwhile

    def on_adjudication_screen_undo_done(self, message: UndoDone) -> None:
        # "econ:34 rejected · u undoes it" stayed above "Undone ...": the undo takes it back
        if said := self._decisions_said.pop(message.undone.undone.item_id, None):
            withdraw_notice(self.app, said)
        notify_literally(self, message.undone.describe(), title="Undone", timeout=10)
        self.follow = message.undone.undone.item_id
        self.load_queue()

    def _drop_case(self, item_id: str) -> None:
        """Take a decided item off the list at once and show the next one."""
        if item_id not in self.cases:
            return
        ids = list(self.cases)
        position = ids.index(item_id)
        del self.cases[item_id]
        table = self.query_one("#queue", DataTable)
        table.remove_row(item_id)
        if not self.cases:
            table.add_row(*none_row(len(table.columns)), key=NO_ROWS)
            self._show_case(None)
            return
        row = min(position, len(self.cases) - 1)
        table.move_cursor(row=row)
        self._show_case(self.cases[list(self.cases)[row]])

    def on_adjudication_screen_decision_refused(self, message: DecisionRefused) -> None:
        notify_literally(self, f"{message.item_id}: {message.reason}", severity="error", timeout=8)

    def on_adjudication_screen_agreed_counted(self, message: AgreedCounted) -> None:
        if message.count == 0:
            notify_literally(self, "No agreed items to approve.")
            return

        def confirmed(yes: bool | None) -> None:
            if yes:
                self.approve_all_agreed()

        self.app.push_screen(
            ConfirmModal(
                f"Approve all {counted(message.count, 'agreed item')} as {self.person_name}?"
            ),
            confirmed,
        )

    def on_adjudication_screen_agreed_approved(self, message: AgreedApproved) -> None:
        notify_literally(self, f"Approved {counted(message.count, 'agreed item')}.")
        self.load_queue()
