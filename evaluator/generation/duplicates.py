"""Flag generated items that nearly repeat an item already in the database.

Models asked for many items repeat themselves; reviewers should see that, as
they do for imported items.  The same detector, threshold and ``duplicate`` flag
as import are used (``db.flags.check_duplicates``), once for a whole run.
"""

from __future__ import annotations

from collections.abc import Collection

from db.audit import record_event
from db.engine import Database
from db.flags import check_duplicates
from db.items import item_sources
from db.vocabulary import GENERATE_ACTION


def flag_duplicates(db: Database, new_ids: Collection[str], actor: str) -> int:
    """Mark each of ``new_ids`` that nearly repeats an earlier item; returns how many were
    marked.  The links are recorded in ``actor``'s name with one ``generate`` event naming
    their sources (on PostgreSQL a member's links need it: ``db.guards``)."""
    if not new_ids:
        return 0
    with db.transaction() as session:
        marked = check_duplicates(session, new_ids)
        if marked:
            sources = item_sources(session, new_ids)
            record_event(
                session, actor, GENERATE_ACTION, "duplicates", sources=sources, duplicates=marked
            )
        return marked
