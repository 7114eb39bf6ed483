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
- leaving with unsaved changes asks first, and so does quitting the app.

With ``flawed=True`` the form is how a flawed verdict is recorded: it also asks
for a comment, and saves when there is an edit, a comment, or both.  The cursor
starts in the comment; the next Tab stop is the field most likely to need the fix
(the key when the annotator's blind answer differed from it, else the question).
Every field names itself in its border.

Saving an edit shows the diff of what will be stored and asks (y saves, n goes back).
Before anything else, when the question grew by what reads like a comment (the
comment's own text, or text added at the end of the question while the comment is
empty), it asks whether that text belongs there and offers to move it into the comment;
only then does it ask for the note an edit needs.  The kind of a
multiple-choice item can be changed (multi to single and back, to or from true/false)
within what its key and choices allow; an order never becomes a choice of answers.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widget import Widget
from textual.widgets import Button, Input, Select, Static, TextArea

from db.answers import (
    LETTERS,
    AnswerError,
    format_answer,
    key_without,
    option_count_bounds,
    parse_answer,
)
from db.items import ItemSnapshot
from db.vocabulary import ItemKind
from reviewer.judging import ItemEdit
from reviewer.revisions import DiffLine, RevisionSummary, comment_like_growth, diff_revisions
from reviewer.tui.literal import literal, notify_literally, visible_text
from reviewer.tui.screens.edit_confirm import ChangesScreen, CommentInTextScreen
from reviewer.tui.screens.help import HelpRow
from reviewer.tui.widgets.dialog import Dialog, DialogScreen
from reviewer.tui.widgets.drop_down import DropDown
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
    kind: str


NOTE_NEEDED = "note: say briefly what you changed and why"

KIND_NAMES = {
    ItemKind.SINGLE: "single answer",
    ItemKind.MULTI: "multiple answers",
    ItemKind.TRUEFALSE: "true/false",
}


def field_input(value: str, placeholder: str, title: str, **kwargs: object) -> Input:
    """A one-line field of the form, named in its border."""
    field = Input(value, placeholder=placeholder, select_on_focus=False, **kwargs)  # type: ignore[arg-type]
    field.add_class("edit-field")
    field.border_title = title
    return field


class ChoiceEditor(Input):
    """One event or choice in the form: its letter (in its border), its text, and the stored
    text it began as.  A text longer than the field says so under it, on the side that
    is out of sight ("more (End) ▸"): one line cut a long choice without a mark."""

    def __init__(self, label: str, stored: str | None, typed: str | None = None) -> None:
        super().__init__(
            visible_text(stored or "") if typed is None else typed,
            placeholder="type the new event or choice",
            select_on_focus=False,
            classes="choice-input edit-field",
        )
        self.border_title = label
        self.stored = stored  # None for a row added in this edit

    def relabel(self, label: str) -> None:
        self.border_title = label

    def on_resize(self) -> None:
        self.call_after_refresh(self._mark_hidden)

    def watch_value(self) -> None:
        self.call_after_refresh(self._mark_hidden)

    def watch_scroll_x(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_x(old_value, new_value)
        self.call_after_refresh(self._mark_hidden)

    def _mark_hidden(self) -> None:
        """Under the field, which side of its text is out of sight, and the key to it."""
        left = self.scroll_x > 0
        # The text's cells end one short of the virtual width: the last is the cursor's.
        right = self.scroll_x + self.content_size.width < self.virtual_size.width - 1
        marks = [("◂ more (Home)", left), ("more (End) ▸", right)]
        self.border_subtitle = " · ".join(mark for mark, hidden in marks if hidden)

    @property
    def text(self) -> str:
        """What the row holds: the stored text when untouched, else what was typed."""
        if self.stored is not None and self.value == visible_text(self.stored):
            return self.stored
        return self.value


def preview(item: ItemSnapshot, number: int, edit: ItemEdit) -> RevisionSummary:
    """The revision ``edit`` would make of ``item``, numbered ``number``, for the diff: its
    key in the canonical form saving stores (``b, a`` typed is ``BA``) once it is valid,
    so Ctrl+R's changes so far and Ctrl+S's diff show it alike."""
    draft, _problems = edit.problems(item)
    return RevisionSummary(
        number=number,
        prompt=draft.prompt,
        choices=draft.choices,
        key=draft.key,
        explanation=draft.explanation,
        author="",
        change_note=edit.note,
        created_at=None,  # not stored yet
        kind=draft.kind,
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

    BINDINGS = [
        Binding("ctrl+s", "save", "Save as a new revision: shows what is stored, asks first"),
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

    def __init__(
        self,
        item: ItemSnapshot,
        *,
        flawed: bool = False,
        comment: str = "",
        blind_answer: str | None = None,
    ) -> None:
        super().__init__()
        self.item = item
        self.flawed = flawed
        self.initial_comment = comment
        # A blind answer other than the key: the key is the likeliest fix.
        self.key_first = blind_answer is not None and blind_answer != item.key
        self.history: FormHistory | None = None
        self._restoring = False
        self._problems_shown = False
        self._kept_in_text = ""  # comment-like text the annotator chose to keep in the question

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
                yield field_input(
                    self.initial_comment,
                    "what is wrong, e.g. option B is also correct (the lead reads it)",
                    "Comment",
                    id="edit-comment",
                )
            with VerticalScroll(id="edit-form", can_focus=False):
                prompt = TextArea(visible_text(item.prompt), id="edit-prompt", classes="edit-long")
                prompt.border_title = "Question" if item.kind.is_mcq else "Scenario"
                yield prompt
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
                with Horizontal(id="edit-key-row"):
                    yield field_input(
                        format_answer(item.kind, item.key), "the key", "Key", id="edit-key"
                    )
                    if item.kind.is_mcq:
                        kinds = DropDown[str](
                            [(name, kind.value) for kind, name in KIND_NAMES.items()],
                            value=item.kind.value,
                            allow_blank=False,
                            compact=True,
                            id="edit-kind",
                        )
                        kinds.border_title = "Kind"
                        yield kinds
                explanation = TextArea(
                    visible_text(item.explanation or ""),
                    id="edit-explanation",
                    classes="edit-long",
                    placeholder="no explanation",
                )
                explanation.border_title = "Explanation"
                yield explanation
                yield field_input(
                    "", "what you changed and why (needed to save a change)", "Note", id="edit-note"
                )
            yield Static(id="edit-problems", classes="dialog-problem")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Save (Ctrl+S)", id="edit-save", variant="primary", compact=True)
                yield Button("Show changes (Ctrl+R)", id="edit-diff-button", compact=True)
                yield Button("Cancel (Esc)", id="edit-cancel", compact=True)

    def on_mount(self) -> None:
        self.history = FormHistory(self._state())
        self.query_one(self._first_stops()[0]).focus()

    def _first_stops(self) -> list[str]:
        """The first Tab stops: the comment (flawed), then the field most likely to need
        the fix (the key, when the blind answer differed from it; else the question)."""
        likely = "#edit-key" if self.key_first else "#edit-prompt"
        return ["#edit-comment", likely] if self.flawed else [likely]

    @property
    def focus_chain(self) -> list[Widget]:
        """Tab order: the comment (flawed), then the field most likely to need the fix
        (the key, when the blind answer differed from it; else the question), then the
        rest in the order they are shown."""
        chain = super().focus_chain
        first = [self.query_one(selector) for selector in self._first_stops()]
        if not all(widget in chain for widget in first):
            return chain  # inside a dropdown, say
        return first + [widget for widget in chain if widget not in first]

    # --- the form's state -------------------------------------------------------------

    def _value(self, selector: str) -> str:
        widget = self.query(selector).first()
        return widget.text if isinstance(widget, TextArea) else widget.value  # type: ignore[attr-defined]

    def _kind(self) -> ItemKind:
        """The kind chosen (an ordering item has no choice of kind)."""
        found = self.query("#edit-kind")
        return ItemKind(str(found.first(Select).value)) if found else self.item.kind

    def _comment(self) -> str:
        return self._value("#edit-comment").strip() if self.flawed else ""

    def _state(self) -> FormState:
        return FormState(
            prompt=self._value("#edit-prompt"),
            rows=tuple((row.stored, row.value) for row in self._rows()),
            key=self._value("#edit-key"),
            explanation=self._value("#edit-explanation"),
            note=self._value("#edit-note"),
            comment=self._value("#edit-comment") if self.flawed else "",
            kind=self._kind().value,
        )

    def _edit(self) -> ItemEdit:
        """The fields whose text differs from what was shown (untouched fields keep their
        stored text, hidden characters and all) and the note."""
        item = self.item
        prompt = self._value("#edit-prompt")
        choices = {LETTERS[index]: row.text for index, row in enumerate(self._rows())}
        key = self._value("#edit-key")
        explanation = self._value("#edit-explanation")
        kind = self._kind()
        return ItemEdit(
            note=self._value("#edit-note").strip(),
            prompt=None if prompt == visible_text(item.prompt) else prompt,
            choices=None if choices == item.choices else choices,
            key=None if key == format_answer(item.kind, item.key) else key,
            explanation=(
                None if explanation == visible_text(item.explanation or "") else explanation
            ),
            kind=None if kind is item.kind else kind,
        )

    @property
    def changed(self) -> bool:
        """Anything typed that saving would keep (text or comment)."""
        return not self._edit().changes_nothing or self._comment() != self.initial_comment.strip()

    def _checked(self, edit: ItemEdit) -> tuple[ItemEdit | None, list[str]]:
        """The edit with its key in canonical form (``D,A,C,B`` typed for ``DACB`` is no
        change; None when nothing changed), and what is wrong, validated like an import."""
        draft, found = edit.problems(self.item)
        problems = [str(problem) for problem in found]
        if not problems and edit.key is not None:
            edit = replace(edit, key=None if draft.key == self.item.key else draft.key)
        if edit.changes_nothing and not problems:
            if self.flawed and self._comment():
                return None, []  # a comment alone records the flawed verdict
            needed = "fix the text or write a comment" if self.flawed else "nothing changed yet"
            return None, [f"{needed} (Esc cancels)"]
        if not edit.note:
            problems.append(NOTE_NEEDED)
        return edit, problems

    def _show_problems(self, problems: list[str]) -> None:
        self._problems_shown = bool(problems)
        self.query_one("#edit-problems", Static).update(literal("; ".join(problems)))

    def action_save(self) -> None:
        """Check the form; an edit is shown as the diff it stores and asked about.  Text
        in the question that reads like a comment is asked about first: moved to the
        comment, it may leave no edit, and so no note, to ask for (it was asked last, after
        the note and the diff)."""
        grown = self._comment_like_growth()
        if grown and grown != self._kept_in_text:
            self._ask_about_comment_text(grown)
            return
        edit, problems = self._checked(self._edit())
        if problems:
            self._show_problems(problems)
            if problems == [NOTE_NEEDED]:
                # All else is ready: the next words typed are the note (it may be off-screen).
                note = self.query_one("#edit-note", Input)
                note.focus()
                note.scroll_visible(animate=False)
            return
        comment = self._comment()
        if edit is None:  # a comment alone: nothing of the item changes
            self.dismiss(EditOutcome(None, comment))
            return
        lines = self._diff(edit)
        title = f"Store this as revision {self.item.revision + 1}?"

        def confirmed(save: bool | None) -> None:
            if save:
                self.dismiss(EditOutcome(edit, comment))

        screen = ChangesScreen(title, lines, comment, note=edit.note, confirm=True)
        self.app.push_screen(screen, confirmed)

    def _comment_like_growth(self) -> str:
        """Text added to the question that reads like a comment ("" for none).  (A key
        holding a comment is no key: the form refuses it as it checks the key.)"""
        prompt = self._value("#edit-prompt")
        stored = visible_text(self.item.prompt)
        if not self.flawed or prompt == stored:
            return ""
        return comment_like_growth(stored, prompt, self._comment())

    def _ask_about_comment_text(self, grown: str) -> None:
        """Asks whether ``grown`` belongs in the question: kept, the save goes on (and
        does not ask about it again); moved, the form shows the comment that holds it."""

        def answered(choice: str | None) -> None:
            if choice == "keep":
                self._kept_in_text = grown
                self.action_save()
            elif choice == "move":
                self._move_to_comment(visible_text(self.item.prompt), grown)

        noun = "question" if self.item.kind.is_mcq else "scenario"
        self.app.push_screen(CommentInTextScreen(noun, grown, grown == self._comment()), answered)

    def _move_to_comment(self, stored: str, grown: str) -> None:
        """Takes ``grown`` out of the question and puts it in the comment."""
        value = self._value("#edit-prompt")
        at = value.rfind(grown)
        rest = value[:at] + value[at + len(grown) :]
        self._set_text("#edit-prompt", stored if rest.strip() == stored.strip() else rest)
        comment = self.query_one("#edit-comment", Input)
        if grown not in comment.value:
            comment.value = f"{comment.value.rstrip()} {grown}".strip()
        comment.focus()
        notify_literally(self, f"moved to the comment: {grown}", timeout=6)

    def _diff(self, edit: ItemEdit) -> list[DiffLine]:
        old = preview(self.item, self.item.revision, ItemEdit(note=""))
        return diff_revisions(old, preview(self.item, self.item.revision + 1, edit))

    # --- changes: live problems, undo history, cursor at the end ------------------------

    @on(Input.Changed)
    @on(TextArea.Changed)
    @on(Select.Changed)
    def _changed(self, event: Input.Changed | TextArea.Changed | Select.Changed) -> None:
        if self.history is None:
            return
        widget: Widget = event.text_area if isinstance(event, TextArea.Changed) else event.control
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
            # An untouched Input keeps its view at the start: the cursor was out of sight.
            widget.scroll_to(x=widget.max_scroll_x, animate=False)
        elif isinstance(widget, TextArea):
            widget.move_cursor(widget.document.end)
        if self.history is not None:
            self.history.break_step()

    def action_undo(self) -> None:
        self._restore(self.history.undo() if self.history else None, "undo")

    def action_redo(self) -> None:
        self._restore(self.history.redo() if self.history else None, "redo")

    def _restore(self, state: FormState | None, step: str) -> None:
        if state is None:
            notify_literally(self, f"nothing to {step}", severity="warning", timeout=3)
            return
        # The notices on screen described the form before this step ("Key now: A").
        self.app.clear_notifications()
        notify_literally(self, f"{step} done; key now: {state.key or 'empty'}", timeout=3)
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
                    rows[index].value = typed
                else:
                    await container.mount(ChoiceEditor(LETTERS[index], stored, typed))
            self._set_text("#edit-prompt", state.prompt)
            self._set_text("#edit-key", state.key)
            self._set_text("#edit-explanation", state.explanation)
            self._set_text("#edit-note", state.note)
            if self.flawed:
                self._set_text("#edit-comment", state.comment)
            kinds = self.query("#edit-kind")
            if kinds:
                kinds.first(Select).value = state.kind
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
        row.focus()
        # Focus scrolls to a widget it can place: the new row has no place until laid out
        # (at 80x24 it stayed below the form's fold, typing going out of sight).
        self.call_after_refresh(row.scroll_visible, animate=False)
        if self.history is not None:
            self.history.record(self._state(), None)

    async def action_remove_choice(self) -> None:
        rows = self._rows()
        row = next((r for r in rows if r is self.focused), None)
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
        (rest[0] if rest else rows[position - 1]).focus()
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
        """The changes so far, in a window of their own (Esc goes back to the form)."""
        title = f"Changes so far (revision {self.item.revision} to {self.item.revision + 1})"
        edit = self._edit()
        self.app.push_screen(
            ChangesScreen(title, self._diff(edit), self._comment(), note=edit.note)
        )

    def action_cancel(self) -> None:
        if not self.changed:
            self.dismiss(None)
            return
        from reviewer.tui.screens.lead_modals import ConfirmModal

        def answered(discard: bool | None) -> None:
            if discard:
                self.dismiss(None)

        self.app.push_screen(ConfirmModal(self._lose_question("Leave")), answered)

    def quit_question(self) -> str | None:
        """Quitting asks what Esc asks, while anything typed is unsaved."""
        return self._lose_question("Quit") if self.changed else None

    def _lose_question(self, leave: str) -> str:
        what = "Your changes are not saved" + (
            ": the flawed verdict is not recorded" if self.flawed else ""
        )
        return f"{what}. {leave} and lose them?"

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
