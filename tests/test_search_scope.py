"""Issue 23, point 8: search looks in the question and choices unless told otherwise
(`in:` / `--in`), finds whole words (`whole:` / `--whole`), and leaves out longer terms
(`not:` / `--not-in`: 增值税 without 土地增值税); `items` previews show text as read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import notices, pilot_of, press, run_cli, running, store_item, wait_until
from sqlmodel import select
from textual.widgets import Input

from db.engine import Database, open_database
from db.importer import import_files
from db.items import iter_items
from db.models import Item
from db.search import SearchError, search_condition
from db.search_query import SearchTerm, holds_term, parse_search
from reviewer.queue import QueueFilter
from reviewer.tui.app import make_app
from reviewer.tui.screens.jump import FilterScreen
from reviewer.tui.widgets.progress import ProgressLine


def found(db: Database, query: str, **options: object) -> list[str]:
    with db.session() as session:
        condition = search_condition(session, query, **options)  # type: ignore[arg-type]
        return sorted(session.exec(select(Item.id).where(condition)))


@pytest.fixture
def taxes(database: Database) -> Database:
    """Items that name 增值税 alone, only inside 土地增值税, or in the explanation only."""
    for item_id, prompt, choices, explanation in [
        ("tax:land", "企业转让土地使用权应缴纳土地增值税多少万元？", None, "按土地增值税计算。"),
        ("tax:both", "缴纳增值税和土地增值税各多少？", None, None),
        ("tax:choice", "下列哪项说法正确？", {"A": "增值税专用发票", "B": "普通发票"}, None),
        ("tax:explained", "企业应缴纳多少？", None, "依增值税法规定计算。"),
        ("tax:en", "Tax rules changed in 2019.", {"A": "tax-free", "B": "taxes"}, None),
        ("tax:plural", "New taxes rose in 20190 scenarios.", None, "A tax explanation."),
    ]:
        kind = "single" if choices else "ordering"
        store_item(
            database,
            item_id,
            kind=kind,
            key="A" if choices else "DABC",
            choices=choices,
            prompt=prompt,
            explanation=explanation,
        )
    return database


def test_search_looks_in_the_question_and_choices_unless_told(taxes: Database) -> None:
    assert found(taxes, "增值税") == ["tax:both", "tax:choice", "tax:land"]
    assert found(taxes, "增值税 in:explanation") == ["tax:explained", "tax:land"]
    assert found(taxes, "增值税 in:question") == ["tax:both", "tax:land"]
    assert found(taxes, "增值税 in:choices") == ["tax:choice"]
    assert found(taxes, "增值税", fields=["all"]) == [
        "tax:both",
        "tax:choice",
        "tax:explained",
        "tax:land",
    ]
    assert found(taxes, "增值税 in:question,explanation") == [
        "tax:both",
        "tax:explained",
        "tax:land",
    ]
    # each term in one of the fields, not necessarily the same one
    assert found(taxes, "说法 专用发票") == ["tax:choice"]


def test_not_in_leaves_out_a_longer_term(taxes: Database) -> None:
    assert found(taxes, "增值税 not:土地增值税") == ["tax:both", "tax:choice"]
    assert found(taxes, "增值税", not_in=["土地增值税"]) == ["tax:both", "tax:choice"]
    assert found(taxes, "增值税 not:土地增值税 in:all") == [
        "tax:both",
        "tax:choice",
        "tax:explained",
    ]
    with pytest.raises(SearchError, match="not:发票 holds none of the words"):
        parse_search("增值税 not:发票")


def test_whole_words(taxes: Database) -> None:
    assert found(taxes, "tax") == ["tax:en", "tax:plural"]
    assert found(taxes, "whole:tax") == ["tax:en"]  # "Tax rules", "tax-free"; not "taxes"
    assert found(taxes, "tax", whole=True) == ["tax:en"]
    assert found(taxes, "whole:tax in:all") == ["tax:en", "tax:plural"]  # "A tax explanation"
    assert found(taxes, "whole:2019") == ["tax:en"]  # not 20190
    assert found(taxes, "whole:TAXES") == ["tax:en", "tax:plural"]
    # Chinese has no spaces: a neighbouring Chinese character is no reason to leave it out
    assert found(taxes, "whole:增值税") == found(taxes, "增值税")


@pytest.mark.parametrize(
    ("text", "term", "not_in", "expected"),
    [
        ("土地增值税", SearchTerm("增值税"), ("土地增值税",), False),
        ("土地增值税与增值税", SearchTerm("增值税"), ("土地增值税",), True),
        ("增值税土地增值税", SearchTerm("增值税"), ("土地增值税",), True),
        ("增值税额", SearchTerm("增值税"), ("增值税额",), False),  # longer on the right
        ("The TAX.", SearchTerm("tax", whole=True), (), True),
        ("taxation", SearchTerm("tax", whole=True), (), False),
        ("pretax", SearchTerm("tax", whole=True), (), False),
        ("缴纳tax", SearchTerm("tax", whole=True), (), True),  # a change of script is a boundary
        ("ΣΑΣ", SearchTerm("σασ"), (), True),
    ],
)
def test_holds_term(text: str, term: SearchTerm, not_in: tuple[str, ...], expected: bool) -> None:
    assert holds_term(text, term, not_in) is expected


def test_the_syntax_round_trips_and_refuses_what_it_cannot_run() -> None:
    query = parse_search("增值税 whole:tax in:question,explanation not:土地增值税")
    assert query.describe() == "增值税 whole:tax in:question,explanation not:土地增值税"
    assert parse_search(query.describe()) == query
    assert parse_search("a in:all").describe() == "a in:all"
    assert parse_search("a in:question,choices").describe() == "a"
    with pytest.raises(SearchError, match="in:title is not a field"):
        parse_search("a in:title")
    with pytest.raises(SearchError, match="NUL"):
        parse_search("a", not_in=["a\0b"])


def test_the_command_line_options(taxes: Database) -> None:
    def listed(*args: str) -> list[str]:
        result = run_cli(taxes, "items", "--json", *args)
        assert result.exit_code == 0, result.output
        return sorted(entry["id"] for entry in json.loads(result.output))

    assert listed("--search", "增值税") == ["tax:both", "tax:choice", "tax:land"]
    assert listed("--search", "增值税", "--not-in", "土地增值税") == ["tax:both", "tax:choice"]
    assert listed("--search", "增值税", "--in", "explanation") == ["tax:explained", "tax:land"]
    assert listed("--search", "增值税", "--in", "question", "--in", "choices") == [
        "tax:both",
        "tax:choice",
        "tax:land",
    ]
    assert listed("--search", "tax", "--whole") == ["tax:en"]
    assert listed("--search", "增值税 in:explanation", "--in", "all") == [
        "tax:both",
        "tax:choice",
        "tax:explained",
        "tax:land",
    ]  # --in replaces in:
    alone = run_cli(taxes, "items", "--whole")
    assert alone.exit_code == 1
    assert (
        alone.output
        == "error: --in, --whole and --not-in refine --search: give --search TEXT too\n"
    )
    wrong = run_cli(taxes, "items", "--search", "增值税", "--not-in", "发票")
    assert wrong.exit_code == 1 and wrong.output.startswith("error: not:发票 holds none")
    assert len(wrong.output.splitlines()) == 1
    for command in ("review", "triage"):  # every command with --search takes the same
        assert "--not-in" in run_cli(taxes, command, "--help").output
    refused = run_cli(taxes, "triage", "--search", "增值税", "--not-in", "发票")
    assert refused.exit_code == 1 and refused.output.startswith("error: not:发票 holds none")


def test_the_queue_takes_the_same_search(taxes: Database) -> None:
    filters = QueueFilter(text="增值税 not:土地增值税 in:all")
    assert filters.describe() == "text “增值税 in:all not:土地增值税”"
    with taxes.session() as session:
        ids = sorted(session.exec(select(Item.id).where(*filters.conditions(session))))
    assert ids == ["tax:both", "tax:choice", "tax:explained"]


def test_items_previews_show_text_as_read(database: Database) -> None:
    store_item(database, "ent:1", prompt="应纳增值税（&amp;nbsp;）万元 R&D &lt;b&gt;")
    text_output = run_cli(database, "items").output
    assert "应纳增值税（ ）万元 R&D <b>" in text_output
    assert "&amp;" not in text_output and "&lt;" not in text_output
    stored = json.loads(run_cli(database, "items", "--json").output)
    assert stored[0]["preview"] == "应纳增值税（&amp;nbsp;）万元 R&D &lt;b&gt;"  # --json unchanged


@pytest.mark.slow
def test_not_in_on_the_real_cflue_file(cflue_knowledge: Path, tmp_path: Path) -> None:
    """The teacher's search: 增值税 without the items that name it only inside 土地增值税."""
    db = open_database(tmp_path / "real.db")
    try:
        assert import_files(db, [cflue_knowledge]).ok
        everything = set(found(db, "增值税"))
        narrowed = set(found(db, "增值税 not:土地增值税"))
        with db.session() as session:
            items = {item.id: item for item in iter_items(session)}
        for item_id in everything:
            item = items[item_id]
            fields = [item.prompt, *item.choices.values()]
            outside = any(field.replace("土地增值税", "").count("增值税") for field in fields)
            assert (item_id in narrowed) is outside, item_id
        assert narrowed < everything
    finally:
        db.dispose()


async def test_the_slash_filter_is_kept_for_the_next_session(taxes: Database) -> None:
    async with running(make_app(taxes, "alice")) as app:
        await press(app, "slash")
        assert isinstance(app.screen, FilterScreen)
        app.screen.query_one("#filter-text", Input).value = "增值税 not:土地增值税"
        await press(app, "enter")
        item = app.review_screen.item
        assert item is not None and item.id in ("tax:both", "tax:choice")
    again = make_app(taxes, "alice")
    assert again.queue.filters.text == "增值税 not:土地增值税"
    async with running(again) as app:
        line = app.review_screen.query_one(ProgressLine)
        # said in the status line, not in a toast over the verdict keys
        assert "Filter: your filter from last time is on: text “增值税 not:土地增值税”" in (
            line.notice
        )
        assert not any("filter from last time" in m for m in notices(app))
        await wait_until(pilot_of(app), lambda: "增值税" in str(line.render()), "the status line")
        assert "增值税 not:土地增值税" in str(line.render())
    other = make_app(taxes, "bob")  # kept per person
    assert other.queue.filters == QueueFilter()
    asked = make_app(taxes, "alice", kind="single")  # a filter on the command line wins
    assert asked.queue.filters == QueueFilter(kinds=("single",))
