"""The API response cache: one ``ApiResponse`` row per distinct request, so re-runs are free.

A request's key is the SHA-256 of its model, base URL, messages and parameters, and of
what the server says it serves under that model name (the weights, ``root``, and the
server's version, where it says them: ``ServerFacts.identity``), as canonical JSON: any
change to what would be sent, or other weights behind the same name, is a different key.
A server that says neither gets the key it had before servers were asked, so answers
cached then are still found.  Only successful responses are stored, and only of requests
whose answer is the same each time (:func:`reproducible`).  On PostgreSQL each login
role reads only the responses it stored (``ApiResponse.db_role``): the owner too, whom
row-level security does not bind, so the lookup names the role itself.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sqlalchemy import ColumnElement, literal, literal_column
from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from sqlmodel import Session, col, select

from db.engine import Database
from db.json_types import JsonObject
from db.models import ApiResponse


def cache_key(
    *,
    model: str,
    base_url: str,
    messages: Sequence[Mapping[str, str]],
    params: Mapping[str, Any],
    server: Mapping[str, str] | None = None,
) -> str:
    """A stable hash of everything that determines an API response; ``server`` (what it
    says it serves) counts only when it says something, so keys without it stay valid."""
    request: dict[str, Any] = {
        "model": model,
        "base_url": base_url.rstrip("/"),
        "messages": [dict(message) for message in messages],
        "params": dict(params),
    }
    if server:
        request["server"] = dict(server)
    canonical = json.dumps(request, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def reproducible(params: Mapping[str, Any]) -> bool:
    """Whether asking again is the same request: greedy (temperature 0), or sampled with a
    seed or a named ``draw`` (``ChatRequest.draw``: the item it writes).  A sampled request
    with neither is a fresh draw each time, so a stored answer would make repeats and
    re-runs copies of one draw: it is never cached.  A temperature not sent is the
    server's default, 1 for OpenAI's API."""
    if params.get("temperature", 1.0) == 0:
        return True
    return params.get("seed") is not None or params.get("draw") is not None


def cache_note(cached: int, answers: int) -> str | None:
    """What a run says when answers came from the cache (nothing when none did): they are
    earlier answers, and a server that changed without saying so would not be seen."""
    if not cached:
        return None
    return (
        f"{cached:,} of {answers:,} answers from the response cache (asked before with the "
        "same requests); --no-cache asks the server again"
    )


class CacheUse:
    """How many of each run's answers came from the response cache, for :func:`cache_note`:
    the counts of the backend's client (API models have them: ``answer_counts``, answers
    and cached answers so far) when each run starts, and at the end."""

    def __init__(self, counts: Callable[[], tuple[int, int]] | None) -> None:
        self._counts = counts
        self._starts: list[tuple[int, tuple[int, int]]] = []  # (run id, counts then)

    @classmethod
    def of(cls, backend: object) -> CacheUse:
        """For ``backend``'s runs (a backend without a response cache counts nothing)."""
        return cls(getattr(backend, "answer_counts", None))

    def starting(self, run_id: int) -> None:
        if self._counts is not None:
            self._starts.append((run_id, self._counts()))

    def notes(self) -> dict[int, str]:
        """Each run's note (``12 of 37 answers from the response cache ...``) where any
        answer came from the cache."""
        if self._counts is None:
            return {}
        ends = [counts for _run, counts in self._starts[1:]] + [self._counts()]
        notes = {}
        for (run_id, (answers, cached)), (answers_end, cached_end) in zip(
            self._starts, ends, strict=True
        ):
            note = cache_note(cached_end - cached, answers_end - answers)
            if note:
                notes[run_id] = note
        return notes


class ResponseCache:
    """Reads and writes cached responses; safe to use from several threads at once."""

    def __init__(self, database: Database) -> None:
        self.database = database

    def get(self, key: str) -> JsonObject | None:
        """The stored response, or None (also when the database cannot be read: a miss)."""
        try:
            with self.database.session() as session:
                row = _own_response(session, key)
                return None if row is None else dict(row.response)
        except SQLAlchemyError:
            return None

    def put(self, key: str, model: str, response: Mapping[str, Any]) -> bool:
        """Store a response unless one is already stored under ``key`` (first one wins).

        A failed write loses only the saving on a later run, never the answer in
        hand, so it is reported (False) rather than raised.
        """
        try:
            with self.database.transaction() as session:
                if _own_response(session, key) is None:
                    session.add(ApiResponse(key=key, model=model, response=dict(response)))
        except IntegrityError:
            return True  # another worker stored the same request first (PostgreSQL race)
        except SQLAlchemyError:
            return False
        return True


def _own_role(session: Session) -> ColumnElement[str]:
    """The ``db_role`` this connection's rows carry: the login role on PostgreSQL (the
    server stamps it), ``""`` on SQLite."""
    if session.connection().dialect.name == "postgresql":
        return literal_column("session_user")
    return literal("")


def _own_response(session: Session, key: str) -> ApiResponse | None:
    query = select(ApiResponse).where(
        col(ApiResponse.key) == key, col(ApiResponse.db_role) == _own_role(session)
    )
    return session.exec(query).first()
