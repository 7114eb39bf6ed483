"""Full-text search over items' current text, done by the database itself.

The index holds one row per item: the current revision's prompt, events or choices
and explanation.  Triggers keep it current whenever a revision is made or an item
moves to another revision (import, re-import, edit, a lead's corrected key), so no
writer has to remember it.

- **SQLite**: an FTS5 table with the ``trigram`` tokenizer (SQLite 3.34 or newer),
  which matches any substring of three or more characters, in Chinese as in
  English, case-insensitively.  Its rowid is the id of the indexed revision.  A
  term shorter than three characters has no trigram, so it is looked for with
  ``instr`` over the index's own text: still inside the database, but a scan.
- **PostgreSQL**: a table ``item_search(item_id, body)`` with a GIN trigram index
  (``pg_trgm``), which ``ILIKE '%term%'`` uses.  Creating the extension needs the
  right to (pg_trgm is a trusted extension: a database owner may); without it the
  table is still kept and searched with ``ILIKE``, a scan, and
  :func:`search_note` says so.

A query (:mod:`db.search_query`: terms, ``in:`` fields, ``whole:`` terms, ``not:``
longer terms) matches an item when the fields it asks for hold every term, in any
case.  The index holds all of an item's text, so it narrows the candidates; the fields
are then checked in the database, and whole terms and ``not:`` in Python.  Case is compared as PostgreSQL's ``ILIKE`` compares it: each character
lowercased on its own (``É`` finds ``é``, ``İ`` finds ``i``, ``ǅ`` finds ``ǆ``).  SQLite's
own ``lower`` knows only ASCII and the trigram tokenizer folds an older Unicode, so on
SQLite every term is checked with :func:`fold_case` (a function registered on the
connection) over the indexed text; the index only narrows the rows to check, using the
parts of a term its folding agrees with.  A query holds at most :data:`MAX_TERMS`
terms and no NUL character (:class:`SearchError`).
"""

from __future__ import annotations

import contextlib
import functools
import json
import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import (
    JSON,
    BindParameter,
    ColumnElement,
    Connection,
    Select,
    TextClause,
    bindparam,
    cast,
    func,
    or_,
    select,
    text,
)
from sqlmodel import Session, col

from db.formats.cflue import EXAM_NAME
from db.models import Item, ItemRevision, is_current_revision
from db.privileges import quote_identifier, run_statements, trigger_function
from db.search_query import (
    MAX_TERMS,
    SearchError,
    SearchField,
    SearchQuery,
    fold_case,
    holds_term,
    parse_search,
    search_terms,
)

__all__ = [
    "EXAM_NAME",
    "MAX_TERMS",
    "MIN_INDEXED_CHARS",
    "SEARCH_TABLE",
    "SQLITE_TRIGGER_NAMES",
    "SearchError",
    "SearchQuery",
    "create_search_index",
    "drop_search_index",
    "exam_condition",
    "exam_name",
    "fold_case",
    "include_in_comparison",
    "is_search_table",
    "search_condition",
    "parse_search",
    "search_note",
    "search_terms",
]

SEARCH_TABLE = "item_search"
MIN_INDEXED_CHARS = 3  # a trigram index finds substrings of at least three characters
_FOLD_FUNCTION = "vetbench_fold_case"
_TRIGRAM_SINCE = (3, 34, 0)

# The body of one revision: prompt, every event or choice, explanation.
_SQLITE_BODY = (
    "{r}.prompt || ' ' || coalesce((SELECT group_concat(value, ' ') FROM json_each({r}.choices)), '')"
    " || ' ' || coalesce({r}.explanation, '')"
)


