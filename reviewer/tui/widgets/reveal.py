"""The reveal: the proposed key and explanation beside the annotator's own answer.

For orders, the positions that differ are highlighted in both rows and the
pairs of events the two orders put the other way round are listed.  For
multiple choice, the letters missing from the answer and the extra ones are named.
The item's flags and their evidence (``db.flags``) come here too, and only here:
nothing about them is on screen before the blind answer is in.
Item text is in its display form unless :attr:`RevealPanel.raw` asks for it as stored.
The key in words repeats, for choices, what the item view marks (✓ on each choice in
the key): where the panels stack, the review screen's style sheet leaves it out.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.widgets import Static

from db.answers import (
    differing_positions,
    discordant_pairs,
    format_answer,
    pairwise_accuracy,
    truefalse_word,
)
from db.flags import ItemFlag
from db.items import ItemSnapshot
from db.vocabulary import ItemKind
from db.words import time_taken
from reviewer.queue import OwnJudgment
from reviewer.tui.literal import line_broken, literal, literal_item
from reviewer.tui.widgets.item_view import RAW_TITLE, ItemTextPanel, marks_the_key
from reviewer.tui.widgets.titles import PanelTitle, SectionTitle

DIFF_STYLE = "bold reverse red"
SAME_STYLE = "bold green"


def _order_row(order: str, differing: list[int]) -> Text:
    row = Text()
    for position, letter in enumerate(order):
        if position:
            row.append(", ")
        row.append(letter, style=DIFF_STYLE if position in differing else SAME_STYLE)
    return row


def compare_answers(item: ItemSnapshot, answer: str) -> Text:
    """The answer and the key, one above the other, with their differences marked."""
    text = Text()
    if item.kind is ItemKind.ORDERING:
        differing = differing_positions(answer, item.key)
        text.append("Your order  ", style="bold")
        text.append_text(_order_row(answer, differing))
        text.append("\nKey         ", style="bold")
        text.append_text(_order_row(item.key, differing))
        if not differing:
            text.append("\n\n✓ Your order is the key.", style=SAME_STYLE)
            return text
        pairs = discordant_pairs(answer, item.key)
        total = len(item.key) * (len(item.key) - 1) // 2
        agreement = pairwise_accuracy(answer, item.key)
        text.append(
            f"\n\n✗ {len(differing)} of {len(item.key)} positions differ; "
            f"pairs in the key's order: {total - len(pairs)}/{total} ({agreement:.0%})",
            style="bold red",
        )
        text.append("\nPairs you put the other way round:")
        for first, second in pairs:
            text.append(f"\n  key: {first} before {second}  ·  you: {second} before {first}")
        return text

    text.append("Your answer  ", style="bold")
    text.append(_choice_letters(item, answer))
    text.append("\nKey          ", style="bold")
    text.append(_choice_letters(item, item.key))
    if answer == item.key:
        text.append("\n\n✓ Your answer is the key.", style=SAME_STYLE)
        return text
    text.append("\n\n✗ Your answer differs from the key.", style="bold red")
    if item.kind is not ItemKind.MULTI:  # one letter each: the two rows above say it all
        return text
    missing = [letter for letter in item.key if letter not in answer]
    extra = [letter for letter in answer if letter not in item.key]
    if missing:
        text.append(f"\n  in the key, not in your answer: {' '.join(missing)}")
    if extra:
        text.append(f"\n  in your answer, not in the key: {' '.join(extra)}")
    return text


def _choice_letters(item: ItemSnapshot, letters: str) -> str:
    shown = format_answer(item.kind, letters)
    if item.kind is ItemKind.TRUEFALSE:
        return f"{shown} ({truefalse_word(letters, item.language)})"
    return shown


def key_in_words(item: ItemSnapshot, *, raw: bool = False) -> Table:
    """The key spelled out with the event or choice texts, one per row (hanging indent)."""
    table = Table.grid(padding=(0, 1))
    table.add_column(no_wrap=True)
    table.add_column(ratio=1)
    for position, letter in enumerate(item.key, start=1):
        prefix = f"{position}. {letter}" if item.kind is ItemKind.ORDERING else f"• {letter}"
        table.add_row(
            Text(prefix, style="bold"), literal_item(item.choices.get(letter, ""), raw=raw)
        )
    return table


def judgment_summary(item: ItemSnapshot, judgment: OwnJudgment) -> Text:
    """What the annotator recorded (shown when browsing judged items), wrapped like item
    text: the comment is the annotator's own words, often Chinese."""
    text = Text()
    text.append("Your verdict: ", style="bold")
    text.append_text(literal(judgment.verdict, "bold magenta"))
    text.append(f"  ·  {time_taken(judgment.seconds)}  ·  revision {judgment.revision}")
    for label, value in verdict_details(item.kind, judgment):
        text.append(f"\n  {label}: ")
        text.append_text(literal(value))
    if judgment.comment:
        text.append("\n  comment: ")
        text.append_text(literal(judgment.comment))
    return line_broken(text)


