"""Routing: how many judgments an item gets, and which open item is worth one more.

``routing`` ``fixed`` (the default) is the rule of ``db.item_status``: every item gets
``overlap`` (k) judgments, unanimous ones are agreed, the rest conflicts.  Under
``adaptive`` an item needs judgments only while the consensus (``db.consensus``) is
unsure of it:

- kept with the key right at ``target_confidence``: **agreed** (approve-agreed's), which
  can happen after a single judgment from a reliable annotator;
- the key wrong, or the item to be dropped, at that confidence: **conflict**, to the
  lead with the suggested key (never decided silently);
- otherwise **in review**, one more judgment at a time, until ``max_overlap`` judgments:
  then a conflict, for the lead.

The consensus fit (crowd-kit over every rating) takes seconds, too slow to run at each
judgment, so it is cached per database and fitted again only once the number of active
judgments has moved by a tenth (at least ``_REFIT_AT_LEAST``).  Between fits an item's
figures are the fitted model's posterior for that item's own ratings: the raters'
fitted reliabilities (one coin each for the answer, as ``db.consensus``), a keep/drop
confusion for each rater read off the fit, and the fitted priors.  No parameter is
learned here; ``bench/annotation_efficiency.py`` measures what this costs.
"""

from __future__ import annotations

import math
import threading
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sqlalchemy import func, select
from sqlmodel import Session, col

from db.models import Judgment
from db.settings import get_fraction_setting, get_int_setting, get_setting
from db.vocabulary import FlagName, ItemKind, ItemStatus

if TYPE_CHECKING:
    from db.consensus import Consensus
    from db.consensus_inputs import ConsensusInputs

__all__ = [
    "ADAPTIVE",
    "FIXED",
    "Routing",
    "adaptive_statuses",
    "fits_made",
    "forget_fits",
    "item_beliefs",
    "routing_settings",
    "WorthOrder",
    "settles_alone",
    "worth_order",
    "worth_ranking",
]

FIXED, ADAPTIVE = "fixed", "adaptive"
_REFIT_SHARE = 0.1  # refit once active judgments moved by this share ...
_REFIT_AT_LEAST = 5  # ... or by this many, whichever is more
_DEFAULT_RELIABILITY = 0.7  # a rater the fit has not seen, before any fit knows anyone
_DEFAULT_LOW = 0.5  # ... and the low end of what that could be
_DEFAULT_KEEP_CONFUSION = (0.9, 0.3)  # p(says keep | keep), p(says keep | drop)
_SMOOTHING = 1.0  # pseudo-counts of each confusion estimate


@dataclass(frozen=True)
class Routing:
    """The routing settings in force."""

    adaptive: bool
    overlap: int  # fixed: the judgments every item gets
    max_overlap: int  # adaptive: the most an uncertain item gets before the lead
    target_confidence: float

    @property
    def most_judgments(self) -> int:
        """The judgments an item can get at most."""
        return self.max_overlap if self.adaptive else self.overlap


def routing_settings(session: Session) -> Routing:
    return Routing(
        adaptive=get_setting(session, "routing") == ADAPTIVE,
        overlap=get_int_setting(session, "overlap"),
        max_overlap=get_int_setting(session, "max_overlap"),
        target_confidence=get_fraction_setting(session, "target_confidence"),
    )


@dataclass(frozen=True)
class _Fit:
    """What the routing keeps of one consensus fit."""

    judgments: int  # active judgments when it was fitted
    reliability: Mapping[tuple[str, str], float]  # (rater kind, name) -> answer accuracy
    low: Mapping[tuple[str, str], float]  # ... the low end of its 95% interval
    keep_confusion: Mapping[str, tuple[float, float]]  # person -> p(keep | keep), p(keep | drop)
    prior_key_right: float
    prior_keep: float
    default_reliability: float
    default_low: float
    default_keep_confusion: tuple[float, float]
    generation: int


