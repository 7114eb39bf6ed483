"""What the adjudication screen shows of a case, as text: the item (text, choices, key,
explanation, earlier revisions), every judgment, why it is in conflict and its earlier
decisions, its suspicion score; and the rejection reason its verdicts point to.

Item text, ids, names and notes are user data: every piece goes through the literal
display helpers (``reviewer/tui/literal.py``), never read as markup."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from rich.text import Text

from db.answers import format_answer
from db.vocabulary import DecisionReason, FlagName, Verdict, reason_word
from db.words import time_taken
from reviewer.tui.literal import literal, literal_item

if TYPE_CHECKING:
    from db.items import ItemSnapshot
    from reviewer.conflict_cases import ConflictCase
    from reviewer.triage import TriageEntry


# The rejection reason a verdict points to: named and highlighted in the reason dialog.
VERDICT_REASON: dict[str, DecisionReason] = {
    Verdict.AMBIGUOUS: DecisionReason.SEVERAL_VALID_ORDERS,
    Verdict.NO_ORDER: DecisionReason.NO_CLEAR_ORDER,
    Verdict.WRONG_KEY: DecisionReason.WRONG_KEY,
    Verdict.FLAWED: DecisionReason.FLAWED,
    Verdict.SENSITIVE: DecisionReason.SENSITIVE,
    Verdict.DUPLICATE: DecisionReason.DUPLICATE,
}


def item_text(item: ItemSnapshot, *, raw: bool = False) -> Text:
    """An item as a lead reads it: id, kind, source, revision and status, text, choices,
    key and explanation.

    Item text is in its display form (entities decoded, LaTeX as Unicode), or as stored
    when ``raw``; every piece of item text, id, name and note is shown literally."""
    text = Text()
    text.append_text(literal(item.id, "bold"))
    text.append_text(
        literal(
            f"   {item.kind.value} · {item.source} · revision {item.revision} · {item.status}\n",
            "dim",
        )
    )
    text.append_text(literal_item(item.prompt, raw=raw))
    text.append("\n\n")
    for label, choice in item.choices.items():
        text.append(f"{label}. ", style="bold")
        text.append_text(literal_item(choice, raw=raw))
        text.append("\n")
    text.append("\nkey ", style="dim")
    text.append_text(literal(format_answer(item.kind, item.key) + "\n", "bold"))
    if item.explanation:
        text.append("explanation ", style="dim")
        text.append_text(literal_item(item.explanation, raw=raw))
        text.append("\n")
    return text


def case_text(case: ConflictCase, *, raw: bool = False) -> Text:
    """The case's item (:func:`item_text`), then its earlier revisions."""
    item = case.item
    text = item_text(item, raw=raw)
    for revision in reversed(case.earlier_revisions):
        text.append(f"\nrevision {revision.number}", style="bold dim")
        text.append_text(literal(f" by {revision.author}: {revision.change_note or '—'}\n", "dim"))
        text.append("  key ", style="dim")
        text.append_text(literal(format_answer(item.kind, revision.key) + "\n"))
        if revision.prompt != item.prompt:
            text.append("  text ", style="dim")
            text.append_text(literal_item(revision.prompt, raw=raw))
            text.append("\n")
    return text


VERDICT_WORDS: dict[str, str] = {
    Verdict.KEEP: "keep",
    Verdict.AMBIGUOUS: "several valid",
    Verdict.NO_ORDER: "no clear order",
    Verdict.WRONG_KEY: "wrong key",
    Verdict.FLAWED: "flawed",
    Verdict.SENSITIVE: "sensitive",
    Verdict.DUPLICATE: "duplicate",
}


