"""The consensus model: what everything known about an item says of its key and of
keeping it, and how reliable each annotator and model is.

Two labelling tasks are inferred with crowd-kit (no hand-written EM):

- **The answer.**  Each item's label space is its key plus every other answer given to
  it (blind answers, models' answers, a gold answer): whole orders for ordering
  items, option sets for multiple-choice ones.  Labels are named relative to the item
  (``KEY``, then ``ALT1``, ``ALT2`` … by how often each was given), so the label space
  stays small and the prior of ``KEY`` is the share of keys that are right.  One-coin
  Dawid–Skene (``OneCoinDawidSkene``) gives each rater one accuracy, whatever the item:
  it recovered planted truths best of crowd-kit's models on simulated review data, and
  it needs no label semantics shared between items.
- **Keep or drop.**  The verdicts ``keep`` and ``wrong-key`` keep the item (a wrong key
  is corrected), the others drop it.  Dawid–Skene with a 2×2 confusion matrix per rater
  (``DawidSkene``): an annotator who keeps everything says nothing about flawed items,
  which a one-coin model would miss.  Models give no verdicts.

Gold items fix the truth where a lead knows it: the known answer and verdict enter as
a rater (``gold``) whose rows count three times, so that the initial majority vote
starts from them and their estimated accuracy converges to one; the keep/drop model
is also pinned to them with crowd-kit's ``true_labels`` (the one-coin model has no
such argument).

A rater's reliability is their expected accuracy on the answer task: the mean
probability, under the fitted model, that their answer is the true one (gold items:
exactly whether it is), with a 95% Jeffreys interval (Beta(s + ½, n − s + ½)) over
their ``n`` answers.  People the qualification gate leaves out are measured the same
way against the consensus they had no part in (``qualified`` False): a lead sees how
far off they are, and the gate's verdict is not the only word on them.

An item one person's judgment is all people said of is read apart, on the low end of
that person's interval (``db.item_posterior``, as routing reads it): the fit alone
trusts a newcomer's first answer completely.

pandas, crowd-kit and scipy are imported inside the functions that use them: the CLI
starts without them.
"""

from __future__ import annotations

import threading
import warnings
from collections import Counter, OrderedDict, defaultdict
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from sqlmodel import Session

from db.consensus_inputs import (
    ConsensusInputs,
    InputItem,
    Rating,
    consensus_inputs,
    scoped_statuses,
)
from db.engine import Database
from db.item_posterior import (
    FittedRaters,
    answer_posterior,
    fitted_raters,
    keep_posterior,
    people_vouch,
    rests_on_one_person,
)
from db.item_scope import EVERY_ITEM, ItemScope
from db.items import id_order
from db.json_types import FieldsAsJson, JsonObject, JsonValue
from db.serial_imports import one_thread_importing
from db.vocabulary import ItemKind
from db.words import counted

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "DEFAULT_CONFIDENCE",
    "Consensus",
    "ConsensusOutcome",
    "ItemConsensus",
    "RaterReliability",
    "consensus_from_inputs",
    "consensus_of",
    "decision_confidence",
    "estimate_consensus",
]

KEY_LABEL = "KEY"
KEEP, DROP = "keep", "drop"
GOLD_RATER = "gold"
GOLD_WEIGHT = 3  # rows per gold truth: outvotes two dissenting judgments at the start
BEYOND_CHANCE = 0.2  # below it a rater's answers are guessing (Landis & Koch's "slight")
INTERVAL = 0.95
DEFAULT_CONFIDENCE = 0.95
"""The confidence F3 shows decisions at, and `vetbench consensus` by default."""


class ConsensusOutcome(StrEnum):
    """What the consensus decides about an item at a given confidence."""

    APPROVE = "approve"  # kept, the key right
    WRONG_KEY = "wrong-key"  # the key wrong (to the lead with the suggested key)
    DROP = "drop"  # should not be kept (to the lead)
    UNCERTAIN = "uncertain"  # not confident either way


