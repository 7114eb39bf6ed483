"""ItemFilter: the items a run evaluates, stored as runs have always stored their filters."""

from __future__ import annotations

from db.vocabulary import EvalProtocol, ItemKind
from evaluator.item_filter import ItemFilter
from evaluator.protocols import protocol_spec
from evaluator.session import EvalChoices

MCQ = frozenset({ItemKind.SINGLE, ItemKind.MULTI, ItemKind.TRUEFALSE})


def test_stored_form_lists_what_was_given_in_the_order_runs_stored_it() -> None:
    chosen = ItemFilter(
        statuses=("approved",), kinds=("ordering",), sources=("econ",), release="v1", limit=3
    )
    stored = chosen.to_json()
    assert list(stored) == ["release", "status", "kind", "source", "limit"]
    assert stored == {
        "release": "v1",
        "status": ["approved"],
        "kind": ["ordering"],
        "source": ["econ"],
        "limit": 3,
    }
    assert ItemFilter().to_json() == {}
    assert ItemFilter(limit=0).to_json() == {}  # 0: no limit, as before


def test_the_evaluation_choices_filter_a_release_by_its_own_items_not_by_status() -> None:
    assert EvalChoices().item_filter.to_json() == {"status": ["approved"]}
    on_release = EvalChoices(release="v1", kinds=("single",)).item_filter
    assert on_release.statuses == ()
    assert on_release.to_json() == {"release": "v1", "kind": ["single"]}


def test_a_protocol_narrows_the_kinds_chosen_to_those_it_asks() -> None:
    assert ItemFilter().kinds_within(frozenset(ItemKind)) is None  # every kind
    assert ItemFilter(kinds=("multi",)).kinds_within(frozenset(ItemKind)) == ("multi",)
    assert ItemFilter().kinds_within(MCQ) == ("single", "multi", "truefalse")
    assert ItemFilter(kinds=("ordering", "multi")).kinds_within(MCQ) == ("multi",)
    assert ItemFilter(kinds=("ordering",)).kinds_within(MCQ) == ()  # nothing left
    assert protocol_spec(EvalProtocol.CFLUE).kinds == MCQ


def test_description_names_the_release_first() -> None:
    assert ItemFilter().describe() == "no filter"
    assert (
        ItemFilter(statuses=("approved",), sources=("a", "b"), release="v2").describe()
        == "release v2; status approved; source a, b"
    )
