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
figures are the fitted model's posterior for that item's own ratings
(``db.item_posterior``): the raters' fitted reliabilities (one coin each for the answer,
as ``db.consensus``), a keep/drop confusion for each rater read off the fit, and the
fitted priors.  No parameter is learned here; ``bench/annotation_efficiency.py``
measures what this costs.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sqlalchemy import func, select
from sqlmodel import Session, col

from db.item_posterior import (
    Answers,
    FittedRaters,
    Verdicts,
    answer_posterior,
    keep_posterior,
    people_vouch,
    rater_skill,
)
from db.models import Judgment
from db.settings import get_fraction_setting, get_int_setting, get_setting
from db.vocabulary import FlagName, ItemKind, ItemStatus

if TYPE_CHECKING:
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

    def short_of_overlap(self, judgments: int) -> bool:
        """Whether an item with ``judgments`` still waits for more by their number alone:
        under fixed routing, fewer than ``overlap`` (it is in review); under adaptive
        routing never, as the consensus says when one judgment is enough."""
        return not self.adaptive and judgments < self.overlap


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
    raters: FittedRaters
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
    vouched: bool = True  # False: its people do not back the key (never agreed; people_vouch)

    def status(self, routing: Routing) -> ItemStatus:
        """The adaptive rule (see the module's docstring)."""
        if self.judgments == 0:
            return ItemStatus.PENDING
        low = 1 - routing.target_confidence
        if self.p_key_right <= low or self.p_keep <= low:
            return ItemStatus.CONFLICT
        if (
            self.vouched
            and self.p_key_right >= routing.target_confidence
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
    fit = _Fit(judgments, consensus_from_inputs(inputs).fitted_raters, generation)
    with _cache.lock:
        _cache.fits[key] = fit
    # Statuses read under the old fit would linger (an item agreed then, uncertain now,
    # would wait for a judgment no one is served): every undecided one is read again.
    from db.item_status import refresh_judged_items

    refresh_judged_items(session)
    return fit


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
    answers: Mapping[str, Answers]
    verdicts: Mapping[str, Verdicts]

    def beliefs(self) -> dict[str, ItemBelief]:
        return {
            item_id: self.belief(item_id, self.answers[item_id], self.verdicts[item_id])
            for item_id in self.answers
        }

    def belief(
        self,
        item_id: str,
        answers: Answers,
        verdicts: Verdicts,
    ) -> ItemBelief:
        item = self.inputs.items[item_id]
        p_key, best = answer_posterior(self.fit.raters, item.key, item.kind, answers)
        return ItemBelief(
            item_id=item_id,
            judgments=len(verdicts),
            p_key_right=p_key,
            p_keep=keep_posterior(self.fit.raters, verdicts),
            consensus_answer=best,
            key=item.key,
            flagged=any(rater[0] == "model" and answer != item.key for rater, answer in answers),
            vouched=people_vouch(self.fit.raters, item.key, item.kind, answers),
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
    mine = rater_skill(fit.raters, ("person", annotator), low=False)
    return {
        name for name in colleagues if rater_skill(fit.raters, ("person", name), low=False) > mine
    }


def _fit_in_force(session: Session) -> _Fit | None:
    with _cache.lock:
        return _cache.fits.get(_database_key(session))


def _measured(session: Session, annotator: str) -> bool:
    """Whether the fit in force has a reliability for this person."""
    fit = _fit_in_force(session)
    return fit is not None and ("person", annotator) in fit.raters.reliability


def settles_alone(session: Session, annotator: str, routing: Routing) -> bool:
    """Whether one judgment of ``annotator``'s agreeing with the key (and keeping the
    item) would settle a fresh four-option item at ``target_confidence``, by the fit in
    force: the low end of their reliability, the learned share of wrong keys.  False
    before any fit."""
    fit = _fit_in_force(session)
    if fit is None:
        return False
    answers = [(("person", annotator), "A")]
    p_key, _best = answer_posterior(fit.raters, "A", ItemKind.SINGLE, answers)
    p_keep = keep_posterior(fit.raters, [(annotator, True)])
    vouches = people_vouch(fit.raters, "A", ItemKind.SINGLE, answers)
    return vouches and min(p_key, p_keep) >= routing.target_confidence


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