@dataclass(frozen=True)
class ItemConsensus(FieldsAsJson):
    """The consensus on one item's current revision."""

    item_id: str
    revision: int
    judgments: int  # the persons' judgments it rests on (models' answers: ``models``)
    consensus_answer: str  # canonical: the most likely right answer
    p_key_right: float
    p_keep: float
    suggested_key: str | None  # the consensus answer when it is not the key
    key: str = ""
    kind: ItemKind = ItemKind.SINGLE
    models: int = 0  # models' answers it rests on
    gold: bool = False  # a lead knows the truth: the figures are that truth
    # False: the people do not back the key (db.item_posterior.people_vouch): one person's
    # judgment is all it rests on and it does not (an answer other than the key, or
    # someone not known to do better than chance), or several are split over it
    vouched: bool = True

    def outcome(self, confidence: float) -> ConsensusOutcome:
        """What the consensus decides when a decision needs ``confidence`` (e.g. 0.95).
        A wrong key is told before a drop: the lead sees the suggested key either way."""
        if self.p_key_right <= 1 - confidence:
            return ConsensusOutcome.WRONG_KEY
        if self.p_keep <= 1 - confidence:
            return ConsensusOutcome.DROP
        if self.vouched and self.p_key_right >= confidence and self.p_keep >= confidence:
            return ConsensusOutcome.APPROVE
        return ConsensusOutcome.UNCERTAIN

    def held_back(self, confidence: float) -> str | None:
        """Why the people leave the item to the lead where the figures alone would not:
        a lone judgment that does not back the key, or several people split over it
        where the figures alone would approve it (None otherwise)."""
        if self.vouched:
            return None
        if self.judgments == 1:
            return "not backing the key"
        if min(self.p_key_right, self.p_keep) >= confidence:
            return "split over the key"
        return None

    def describe(self, confidence: float) -> str:
        """``p(key right) 0.98, p(keep) 0.97 from 3 judgments + 2 models: approve``."""
        rests = counted(self.judgments, "judgment")
        if self.models:
            rests += f" + {counted(self.models, 'model')}"
        if held_back := self.held_back(confidence):
            rests += f", {held_back}"
        return (
            f"p(key right) {self.p_key_right:.2f}, p(keep) {self.p_keep:.2f} from {rests}"
            f"{' (gold)' if self.gold else ''}: {self.outcome(confidence).value}"
        )


@dataclass(frozen=True)
class RaterReliability(FieldsAsJson):
    """How often a rater's answers are right, by the consensus and the gold items."""

    name: str
    kind: str  # "person" or "model"
    reliability: float  # expected share of right answers
    low: float  # 95% interval
    high: float
    n: int  # answers it rests on
    chance: float = 0.0  # the share guessing would get right on the same items
    counted: bool = True  # False: left out of the answer consensus (guessing, or the gate)
    qualified: bool = True  # False: the qualification gate leaves their judgments out

    @property
    def note(self) -> str:
        """What a table says of a rater left out of the answer consensus."""
        if not self.qualified:
            return "not qualified"
        return "" if self.counted else "guessing: not counted"

    @property
    def beyond_chance(self) -> float:
        """Reliability corrected for guessing, as kappa is: 0 guessing, 1 always right."""
        return (self.reliability - self.chance) / (1 - self.chance) if self.chance < 1 else 0.0


@dataclass(frozen=True)
class Consensus:
    """The consensus on items and the reliability of every rater."""

    items: tuple[ItemConsensus, ...]  # by item id, src:2 before src:10 (db.items.id_order)
    raters: tuple[RaterReliability, ...]  # most reliable first
    prior_key_right: float  # share of right keys before any rating (rule of succession)
    prior_keep: float
    fitted_raters: FittedRaters  # what the fit learned of the raters (db.item_posterior)
    _by_id: dict[str, ItemConsensus] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_id", {item.item_id: item for item in self.items})

    def item(self, item_id: str) -> ItemConsensus | None:
        return self._by_id.get(item_id)

    def rater(self, name: str, kind: str = "person") -> RaterReliability | None:
        return next((r for r in self.raters if r.name == name and r.kind == kind), None)

    def outcome_counts(self, confidence: float) -> dict[str, int]:
        """How many items each outcome takes at ``confidence``, by outcome name."""
        counts = Counter(item.outcome(confidence).value for item in self.items)
        return dict(sorted(counts.items()))

    def to_json(self, *, confidence: float, item_answers: bool = True) -> JsonObject:
        """As ``vetbench consensus --json`` prints it, with each item's outcome at
        ``confidence`` and their counts, as the text shows them.  Without ``item_answers``
        the items become their count, as the agreement's likely wrong keys do: each item's
        consensus shows what its annotators answered, which annotators must not see
        before their own."""
        items: JsonValue = (
            [{**item.to_json(), "outcome": item.outcome(confidence).value} for item in self.items]
            if item_answers
            else len(self.items)
        )
        outcomes: JsonObject = {**self.outcome_counts(confidence)}
        return {
            "prior_key_right": self.prior_key_right,
            "prior_keep": self.prior_keep,
            "confidence": confidence,
            "outcomes": outcomes,
            "items": items,
            "raters": [rater.to_json() for rater in self.raters],
        }


