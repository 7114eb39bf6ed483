"""The extraction stage: named, swappable ways to read an answer out of a model's output.

As in lm-evaluation-harness's filters, "what the model said" and "what answer it
gave" are kept apart, so a benchmark's own rule stands beside vetbench's and a run
reports what each recovers.  A run records its extractors in ``params["extractors"]``
(``RunParams.extractors``): the first decides its parsed answers (and so its
accuracy), the others are only reported; every prediction stores what each read in
``scores["extracted"]``.

- ``lenient``: vetbench's reader (``evaluator.extraction``; the kind's own
  ``kind_spec(kind).extract``): many answer shapes, canonical answers.
- ``cflue``: the rule of CFLUE's published evaluation code, for multiple-choice
  items.  When the output has exactly two lines (split at ``\\n``) only the first is
  read; the text is stripped and ``、`` ``,`` ``，`` and spaces are removed; then the
  letters A–F after the first ``答案`` followed by ``是``/``：``/``:`` are the answer,
  else a run of those letters at the very start, else nothing.  The letters are
  kept as written (``BA`` is not ``AB``, a letter the item lacks is a wrong answer),
  as the published figures count them.  Its letters end at F (CFLUE's items have at
  most five options), so it reads no item with a seventh or eighth option (G, H):
  such an item gets no answer of this reader, and a run this reader decides (the
  ``cflue`` protocol's, or ``--extractor cflue``) leaves it out and says so
  (:meth:`AnswerExtractor.leaves_out`), rather than score a right G as unparsed.
- ``econlogicqa``: the one whole order the output names anywhere, in any shape the
  lenient reader knows (``The correct order is D, A, C, B.``, ``D -> A -> C -> B``, a
  numbered list, bold, ``D、A、C、B``, ``(D) (A) (C) (B)``); an output naming two
  different orders, or a run that holds every event's letter but is no order
  (``A, B, C, D, E`` on a four-event item), is unparsed.  The EconLogicQA paper says
  it extracts answers with a regular expression and scores exact match; its
  expression is not published, so this is vetbench's reading of that rule.
- ``econlogicqa-start``: the stricter reading reported beside it: the item's letters
  at the very start of the output, separated by commas or spaces (an optional
  repeated ``Correct Order:`` first), and they must be a whole permutation: a further
  letter, any capital (``D, A, C, B, E`` or ``..., B, I`` on four events), refuses it.

The ``lenient`` and EconLogicQA readers see the output with its surrounding
whitespace stripped.  The ``cflue`` reader sees it as written, as CFLUE's code sees
the model's response: it counts the lines of the unstripped text
(``len(model_response.split('\n')) == 2``) and strips only the text it then reads, so
``答案：B\n解析：……\n`` (a trailing line break) is three lines and read whole, and
``\n答案：B`` is two lines whose first is empty: unparsed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from db.vocabulary import ItemKind
from evaluator.extraction import extract_single_order
from evaluator.kinds import kind_spec

__all__ = [
    "CFLUE",
    "ECONLOGICQA",
    "ECONLOGICQA_START",
    "EXTRACTORS",
    "LENIENT",
    "AnswerExtractor",
    "answer_extractor",
    "extract_cflue_official",
    "extract_econlogicqa_start",
    "read_answers",
]

LENIENT = "lenient"
CFLUE = "cflue"
ECONLOGICQA = "econlogicqa"
ECONLOGICQA_START = "econlogicqa-start"

_CFLUE_REMOVED = ("、", ",", "，", " ")
_CFLUE_LETTERS = "ABCDEF"  # the letter class of CFLUE's regular expressions
_CFLUE_MARKED = re.compile(rf"答案[是：:]+([{_CFLUE_LETTERS}]+)")
_CFLUE_LEADING = re.compile(rf"[{_CFLUE_LETTERS}]+")
# Any capital letter counts, so a letter no item has (``D, A, C, B, I``) is refused as
# ``..., B, E`` is on a four-event item; lower-case ones only as far as h: past it a word
# ("DACB because") ends the order, before it the answer is refused as prose.
_ECONLOGICQA_LETTER = "[A-Za-h]"
_ECONLOGICQA_ORDER = re.compile(
    r"\s*(?:(?i:correct[ \t]+order)[ \t]*[:：]\s*)?"
    rf"(?P<order>{_ECONLOGICQA_LETTER}(?:[ \t]*[,，]?[ \t]*{_ECONLOGICQA_LETTER})*)(?![A-Za-z])"
)


def extract_cflue_official(output: str, labels: Sequence[str]) -> str | None:
    """The answer as CFLUE's evaluation code reads it from ``output`` as the model wrote it
    (unstripped: see the module docstring), or None."""
    lines = output.split("\n")
    text = (lines[0] if len(lines) == 2 else output).strip()
    for character in _CFLUE_REMOVED:
        text = text.replace(character, "")
    found = _CFLUE_MARKED.search(text)
    if found is not None:
        return found.group(1)
    leading = _CFLUE_LEADING.match(text)
    return leading.group(0) if leading is not None else None


def extract_econlogicqa_start(output: str, labels: Sequence[str]) -> str | None:
    """The order at the start of ``output`` (after ``Correct Order:``), if it is whole."""
    found = _ECONLOGICQA_ORDER.match(output)
    if found is None:
        return None
    order = re.sub(r"[^A-Za-z]", "", found.group("order"))
    if order != order.upper():  # lower-case letters are prose here ("a firm"), not events
        return None
    if len(order) != len(labels) or set(order) != set(labels):
        return None
    return order


def _lenient(kind: ItemKind, output: str, labels: Sequence[str]) -> str | None:
    return kind_spec(kind).extract(output, labels)


@dataclass(frozen=True)
class AnswerExtractor:
    """One named way to read answers, and the kinds it reads."""

    name: str
    kinds: frozenset[ItemKind]
    read: Callable[[ItemKind, str, Sequence[str]], str | None]
    description: str
    letters: str | None = None
    """The only option letters it knows (CFLUE's code: A–F); None: any item's."""
    as_written: bool = False
    """It reads the output unstripped (CFLUE's code counts the lines of the raw text)."""

    def applies_to(self, kind: ItemKind | str) -> bool:
        return ItemKind(kind) in self.kinds

    def reads(self, kind: ItemKind | str, labels: Sequence[str]) -> bool:
        """Whether it reads answers to an item of ``kind`` with these option ``labels``."""
        return self.applies_to(kind) and self.leaves_out(kind, labels) is None

    def leaves_out(self, kind: ItemKind | str, labels: Sequence[str]) -> str | None:
        """Why a run this reader decides leaves out an item of ``kind`` with ``labels``
        (``the cflue reader reads options A–F only (multi)``): it has an option beyond the
        letters it knows.  None when it has none."""
        if self.letters is None or set(labels) <= set(self.letters):
            return None
        return (
            f"the {self.name} reader reads options {self.letters[0]}–{self.letters[-1]} "
            f"only ({ItemKind(kind).value})"
        )


EXTRACTORS: dict[str, AnswerExtractor] = {
    extractor.name: extractor
    for extractor in (
        AnswerExtractor(
            LENIENT,
            frozenset(ItemKind),
            _lenient,
            "vetbench's reader: many answer shapes; an explicit marker wins, else the last span",
        ),
        AnswerExtractor(
            CFLUE,
            frozenset({ItemKind.SINGLE, ItemKind.MULTI, ItemKind.TRUEFALSE}),
            lambda _kind, output, labels: extract_cflue_official(output, labels),
            "CFLUE's published rule: 答案：X on the first of two lines, else leading letters",
            letters=_CFLUE_LETTERS,
            as_written=True,
        ),
        AnswerExtractor(
            ECONLOGICQA,
            frozenset({ItemKind.ORDERING}),
            lambda _kind, output, labels: extract_single_order(output, labels),
            "the one whole order named anywhere in the output (two different orders: none)",
        ),
        AnswerExtractor(
            ECONLOGICQA_START,
            frozenset({ItemKind.ORDERING}),
            lambda _kind, output, labels: extract_econlogicqa_start(output, labels),
            "a strict regular expression: the whole order right after 'Correct Order:'",
        ),
    )
}


def answer_extractor(name: str) -> AnswerExtractor:
    """The extractor called ``name``; a ``ValueError`` lists the known ones."""
    try:
        return EXTRACTORS[name]
    except KeyError:
        raise ValueError(f"unknown extractor '{name}' (choose {', '.join(EXTRACTORS)})") from None


def read_answers(
    names: Sequence[str], kind: ItemKind | str, output: str, labels: Sequence[str]
) -> Mapping[str, str | None]:
    """What each named extractor that reads items of ``kind`` with these ``labels``
    (:meth:`AnswerExtractor.reads`) finds in ``output``: stripped, unless it reads the
    output as written (``cflue``)."""
    item_kind = ItemKind(kind)
    read: dict[str, str | None] = {}
    for name in names:
        extractor = answer_extractor(name)
        if extractor.reads(item_kind, labels):
            text = output if extractor.as_written else output.strip()
            read[name] = extractor.read(item_kind, text, labels)
    return read
