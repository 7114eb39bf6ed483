"""What the lead's screens show of the consensus (``db.consensus``): F3's line under an
item's judgments and its queue row for an item the consensus refers to the lead, F2's
reliability table."""

from __future__ import annotations

from rich.text import Text

from db.answers import format_answer
from db.consensus import DEFAULT_CONFIDENCE, ConsensusOutcome, ItemConsensus, RaterReliability
from reviewer.agreement import rows
from reviewer.conflict_cases import ConflictCase
from reviewer.tui.literal import literal

__all__ = ["DEFAULT_CONFIDENCE", "consensus_text", "referred_row", "reliability_cells"]

DECIDES: dict[ConsensusOutcome, tuple[str, str]] = {
    ConsensusOutcome.APPROVE: ("would approve", "green"),
    ConsensusOutcome.WRONG_KEY: ("says the key is wrong: yours to decide", "bold red"),
    ConsensusOutcome.DROP: ("says drop: yours to decide", "bold red"),
    ConsensusOutcome.UNCERTAIN: ("is not sure: more judgments would help", "yellow"),
}


def consensus_text(entry: ItemConsensus, confidence: float = DEFAULT_CONFIDENCE) -> Text:
    """The consensus on the item and what it would decide at ``confidence``."""
    text = Text("\nconsensus  ", style="bold")
    text.append(entry.describe(confidence).rsplit(": ", 1)[0])
    words, style = DECIDES[entry.outcome(confidence)]
    text.append(f"\n    {words}", style=style)
    if entry.suggested_key is not None:
        text.append("  ·  suggested key ")
        text.append(format_answer(entry.kind, entry.suggested_key), style="bold")
    return text


def referred_row(
    case: ConflictCase, entry: ItemConsensus, confidence: float = DEFAULT_CONFIDENCE
) -> tuple[Text, ...]:
    """F3's queue cells (item, score, kind, source, why) for a referred item."""
    item = case.item
    return (
        literal(item.id),
        Text("—", justify="right"),
        literal(item.kind.value),
        literal(item.source),
        literal(f"consensus: {entry.outcome(confidence).value}"),
    )


def reliability_cells(rater: RaterReliability) -> tuple[Text | str, ...]:
    """F2's reliability row (``reviewer.agreement.rows``), the name shown literally."""
    name, *figures = rows.reliability_cells(rater)
    return (literal(name), *figures)