def verdict_details(kind: ItemKind, judgment: OwnJudgment) -> list[tuple[str, str]]:
    """What a verdict proposed, as (label, value): the other valid orders, the corrected
    key, the item it duplicates (shown under the verdict, and in the judged items list)."""
    details = [("also valid", format_answer(kind, order)) for order in judgment.alternative_orders]
    if judgment.corrected_key:
        details.append(("corrected key", format_answer(kind, judgment.corrected_key)))
    if judgment.duplicate_of:
        details.append(("duplicate of", judgment.duplicate_of))
    return details


def flags_text(flags: Sequence[ItemFlag]) -> Text:
    """Each flag with what raised it: its name, where it came from, the evidence in words."""
    text = Text()
    for position, flag in enumerate(flags):
        if position:
            text.append("\n")
        text.append("⚑ ", style="bold yellow")
        text.append(flag.name.value, style="bold yellow")
        if flag.source.value != "auto":
            text.append(f" ({flag.source.value})", style="dim")
        text.append("  ")
        text.append_text(literal(flag.summary))
    return text


class RevealPanel(ItemTextPanel):
    """Key, explanation and the comparison; empty until the blind answer is in.

    It has the class ``-key-marked`` while the item view marks the key it reveals: its
    "Key in words" (the ``key-in-words`` widgets) then says nothing the item does not.
    """

    DEFAULT_CSS = """
    RevealPanel {
        height: 1fr;
        padding: 0 1;
        border: round $accent;
    }

    RevealPanel > #reveal-judgment {
        margin-top: 1;
    }
    """

    def compose_text(self) -> ComposeResult:
        yield PanelTitle("Reveal")
        yield Static(id="reveal-comparison")
        yield Static(id="reveal-judgment")
        yield SectionTitle("Flags", id="reveal-flags-title")
        yield Static(id="reveal-flags")
        yield SectionTitle("Key in words", classes="key-in-words")
        yield Static(id="reveal-key", classes="key-in-words")
        yield SectionTitle("Explanation")
        yield Static(id="reveal-explanation")

    def reveal(
        self,
        item: ItemSnapshot,
        answer: str,
        judgment: OwnJudgment | None = None,
        flags: Sequence[ItemFlag] = (),
    ) -> None:
        """Fill the panel for ``item`` (this is the first moment the key, and the item's
        flags, reach the screen)."""
        self._item = item
        self.set_class(marks_the_key(item.kind), "-key-marked")  # ItemView.mark_against_key
        self.query_one("#reveal-comparison", Static).update(compare_answers(item, answer))
        summary = self.query_one("#reveal-judgment", Static)
        summary.display = judgment is not None
        summary.update(judgment_summary(item, judgment) if judgment else "")
        self._show_flags(flags)
        self._show_text(item)
        self.scroll_home(animate=False)

    def _show_text(self, item: ItemSnapshot) -> None:
        self.border_title = RAW_TITLE if self.raw else ""
        self.query_one("#reveal-key", Static).update(key_in_words(item, raw=self.raw))
        self.query_one("#reveal-explanation", Static).update(
            literal_item(item.explanation, raw=self.raw)
            if item.explanation
            else Text("(no explanation)", style="dim")
        )

    def _show_flags(self, flags: Sequence[ItemFlag]) -> None:
        self.query_one("#reveal-flags-title").display = bool(flags)
        shown = self.query_one("#reveal-flags", Static)
        shown.display = bool(flags)
        shown.update(flags_text(flags))

    def show_authored(self, item: ItemSnapshot, judgment: OwnJudgment | None) -> None:
        """Fill the panel for an item whose current revision this annotator wrote: they
        know its key, so it is shown with the key and never asked for blind.  The item
        view marks nothing then: the key in words is where its choices are named."""
        self.set_class(False, "-key-marked")
        note = Text(f"You wrote revision {item.revision}", style="bold")
        note.append(
            ": you know its key, so others judge it. Your judgment stands for the "
            "revision you saw.",
        )
        self.query_one("#reveal-comparison", Static).update(note)
        summary = self.query_one("#reveal-judgment", Static)
        summary.display = judgment is not None
        summary.update(judgment_summary(item, judgment) if judgment else "")
        self.query_one("#reveal-key", Static).update(key_in_words(item))
        self.query_one("#reveal-explanation", Static).update(
            literal_item(item.explanation)
            if item.explanation
            else Text("(no explanation)", style="dim")
        )
        self.scroll_home(animate=False)

    def clear(self) -> None:
        """Empty every field, so nothing of the key or the flags stays in the widget tree."""
        self._item = None
        for widget_id in (
            "reveal-comparison",
            "reveal-judgment",
            "reveal-key",
            "reveal-explanation",
        ):
            self.query_one(f"#{widget_id}", Static).update("")
        self._show_flags(())
