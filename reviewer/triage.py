"""Triage: which items most deserve a person's eyes, and why.

Each undecided item gets a suspicion score, the sum of three kinds of sign:

- **models** agreeing with one another on an answer other than the key (each
  model's latest run on the current revision, read through ``db.model_answers``, the
  reading the evaluator's suspect keys use too): the strongest sign of a wrong key,
  ``MODEL_WEIGHT`` times the share of the models that agree, when at least two do;
- **annotators** disagreeing with the key or with keeping the item (their latest
  active judgments of the current revision): ``ANNOTATOR_WEIGHT`` times the share
  that did not keep it with the key, and ``SAME_ANSWER_WEIGHT`` more when two or more
  gave one and the same other answer blind;
- the item's **flags** (``db.flags``), each name counted once, by ``FLAG_WEIGHTS``
  (the ``model-disagrees`` flag computed from runs is the models' sign above, so it
  is not counted twice; the one from ``vetbench check`` counts).

Every sign comes with a reason in words, and a likely decision is suggested (a
key most signs point to, or a rejection reason), so a lead can act on it with the
``vetbench decide`` command triage prints.  Review domain: ``db`` only.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from sqlalchemy import select
from sqlmodel import Session, col

from db.answers import format_answer
from db.engine import Database
from db.flags import ItemFlag, all_current_flags, current_flags
from db.item_status import named_judgment_rows
from db.items import item_conditions
from db.json_types import JsonObject
from db.model_answers import ItemAnswers, model_answers
from db.models import Item, ItemRevision, Judgment, is_current_revision
from db.qualification import counted_judgments
from db.vocabulary import (
    UNDECIDED_STATUSES,
    DecisionReason,
    FlagName,
    FlagSource,
    ItemKind,
    ItemStatus,
    Verdict,
)

__all__ = [
    "FLAG_WEIGHTS",
    "Reason",
    "Suggestion",
    "TriageEntry",
    "decide_command",
    "rank_items",
    "triage_scores",
]

UNDECIDED: tuple[str, ...] = tuple(status.value for status in UNDECIDED_STATUSES)
"""What triage ranks unless asked otherwise: items no lead has decided yet."""
MODEL_WEIGHT = 4.0
LONE_MODEL_WEIGHT = 0.5  # one model alone answering otherwise: a weak sign
ANNOTATOR_WEIGHT = 2.0
SAME_ANSWER_WEIGHT = 1.5
FLAG_WEIGHTS: dict[FlagName, float] = {
    FlagName.KEY_MISMATCH: 3.0,
    FlagName.MODEL_DISAGREES: 3.0,  # from `vetbench check` (the runs' own is the models' sign)
    FlagName.NEEDS_MEDIA: 2.0,
    FlagName.DUPLICATE: 1.5,
    FlagName.SECOND_OPINION: 1.5,
    FlagName.ORDER_LEAK: 1.0,
    FlagName.HTML: 0.25,  # the text shows decoded; a sign of a careless source, no more
}
# What a flag suggests a lead decide, when nothing points at another key.
_FLAG_REASONS: dict[FlagName, DecisionReason] = {
    FlagName.NEEDS_MEDIA: DecisionReason.FLAWED,
    FlagName.DUPLICATE: DecisionReason.DUPLICATE,
}
_CONCERN_REASONS: dict[str, DecisionReason] = {
    "several-orders": DecisionReason.SEVERAL_VALID_ORDERS,
    "no-clear-order": DecisionReason.NO_CLEAR_ORDER,
    "missing-material": DecisionReason.FLAWED,
    "sensitive": DecisionReason.SENSITIVE,
}


@dataclass(frozen=True)
class Reason:
    """One sign that adds to an item's score."""

    sign: str  # "models", "annotators" or the flag's name
    weight: float
    text: str

    def to_json(self) -> JsonObject:
        return {"sign": self.sign, "weight": round(self.weight, 3), "text": self.text}


@dataclass(frozen=True)
class Suggestion:
    """The decision the signs point to: approve with another key, or reject for a reason."""

    status: ItemStatus
    key: str | None = None
    reason: DecisionReason | None = None

    def to_json(self) -> JsonObject:
        return {
            "status": self.status.value,
            "key": self.key,
            "reason": self.reason.value if self.reason else None,
        }


@dataclass(frozen=True)
class TriageEntry:
    """One item's suspicion score, its reasons (strongest first) and a likely decision."""

    item_id: str
    kind: ItemKind
    status: str
    revision: int
    key: str
    score: float
    reasons: tuple[Reason, ...]
    suggestion: Suggestion | None = None
    flags: tuple[ItemFlag, ...] = field(default=(), repr=False)

    def to_json(self) -> JsonObject:
        return {
            "item_id": self.item_id,
            "kind": self.kind.value,
            "status": self.status,
            "revision": self.revision,
            "key": self.key,
            "score": round(self.score, 3),
            "reasons": [reason.to_json() for reason in self.reasons],
            "suggestion": self.suggestion.to_json() if self.suggestion else None,
        }


