"""Issue 12, point 12: search with the database's own index (SQLite FTS5 trigrams,
PostgreSQL pg_trgm), Chinese included, kept current by triggers; `items --search`, the
app's `/` filter, and the CFLUE exam name (名称) in the header and as a filter."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from conftest import BuiltDatabases
from helpers import (
    FIXTURES,
    judge_flawed_then_edit,
    notices,
    pilot_of,
    press,
    run_cli,
    running,
    store_item,
)
from sqlalchemy import text
from sqlmodel import select
from textual.widgets import Input, Select, Static

from db.engine import Database, open_database
from db.importer import import_files
from db.items import ItemSnapshot, iter_items
from db.models import Item
from db.search import MAX_TERMS, SEARCH_TABLE, SearchError, search_condition, search_note
from reviewer.judging import ItemEdit
from reviewer.queue import QueueFilter, ReviewQueue
from reviewer.tui.app import make_app
from reviewer.tui.screens.jump import FilterScreen

CFLUE_FIXTURE = FIXTURES / "cflue_mcq.json"
ORDERING_FIXTURE = FIXTURES / "econ_ordering.csv"


def found(db: Database, query: str) -> list[str]:
    with db.session() as session:
        return sorted(session.exec(select(Item.id).where(search_condition(session, query))))


@pytest.fixture
def fixtures(database: Database, built_databases: BuiltDatabases) -> Database:
    """``import_fixtures``'s state, built once per test process and backend and copied."""
    built_databases.fill(database, import_fixtures)
    return database


def import_fixtures(database: Database) -> None:
    report = import_files(database, [CFLUE_FIXTURE, ORDERING_FIXTURE])
    assert report.ok


def scan(
    db: Database, query: str, *, explanation: bool = False, items: list[ItemSnapshot] | None = None
) -> list[str]:
    """What the search should find, the slow way: every term in the current question or
    choices (with ``explanation``, there too) of every item (``items``: those, read from
    the database before)."""
    terms = [term.casefold() for term in query.split()]
    if items is None:
        with db.session() as session:
            items = list(iter_items(session))
    hits = []
    for item in items:
        fields = [item.prompt, *item.choices.values()]
        fields += [item.explanation or ""] if explanation else []
        if all(any(term in field.casefold() for field in fields) for term in terms):
            hits.append(item.id)
    return sorted(hits)


@pytest.mark.parametrize(
    "query",
    ["货币政策", "货币", "准备金 放贷", "存款保险", "央", "central bank", "INTEREST", "ra", "zzzz"],
)
def test_search_finds_what_a_scan_finds_in_chinese_and_english(
    fixtures: Database, query: str
) -> None:
    assert found(fixtures, query) == scan(fixtures, query)
    everywhere = scan(fixtures, query, explanation=True)
    assert found(fixtures, f"{query} in:all") == everywhere
    if query != "zzzz":
        assert found(fixtures, query) and everywhere


def test_search_uses_the_database_index(fixtures: Database) -> None:
    with fixtures.session() as session:
        assert search_note(session) is None  # FTS5 trigrams, or pg_trgm's GIN index
        if fixtures.is_sqlite:
            plan = session.execute(
                text(
                    f"EXPLAIN QUERY PLAN SELECT rowid FROM {SEARCH_TABLE} WHERE {SEARCH_TABLE} MATCH '\"货币政\"'"
                )
            ).all()
            assert any("VIRTUAL TABLE INDEX" in str(row) for row in plan)
        else:
            session.execute(text("SET LOCAL enable_seqscan = off"))
            plan = session.execute(
                text(f"EXPLAIN SELECT item_id FROM {SEARCH_TABLE} WHERE body ILIKE '%货币政%'")
            ).all()
            assert any("ix_item_search_trgm" in str(row) for row in plan)


def test_the_index_follows_edits_and_reimports(fixtures: Database, tmp_path: Path) -> None:
    edit = ItemEdit(note="reworded", prompt="A 独特的 scenario about tariffs.")
    judge_flawed_then_edit(fixtures, "ann", "econ_ordering:1", edit, comment="x")
    assert found(fixtures, "独特的") == ["econ_ordering:1"]
    assert found(fixtures, "tariffs") == ["econ_ordering:1"]
    records = json.loads(CFLUE_FIXTURE.read_text(encoding="utf-8"))
    records[1]["question"] = "修订后的题目：中国人民银行下调法定存款准备金率会怎样？"
    changed = tmp_path / "cflue_mcq.json"
    changed.write_text(json.dumps(records, ensure_ascii=False), encoding="utf-8")
    assert import_files(fixtures, [changed]).ok
    assert found(fixtures, "修订后的题目") == ["cflue_mcq:2"]
    assert "cflue_mcq:2" not in found(fixtures, "通常会导致")  # its old text left the index