def _worker(rating: Rating) -> str:
    return f"{rating.rater_kind}:{rating.rater}"


@dataclass(frozen=True)
class _LabelSpace:
    """One item's answers named relative to it: ``KEY``, ``ALT1``, ``ALT2`` …"""

    key: str
    alternatives: tuple[str, ...]  # most often given first

    def holds(self, answer: str) -> bool:
        return answer == self.key or answer in self.alternatives

    def label(self, answer: str) -> str:
        if answer == self.key:
            return KEY_LABEL
        return f"ALT{self.alternatives.index(answer) + 1}"

    def answer(self, label: str) -> str:
        return self.key if label == KEY_LABEL else self.alternatives[int(label[3:]) - 1]


def _label_spaces(inputs: ConsensusInputs) -> dict[str, _LabelSpace]:
    given: dict[str, Counter[str]] = defaultdict(Counter)
    for rating in inputs.ratings:
        given[rating.item_id][rating.answer] += 1
    for truth in inputs.gold.values():
        given[truth.item_id][truth.answer] += GOLD_WEIGHT
    spaces = {}
    for item_id, item in inputs.items.items():
        others = sorted(
            ((count, answer) for answer, count in given[item_id].items() if answer != item.key),
            key=lambda pair: (-pair[0], pair[1]),
        )
        spaces[item_id] = _LabelSpace(item.key, tuple(answer for _count, answer in others))
    return spaces


@dataclass(frozen=True)
class _Fitted:
    """One labelling task's fit."""

    probas: dict[str, dict[str, float]]  # task -> label -> probability
    prior: float  # of the label asked for
    learned: bool  # False: a single label in sight, nothing to learn


def _fit(
    rows: list[tuple[str, str, str]], first: str, model: Any, true_labels: Mapping[str, str]
) -> _Fitted:
    """Probabilities of each task's labels, and the prior of label ``first``, from
    crowd-kit's ``model``; with a single label in sight there is nothing to learn, and
    each task gets the rule of succession over its rows instead."""
    import pandas as pd

    labels = {label for _task, _worker, label in rows}
    if len(labels) < 2:
        counts = Counter(task for task, _worker, _label in rows)
        only = labels.pop() if labels else None
        p = {task: (n + 1) / (n + 2) for task, n in counts.items()}
        chance = {task: value if only == first else 1 - value for task, value in p.items()}
        return _Fitted({task: {first: value} for task, value in chance.items()}, 0.5, False)
    data = pd.DataFrame(rows, columns=["task", "worker", "label"])
    # crowd-kit 1.4 still passes pandas arguments pandas 3 deprecates: not ours to fix.
    # Process-wide (catch_warnings is not thread-safe, and the app fits in threads).
    warnings.filterwarnings("ignore", module="crowdkit")
    if true_labels:
        probas = model.fit_predict_proba(data, pd.Series(dict(true_labels)))
    else:
        probas = model.fit_predict_proba(data)
    return _Fitted(_as_dicts(probas), float(model.priors_.get(first, 0.0)), True)


def _as_dicts(probas: pd.DataFrame) -> dict[str, dict[str, float]]:
    columns = [str(column) for column in probas.columns]
    return {
        str(task): dict(zip(columns, (float(v) for v in values), strict=True))
        for task, values in zip(probas.index, probas.to_numpy(), strict=True)
    }


def _jeffreys(successes: float, n: int) -> tuple[float, float]:
    # The Beta(a, b) quantiles by the inverse incomplete beta function that
    # scipy.stats.beta.ppf computes them with too (Boost's: the same bits, checked in
    # tests/test_consensus.py), without importing scipy.stats: a second or more.
    with one_thread_importing():
        from scipy.special import betaincinv

    tail = (1 - INTERVAL) / 2
    a, b = successes + 0.5, n - successes + 0.5
    return float(betaincinv(a, b, tail)), float(betaincinv(a, b, 1 - tail))


