"""Choosing what to review: jump to an item by id, or filter and search the queue."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import Button, Input, Select, Static

from db.engine import Database
from db.errors import VetbenchError
from db.review_filters import SavedFilter, keep_filter, read_saved_filter
from db.search import SearchError
from db.vocabulary import FlagName, ItemStatus
from reviewer.queue import QueueFilter
from reviewer.tui.expected import show_expected_error
from reviewer.tui.literal import literal
from reviewer.tui.screens.prompt import PromptScreen, item_id_validator
from reviewer.tui.widgets.dialog import Dialog, DialogScreen
from reviewer.tui.widgets.drop_down import DropDown
from reviewer.tui.widgets.field_row import FieldRow
from reviewer.tui.widgets.titles import PanelTitle


def jump_screen(db: Database) -> PromptScreen:
    """Asks for an item id; the review screen opens it (judged or not)."""
    return PromptScreen(
        "Jump to item",
        "Type the item id and press Enter (Esc cancels).",
        item_id_validator(db, "type an item id, e.g. econ-test:17"),
    )


def remembered_filters(db: Database, person: str) -> QueueFilter | None:
    """The filter ``person`` last applied with ``/``, or None (none, or one that names
    a flag or status this version no longer has)."""
    saved = read_saved_filter(db, person)
    if saved is None or saved.empty:
        return None
    try:
        return QueueFilter(**asdict(saved))
    except VetbenchError:
        return None


def remember_filters(db: Database, person: str, filters: QueueFilter) -> str | None:
    """Keep ``filters`` as ``person``'s filter for their next session; why it could not
    be kept, or None."""
    return keep_filter(db, person, SavedFilter(**asdict(filters)))


@dataclass(frozen=True)
class FilterChoices:
    """What the database holds to filter by (the filter offers nothing else)."""

    kinds: list[str]
    sources: list[str]
    exams: list[str]


@dataclass(frozen=True)
class ChoiceField:
    """One one-of-a-list field of the filter: which ``QueueFilter`` attribute it sets.

    Adding a filter is one more entry in :meth:`FilterScreen.choice_fields` (and the
    attribute on ``QueueFilter``)."""

    attribute: str
    caption: str
    any_label: str
    options: list[str]


class FilterScreen(DialogScreen[QueueFilter | None]):
    """Search text and one kind, source, status, exam and flag (or any); Ctrl+S applies
    (Enter too, in the search field), Esc cancels.  Enter on a list opens it, as
    everywhere in Textual; the open list has a frame of its own, so that its options do
    not read as the values of the fields it lies over ("Source  any kind")."""

    BINDINGS = [
        Binding("ctrl+s", "apply", "Apply filters"),
        Binding("escape", "cancel", "Cancel"),
    ]

    def __init__(self, current: QueueFilter, choices: FilterChoices) -> None:
        super().__init__()
        self.current = current
        self.choices = choices

    def choice_fields(self) -> list[ChoiceField]:
        statuses = [status.value for status in (ItemStatus.PENDING, ItemStatus.IN_REVIEW)]
        fields = [
            ChoiceField("kinds", "Kind   ", "any kind", self.choices.kinds),
            ChoiceField("sources", "Source ", "any source", self.choices.sources),
            ChoiceField("statuses", "Status ", "pending or in review", statuses),
        ]
        if self.choices.exams:  # CFLUE items only
            fields.append(ChoiceField("exams", "Exam   ", "any exam (名称)", self.choices.exams))
        flags = [flag.value for flag in FlagName]
        fields.append(ChoiceField("flags", "Flag   ", "any item, flagged or not", flags))
        return fields

    def compose(self) -> ComposeResult:
        with Dialog():
            yield PanelTitle("Filter and search the queue")
            yield Static(
                Text(
                    "Serves items that still need your judgment. Search: words in the "
                    "question or choices; in:all looks in explanations too, whole:tax "
                    "finds whole words, 增值税 not:土地增值税 leaves the longer term out. "
                    "Kept for next time. Ctrl+S applies (Enter too, in the search field); "
                    "in a list Enter opens and picks. Esc cancels."
                ),
                classes="dialog-help",
            )
            yield FieldRow(
                "Search ",
                Input(
                    self.current.text,
                    placeholder="words  in:all  whole:WORD  not:LONGER",
                    id="filter-text",
                    select_on_focus=False,
                    compact=True,  # one line a field: all six and the buttons fit at 80x24
                ),
            )
            for field in self.choice_fields():
                chosen: tuple[str, ...] = getattr(self.current, field.attribute)
                yield FieldRow(
                    field.caption,
                    DropDown(
                        [(literal(option), option) for option in field.options],
                        prompt=field.any_label,
                        value=chosen[0]
                        if chosen[:1] and chosen[0] in field.options
                        else Select.NULL,
                        id=f"filter-{field.attribute}",
                        compact=True,
                    ),
                )
            with Horizontal(classes="dialog-buttons"):
                yield Button("Apply (Ctrl+S)", id="filter-apply", variant="primary", compact=True)
                yield Button("Cancel (Esc)", id="filter-cancel", compact=True)

    def on_mount(self) -> None:
        self.query_one("#filter-text", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_apply()

    def action_apply(self) -> None:
        changes: dict[str, object] = {"text": self.query_one("#filter-text", Input).value.strip()}
        for field in self.choice_fields():
            value = self.query_one(f"#filter-{field.attribute}", Select).value
            changes[field.attribute] = () if value is Select.NULL else (str(value),)
        try:
            chosen = replace(self.current, **changes)  # type: ignore[arg-type]
        except SearchError as error:  # the search text is the user's: shown as typed
            show_expected_error(self, error, title="Cannot search")
            return
        self.dismiss(chosen)

    def action_cancel(self) -> None:
        self.dismiss(None)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "filter-apply":
            self.action_apply()
        elif event.button.id == "filter-cancel":
            self.action_cancel()