def judgments_text(case: ConflictCase) -> Text:
    """Every judgment of the current revision, one block each, wrapped: what a lead needs
    to decide (verdict, answer, proposed key, other valid answers, comment) in view."""
    kind = case.item.kind
    text = Text()
    if not case.judgments:
        text.append("No judgments of this revision yet.", style="dim")
        return text
    others = "orders" if kind.value == "ordering" else "answers"
    for index, judgment in enumerate(case.judgments):
        if index:
            text.append("\n")
        text.append_text(literal(judgment.annotator, "bold"))
        text.append("  ")
        text.append_text(
            literal(
                VERDICT_WORDS.get(judgment.verdict, judgment.verdict),
                "bold" if judgment.verdict == Verdict.KEEP else "bold yellow",
            )
        )
        text.append(f"  ·  answered {format_answer(kind, judgment.blind_answer)} ")
        text.append(
            "(= key)" if judgment.matches_key else "(≠ key)",
            style="green" if judgment.matches_key else "red",
        )
        text.append(f"  ·  {time_taken(judgment.seconds)}")
        if judgment.corrected_key:
            text.append("\n    proposes the key ")
            text.append(format_answer(kind, judgment.corrected_key), style="bold")
        if judgment.alternative_orders:
            text.append(f"\n    also valid {others}: ")
            text.append(
                " | ".join(format_answer(kind, order) for order in judgment.alternative_orders),
                style="bold",
            )
        if judgment.duplicate_of:
            text.append("\n    duplicate of ")
            text.append_text(literal(judgment.duplicate_of, "bold"))
        if judgment.comment:
            text.append("\n    “")
            text.append_text(literal(" ".join(judgment.comment.split()), "italic"))
            text.append("”")
    return text


def history_text(case: ConflictCase) -> Text:
    """Why the item is in conflict, and the decisions it already had (undone ones marked)."""
    text = Text()
    for line in case.disagreements:
        text.append("• ", style="yellow")
        text.append_text(literal(line + "\n"))
    for judgment in case.earlier_judgments:
        text.append_text(
            literal(
                f"revision {judgment.revision}: {judgment.annotator} answered "
                f"{format_answer(case.item.kind, judgment.blind_answer)}, {judgment.verdict}\n",
                "dim",
            )
        )
    undone = {id(decision) for decision in case.undone_decisions}
    for decision in sorted(
        [*case.decisions, *case.undone_decisions], key=lambda decision: decision.created_at
    ):
        text.append_text(literal(f"{decision.created_at:%Y-%m-%d %H:%M} {decision.lead}: ", "dim"))
        text.append_text(
            literal(decision.status, "dim strike" if id(decision) in undone else "bold")
        )
        if decision.reason:
            text.append_text(literal(f" ({reason_word(decision.reason, case.item.kind)})"))
        if decision.comment:
            text.append_text(literal(f" “{decision.comment}”"))
        if id(decision) in undone:
            text.append(" (undone)", style="dim")
        text.append("\n")
    return text


def triage_text(entry: TriageEntry) -> Text:
    """The item's suspicion score and its reasons (``reviewer.triage``), flags included."""
    text = Text(f"\nsuspicion score {entry.score:.2f}\n", style="bold")
    for reason in entry.reasons:
        text.append(f"  +{reason.weight:.2f} ", style="yellow")
        text.append_text(literal(reason.text + "\n"))
    return text


def suggested_reason(case: ConflictCase) -> DecisionReason | None:
    verdicts = Counter(
        VERDICT_REASON[j.verdict] for j in case.judgments if j.verdict in VERDICT_REASON
    )
    return verdicts.most_common(1)[0][0] if verdicts else None


def related_items(case: ConflictCase, entry: TriageEntry | None) -> list[str]:
    """The other items a case names, in the order it names them: those its annotators
    call it a duplicate of, and those its duplicate flags point to (a copy, or an item
    worth a look beside it)."""
    named = [judgment.duplicate_of for judgment in case.judgments if judgment.duplicate_of]
    if entry is not None:
        named += [
            str(flag.evidence["of"])
            for flag in entry.flags
            if flag.name is FlagName.DUPLICATE and flag.evidence.get("of")
        ]
        named += entry.compare_with
    return [item_id for item_id in dict.fromkeys(named) if item_id != case.item.id]
