"""One specification per item kind: everything the evaluator does differently by kind.

An lm-evaluation-harness task keeps its prompt, answer extraction and metrics
together in one YAML file; here each of the four item kinds keeps them
together in one :class:`KindSpec`.  Prompts, the run loop, metrics and the
lm-eval export read the spec (``kind_spec(item.kind)``) instead of branching on
the kind, so a new kind, or a kind that changes, is one entry below.

A spec holds:

- its **prompt parts**: the instructions template (``instructions.<kind>.<lang>.txt``),
  the template each choice is written with, and the token budget of one answer;
- its **extraction**: the function that reads the canonical answer out of a
  model's output (``evaluator.extraction``);
- its **scoring**: the metrics that apply (exact match always; pairwise accuracy
  for orders; CFLUE's weighted F1 for multiple choice; set F1 for multi-answer
  items), and the candidate answers score mode ranks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from itertools import combinations, permutations
from math import factorial

from db.vocabulary import ItemKind
from evaluator.extraction import extract_choices, extract_order, extract_truefalse

__all__ = [
    "MAX_SCORE_CANDIDATES",
    "KindSpec",
    "Metric",
    "kind_spec",
]

MAX_SCORE_CANDIDATES = 120  # every order of 5 events; 6 events would be 720 forward passes
ANSWER_LEAD_IN_TOKENS = 12  # room for "The correct order is" before the letters
OPTION_TEMPLATE = "option.txt"

Extractor = Callable[[str, Sequence[str]], "str | None"]
"""Reads the canonical answer out of an output for an item's labels (None: unparsed)."""


class Metric(StrEnum):
    """A figure that applies to some kinds; the values are the names in every output."""

    EXACT_MATCH = "exact_match"  # the parsed answer equals the key
    PAIRWISE_ACCURACY = "pairwise_accuracy"  # share of event pairs in the key's order
    WEIGHTED_F1 = "weighted_f1"  # CFLUE's F1, weighted over answer classes
    SET_F1 = "set_f1"  # F1 between the predicted and the key's letter sets


def _orders(labels: Sequence[str]) -> list[str]:
    return ["".join(order) for order in permutations(labels)]


def _letter_sets(labels: Sequence[str]) -> list[str]:
    return [
        "".join(subset)
        for size in range(1, len(labels) + 1)
        for subset in combinations(labels, size)
    ]


def _letters(labels: Sequence[str]) -> list[str]:
    return list(labels)


@dataclass(frozen=True)
class KindSpec:
    """How the evaluator asks, stops, reads and scores items of one kind."""

    kind: ItemKind
    extract: Extractor
    """The canonical answer in a model's output for the item's labels, or None (unparsed)."""
    metrics: tuple[Metric, ...]
    """The figures that apply to this kind, in the order outputs list them."""
    tokens_per_label: int
    """Answer budget per choice label (an order writes ``D, `` per event, a choice one letter)."""
    candidates: Callable[[Sequence[str]], list[str]]
    """Every canonical answer score mode ranks for these labels."""
    candidate_count: Callable[[int], int]
    """How many candidates ``candidates`` gives for this many labels (without listing them)."""
    option_template: str = OPTION_TEMPLATE
    """The template each event or choice is written with."""

    def instructions_template(self, template_language: str) -> str:
        """The instructions file for this kind in a template language (``en`` or ``zh``)."""
        return f"instructions.{self.kind.value}.{template_language}.txt"

    def max_new_tokens(self, label_count: int) -> int:
        """A generous budget for one answer: the letters and a short lead-in, not an essay."""
        return self.tokens_per_label * label_count + ANSWER_LEAD_IN_TOKENS

    def score_candidates(self, labels: Sequence[str]) -> list[str] | None:
        """Every answer score mode ranks (canonical), or None when there are too many."""
        if self.candidate_count(len(labels)) > MAX_SCORE_CANDIDATES:
            return None
        return self.candidates(labels)

    def measures(self, metric: Metric) -> bool:
        return metric in self.metrics


def _choice_kind(
    kind: ItemKind,
    extract: Extractor,
    *,
    also: tuple[Metric, ...] = (),
    candidates: Callable[[Sequence[str]], list[str]] = _letters,
    candidate_count: Callable[[int], int] = int,
) -> KindSpec:
    """A multiple-choice kind: one letter per choice, measured by exact match and CFLUE's
    weighted F1 (and ``also``)."""
    return KindSpec(
        kind=kind,
        extract=extract,
        metrics=(Metric.EXACT_MATCH, Metric.WEIGHTED_F1, *also),
        tokens_per_label=1,
        candidates=candidates,
        candidate_count=candidate_count,
    )


_SPECS: dict[ItemKind, KindSpec] = {
    spec.kind: spec
    for spec in (
        KindSpec(
            kind=ItemKind.ORDERING,
            extract=extract_order,
            metrics=(Metric.EXACT_MATCH, Metric.PAIRWISE_ACCURACY),
            tokens_per_label=3,
            candidates=_orders,
            candidate_count=factorial,
        ),
        _choice_kind(ItemKind.SINGLE, extract_choices),
        _choice_kind(
            ItemKind.MULTI,
            extract_choices,
            also=(Metric.SET_F1,),
            candidates=_letter_sets,
            candidate_count=lambda labels: 2**labels - 1,
        ),
        _choice_kind(ItemKind.TRUEFALSE, extract_truefalse),
    )
}


def kind_spec(kind: ItemKind | str) -> KindSpec:
    """The specification of ``kind`` (a ``ValueError`` names an unknown kind)."""
    return _SPECS[ItemKind(kind)]
