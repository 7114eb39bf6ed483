"""One item's figures from a fitted consensus's parameters, without fitting again.

A consensus fit (``db.consensus``) yields, besides each item's figures, what it learned
of the raters: each one's answer accuracy (one coin, with the low end of its 95%
interval), each person's keep/drop confusion, and the priors (the share of right keys by
the rule of succession over the items the fit rests on: never certain).  From those an
item's posterior is a product over its own ratings.  Two readers need it:

- adaptive routing (``db.routing``), between fits, for every item;
- the consensus itself, for an item one person's judgment rests on: a rater whose
  answers no one else rated agrees with "the consensus" every time, so the fit trusts a
  newcomer's lone answer completely (a reliability of 1.00 from one answer).  Such an
  item is read on the low end of that person's interval instead, as routing reads it.

Both approve (or call agreed) only what the item's people back (:func:`people_vouch`):
a lone judgment from someone known, or a majority of several.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from db.vocabulary import ItemKind

if TYPE_CHECKING:
    from db.consensus import RaterReliability
    from db.consensus_inputs import ConsensusInputs

__all__ = [
    "Answers",
    "FittedRaters",
    "Verdicts",
    "answer_posterior",
    "fitted_raters",
    "keep_posterior",
    "people_vouch",
    "rater_skill",
    "rests_on_one_person",
]

Answers = Sequence[tuple[tuple[str, str], str]]
"""One item's answers: ((rater kind, name), answer)."""
Verdicts = Sequence[tuple[str, bool]]
"""One item's verdicts: (person, keeps)."""

_DEFAULT_RELIABILITY = 0.7  # a rater the fit has not seen, before any fit knows anyone
_DEFAULT_LOW = 0.5  # ... and the low end of what that could be
_DEFAULT_KEEP_CONFUSION = (0.9, 0.3)  # p(says keep | keep), p(says keep | drop)
_SMOOTHING = 1.0  # pseudo-counts of each confusion estimate


@dataclass(frozen=True)
class FittedRaters:
    """What one consensus fit learned of the raters: enough to read any item's figures."""

    reliability: Mapping[tuple[str, str], float]  # (rater kind, name) -> answer accuracy
    low: Mapping[tuple[str, str], float]  # ... the low end of its 95% interval
    keep_confusion: Mapping[str, tuple[float, float]]  # person -> p(keep | keep), p(keep | drop)
    prior_key_right: float
    prior_keep: float
    default_reliability: float
    default_low: float
    default_keep_confusion: tuple[float, float]
    # Raters the fit left out of the answers as no better than guessing: their answers
    # say nothing, neither for a key nor against it, nor in a count of people.
    guessing: frozenset[tuple[str, str]] = frozenset()


