"""Evaluation protocols: how a paper asked its models, as one value per protocol.

``vetbench eval --protocol NAME`` follows one of these, so that a run's figures can
sit next to the paper's table.  A protocol fixes which items it asks (its paper's
kinds), the prompt layout, the shot settings (one run per setting), how long a
model may write and where it stops, which extractor decides the answer (others
are reported beside it) and whether explanations are scored.

- ``custom``: vetbench's own prompts, with the shots asked for (per kind, if
  wanted), generation stopping as soon as an answer is whole, and vetbench's
  lenient extractor deciding.
- ``cflue``: CFLUE's published evaluation (the paper's Knowledge Assessment table):
  multiple-choice items only, zero-shot, asked in Chinese as a financial expert
  who answers in two lines, ``答案：`` then ``解析：`` (true/false items with the
  single-choice instructions); greedy, the model's own length (up to
  ``CFLUE_MAX_NEW_TOKENS``), no stop string; CFLUE's own extraction rule decides;
  accuracy, weighted F1, BLEU-1/4 and ROUGE-1/2/L on the explanations.  The prompt
  wording is vetbench's, saying what CFLUE's says; a templates folder
  (``--templates``) can hold any other wording.
- ``econlogicqa``: the EconLogicQA paper's: ordering items only, 1-shot and
  5-shot (two runs; the paper reports no 0-shot), its ``Question:`` / ``Choices:`` /
  ``Correct Order:`` layout, greedy (temperature 0) until the model starts a new
  question, a regular expression reads the order, exact match.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from db.vocabulary import EvalProtocol, ItemKind
from evaluator.extractors import CFLUE, ECONLOGICQA, EXTRACTORS, LENIENT
from evaluator.prompts import DEFAULT_LAYOUT

__all__ = [
    "CFLUE_MAX_NEW_TOKENS",
    "ECONLOGICQA_MAX_NEW_TOKENS",
    "ProtocolSpec",
    "StopRule",
    "protocol_spec",
]

CFLUE_MAX_NEW_TOKENS = 512  # "the model's own length", bounded so a looping model ends
ECONLOGICQA_MAX_NEW_TOKENS = 64  # an order and a sentence, unless a new question starts


class StopRule:
    """Where generation ends (besides end-of-sequence and the token budget)."""

    ANSWER = "answer"  # a blank line, a new question, or as soon as the answer is whole
    NEW_QUESTION = "new-question"  # only when the model starts a new question
    NONE = "none"  # the model's own length


@dataclass(frozen=True)
class ProtocolSpec:
    """Everything a protocol fixes about how items are asked, read and scored."""

    name: EvalProtocol
    kinds: frozenset[ItemKind]
    """The kinds it asks; other selected items are left out (and the run says so)."""
    layout: str
    shot_settings: tuple[int, ...] | None
    """One run per setting; None: the shots asked for on the command line."""
    extractor: str
    stop_rule: str
    max_new_tokens: int | None
    """The answer budget; None: the kind's own small budget (``KindSpec.max_new_tokens``)."""
    scores_explanations: bool
    template_language: str | None = None
    """Ask every item in this template language (CFLUE: ``zh``); None: the item's own."""
    instructions_kind: Mapping[ItemKind, ItemKind] = field(default_factory=dict)
    """Kinds asked with another kind's instructions (CFLUE: true/false as single)."""

    def reported_extractors(self, chosen: str | None = None) -> tuple[str, ...]:
        """The deciding extractor first, then every other one (reported beside it)."""
        first = chosen or self.extractor
        return (first, *[name for name in EXTRACTORS if name != first])


_SPECS: dict[EvalProtocol, ProtocolSpec] = {
    spec.name: spec
    for spec in (
        ProtocolSpec(
            name=EvalProtocol.CUSTOM,
            kinds=frozenset(ItemKind),
            layout=DEFAULT_LAYOUT,
            shot_settings=None,
            extractor=LENIENT,
            stop_rule=StopRule.ANSWER,
            max_new_tokens=None,
            scores_explanations=False,
        ),
        ProtocolSpec(
            name=EvalProtocol.CFLUE,
            kinds=frozenset({ItemKind.SINGLE, ItemKind.MULTI, ItemKind.TRUEFALSE}),
            layout="cflue",
            shot_settings=(0,),
            extractor=CFLUE,
            stop_rule=StopRule.NONE,
            max_new_tokens=CFLUE_MAX_NEW_TOKENS,
            scores_explanations=True,
            template_language="zh",
            instructions_kind={ItemKind.TRUEFALSE: ItemKind.SINGLE},
        ),
        ProtocolSpec(
            name=EvalProtocol.ECONLOGICQA,
            kinds=frozenset({ItemKind.ORDERING}),
            layout="econlogicqa",
            shot_settings=(1, 5),
            extractor=ECONLOGICQA,
            stop_rule=StopRule.NEW_QUESTION,
            max_new_tokens=ECONLOGICQA_MAX_NEW_TOKENS,
            scores_explanations=False,
        ),
    )
}


def protocol_spec(name: EvalProtocol | str) -> ProtocolSpec:
    """The protocol called ``name`` (a ``ValueError`` names an unknown one)."""
    return _SPECS[EvalProtocol(name)]
