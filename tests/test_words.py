"""Counts in words (``db.words``): the one place a count and the words that agree with it
are spelled, for the CLI, the app, the report and the evaluator."""

from __future__ import annotations

import pytest

from db.words import agreeing, all_of, counted, named


@pytest.mark.parametrize(
    ("n", "expected"),
    [(0, "0 items"), (1, "1 item"), (2, "2 items"), (1_200, "1,200 items")],
)
def test_a_count_takes_the_singular_only_for_one(n: int, expected: str) -> None:
    assert counted(n, "item") == expected


def test_an_irregular_plural_is_given() -> None:
    assert counted(1, "match", "matches") == "1 match"
    assert counted(3, "match", "matches") == "3 matches"
    assert counted(2, "item revision") == "2 item revisions"


@pytest.mark.parametrize(("n", "expected"), [(0, "have"), (1, "has"), (2, "have")])
def test_the_word_after_a_count_agrees_with_it(n: int, expected: str) -> None:
    assert agreeing(n, "has", "have") == expected


def test_every_one_of_a_count_is_said_as_one_or_all() -> None:
    assert all_of(1, "prediction") == "the one prediction"
    assert all_of(8, "prediction") == "all 8 predictions"
    assert all_of(1_200, "match", "matches") == "all 1,200 matches"


def test_names_follow_the_word_that_agrees_with_how_many_there_are() -> None:
    assert named("run", [3]) == "run 3"
    assert named("run", [3, 4]) == "runs 3, 4"
    assert named("match", ["a", "b"], "matches") == "matches a, b"