@dataclass(frozen=True)
class ItemBelief:
    """What the routing believes of one item's current revision now."""

    item_id: str
    judgments: int  # persons' judgments it rests on
    p_key_right: float
    p_keep: float
    consensus_answer: str
    key: str
    flagged: bool = False  # the models answer otherwise than the key

    def status(self, routing: Routing) -> ItemStatus:
        """The adaptive rule (see the module's docstring)."""
        if self.judgments == 0:
            return ItemStatus.PENDING
        low = 1 - routing.target_confidence
        if self.p_key_right <= low or self.p_keep <= low:
            return ItemStatus.CONFLICT
        if (
            self.p_key_right >= routing.target_confidence
            and self.p_keep >= routing.target_confidence
        ):
            return ItemStatus.AGREED
        if self.judgments >= routing.max_overlap:
            return ItemStatus.CONFLICT
        return ItemStatus.IN_REVIEW

    @property
    def uncertainty(self) -> float:
        """The chance that the likelier decision (approve, or the lead) is the wrong one."""
        p_approve = self.p_key_right * self.p_keep
        return min(p_approve, 1 - p_approve)


@dataclass
class _Cache:
    fits: dict[str, _Fit] = field(default_factory=dict)
    generation: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


_cache = _Cache()


def fits_made() -> int:
    """How many consensus fits the routing has made in this process (for the bench)."""
    return _cache.generation


def forget_fits() -> None:
    """Drop every cached fit (the next belief fits again)."""
    with _cache.lock:
        _cache.fits.clear()


def _database_key(session: Session) -> str:
    return session.get_bind().engine.url.render_as_string(hide_password=True)


def _active_judgments(session: Session) -> int:
    query = select(func.count()).select_from(Judgment).where(col(Judgment.retracted).is_(False))
    return int(session.scalar(query) or 0)


def _stale(fit: _Fit | None, judgments: int) -> bool:
    if fit is None:
        return True
    moved = abs(judgments - fit.judgments)
    return moved >= max(_REFIT_AT_LEAST, math.ceil(fit.judgments * _REFIT_SHARE))


def _current_fit(session: Session, inputs: ConsensusInputs) -> _Fit:
    judgments = _active_judgments(session)
    key = _database_key(session)
    with _cache.lock:
        fit = _cache.fits.get(key)
    if not _stale(fit, judgments):
        assert fit is not None
        return fit
    from db.consensus import consensus_from_inputs

    with _cache.lock:
        _cache.generation += 1
        generation = _cache.generation
    fit = _fit_of(consensus_from_inputs(inputs), inputs, judgments, generation)
    with _cache.lock:
        _cache.fits[key] = fit
    # Statuses read under the old fit would linger (an item agreed then, uncertain now,
    # would wait for a judgment no one is served): every undecided one is read again.
    from db.item_status import refresh_judged_items

    refresh_judged_items(session)
    return fit


def _fit_of(consensus: Consensus, inputs: ConsensusInputs, judgments: int, generation: int) -> _Fit:
    """The parameters the routing reuses until the next fit."""
    # People the qualification gate leaves out are measured too (db.consensus), but their
    # judgments count for nothing: the routing knows only those whose judgments count.
    counted = [rater for rater in consensus.raters if rater.qualified]
    reliability = {(rater.kind, rater.name): rater.reliability for rater in counted}
    low = {(rater.kind, rater.name): rater.low for rater in counted}
    persons = [rater for rater in counted if rater.kind == "person"]
    p_keep = {item.item_id: item.p_keep for item in consensus.items}
    counts: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0, 0.0])
    for rating in inputs.ratings:
        keeps = rating.keeps
        if keeps is None or rating.item_id not in p_keep:
            continue
        weight = p_keep[rating.item_id]
        tally = counts[rating.rater]  # kept when kept, total kept, kept when dropped, total dropped
        tally[0] += weight * keeps
        tally[1] += weight
        tally[2] += (1 - weight) * keeps
        tally[3] += 1 - weight
    confusion = {name: _confusion(tally) for name, tally in counts.items()}
    pooled = [sum(tally[i] for tally in counts.values()) for i in range(4)]
    default_confusion = _confusion(pooled) if counts else _DEFAULT_KEEP_CONFUSION
    prior_keep = consensus.prior_keep
    verdicts = [r.keeps for r in inputs.ratings if r.keeps is not None]
    verdicts += [truth.keeps for truth in inputs.gold.values()]
    if all(verdicts):
        # No one has dropped an item yet: the fit had nothing to learn keep or drop from
        # (it says 0.5).  Keeping is then as likely as the rule of succession over every
        # verdict says, and no rater's keep tells more than anyone's.
        prior_keep = (len(verdicts) + 1) / (len(verdicts) + 2)
        confusion, default_confusion = {}, _DEFAULT_KEEP_CONFUSION
    return _Fit(
        judgments=judgments,
        reliability=reliability,
        low=low,
        keep_confusion=confusion,
        prior_key_right=consensus.prior_key_right,
        prior_keep=prior_keep,
        default_reliability=(
            sum(rater.reliability for rater in persons) / len(persons)
            if persons
            else _DEFAULT_RELIABILITY
        ),
        # Someone the fit has not seen can close nothing alone (see _answer_posterior).
        default_low=min((rater.low for rater in persons), default=_DEFAULT_LOW),
        default_keep_confusion=default_confusion,
        generation=generation,
    )


