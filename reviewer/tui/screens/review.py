"""The review screen: blind answer, reveal, verdict, then on to the next item.

Phases:

- ``blind``: the item without key or explanation; letters or digits build the answer.
- ``revealed``: key and explanation beside the answer; one key per verdict.
- ``judged``: an item this annotator already judged (browsing), shown with their judgment.
- ``authored``: an item whose current revision this annotator wrote (they know its
  key): shown with the key and their judgment of the revision they saw, never blind.
- ``empty``: nothing left in the queue for these filters.

Database work runs in thread workers that post messages (``reviewer.tui.messages``);
the handlers here update the widgets.  While a request is in flight further
requests are ignored, so a double key press never submits twice.  One write runs on
the screen's own thread: the blind answer, stored as Enter shows the key (``db.reveals``),
so the key is never on screen unrecorded and a key typed next acts on the reveal.
Nothing is stored until the annotator completes an action: a verdict whose details are
asked for (other valid answers, a corrected key, the copied item, what is
sensitive, the edit or comment of a flawed item) is stored only once they are
given; Esc stores nothing.  A key that does nothing now says why.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from functools import partial

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.reactive import reactive
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Input
from textual.worker import Worker, WorkerState

from db.answers import AnswerError, parse_answer
from db.engine import Database
from db.flags import ItemFlag
from db.items import ItemSnapshot
from db.qualification import standing_of
from db.reveals import store_reveal
from db.vocabulary import ItemKind, QualificationStatus, Verdict
from reviewer.judging import (
    ItemEdit,
    JudgmentInput,
    JudgmentRefused,
    edit_item,
    retract_judgment,
    store_judgment,
)
from reviewer.queue import OwnJudgment, QueueError, QueueFilter, ReviewQueue
from reviewer.tui.empty_queue import empty_queue_text
from reviewer.tui.expected import MAYBE_EXPECTED, show_expected_error
from reviewer.tui.literal import notify_literally
from reviewer.tui.messages import (
    NOTHING_DONE,
    ActionRefused,
    GoldChecked,
    GuidelinesChecked,
    HistoryEnded,
    ItemLoaded,
    JudgmentRetracted,
    ProgressCounted,
    RevisionSaved,
)
from reviewer.tui.responsive import FOLD_BELOW, apply_size_classes
from reviewer.tui.screens.help import HelpRow
from reviewer.tui.screens.review_keys import (
    FOOTER_KEPT,
    REVIEW_BINDINGS,
    Phase,
    action_applies,
    key_shape,
    palette_actions,
    review_help_rows,
    why_not,
)
from reviewer.tui.screens.review_loading import item_loaded
from reviewer.tui.screens.review_notes import retraction_note, revision_saved_note
from reviewer.tui.screens.review_reveals import (
    KeptReveal,
    SessionReveals,
    unjudged_reveals_question,
)
from reviewer.tui.timer import ActiveTimer
from reviewer.tui.widgets.answer_builder import AnswerDraft, AnswerPanel
from reviewer.tui.widgets.footer import KeyFooter
from reviewer.tui.widgets.item_view import ChoiceRow, ItemHeading, ItemTextPanel, ItemView
from reviewer.tui.widgets.progress import ProgressLine
from reviewer.tui.widgets.reveal import RevealPanel
from reviewer.tui.widgets.verdict_bar import VerdictBar

# The modal screens are imported inside the actions that open them: startup stays fast.

CLAIM_REFRESH_SECONDS = 120.0
PROGRESS_DELAY_SECONDS = 0.3


class ReviewScreen(Screen[None]):
    """Judge items one after another."""

    BINDINGS = REVIEW_BINDINGS

    phase: reactive[Phase] = reactive(Phase.LOADING, bindings=True)
    """Where the annotator is in the flow for the current item."""

    def __init__(
        self,
        db: Database,
        queue: ReviewQueue,
        timer: ActiveTimer,
        notices: tuple[tuple[str, str], ...] = (),
    ) -> None:
        super().__init__()
        self.notices = notices  # (title, text) at the start: in the status line (no toast)
        self.db = db
        self.queue = queue
        self.timer = timer
        self.item: ItemSnapshot | None = None
        self.flags: tuple[ItemFlag, ...] = ()
        """The current item's flags, held until the reveal shows them."""
        self.own: OwnJudgment | None = None
        self.draft: AnswerDraft | None = None
        self.blind_answer: str = ""
        self.reveals = SessionReveals()
        """Items left with the key shown and no verdict, this session."""
        self.busy = False
        self._progress_timer: Timer | None = None
        self._welcome_due = False  # a new annotator: the guidelines open with the first item

    # --- layout ----------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        apply_size_classes(self)
        yield ItemHeading(id="item-heading")
        with Horizontal(id="main"):
            yield ItemView(id="item-view")
            with Vertical(id="side"):
                yield AnswerPanel(id="answer-panel")
                yield RevealPanel(id="reveal-panel")
        yield VerdictBar(id="verdict-bar")
        yield ProgressLine(id="review-progress")
        yield KeyFooter(compact=True, kept=FOOTER_KEPT)

    def on_mount(self) -> None:
        self.query_one(ProgressLine).show(self.queue.annotator, None, self.queue.filters.describe())
        for title, text in self.notices:
            self.query_one(ProgressLine).show_notice(title, text)
        self.app.app_suspend_signal.subscribe(self, lambda _app: self.timer.pause())
        self.app.app_resume_signal.subscribe(self, lambda _app: self.timer.resume())
        self.set_interval(CLAIM_REFRESH_SECONDS, self.refresh_claim)
        self.watch_phase(self.phase)
        self.check_guidelines()
        self.request(lambda queue: queue.fetch_next())

    def on_unmount(self) -> None:
        # Leaving mid-item: let someone else have it straight away.
        if self.item is not None and self.phase in (Phase.BLIND, Phase.REVEALED):
            self.queue.release_claim(self.item.id)

    def watch_phase(self, phase: Phase) -> None:
        # Toggle the regions directly: a class on the screen would restyle every widget.
        keyed = phase in (Phase.REVEALED, Phase.JUDGED, Phase.AUTHORED)
        self.query_one("#side").display = phase is not Phase.EMPTY
        self.query_one(AnswerPanel).display = phase in (Phase.BLIND, Phase.LOADING)
        self.query_one(RevealPanel).display = keyed
        # Stacked, the item's room first (app.tcss); restyling all under #main took 12 ms.
        main = self.query_one("#main").set_class(keyed, "-keyed", update=False)
        self.app.stylesheet.update_nodes([main, *main.children])
        self.query_one(VerdictBar).display = phase is Phase.REVEALED
        self.query_one(ProgressLine).clear_warning()  # it was about the phase before
        self._place_notices()

    @on(events.ScreenSuspend)
    @on(events.ScreenResume)
    @on(events.Resize)
    def _place_notices(self) -> None:
        """The start notices count their 10 s only in sight, so the guidelines that open
        first do not use them up; on a short terminal they give way while the key is
        shown: at 80x24 their lines were the item's events and choices."""
        keyed = self.query_one(RevealPanel).display and self.app.size.height < FOLD_BELOW
        self.query_one(ProgressLine).hold_notices(self.app.screen is not self or keyed)

    # --- which keys apply --------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        typing = action == "leave_comment" and self.focused is self.query_one("#comment")
        position = self.queue.history.position
        return action_applies(action, parameters, self.phase, self.item, position, typing)

    def action_scroll_on(self, back: bool = False) -> None:
        """The item and the reveal a page on (or back), each as far as it goes."""
        for panel in self.query(ItemTextPanel):
            if panel.display and panel.max_scroll_y:
                (panel.scroll_page_up if back else panel.scroll_page_down)(animate=False)

    def action_scroll_back(self) -> None:
        self.action_scroll_on(back=True)

    def action_explain(self, key: str) -> None:
        """A key none of whose actions applies now: say why (no key is dead)."""
        said = why_not(
            key,
            self.phase,
            self.item,
            judged_verdict=self.own.verdict if self.own is not None else None,
            first_of_session=self.queue.history.position <= 0,
        )
        self._nothing_done(said)

    def help_rows(self) -> list[HelpRow]:
        return review_help_rows()

    def palette_commands(self) -> Iterator[tuple[str, str, Callable[[], object]]]:
        """(title, help, callback) for each action that applies now (for the command palette)."""
        for title, text, action in palette_actions(self.check_action):
            yield title, text, partial(self.run_action, action)

    # --- workers -----------------------------------------------------------------------

    def request(
        self, operation: Callable[[ReviewQueue], ItemSnapshot | None], note: str = ""
    ) -> None:
        """Run a queue operation in a worker unless one is already running."""
        if self.busy:
            self.app.bell()
            return
        self._keep_reveal()
        self.busy = True
        self._load(operation, note)

    def _keep_reveal(self) -> None:
        """Leaving an item whose key is shown, before a verdict: it comes back revealed."""
        if self.item is not None and self.phase is Phase.REVEALED:
            comment = self.query_one(VerdictBar).comment
            self.reveals.leave(
                self.item, KeptReveal(self.blind_answer, comment, self.timer.seconds)
            )

    @work(thread=True, group="review", exit_on_error=False)
    def _load(self, operation: Callable[[ReviewQueue], ItemSnapshot | None], note: str) -> None:
        try:
            item = operation(self.queue)
        except QueueError as error:
            self.post_message(ActionRefused(str(error), title="Cannot open"))
            return
        if item is None and operation is ReviewQueue.previous_item:
            self.post_message(HistoryEnded())
            return
        self.post_message(item_loaded(self.db, self.queue, item, note))

    @work(thread=True, group="review", exit_on_error=False)
    def _submit(self, given: JudgmentInput, edit: ItemEdit | None) -> None:
        try:
            receipt = store_judgment(self.db, self.queue.annotator, given, edit=edit)
        except JudgmentRefused as error:
            current = self.queue.current_item()
            changed = current is None or current.revision != given.revision_number
            self.post_message(ActionRefused(str(error), reload=changed))
            return
        self.queue.record_submitted(receipt.judgment_id)
        note = f"✓ saved {receipt.verdict.value} on {receipt.item_id}"
        if receipt.revision is not None:
            note += f" and your edit as revision {receipt.revision.new_revision}"
        if receipt.gold is not None:
            standing = standing_of(self.db, self.queue.annotator)
            qualification = (
                ""
                if standing.status is QualificationStatus.NOT_GATED
                else f"qualification {standing.describe()}"
            )
            self.post_message(GoldChecked(receipt.gold, qualification))
            note += f" · {receipt.gold.describe()}"
        # One message for "saved" and the next item: one screen update, not two.
        self.post_message(item_loaded(self.db, self.queue, self.queue.fetch_next(), note))

    @work(thread=True, group="review", exit_on_error=False)
    def _undo(self, judgment_id: int | None) -> None:
        try:
            receipt = retract_judgment(self.db, self.queue.annotator, judgment_id)
        except JudgmentRefused as error:  # nothing to undo, or no longer undoable
            self.post_message(ActionRefused(str(error), title=NOTHING_DONE))
            return
        self.queue.record_retracted(receipt.judgment_id)
        loaded = item_loaded(self.db, self.queue, self.queue.open_item(receipt.item_id))
        self.post_message(JudgmentRetracted(receipt, revealed=loaded.revealed is not None))
        self.post_message(loaded)

    @work(thread=True, group="review", exit_on_error=False)
    def _edit(self, item: ItemSnapshot, edit: ItemEdit) -> None:
        try:
            receipt = edit_item(
                self.db, self.queue.annotator, item.id, edit, base_revision=item.revision
            )
        except JudgmentRefused as error:
            # The judgment (if any) is stored already; say why the edit was not, move on.
            self.post_message(ActionRefused(f"edit not saved: {error}"))
        else:
            self.post_message(RevisionSaved(receipt))
        self.post_message(item_loaded(self.db, self.queue, self.queue.fetch_next()))

    @work(thread=True, group="guidelines", exit_on_error=False)
    def check_guidelines(self) -> None:
        news = self.queue.guidelines_news()
        if news is not None:
            self.post_message(GuidelinesChecked(news))

    def _schedule_progress(self) -> None:
        """Recount shortly after the annotator settles on an item, not on every key press:
        the count reads every open item, and it should not compete with moving on."""
        if self._progress_timer is not None:
            self._progress_timer.stop()
        self._progress_timer = self.set_timer(PROGRESS_DELAY_SECONDS, self.count_progress)

    @work(thread=True, group="progress", exclusive=True, exit_on_error=False)
    def count_progress(self) -> None:
        self.post_message(ProgressCounted(self.queue.progress()))

    @work(thread=True, group="claim", exclusive=True, exit_on_error=False)
    def refresh_claim(self) -> None:
        self.queue.refresh_claim()

    @on(Worker.StateChanged)
    def worker_failed(self, event: Worker.StateChanged) -> None:
        if event.state is WorkerState.ERROR:
            self.busy = False
            show_expected_error(self, event.worker.error)

    # --- results from workers ---------------------------------------------------------

    def on_item_loaded(self, message: ItemLoaded) -> None:
        self.busy = False
        previous = self.item
        self.item, self.own = message.item, message.own_judgment
        self.flags = message.flags
        view = self.query_one(ItemView)
        reveal = self.query_one(RevealPanel)
        reveal.clear()
        heading = self.query_one("#item-heading", ItemHeading)
        if message.item is None:
            self.draft = None
            empty = empty_queue_text(message, self.db.url_for_people, self.queue.filters.describe())
            heading.show(None, Text(empty.heading, style="bold"))
            view.show_message(empty.title, empty.body)
            self.phase = Phase.EMPTY
        else:
            item = message.item
            heading.show(item)
            view.show_item(item)
            if message.authored:
                self.draft = None
                reveal.show_authored(item, message.own_judgment)
                self.phase = Phase.AUTHORED
            elif message.own_judgment is not None:
                self.draft = None
                answer = message.own_judgment.blind_answer
                reveal.reveal(item, answer, message.own_judgment, self.flags)
                view.mark_against_key(answer, item.key)
                self.phase = Phase.JUDGED
            else:
                kept = self.reveals.resume(item, message.revealed)
                self.query_one(VerdictBar).allow_no_order(item.kind is ItemKind.ORDERING)
                self.query_one(VerdictBar).set_comment(kept.comment if kept else "")
                self.timer.start(kept.seconds if kept else 0.0)
                if kept is None:
                    self.draft = AnswerDraft(item.kind, item.labels)
                    self.query_one(AnswerPanel).show(self.draft)
                    self.phase = Phase.BLIND
                else:  # its key was shown (and stored): never blind again
                    self.draft = None
                    self._reveal(item, kept.blind_answer)
            if previous is None or key_shape(previous) != key_shape(item):
                self.refresh_bindings()  # the letter keys that apply depend on the item
        view.focus()
        self.query_one(ProgressLine).item_arrived()  # the last item's note is over
        if message.note:
            self.query_one(ProgressLine).show_note(message.note)
        self._schedule_progress()
        if self._welcome_due:
            self._welcome_due = False
            self.action_guidelines(first=True)

    def on_history_ended(self, _message: HistoryEnded) -> None:
        self.busy = False
        self.query_one(ProgressLine).show_note("this is the first item of the session")

    def on_gold_checked(self, message: GoldChecked) -> None:
        outcome = message.outcome
        notify_literally(
            self,
            "\n".join(filter(None, (outcome.describe(), message.qualification))),
            title="Gold item",
            severity="information" if outcome.matches else "warning",
            timeout=8,
        )

    def on_guidelines_checked(self, message: GuidelinesChecked) -> None:
        news = message.news
        if news.first:
            if self.phase is Phase.LOADING:
                self._welcome_due = True  # opened with the first item, at its kind
            else:
                self.action_guidelines(first=True)
            return
        since = (
            f" (your last judgment was under version {news.last_seen})" if news.last_seen else ""
        )
        notify_literally(
            self,
            f"The guidelines are at version {news.current}{since}: g shows them.",
            title="Guidelines changed",
            timeout=10,
        )

    def on_judgment_retracted(self, message: JudgmentRetracted) -> None:
        receipt = message.receipt
        self.reveals.undone(receipt)  # its comment and details are offered again
        self.query_one(ProgressLine).show_note(
            retraction_note(receipt, message.revealed), before_item=True
        )
        if receipt.revision_note:
            notify_literally(self, receipt.describe(), title="Undone", timeout=10)

    def on_revision_saved(self, message: RevisionSaved) -> None:
        self.query_one(ProgressLine).show_note(
            revision_saved_note(message.receipt), before_item=True
        )

    def on_action_refused(self, message: ActionRefused) -> None:
        self.busy = False
        if message.title == NOTHING_DONE:
            self._nothing_done(message.message)
        else:
            notify_literally(self, message.message, title=message.title, severity="warning")
        if message.reload and self.item is not None:
            item_id = self.item.id
            self.request(
                lambda queue: queue.open_item(item_id), "The item changed; here it is again."
            )

    def on_progress_counted(self, message: ProgressCounted) -> None:
        self.query_one(ProgressLine).show(
            self.queue.annotator, message.progress, self.queue.filters.describe()
        )

    # --- interaction -------------------------------------------------------------------

    def on_key(self, _event: events.Key) -> None:
        self.timer.touch()

    def on_click(self, _event: events.Click) -> None:
        self.timer.touch()

    def _show_draft(self) -> None:
        if self.draft is not None:
            self.query_one(AnswerPanel).show(self.draft)
            self.query_one(ItemView).mark_chosen(self.draft.letters)

    def action_pick(self, label: str) -> None:
        if self.draft is not None and not self.draft.press(label):
            self._say_placed(label)
        self._show_draft()

    def action_pick_number(self, number: int) -> None:
        if self.draft is not None and not self.draft.press_number(number):
            self._say_placed(self.draft.labels[number - 1])
        self._show_draft()

    def _say_placed(self, label: str) -> None:  # the event is in the order already
        self._nothing_done(f"{label} is already in your order; Backspace takes back the last step")

    def _nothing_done(self, said: str) -> None:  # over the status line: a toast hid the answer
        self.app.bell()
        self.query_one(ProgressLine).show_warning(NOTHING_DONE, said)

    @on(ChoiceRow.Picked)
    def choice_clicked(self, message: ChoiceRow.Picked) -> None:
        if self.phase is Phase.BLIND:
            self.action_pick(message.label)

    def action_take_back(self) -> None:
        if self.draft is not None and not self.draft.back():
            self.app.bell()
        self._show_draft()

    @on(AnswerPanel.BackRequested)
    def back_clicked(self) -> None:
        self.action_take_back()

    @on(AnswerPanel.SubmitRequested)
    def submit_clicked(self) -> None:
        self.action_submit_answer()

    def action_submit_answer(self) -> None:
        if self.draft is None or self.item is None:
            return
        self.draft.complete_last()
        if not self.draft.is_complete:
            self._show_draft()
            needed = "place every event" if self.item.kind is ItemKind.ORDERING else "choose"
            said = f"First {needed} (Backspace takes back)."
            self.query_one(ProgressLine).show_warning("", said)
            return
        try:
            self.blind_answer = parse_answer(self.item.kind, self.draft.answer, self.item.labels)
        except AnswerError as error:
            self.query_one(ProgressLine).show_warning("", str(error))
            return
        # Showing the key is the annotator's own act (Enter) and ends their blindness: the
        # answer is stored now, before the key is drawn, so no crash after it is lost.  On
        # this thread: a key typed right after Enter (k, c) lands on the reveal.
        try:
            seen = store_reveal(
                self.db, self.queue.annotator, self.item, self.blind_answer, self.timer.seconds
            )
        except MAYBE_EXPECTED as error:  # the app's rule: an expected one is a notice
            show_expected_error(self, error, title="Key not shown")
            return
        self._reveal(self.item, seen.blind_answer)

    def _reveal(self, item: ItemSnapshot, blind_answer: str) -> None:
        self.blind_answer = blind_answer
        self.query_one(ItemView).mark_against_key(blind_answer, item.key)
        self.query_one(RevealPanel).reveal(item, blind_answer, flags=self.flags)
        self.phase = Phase.REVEALED

    def action_comment(self) -> None:
        self.query_one(VerdictBar).edit_comment()

    def quit_question(self) -> str | None:
        """Items whose key was shown, with no verdict yet: quitting names them and says
        what is kept (their blind answers, stored) and what is lost (typed comments)."""
        waiting = self.reveals.waiting()
        if self.item is not None and self.phase is Phase.REVEALED:
            waiting.insert(0, (self.item.id, self.query_one(VerdictBar).comment))
        return unjudged_reveals_question(waiting)

    def action_leave_comment(self) -> None:
        self.query_one(ItemView).focus()

    @on(Input.Submitted, "#comment")
    def comment_entered(self) -> None:
        self.query_one(ItemView).focus()

    @on(VerdictBar.VerdictChosen)
    def verdict_clicked(self, message: VerdictBar.VerdictChosen) -> None:
        if self.check_action("verdict", (message.verdict.value,)):
            self.action_verdict(message.verdict.value)

    def action_verdict(self, verdict_name: str) -> None:
        from reviewer.tui.screens.verdict import verdict_details

        item = self.item
        if item is None or self.phase is not Phase.REVEALED or self.busy:
            return
        verdict = Verdict(verdict_name)
        comment = self.query_one(VerdictBar).comment
        given = JudgmentInput(item.id, self.blind_answer, verdict, item.revision, comment=comment)
        if verdict is Verdict.FLAWED:
            self._flawed(item, given)
            return
        earlier = self.reveals.earlier(item)
        details = verdict_details(self.db, item, verdict, self.blind_answer, comment, earlier)
        if details is None:
            self._start_submit(given)
            return
        screen, fill = details

        def answered(value: object) -> None:
            if value:  # None or empty: cancelled, nothing is stored
                self._start_submit(fill(given, value))

        self.app.push_screen(screen, answered)

    def _flawed(self, item: ItemSnapshot, given: JudgmentInput) -> None:
        """Flawed: the editor opens first; the verdict is stored with the edit or the
        comment it brings back, and nothing at all when it is left with Esc."""
        from reviewer.tui.screens.edit import EditOutcome, EditScreen

        def done(outcome: EditOutcome | None) -> None:
            if outcome is None:
                self.query_one(ProgressLine).show_note("flawed not recorded: nothing was saved")
                return
            self._start_submit(replace(given, comment=outcome.comment), outcome.edit)

        screen = EditScreen(
            item, flawed=True, comment=given.comment, blind_answer=self.blind_answer
        )
        self.app.push_screen(screen, done)

    def _start_submit(self, given: JudgmentInput, edit: ItemEdit | None = None) -> None:
        if self.busy:
            self.app.bell()
            return
        self.busy = True
        self._submit(replace(given, seconds=self.timer.seconds), edit)

    def action_edit(self) -> None:
        from reviewer.tui.screens.edit import EditOutcome, EditScreen

        item = self.item
        if item is None:
            return

        def edited(outcome: EditOutcome | None) -> None:
            if outcome is not None and outcome.edit is not None:
                self.busy = True
                self._edit(item, outcome.edit)

        self.app.push_screen(EditScreen(item), edited)

    def action_guidelines(self, first: bool = False) -> None:
        from reviewer.tui.screens.guidelines import GuidelinesScreen

        if any(isinstance(screen, GuidelinesScreen) for screen in self.app.screen_stack):
            return
        kind = self.item.kind if self.item is not None else None
        self.timer.pause()  # reading the guidelines is not time spent on the item
        self.app.push_screen(
            GuidelinesScreen(self.db, kind, first=first), lambda _closed: self.timer.resume()
        )

    def action_toggle_raw(self) -> None:
        """Item text as stored (entities, LaTeX) or as read; it stays so until switched back."""
        raw = not self.query_one(ItemView).raw
        self.query_one(ItemView).show_raw(raw)
        self.query_one(RevealPanel).show_raw(raw)

    def action_revisions(self) -> None:
        from reviewer.tui.screens.revisions import RevisionsScreen

        if self.item is not None:
            self.app.push_screen(RevisionsScreen(self.db, self.item.id))

    def action_skip(self) -> None:
        self.request(ReviewQueue.skip)

    def action_previous(self) -> None:
        self.request(ReviewQueue.previous_item)

    def action_next(self) -> None:
        self.request(ReviewQueue.next_item)

    def action_undo(self) -> None:
        if self.busy:
            self.app.bell()
            return
        self._keep_reveal()  # the undone judgment's item comes instead
        self.busy = True
        # What the screen shows: the judgment of the item shown, else the last one made.
        self._undo(self.own.judgment_id if self.own is not None else None)

    def action_jump(self) -> None:
        from reviewer.tui.screens.jump import jump_screen

        def jump_to(item_id: str | None) -> None:
            if item_id:
                self.request(lambda queue: queue.open_item(item_id))

        self.app.push_screen(jump_screen(self.db), jump_to)

    def action_filter(self) -> None:
        from reviewer.tui.screens.jump import FilterChoices, FilterScreen, remember_filters

        def apply(filters: QueueFilter | None) -> None:
            if filters is None:
                return
            self.queue.filters = filters
            moving_on = self.phase in (Phase.BLIND, Phase.REVEALED)
            step = ReviewQueue.skip if moving_on else ReviewQueue.fetch_next

            def remember_then_move(queue: ReviewQueue) -> ItemSnapshot | None:
                # kept for the next session, in the worker: it writes to the database
                problem = remember_filters(self.db, queue.annotator, filters)
                if problem:
                    self.app.call_from_thread(self.notify, problem, severity="warning")
                return step(queue)

            self.request(remember_then_move)

        choices = FilterChoices(
            kinds=self.queue.known_kinds(),
            sources=self.queue.known_sources(),
            exams=self.queue.known_exams(),
        )
        self.app.push_screen(FilterScreen(self.queue.filters, choices), apply)

    def action_judged(self) -> None:
        from reviewer.tui.screens.judged import JudgedScreen

        def open_judged(item_id: str | None) -> None:
            if item_id:
                self.request(lambda queue: queue.open_item(item_id))

        self.app.push_screen(JudgedScreen(self.queue), open_judged)
