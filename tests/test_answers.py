from __future__ import annotations

import pytest

from db.answers import (
    AnswerError,
    discordant_pairs,
    format_answer,
    key_without,
    pairwise_accuracy,
    parse_answer,
    parse_choice_set,
)
from db.vocabulary import ItemKind

ABCD = list("ABCD")


@pytest.mark.parametrize(
    "text", ["D, A, C, B", "DACB", "d a c b", "D -> A -> C -> B", "4,1,3,2", "D，A，C，B"]
)
def test_order_shapes_parse_to_one_canonical_form(text: str) -> None:
    assert parse_answer(ItemKind.ORDERING, text, ABCD) == "DACB"


@pytest.mark.parametrize(
    ("kind", "text", "message"),
    [
        (ItemKind.ORDERING, "DACA", "more than once"),
        (ItemKind.ORDERING, "DAC", "missing B"),
        (ItemKind.ORDERING, "DACE", "'E' is not one of"),
        (ItemKind.ORDERING, "5,1,3,2", "out of range"),
        (ItemKind.ORDERING, "", "empty"),
        (ItemKind.SINGLE, "AB", "exactly one"),
        (ItemKind.MULTI, "AE", "not one of the choices"),
        (ItemKind.MULTI, "AAB", "more than once"),
    ],
)
def test_bad_answers_are_refused_with_a_reason(kind: ItemKind, text: str, message: str) -> None:
    with pytest.raises(AnswerError, match=message):
        parse_answer(kind, text, ABCD)


def test_choice_sets_are_sorted() -> None:
    assert parse_answer(ItemKind.MULTI, "D, B, A", ABCD) == "ABD"
    assert parse_answer(ItemKind.SINGLE, "c", ABCD) == "C"


def test_a_choice_set_keeps_the_order_of_labels_that_are_not_letters() -> None:
    assert parse_choice_set("2, 1", ["1", "2", "3"], kind=ItemKind.MULTI) == "12"
    assert parse_choice_set("D, A", list("ABCD"), kind=ItemKind.MULTI) == "AD"


def test_truefalse_reads_words() -> None:
    assert parse_answer(ItemKind.TRUEFALSE, "对", ["A", "B"]) == "A"
    assert parse_answer(ItemKind.TRUEFALSE, "False", ["A", "B"]) == "B"
    assert parse_answer(ItemKind.TRUEFALSE, "B", ["A", "B"]) == "B"


def test_display_and_pairwise_scores() -> None:
    assert format_answer(ItemKind.ORDERING, "DACB") == "D, A, C, B"
    assert format_answer(ItemKind.MULTI, "ABD") == "ABD"
    assert format_answer(ItemKind.ORDERING, "b, a") == "b, a"  # typed, not yet a key: as is
    assert pairwise_accuracy("DACB", "DACB") == 1.0
    assert pairwise_accuracy("BCAD", "DACB") == 0.0
    assert pairwise_accuracy("ADCB", "DACB") == pytest.approx(5 / 6)
    assert pairwise_accuracy(None, "DACB") == 0.0
    assert discordant_pairs("ADCB", "DACB") == [("D", "A")]


@pytest.mark.parametrize(
    ("kind", "typed", "removed", "expected"),
    [
        ("ordering", "D, A, B, C", "B", "C, A, B"),
        ("ordering", "dabc", "D", "A, B, C"),
        ("ordering", "D, A, B, C", "A", "C, A, B"),
        ("multi", "ACD", "B", "ABC"),
        ("multi", "ACD", "C", "AC"),
        ("single", "B", "B", ""),
        ("single", "—", "A", ""),
    ],
)
def test_key_without_a_removed_letter(kind: str, typed: str, removed: str, expected: str) -> None:
    assert key_without(ItemKind(kind), typed, removed) == expected


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("错。", "B"),
        ("false.", "B"),
        ("对！", "A"),
        ("True!", "A"),
        ("错误．", "B"),
        (" no. ", "B"),
    ],
)
def test_truefalse_reads_a_word_followed_by_a_full_stop(text: str, label: str) -> None:
    assert parse_answer(ItemKind.TRUEFALSE, text, ["A", "B"]) == label


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("对/错", "exactly one letter, got AB"),
        ("true. false.", "exactly one letter, got AB"),
        ("对！错！", "exactly one letter, got AB"),
        ("错。错", "choice B appears more than once"),
        ("对对", "'对对' is not one of the choices AB"),
    ],
)
def test_truefalse_refuses_two_answers_by_name(text: str, message: str) -> None:
    with pytest.raises(AnswerError, match=message):
        parse_answer(ItemKind.TRUEFALSE, text, ["A", "B"])


@pytest.mark.parametrize(("kind", "text"), [(ItemKind.SINGLE, "B!"), (ItemKind.SINGLE, "false.")])
def test_other_kinds_read_no_true_false_words_or_exclamation_marks(
    kind: ItemKind, text: str
) -> None:
    with pytest.raises(AnswerError, match="is not one of the choices"):
        parse_answer(kind, text, ["A", "B"])


def test_one_rule_says_which_language_codes_are_chinese() -> None:
    """An item marked ``ZH`` or ``zh-CN`` gets 对/错 as it gets the Chinese templates."""
    from db.answers import truefalse_word
    from evaluator.prompts import template_language

    for code, chinese in (
        ("zh", True),
        ("ZH", True),
        ("zh-CN", True),
        ("en", False),
        ("fr", False),
    ):
        assert (truefalse_word("A", code) == "对") is chinese
        assert (template_language(code) == "zh") is chinese