def _sqlite_statements() -> list[str]:
    new_body = _SQLITE_BODY.format(r="NEW")
    body = _SQLITE_BODY.format(r="r")
    return [
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {SEARCH_TABLE} USING fts5(body, tokenize='trigram')",
        # A new revision that is already current (the item was moved to it first).
        f"""CREATE TRIGGER IF NOT EXISTS item_search_on_revision AFTER INSERT ON item_revision
WHEN NEW.number = (SELECT current_revision FROM item WHERE id = NEW.item_id)
BEGIN
  DELETE FROM {SEARCH_TABLE} WHERE rowid IN
    (SELECT id FROM item_revision WHERE item_id = NEW.item_id);
  INSERT INTO {SEARCH_TABLE} (rowid, body) VALUES (NEW.id, {new_body});
END""",
        # The item moved to another revision (its revision may come right after).
        f"""CREATE TRIGGER IF NOT EXISTS item_search_on_item AFTER UPDATE OF current_revision ON item
BEGIN
  DELETE FROM {SEARCH_TABLE} WHERE rowid IN (SELECT id FROM item_revision WHERE item_id = NEW.id);
  INSERT INTO {SEARCH_TABLE} (rowid, body)
    SELECT r.id, {body} FROM item_revision r
    WHERE r.item_id = NEW.id AND r.number = NEW.current_revision;
END""",
        f"""CREATE TRIGGER IF NOT EXISTS item_search_on_delete BEFORE DELETE ON item
BEGIN
  DELETE FROM {SEARCH_TABLE} WHERE rowid IN (SELECT id FROM item_revision WHERE item_id = OLD.id);
END""",
        f"DELETE FROM {SEARCH_TABLE}",
        f"""INSERT INTO {SEARCH_TABLE} (rowid, body)
SELECT r.id, {body} FROM item i
JOIN item_revision r ON r.item_id = i.id AND r.number = i.current_revision""",
    ]


SQLITE_TRIGGER_NAMES = ("item_search_on_revision", "item_search_on_item", "item_search_on_delete")
"""The triggers that keep SQLite's index current (``db.guards`` restores missing ones)."""

_SQLITE_DROPS = [
    *(f"DROP TRIGGER IF EXISTS {name}" for name in SQLITE_TRIGGER_NAMES),
    f"DROP TABLE IF EXISTS {SEARCH_TABLE}",
]


def _postgres_statements(schema: str) -> list[str]:
    # The functions run as their owner (SECURITY DEFINER), so members, who may only
    # read the index, keep it current through their edits; the search_path is pinned.
    path = f"SET search_path = {quote_identifier(schema)}, pg_catalog, pg_temp"
    return [
        f"""CREATE TABLE IF NOT EXISTS {SEARCH_TABLE} (
  item_id VARCHAR(255) PRIMARY KEY REFERENCES item (id) ON DELETE CASCADE,
  body TEXT NOT NULL
)""",
        f"""CREATE OR REPLACE FUNCTION vetbench_index_item_text(target VARCHAR) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER {path} AS $$
BEGIN
  INSERT INTO {SEARCH_TABLE} (item_id, body)
  SELECT r.item_id, concat_ws(' ', r.prompt,
      (SELECT string_agg(value, ' ') FROM json_each_text(r.choices::json)), r.explanation)
  FROM item i JOIN item_revision r ON r.item_id = i.id AND r.number = i.current_revision
  WHERE i.id = target
  ON CONFLICT (item_id) DO UPDATE SET body = EXCLUDED.body;
END
$$""",
        # One trigger function per table whose rows name an item: revisions, items.
        *(
            trigger_function(
                function,
                f"SECURITY DEFINER {path}",
                f"  PERFORM vetbench_index_item_text(NEW.{item_id_column});\n  RETURN NULL;",
            )
            for function, item_id_column in (
                ("vetbench_item_search_revision", "item_id"),
                ("vetbench_item_search_item", "id"),
            )
        ),
        "DROP TRIGGER IF EXISTS item_search_on_revision ON item_revision",
        "CREATE TRIGGER item_search_on_revision AFTER INSERT ON item_revision "
        "FOR EACH ROW EXECUTE FUNCTION vetbench_item_search_revision()",
        "DROP TRIGGER IF EXISTS item_search_on_item ON item",
        "CREATE TRIGGER item_search_on_item AFTER UPDATE OF current_revision ON item "
        "FOR EACH ROW EXECUTE FUNCTION vetbench_item_search_item()",
        f"""INSERT INTO {SEARCH_TABLE} (item_id, body)
SELECT r.item_id, concat_ws(' ', r.prompt,
    (SELECT string_agg(value, ' ') FROM json_each_text(r.choices::json)), r.explanation)
FROM item i JOIN item_revision r ON r.item_id = i.id AND r.number = i.current_revision
ON CONFLICT (item_id) DO UPDATE SET body = EXCLUDED.body""",
    ]


