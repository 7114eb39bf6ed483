"""Evaluation protocols: how a paper asked its models, as one value per protocol.

``vetbench eval --protocol NAME`` follows one of these, so that a run's figures can
sit next to the paper's table.  A protocol fixes which items it asks (its paper's
kinds), the prompt layout, the shot settings (one run per setting), how long a
model may write and where it stops, which extractor decides the answer (others
are reported beside it) and whether explanations are scored.

- ``custom``: vetbench's own prompts, with the shots asked for (per kind, if
  wanted), generation stopping at a blank line or a new question, and vetbench's
  lenient extractor deciding.
- ``cflue``: CFLUE's published evaluation (the paper's Knowledge Assessment table):
  multiple-choice items only (none with an option past F: CFLUE's reader knows
  A–F only, ``AnswerExtractor.leaves_out``), zero-shot, asked in Chinese as a financial expert
  who answers in two lines, ``答案：`` then ``解析：`` (true/false items with the
  single-choice instructions); greedy, the model's own length (its generation
  limit, bounded by its context: the official code sets no cap of its own), no
  stop string; CFLUE's own extraction rule decides; accuracy, weighted F1,
  BLEU-1/4 and ROUGE-1/2/L on the explanations.  The built-in wording is
  vetbench's, saying what CFLUE's says; ``--cflue-repo PATH`` reads the official
  wording from a clone of CFLUE's repository (``evaluator.cflue_wording``), and a
  templates folder (``--templates``) can hold any other.
- ``econlogicqa``: EconLogicQA-style: ordering items only, 1-shot and 5-shot (two
  runs; the paper reports no 0-shot), its ``Question:`` / ``Choices:`` /
  ``Correct Order:`` layout with no instruction line of vetbench's, plain
  completion (no chat template unless asked for), greedy (temperature 0) until
  the model starts a new question; the one order the output names is read, exact
  match.  The paper's own prompt and regular expression are unpublished, so its
  tables say "EconLogicQA-style".  Its layout is English: a Chinese order is asked in
  vetbench's Chinese layout (with the shots there are), and the run records that as a
  departure (``zh items in vetbench layout``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from db.vocabulary import EvalProtocol, ItemKind
from evaluator.extractors import CFLUE, ECONLOGICQA, EXTRACTORS, LENIENT
from evaluator.prompts import DEFAULT_LAYOUT, answer_text
from evaluator.text_metrics import EXPLANATION_LABEL

if TYPE_CHECKING:
    from evaluator.run_params import RunParams

__all__ = [
    "ECONLOGICQA_MAX_NEW_TOKENS",
    "ProtocolSpec",
    "StopRule",
    "protocol_spec",
    "run_departures",
]

ECONLOGICQA_MAX_NEW_TOKENS = 64  # an order and a sentence, unless a new question starts


class StopRule:
    """Where generation ends (besides end-of-sequence and the token budget)."""

    ANSWER = "answer"  # a blank line or a new question (never at a whole answer: stopping.py)
    NEW_QUESTION = "new-question"  # only when the model starts a new question
    NONE = "none"  # the model's own length


@dataclass(frozen=True)
class ProtocolSpec:
    """Everything a protocol fixes about how items are asked, read and scored."""

    name: EvalProtocol
    kinds: frozenset[ItemKind]
    """The kinds it asks; other selected items are left out (and the run says so:
    :meth:`leaves_out`)."""
    layout: str
    shot_settings: tuple[int, ...] | None
    """One run per setting; None: the shots asked for on the command line."""
    extractor: str
    stop_rule: str
    max_new_tokens: int | None
    """The answer budget; None: the kind's own small budget (``KindSpec.max_new_tokens``),
    or the model's own limit with ``model_length``."""
    scores_explanations: bool
    model_length: bool = False
    """No budget of the protocol's own: the model's generation limit, bounded by its context."""
    chat_template: bool | None = None
    """Whether prompts go in the model's chat template; None: the model's own choice."""
    template_language: str | None = None
    """Ask every item in this template language (CFLUE: ``zh``); None: the item's own."""
    instructions_kind: Mapping[ItemKind, ItemKind] = field(default_factory=dict)
    """Kinds asked with another kind's instructions (CFLUE: true/false as single)."""
    languages: frozenset[str] | None = None
    """The template languages its layout is written in (EconLogicQA: English); items in
    another are asked in vetbench's layout for theirs, a departure. None: any."""

    def reference_output(self, kind: ItemKind, key: str, explanation: str | None) -> str:
        """What a model that knows ``key`` (in the labels it was shown) writes under this
        protocol: CFLUE's two lines with the analysis, EconLogicQA's ``Correct Order:``
        line, else the key as a shot writes it.  The oracle self-test answers with it."""
        written = answer_text(kind, key)
        if self.name is EvalProtocol.CFLUE:
            # One line of analysis: CFLUE reads a two-line answer's second line as it.
            analysis = " ".join((explanation or "").split("\n")).strip()
            return f"答案：{written}\n{EXPLANATION_LABEL}{analysis}"
        if self.name is EvalProtocol.ECONLOGICQA:
            return f"Correct Order: {written}"
        return written

    def departures(
        self, layout: str, extractor: str, languages: Iterable[str] = ()
    ) -> tuple[str, ...]:
        """How a run asked or read otherwise than this protocol does (``--layout``,
        ``--extractor``, items in ``languages`` its layout is not written in): ``cflue
        layout``, ``read by econlogicqa-start``, ``zh items in vetbench layout``; empty
        when it did not.  Its figures are not the protocol's: every label of the run says
        so and a paper table gives it a column (or row) of its own."""
        changed = [] if layout == self.layout else [f"{layout} layout"]
        if layout == self.layout and self.languages is not None:
            others = sorted(set(languages) - self.languages)
            changed += [f"{language} items in vetbench layout" for language in others]
        changed += [] if extractor == self.extractor else [f"read by {extractor}"]
        return tuple(changed)

    def leaves_out(self, kind: ItemKind) -> str | None:
        """Why this protocol leaves items of ``kind`` out, as a run records it (``the cflue
        protocol reads multiple-choice items only (ordering)``); None when it asks them."""
        if kind in self.kinds:
            return None
        if self.kinds == _MULTIPLE_CHOICE:
            asked = "multiple-choice"
        else:
            asked = ", ".join(k.value for k in ItemKind if k in self.kinds)
        return f"the {self.name.value} protocol reads {asked} items only ({kind.value})"

    def reported_extractors(self, chosen: str | None = None) -> tuple[str, ...]:
        """The deciding extractor first, then every other one (reported beside it)."""
        first = chosen or self.extractor
        return (first, *[name for name in EXTRACTORS if name != first])


_MULTIPLE_CHOICE = frozenset({ItemKind.SINGLE, ItemKind.MULTI, ItemKind.TRUEFALSE})

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
            kinds=_MULTIPLE_CHOICE,
            layout="cflue",
            shot_settings=(0,),
            extractor=CFLUE,
            stop_rule=StopRule.NONE,
            max_new_tokens=None,
            scores_explanations=True,
            model_length=True,
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
            chat_template=False,  # the paper's models complete plain text
            languages=frozenset({"en"}),
        ),
    )
}


def protocol_spec(name: EvalProtocol | str) -> ProtocolSpec:
    """The protocol called ``name`` (a ``ValueError`` names an unknown one)."""
    return _SPECS[EvalProtocol(name)]


def run_departures(params: RunParams) -> tuple[str, ...]:
    """How a run with ``params`` asked or read otherwise than its protocol
    (:meth:`ProtocolSpec.departures`: its layout, its languages, its deciding reader)."""
    return protocol_spec(params.protocol).departures(
        params.layout, params.extractors[0], params.template_languages
    )
