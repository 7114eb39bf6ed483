"""The query planner's statistics of a SQLite database, gathered again after an import.

Without statistics SQLite chooses indexes by rule of thumb: an equality on an index is
taken to match about ten rows.  On 40,000 imported items the review queue's look for an
item whose key the person already saw (``db.reveals.first_revealed_item``) then walked
every open item by its status, with two subqueries each, instead of the person's few
reveals: about 30 ms a move in place of 10 (``bench/bench_tui.py``, queue only).  SQLite's own
advice is ``ANALYZE`` under an analysis limit (a sample of each index: fast on any size);
an import is the write that changes the tables' sizes most, so it gathers them, in its
own transaction (a file whose import is rolled back leaves them as they were); migration
``0025`` gathers them once for a database imported before.

PostgreSQL keeps its statistics itself (autovacuum analyzes a table whose rows changed
by a tenth) and estimates sizes from the table files meanwhile: nothing to do there.
"""

from __future__ import annotations

from sqlalchemy import Connection, text
from sqlmodel import Session

ANALYSIS_LIMIT = 400
"""Rows SQLite samples of each index (its documentation: 100 to 1,000 suit most uses)."""


def gather_statistics(executor: Session | Connection) -> None:
    """Bring the planner's statistics of every table up to date (SQLite; nothing on
    PostgreSQL), inside ``executor``'s transaction (an import's session, a migration's
    connection)."""
    bind = executor.get_bind() if isinstance(executor, Session) else executor
    if bind.dialect.name != "sqlite":
        return
    executor.execute(text(f"PRAGMA analysis_limit = {ANALYSIS_LIMIT}"))
    executor.execute(text("ANALYZE"))
