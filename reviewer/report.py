"""The review report (``vetbench report``): a Markdown account of what review did to the items.

In the spirit of the review section of the EconLogicQA paper ("human review
removed 204 of 854 generated questions: more than one valid order, no clear
order, sensitive content"): how many items were generated or imported from
each source, how many were removed and why (from the leads' latest
decisions), the final count by kind, how far annotators agreed (with 95%
bootstrap intervals), and the likely wrong keys that agreement uncovered.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from sqlalchemy import and_, func, select
from sqlmodel import col

from db.answers import format_answer
from db.decisions import in_force
from db.engine import Database
from db.models import Decision, Item, ItemRevision, utcnow
from db.vocabulary import KEY_CORRECTION_NOTE, UNDECIDED_STATUSES, ItemStatus, reason_word
from db.words import agreeing, counted
from reviewer.agreement import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    AgreementFigures,
    AgreementReport,
    compute_agreement,
)
from reviewer.agreement.rows import (
    BREAKDOWN_COLUMNS,
    HEADLINE_COLUMNS,
    KIND_ORDER,
    annotator_cells,
    breakdown_table,
    headline_cells,
    pair_rows,
)

WRONG_KEYS_LISTED = 50
REASON_WORDS = {
    "several-valid-orders": "more than one valid order",
    "several-valid-answers": "more than one valid answer",
    "no-clear-order": "no clear order",
    "wrong-key": "wrong key",
    "flawed": "flawed text",
    "sensitive": "sensitive content",
    "duplicate": "duplicate",
    "other": "other reasons",
}


@dataclass
class ReviewSummary:
    """Counts behind the report, read from items, revisions and decisions."""

    items: int = 0
    by_source: dict[str, Counter[str]] = field(default_factory=dict)  # source -> kind -> items
    generated_by_source: Counter[str] = field(default_factory=Counter)
    by_status: Counter[str] = field(default_factory=Counter)
    removed_by_reason: Counter[str] = field(default_factory=Counter)
    approved_by_kind: Counter[str] = field(default_factory=Counter)
    approved_by_source: Counter[str] = field(default_factory=Counter)
    keys_corrected_by_kind: Counter[str] = field(default_factory=Counter)
    revised_decisions: int = 0  # items whose decision was changed at least once

    @property
    def removed(self) -> int:
        return sum(self.removed_by_reason.values())

    @property
    def approved(self) -> int:
        return sum(self.approved_by_kind.values())


def review_summary(db: Database) -> ReviewSummary:
    """The counts of the report, in a handful of grouped queries."""
    summary = ReviewSummary()
    with db.session() as session:
        for source, kind, count in session.execute(
            select(col(Item.source), col(Item.kind), func.count()).group_by(
                col(Item.source), col(Item.kind)
            )
        ):
            summary.by_source.setdefault(source, Counter())[kind] = count
            summary.items += count
        first_revision = and_(
            col(ItemRevision.item_id) == col(Item.id), col(ItemRevision.number) == 1
        )
        for source, count in session.execute(
            select(col(Item.source), func.count())
            .join(ItemRevision, first_revision)
            .where(col(ItemRevision.change_note) == "generated")
            .group_by(col(Item.source))
        ):
            summary.generated_by_source[source] = count
        for status, count in session.execute(
            select(col(Item.status), func.count()).group_by(col(Item.status))
        ):
            summary.by_status[status] = count

        decided_revision = and_(
            col(ItemRevision.item_id) == col(Decision.item_id),
            col(ItemRevision.number) == col(Decision.revision_number),
        )
        # Each item's newest decision in force, None where it is about an older revision:
        # a re-import or an edit since made a new one, which is pending again.
        latest: dict[str, tuple[str, str | None, str, str, bool] | None] = {}
        decisions_per_item: Counter[str] = Counter()
        for item_id, status, reason, kind, source, note, current in session.execute(
            select(
                col(Decision.item_id),
                col(Decision.status),
                col(Decision.reason),
                col(Item.kind),
                col(Item.source),
                col(ItemRevision.change_note),
                col(Decision.revision_number) == col(Item.current_revision),
            )
            .join(Item, col(Item.id) == col(Decision.item_id))
            .join(ItemRevision, decided_revision)
            .where(in_force())
            .order_by(col(Decision.created_at), col(Decision.id))
        ):
            corrected = note.startswith(KEY_CORRECTION_NOTE)
            latest[item_id] = (status, reason, kind, source, corrected) if current else None
            decisions_per_item[item_id] += 1
    for status, reason, kind, source, corrected in filter(None, latest.values()):
        if status == ItemStatus.REJECTED:
            # by the reason's name for the item's kind (db.vocabulary.reason_word)
            summary.removed_by_reason[reason_word(reason or "other", kind)] += 1
        elif status == ItemStatus.APPROVED:
            summary.approved_by_kind[kind] += 1
            summary.approved_by_source[source] += 1
            if corrected:
                summary.keys_corrected_by_kind[kind] += 1
    summary.revised_decisions = sum(1 for count in decisions_per_item.values() if count > 1)
    return summary


def _cell(text: object) -> str:
    """A Markdown table cell: pipes escaped, line breaks flattened."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> list[str]:
    lines = [
        "| " + " | ".join(_cell(cell) for cell in header) + " |",
        "|" + "|".join("---" for _ in header) + "|",
    ]
    lines += ["| " + " | ".join(_cell(cell) for cell in row) + " |" for row in rows]
    return lines


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "—"


