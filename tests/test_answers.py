from __future__ import annotations

import pytest

from db.answers import (
    AnswerError,
    discordant_pairs,
    format_answer,
    key_without,
    pairwise_accuracy,
    parse_answer,
)
from db.vocabulary import ItemKind

ABCD = list("ABCD")


@pytest.mark.parametrize(
    "text", ["D, A, C, B", "DACB", "d a c b", "D -> A -> C -> B", "4,1,3,2", "D，A，C，B"]
)
def test_order_shapes_parse_to_one_canonical_form(text: str) -> None:
    assert parse_answer(ItemKind.ORDERING, text, ABCD) == "DACB"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("DACA", "more than once"),
        ("DAC", "missing B"),
        ("DACE", "'E' is not one of"),
        ("5,1,3,2", "out of range"),
        ("", "empty"),
    ],
)
def test_bad_orders_are_refused_with_a_reason(text: str, message: str) -> None:
    with pytest.raises(AnswerError, match=message):
        parse_answer(ItemKind.ORDERING, text, ABCD)


def test_choice_sets_are_sorted_and_checked() -> None:
    assert parse_answer(ItemKind.MULTI, "D, B, A", ABCD) == "ABD"
    assert parse_answer(ItemKind.SINGLE, "c", ABCD) == "C"
    with pytest.raises(AnswerError, match="exactly one"):
        parse_answer(ItemKind.SINGLE, "AB", ABCD)
    with pytest.raises(AnswerError, match="not one of the choices"):
        parse_answer(ItemKind.MULTI, "AE", ABCD)
    with pytest.raises(AnswerError, match="more than once"):
        parse_answer(ItemKind.MULTI, "AAB", ABCD)


def test_truefalse_reads_words() -> None:
    assert parse_answer(ItemKind.TRUEFALSE, "对", ["A", "B"]) == "A"
    assert parse_answer(ItemKind.TRUEFALSE, "False", ["A", "B"]) == "B"
    assert parse_answer(ItemKind.TRUEFALSE, "B", ["A", "B"]) == "B"


def test_display_and_pairwise_scores() -> None:
    assert format_answer(ItemKind.ORDERING, "DACB") == "D, A, C, B"
    assert format_answer(ItemKind.MULTI, "ABD") == "ABD"
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
