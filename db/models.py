"""The SQLModel tables: items and their revisions, item flags, people, judgments, the keys
people saw before judging, decisions, guidelines, gold items, evaluation runs,
predictions, generation rejects, settings and the audit log.

Nothing is ever deleted: an edit adds an ``ItemRevision``, undo retracts a
``Judgment`` or a ``Decision``, a changed mind is a newer ``Decision``, a new text
of the guidelines is a new version, a removed gold item keeps its row.  Enumerated values are
stored as plain strings (``db.vocabulary`` names them) so the schema is the same
on SQLite and PostgreSQL.

Schema changes go through Alembic (``db/migrations``): change a model here, add
a migration, and ``tests/test_migrations.py`` checks that the two agree.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import (
    JSON,
    CheckConstraint,
    Column,
    ColumnElement,
    DateTime,
    Dialect,
    Index,
    UniqueConstraint,
    and_,
    text,
)
from sqlalchemy.types import TypeDecorator
from sqlmodel import Field, SQLModel, col

from db.vocabulary import (
    DecisionReason,
    FailureKind,
    FlagName,
    FlagSource,
    ItemKind,
    ItemStatus,
    Role,
    RunStatus,
    Verdict,
)

if TYPE_CHECKING:
    from db.json_types import JsonObject
else:
    # What pydantic sees of a JSON column: it cannot build a schema for the recursive alias
    # (it recurses without end), and it never validates a table model; the column's JSON
    # type does the storing.
    JsonObject = dict[str, object]

__all__ = [
    "ApiResponse",
    "AuditEvent",
    "Claim",
    "Decision",
    "DecisionReason",
    "EvalRun",
    "FailureKind",
    "FlagName",
    "FlagSource",
    "GenerationReject",
    "GoldItem",
    "Guidelines",
    "Item",
    "ItemKind",
    "ItemRevision",
    "ItemStatus",
    "Judgment",
    "KeyReveal",
    "Person",
    "Prediction",
    "Release",
    "ReleaseItem",
    "Role",
    "RunStatus",
    "Setting",
    "StoredFlag",
    "Verdict",
    "utcnow",
]


def utcnow() -> datetime:
    """Timezone-aware current time in UTC (all stored times are UTC)."""
    return datetime.now(UTC)


class UTCDateTime(TypeDecorator[datetime]):
    """A timestamp that is always timezone-aware UTC in Python, on every backend.

    SQLite keeps no zone and hands back naive values; without this, times read
    back could not be compared with times made in the same process.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is not None and value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return value.astimezone(UTC) if value is not None else None

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _timestamp(**kwargs: Any) -> Any:
    return Field(default_factory=utcnow, sa_column=Column(UTCDateTime(), nullable=False, **kwargs))


def _optional_timestamp() -> Any:
    return Field(default=None, sa_column=Column(UTCDateTime(), nullable=True))


def _json(default: Any) -> Any:
    return Field(default_factory=default, sa_column=Column(JSON, nullable=False))


class Item(SQLModel, table=True):
    """A benchmark item. Its text lives in revisions; ``current_revision`` names the live one."""

    __tablename__ = "item"
    # The review queue walks open items of one status in id order (reviewer/queue.py).
    __table_args__ = (Index("ix_item_status_id", "status", "id"),)

    id: str = Field(primary_key=True, max_length=255)  # stable and readable: "econ-test:17"
    kind: str = Field(index=True, max_length=16)  # ItemKind of the current revision
    source: str = Field(index=True, max_length=255)
    source_ref: str = Field(default="", max_length=255)  # where in the source: "line 18"
    language: str = Field(default="en", max_length=16)
    status: str = Field(default=ItemStatus.PENDING, index=True, max_length=16)
    current_revision: int = 1
    suspected_duplicate_of: str | None = Field(default=None, foreign_key="item.id", index=True)
    duplicate_similarity: float | None = None  # 0-100, rapidfuzz ratio
    meta: JsonObject = _json(dict)  # format-specific extras, e.g. CFLUE's exam name
    created_at: datetime = _timestamp()