def _kinds_present(summary: ReviewSummary) -> list[str]:
    present = {kind for counts in summary.by_source.values() for kind in counts}
    return [kind for kind in KIND_ORDER if kind in present] + sorted(present - set(KIND_ORDER))


def _summary_sentence(summary: ReviewSummary) -> str:
    decided = summary.removed + summary.approved
    open_items = summary.items - decided
    parts = []
    if summary.removed:
        reasons = ", ".join(
            f"{count} for {REASON_WORDS.get(reason, reason)}"
            for reason, count in summary.removed_by_reason.most_common()
        )
        parts.append(
            f"Review removed {summary.removed:,} of {counted(summary.items, 'item')} "
            f"({_share(summary.removed, summary.items)}): {reasons}."
        )
    else:
        parts.append(f"Review has removed none of the {counted(summary.items, 'item')} so far.")
    corrected = sum(summary.keys_corrected_by_kind.values())
    parts.append(
        f"{counted(summary.approved, 'item')} {agreeing(summary.approved, 'is', 'are')} approved"
        + (f", {corrected:,} of them with a key corrected by a lead" if corrected else "")
        + "."
    )
    if open_items:
        waiting = ", ".join(
            f"{summary.by_status[status]:,} {status.replace('_', ' ')}"
            for status in UNDECIDED_STATUSES
            if summary.by_status[status]
        )
        parts.append(f"{open_items:,} still await a decision ({waiting}).")
    return " ".join(parts)


def render_report(
    summary: ReviewSummary, agreement: AgreementReport, database: str, *, item_answers: bool = True
) -> str:
    """The report as Markdown (``item_answers``: for a lead, with the likely wrong keys)."""
    kinds = _kinds_present(summary)
    lines = [
        "# Review report",
        "",
        f"Generated {utcnow():%Y-%m-%d %H:%M} UTC from `{database}`.",
        "",
        _summary_sentence(summary),
        "",
        "## Items generated and imported",
        "",
    ]
    source_rows = []
    for source in sorted(summary.by_source):
        counts = summary.by_source[source]
        total = sum(counts.values())
        generated = summary.generated_by_source[source]
        source_rows.append(
            [
                source,
                *(f"{counts[kind]:,}" for kind in kinds),
                f"{total:,}",
                f"{generated:,}",
                f"{total - generated:,}",
            ]
        )
    totals = [sum(summary.by_source[s][kind] for s in summary.by_source) for kind in kinds]
    generated_total = sum(summary.generated_by_source.values())
    source_rows.append(
        [
            "**all**",
            *(f"{count:,}" for count in totals),
            f"{summary.items:,}",
            f"{generated_total:,}",
            f"{summary.items - generated_total:,}",
        ]
    )
    lines += _table(["source", *kinds, "total", "generated", "imported"], source_rows)

    lines += ["", "## Review status", ""]
    statuses = [status.value for status in ItemStatus]
    lines += _table(
        ["status", "items", "share"],
        [
            [
                status.replace("_", " "),
                f"{summary.by_status[status]:,}",
                _share(summary.by_status[status], summary.items),
            ]
            for status in statuses
            if summary.by_status[status]
        ],
    )

    lines += ["", "## Removed by reason", ""]
    if summary.removed:
        lines.append("From each item's latest decision by a lead.")
        lines.append("")
        lines += _table(
            ["reason", "items", "share of removed", "share of all"],
            [
                [
                    REASON_WORDS.get(reason, reason),
                    f"{count:,}",
                    _share(count, summary.removed),
                    _share(count, summary.items),
                ]
                for reason, count in summary.removed_by_reason.most_common()
            ],
        )
    else:
        lines.append("No item has been rejected.")
    if summary.revised_decisions:
        lines += [
            "",
            f"{counted(summary.revised_decisions, 'item')} had a decision revised later; "
            "the latest decision counts.",
        ]

    lines += ["", "## Final set", ""]
    if summary.approved:
        lines += _table(
            ["kind", "approved", "key corrected by a lead"],
            [
                [
                    kind,
                    f"{summary.approved_by_kind[kind]:,}",
                    f"{summary.keys_corrected_by_kind[kind]:,}",
                ]
                for kind in kinds
                if summary.approved_by_kind[kind]
            ]
            + [
                [
                    "**all**",
                    f"{summary.approved:,}",
                    f"{sum(summary.keys_corrected_by_kind.values()):,}",
                ]
            ],
        )
        lines += [""]
        lines += _table(
            ["source", "approved"],
            [
                [source, f"{count:,}"]
                for source, count in sorted(summary.approved_by_source.items())
            ],
        )
    else:
        lines.append("No item has been approved yet.")

    lines += ["", *_agreement_section(agreement)]
    lines += ["", *_wrong_keys_section(agreement, item_answers=item_answers)]
    return "\n".join(lines) + "\n"


