"""Issue 12, point 10: guidelines stored in the database with versions, shown with `g` at the
section for the item's kind (links never followed), shown to a new annotator first, and
recorded with every judgment."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import FIXTURES, press, run_cli, running, store_item, store_person, stored_judgments
from textual.widgets import Markdown, Static

from db.audit import read_audit
from db.engine import Database
from db.guidelines import GuidelinesError, kind_section, set_guidelines
from db.people import PermissionDenied
from db.vocabulary import ItemKind, Role
from reviewer.judging import submit_judgment
from reviewer.tui.app import make_app
from reviewer.tui.screens.guidelines import PAGE_CHARS, GuidelinesScreen, paginate
from reviewer.tui.screens.review import Phase

GUIDELINES = FIXTURES / "guidelines.md"


def set_text(db: Database, text: str, lead: str = "lea") -> int:
    with db.transaction() as session:
        return set_guidelines(session, text, lead=lead).current.version


@pytest.fixture
def team(database: Database) -> Database:
    store_person(database, "lea", Role.LEAD)
    store_person(database, "alice")
    store_item(database, "econ:1", key="DABC")
    return database


def test_set_show_and_list_keep_every_version(team: Database, tmp_path: Path) -> None:
    first = run_cli(team, "guidelines", "set", str(GUIDELINES), "--as", "lea")
    assert first.exit_code == 0 and "guidelines version 1 set" in first.output
    again = run_cli(team, "guidelines", "set", str(GUIDELINES), "--as", "lea")
    assert "is the same as version 1: nothing stored" in again.output
    changed = tmp_path / "v2.md"
    changed.write_text(
        "# Guidelines\n\n## Ordering items\n\nKeep only one order.\n", encoding="utf-8"
    )
    second = run_cli(team, "guidelines", "set", str(changed), "--as", "lea")
    assert "guidelines version 2 set" in second.output and "(was version 1)" in second.output
    shown = run_cli(team, "guidelines", "show")
    assert shown.output.startswith("# guidelines version 2 (newest)")
    assert "Keep only one order." in shown.output
    old = run_cli(team, "guidelines", "show", "--version", "1")
    assert old.output.count("# vetbench review guidelines") == 1
    listed = run_cli(team, "guidelines", "list")
    assert [line.split()[1] for line in listed.output.splitlines()] == ["1", "2"]
    with team.session() as session:
        events = read_audit(session, actions=["guidelines"])
    assert [event.changes["version"] for event in events] == [1, 2]


def test_only_leads_set_guidelines_and_bad_files_are_refused(
    team: Database, tmp_path: Path
) -> None:
    refused = run_cli(team, "guidelines", "set", str(GUIDELINES), "--as", "alice")
    assert refused.exit_code == 1 and "only leads can set the guidelines" in refused.output
    binary = tmp_path / "bad.md"
    binary.write_bytes(b"# ok\n\xff\xfe")
    assert "not UTF-8 text" in run_cli(team, "guidelines", "set", str(binary), "--as", "lea").output
    nul = tmp_path / "nul.md"
    nul.write_text("# ok\nline two\x00", encoding="utf-8")
    assert (
        "nul.md, line 2: holds a NUL character"
        in run_cli(team, "guidelines", "set", str(nul), "--as", "lea").output
    )
    # An item file given by mistake would become what every annotator reads and every
    # judgment records as the version in force.
    items = run_cli(team, "guidelines", "set", str(FIXTURES / "econ_ordering.csv"), "--as", "lea")
    assert items.exit_code == 1 and items.output == (
        "error: econ_ordering.csv is a data file, not guidelines: give a Markdown or text file "
        "(FILE.md, FILE.txt); items come in with `vetbench import`\n"
    )
    with pytest.raises(GuidelinesError, match="is empty"), team.transaction() as session:
        set_guidelines(session, "  \n", lead="lea")
    with pytest.raises(PermissionDenied), team.transaction() as session:
        set_guidelines(session, "# x", lead="alice")
    none = run_cli(team, "guidelines", "show")
    assert none.exit_code == 1 and "there are no guidelines yet" in none.output  # none stored


def test_every_judgment_records_the_guidelines_version(team: Database) -> None:
    store_item(team, "econ:2", key="DABC")
    submit_judgment(team, "alice", "econ:1", revision_number=1, blind_answer="DABC", verdict="keep")
    set_text(team, "# v1")
    set_text(team, "# v2")
    submit_judgment(team, "alice", "econ:2", revision_number=1, blind_answer="DABC", verdict="keep")
    assert [j.guidelines_version for j in stored_judgments(team)] == [None, 2]


def test_the_section_of_a_kind_is_found_by_its_heading() -> None:
    headings = [
        "vetbench review guidelines",
        "Ordering items (EconLogicQA)",
        "Multi-answer items (多项选择题)",
        "判断题",
    ]
    assert kind_section(headings, ItemKind.ORDERING) == 1
    assert kind_section(headings, ItemKind.MULTI) == 2
    assert kind_section(headings, ItemKind.TRUEFALSE) == 3
    assert kind_section(headings, ItemKind.SINGLE) is None


async def test_g_opens_the_guidelines_at_the_section_for_the_kind(team: Database) -> None:
    set_text(team, GUIDELINES.read_text(encoding="utf-8"))
    submit_judgment(team, "alice", "econ:1", revision_number=1, blind_answer="DABC", verdict="keep")
    store_item(team, "mcq:1", kind="multi", key="AB")
    async with running(make_app(team, "alice")) as app:
        assert app.review_screen.item is not None and app.review_screen.item.id == "mcq:1"
        await press(app, "g")
        screen = app.screen
        assert isinstance(screen, GuidelinesScreen)
        await app.workers.wait_for_complete()
        await press(app)
        assert screen.section == "Multi-answer items (多项选择题)"
        intro = str(screen.query_one("#guidelines-intro", Static).render())
        assert (
            "Opened at “Multi-answer items (多项选择题)”, for this multiple answers item" in intro
        )
        heading = next(
            b for b in screen.query_one(Markdown).children if "多项选择题" in str(b.render())
        )
        scroll = screen.query_one("#guidelines-scroll")
        assert scroll.scroll_y > 0  # scrolled down to it, which is at the top of the view
        assert 0 <= heading.region.y - scroll.region.y <= 5
        # Space pages on, as it does in review, and Shift+Space back (it did nothing here)
        opened_at = scroll.scroll_y
        await press(app, "space")
        paged = scroll.scroll_y
        assert paged > opened_at
        await press(app, "shift+space")
        assert scroll.scroll_y < paged
        await press(app, "g")  # g closes it again
        assert app.screen is app.review_screen


async def test_a_new_annotator_sees_the_guidelines_first(team: Database) -> None:
    set_text(team, GUIDELINES.read_text(encoding="utf-8"))
    async with running(make_app(team, "alice")) as app:
        await app.workers.wait_for_complete()
        await press(app)
        assert isinstance(app.screen, GuidelinesScreen)
        assert app.screen.first and app.screen.section == "Ordering items (EconLogicQA)"
        assert "Welcome" in str(app.screen.query_one("#guidelines-intro", Static).render())
        await press(app, "escape")
        assert app.review_screen.phase is Phase.BLIND
    submit_judgment(team, "alice", "econ:1", revision_number=1, blind_answer="DABC", verdict="keep")
    store_item(team, "econ:2", key="DABC")
    async with running(make_app(team, "alice")) as app:  # known now: no welcome
        await app.workers.wait_for_complete()
        await press(app)
        assert app.screen is app.review_screen
    set_text(team, "# version 2")
    async with running(make_app(team, "alice")) as app:  # a newer version: said, not shown
        await app.workers.wait_for_complete()
        await press(app)
        assert app.screen is app.review_screen
        said = [str(n.message) for n in app._notifications]
        assert (
            "The guidelines are at version 2 (your last judgment was under version 1): g shows them."
            in said
        )


async def test_whoever_set_the_guidelines_is_not_asked_to_read_them(team: Database) -> None:
    """The lead who set the current version opens the app at the item; a version set by
    another lead since is news to her as to anyone."""
    store_person(team, "leo", Role.LEAD)
    set_text(team, GUIDELINES.read_text(encoding="utf-8"))
    async with running(make_app(team, "lea")) as app:
        await app.workers.wait_for_complete()
        await press(app)
        assert app.screen is app.review_screen and app.review_screen.phase is Phase.BLIND
    set_text(team, "# version 2", lead="leo")
    async with running(make_app(team, "lea")) as app:  # never judged: reads them first
        await app.workers.wait_for_complete()
        await press(app)
        assert isinstance(app.screen, GuidelinesScreen) and app.screen.first


async def test_links_in_the_guidelines_are_never_followed(team: Database) -> None:
    opened: list[str] = []
    set_text(
        team,
        "# Guidelines\n\n## Ordering items\n\nSee [the paper](https://example.com/x) and "
        "[quit](app.quit) and [@click=app.quit]this[/].\n\x1b]0;title\x07\n",
    )
    submit_judgment(team, "alice", "econ:1", revision_number=1, blind_answer="DABC", verdict="keep")
    async with running(make_app(team, "alice")) as app:
        app.open_url = lambda url, **_kw: opened.append(url)  # type: ignore[method-assign]
        await press(app, "g")
        await app.workers.wait_for_complete()
        await press(app)
        screen = app.screen
        assert isinstance(screen, GuidelinesScreen)
        text = str(screen.query_one(Markdown).children[-1].render())
        assert "[@click=app.quit]this[/]" in text and "␛" in text  # literal, controls visible
        for block in screen.query_one(Markdown).query("MarkdownParagraph"):
            for href in ("https://example.com/x", "app.quit"):
                await block.action_link(href)  # what a click on the link runs
        await press(app)
        assert app.is_running and opened == []
        said = " ".join(str(n.message) for n in app._notifications)
        assert "are not opened from here; it points to https://example.com/x" in said


async def test_without_guidelines_the_screen_says_how_to_set_them(team: Database) -> None:
    submit_judgment(team, "alice", "econ:1", revision_number=1, blind_answer="DABC", verdict="keep")
    store_item(team, "econ:2", key="DABC")
    async with running(make_app(team, "alice")) as app:
        await press(app, "g")
        await app.workers.wait_for_complete()
        await press(app)
        assert "vetbench guidelines set FILE.md" in str(
            app.screen.query_one("#guidelines-intro", Static).render()
        )
        source = app.screen.query_one(Markdown).source
        assert "(`k`)" in source and "more than one order or answer is defensible" in source


def test_the_fixture_guidelines_cover_every_kind_and_verdict() -> None:
    text = GUIDELINES.read_text(encoding="utf-8")
    headings = [line.lstrip("#").strip() for line in text.splitlines() if line.startswith("#")]
    for kind in ItemKind:
        assert kind_section(headings, kind) is not None, kind
    for word in (
        "keep",
        "several valid",
        "no clear order",
        "wrong key",
        "flawed",
        "sensitive",
        "duplicate",
    ):
        assert word in text.casefold(), word


def huge_guidelines() -> str:
    """195,070 characters: the probe's guidelines, which kept the app busy ~50 s after g."""
    text = GUIDELINES.read_text(encoding="utf-8")
    return (text * (195_070 // len(text) + 1))[:195_070]


def test_long_guidelines_are_cut_into_pages_between_blocks() -> None:
    text = huge_guidelines()
    pages = paginate(text)
    assert "".join(page.text for page in pages) == text  # nothing lost, nothing added
    assert all(len(page.text) <= PAGE_CHARS for page in pages) and len(pages) > 20
    # Cuts fall between blocks: every page after the first starts a heading or a block.
    assert sum(page.text.startswith("## ") for page in pages[1:]) >= len(pages) // 2
    assert [page.text for page in paginate(GUIDELINES.read_text(encoding="utf-8"))] == [
        GUIDELINES.read_text(encoding="utf-8")
    ]  # ordinary guidelines are one page
    one_line = paginate("x" * (PAGE_CHARS * 2 + 5))
    assert [len(page.text) for page in one_line] == [PAGE_CHARS, PAGE_CHARS, 5]


async def test_huge_guidelines_open_a_page_at_a_time_and_escape_closes(team: Database) -> None:
    set_text(team, huge_guidelines())
    submit_judgment(team, "alice", "econ:1", revision_number=1, blind_answer="DABC", verdict="keep")
    store_item(team, "mcq:1", kind="multi", key="AB")
    async with running(make_app(team, "alice")) as app:
        await press(app, "g")
        await app.workers.wait_for_complete()
        await press(app)
        screen = app.screen
        assert isinstance(screen, GuidelinesScreen)
        pages = len(screen.pages)
        assert pages > 20
        # One page of blocks is built, not the whole text's (about 1,300 blocks).
        assert len(screen.query_one(Markdown).children) < 120
        assert screen.section == "Multi-answer items (多项选择题)"
        intro = str(screen.query_one("#guidelines-intro", Static).render())
        assert f"Page {screen.page + 1} of {pages}: n next, p previous." in intro
        opened_at = screen.page
        await press(app, "n")
        await app.workers.wait_for_complete()
        await press(app)
        assert screen.page == opened_at + 1
        assert f"Page {opened_at + 2} of {pages}" in str(
            screen.query_one("#guidelines-intro", Static).render()
        )
        await press(app, "p", "p")
        await press(app, "escape")  # while a page is being drawn
        assert app.screen is app.review_screen
