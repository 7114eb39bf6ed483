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
- annotators' **flawed or sensitive verdicts on an earlier revision**
  (``EARLIER_WEIGHTS``): an edit since may or may not have mended what they saw;
- the item's **flags** (``db.flags``), each name counted once, by ``FLAG_WEIGHTS``
  (the ``model-disagrees`` flag computed from runs is the models' sign above, so it
  is not counted twice; the one from ``vetbench check`` counts).

Every sign comes with a reason in words, and a likely decision is suggested (a
key most signs point to, or a rejection reason), so a lead can act on it with the
``vetbench decide`` command triage prints.  A suggestion is never more certain than
its evidence: another key only when an annotator who did not keep the key asks for it
(a blind answer its annotator then kept the key over is a sign, not a proposal); a
near-duplicate is suggested for rejection only when it differs from its original in
form alone (order, labels, punctuation…); one that asks the opposite question or
another question on a shared stem is worth a look (``compare_with``), not a decision.

Whose judgments say what is a lead's to read, as in the conflict queue: for anyone
else (``for_lead=False``) the annotators' signs weigh the same but say only how many
disagree, and suggest no key, so that an annotator who asks keeps judging blind.
Review domain: ``db`` only.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from sqlalchemy import select
from sqlmodel import Session, col

from db.answers import format_answer
from db.engine import Database
from db.flags import ItemFlag, all_current_flags, current_flags, duplicate_reading_now
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
from db.words import counted
from reviewer.judging import proposed_keys
from reviewer.queue import QueueFilter

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
EARLIER_WEIGHTS: dict[str, float] = {Verdict.SENSITIVE.value: 1.5, Verdict.FLAWED.value: 1.0}
"""A verdict on an earlier revision, counted once per verdict; the strongest first."""
FLAG_WEIGHTS: dict[FlagName, float] = {
    FlagName.KEY_MISMATCH: 3.0,
    FlagName.MODEL_DISAGREES: 3.0,  # from `vetbench check` (the runs' own is the models' sign)
    FlagName.NEEDS_MEDIA: 2.0,
    FlagName.DUPLICATE: 1.5,
    FlagName.SECOND_OPINION: 1.5,
    FlagName.ORDER_LEAK: 1.0,
    FlagName.SAME_CHOICES: 2.0,  # two right answers, or none: the item needs fixing
    FlagName.HTML: 0.25,  # the text shows decoded; a sign of a careless source, no more
}
# What a flag suggests a lead decide, when nothing points at another key.
_FLAG_REASONS: dict[FlagName, DecisionReason] = {
    FlagName.NEEDS_MEDIA: DecisionReason.FLAWED,
    FlagName.DUPLICATE: DecisionReason.DUPLICATE,
    FlagName.SAME_CHOICES: DecisionReason.FLAWED,
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
    compare_with: tuple[str, ...] = ()  # related items worth a look beside it (not copies)

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


@dataclass(frozen=True)
class _Earlier:
    annotator: str
    revision: int
    verdict: str
    comment: str


def _items(
    session: Session, statuses: Sequence[str] | None, filters: QueueFilter | None = None
) -> dict[str, _ItemRow]:
    query = select(
        col(Item.id),
        col(Item.kind),
        col(Item.status),
        col(Item.current_revision),
        col(ItemRevision.key),
    ).join(ItemRevision, is_current_revision())
    query = query.where(*item_conditions(statuses=statuses))
    if filters is not None:
        query = query.where(*filters.conditions(session))
    return {
        item_id: _ItemRow(ItemKind(kind), status, revision, key)
        for item_id, kind, status, revision, key in session.execute(query)
    }


def _earlier_verdicts(session: Session) -> dict[str, list[_Earlier]]:
    """Active flawed and sensitive verdicts on revisions older than the current one."""
    rows = session.execute(
        named_judgment_rows(
            col(Judgment.item_id),
            col(Judgment.revision_number),
            col(Judgment.verdict),
            col(Judgment.comment),
        ).where(
            col(Judgment.revision_number) < col(Item.current_revision),
            col(Judgment.verdict).in_(list(EARLIER_WEIGHTS)),
            col(Judgment.gold_id).is_(None),
            *counted_judgments(session),  # the qualification gate's (db.qualification)
        )
    )
    found: dict[str, list[_Earlier]] = defaultdict(list)
    for name, item_id, revision, verdict, comment in rows:
        found[item_id].append(_Earlier(name, revision, verdict, comment))
    return found


def _prompts(session: Session, item_ids: Sequence[str]) -> dict[str, str]:
    """The current question (scenario) of each item, to read near-duplicates against."""
    found: dict[str, str] = {}
    ids = sorted(set(item_ids))
    for start in range(0, len(ids), 500):
        query = (
            select(col(Item.id), col(ItemRevision.prompt))
            .join(ItemRevision, is_current_revision())
            .where(col(Item.id).in_(ids[start : start + 500]))
        )
        found.update({item_id: prompt for item_id, prompt in session.execute(query)})
    return found


def _duplicate_ids(flags: Mapping[str, Sequence[ItemFlag]]) -> list[str]:
    """Items with a duplicate flag and the items they are said to copy."""
    ids: list[str] = []
    for item_id, item_flags in flags.items():
        for flag in item_flags:
            if flag.name is FlagName.DUPLICATE:
                ids += [item_id, str(flag.evidence.get("of", ""))]
    return ids


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


FOR_LEADS = "who and how: for leads"
"""Said in place of the annotators' judgments to anyone but a lead."""


def _annotator_reasons(
    item: _ItemRow, judged: list[_Judged], *, for_lead: bool
) -> tuple[list[Reason], str | None]:
    if not judged:
        return [], None
    dissent = [j for j in judged if j.verdict != Verdict.KEEP or j.blind_answer != item.key]
    if not dissent:
        return [], None
    weight = ANNOTATOR_WEIGHT * len(dissent) / len(judged)
    proposals = proposed_keys(item.key, dissent)
    same = proposals[0].times if proposals and proposals[0].times >= 2 else 0
    if not for_lead:
        disagree = f"{len(dissent)} of {len(judged)} annotators disagree"
        reasons = [Reason("annotators", weight, f"{disagree} ({FOR_LEADS})")]
        if same:
            agree = f"{same} annotators agree on one answer other than the key"
            reasons.append(Reason("annotators", SAME_ANSWER_WEIGHT, agree))
        return reasons, None
    parts = []
    for judgment in dissent:
        said = []
        if judgment.blind_answer != item.key:
            said.append(f"answered {format_answer(item.kind, judgment.blind_answer)} blind")
        if judgment.verdict != Verdict.KEEP:
            said.append(f"verdict {judgment.verdict}")
        else:  # answered otherwise, then saw the key and kept it
            said.append("then kept the key")
        if judgment.corrected_key:
            said.append(f"proposes {format_answer(item.kind, judgment.corrected_key)}")
        parts.append(f"{judgment.annotator} {', '.join(said)}")
    reasons = [
        Reason(
            "annotators",
            weight,
            f"{len(dissent)} of {len(judged)} annotators disagree: {'; '.join(parts)}",
        )
    ]
    if same:  # the same other answer, found apart: a sign even if they kept the key
        reasons.append(
            Reason(
                "annotators",
                SAME_ANSWER_WEIGHT,
                f"{same} annotators agree on {format_answer(item.kind, proposals[0].answer)} "
                f"instead of the key {format_answer(item.kind, item.key)}",
            )
        )
    # A key to suggest needs someone who did not keep the key to ask for it.
    suggestible = [proposal for proposal in proposals if proposal.asked_for]
    if suggestible:
        first = suggestible[0]
        if first.times >= 2 or (len(proposals) == 1 and len(judged) == len(dissent)):
            return reasons, first.answer
    return reasons, None


def _earlier_reasons(
    earlier: Sequence[_Earlier], *, for_lead: bool
) -> tuple[list[Reason], list[DecisionReason]]:
    if not earlier:
        return [], []
    parts = []
    for judgment in earlier:
        said = f"{judgment.annotator} verdict {judgment.verdict} on revision {judgment.revision}"
        comment = " ".join(judgment.comment.split())
        parts.append(f"{said} (“{comment[:60]}”)" if comment else said)
    weight = sum(EARLIER_WEIGHTS[verdict] for verdict in {j.verdict for j in earlier})
    if not for_lead:  # which verdict, even, is a judgment's: no rejection to suggest
        said = f"{counted(len(earlier), 'flawed or sensitive verdict')} ({FOR_LEADS})"
        return [Reason("annotators", weight, f"earlier revisions: {said}; was it mended?")], []
    text = f"earlier revisions: {'; '.join(parts)}; was it mended?"
    rejections = [DecisionReason.SENSITIVE] * any(
        j.verdict == Verdict.SENSITIVE.value for j in earlier
    )
    return [Reason("annotators", weight, text)], rejections


def _duplicate_reading(flag: ItemFlag, prompts: Mapping[str, str]) -> tuple[str, str | None]:
    """A duplicate flag's reason text, and the item to compare with when it is not a copy
    (None: a copy, in form alone, or as the item file states), as the flag reads now."""
    reading = duplicate_reading_now(flag, prompts)
    if reading.copy:
        return f"duplicate: {flag.summary}", None
    return f"duplicate: {reading.text}", str(flag.evidence.get("of", ""))


def _flag_reasons(
    item_id: str, flags: Sequence[ItemFlag], prompts: Mapping[str, str]
) -> tuple[list[Reason], list[str], list[DecisionReason], list[str]]:
    """Reasons from flags, the keys they propose, the rejection reasons they suggest, and
    the related items they say are worth comparing."""
    reasons: list[Reason] = []
    keys: list[str] = []
    rejections: list[DecisionReason] = []
    compare: list[str] = []
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
        source = f" ({flag.source.value})" if flag.source is not FlagSource.AUTO else ""
        text = f"{flag.name.value}{source}: {flag.summary}"
        if flag.name is FlagName.DUPLICATE:
            text, related = _duplicate_reading(flag, prompts)
            if related is not None:
                compare.append(related)
        if flag.name in _FLAG_REASONS and not (flag.name is FlagName.DUPLICATE and compare):
            rejections.append(_FLAG_REASONS[flag.name])
        if flag.name in counted:
            continue
        counted.add(flag.name)
        reasons.append(Reason(flag.name.value, FLAG_WEIGHTS[flag.name], text))
    return reasons, keys, rejections, compare


def _entry(
    item_id: str,
    item: _ItemRow,
    answers: ItemAnswers | None,
    judged: list[_Judged],
    flags: Sequence[ItemFlag],
    earlier: Sequence[_Earlier] = (),
    prompts: Mapping[str, str] | None = None,
    *,
    for_lead: bool = True,
) -> TriageEntry:
    model_reasons, model_key = _model_reasons(answers)
    annotator_reasons, annotator_key = _annotator_reasons(item, judged, for_lead=for_lead)
    flag_reasons, flag_keys, rejections, compare = _flag_reasons(item_id, flags, prompts or {})
    earlier_reasons, earlier_rejections = _earlier_reasons(earlier, for_lead=for_lead)
    rejections += earlier_rejections
    reasons = sorted(
        model_reasons + annotator_reasons + earlier_reasons + flag_reasons, key=lambda r: -r.weight
    )
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
        tuple(dict.fromkeys(compare)),
    )


