"""Counts in words, said the same way by the CLI, the app and the report."""

from __future__ import annotations

__all__ = ["agreeing", "counted"]


def counted(n: int, singular: str, plural: str | None = None) -> str:
    """``1 annotator``, ``3 annotators``, ``1,200 items``, ``2 item revisions``."""
    return f"{n:,} {singular if n == 1 else (plural or singular + 's')}"


def agreeing(n: int, singular: str, plural: str) -> str:
    """The verb that agrees with a count: ``agreeing(1, "has", "have")`` is ``has``."""
    return singular if n == 1 else plural
