"""Issue 12, points 2-6, 13 and 14: nothing is recorded by accident in the review app, no
key is dead, the editor never destroys text, and the screen says things in words.

Pilot tests on real SQLite files; assertions on what the database holds and on the
screen."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from helpers import (
    FIXTURES,
    notices,
    pilot_of,
    press,
    running,
    screen_text,
    store_item,
    store_person,
    stored_judgments,
    wait_until,
)
from sqlmodel import col, select
from textual.widgets import DataTable, Input, Select, Static, TextArea
from textual.widgets._footer import FooterLabel

from db.engine import Database
from db.models import ItemRevision
from db.vocabulary import Role
from reviewer.cli import cli
from reviewer.judging import ItemEdit, submit_judgment
from reviewer.tui.app import ReviewApp, make_app
from reviewer.tui.screens.edit import EditScreen
from reviewer.tui.screens.jump import FilterScreen
from reviewer.tui.screens.lead_modals import ConfirmModal
from reviewer.tui.screens.prompt import PromptScreen
from reviewer.tui.screens.review import Phase
from reviewer.tui.screens.verdict import AlternativesScreen
from reviewer.tui.widgets.footer import KeyFooter
from reviewer.tui.widgets.item_view import ChoiceRow
from reviewer.tui.widgets.progress import ProgressLine
from reviewer.tui.widgets.titles import PanelTitle


def titles(app: ReviewApp) -> list[str]:
    return [str(notice.title) for notice in app._notifications]


def revisions(db: Database) -> list[ItemRevision]:
    with db.session() as session:
        return list(session.exec(select(ItemRevision).order_by(col(ItemRevision.number))))


@pytest.fixture
def ordering(database: Database) -> Database:
    store_item(database, "econ:1", key="DABC")
    return database


# --- 2. keys that do nothing say why ---------------------------------------------------


def warned(app: ReviewApp) -> str:
    """What the status line says a key did not do ("Nothing done: ..."), without its title."""
    return app.review_screen.query_one(ProgressLine).warning.removeprefix("Nothing done: ")


async def test_edit_and_revisions_before_judging_say_why(ordering: Database) -> None:
    async with running(make_app(ordering, "alice")) as app:
        assert app.review_screen.phase is Phase.BLIND
        said = []
        for key in ("e", "r", "k"):
            await press(app, key)
            said.append(warned(app))
        assert app.screen is app.review_screen  # nothing opened
    assert said[0] == (
        "this item has events A–D (or 1–4); e edits an item once you have judged it: "
        "answer it blind first"
    )
    assert said[1] == "revisions show the key: they open once your blind answer is in"
    assert said[2].startswith("give your blind answer first")
    assert stored_judgments(ordering) == []


async def test_a_letter_already_in_the_order_says_so(ordering: Database) -> None:
    async with running(make_app(ordering, "alice")) as app:
        await press(app, "d", "d")
        assert warned(app) == "D is already in your order; Backspace takes back the last step"
        await press(app, "7")
        assert warned(app) == "this item has events A–D (or 1–4)"
        assert "D, ·, ·, ·" in screen_text(app)


async def test_keys_after_the_reveal_and_on_a_judged_item_say_why(database: Database) -> None:
    store_item(database, "mcq:1", kind="single", key="B")
    async with running(make_app(database, "alice")) as app:
        await press(app, "b", "enter", "o")  # no clear order: ordering items only
        assert warned(app).startswith("no clear order is for ordering items")
        await press(app, "enter")
        assert warned(app).startswith("choose a verdict: k keep")
        await press(app, "k")
        await press(app, "j", *"mcq:1", "enter")
        assert app.review_screen.phase is Phase.JUDGED
        await press(app, "k")
        assert warned(app).startswith("you judged this item already (verdict keep)")
        await press(app, "s")
        assert warned(app) == "skip puts aside an item you have not judged; n moves on"
    assert [j.verdict for j in stored_judgments(database)] == ["keep"]


# --- 3. the editor never destroys text ---------------------------------------------------


async def open_editor(app: ReviewApp) -> EditScreen:
    await press(app, "d", "a", "b", "c", "enter", "f")
    assert isinstance(app.screen, EditScreen)
    return app.screen


async def test_entering_a_field_puts_the_cursor_at_the_end(ordering: Database) -> None:
    async with running(make_app(ordering, "alice")) as app:
        edit = await open_editor(app)
        event_a = edit.query(Input).filter(".choice-input")[0]
        stored = event_a.value
        edit.query_one("#edit-prompt", TextArea).focus()
        await press(app, "tab")  # Tab into the first event: nothing is selected
        assert app.focused is event_a
        await press(app, *" now")
        assert event_a.value == stored + " now"  # added to, never replaced


async def test_undo_and_redo_across_fields_and_removed_events(ordering: Database) -> None:
    async with running(make_app(ordering, "alice")) as app:
        edit = await open_editor(app)
        prompt = edit.query_one("#edit-prompt", TextArea)
        original = prompt.text
        await press(app, "tab", *" again")  # Tab: from the comment to the scenario
        assert prompt.text == original + " again"
        await press(app, "ctrl+z")
        assert prompt.text == original
        await press(app, "ctrl+y")
        assert prompt.text == original + " again"
        # Removing an event is a step too: Ctrl+Z brings it back, with its letter and text.
        events = edit.query(Input).filter(".choice-input")
        second = events[1].value
        events[1].focus()
        await press(app, "ctrl+o")
        assert len(edit.query(Input).filter(".choice-input")) == 3
        assert edit.query_one("#edit-key", Input).value == "C, A, B"
        assert any("Key now: C, A, B" in notice for notice in notices(app))
        await press(app, "ctrl+z")
        restored = edit.query(Input).filter(".choice-input")
        assert [row.value for row in restored][1] == second and len(restored) == 4
        assert edit.query_one("#edit-key", Input).value == "D, A, B, C"
        # The removal's notice described the form before the undo: it goes with it.
        assert notices(app) == ["undo done; key now: D, A, B, C"]
        await press(app, "ctrl+shift+z")  # redo, as Ctrl+Y
        assert len(edit.query(Input).filter(".choice-input")) == 3


async def test_placeholders_look_like_placeholders(ordering: Database) -> None:
    async with running(make_app(ordering, "alice")) as app:
        edit = await open_editor(app)
        note = edit.query_one("#edit-note", Input)
        assert note.value == ""  # a hint is a placeholder, never text that would be saved
        style = note.get_component_rich_style("input--placeholder")
        assert style.italic and style.color != note.rich_style.color


async def test_a_problem_goes_away_once_fixed(ordering: Database) -> None:
    async with running(make_app(ordering, "alice")) as app:
        edit = await open_editor(app)
        key = edit.query_one("#edit-key", Input)
        key.focus()
        await press(app, "backspace", "backspace", "backspace", "Z", "ctrl+s")
        assert "'Z' is not one of the events" in screen_text(app)
        await press(app, "backspace", "C")
        assert "'Z' is not one of the events" not in screen_text(app)
        assert "fix the text or write a comment" in screen_text(app)  # still true, still said


async def test_an_invalid_key_is_refused_never_rewritten(ordering: Database) -> None:
    async with running(make_app(ordering, "alice")) as app:
        edit = await open_editor(app)
        key = edit.query_one("#edit-key", Input)
        key.value = "D, A, B, Z"
        edit.query(Input).filter(".choice-input")[1].focus()
        await press(app, "ctrl+o")
        assert key.value == "D, A, B, Z"  # not silently "C, A, Y"
        assert len(edit.query(Input).filter(".choice-input")) == 4
        assert any("the key 'D, A, B, Z' is not valid" in line for line in notices(app))


async def test_leaving_with_unsaved_changes_asks_first(ordering: Database) -> None:
    async with running(make_app(ordering, "alice")) as app:
        edit = await open_editor(app)
        await press(app, "tab", *" typo")
        await press(app, "escape")
        assert isinstance(app.screen, ConfirmModal)
        await press(app, "n")  # stay: the text is still there
        assert app.screen is edit
        assert edit.query_one("#edit-prompt", TextArea).text.endswith(" typo")
        await press(app, "escape", "y")
        assert app.screen is app.review_screen
    assert stored_judgments(ordering) == [] and len(revisions(ordering)) == 1


# --- 4. f then Esc records nothing; verdicts a lead acts on carry their details -------------


async def test_flawed_then_escape_records_nothing(ordering: Database) -> None:
    async with running(make_app(ordering, "alice")) as app:
        await open_editor(app)
        await press(app, "escape")  # nothing typed: leaves at once
        assert app.review_screen.phase is Phase.REVEALED
        assert "flawed not recorded" in screen_text(app)
    assert stored_judgments(ordering) == []


async def test_flawed_with_only_a_comment_is_recorded(ordering: Database) -> None:
    async with running(make_app(ordering, "alice")) as app:
        edit = await open_editor(app)
        await press(app, "ctrl+s")
        assert "fix the text or write a comment" in screen_text(app)
        edit.query_one("#edit-comment", Input).focus()
        await press(app, *"B and C overlap", "ctrl+s")
        assert app.screen is app.review_screen
    [judgment] = stored_judgments(ordering)
    assert (judgment.verdict, judgment.comment) == ("flawed", "B and C overlap")
    assert len(revisions(ordering)) == 1  # no edit, no new revision


async def test_flawed_with_an_edit_stores_both_in_one_go(ordering: Database) -> None:
    async with running(make_app(ordering, "alice")) as app:
        edit = await open_editor(app)
        await press(app, "tab", *" Now.")
        edit.query_one("#edit-note", Input).focus()
        await press(app, *"clearer scenario", "ctrl+s", "y", "y")
        assert "your edit as revision 2" in screen_text(app)
    [judgment] = stored_judgments(ordering)
    assert (judgment.verdict, judgment.revision_number, judgment.comment) == ("flawed", 1, "")
    assert [r.number for r in revisions(ordering)] == [1, 2]


@pytest.mark.slow
async def test_sensitive_asks_what_is_sensitive(ordering: Database) -> None:
    async with running(make_app(ordering, "alice")) as app:
        await press(app, "d", "a", "b", "c", "enter", "x")
        assert isinstance(app.screen, PromptScreen)
        await press(app, "enter")
        assert "say what is sensitive" in screen_text(app)
        await press(app, "escape")
        assert stored_judgments(ordering) == []
        await press(app, "x", *"names a real person", "enter")
    [judgment] = stored_judgments(ordering)
    assert (judgment.verdict, judgment.comment) == ("sensitive", "names a real person")


def test_the_cli_needs_the_same_details(database: Database) -> None:
    store_item(database, "econ:1", key="DABC")
    store_person(database, "alice")
    url = database.engine.url.render_as_string(hide_password=False)
    for verdict, needed in (
        ("flawed", "an edit of the text or a comment"),
        ("sensitive", "a comment"),
    ):
        result = CliRunner().invoke(
            cli,
            [
                "--db",
                url,
                "judge",
                "econ:1",
                "--as",
                "alice",
                "--answer",
                "DABC",
                "--verdict",
                verdict,
            ],
        )
        assert result.exit_code == 1 and needed in result.output
    assert stored_judgments(database) == []


# --- 5. after an edit -------------------------------------------------------------------


@pytest.mark.slow
async def test_an_editor_is_never_shown_their_own_revision_blind(ordering: Database) -> None:
    store_item(ordering, "econ:2", key="ABCD")
    async with running(make_app(ordering, "alice")) as app:
        first = app.review_screen.item
        assert first is not None
        answer = "dabc" if first.id == "econ:1" else "abcd"
        await press(app, *answer, "enter", "f", "tab", *" Now.")  # Tab: from the comment
        assert isinstance(app.screen, EditScreen)
        app.screen.query_one("#edit-note", Input).focus()
        # Keep the words added to the scenario there (y), then store the diff (y).
        await press(app, *"clearer", "ctrl+s", "y", "y")
        await press(app, "p")  # back to the item just edited
        screen = app.review_screen
        assert screen.item is not None and screen.item.id == first.id and screen.item.revision == 2
        assert screen.phase is Phase.AUTHORED  # with its key, not blind
        assert "You wrote revision 2" in screen_text(app)
        assert "Your verdict: flawed" in screen_text(app)  # for the revision they saw
        await press(app, "u")  # undo: the judgment goes, the revision stays
        assert screen.phase is Phase.AUTHORED
        said = " ".join(notices(app))
        assert "your edit, revision 2, stays" in said and "others judge it" in said
    rows = stored_judgments(ordering)
    assert [(j.verdict, j.revision_number, j.retracted) for j in rows] == [("flawed", 1, True)]
    assert [r.number for r in revisions(ordering) if r.item_id == first.id] == [1, 2]


def test_undo_on_the_cli_says_the_revision_stays(database: Database) -> None:
    store_item(database, "econ:1", key="DABC")
    store_person(database, "alice")
    submit_judgment(
        database,
        "alice",
        "econ:1",
        revision_number=1,
        blind_answer="DABC",
        verdict="flawed",
        edit=ItemEdit(note="clearer", prompt="Order these events."),
    )
    url = database.engine.url.render_as_string(hide_password=False)
    result = CliRunner().invoke(cli, ["--db", url, "undo", "--as", "alice"])
    assert result.exit_code == 0, result.output
    assert "your edit, revision 2, stays (undo never removes a revision)" in result.output


def test_an_empty_queue_says_how_many_open_items_are_ones_own(database: Database) -> None:
    """Whoever imported the items (their login, or their role on PostgreSQL) is never served
    them blind: alone with a fresh import, they are told why nothing waits, and a colleague
    is served them."""
    from db.identity import resolve_identity

    importer = resolve_identity(database, None, register=False).name
    store_person(database, importer)
    store_person(database, "bob")
    url = database.engine.url.render_as_string(hide_password=False)
    imported = CliRunner().invoke(cli, ["--db", url, "import", str(FIXTURES / "econ_ordering.csv")])
    assert imported.exit_code == 0, imported.output
    told = CliRunner().invoke(cli, ["--db", url, "next", "--as", importer])
    assert told.exit_code == 0, told.output
    assert told.output.splitlines()[1] == (
        "36 open items are yours (you imported, generated or edited them), which you cannot "
        "answer blind: other annotators judge them (vetbench users add NAME)"
    )
    served = CliRunner().invoke(cli, ["--db", url, "next", "--as", "bob"])
    assert served.exit_code == 0 and served.output.startswith("econ_ordering:"), served.output


# --- 6. several valid sets of answers ---------------------------------------------------


async def test_several_valid_answers_of_a_multi_item_speak_of_sets(database: Database) -> None:
    store_item(database, "mcq:1", kind="multi", key="AB")
    async with running(make_app(database, "alice")) as app:
        await press(app, "a", "b", "enter", "m")
        assert isinstance(app.screen, AlternativesScreen)
        title = str(app.screen.query_one(PanelTitle).render())
        help_text = str(app.screen.query_one(".dialog-help", Static).render())
        assert title == "Several valid sets of answers: the others"
        assert "another defensible set of answers (e.g. ABC)" in help_text
        assert "order" not in help_text and "(e.g. AB)" not in help_text  # never the key itself
        await press(app, "ctrl+s")
        assert "Add at least one other defensible set of answers first" in screen_text(app)
        await press(app, *"A,B", "enter")
        assert "that is the key itself; type another defensible answer" in screen_text(app)


# --- 13. progress in words ----------------------------------------------------------------


async def test_progress_is_said_in_words(database: Database) -> None:
    for number in range(3):
        store_item(database, f"econ:{number}", key="DABC")
    with database.transaction() as session:
        from db.settings import set_setting

        set_setting(session, "overlap", "1")
    async with running(make_app(database, "alice")) as app:
        await press(app, *"dabc", "enter", "k")
        line = app.review_screen.query_one(ProgressLine)
        await wait_until(pilot_of(app), lambda: "1 done" in str(line.render()), "the count")
        text = str(line.render())
    assert "1 done this session · 2 waiting for you · 1 of 3 items have enough judgments" in text


# --- 14. small things ----------------------------------------------------------------------


def gaps_after_group_labels(app: ReviewApp) -> list[int]:
    """Columns between each group label of the footer ("pick", "verdict") and the key after it."""
    footer = app.screen.query_one(KeyFooter)
    parts = sorted(footer.query("FooterKey, FooterLabel"), key=lambda widget: widget.region.x)
    return [
        after.region.x - label.region.right
        for label, after in zip(parts, parts[1:], strict=False)
        if isinstance(label, FooterLabel)
    ]


async def test_footer_keeps_a_space_after_a_group(ordering: Database) -> None:
    async with running(make_app(ordering, "alice")) as app:
        assert gaps_after_group_labels(app) and min(gaps_after_group_labels(app)) >= 1  # "pick ⌫"
        await press(app, *"dabc", "enter")
        # After the reveal the verdicts sit in their own bar, not in a footer group.
        assert min(gaps_after_group_labels(app), default=1) >= 1


async def test_palette_entries_say_more_than_their_title(ordering: Database) -> None:
    async with running(make_app(ordering, "alice")) as app:
        for phase_keys in ((), ("d", "a", "b", "c", "enter")):
            await press(app, *phase_keys)
            ours = list(app.review_screen.palette_commands())
            assert len(ours) > 5
            for title, help_text, _callback in ours:
                short = title.split(" (")[0].casefold().removeprefix("verdict: ")
                # The help says more than the title: not the same words again.
                assert help_text.casefold() != short and len(help_text) > len(short)


async def test_jumping_to_a_missing_id_says_so_where_it_was_typed(ordering: Database) -> None:
    async with running(make_app(ordering, "alice")) as app:
        await press(app, "j", *"econ:99", "enter")
        assert isinstance(app.screen, PromptScreen)  # stays open, saying why
        assert "there is no item 'econ:99'" in screen_text(app)
        assert "Not saved" not in titles(app)


async def test_the_filter_offers_only_kinds_the_database_has(ordering: Database) -> None:
    store_item(ordering, "mcq:1", kind="single", key="B")
    async with running(make_app(ordering, "alice")) as app:
        await press(app, "slash")
        assert isinstance(app.screen, FilterScreen)
        kinds = app.screen.query_one("#filter-kinds", Select)
        offered = [value for _label, value in kinds._options if value is not Select.NULL]
        assert offered == ["ordering", "single"]


async def test_chosen_answers_are_highlighted_not_dimmed(database: Database) -> None:
    store_item(database, "mcq:1", kind="multi", key="AC")
    async with running(make_app(database, "alice")) as app:
        await press(app, "a", "c")
        rows = {row.label: row for row in app.review_screen.query(ChoiceRow)}
        chosen, other = rows["A"], rows["B"]
        assert chosen.has_class("-chosen") and not other.has_class("-chosen")
        assert not chosen.rich_style.dim and not chosen.rich_style.italic
        assert chosen.rich_style.bold and chosen.styles.background != other.styles.background
        assert "✓" in screen_text(app)


async def test_empty_tables_say_none(database: Database) -> None:
    from helpers import ScreenHost, agreement_shown, wait_until

    from reviewer.tui.screens.adjudication import AdjudicationScreen

    store_person(database, "lea", Role.LEAD)
    async with agreement_shown(database, "lea") as (screen, pilot):
        for table_id in ("#agreement-figures", "#annotator-table", "#breakdown", "#wrong-keys"):
            first = screen.query_one(table_id, DataTable).get_row_at(0)[0]
            assert str(first).startswith("none"), table_id
        shown = screen_text(pilot.app)
        assert "0 items compared" in shown and "0 annotators" in shown
    lead_screen = AdjudicationScreen(database, "lea")
    host = ScreenHost(lead_screen)
    async with host.run_test(size=(120, 40)) as pilot:
        await wait_until(
            pilot,
            lambda: (
                lead_screen.refusal is None
                and lead_screen.cases == {}
                and "to resolve" in screen_text(host)
            ),
            "the queue",
        )
        assert str(lead_screen.query_one("#queue", DataTable).get_row_at(0)[0]) == "none"
        assert "0 conflicts to resolve" in screen_text(host)
