"""Where generated text ends: at the first stop string, never earlier.

Every backend cuts its output at the first stop string (a blank line, a new
question) with :func:`cut_at_stop` (while generating) or :func:`finished_text`
(an answer that came back whole), and otherwise at end-of-sequence or its token
budget.  No backend stops because the text so far already reads as an answer:
the lenient reader lets a later span win (the last one, or one after an answer
marker), so any continuation could change the reading, and a local run that cut
there would read differently from a served one, which cannot cut there.
"""

from __future__ import annotations

from collections.abc import Sequence


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
