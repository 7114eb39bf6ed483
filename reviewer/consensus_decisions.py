"""Decisions from the consensus (``db.consensus``): ``approve-agreed --min-confidence``.

An undecided item that people judged is approved in bulk only when the consensus
keeps it with its key right at the confidence asked for; each decision's audit event
carries the consensus figures it rests on.  Items the consensus says have a wrong key,
or should be dropped, are never decided here: they are *referred* to a lead, who sees
them in F3 with the suggested key.  Items it is unsure of wait for more judgments.
An item no person judged is never approved, whatever the models say.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from sqlmodel import Session

from db.consensus import Consensus, ConsensusOutcome, ItemConsensus, estimate_consensus
from db.consensus_inputs import scoped_statuses
from db.engine import Database
from db.item_scope import EVERY_ITEM, ItemScope
from db.json_types import JsonObject
from db.people import require_lead
from db.vocabulary import DECISION_STATUSES, UNDECIDED_STATUSES, ItemStatus
from reviewer.adjudication import BulkDecision, store_bulk_decisions
from reviewer.conflict_cases import ConflictCase, load_case

__all__ = [
    "ConsensusApproval",
    "ConsensusPlan",
    "ConsensusStanding",
    "approve_confident",
    "consensus_figures",
    "consensus_standing",
    "plan_confident",
    "referred_cases",
]


@dataclass(frozen=True)
class ConsensusPlan:
    """What the consensus would decide among the undecided items people judged."""

    confidence: float
    approvable: tuple[ItemConsensus, ...]  # kept with the key right, confidently
    referred: tuple[ItemConsensus, ...]  # a wrong key or a drop: for a lead
    uncertain: int  # neither: they wait for more judgments
    statuses: dict[str, str]  # item id -> status, for the items above


@dataclass(frozen=True)
class ConsensusApproval:
    """What ``approve_confident`` did."""

    approved: int
    referred: tuple[ItemConsensus, ...]


def consensus_figures(item: ItemConsensus, confidence: float) -> JsonObject:
    """The figures an approval's audit event keeps."""
    return {
        "p_key_right": round(item.p_key_right, 6),
        "p_keep": round(item.p_keep, 6),
        "judgments": item.judgments,
        "models": item.models,
        "min_confidence": confidence,
    }


def _plan(
    session: Session,
    consensus: Consensus,
    confidence: float,
    scope: ItemScope,
) -> ConsensusPlan:
    undecided = [status.value for status in UNDECIDED_STATUSES]
    status_of = scoped_statuses(
        session, statuses=undecided, kinds=scope.kinds, sources=scope.sources
    )
    approvable, referred, uncertain = [], [], 0
    for item in consensus.items:
        if item.item_id not in status_of or item.judgments == 0:
            continue
        outcome = item.outcome(confidence)
        if outcome is ConsensusOutcome.APPROVE:
            approvable.append(item)
        elif outcome is ConsensusOutcome.UNCERTAIN:
            uncertain += 1
        else:
            referred.append(item)
    return ConsensusPlan(confidence, tuple(approvable), tuple(referred), uncertain, status_of)


@dataclass(frozen=True)
class ConsensusStanding:
    """Where the items of a consensus stand, as ``vetbench consensus`` shows them: the
    decided ones, and among the others what ``approve-agreed --min-confidence`` would do
    (the same items, the same rule, so its counts and the listing's agree)."""

    plan: ConsensusPlan
    decided: dict[str, str]  # item id -> approved or rejected: a lead's decision stands
    unjudged: int = 0  # undecided items no person judged (models or gold alone): never approved

    def undecided_counts(self) -> dict[str, int]:
        """How many undecided items people judged each outcome takes (approve-agreed's)."""
        counts = {
            ConsensusOutcome.APPROVE.value: len(self.plan.approvable),
            ConsensusOutcome.UNCERTAIN.value: self.plan.uncertain,
        }
        for item in self.plan.referred:
            outcome = item.outcome(self.plan.confidence).value
            counts[outcome] = counts.get(outcome, 0) + 1
        return {outcome: count for outcome, count in sorted(counts.items()) if count}

    def decided_counts(self) -> dict[str, int]:
        """How many items of the consensus each decision holds, by status."""
        return dict(sorted(Counter(self.decided.values()).items()))


def consensus_standing(
    db: Database, consensus: Consensus, confidence: float, scope: ItemScope = EVERY_ITEM
) -> ConsensusStanding:
    """The :class:`ConsensusStanding` of ``consensus`` (estimated already) at ``confidence``."""
    with db.session() as session:
        plan = _plan(session, consensus, confidence, scope)
        decided = scoped_statuses(
            session,
            statuses=[status.value for status in DECISION_STATUSES],
            kinds=scope.kinds,
            sources=scope.sources,
        )
    shown = {item.item_id for item in consensus.items}
    unjudged = sum(
        1 for item in consensus.items if item.item_id not in decided and item.judgments == 0
    )
    return ConsensusStanding(
        plan, {i: status for i, status in decided.items() if i in shown}, unjudged
    )


def plan_confident(
    db: Database,
    confidence: float,
    scope: ItemScope = EVERY_ITEM,
) -> ConsensusPlan:
    """What :func:`approve_confident` would do now (the count shown before asking)."""
    with db.session() as session:
        return _plan(session, estimate_consensus(session), confidence, scope)


def approve_confident(
    db: Database,
    lead_name: str,
    confidence: float,
    scope: ItemScope = EVERY_ITEM,
) -> ConsensusApproval:
    """Approve, in one transaction, every undecided judged item the consensus keeps
    with its key right at ``confidence``; the consensus is estimated inside the
    transaction, so what others did since the count is weighed too."""
    with db.transaction() as session:
        lead = require_lead(session, lead_name.strip())
        plan = _plan(session, estimate_consensus(session), confidence, scope)
        if plan.approvable:
            store_bulk_decisions(
                session,
                lead,
                ItemStatus.APPROVED,
                [
                    BulkDecision(
                        item.item_id,
                        item.revision,
                        item.key,
                        plan.statuses[item.item_id],
                        figures=consensus_figures(item, confidence),
                    )
                    for item in plan.approvable
                ],
                comment=f"approved by the consensus at confidence {confidence:g}",
            )
        return ConsensusApproval(len(plan.approvable), plan.referred)


def referred_cases(
    db: Database,
    consensus: Consensus,
    confidence: float,
    *,
    exclude: Sequence[str] = (),
    limit: int = 500,
) -> list[ConflictCase]:
    """The undecided items ``consensus`` refers to a lead (a wrong key, or a drop), each
    as a case for F3; ``exclude``: ids already listed there."""
    with db.session() as session:
        plan = _plan(session, consensus, confidence, EVERY_ITEM)
    skipped = set(exclude)
    found = []
    for item in plan.referred:
        if item.item_id in skipped:
            continue
        case = load_case(db, item.item_id)
        if case is not None:
            found.append(case)
        if len(found) >= limit:
            break
    return found
