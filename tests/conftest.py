"""Shared fixtures: every test works on its own database in tmp_path."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from db.engine import Database, open_database

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
CFLUE_KNOWLEDGE = ROOT.parent / "shared" / "data" / "cflue" / "knowledge.json"
PG_URL_ENV = "VETBENCH_TEST_PG_URL"


@pytest.fixture(autouse=True)
def _isolated_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Never read a user's real database or caches."""
    monkeypatch.delenv("VETBENCH_DB", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "test.db"


@pytest.fixture
def database(db_path: Path) -> Iterator[Database]:
    db = open_database(db_path)
    yield db
    db.dispose()


@pytest.fixture
def cflue_knowledge() -> Path:
    if not CFLUE_KNOWLEDGE.exists():
        pytest.skip(f"real CFLUE data not present at {CFLUE_KNOWLEDGE}")
    return CFLUE_KNOWLEDGE


def postgres_url() -> str | None:
    return os.environ.get(PG_URL_ENV) or None