class ItemRevision(SQLModel, table=True):
    """One version of an item's text and key; judgments point at the revision they judged."""

    __tablename__ = "item_revision"
    __table_args__ = (UniqueConstraint("item_id", "number"),)

    id: int | None = Field(default=None, primary_key=True)
    item_id: str = Field(foreign_key="item.id", index=True)
    number: int  # 1, 2, ... per item
    # The kind this revision's key is written in and was judged under; the item's
    # ``kind`` is its current revision's (an edit may turn multi into single).
    kind: str = Field(max_length=16)  # ItemKind
    prompt: str  # the scenario (ordering) or the question (MCQ)
    choices: dict[str, str] = _json(dict)  # ordered label -> text (events or options)
    key: str = Field(max_length=32)  # canonical answer, see db.answers
    explanation: str | None = None
    author: str = Field(default="import", max_length=255)
    change_note: str = ""  # why this revision exists: "import", "edit: fixed typo", ...
    provenance: JsonObject = _json(dict)  # file, line, model, prompt hash, raw response
    created_at: datetime = _timestamp()


def is_current_revision() -> ColumnElement[bool]:
    """The condition that pairs an ``Item`` with its current ``ItemRevision`` (a join or a filter)."""
    return and_(
        col(ItemRevision.item_id) == col(Item.id),
        col(ItemRevision.number) == col(Item.current_revision),
    )


class StoredFlag(SQLModel, table=True):
    """A flag on one item revision with the evidence that raised it (``db.flags`` writes them).

    Flags belong to a revision: a new revision gets its own (computed as it is made),
    the old revision keeps its own.  A hint for reviewers, never a verdict.
    """

    __tablename__ = "item_flag"
    __table_args__ = (Index("ix_item_flag_item_revision", "item_id", "revision_number"),)

    id: int | None = Field(default=None, primary_key=True)
    item_id: str = Field(foreign_key="item.id", max_length=255)
    revision_number: int
    name: str = Field(index=True, max_length=32)  # FlagName
    source: str = Field(default=FlagSource.AUTO, max_length=16)  # FlagSource
    evidence: JsonObject = _json(dict)  # "summary" for people, and what raised it
    created_at: datetime = _timestamp()


class Person(SQLModel, table=True):
    __tablename__ = "person"

    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(unique=True, max_length=255)
    role: str = Field(default=Role.ANNOTATOR, max_length=16)
    created_at: datetime = _timestamp()
    # The newest judgment id when a lead let this person try the qualification again:
    # only calibration answers after it count (db.qualification).
    calibration_reset_after: int | None = None


class Judgment(SQLModel, table=True):
    """An annotator's review of one item revision. Undo sets ``retracted``; rows stay."""

    __tablename__ = "judgment"
    __table_args__ = (Index("ix_judgment_item_annotator", "item_id", "annotator_id"),)

    id: int | None = Field(default=None, primary_key=True)
    item_id: str = Field(foreign_key="item.id", index=True)
    revision_id: int = Field(foreign_key="item_revision.id", index=True)
    revision_number: int
    annotator_id: int = Field(foreign_key="person.id", index=True)
    blind_answer: str = Field(max_length=32)  # canonical, given before the key was shown
    verdict: str = Field(max_length=16)  # Verdict
    alternative_orders: list[str] = _json(list)  # other valid orders, for "ambiguous"
    corrected_key: str | None = Field(default=None, max_length=32)  # for "wrong-key"
    duplicate_of: str | None = Field(default=None, max_length=255)  # for "duplicate"
    comment: str = ""
    seconds: float = 0.0  # time spent on the item
    created_at: datetime = _timestamp()
    retracted: bool = False
    retracted_at: datetime | None = _optional_timestamp()
    guidelines_version: int | None = None  # the guidelines in force when it was made
    # Set when the judged revision was a gold item: a calibration judgment, counted in
    # gold accuracy only, never in agreement or the item's status (db.item_status).
    gold_id: int | None = Field(default=None, foreign_key="gold_item.id")


class Decision(SQLModel, table=True):
    """A lead's decision on an item; the newest one not undone counts, older ones are history.

    Undo (``vetbench undo-decision``, ``u`` in F3) sets ``retracted_at``; the row stays.
    """

    __tablename__ = "decision"

    id: int | None = Field(default=None, primary_key=True)
    item_id: str = Field(foreign_key="item.id", index=True)
    lead_id: int = Field(foreign_key="person.id")
    status: str = Field(max_length=16)  # ItemStatus.APPROVED or ItemStatus.REJECTED
    revision_number: int  # the revision the decision is about
    final_key: str | None = Field(default=None, max_length=32)
    reason: str | None = Field(default=None, max_length=32)  # DecisionReason
    comment: str = ""
    created_at: datetime = _timestamp()
    retracted_at: datetime | None = _optional_timestamp()
    retracted_by_id: int | None = Field(default=None, foreign_key="person.id")


