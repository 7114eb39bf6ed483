"""The query planner's statistics of a SQLite database, gathered again after an import.

Without statistics SQLite chooses indexes by rule of thumb: an equality on an index is
taken to match about ten rows.  On 40,000 imported items the review queue's look for an
item whose key the person already saw (``db.reveals.first_revealed_item``) then walked
every open item by its status, with two subqueries each, instead of the person's few
reveals: about 30 ms a move in place of 10 (``bench/bench_tui.py``, queue only).  SQLite's own
advice is ``ANALYZE`` under an analysis limit (a sample of each index: fast on any size);
an import is the write that changes the tables' sizes most, so it gathers them, in its
own transaction (a file whose import is rolled back leaves them as they were).

PostgreSQL keeps its statistics itself (autovacuum analyzes a table whose rows changed
by a tenth) and estimates sizes from the table files meanwhile: nothing to do there.
"""

from __future__ import annotations

from sqlalchemy import text
from sqlmodel import Session

ANALYSIS_LIMIT = 400
"""Rows SQLite samples of each index (its documentation: 100 to 1,000 suit most uses)."""


def gather_statistics(session: Session) -> None:
    """Bring the planner's statistics of every table up to date (SQLite; nothing on
    PostgreSQL), inside ``session``'s transaction."""
    if session.get_bind().dialect.name != "sqlite":
        return
    session.execute(text(f"PRAGMA analysis_limit = {ANALYSIS_LIMIT}"))
    session.execute(text("ANALYZE"))
