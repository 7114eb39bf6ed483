"""Where generated text ends: at the first stop string, never earlier.

Every backend cuts its output at the first stop string (a blank line, a new
question) with :func:`cut_at_stop` (while generating) or :func:`finished_text`
(an answer that came back whole), and otherwise at end-of-sequence or its token
budget.  No backend stops because the text so far already reads as an answer:
the lenient reader lets a later span win (the last one, or one after an answer
marker), so any continuation could change the reading, and a local run that cut
there would read differently from a served one, which cannot cut there.

A budget can end inside a character: byte-level tokens carry one or two bytes of a
three-byte Chinese character, and decoding an unfinished character gives one U+FFFD
(the replacement character).  :func:`without_unfinished_character` drops it from a
budget-cut answer, local or served (``transformers serve`` decodes a whole answer and
sends it), as ``tokenizers``' ``DecodeStream``, which servers that decode token by token
use, holds such an ending back until the next token finishes it: here none comes.
"""

from __future__ import annotations

from collections.abc import Sequence

UNFINISHED = "\ufffd"
"""What decoding gives for the bytes of a character cut off at the end: one U+FFFD."""


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


def without_unfinished_character(text: str) -> str:
    """A budget-cut answer without the character its last tokens began and never
    finished: decoding ends such bytes in one U+FFFD, dropped here (only that last one:
    one the model wrote earlier in the text stays).  ``DecodeStream`` is not used for
    this: it withholds a whole token, so the finished characters in the same token as
    the unfinished one's first bytes would go too, and only fast tokenizers have it.
    A U+FFFD the model wrote as its very last character when the budget ran out reads
    the same and goes too, as it does in ``DecodeStream``."""
    return text.removesuffix(UNFINISHED)
