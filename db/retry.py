"""Run a write transaction again when the database aborted it to break a conflict.

PostgreSQL resolves a deadlock (or a serialization conflict) by aborting one of
the transactions involved; that one is safe to run again from the start.  Every
writer that can meet another in such a cycle (judging, claiming the next item)
wraps its whole transaction in :func:`retry_transient`.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import TypeVar

from sqlalchemy.exc import DBAPIError

from db.engine import is_transient_conflict

TRANSIENT_RETRIES = 5
"""Attempts at a transaction that the database keeps aborting as a deadlock victim."""

Result = TypeVar("Result")


def retry_transient(
    transaction: Callable[[], Result], *, attempts: int = TRANSIENT_RETRIES
) -> Result:
    """``transaction()``, run again (after a short, growing, random pause) while it fails
    with a transient conflict; any other error, or the last attempt's, is raised at once."""
    for attempt in range(attempts):
        try:
            return transaction()
        except DBAPIError as error:
            if not is_transient_conflict(error) or attempt == attempts - 1:
                raise
            time.sleep(random.uniform(0.01, 0.05) * 2**attempt)
    raise ValueError(f"attempts must be at least 1, not {attempts}")