def _reliabilities(
    inputs: ConsensusInputs,
    spaces: Mapping[str, _LabelSpace],
    probas: Mapping[str, Mapping[str, float]],
    guessers: Collection[str] = (),
) -> tuple[RaterReliability, ...]:
    right: dict[tuple[str, str], list[float]] = defaultdict(list)
    guessing: dict[tuple[str, str], list[float]] = defaultdict(list)
    for rating in (*inputs.ratings, *inputs.uncounted):
        chances = probas.get(rating.item_id, {})
        rater = (rating.rater_kind, rating.rater)
        space = spaces[rating.item_id]
        # An answer no counted rater gave is outside the label space: the consensus
        # gives it no chance (only the uncounted can give one).
        label = space.label(rating.answer) if space.holds(rating.answer) else None
        right[rater].append(chances.get(label, 0.0) if label is not None else 0.0)
        guessing[rater].append(1 / inputs.items[rating.item_id].possible_answers)
    unqualified = {rating.rater for rating in inputs.uncounted}
    found = []
    for (kind, name), values in right.items():
        successes = sum(values)
        low, high = _jeffreys(successes, len(values))
        chance = sum(guessing[(kind, name)]) / len(values)
        qualified = kind != "person" or name not in unqualified
        counted = qualified and f"{kind}:{name}" not in guessers
        found.append(
            RaterReliability(
                name,
                kind,
                successes / len(values),
                low,
                high,
                len(values),
                chance,
                counted,
                qualified,
            )
        )
    return tuple(sorted(found, key=lambda r: (-r.reliability, r.kind, r.name)))


def _answer_consensus(
    inputs: ConsensusInputs, spaces: Mapping[str, _LabelSpace]
) -> tuple[_Fitted, tuple[RaterReliability, ...]]:
    """The answer task: fitted on every rating, then again without the raters who do
    no better than guessing (the one-coin model would read their answers as evidence
    against what they said, where they are no evidence at all)."""
    with one_thread_importing():
        from db.dawid_skene import FastOneCoinDawidSkene

    gold_rows = [
        (item_id, GOLD_RATER, spaces[item_id].label(truth.answer))
        for item_id, truth in inputs.gold.items()
    ] * GOLD_WEIGHT
    rows = [(r.item_id, _worker(r), spaces[r.item_id].label(r.answer)) for r in inputs.ratings]
    fitted = _fit(rows + gold_rows, KEY_LABEL, FastOneCoinDawidSkene(n_iter=100), {})
    raters = _reliabilities(inputs, spaces, fitted.probas)
    weighed = [r for r in raters if r.qualified]
    guessers = {f"{r.kind}:{r.name}" for r in weighed if r.beyond_chance < BEYOND_CHANCE}
    if not guessers or len(guessers) == len(weighed):
        return fitted, raters
    kept = [row for row in rows if row[1] not in guessers]
    fitted = _fit(kept + gold_rows, KEY_LABEL, FastOneCoinDawidSkene(n_iter=100), {})
    return fitted, _reliabilities(inputs, spaces, fitted.probas, guessers)


_FitKey = tuple[object, ...]
_FITS_KEPT = 8
_fits: OrderedDict[_FitKey, Consensus] = OrderedDict()  # the latest fits, newest last
_fits_lock = threading.Lock()


def consensus_from_inputs(
    inputs: ConsensusInputs, item_ids: Collection[str] | None = None
) -> Consensus:
    """Fit both models on every rating in ``inputs``; the consensus on ``item_ids``
    (None: every item with a rating or a gold truth).

    The fit is a function of the inputs alone (EM from a majority vote, no randomness),
    and takes about a second on a study's worth of ratings: the same inputs asked again
    (F2 and F3 polling a database nobody wrote to, a plan then its approval) reuse the
    last fits instead."""
    key: _FitKey = (
        tuple(sorted(inputs.items.items())),
        inputs.ratings,
        tuple(sorted(inputs.gold.items())),
        inputs.uncounted,
        None if item_ids is None else frozenset(item_ids),
    )
    with _fits_lock:
        if key in _fits:
            _fits.move_to_end(key)
            return _fits[key]
    fitted = _fit_consensus(inputs, item_ids)
    with _fits_lock:
        _fits[key] = fitted
        while len(_fits) > _FITS_KEPT:
            _fits.popitem(last=False)
    return fitted