def _agreement_section(agreement: AgreementReport) -> list[str]:
    figures = agreement.figures
    settings = agreement.settings
    lines = ["## Agreement", ""]
    if figures.judgments == 0:
        return [*lines, "No judgments yet."]
    intervals = (
        f"95% percentile bootstrap intervals from {settings.resamples} resamples of items "
        f"(seed {settings.seed})"
        if settings.resamples
        else "no intervals were computed"
    )
    lines += [
        f"{counted(figures.judgments, 'judgment')} by {counted(figures.annotators, 'annotator')} "
        f"on {counted(figures.items_judged, 'item revision')}, {figures.items_compared:,} of them "
        "judged by two or more annotators; each annotator's latest judgment of a revision counts. "
        f"Intervals: {intervals}.",
        "",
    ]
    lines += _table(HEADLINE_COLUMNS, headline_cells(figures))
    if figures.verdict.cohen:
        lines += ["", "Cohen's kappa for each pair of annotators (items both judged):", ""]
        lines += _table(
            ["annotators", "verdicts", "keep/drop", "items"],
            [[f"{first}, {second}", *cells] for first, second, cells in pair_rows(figures)],
        )
    if agreement.per_annotator:
        lines += [
            "",
            "Per annotator (agreement: share of pairs with another annotator that agree):",
            "",
        ]
        lines += _table(
            [
                "annotator",
                "judgments",
                "verdicts agree",
                "answers agree",
                "answer = key",
                "agrees with decision",
                "median seconds",
            ],
            [
                [stats.name, cells.judged, *cells.agreement, cells.median_seconds]
                for stats in agreement.per_annotator
                for cells in [annotator_cells(stats)]
            ],
        )
    if len(agreement.by_kind) > 1:
        lines += ["", "By kind:", ""]
        lines += _breakdown(agreement.by_kind)
    if len(agreement.by_source) > 1:
        lines += ["", "By source:", ""]
        lines += _breakdown(agreement.by_source)
    return lines


def _breakdown(groups: dict[str, AgreementFigures]) -> list[str]:
    """The table of one breakdown (by kind, by source), then the reasons its undefined
    figures refer to."""
    table = breakdown_table(groups, answer_intervals=True)
    rows = [[name, *cells] for name, cells in table.rows]
    notes = [f"- {_cell(note)}" for note in table.notes]
    return _table(["", *BREAKDOWN_COLUMNS], rows) + (["", *notes] if notes else [])


def _wrong_keys_section(agreement: AgreementReport, *, item_answers: bool) -> list[str]:
    """The likely wrong keys; without ``item_answers`` (a reader who is not a lead) their
    count, as in the agreement: the list shows what the annotators answered."""
    wrong = agreement.figures.key.likely_wrong_keys
    lines = ["## Likely wrong keys", ""]
    if not wrong:
        return [
            *lines,
            "None: no item where two or more annotators agreed on an answer other than the key.",
        ]
    resolved = sum(1 for entry in wrong if entry.decision)
    lines += [
        f"{counted(len(wrong), 'item revision')} where every annotator gave the same blind "
        f"answer and it is not the key; {resolved:,} of them "
        f"{agreeing(resolved, 'has', 'have')} a lead's decision.",
        "",
    ]
    if not item_answers:
        return [
            *lines,
            "The list shows what the annotators answered, so it is for leads "
            "(`vetbench report --as` a lead): annotators judge blind.",
        ]
    lines += _table(
        ["item", "revision", "kind", "key", "annotators' answer", "annotators", "decision"],
        [
            [
                entry.item_id,
                f"{entry.revision}{'' if entry.is_current else ' (revised since)'}",
                entry.kind,
                format_answer(entry.kind, entry.key),
                format_answer(entry.kind, entry.agreed_answer),
                entry.annotators,
                entry.decision or "—",
            ]
            for entry in wrong[:WRONG_KEYS_LISTED]
        ],
    )
    if len(wrong) > WRONG_KEYS_LISTED:
        lines += [
            "",
            f"… and {len(wrong) - WRONG_KEYS_LISTED:,} more (`vetbench agreement --json`).",
        ]
    return lines


def build_report(
    db: Database,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    item_answers: bool = True,
) -> str:
    """The Markdown review report for the whole database (``item_answers``: for a lead,
    with the list of likely wrong keys; for anyone else, their count)."""
    agreement = compute_agreement(db, resamples=resamples, seed=seed)
    database = db.url.render_as_string(hide_password=True)
    return render_report(review_summary(db), agreement, database, item_answers=item_answers)
