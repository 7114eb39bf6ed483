"""Every benchmark starts the way its docstring says to run it,
``.venv/bin/python bench/NAME.py``: from another folder, with only ``bench/`` on the
path as Python puts it there for a script (``--help``: nothing is measured)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = sorted(
    path
    for path in (ROOT / "bench").glob("*.py")
    if path.name != "__init__.py" and f"bench/{path.name}" in path.read_text(encoding="utf-8")
)


def test_every_benchmark_says_how_to_run_it() -> None:
    """A benchmark whose docstring names no command line would be missed below."""
    assert len(SCRIPTS) >= 10


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: path.stem)
def test_the_benchmark_starts_as_its_docstring_says(script: Path, tmp_path: Path) -> None:
    started = subprocess.run(
        [sys.executable, str(script), "--help"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert started.returncode == 0, started.stderr
    assert "usage:" in started.stdout


def test_the_review_benchmarks_database_reads_back_as_the_app_reads_it(tmp_path: Path) -> None:
    """``bench/review_db.py`` writes rows by hand (Core inserts, for speed), so it falls
    behind the schema without a word: once revisions carried their own kind, every item it
    built had kind '' and ``bench_tui.py`` died on its first item."""
    from sqlmodel import select

    from bench.review_db import build_review_database
    from db.engine import open_database
    from db.items import get_item
    from db.models import Item
    from db.vocabulary import ItemKind
    from reviewer.queue import ReviewQueue

    path = tmp_path / "review.db"
    build_review_database(path, items=25)
    database = open_database(path)
    try:
        with database.session() as session:
            ids = session.exec(select(Item.id)).all()
            kinds = {item.kind for item in (get_item(session, item_id) for item_id in ids) if item}
        assert len(ids) == 25 and kinds == set(ItemKind)
        assert ReviewQueue(database, "bench").fetch_next() is not None
    finally:
        database.dispose()