def test_items_search_and_exam_on_the_command_line(fixtures: Database) -> None:
    result = run_cli(fixtures, "items", "--search", "货币政策")
    assert result.exit_code == 0
    assert sorted(line.split()[0] for line in result.output.splitlines()) == scan(
        fixtures, "货币政策"
    )
    by_exam = run_cli(fixtures, "items", "--exam", "银行从业资格", "--json")
    ids = [entry["id"] for entry in json.loads(by_exam.output)]
    with fixtures.session() as session:
        expected = [
            item.id for item in iter_items(session) if item.meta.get("名称") == "银行从业资格"
        ]
    assert ids == expected and ids
    both = run_cli(fixtures, "items", "--exam", "银行从业资格", "--search", "货币")
    assert all(line.split()[0] in expected for line in both.output.splitlines())
    assert run_cli(fixtures, "items", "--search", "  ").exit_code == 1


def test_the_queue_filters_by_text_and_exam(fixtures: Database) -> None:
    queue = ReviewQueue(fixtures, "alice", QueueFilter(text="货币政策", exams=("银行从业资格",)))
    served: list[str] = []
    while (item := queue.next_item()) is not None and item.id not in served:
        served.append(item.id)  # moving on without judging, until one comes back
    with fixtures.session() as session:
        banking = {i.id for i in iter_items(session) if i.meta.get("名称") == "银行从业资格"}
    assert sorted(served) == sorted(banking & set(scan(fixtures, "货币政策")))
    assert served
    assert "exam 银行从业资格; text “货币政策”" in queue.filters.describe()


async def test_the_filter_says_which_key_applies_and_an_open_list_is_framed(
    fixtures: Database,
) -> None:
    """It said "Enter applies", but Enter on a list (re)opens it; only Ctrl+S applied
    there.  And the open list had no frame: its options lay over the fields below and
    read as their values ("Source  any kind", "Status  multi")."""
    from helpers import wait_until
    from textual.widgets._select import SelectOverlay

    async with running(make_app(fixtures, "alice")) as app:
        await press(app, "slash")
        assert isinstance(app.screen, FilterScreen)
        hint = str(app.screen.query_one(".dialog-help", Static).render())
        assert "Enter applies" not in hint
        assert "Ctrl+S applies" in hint and "in a list Enter opens" in hint
        await press(app, "tab", "enter")
        kinds = app.screen.query_one("#filter-kinds", Select)
        await wait_until(pilot_of(app), lambda: kinds.expanded, "the kind list to open")
        overlay = kinds.query_one(SelectOverlay)
        assert all(edge[0] for edge in overlay.styles.border), overlay.styles.border
        await press(app, "down", "enter")
        assert not kinds.expanded and kinds.value is not Select.NULL
        await press(app, "ctrl+s")  # what applies here, as the hint says
        assert not isinstance(app.screen, FilterScreen)
        assert app.queue.filters.kinds == (kinds.value,)


async def test_slash_takes_text_and_exam_and_the_header_names_the_exam(fixtures: Database) -> None:
    async with running(make_app(fixtures, "alice")) as app:
        await press(app, "slash")
        assert isinstance(app.screen, FilterScreen)
        exams = app.screen.query_one("#filter-exams", Select)
        offered = [value for _label, value in exams._options if value is not Select.NULL]
        assert "银行从业资格" in offered and "CFA Level I" in offered
        exams.value = "银行从业资格"
        app.screen.query_one("#filter-text", Input).focus()
        await press(app, *"存款保险", "enter")
        item = app.review_screen.item
        assert item is not None and item.id in scan(fixtures, "存款保险")
        assert item.meta["名称"] == "银行从业资格"
        heading = str(app.review_screen.query_one("#item-heading", Static).render())
        assert "银行从业资格" in heading and item.id in heading


@pytest.mark.slow
def test_search_on_the_real_cflue_file(cflue_knowledge: Path, tmp_path: Path) -> None:
    db = open_database(tmp_path / "real.db")
    try:
        assert import_files(db, [cflue_knowledge]).ok
        rng = random.Random(12)
        with db.session() as session:
            items = list(iter_items(session))
        for item in rng.sample(items, 30):
            start = rng.randrange(max(1, len(item.prompt) - 4))
            query = item.prompt[start : start + 4].strip()
            if len(query) < 2 or any(ch.isspace() for ch in query):
                continue
            hits = found(db, query)
            assert item.id in hits, query
            assert hits == scan(db, query, items=items), query  # nothing written meanwhile
    finally:
        db.dispose()


