"""Shared fixtures: every test works on its own database in tmp_path."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_openai_server import FakeOpenAIServer

from db.engine import Database, open_database

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
CFLUE_KNOWLEDGE = ROOT.parent / "shared" / "data" / "cflue" / "knowledge.json"
PG_URL_ENV = "VETBENCH_TEST_PG_URL"
TEST_MODEL_CACHE = ROOT / ".cache" / "vetbench-test"  # gitignored


@pytest.fixture(autouse=True, scope="session")
def _shared_model_cache() -> Iterator[None]:
    """Converted models (the demo model's half-minute GGUF conversion) are cached once
    per checkout, shared by every test and test run, never in the user's own cache."""
    previous = os.environ.get("VETBENCH_CACHE")
    os.environ["VETBENCH_CACHE"] = str(TEST_MODEL_CACHE)
    yield
    if previous is None:
        os.environ.pop("VETBENCH_CACHE", None)
    else:
        os.environ["VETBENCH_CACHE"] = previous


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


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest, db_path: Path) -> Iterator[str]:
    """A fresh, empty database: a SQLite file, and (when VETBENCH_TEST_PG_URL names a
    server) a new PostgreSQL database created for this test and dropped after it."""
    if request.param == "sqlite":
        yield str(db_path)
        return
    server_url = postgres_url()
    if server_url is None:
        pytest.skip(f"no PostgreSQL server ({PG_URL_ENV} not set)")
    yield from fresh_postgres_database(server_url)


@pytest.fixture
def database(database_url: str) -> Iterator[Database]:
    """The migrated database behind ``database_url``, on SQLite and on PostgreSQL."""
    db = open_database(database_url)
    yield db
    db.dispose()


def fresh_postgres_database(server_url: str) -> Iterator[str]:
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    name = f"vetbench_test_{uuid.uuid4().hex[:12]}"
    admin = create_engine(server_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield make_url(server_url).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture
def cflue_knowledge() -> Path:
    if not CFLUE_KNOWLEDGE.exists():
        pytest.skip(f"real CFLUE data not present at {CFLUE_KNOWLEDGE}")
    return CFLUE_KNOWLEDGE


def postgres_url() -> str | None:
    return os.environ.get(PG_URL_ENV) or None


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    """A fake OpenAI-compatible server on 127.0.0.1 with no default answer (tests script it)."""
    with FakeOpenAIServer() as running:
        yield running
