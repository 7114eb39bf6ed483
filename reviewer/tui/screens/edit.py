"""The edit modal: fix the scenario or question, events or choices, key and explanation.

Saving makes a new revision (the old one stays).  The form is checked with the
same validator as imports before it closes, and Ctrl+R shows what would change.
Ctrl+N adds an event or choice; Ctrl+O removes the one being edited (those after
it move up a letter, and the key follows: the removed letter leaves it and the
later letters move up with their events).  Hidden control characters in the
stored text are shown as visible symbols; a field left untouched keeps its
stored text exactly.
"""

from __future__ import annotations

from dataclasses import replace

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Input, Label, Static, TextArea

from db.answers import LETTERS, format_answer, key_without, option_count_bounds
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


class ChoiceEditor(FieldRow):
    """One event or choice in the form: its letter, its text, and the stored text it began as."""

    def __init__(self, label: str, stored: str | None) -> None:
        field = Input(
            visible_text(stored or ""), placeholder="new text", compact=True, classes="choice-input"
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


class EditScreen(DialogScreen[ItemEdit | None]):
    """Edit one item; dismisses with the :class:`ItemEdit` to store, or None when cancelled."""

    BINDINGS = [
        Binding("ctrl+s", "save", "Save as a new revision (the old one is kept)"),
        Binding("ctrl+r", "toggle_diff", "Show or hide the changes"),
        Binding("ctrl+n", "add_choice", "Add an event or choice"),
        Binding("ctrl+o", "remove_choice", "Remove the event or choice being edited"),
        Binding("escape", "cancel", "Cancel the edit"),
    ]

    @classmethod
    def help_rows(cls) -> list[HelpRow]:
        """The form's keys, for the help screen (from the bindings, so they cannot drift)."""
        rows = []
        for binding in cls.BINDINGS:
            assert isinstance(binding, Binding)
            keys = "+".join(part.capitalize() for part in binding.key.split("+"))
            rows.append(
                HelpRow("Edit form (e, f)", keys.replace("Escape", "Esc"), binding.description)
            )
        return rows

    def __init__(self, item: ItemSnapshot, default_note: str = "fixed text") -> None:
        super().__init__()
        self.item = item
        self.default_note = default_note

    def compose(self) -> ComposeResult:
        item = self.item
        heading = Text("Edit ")
        heading.append_text(item_heading(item))
        with Dialog(classes="wide"):
            yield PanelTitle(heading)
            with VerticalScroll(id="edit-form"):
                yield Label("Question" if item.kind.is_mcq else "Scenario")
                yield TextArea(visible_text(item.prompt), id="edit-prompt", classes="edit-long")
                with Vertical(id="edit-choices"):
                    for label, text in item.choices.items():
                        yield ChoiceEditor(label, text)
                noun = "event" if item.kind is ItemKind.ORDERING else "choice"
                article = "an" if noun == "event" else "a"
                yield Static(
                    f"Ctrl+N adds {article} {noun} · Ctrl+O removes the {noun} you are in",
                    classes="edit-hint",
                )
                yield FieldRow(
                    "Key ", Input(format_answer(item.kind, item.key), id="edit-key", compact=True)
                )
                yield Label("Explanation")
                yield TextArea(
                    visible_text(item.explanation or ""), id="edit-explanation", classes="edit-long"
                )
                yield FieldRow(
                    "Note ",
                    Input(
                        self.default_note,
                        placeholder="what changed and why",
                        id="edit-note",
                        compact=True,
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
        self.query_one("#edit-prompt", TextArea).focus()

    def _edit(self) -> ItemEdit:
        """The fields whose text differs from what was shown (untouched fields keep their
        stored text, hidden characters and all) and the note."""
        item = self.item
        prompt = self.query_one("#edit-prompt", TextArea).text
        choices = {LETTERS[index]: row.text for index, row in enumerate(self._rows())}
        key = self.query_one("#edit-key", Input).value
        explanation = self.query_one("#edit-explanation", TextArea).text
        return ItemEdit(
            note=self.query_one("#edit-note", Input).value.strip(),
            prompt=None if prompt == visible_text(item.prompt) else prompt,
            choices=None if choices == item.choices else choices,
            key=None if key == format_answer(item.kind, item.key) else key,
            explanation=(
                None if explanation == visible_text(item.explanation or "") else explanation
            ),
        )

    def _checked(self, edit: ItemEdit) -> tuple[ItemEdit, list[str]]:
        """The edit with its key in canonical form (``D,A,C,B`` typed for ``DACB`` is no
        change), and what is wrong with it, validated like an import."""
        draft = edit.draft(self.item)
        problems = [str(problem) for problem in validate_draft(draft)]
        if not problems and edit.key is not None:
            edit = replace(edit, key=None if draft.key == self.item.key else draft.key)
        if not problems and edit.changes_nothing:
            problems.append("nothing changed yet (Esc cancels)")
        if not edit.note:
            problems.append("note: say briefly what changed and why")
        return edit, problems

    def action_save(self) -> None:
        edit, problems = self._checked(self._edit())
        if problems:
            self.query_one("#edit-problems", Static).update(literal("; ".join(problems)))
            return
        self.dismiss(edit)

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
        position = rows.index(row)
        rest = rows[position + 1 :]
        for index, later in enumerate(rest, start=position):
            later.relabel(LETTERS[index])
        await row.remove()
        (rest[0] if rest else rows[position - 1]).input.focus()
        removed = LETTERS[position]
        key_input = self.query_one("#edit-key", Input)
        key = key_without(self.item.kind, key_input.value, removed)
        key_input.value = key
        notify_literally(
            self,
            f"{removed} removed; the letters after it moved up one. Key now: {key or 'empty'}"
            + ("" if key else " (give the new key)"),
            timeout=6,
        )

    def action_toggle_diff(self) -> None:
        view = self.query_one("#edit-diff", DiffView)
        view.display = not view.display
        if view.display:
            old = preview(self.item, self.item.revision, ItemEdit(note=""))
            new = preview(self.item, self.item.revision + 1, self._edit())
            view.show(diff_revisions(self.item.kind.value, old, new))
            self.query_one("#edit-form", VerticalScroll).scroll_end(animate=False)

    def action_cancel(self) -> None:
        self.dismiss(None)

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
