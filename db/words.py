"""Counts in words, said the same way by the CLI, the app and the report."""

from __future__ import annotations

__all__ = ["counted"]


def counted(n: int, singular: str, plural: str | None = None) -> str:
    """``1 annotator``, ``3 annotators``, ``1,200 items``, ``2 item revisions``."""
    return f"{n:,} {singular if n == 1 else (plural or singular + 's')}"