def _confusion(tally: Sequence[float]) -> tuple[float, float]:
    kept_when_kept = (tally[0] + _SMOOTHING) / (tally[1] + 2 * _SMOOTHING)
    kept_when_dropped = (tally[2] + _SMOOTHING) / (tally[3] + 2 * _SMOOTHING)
    return kept_when_kept, kept_when_dropped


def _plausible_errors(kind: ItemKind, key: str) -> int:
    """How many wrong answers a mistaken annotator plausibly gives: the other option of a
    true/false item, one of three others (the usual four options), an order with one
    pair of neighbours swapped.  Fewer than every possible answer, on purpose: a mistake
    that lands on a wrong key is likelier than a uniform spread would say, and an item
    is closed on one agreeing judgment only when that is safe."""
    if kind is ItemKind.TRUEFALSE:
        return 1
    if kind is ItemKind.ORDERING:
        return max(1, len(key) - 1)
    return 3


def _answer_posterior(
    fit: _Fit, key: str, kind: ItemKind, answers: Sequence[tuple[tuple[str, str], str]]
) -> tuple[float, str]:
    """p(the key is right) and the likeliest answer, from each rater's answer."""
    seen = sorted({answer for _rater, answer in answers if answer != key})
    wrong_choices = max(_plausible_errors(kind, key), len(seen))
    chance = 1 / (wrong_choices + 1)
    # One person's judgment alone rests on the low end of their reliability: a point
    # estimate from few answers would close items on a single mistaken judgment that
    # lands on a wrong key.  A rater below chance (a spammer) says nothing, rather than
    # the opposite of what they answer: their answer would otherwise count for the key
    # whenever it differs.
    alone = sum(1 for (rater_kind, _name), _answer in answers if rater_kind == "person") == 1
    skills = [
        (min(max(_skill(fit, rater, low=alone), chance), 1 - 1e-6), answer)
        for rater, answer in answers
    ]

    def likelihood(truth: str | None) -> float:
        value = 1.0
        for skill, answer in skills:
            value *= skill if answer == truth else (1 - skill) / wrong_choices
        return value

    # The prior of a wrong key is shared by the answers given and one "none of those".
    share = (1 - fit.prior_key_right) / (len(seen) + 1)
    weights = {key: fit.prior_key_right * likelihood(key)}
    weights |= {answer: share * likelihood(answer) for answer in seen}
    unseen = share * likelihood(None)
    total = sum(weights.values()) + unseen
    best = max(weights, key=lambda answer: (weights[answer], answer == key))
    return (weights[key] / total if total else fit.prior_key_right), best


def _skill(fit: _Fit, rater: tuple[str, str], *, low: bool) -> float:
    """A rater's fitted answer accuracy, or (``low``) the low end of its interval."""
    if low:
        return fit.low.get(rater, fit.default_low)
    return fit.reliability.get(rater, fit.default_reliability)


def _keep_posterior(fit: _Fit, verdicts: Sequence[tuple[str, bool]]) -> float:
    keep, drop = fit.prior_keep, 1 - fit.prior_keep
    for rater, kept in verdicts:
        when_kept, when_dropped = fit.keep_confusion.get(rater, fit.default_keep_confusion)
        keep *= when_kept if kept else 1 - when_kept
        drop *= when_dropped if kept else 1 - when_dropped
    return keep / (keep + drop) if keep + drop else fit.prior_keep


def item_beliefs(session: Session, item_ids: Collection[str]) -> dict[str, ItemBelief]:
    """The routing's figures for each item's current revision, from its own ratings and
    the cached fit.  When judgments moved enough since, the model is fitted again first
    and every undecided item's status refreshed with it: call it in a write transaction."""
    return _evidence(session, item_ids).beliefs()


