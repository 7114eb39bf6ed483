"""The edit modal: fix the scenario or question, events or choices, key and explanation.

Saving makes a new revision (the old one stays).  The form is checked with the
same validator as imports before it closes, and Ctrl+R shows what would change.
Ctrl+N adds an event or choice; Ctrl+O removes the one being edited (those after
it move up a letter, and the key follows: the removed letter leaves it and the
later letters move up with their events).  Hidden control characters in the
stored text are shown as visible symbols; a field left untouched keeps its
stored text exactly.

The form never destroys text:

- entering a field puts the cursor at its end (nothing is selected, so the next key
  adds to the text instead of replacing it);
- Ctrl+Z undoes and Ctrl+Shift+Z (or Ctrl+Y) redoes, across every field, a word at
  a time, including added and removed events or choices;
- a key that is not valid is never rewritten: removing an event waits until the key
  is valid, and saving says what is wrong with it;
- the problems shown go away as soon as they are fixed;
- leaving with unsaved changes asks first.

With ``flawed=True`` the form is how a flawed verdict is recorded: it also asks
for a comment, and saves when there is an edit, a comment, or both.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Input, Label, Static, TextArea

from db.answers import (
    LETTERS,
    AnswerError,
    format_answer,
    key_without,
    option_count_bounds,
    parse_answer,
)
from db.items import ItemSnapshot
from db.validation import validate_draft
from db.vocabulary import ItemKind
from reviewer.judging import ItemEdit
from reviewer.revisions import RevisionSummary, diff_revisions
from reviewer.tui.literal import literal, notify_literally, visible_text
from reviewer.tui.screens.help import HelpRow
from reviewer.tui.widgets.dialog import Dialog, DialogScreen
from reviewer.tui.widgets.diff_view import DiffView
from reviewer.tui.widgets.field_row import FieldRow
from reviewer.tui.widgets.item_view import item_heading
from reviewer.tui.widgets.titles import PanelTitle


@dataclass(frozen=True)
class EditOutcome:
    """What the form answers: the edit to store (None: no change to the text) and, for a
    flawed verdict, the comment saying what is wrong."""

    edit: ItemEdit | None
    comment: str = ""


@dataclass(frozen=True)
class FormState:
    """Every field of the form, for undo and redo: the choice rows as (stored text, typed)."""

    prompt: str
    rows: tuple[tuple[str | None, str], ...]
    key: str
    explanation: str
    note: str
    comment: str


class ChoiceEditor(FieldRow):
    """One event or choice in the form: its letter, its text, and the stored text it began as."""

    def __init__(self, label: str, stored: str | None, typed: str | None = None) -> None:
        field = Input(
            visible_text(stored or "") if typed is None else typed,
            placeholder="type the new event or choice",
            compact=True,
            select_on_focus=False,
            classes="choice-input",
        )
        super().__init__(f" {label} ", field)
        self.input = field
        self.stored = stored  # None for a row added in this edit

    def relabel(self, label: str) -> None:
        self.caption.update(f" {label} ")

    @property
    def text(self) -> str:
        """What the row holds: the stored text when untouched, else what was typed."""
        value = self.input.value
        if self.stored is not None and value == visible_text(self.stored):
            return self.stored
        return value


def preview(item: ItemSnapshot, number: int, edit: ItemEdit) -> RevisionSummary:
    """The revision ``edit`` would make of ``item``, numbered ``number``, for the diff."""
    draft = edit.draft(item)
    return RevisionSummary(
        number=number,
        prompt=draft.prompt,
        choices=draft.choices,
        key=draft.key,
        explanation=draft.explanation,
        author="",
        change_note=edit.note,
        created_at=None,  # not stored yet
    )


class FormHistory:
    """Undo and redo over whole-form states.  Typing in one field is one step per word
    (a step ends where a space follows a word); moving to another field, adding or
    removing an event or choice always starts a new step."""

    def __init__(self, first: FormState) -> None:
        self.states = [first]
        self.position = 0
        self._typing_in: str | None = None  # the field the last step is still growing in

    @property
    def current(self) -> FormState:
        return self.states[self.position]

    def record(self, state: FormState, field: str | None) -> None:
        """A change in ``field`` (None: a structural change, always its own step)."""
        if state == self.current:
            return  # a restore echoing back, or no change at all
        del self.states[self.position + 1 :]
        word_ended = _ends_with_space(state, field) and not _ends_with_space(self.current, field)
        if field is not None and field == self._typing_in and not word_ended:
            self.states[self.position] = state  # the same word grows
        else:
            self.states.append(state)
            self.position += 1
        self._typing_in = field

    def break_step(self) -> None:
        """The next change starts a new step (the focus moved to another field)."""
        self._typing_in = None

    def undo(self) -> FormState | None:
        if self.position == 0:
            return None
        self.position -= 1
        self._typing_in = None
        return self.current

    def redo(self) -> FormState | None:
        if self.position + 1 >= len(self.states):
            return None
        self.position += 1
        self._typing_in = None
        return self.current


def _ends_with_space(state: FormState, field: str | None) -> bool:
    value = {
        "edit-prompt": state.prompt,
        "edit-key": state.key,
        "edit-explanation": state.explanation,
        "edit-note": state.note,
        "edit-comment": state.comment,
    }.get(field or "", "")
    return bool(value) and value[-1].isspace()


class EditScreen(DialogScreen[EditOutcome | None]):
    """Edit one item; dismisses with an :class:`EditOutcome`, or None when cancelled."""

    DEFAULT_CSS = """
    EditScreen Input > .input--placeholder {
        color: $text-muted;
        text-style: italic;
    }
    EditScreen TextArea > .text-area--placeholder {
        color: $text-muted;
        text-style: italic;
    }
    EditScreen #edit-comment-help {
        color: $text-muted;
    }
    """

    BINDINGS = [
        Binding("ctrl+s", "save", "Save as a new revision (the old one is kept)"),
        Binding("ctrl+r", "toggle_diff", "Show or hide the changes"),
        Binding("ctrl+n", "add_choice", "Add an event or choice"),
        Binding("ctrl+o", "remove_choice", "Remove the event or choice being edited"),
        Binding("ctrl+z", "undo", "Undo the last change", priority=True),
        Binding("ctrl+shift+z,ctrl+y", "redo", "Redo", priority=True),
        Binding("escape", "cancel", "Cancel the edit (asks first when something changed)"),
    ]

    @classmethod
    def help_rows(cls) -> list[HelpRow]:
        """The form's keys, for the help screen (from the bindings, so they cannot drift)."""
        rows = []
        for binding in cls.BINDINGS:
            assert isinstance(binding, Binding)
            keys = " or ".join(
                "+".join(part.capitalize() for part in key.split("+"))
                for key in binding.key.split(",")
            )
            rows.append(
                HelpRow("Edit form (e, f)", keys.replace("Escape", "Esc"), binding.description)
            )
        return rows

    def __init__(self, item: ItemSnapshot, *, flawed: bool = False, comment: str = "") -> None:
        super().__init__()
        self.item = item
        self.flawed = flawed
        self.initial_comment = comment
        self.history: FormHistory | None = None
        self._restoring = False
        self._problems_shown = False

    def compose(self) -> ComposeResult:
        item = self.item
        heading = Text("Flawed: fix " if self.flawed else "Edit ")
        heading.append_text(item_heading(item))
        with Dialog(classes="wide"):
            yield PanelTitle(heading)
            if self.flawed:
                yield Static(
                    "Fix the text below (your fix becomes a new revision for the others), "
                    "or say what is wrong in the comment, or both. Esc records nothing.",
                    id="edit-comment-help",
                )
                yield FieldRow(
                    "Comment ",
                    Input(
                        self.initial_comment,
                        placeholder="what is wrong, e.g. option B is also correct",
                        id="edit-comment",
                        compact=True,
                        select_on_focus=False,
                    ),
                )
            with VerticalScroll(id="edit-form"):
                yield Label("Question" if item.kind.is_mcq else "Scenario")
                yield TextArea(visible_text(item.prompt), id="edit-prompt", classes="edit-long")
                with Vertical(id="edit-choices"):
                    for label, text in item.choices.items():
                        yield ChoiceEditor(label, text)
                noun = "event" if item.kind is ItemKind.ORDERING else "choice"
                article = "an" if noun == "event" else "a"
                yield Static(
                    f"Ctrl+N adds {article} {noun} · Ctrl+O removes the {noun} you are in · "
                    "Ctrl+Z undoes, Ctrl+Shift+Z or Ctrl+Y redoes",
                    classes="edit-hint",
                )
                yield FieldRow(
                    "Key ",
                    Input(
                        format_answer(item.kind, item.key),
                        id="edit-key",
                        compact=True,
                        select_on_focus=False,
                    ),
                )
                yield Label("Explanation")
                yield TextArea(
                    visible_text(item.explanation or ""),
                    id="edit-explanation",
                    classes="edit-long",
                    placeholder="no explanation",
                )
                yield FieldRow(
                    "Note ",
                    Input(
                        "",
                        placeholder="what you changed and why (needed to save a change)",
                        id="edit-note",
                        compact=True,
                        select_on_focus=False,
                    ),
                )
                yield DiffView(id="edit-diff")
            yield Static(id="edit-problems", classes="dialog-problem")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Save (Ctrl+S)", id="edit-save", variant="primary", compact=True)
                yield Button("Show changes (Ctrl+R)", id="edit-diff-button", compact=True)
                yield Button("Cancel (Esc)", id="edit-cancel", compact=True)

    def on_mount(self) -> None:
        self.query_one("#edit-diff", DiffView).display = False
        self.history = FormHistory(self._state())
        self.query_one("#edit-prompt", TextArea).focus()

    # --- the form's state -------------------------------------------------------------

    def _value(self, selector: str) -> str:
        widget = self.query(selector).first()
        return widget.text if isinstance(widget, TextArea) else widget.value  # type: ignore[attr-defined]

    def _comment(self) -> str:
        return self._value("#edit-comment").strip() if self.flawed else ""

    def _state(self) -> FormState:
        return FormState(
            prompt=self._value("#edit-prompt"),
            rows=tuple((row.stored, row.input.value) for row in self._rows()),
            key=self._value("#edit-key"),
            explanation=self._value("#edit-explanation"),
            note=self._value("#edit-note"),
            comment=self._value("#edit-comment") if self.flawed else "",
        )

    def _edit(self) -> ItemEdit:
        """The fields whose text differs from what was shown (untouched fields keep their
        stored text, hidden characters and all) and the note."""
        item = self.item
        prompt = self._value("#edit-prompt")
        choices = {LETTERS[index]: row.text for index, row in enumerate(self._rows())}
        key = self._value("#edit-key")
        explanation = self._value("#edit-explanation")
        return ItemEdit(
            note=self._value("#edit-note").strip(),
            prompt=None if prompt == visible_text(item.prompt) else prompt,
            choices=None if choices == item.choices else choices,
            key=None if key == format_answer(item.kind, item.key) else key,
            explanation=(
                None if explanation == visible_text(item.explanation or "") else explanation
            ),
        )

    @property
    def changed(self) -> bool:
        """Anything typed that saving would keep (text or comment)."""
        return not self._edit().changes_nothing or self._comment() != self.initial_comment.strip()

    def _checked(self, edit: ItemEdit) -> tuple[ItemEdit | None, list[str]]:
        """The edit with its key in canonical form (``D,A,C,B`` typed for ``DACB`` is no
        change; None when nothing changed), and what is wrong, validated like an import."""
        draft = edit.draft(self.item)
        problems = [str(problem) for problem in validate_draft(draft)]
        if not problems and edit.key is not None:
            edit = replace(edit, key=None if draft.key == self.item.key else draft.key)
        if edit.changes_nothing and not problems:
            if self.flawed and self._comment():
                return None, []  # a comment alone records the flawed verdict
            needed = "fix the text or write a comment" if self.flawed else "nothing changed yet"
            return None, [f"{needed} (Esc cancels)"]
        if not edit.note:
            problems.append("note: say briefly what you changed and why")
        return edit, problems

    def _show_problems(self, problems: list[str]) -> None:
        self._problems_shown = bool(problems)
        self.query_one("#edit-problems", Static).update(literal("; ".join(problems)))

    def action_save(self) -> None:
        edit, problems = self._checked(self._edit())
        if problems:
            self._show_problems(problems)
            return
        self.dismiss(EditOutcome(edit, self._comment()))

    # --- changes: live problems, undo history, cursor at the end ------------------------

    @on(Input.Changed)
    @on(TextArea.Changed)
    def _changed(self, event: Input.Changed | TextArea.Changed) -> None:
        if self.history is None:
            return
        widget = event.input if isinstance(event, Input.Changed) else event.text_area
        field = widget.id or ("choice" if isinstance(widget, Input) else None)
        if not self._restoring:
            self.history.record(self._state(), field)
        if self._problems_shown:
            # Problems shown: say again what is still wrong, so a fixed one goes away.
            _edit, problems = self._checked(self._edit())
            self._show_problems(problems)

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        """Entering a field puts the cursor at its end; nothing is selected."""
        widget = event.widget
        if isinstance(widget, Input):
            widget.cursor_position = len(widget.value)
        elif isinstance(widget, TextArea):
            widget.move_cursor(widget.document.end)
        if self.history is not None:
            self.history.break_step()

    def action_undo(self) -> None:
        self._restore(self.history.undo() if self.history else None, "nothing to undo")

    def action_redo(self) -> None:
        self._restore(self.history.redo() if self.history else None, "nothing to redo")

    def _restore(self, state: FormState | None, otherwise: str) -> None:
        if state is None:
            notify_literally(self, otherwise, severity="warning", timeout=3)
            return
        self.run_worker(self._apply_state(state), exclusive=True, group="form-history")

    async def _apply_state(self, state: FormState) -> None:
        self._restoring = True
        try:
            rows = self._rows()
            container = self.query_one("#edit-choices", Vertical)
            for row in rows[len(state.rows) :]:
                await row.remove()
            for index, (stored, typed) in enumerate(state.rows):
                if index < len(rows):
                    rows[index].stored = stored
                    rows[index].input.value = typed
                else:
                    await container.mount(ChoiceEditor(LETTERS[index], stored, typed))
            self._set_text("#edit-prompt", state.prompt)
            self._set_text("#edit-key", state.key)
            self._set_text("#edit-explanation", state.explanation)
            self._set_text("#edit-note", state.note)
            if self.flawed:
                self._set_text("#edit-comment", state.comment)
        finally:
            # The Changed messages of the restore arrive later; they find the history
            # at this state already and add nothing.
            self._restoring = False

    def _set_text(self, selector: str, value: str) -> None:
        widget = self.query(selector).first()
        if isinstance(widget, TextArea):
            if widget.text != value:
                widget.load_text(value)
        elif isinstance(widget, Input) and widget.value != value:
            widget.value = value

    # --- choices --------------------------------------------------------------------------

    def _rows(self) -> list[ChoiceEditor]:
        return list(self.query(ChoiceEditor))

    async def action_add_choice(self) -> None:
        rows = self._rows()
        _fewest, most = option_count_bounds(self.item.kind)
        if len(rows) >= most:
            noun = "events" if self.item.kind is ItemKind.ORDERING else "choices"
            notify_literally(self, f"this item takes at most {most} {noun}", severity="warning")
            return
        row = ChoiceEditor(LETTERS[len(rows)], None)
        await self.query_one("#edit-choices", Vertical).mount(row)
        row.input.focus()
        if self.history is not None:
            self.history.record(self._state(), None)

    async def action_remove_choice(self) -> None:
        rows = self._rows()
        row = next((r for r in rows if r.input is self.focused), None)
        if row is None:
            notify_literally(
                self, "move to the event or choice to remove first (Tab)", severity="warning"
            )
            return
        fewest, _most = option_count_bounds(self.item.kind)
        if len(rows) <= fewest:
            notify_literally(self, f"an item needs at least {fewest}", severity="warning")
            return
        key_input = self.query_one("#edit-key", Input)
        labels = [LETTERS[index] for index in range(len(rows))]
        try:
            parse_answer(self.item.kind, key_input.value, labels)
        except AnswerError as error:
            # The key follows a removal only when it is valid: never guess at a bad one.
            notify_literally(
                self,
                f"the key '{key_input.value}' is not valid ({error}); fix it first, so it "
                "can follow the removal",
                title="Nothing removed",
                severity="warning",
                timeout=8,
            )
            return
        position = rows.index(row)
        rest = rows[position + 1 :]
        for index, later in enumerate(rest, start=position):
            later.relabel(LETTERS[index])
        await row.remove()
        (rest[0] if rest else rows[position - 1]).input.focus()
        removed = LETTERS[position]
        key = key_without(self.item.kind, key_input.value, removed)
        key_input.value = key
        if self.history is not None:
            self.history.record(self._state(), None)
        notify_literally(
            self,
            f"{removed} removed; the letters after it moved up one. Key now: {key or 'empty'}"
            + ("" if key else " (give the new key)")
            + ". Ctrl+Z brings it back.",
            timeout=6,
        )

    # --- the rest ----------------------------------------------------------------------

    def action_toggle_diff(self) -> None:
        view = self.query_one("#edit-diff", DiffView)
        view.display = not view.display
        if view.display:
            old = preview(self.item, self.item.revision, ItemEdit(note=""))
            new = preview(self.item, self.item.revision + 1, self._edit())
            view.show(diff_revisions(self.item.kind.value, old, new))
            self.query_one("#edit-form", VerticalScroll).scroll_end(animate=False)

    def action_cancel(self) -> None:
        if not self.changed:
            self.dismiss(None)
            return
        from reviewer.tui.screens.lead_modals import ConfirmModal

        def answered(discard: bool | None) -> None:
            if discard:
                self.dismiss(None)

        what = "Your changes are not saved" + (
            ": the flawed verdict is not recorded" if self.flawed else ""
        )
        self.app.push_screen(ConfirmModal(f"{what}. Leave and lose them?"), answered)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        actions = {
            "edit-save": self.action_save,
            "edit-diff-button": self.action_toggle_diff,
            "edit-cancel": self.action_cancel,
        }
        action = actions.get(event.button.id or "")
        if action is not None:
            action()