@dataclass(frozen=True)
class _ItemRow:
    kind: ItemKind
    status: str
    revision: int
    key: str


@dataclass(frozen=True)
class _Judged:
    annotator: str
    blind_answer: str
    verdict: str
    corrected_key: str | None


def _items(session: Session, statuses: Sequence[str] | None) -> dict[str, _ItemRow]:
    query = select(
        col(Item.id),
        col(Item.kind),
        col(Item.status),
        col(Item.current_revision),
        col(ItemRevision.key),
    ).join(ItemRevision, is_current_revision())
    query = query.where(*item_conditions(statuses=statuses))
    return {
        item_id: _ItemRow(ItemKind(kind), status, revision, key)
        for item_id, kind, status, revision, key in session.execute(query)
    }


def _judgments(session: Session) -> dict[str, list[_Judged]]:
    """Each annotator's latest active judgment of each item's current revision
    (the rule of ``db.item_status.active_judgments``), read in one query."""
    rows = session.execute(
        named_judgment_rows(
            col(Judgment.item_id),
            col(Judgment.annotator_id),
            col(Judgment.blind_answer),
            col(Judgment.verdict),
            col(Judgment.corrected_key),
        ).where(
            col(Judgment.revision_number) == col(Item.current_revision),
            col(Judgment.gold_id).is_(None),  # calibration measures the annotator, not the item
            *counted_judgments(session),  # the qualification gate's (db.qualification)
        )
    )
    latest: dict[str, dict[int, _Judged]] = defaultdict(dict)
    for name, item_id, annotator_id, blind, verdict, corrected in rows:
        latest[item_id][annotator_id] = _Judged(name, blind, verdict, corrected)
    return {item_id: list(by_person.values()) for item_id, by_person in latest.items()}


def _model_reasons(answers: ItemAnswers | None) -> tuple[list[Reason], str | None]:
    if answers is None:
        return [], None
    consensus = answers.wrong_consensus
    if consensus is None:
        return [], None
    answer, agreeing = consensus
    answered = len(answers.answers)
    shown = format_answer(answers.kind, answer)
    key = format_answer(answers.kind, answers.key)
    names = ", ".join(a.model for a in agreeing)
    runs = ", ".join(str(a.run_id) for a in sorted(agreeing, key=lambda a: a.run_id))
    if len(agreeing) >= 2:
        text = f"{len(agreeing)} of {answered} models answer {shown}, not the key {key} ({names}; runs {runs})"
        return [Reason("models", MODEL_WEIGHT * len(agreeing) / answered, text)], answer
    text = f"{names} answers {shown}, not the key {key} (run {runs}; 1 of {answered} models)"
    return [Reason("models", LONE_MODEL_WEIGHT / answered, text)], None


def _annotator_reasons(item: _ItemRow, judged: list[_Judged]) -> tuple[list[Reason], str | None]:
    if not judged:
        return [], None
    dissent = [j for j in judged if j.verdict != Verdict.KEEP or j.blind_answer != item.key]
    if not dissent:
        return [], None
    parts = []
    for judgment in dissent:
        said = []
        if judgment.blind_answer != item.key:
            said.append(f"answered {format_answer(item.kind, judgment.blind_answer)} blind")
        if judgment.verdict != Verdict.KEEP:
            said.append(f"verdict {judgment.verdict}")
        if judgment.corrected_key:
            said.append(f"proposes {format_answer(item.kind, judgment.corrected_key)}")
        parts.append(f"{judgment.annotator} {', '.join(said)}")
    reasons = [
        Reason(
            "annotators",
            ANNOTATOR_WEIGHT * len(dissent) / len(judged),
            f"{len(dissent)} of {len(judged)} annotators disagree: {'; '.join(parts)}",
        )
    ]
    proposals = Counter(
        j.corrected_key or j.blind_answer
        for j in dissent
        if (j.corrected_key or j.blind_answer) != item.key
    )
    agreed = None
    if proposals:
        answer, count = proposals.most_common(1)[0]
        if count >= 2:
            agreed = answer
            reasons.append(
                Reason(
                    "annotators",
                    SAME_ANSWER_WEIGHT,
                    f"{count} annotators agree on {format_answer(item.kind, answer)} instead of "
                    f"the key {format_answer(item.kind, item.key)}",
                )
            )
        elif len(proposals) == 1 and len(judged) == len(dissent):
            agreed = answer
    return reasons, agreed