class Guidelines(SQLModel, table=True):
    """One version of the review guidelines (Markdown), written by a lead; the newest counts."""

    __tablename__ = "guidelines"

    # 1, 2, ...: db.guidelines numbers them
    version: int = Field(primary_key=True, sa_column_kwargs={"autoincrement": False})
    text: str
    sha256: str = Field(max_length=64)
    file_name: str = Field(default="", max_length=255)  # the file it was set from
    author_id: int = Field(foreign_key="person.id")
    created_at: datetime = _timestamp()


class GoldItem(SQLModel, table=True):
    """An item revision whose verdict and answer a lead knows: served to annotators for
    calibration.  Removing it sets ``removed_at``; at most one row per item is active."""

    __tablename__ = "gold_item"
    __table_args__ = (
        Index(
            "ux_gold_item_active",
            "item_id",
            unique=True,
            sqlite_where=text("removed_at IS NULL"),
            postgresql_where=text("removed_at IS NULL"),
        ),
    )

    id: int | None = Field(default=None, primary_key=True)
    item_id: str = Field(foreign_key="item.id", index=True)
    revision_number: int  # gold holds for this revision only
    verdict: str = Field(max_length=16)  # Verdict
    answer: str = Field(max_length=32)  # the right blind answer, canonical
    note: str = ""
    lead_id: int = Field(foreign_key="person.id")
    created_at: datetime = _timestamp()
    removed_at: datetime | None = _optional_timestamp()
    removed_by_id: int | None = Field(default=None, foreign_key="person.id")


class Claim(SQLModel, table=True):
    """An annotator has an item open; spreads concurrent annotators over different items."""

    __tablename__ = "claim"

    item_id: str = Field(foreign_key="item.id", primary_key=True)
    person_id: int = Field(foreign_key="person.id", primary_key=True)
    claimed_at: datetime = _timestamp()


class KeyReveal(SQLModel, table=True):
    """A person saw the key of an item revision before judging it (``db.reveals``): the
    blind answer they gave first, and the seconds it took, stored when the key was shown.
    The first reveal of a revision is the one kept; nobody updates or deletes one."""

    __tablename__ = "key_reveal"
    __table_args__ = (CheckConstraint("seconds >= 0", name="ck_key_reveal_seconds"),)

    person_id: int = Field(foreign_key="person.id", primary_key=True)
    item_id: str = Field(foreign_key="item.id", primary_key=True)
    revision_number: int = Field(primary_key=True)
    blind_answer: str = Field(max_length=32)  # canonical, as a judgment stores it
    seconds: float = 0.0  # time spent on the item until the key was shown
    revealed_at: datetime = _timestamp()


class ReviewFilter(SQLModel, table=True):
    """The filter a person last chose with ``/`` in the review app (``db.review_filters``),
    restored when they open it again."""

    __tablename__ = "review_filter"

    person_id: int = Field(foreign_key="person.id", primary_key=True)
    value: dict[str, Any] = _json(dict)
    updated_at: datetime = _timestamp()


class Setting(SQLModel, table=True):
    """Project settings stored in the database, e.g. ``overlap`` (judgments per item)."""

    __tablename__ = "setting"

    key: str = Field(primary_key=True, max_length=64)
    value: str


class Release(SQLModel, table=True):
    """A frozen, named version of the benchmark (``db.releases``): never updated or deleted.

    Its items (``release_item``) are written before it, in the same transaction: once
    the release row exists, triggers refuse any item added to it, and any UPDATE or
    DELETE of either table, on both backends."""

    __tablename__ = "release"

    name: str = Field(primary_key=True, max_length=255)
    hash: str = Field(max_length=64)  # sha256 over the items' ids and content hashes
    note: str = ""
    selection: JsonObject = _json(dict)  # status, kinds, sources it was made from
    item_count: int
    figures: JsonObject = _json(dict)  # the review figures when it was made
    created_by_id: int = Field(foreign_key="person.id")
    created_at: datetime = _timestamp()


class ReleaseItem(SQLModel, table=True):
    """One item of a release: the revision frozen, and the hash of what was reviewed."""

    __tablename__ = "release_item"

    # No foreign key to ``release``: the items come first (see ``Release``).
    release_name: str = Field(primary_key=True, max_length=255)
    item_id: str = Field(foreign_key="item.id", primary_key=True, max_length=255)
    revision_number: int
    content_hash: str = Field(max_length=64)
    # As they were: a metadata import may change an item's later without a revision.
    language: str = Field(max_length=16)
    source_ref: str = Field(default="", max_length=255)
    meta: JsonObject = _json(dict)
    status: str = Field(max_length=16)  # ItemStatus when frozen