def _fit_consensus(inputs: ConsensusInputs, item_ids: Collection[str] | None) -> Consensus:
    with one_thread_importing():
        from db.dawid_skene import FastDawidSkene

    spaces = _label_spaces(inputs)
    answers, raters = _answer_consensus(inputs, spaces)
    gold_keeps = {item_id: KEEP if truth.keeps else DROP for item_id, truth in inputs.gold.items()}
    keep_rows = [
        (r.item_id, _worker(r), KEEP if r.keeps else DROP)
        for r in inputs.ratings
        if r.keeps is not None
    ]
    keep_rows += [(item_id, GOLD_RATER, label) for item_id, label in gold_keeps.items()] * (
        GOLD_WEIGHT
    )
    keeps = _fit(keep_rows, KEEP, FastDawidSkene(n_iter=100), gold_keeps)
    rated: dict[str, list[Rating]] = defaultdict(list)
    for rating in inputs.ratings:
        rated[rating.item_id].append(rating)
    known = sorted(set(rated) | set(inputs.gold))
    p_keep = {
        item_id: keeps.probas[item_id].get(KEEP, 0.0) if item_id in keeps.probas else keeps.prior
        for item_id in known
    }
    fitted = fitted_raters(raters, p_keep, answers.prior, keeps.prior, inputs)
    wanted = sorted(known if item_ids is None else set(item_ids) & set(inputs.items), key=id_order)
    items = [
        _item_consensus(
            inputs.items[item_id],
            spaces[item_id],
            rated.get(item_id, []),
            answers,
            p_keep.get(item_id, keeps.prior),
            fitted,
            gold=item_id in inputs.gold,
            keeps_learned=keeps.learned,
        )
        for item_id in wanted
    ]
    return Consensus(
        items=tuple(items),
        raters=raters,
        prior_key_right=fitted.prior_key_right,
        prior_keep=keeps.prior,
        fitted_raters=fitted,
    )


def _item_consensus(
    item: InputItem,
    space: _LabelSpace,
    ratings: Sequence[Rating],
    answers: _Fitted,
    p_keep: float,
    fitted: FittedRaters,
    *,
    gold: bool,
    keeps_learned: bool,
) -> ItemConsensus:
    """One item's figures: the fit's, except where one person's judgment is all that
    people said of it (``db.item_posterior``: the fit trusts a newcomer's lone answer
    completely), read on the low end of that person's reliability as routing reads it;
    a task the fit learned nothing in keeps its rule of succession."""
    chances = answers.probas.get(item.item_id)
    if chances is None:
        answer, p_key = item.key, fitted.prior_key_right
    else:
        best = max(chances, key=lambda label: (chances[label], label == KEY_LABEL))
        answer, p_key = space.answer(best), chances.get(KEY_LABEL, 0.0)
    given = [((r.rater_kind, r.rater), r.answer) for r in ratings]
    judgments = sum(1 for r in ratings if r.rater_kind == "person")
    # Several people: approved only where most of them answered the key (people_vouch).
    vouched = gold or judgments < 2 or people_vouch(fitted, item.key, item.kind, given)
    if not gold and rests_on_one_person(fitted, given):
        if answers.learned:
            p_key, answer = answer_posterior(fitted, item.key, item.kind, given)
            vouched = people_vouch(fitted, item.key, item.kind, given)
        if keeps_learned:
            verdicts = [(r.rater, r.keeps) for r in ratings if r.keeps is not None]
            p_keep = keep_posterior(fitted, verdicts)
    return ItemConsensus(
        item_id=item.item_id,
        revision=item.revision,
        judgments=judgments,
        consensus_answer=answer,
        p_key_right=p_key,
        p_keep=p_keep,
        suggested_key=None if answer == item.key else answer,
        key=item.key,
        kind=item.kind,
        models=len(ratings) - judgments,
        gold=gold,
        vouched=vouched,
    )


def estimate_consensus(
    session: Session, item_ids: Collection[str] | None = None, *, models: bool = True
) -> Consensus:
    """The consensus on ``item_ids`` (None: every item with a rating or a gold truth)
    and every rater's reliability, from everything stored (``models``: the evaluated
    models' answers count as raters too)."""
    return consensus_from_inputs(consensus_inputs(session, item_ids, models=models), item_ids)


def decision_confidence(db: Database) -> float:
    """The confidence the lead's screens show the consensus decisions at: the routing's
    ``target_confidence`` (default 0.95), the one adaptive routing closes items at."""
    from db.settings import get_fraction_setting

    with db.session() as session:
        return get_fraction_setting(session, "target_confidence")


def consensus_of(
    db: Database,
    scope: ItemScope = EVERY_ITEM,
    *,
    models: bool = True,
) -> Consensus:
    """:func:`estimate_consensus` in a session of its own, its items narrowed to ``scope``
    (the raters' reliability still rests on every item)."""
    with db.session() as session:
        consensus = estimate_consensus(session, models=models)
        if not scope.narrowed:
            return consensus
        in_scope = scoped_statuses(session, kinds=scope.kinds, sources=scope.sources)
    return Consensus(
        items=tuple(item for item in consensus.items if item.item_id in in_scope),
        raters=consensus.raters,
        prior_key_right=consensus.prior_key_right,
        prior_keep=consensus.prior_keep,
        fitted_raters=consensus.fitted_raters,
    )
