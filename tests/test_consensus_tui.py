"""The consensus in the lead's screens: F3 shows it under each case and lists the items it
refers to the lead (a wrong key, a drop) even when their judgments are not in conflict,
offering its suggested key; F2 shows each rater's reliability."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import BuiltDatabases
from consensus_study import AVERAGE, CARELESS, EXPERT, SPAMMER, judge_items, plant_items
from helpers import (
    ScreenHost,
    agreement_shown,
    run_cli,
    screen_text,
    store_person,
    wait_until,
)
from textual.widgets import DataTable

from db.answers import format_answer
from db.consensus import ConsensusOutcome, consensus_of
from db.engine import Database
from db.settings import set_setting
from db.vocabulary import Role
from reviewer.tui.screens.adjudication import AdjudicationScreen
from reviewer.tui.screens.prompt import PromptScreen


def build_study(db: Database) -> None:
    """60 planted items judged three times each; overlap 4, so none is in conflict yet."""
    store_person(db, "lena", Role.LEAD)
    items = plant_items(db, 1, 60)
    with db.transaction() as session:
        set_setting(session, "overlap", "4")
    judge_items(db, 2, items, (EXPERT, AVERAGE, CARELESS, SPAMMER))


@pytest.fixture
def study(db_path: Path, built_databases: BuiltDatabases) -> Database:
    return built_databases.copy(db_path, build_study)


@pytest.mark.slow
async def test_f3_lists_the_items_the_consensus_refers_to_the_lead(study: Database) -> None:
    consensus = consensus_of(study)
    referred = [c for c in consensus.items if c.outcome(0.95) is ConsensusOutcome.WRONG_KEY]
    assert referred
    wrong = referred[0]
    screen = AdjudicationScreen(study, "lena")
    app = ScreenHost(screen)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: wrong.item_id in screen.cases, "the referred items")
        table = screen.query_one("#queue", DataTable)
        assert table.row_count == len(screen.cases)
        assert all(case.item.status == "in_review" for case in screen.cases.values())
        table.move_cursor(row=table.get_row_index(wrong.item_id))
        await pilot.pause()
        shown = screen_text(app)
        suggested = format_answer(wrong.kind, wrong.suggested_key or "")
        assert str(table.get_row(wrong.item_id)[4]) == "consensus: wrong-key"
        assert "says the key is wrong: yours to decide" in shown
        # half the width since the queue keeps its columns whole: "suggested" and "key" may
        # wrap apart, and the key itself too; the prompt holds it
        assert "suggested" in shown
        await pilot.press("c")
        await wait_until(pilot, lambda: isinstance(app.screen, PromptScreen), "the key prompt")
        prompt = app.screen
        assert isinstance(prompt, PromptScreen) and prompt.initial == suggested


async def test_f2_shows_each_raters_reliability(study: Database) -> None:
    async with agreement_shown(study, "lena") as (screen, _pilot):
        table = screen.query_one("#reliability-table", DataTable)
        rows = [[str(cell) for cell in table.get_row_at(n)] for n in range(table.row_count)]
    assert [row[0] for row in rows][-1] == "spammer"
    assert {row[0] for row in rows} == {"expert", "average", "careless", "spammer"}
    spammer = rows[-1]
    assert spammer[5] == "guessing: not counted"
    assert float(rows[0][2]) > float(spammer[2])
    # ARCHITECTURE.md: `vetbench consensus` lists the same rows (reviewer.agreement.rows).
    printed = run_cli(study, "consensus").output.split("Reliability")[1].splitlines()[2:]
    listed = [re.split(r"\s{2,}", line.strip()) for line in printed if line.strip()]
    assert listed == [[cell for cell in row if cell] for row in rows]


@pytest.mark.slow
async def test_f3_decides_at_the_leads_target_confidence(study: Database) -> None:
    """A lead who asks adaptive routing for 0.6 sees F3 refer what the consensus doubts
    at 0.6 (more than at the default 0.95), so the screen and the routing agree."""
    with study.transaction() as session:
        set_setting(session, "target_confidence", "0.6")
    consensus = consensus_of(study)
    doubted = {ConsensusOutcome.WRONG_KEY, ConsensusOutcome.DROP}
    at_06 = {c.item_id for c in consensus.items if c.outcome(0.6) in doubted}
    at_095 = {c.item_id for c in consensus.items if c.outcome(0.95) in doubted}
    assert at_06 > at_095  # the setting changes what is referred: this can fail
    screen = AdjudicationScreen(study, "lena")
    app = ScreenHost(screen)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: bool(screen.cases), "the referred items")
        assert set(screen.cases) == at_06
        assert screen.consensus_confidence == 0.6