def _flag_reasons(
    flags: Sequence[ItemFlag],
) -> tuple[list[Reason], list[str], list[DecisionReason]]:
    """Reasons from flags, the keys they propose, and the rejection reasons they suggest."""
    reasons: list[Reason] = []
    keys: list[str] = []
    rejections: list[DecisionReason] = []
    counted: set[FlagName] = set()
    for flag in flags:
        if flag.name is FlagName.MODEL_DISAGREES and flag.source is FlagSource.MODEL:
            continue  # the runs: already the models' sign
        proposed = flag.evidence.get("explanation_says") or flag.evidence.get("proposed_key")
        if isinstance(proposed, str) and proposed:
            keys.append(proposed)
        concerns = flag.evidence.get("concerns")
        if isinstance(concerns, list):
            rejections += [
                _CONCERN_REASONS[c]
                for c in concerns
                if isinstance(c, str) and c in _CONCERN_REASONS
            ]
        if flag.name in _FLAG_REASONS:
            rejections.append(_FLAG_REASONS[flag.name])
        if flag.name in counted:
            continue
        counted.add(flag.name)
        source = f" ({flag.source.value})" if flag.source is not FlagSource.AUTO else ""
        reasons.append(
            Reason(
                flag.name.value,
                FLAG_WEIGHTS[flag.name],
                f"{flag.name.value}{source}: {flag.summary}",
            )
        )
    return reasons, keys, rejections


def _entry(
    item_id: str,
    item: _ItemRow,
    answers: ItemAnswers | None,
    judged: list[_Judged],
    flags: Sequence[ItemFlag],
) -> TriageEntry:
    model_reasons, model_key = _model_reasons(answers)
    annotator_reasons, annotator_key = _annotator_reasons(item, judged)
    flag_reasons, flag_keys, rejections = _flag_reasons(flags)
    reasons = sorted(model_reasons + annotator_reasons + flag_reasons, key=lambda r: -r.weight)
    score = sum(reason.weight for reason in reasons)
    proposed = Counter(k for k in [model_key, annotator_key, *flag_keys] if k and k != item.key)
    suggestion = None
    if proposed:
        suggestion = Suggestion(ItemStatus.APPROVED, key=proposed.most_common(1)[0][0])
    elif rejections:
        suggestion = Suggestion(
            ItemStatus.REJECTED, reason=Counter(rejections).most_common(1)[0][0]
        )
    return TriageEntry(
        item_id,
        item.kind,
        item.status,
        item.revision,
        item.key,
        score,
        tuple(reasons),
        suggestion,
        tuple(flags),
    )


def rank_items(
    db: Database,
    *,
    statuses: Sequence[str] | None = UNDECIDED,
    limit: int | None = None,
) -> list[TriageEntry]:
    """Items with any sign of trouble, most suspicious first (ties: id order).

    ``statuses`` limits the items (default: those not yet decided; None: all).
    """
    with db.session() as session:
        items = _items(session, statuses)
        answers = {entry.item_id: entry for entry in model_answers(session)}
        judged = _judgments(session)
        flags = all_current_flags(session)
    entries = []
    for item_id in set(answers) | set(judged) | set(flags):
        item = items.get(item_id)
        if item is None:
            continue
        entry = _entry(
            item_id, item, answers.get(item_id), judged.get(item_id, []), flags.get(item_id, [])
        )
        if entry.score > 0:
            entries.append(entry)
    entries.sort(key=lambda entry: (-entry.score, entry.item_id))
    return entries[:limit] if limit is not None else entries


def triage_scores(db: Database, item_ids: Sequence[str]) -> dict[str, TriageEntry]:
    """The triage entries of some items (the lead's conflict screen shows them)."""
    if not item_ids:
        return {}
    with db.session() as session:
        items = {i: row for i, row in _items(session, None).items() if i in set(item_ids)}
        answers = {entry.item_id: entry for entry in model_answers(session, list(item_ids))}
        judged = _judgments(session)
        flags = current_flags(session, list(item_ids))
    return {
        item_id: _entry(
            item_id, item, answers.get(item_id), judged.get(item_id, []), flags.get(item_id, [])
        )
        for item_id, item in items.items()
    }


def decide_command(entry: TriageEntry, lead: str = "LEAD") -> str | None:
    """The ``vetbench decide`` command of the suggested decision (a shell line), if any."""
    import shlex

    suggestion = entry.suggestion
    if suggestion is None:
        return None
    parts = ["vetbench", "decide", entry.item_id, "--status", suggestion.status.value]
    if suggestion.key:
        parts += ["--key", format_answer(entry.kind, suggestion.key)]
    if suggestion.reason:
        parts += ["--reason", suggestion.reason.value]
    return shlex.join([*parts, "--as", lead])
