"""Counts in words, said the same way by the CLI, the app and the report."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["a_or_an", "agreeing", "all_of", "counted", "few_of", "named", "time_taken"]


def counted(n: int, singular: str, plural: str | None = None) -> str:
    """``1 annotator``, ``3 annotators``, ``1,200 items``, ``2 item revisions``."""
    return f"{n:,} {singular if n == 1 else (plural or singular + 's')}"


def all_of(n: int, singular: str, plural: str | None = None) -> str:
    """Every one of a count: ``the one item``, ``all 8 items``."""
    return f"the one {singular}" if n == 1 else f"all {counted(n, singular, plural)}"


def named(singular: str, names: Sequence[object], plural: str | None = None) -> str:
    """The word that agrees with how many are named, then them: ``run 3``, ``runs 3, 4``."""
    word = singular if len(names) == 1 else (plural or singular + "s")
    return f"{word} {', '.join(map(str, names))}"


def few_of(names: Sequence[object], shown: int = 3) -> str:
    """A few of many names, then how many more: ``a:1, a:2, a:3 and 4 more``."""
    listed = ", ".join(map(str, names[:shown]))
    more = len(names) - shown
    return f"{listed} and {more:,} more" if more > 0 else listed


def agreeing(n: int, singular: str, plural: str) -> str:
    """The word that agrees with a count: a verb (``agreeing(1, "has", "have")`` is
    ``has``) or one that stands for what was counted (``it`` or ``them``)."""
    return singular if n == 1 else plural


def a_or_an(word: object) -> str:
    """The word with its indefinite article by its first letter: ``an annotator``, ``a lead``."""
    text = str(word)
    return f"{'an' if text[:1].lower() in 'aeiou' else 'a'} {text}"


def time_taken(seconds: float) -> str:
    """A judgment's time: ``42 s``, or ``untimed`` for 0, which means none was recorded (a
    judgment from the command line or a sheet), not an instant one."""
    return f"{seconds:.0f} s" if seconds > 0 else "untimed"