_POSTGRES_DROPS = [
    "DROP TRIGGER IF EXISTS item_search_on_revision ON item_revision",
    "DROP TRIGGER IF EXISTS item_search_on_item ON item",
    f"DROP TABLE IF EXISTS {SEARCH_TABLE}",
    "DROP FUNCTION IF EXISTS vetbench_item_search_revision()",
    "DROP FUNCTION IF EXISTS vetbench_item_search_item()",
    "DROP FUNCTION IF EXISTS vetbench_index_item_text(VARCHAR)",
]
TRIGRAM_EXTENSION = "pg_trgm"
_TRIGRAM_INDEX = (
    f"CREATE INDEX IF NOT EXISTS ix_item_search_trgm ON {SEARCH_TABLE} "
    "USING gin (body gin_trgm_ops)"
)


def is_search_table(name: str) -> bool:
    """The search index's tables (FTS5 adds shadow tables): kept out of the models on
    purpose, so schema comparisons skip them."""
    return name == SEARCH_TABLE or name.startswith(f"{SEARCH_TABLE}_")


def include_in_comparison(name: str | None, type_: str, _parent: object) -> bool:
    """Alembic's ``include_name`` hook: compare every table but the search index's."""
    return not (type_ == "table" and name is not None and is_search_table(name))


def create_search_index(connection: Connection) -> str | None:
    """Create the index, its triggers, and fill it (a migration calls this); idempotent.

    Returns a note when the index had to be made without its fast path (no trigram
    tokenizer in this SQLite, no pg_trgm on this server), else None.
    """
    if connection.dialect.name == "sqlite":
        if sqlite3.sqlite_version_info < _TRIGRAM_SINCE:
            return (
                f"SQLite {sqlite3.sqlite_version} has no trigram tokenizer (3.34 or newer "
                "has): search reads every item's text instead of an index"
            )
        run_statements(connection, _sqlite_statements())
        return None
    if connection.dialect.name != "postgresql":
        return None
    schema = connection.execute(text("SELECT current_schema()")).scalar_one()
    run_statements(connection, _postgres_statements(schema))
    savepoint = connection.begin_nested()
    try:
        run_statements(
            connection, [f"CREATE EXTENSION IF NOT EXISTS {TRIGRAM_EXTENSION}", _TRIGRAM_INDEX]
        )
    except Exception as error:  # no right to create the extension, or it is not installed
        savepoint.rollback()
        return (
            f"{TRIGRAM_EXTENSION} could not be used ({str(error).splitlines()[0]}); search scans the "
            "index table with ILIKE. A database administrator runs `CREATE EXTENSION "
            "pg_trgm` in this database, and the next upgrade adds the trigram index"
        )
    savepoint.commit()
    return None


def drop_search_index(connection: Connection) -> None:
    """Undo :func:`create_search_index` (a migration's downgrade)."""
    if connection.dialect.name == "sqlite":
        run_statements(connection, _SQLITE_DROPS)
    elif connection.dialect.name == "postgresql":
        run_statements(connection, _POSTGRES_DROPS)


@dataclass(frozen=True)
class _Index:
    kind: str  # "fts5", "trigram", "table" (PostgreSQL without pg_trgm) or "none"


def _index_kind(connection: Connection) -> _Index:
    if connection.dialect.name == "sqlite":
        found = connection.execute(
            text("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = :name"),
            {"name": SEARCH_TABLE},
        ).first()
        return _Index("fts5" if found else "none")
    found = connection.execute(text("SELECT to_regclass(:name)"), {"name": SEARCH_TABLE}).scalar()
    if found is None:
        return _Index("none")
    trigram = connection.execute(text("SELECT to_regclass('ix_item_search_trgm')")).scalar()
    return _Index("trigram" if trigram is not None else "table")


def search_note(session: Session) -> str | None:
    """Why a search may be slow on this database (no index, no trigram index), or None."""
    kind = _index_kind(session.connection()).kind
    if kind == "none":
        return "this database has no search index: every item's text is read"
    if kind == "table":
        return "pg_trgm is not installed in this database: search scans every item's text"
    return None


