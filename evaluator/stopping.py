"""Where generated text ends: stop strings, and the test that an answer is already whole.

Every backend cuts its output at the first stop string (a blank line, a new
question) with :func:`cut_at_stop` (while generating) or :func:`finished_text`
(an answer that came back whole).  A backend that can stop one sequence of a
batch early also asks the request's ``complete`` test, built by the item kind's
completion rule (``evaluator.kinds``), which is one of these:

- :func:`whole_answer_read` (ordering): the output reads as a full permutation of
  the item's letters (``D, A, C, B``); no more letters can belong to it;
- :func:`answer_line_ended` (multiple choice): a line that reads as an answer has
  been ended by a line break (``B`` alone could still grow into ``BD``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

Extractor = Callable[[str, Sequence[str]], "str | None"]
"""Reads the canonical answer out of an output for an item's labels (None: unparsed)."""

CompletionTest = Callable[[str], bool]
"""``complete(text_so_far)``: True once the text holds a whole answer."""


def cut_at_stop(text: str, stops: Sequence[str]) -> str | None:
    """``text`` up to the first stop string, or None when none occurs.

    Stops count only after the output's first non-blank character, so a model that
    opens with a blank line is not cut off before it answers.
    """
    start = len(text) - len(text.lstrip())
    if start == len(text):
        return None
    found = [position for stop in stops if stop and (position := text.find(stop, start)) >= 0]
    return text[: min(found)] if found else None


def finished_text(text: str, stops: Sequence[str]) -> str:
    """A whole answer as a backend returns it: cut at its first stop string, if any."""
    cut = cut_at_stop(text, stops)
    return text if cut is None else cut


def whole_answer_read(extract: Extractor, labels: Sequence[str]) -> CompletionTest:
    """Complete as soon as the text so far reads as an answer (a full order)."""
    item_labels = tuple(labels)

    def complete(text: str) -> bool:
        return extract(text, item_labels) is not None

    return complete


def answer_line_ended(extract: Extractor, labels: Sequence[str]) -> CompletionTest:
    """Complete once the text up to its last line break reads as an answer."""
    item_labels = tuple(labels)

    def complete(text: str) -> bool:
        finished, newline, _rest = text.rpartition("\n")
        if not newline or not finished.strip():
            return False
        return extract(finished, item_labels) is not None

    return complete