@dataclass(frozen=True)
class _Evidence:
    """The fit in force and each wanted item's ratings: what a belief is computed from,
    kept so that a judgment not given yet can be weighed too."""

    fit: _Fit
    inputs: ConsensusInputs
    answers: Mapping[str, Sequence[tuple[tuple[str, str], str]]]  # item -> (rater, answer)
    verdicts: Mapping[str, Sequence[tuple[str, bool]]]  # item -> (person, keeps)

    def beliefs(self) -> dict[str, ItemBelief]:
        return {
            item_id: self.belief(item_id, self.answers[item_id], self.verdicts[item_id])
            for item_id in self.answers
        }

    def belief(
        self,
        item_id: str,
        answers: Sequence[tuple[tuple[str, str], str]],
        verdicts: Sequence[tuple[str, bool]],
    ) -> ItemBelief:
        item = self.inputs.items[item_id]
        p_key, best = _answer_posterior(self.fit, item.key, item.kind, answers)
        return ItemBelief(
            item_id=item_id,
            judgments=len(verdicts),
            p_key_right=p_key,
            p_keep=_keep_posterior(self.fit, verdicts),
            consensus_answer=best,
            key=item.key,
            flagged=any(rater[0] == "model" and answer != item.key for rater, answer in answers),
        )

    def judged_by(self, item_id: str) -> set[str]:
        """The people whose judgments of the item count."""
        return {name for (kind, name), _answer in self.answers[item_id] if kind == "person"}

    def last_judgment(self, item_id: str, routing: Routing) -> bool:
        """Whether one more judgment is the last the item gets (``max_overlap``): it
        ends the item's need for judgments whatever it says."""
        return len(self.verdicts[item_id]) + 1 >= routing.max_overlap


def _evidence(session: Session, item_ids: Collection[str]) -> _Evidence:
    from db.consensus_inputs import consensus_inputs

    inputs = consensus_inputs(session)
    fit = _current_fit(session, inputs)
    wanted = {item_id for item_id in item_ids if item_id in inputs.items}
    answers: dict[str, list[tuple[tuple[str, str], str]]] = {item_id: [] for item_id in wanted}
    verdicts: dict[str, list[tuple[str, bool]]] = {item_id: [] for item_id in wanted}
    for rating in inputs.ratings:
        if rating.item_id not in wanted:
            continue
        answers[rating.item_id].append(((rating.rater_kind, rating.rater), rating.answer))
        if rating.keeps is not None:
            verdicts[rating.item_id].append((rating.rater, rating.keeps))
    return _Evidence(fit, inputs, answers, verdicts)


def adaptive_statuses(
    session: Session, item_ids: Iterable[str], routing: Routing
) -> dict[str, ItemStatus]:
    """Each item's status under adaptive routing, before any decision (items without a
    judgment: pending)."""
    wanted = set(item_ids)
    beliefs = item_beliefs(session, wanted)
    return {
        item_id: beliefs[item_id].status(routing) if item_id in beliefs else ItemStatus.PENDING
        for item_id in wanted
    }


DOUBTING_FLAGS = frozenset(
    {FlagName.KEY_MISMATCH, FlagName.MODEL_DISAGREES, FlagName.SECOND_OPINION}
)
"""Flags that doubt the key or the item: a flagged item is worth a judgment first."""


def worth_ranking(session: Session, item_ids: Collection[str]) -> list[str]:
    """The items of ``item_ids`` that something is known of (ratings, or a flag that
    doubts the key), the ones another judgment is worth most for first; the others are
    left to the queue's usual walk."""
    worths = _worths(session, _evidence(session, item_ids), item_ids)
    return sorted(worths, key=lambda item_id: (-worths[item_id], item_id))


@dataclass(frozen=True)
class WorthOrder:
    """The order one annotator's queue offers the open items in, under adaptive routing."""

    first: list[str]  # offered before anything else, in this order
    after_fresh: list[str]  # offered once no fresh (pending) item is left
    fresh: bool = True  # False: fresh items wait for a colleague who settles them alone
    rest: bool = True  # False: nothing but ``first``, fresh items and ``after_fresh``
    held: int = 0  # judged items left for a more reliable colleague at work


