"""Flag generated items that nearly repeat an item already in the database.

Models asked for many items repeat themselves; reviewers should see that, as
they do for imported items.  The same detector, threshold and ``duplicate`` flag
as import are used (``db.flags.check_duplicates``), once for a whole run.
"""

from __future__ import annotations

from collections.abc import Collection

from db.engine import Database
from db.flags import check_duplicates


def flag_duplicates(db: Database, new_ids: Collection[str]) -> int:
    """Mark each of ``new_ids`` that nearly repeats an earlier item; returns how many were marked."""
    if not new_ids:
        return 0
    with db.transaction() as session:
        return check_duplicates(session, new_ids)
