"""When a generated answer is complete, so a backend can stop that sequence at once.

Backends also stop at a stop string (a blank line, a new question) and at their
token budget; this test ends generation earlier, as soon as the text already holds
a whole answer:

- ordering: the output reads as a full permutation of the item's letters
  (``D, A, C, B``); no more letters can belong to it;
- multiple choice: a line that reads as an answer has been ended by a line break
  (``B`` alone could still grow into ``BD``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from db.vocabulary import ItemKind
from evaluator.extraction import extract_answer


def answer_is_complete(kind: ItemKind | str, labels: Sequence[str]) -> Callable[[str], bool]:
    """A test ``complete(text_so_far) -> bool`` for one item's answers."""
    item_kind = ItemKind(kind)
    item_labels = tuple(labels)

    if item_kind is ItemKind.ORDERING:

        def complete_order(text: str) -> bool:
            return extract_answer(item_kind, text, item_labels) is not None

        return complete_order

    def complete_choice(text: str) -> bool:
        finished, newline, _rest = text.rpartition("\n")
        if not newline or not finished.strip():
            return False
        return extract_answer(item_kind, finished, item_labels) is not None

    return complete_choice