def fitted_raters(
    raters: Iterable[RaterReliability],
    p_keep: Mapping[str, float],
    prior_key_right: float,
    prior_keep: float,
    inputs: ConsensusInputs,
) -> FittedRaters:
    """The parameters of a fit: its ``raters``, each item's fitted ``p_keep`` (the keep
    confusions are read off those), and its priors."""
    # People the qualification gate leaves out are measured too (db.consensus), but their
    # judgments count for nothing: only those whose judgments count are known here.
    counted = [rater for rater in raters if rater.qualified]
    persons = [rater for rater in counted if rater.kind == "person"]
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
    # The share of right keys, learned from so many items, is never certain (the rule of
    # succession): an early fit in which every key held says 1.0, and under it a later
    # judgment against a key would weigh nothing at all.
    prior_key_right = (prior_key_right * len(p_keep) + 1) / (len(p_keep) + 2)
    verdicts = [r.keeps for r in inputs.ratings if r.keeps is not None]
    verdicts += [truth.keeps for truth in inputs.gold.values()]
    if all(verdicts):
        # No one has dropped an item yet: the fit had nothing to learn keep or drop from
        # (it says 0.5).  Keeping is then as likely as the rule of succession over every
        # verdict says, and no rater's keep tells more than anyone's.
        prior_keep = (len(verdicts) + 1) / (len(verdicts) + 2)
        confusion, default_confusion = {}, _DEFAULT_KEEP_CONFUSION
    return FittedRaters(
        reliability={(rater.kind, rater.name): rater.reliability for rater in counted},
        low={(rater.kind, rater.name): rater.low for rater in counted},
        keep_confusion=confusion,
        prior_key_right=prior_key_right,
        prior_keep=prior_keep,
        default_reliability=(
            sum(rater.reliability for rater in persons) / len(persons)
            if persons
            else _DEFAULT_RELIABILITY
        ),
        # Someone the fit has not seen can close nothing alone (see answer_posterior).
        default_low=min((rater.low for rater in persons), default=_DEFAULT_LOW),
        default_keep_confusion=default_confusion,
        guessing=frozenset((rater.kind, rater.name) for rater in counted if not rater.counted),
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


def _any_person(answers: Answers) -> bool:
    return any(rater[0] == "person" for rater, _answer in answers)


def heard_people(fit: FittedRaters, answers: Answers) -> Answers:
    """The people's answers among ``answers`` (models aside), without those of people the
    fit left out as guessing."""
    return [
        (rater, answer)
        for rater, answer in answers
        if rater[0] == "person" and rater not in fit.guessing
    ]


def rests_on_one_person(fit: FittedRaters, answers: Answers) -> bool:
    """Whether one person's judgment is all the item's people say (models aside): one
    person's, or one beside people the fit left out as guessing (or theirs alone)."""
    return _any_person(answers) and len(heard_people(fit, answers)) <= 1


def _wrong_choices(kind: ItemKind, key: str, seen: Collection[str]) -> int:
    """The wrong answers a rater is taken to choose among: the plausible ones, or every
    other answer given, if more."""
    return max(_plausible_errors(kind, key), len(seen))


def _other_answers(key: str, answers: Answers) -> list[str]:
    """The answers given other than the key, each once."""
    return sorted({answer for _rater, answer in answers if answer != key})


def answer_posterior(
    fit: FittedRaters, key: str, kind: ItemKind, answers: Answers
) -> tuple[float, str]:
    """p(the key is right) and the likeliest answer, from each rater's answer."""
    seen = _other_answers(key, answers)
    wrong_choices = _wrong_choices(kind, key, seen)
    chance = 1 / (wrong_choices + 1)
    # One person's judgment alone rests on the low end of their reliability: a point
    # estimate from few answers would close items on a single mistaken judgment that
    # lands on a wrong key.  A rater below chance (a spammer) says nothing, rather than
    # the opposite of what they answer: their answer would otherwise count for the key
    # whenever it differs.
    alone = rests_on_one_person(fit, answers)
    skills = [
        (min(max(rater_skill(fit, rater, low=alone), chance), 1 - 1e-6), answer)
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


def people_vouch(fit: FittedRaters, key: str, kind: ItemKind, answers: Answers) -> bool:
    """Whether the item's people back its key enough for the consensus to approve it, or
    routing to call it agreed, without a lead.

    - One person's judgment alone: that person answered the key blind and is known to do
      better than chance (the low end of their interval).  Otherwise the figures are the
      share of right keys the fit learned, which may itself reach the confidence asked
      for: an item is never approved on that alone, as an item no one judged never is.
    - Several people: more of them answered the key blind than anything else.  A split
      (one against one, two against two) is not settled by the raters' reliabilities,
      which come from other items: on the demo database the fit approved at 0.95 the
      three keys its fixtures document as wrong, each with one annotator's answer against
      the key and another's keep (p(key right) 1.00 from reliabilities of 0.90 and 0.96).
      Such an item goes to one more annotator (adaptive routing) or to the lead.
    - No person (models' answers only): the fit weighs them, as before.

    People the fit left out as guessing count for nothing here either: an annotator who
    answers A to everything made a majority for every key A that two others split over.
    Guessers alone back no key."""
    if not _any_person(answers):
        return True
    people = heard_people(fit, answers)
    if len(people) != 1:
        backing = sum(1 for _person, said in people if said == key)
        return backing > len(people) - backing
    person, answer = people[0]
    if answer != key:
        return False
    chance = 1 / (_wrong_choices(kind, key, _other_answers(key, answers)) + 1)
    return rater_skill(fit, person, low=True) > chance


def rater_skill(fit: FittedRaters, rater: tuple[str, str], *, low: bool) -> float:
    """A rater's fitted answer accuracy, or (``low``) the low end of its interval."""
    if low:
        return fit.low.get(rater, fit.default_low)
    return fit.reliability.get(rater, fit.default_reliability)


def keep_posterior(fit: FittedRaters, verdicts: Verdicts) -> float:
    """p(the item should be kept), from each person's verdict."""
    keep, drop = fit.prior_keep, 1 - fit.prior_keep
    for rater, kept in verdicts:
        when_kept, when_dropped = fit.keep_confusion.get(rater, fit.default_keep_confusion)
        keep *= when_kept if kept else 1 - when_kept
        drop *= when_dropped if kept else 1 - when_dropped
    return keep / (keep + drop) if keep + drop else fit.prior_keep