def worth_order(
    session: Session,
    item_ids: Collection[str],
    annotator: str,
    routing: Routing,
    colleagues: Collection[str] = (),
) -> WorthOrder:
    """Judgments routed by reliability.  Someone whose single judgment can settle a fresh
    item (:func:`settles_alone`) is served the items a model or flag doubts, then fresh
    items, and the uncertain judged items only when no fresh one is left.  Everyone else
    gets the uncertain items (the second opinions), as :func:`worth_ranking` ranks them,
    and fresh items only while none of ``colleagues`` (the others at work now) settles
    them alone: a weaker judgment spent on a fresh item settles nothing and asks for
    another, where an uncertain item is what it is worth most for.

    A judged item goes to the most reliable colleague at work who has not judged it
    yet: anyone else is served it only as its last judgment (``max_overlap``), which
    ends its need for judgments whatever it says; it waits for them, whose one judgment
    may do what two weaker ones would.  (Until someone at work settles items alone, those
    who do not are served as anyone.)"""
    evidence = _evidence(session, item_ids)
    worths = _worths(session, evidence, item_ids)
    ranking = sorted(worths, key=lambda item_id: (-worths[item_id], item_id))
    # People the qualification gate leaves out are served no items: nothing waits for them.
    left_out = {rating.rater for rating in evidence.inputs.uncounted}
    colleagues = [name for name in colleagues if name not in left_out]
    betters = _more_reliable(evidence.fit, annotator, colleagues)

    judged = {i: evidence.judged_by(i) if i in evidence.answers else set() for i in ranking}
    # an item with judgments is theirs only when no more reliable colleague at work is
    # left to judge it, or when theirs is its last judgment
    mine = {
        item_id
        for item_id, by in judged.items()
        if not by or betters <= by or evidence.last_judgment(item_id, routing)
    }
    held = sum(1 for item_id, by in judged.items() if item_id not in mine and annotator not in by)

    if not settles_alone(session, annotator, routing):
        # Someone the fit has not measured yet still gets fresh items: how else would it.
        if not _measured(session, annotator) or not any(
            settles_alone(session, name, routing) for name in colleagues
        ):
            return WorthOrder(ranking, [])
        mine_first = [item_id for item_id in ranking if item_id in mine]
        return WorthOrder(mine_first, [], fresh=False, rest=False, held=held)
    return WorthOrder(
        [item_id for item_id in ranking if worths[item_id] >= _DOUBTED and item_id in mine],
        [item_id for item_id in ranking if worths[item_id] < _DOUBTED and item_id in mine],
        rest=False,
        held=held,
    )


def _more_reliable(fit: _Fit, annotator: str, colleagues: Collection[str]) -> set[str]:
    """The colleagues the fit finds more reliable than ``annotator``."""
    mine = _skill(fit, ("person", annotator), low=False)
    return {name for name in colleagues if _skill(fit, ("person", name), low=False) > mine}


def _fit_in_force(session: Session) -> _Fit | None:
    with _cache.lock:
        return _cache.fits.get(_database_key(session))


def _measured(session: Session, annotator: str) -> bool:
    """Whether the fit in force has a reliability for this person."""
    fit = _fit_in_force(session)
    return fit is not None and ("person", annotator) in fit.reliability


def settles_alone(session: Session, annotator: str, routing: Routing) -> bool:
    """Whether one judgment of ``annotator``'s agreeing with the key (and keeping the
    item) would settle a fresh four-option item at ``target_confidence``, by the fit in
    force: the low end of their reliability, the learned share of wrong keys.  False
    before any fit."""
    fit = _fit_in_force(session)
    if fit is None:
        return False
    p_key, _best = _answer_posterior(fit, "A", ItemKind.SINGLE, [(("person", annotator), "A")])
    p_keep = _keep_posterior(fit, [(annotator, True)])
    return min(p_key, p_keep) >= routing.target_confidence


_DOUBTED = 1.0  # the worth a model or a flag doubting the key adds


def _worths(session: Session, evidence: _Evidence, item_ids: Collection[str]) -> dict[str, float]:
    """How much one more judgment is worth, for the items something is known of."""
    from db.stored_flags import current_flags

    beliefs = evidence.beliefs()
    flags = current_flags(session, list(item_ids))
    doubted = {
        item_id
        for item_id, found in flags.items()
        if any(flag.name in DOUBTING_FLAGS for flag in found)
    }

    def worth(item_id: str) -> float:
        """How much one more judgment is worth: the uncertainty, and one more when a
        model or a flag doubts the key."""
        belief = beliefs.get(item_id)
        if belief is None:
            return _DOUBTED  # doubted, and nothing else known
        return belief.uncertainty + (_DOUBTED if belief.flagged or item_id in doubted else 0.0)

    return {item_id: worth(item_id) for item_id in set(beliefs) | doubted}