def test_postgres_without_pg_trgm_searches_and_says_so(
    database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    if database.is_sqlite:
        pytest.skip("pg_trgm is PostgreSQL's")
    import db.search as search

    with database.engine.begin() as connection:
        connection.execute(text("DROP INDEX IF EXISTS ix_item_search_trgm"))
        monkeypatch.setattr(search, "TRIGRAM_EXTENSION", "vetbench_no_such_extension")
        note = search.create_search_index(connection)
    assert note is not None and "search scans the index table with ILIKE" in note
    import_files(database, [CFLUE_FIXTURE])
    with database.session() as session:
        assert "pg_trgm is not installed" in (search_note(session) or "")
    assert found(database, "货币政策") == scan(database, "货币政策")
    result = run_cli(database, "items", "--search", "货币政策")
    assert "note: pg_trgm is not installed in this database" in result.output


def test_an_upgrade_indexes_the_items_already_there(db_path: Path) -> None:
    from db.engine import make_engine
    from db.migrate import upgrade_to

    engine = make_engine(db_path)
    upgrade_to(engine, "0003_identity_audit")
    choices = json.dumps({"A": "对", "B": "错"})  # stored with escapes, as SQLAlchemy does
    with engine.begin() as connection:
        connection.execute(
            text(
                "INSERT INTO item (id, kind, source, source_ref, language, status, "
                "current_revision, meta, created_at) VALUES ('old:1', 'truefalse', 'old', '', "
                "'zh', 'pending', 1, '{}', '2026-01-01')"
            )
        )
        connection.execute(
            text(
                "INSERT INTO item_revision (item_id, number, prompt, choices, key, explanation, "
                "author, change_note, provenance, created_at) VALUES ('old:1', 1, "
                "'旧数据库里的题目', :choices, 'A', NULL, 'import', 'import', '{}', '2026-01-01')"
            ),
            {"choices": choices},
        )
    engine.dispose()
    upgraded = open_database(db_path)  # the upgrade fills the index from existing items
    try:
        assert found(upgraded, "旧数据库") == ["old:1"]
        assert found(upgraded, "对") == ["old:1"]  # a choice, decoded from its escapes
    finally:
        upgraded.dispose()


FOLDING_PROMPTS = {
    "fold:ete": "ÉTÉ chaud sur les marchés",
    "fold:dz": "Ǆungla ekonomija",
    "fold:istanbul": "İSTANBUL bourse",
    "fold:strasse": "Straße der Banken",
}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("ét", ["fold:ete"]),  # two characters: no trigram
        ("été", ["fold:ete"]),
        ("ǆ", ["fold:dz"]),
        ("ǅungla", ["fold:dz"]),  # the titlecase letter finds the capital
        ("istanbul", ["fold:istanbul"]),  # İ is i lowercased, as PostgreSQL's ILIKE has it
        ("straße", ["fold:strasse"]),
        ("strasse", []),  # lowercasing, not case folding: ß is not ss in either database
    ],
)
def test_search_folds_case_as_postgresql_does(
    database: Database, query: str, expected: list[str]
) -> None:
    """SQLite lowercased short terms in ASCII only and its trigram tokenizer does not fold
    İ: `ét`, `ǆ` and `istanbul` found nothing there while PostgreSQL found them."""
    for item_id, prompt in FOLDING_PROMPTS.items():
        store_item(database, item_id, prompt=prompt, explanation=None)
    assert found(database, query) == expected
    if "ß" not in query:  # its capital is SS
        assert found(database, query.upper()) == expected


def test_a_search_with_too_many_words_is_one_short_line(fixtures: Database) -> None:
    """500 two-letter words raised "Expression tree is too large" with 670 KB of parameters."""
    many = " ".join(f"{a}{b}" for a in "abcdefghijklmnopqrstuvw" for b in "abcdefghijklmnopqrstuvw")
    result = run_cli(fixtures, "items", "--search", many)
    assert result.exit_code == 1, result.output
    assert (
        result.output
        == f"error: a search takes at most {MAX_TERMS} different words; this one has 529\n"
    )
    words = " ".join(["货币"] * 40 + ["政策"] * 40)  # the same word again is one term
    assert run_cli(fixtures, "items", "--search", words).exit_code == 0
    assert found(fixtures, " ".join(many.split()[:MAX_TERMS])) == []


def test_a_nul_in_the_search_is_one_line(fixtures: Database) -> None:
    result = run_cli(fixtures, "items", "--search", "货币\x00政策")
    assert result.exit_code == 1
    assert (
        result.output
        == "error: the search holds a NUL character (\\0); remove it and search again\n"
    )
    with pytest.raises(SearchError, match="NUL character"):
        QueueFilter(text="a\x00b")


async def test_a_nul_in_the_slash_filter_is_a_notice_and_the_dialog_stays(
    fixtures: Database,
) -> None:
    """It showed "OperationalError: unterminated string [SQL: …]"."""
    async with running(make_app(fixtures, "alice")) as app:
        before = app.review_screen.item
        await press(app, "slash")
        assert isinstance(app.screen, FilterScreen)
        app.screen.query_one("#filter-text", Input).value = "货币\x00政策"
        await press(app, "enter")
        assert isinstance(app.screen, FilterScreen)
        said = notices(app)
        assert said == ["the search holds a NUL character (\\0); remove it and search again"]
        await press(app, "escape")
        assert app.review_screen.item == before