class EvalRun(SQLModel, table=True):
    """One evaluation of one model on a frozen set of items."""

    __tablename__ = "eval_run"

    id: int | None = Field(default=None, primary_key=True)
    model: str = Field(max_length=512)
    backend: str = Field(max_length=32)  # "transformers", "openai"
    mode: str = Field(default="generate", max_length=16)  # "generate" or "score"
    shots: int = 0
    params: JsonObject = _json(dict)  # device, dtype, batch size, base URL, template hash
    filters: JsonObject = _json(dict)  # status, kind, source, limit
    item_ids: list[str] = _json(list)  # the frozen evaluated set, in order
    # What the set is: a release's name, and always the hash of the items evaluated
    # (``db.releases.item_set_hash``), so runs on different sets are never mixed.
    release_name: str | None = Field(default=None, max_length=255, index=True)
    item_set_hash: str | None = Field(default=None, max_length=64, index=True)
    status: str = Field(default=RunStatus.RUNNING, max_length=16)
    host: str = Field(default="", max_length=255)
    error: str | None = None
    started_at: datetime = _timestamp()
    finished_at: datetime | None = _optional_timestamp()
    # PostgreSQL: the role that started it, stamped by the server; only it changes the run
    # and its predictions (db.guards, db.privileges).  None on SQLite.
    db_role: str | None = Field(default=None, max_length=255)


class Prediction(SQLModel, table=True):
    """A model's answer to one item in one run, written as soon as it is finished."""

    __tablename__ = "prediction"
    __table_args__ = (UniqueConstraint("run_id", "item_id"),)

    id: int | None = Field(default=None, primary_key=True)
    run_id: int = Field(foreign_key="eval_run.id", index=True)
    item_id: str = Field(foreign_key="item.id", index=True)
    revision_number: int
    prompt_hash: str = Field(max_length=64)
    prompt: str = ""  # the exact prompt sent (chat template applied)
    raw_output: str = ""
    parsed_answer: str | None = Field(default=None, max_length=32)
    correct: bool | None = None  # None when the prediction failed
    scores: JsonObject = _json(dict)  # pairwise accuracy, set F1, candidate log-likelihoods
    latency_s: float = 0.0
    failure_kind: str | None = Field(default=None, max_length=16)  # FailureKind
    error: str | None = None
    created_at: datetime = _timestamp()


class GenerationReject(SQLModel, table=True):
    """A generated item that failed validation, kept with the reason it failed."""

    __tablename__ = "generation_reject"

    id: int | None = Field(default=None, primary_key=True)
    source: str = Field(index=True, max_length=255)
    article_id: str = Field(max_length=255)
    sample_index: int = 0
    kind: str = Field(max_length=16)
    model: str = Field(max_length=512)
    prompt_hash: str = Field(max_length=64)
    raw_response: str
    reason: str
    created_at: datetime = _timestamp()


class ApiResponse(SQLModel, table=True):
    """Cache of API responses keyed by a hash of model, base URL, messages and parameters.

    Each role reads only the answers it cached itself (``db_role``: on PostgreSQL the
    server stamps ``session_user``; on SQLite ``""``, whoever holds the file): a cached
    answer is taken as the model's, so no one else may plant one (migration 0016).
    """

    __tablename__ = "api_response"

    key: str = Field(primary_key=True, max_length=64)
    db_role: str = Field(default="", primary_key=True, max_length=255)
    model: str = Field(max_length=512)
    response: JsonObject = _json(dict)
    created_at: datetime = _timestamp()


class AuditEvent(SQLModel, table=True):
    """Append-only log of who did what, when, from where (``db.audit`` writes it).

    Triggers refuse UPDATE and DELETE on both backends; on PostgreSQL the server
    stamps ``db_role`` (``session_user``) and ``created_at`` itself.
    """

    __tablename__ = "audit_event"

    id: int | None = Field(default=None, primary_key=True)
    actor: str = Field(index=True, max_length=255)  # the person acting (vetbench's name)
    action: str = Field(index=True, max_length=64)  # "import", "judge", "retract", "decide", ...
    target: str = Field(default="", index=True, max_length=255)  # an item id, a file, "run:3"
    payload: JsonObject = _json(dict)  # what changed
    os_login: str = Field(default="", max_length=255)  # the login that ran the command
    host: str = Field(default="", max_length=255)
    db_role: str | None = Field(default=None, max_length=255)  # PostgreSQL: session_user
    created_at: datetime = _timestamp(index=True)
