"""Eight annotator processes judging into one database at once lose nothing and see no error.

The same harness as ``bench/concurrent_annotators.py`` (which runs it for 60 s and
prints throughput); here it runs for VETBENCH_CONCURRENCY_SECONDS (default 10 s),
on SQLite and on PostgreSQL when a server is available.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bench.concurrent_annotators import run_annotators, sqlite_integrity
from db.engine import Database

pytestmark = pytest.mark.slow


def test_eight_annotators_at_once_lose_no_judgment(database: Database, database_url: str) -> None:
    # ``database``: migrated from the template (the harness seeds and checks on its own).
    # 10 s: some 870 judgments by eight processes contending for the write lock (87/s,
    # README) find what losing one takes; the bench runs the same for 60 s, for figures.
    seconds = float(os.environ.get("VETBENCH_CONCURRENCY_SECONDS", "10"))
    # 750 items: 870 judgments are two fifths of what 750 items with an overlap of 3 take;
    # seeding more was time spent unused.
    result = run_annotators(database_url, processes=8, seconds=seconds, items=750, overlap=3)
    print(result.summary())
    assert result.errors == []
    assert result.missing == []
    assert result.logged > 0
    assert result.stored == result.logged
    if "://" not in database_url:
        assert sqlite_integrity(Path(database_url)) == "ok"