@dataclass(frozen=True)
class _Signs:
    """Everything the score reads besides the items, loaded in one session."""

    answers: dict[str, ItemAnswers]
    judged: dict[str, list[_Judged]]
    earlier: dict[str, list[_Earlier]]
    flags: dict[str, list[ItemFlag]]
    prompts: dict[str, str]

    def entry(self, item_id: str, item: _ItemRow, *, for_lead: bool = True) -> TriageEntry:
        return _entry(
            item_id,
            item,
            self.answers.get(item_id),
            self.judged.get(item_id, []),
            self.flags.get(item_id, []),
            self.earlier.get(item_id, []),
            self.prompts,
            for_lead=for_lead,
        )


def _signs(session: Session, item_ids: Sequence[str] | None) -> _Signs:
    """The signs of ``item_ids`` (None: of every item)."""
    ids = None if item_ids is None else list(item_ids)
    answers = model_answers(session) if ids is None else model_answers(session, ids)
    flags = all_current_flags(session) if ids is None else current_flags(session, ids)
    return _Signs(
        {entry.item_id: entry for entry in answers},
        _judgments(session),
        _earlier_verdicts(session),
        dict(flags),
        _prompts(session, _duplicate_ids(flags)),
    )


def rank_items(
    db: Database,
    *,
    statuses: Sequence[str] | None = UNDECIDED,
    limit: int | None = None,
    filters: QueueFilter | None = None,
    for_lead: bool = True,
) -> list[TriageEntry]:
    """Items with any sign of trouble, most suspicious first (ties: id order).

    ``statuses`` limits the items (default: those not yet decided; None: all);
    ``filters`` narrows them by kind, source, exam, flag or text, as the queue's do;
    without ``for_lead`` the annotators' signs are counts only (the order is the same).
    """
    with db.session() as session:
        items = _items(session, statuses, filters)
        signs = _signs(session, None)
    entries = []
    for item_id in set(signs.answers) | set(signs.judged) | set(signs.flags) | set(signs.earlier):
        item = items.get(item_id)
        if item is None:
            continue
        entry = signs.entry(item_id, item, for_lead=for_lead)
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
        signs = _signs(session, item_ids)
    return {item_id: signs.entry(item_id, item) for item_id, item in items.items()}


def decide_command(entry: TriageEntry, lead: str | None = None) -> str | None:
    """The ``vetbench decide`` command of the suggested decision (a shell line), if any;
    ``--as lead`` when a lead is named (without: for a lead to run as themselves)."""
    import shlex

    suggestion = entry.suggestion
    if suggestion is None:
        return None
    parts = ["vetbench", "decide", entry.item_id, "--status", suggestion.status.value]
    if suggestion.key:
        parts += ["--key", format_answer(entry.kind, suggestion.key)]
    if suggestion.reason:
        parts += ["--reason", suggestion.reason.value]
    return shlex.join([*parts, "--as", lead] if lead else parts)
