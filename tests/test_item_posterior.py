"""An item's figures from a fit's parameters (``db.item_posterior``): what routing reads
between fits, and what the consensus reads for an item one person judged."""

from __future__ import annotations

from db.consensus import RaterReliability
from db.consensus_inputs import ConsensusInputs, InputItem, Rating
from db.item_posterior import answer_posterior, fitted_raters, people_vouch
from db.vocabulary import ItemKind

EXPERTS = (
    RaterReliability("ann", "person", 0.95, 0.90, 0.98, 200),
    RaterReliability("bo", "person", 0.93, 0.88, 0.96, 200),
    RaterReliability("newbie", "person", 1.0, 0.15, 1.0, 1),
)


def _fit_in_which_every_key_held(items: int) -> ConsensusInputs:
    """``items`` items, every one judged by ann and kept with its key."""
    return ConsensusInputs(
        items={f"i:{n}": InputItem(f"i:{n}", ItemKind.SINGLE, 1, "A") for n in range(items)},
        ratings=tuple(Rating(f"i:{n}", "ann", "person", "A", "keep") for n in range(items)),
        gold={},
    )


def test_the_share_of_right_keys_is_never_certain() -> None:
    """An early fit in which every key held learns a share of right keys of 1.0; under
    it, two experts answering another key would weigh nothing and the item would be
    agreed.  The share is the rule of succession over the items the fit rests on."""
    inputs = _fit_in_which_every_key_held(40)
    fit = fitted_raters(EXPERTS, dict.fromkeys(inputs.items, 1.0), 1.0, 0.97, inputs)
    assert fit.prior_key_right == 41 / 42
    both_say_b = [(("person", "ann"), "B"), (("person", "bo"), "B")]
    p_key, best = answer_posterior(fit, "A", ItemKind.SINGLE, both_say_b)
    assert p_key < 0.05 and best == "B"


def test_a_people_vouch_only_for_a_key_it_answered_from_someone_known() -> None:
    inputs = _fit_in_which_every_key_held(40)
    fit = fitted_raters(EXPERTS, dict.fromkeys(inputs.items, 1.0), 0.9, 0.97, inputs)
    assert people_vouch(fit, "A", ItemKind.SINGLE, [(("person", "ann"), "A")])
    assert not people_vouch(fit, "A", ItemKind.SINGLE, [(("person", "ann"), "B")])
    # one answer: the low end of the interval (0.15) is below chance (1 in 4)
    assert not people_vouch(fit, "A", ItemKind.SINGLE, [(("person", "newbie"), "A")])
    # a true/false item's chance is one in two: 0.90 is above it
    assert people_vouch(fit, "A", ItemKind.TRUEFALSE, [(("person", "ann"), "A")])
    # several people: most of them must have answered the key, whoever they are
    two = [(("person", "newbie"), "B"), (("person", "ann"), "A")]
    assert not people_vouch(fit, "A", ItemKind.SINGLE, two)
    three = [*two, (("person", "bo"), "A")]
    assert people_vouch(fit, "A", ItemKind.SINGLE, three)
    assert not people_vouch(fit, "B", ItemKind.SINGLE, three)
    assert people_vouch(fit, "A", ItemKind.SINGLE, [(("model", "m1"), "B")])  # the fit weighs


def test_people_the_fit_left_out_as_guessing_back_no_key() -> None:
    """A guesser's answer says nothing (as in ``answer_posterior``): not a vote in a
    majority, and beside one other person that person's judgment is read alone."""
    spammer = RaterReliability("spam", "person", 0.08, 0.03, 0.15, 77, 0.25, counted=False)
    inputs = _fit_in_which_every_key_held(40)
    fit = fitted_raters((*EXPERTS, spammer), dict.fromkeys(inputs.items, 1.0), 0.9, 0.97, inputs)
    split = [(("person", "ann"), "B"), (("person", "bo"), "A"), (("person", "spam"), "A")]
    assert not people_vouch(fit, "A", ItemKind.SINGLE, split)
    assert people_vouch(fit, "B", ItemKind.SINGLE, split[:1] + [(("person", "spam"), "A")])
    with_newbie = [(("person", "newbie"), "A"), (("person", "spam"), "A")]
    assert not people_vouch(fit, "A", ItemKind.SINGLE, with_newbie)  # newbie: low 0.15
    assert not people_vouch(fit, "A", ItemKind.SINGLE, [(("person", "spam"), "A")])
    # beside a guesser a newcomer's lone judgment is read on the low end, as when alone
    p_key, _best = answer_posterior(fit, "A", ItemKind.SINGLE, with_newbie)
    assert p_key < 0.95