@functools.cache
def _trigram_unsafe_characters() -> frozenset[str]:
    """The lowercase characters some other character lowercases to but SQLite's trigram
    tokenizer does not fold to them (``İ`` is not ``i`` to it, nor are Unicode's newer
    capitals their small letters): a part of a term holding one cannot narrow the rows.
    Asked of this SQLite once, in memory (a few milliseconds)."""
    pairs = [
        (character, folded)
        for character in map(chr, range(0x20000))  # every cased letter lies below
        if not 0xD800 <= ord(character) <= 0xDFFF and (folded := fold_case(character)) != character
    ]
    with contextlib.closing(sqlite3.connect(":memory:")) as probe:
        probe.execute("CREATE VIRTUAL TABLE probe USING fts5(body, tokenize='trigram')")
        probe.executemany(
            "INSERT INTO probe (rowid, body) VALUES (?, ?)",
            [(row, f"a{character}b") for row, (character, _) in enumerate(pairs)],
        )
        return frozenset(
            folded
            for row, (_, folded) in enumerate(pairs)
            if not probe.execute(
                "SELECT 1 FROM probe WHERE probe MATCH ? AND rowid = ?",
                (_fts_phrase(f"a{folded}b"), row),
            ).fetchone()
        )


def _index_parts(folded_term: str) -> list[str]:
    """The parts of a folded term the trigram index can look for: runs of three or more
    characters it folds as :func:`fold_case` does."""
    unsafe = _trigram_unsafe_characters()
    if not unsafe:
        return [folded_term] if len(folded_term) >= MIN_INDEXED_CHARS else []
    pattern = "[" + re.escape("".join(sorted(unsafe))) + "]"
    return [part for part in re.split(pattern, folded_term) if len(part) >= MIN_INDEXED_CHARS]


def _register_fold_case(session: Session) -> None:
    connection = session.connection().connection.driver_connection
    if isinstance(connection, sqlite3.Connection):
        connection.create_function(_FOLD_FUNCTION, 1, _fold_sql_value, deterministic=True)


def _fold_sql_value(value: str | None) -> str | None:
    return None if value is None else fold_case(value)


def _like_pattern(term: str) -> str:
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _fts_phrase(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def search_condition(
    session: Session,
    query: str | SearchQuery,
    *,
    fields: Sequence[str] = (),
    whole: bool = False,
    not_in: Sequence[str] = (),
) -> ColumnElement[bool]:
    """A condition on ``Item`` that holds for items whose current text has every term of
    ``query`` (:mod:`db.search_query`: case-insensitive substrings of the question and
    choices unless ``in:``/``fields`` say otherwise; ``whole``: every term a whole word;
    ``not_in``: longer terms whose occurrences do not count).  A query without terms
    matches everything.

    The index narrows the revisions to those whose text holds every term somewhere; the
    database then checks each term in the fields asked for; whole terms and ``not_in``
    are checked here, in Python (:func:`db.search_query.holds_term`), on what is left."""
    parsed = (
        query
        if isinstance(query, SearchQuery)
        else parse_search(query, fields=tuple(fields), whole=whole, not_in=tuple(not_in))
    )
    if not parsed.terms:
        return col(Item.id).is_not(None)
    connection = session.connection()
    sqlite = connection.dialect.name == "sqlite"
    if sqlite:
        _register_fold_case(session)
    folded = [fold_case(term.text) for term in parsed.terms]
    conditions = [
        or_(*(_field_holds(name, term, n, sqlite=sqlite) for name in parsed.fields))
        for n, term in enumerate(folded)
    ]
    kind = _index_kind(connection).kind
    if kind == "fts5" and (parts := _index_parts_of(folded)):
        conditions.append(col(ItemRevision.id).in_(_fts_rowids(parts)))
    elif kind in ("trigram", "table"):
        conditions.append(col(ItemRevision.item_id).in_(_indexed_items(folded)))
    current = (
        select(col(ItemRevision.item_id))
        .join(Item, is_current_revision())
        .where(*conditions)
        .correlate(None)
    )
    if not parsed.needs_text_check:
        return col(Item.id).in_(current)
    return _one_of(session, _checked_items(session, current, parsed))


def _field_holds(name: SearchField, folded_term: str, n: int, *, sqlite: bool) -> TextClause:
    """The current revision's field ``name`` holds the term (case folded)."""
    if sqlite:
        expression = _SQLITE_FIELDS[name]
        found = f"instr({_FOLD_FUNCTION}({expression}), :term_{n}) > 0"
        return text(found).bindparams(bindparam(f"term_{n}", folded_term, unique=True))
    expression = _POSTGRES_FIELDS[name]
    found = f"{expression} ILIKE :term_{n} ESCAPE '\\'"
    return text(found).bindparams(bindparam(f"term_{n}", _like_pattern(folded_term), unique=True))


_SQLITE_FIELDS = {
    SearchField.QUESTION: "item_revision.prompt",
    SearchField.CHOICES: "(SELECT group_concat(value, ' ') FROM json_each(item_revision.choices))",
    SearchField.EXPLANATION: "coalesce(item_revision.explanation, '')",
}
_POSTGRES_FIELDS = {
    SearchField.QUESTION: "item_revision.prompt",
    SearchField.CHOICES: (
        "(SELECT string_agg(value, ' ') FROM json_each_text(item_revision.choices::json))"
    ),
    SearchField.EXPLANATION: "coalesce(item_revision.explanation, '')",
}


def _index_parts_of(folded: list[str]) -> list[str]:
    return list(dict.fromkeys(part for term in folded for part in _index_parts(term)))


def _fts_rowids(parts: list[str]) -> Select[tuple[int]]:
    """The revisions (rowids) whose indexed text holds every part: the trigram index's answer."""
    match: BindParameter[str] = bindparam(
        "match", " AND ".join(_fts_phrase(p) for p in parts), unique=True
    )
    return (
        select(text("rowid"))
        .select_from(text(SEARCH_TABLE))
        .where(text(f"{SEARCH_TABLE} MATCH :match").bindparams(match))
    )


def _indexed_items(folded: list[str]) -> Select[tuple[str]]:
    """PostgreSQL: the items whose indexed text holds every term (pg_trgm's GIN index)."""
    found = text(
        " AND ".join(f"body ILIKE :term_{n} ESCAPE '\\'" for n in range(len(folded)))
    ).bindparams(
        *[bindparam(f"term_{n}", _like_pattern(t), unique=True) for n, t in enumerate(folded)]
    )
    return select(text("item_id")).select_from(text(SEARCH_TABLE)).where(found)


def _checked_items(session: Session, current: Select[str], query: SearchQuery) -> list[str]:
    """The items of ``current`` whose fields hold every term by :func:`holds_term`."""
    rows = session.execute(
        select(
            col(ItemRevision.item_id),
            col(ItemRevision.prompt),
            col(ItemRevision.choices),
            col(ItemRevision.explanation),
        )
        .join(Item, is_current_revision())
        .where(col(ItemRevision.item_id).in_(current))
    )
    kept: list[str] = []
    for item_id, prompt, choices, explanation in rows:
        texts = {
            SearchField.QUESTION: [prompt],
            SearchField.CHOICES: [str(value) for value in (choices or {}).values()],
            SearchField.EXPLANATION: [explanation or ""],
        }
        searched = [value for name in query.fields for value in texts[name]]
        if all(
            any(holds_term(value, term, query.not_in) for value in searched) for term in query.terms
        ):
            kept.append(item_id)
    return kept


def _one_of(session: Session, item_ids: list[str]) -> ColumnElement[bool]:
    """``Item.id`` is one of ``item_ids``, passed as one JSON parameter (any number of ids)."""
    listed: BindParameter[str] = bindparam("item_ids", json.dumps(item_ids), unique=True)
    if session.connection().dialect.name == "sqlite":
        rows = func.json_each(listed).table_valued("value")
    else:
        rows = func.json_array_elements_text(cast(listed, JSON)).table_valued("value")
    return col(Item.id).in_(select(rows.c.value))


def exam_name(session: Session) -> ColumnElement[str]:
    """The CFLUE exam name (``名称`` in ``item.meta``) as a column expression.

    SQLite's JSON paths compare a key as it is written in the stored JSON, which
    escapes non-ASCII characters (``\\u540d\\u79f0``); ``json_each`` decodes keys, so
    SQLite reads the name through it.  PostgreSQL's ``->>`` decodes keys itself.
    """
    if session.connection().dialect.name == "sqlite":
        return (
            select(text("value"))
            .select_from(text("json_each(item.meta)"))
            .where(text("key = :exam_key").bindparams(exam_key=EXAM_NAME))
            .scalar_subquery()
        )
    return col(Item.meta)[EXAM_NAME].as_string()


def known_exam_names(session: Session) -> list[str]:
    """Every CFLUE exam name (名称) among the items, in order."""
    exam = exam_name(session)
    query = select(exam).select_from(Item).where(exam.is_not(None)).distinct().order_by(exam)
    return [name for name in session.scalars(query) if name]


def exam_condition(session: Session, exams: Sequence[str]) -> ColumnElement[bool]:
    """Items whose CFLUE exam name is one of ``exams``."""
    return exam_name(session).in_(list(exams))
