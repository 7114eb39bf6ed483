"""Triage: the suspicion score and its reasons (models agreeing against the key across
runs, annotator disagreement, flags), `vetbench triage` with the commands that act on
each item, `review --order suspicious`, and the keyboard path from triage to decisions:
the review screen (flags only after the blind answer) and the conflict screen (F3)
showing the score."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import (
    open_screen,
    press,
    run_cli,
    running,
    screen_text,
    store_item,
    store_person,
    wait_until,
)
from textual.widgets import DataTable, Select, Static

from db.engine import Database, open_database
from db.settings import set_setting
from db.vocabulary import FlagName, QueueOrder, Role
from evaluator.backends.scripted import Script, ScriptedBackend
from evaluator.item_filter import ItemFilter
from evaluator.runner import create_run, execute_run
from reviewer.judging import submit_judgment
from reviewer.queue import ReviewQueue
from reviewer.triage import decide_command, rank_items
from reviewer.tui.app import make_app
from reviewer.tui.screens.adjudication import AdjudicationScreen
from reviewer.tui.screens.jump import FilterScreen
from reviewer.tui.screens.lead_modals import ReasonModal
from reviewer.tui.widgets.reveal import RevealPanel

TABLE_PROMPT = "两只基金在两种状态下的预期收益率如下表所示，期望收益率较高的是（）。"
FUND_CHOICES = {"A": "基金甲", "B": "基金乙", "C": "一样高"}


def evaluate(database: Database, model: str, outputs: dict[str, str]) -> int:
    """A finished run of a scripted ``model`` over the pending items."""
    backend = ScriptedBackend(Script(outputs), model=model)
    run_id = create_run(database, backend.info, item_filter=ItemFilter(statuses=("pending",)))
    execute_run(database, run_id, backend)
    return run_id


@pytest.fixture
def suspicious(database: Database) -> Database:
    """wrong:1 (two models agree on B against the key A), judged:1 (two annotators agree
    on B), media:1 (refers to a table it lacks), lone:1 (one of two models disagrees),
    clean:1 (nothing)."""
    with database.transaction() as session:
        set_setting(session, "overlap", "2")
    store_person(database, "lena", Role.LEAD)
    store_item(database, "wrong:1", kind="single", prompt="下列属于一般性货币政策工具的是（）。",
               choices={"A": "窗口指导", "B": "公开市场操作", "C": "消费者信用控制"}, key="A")  # fmt: skip
    store_item(database, "judged:1", kind="single", prompt="某商品需求价格弹性为2，价格下降30%，需求量增加（）。",
               choices={"A": "6%", "B": "60%", "C": "15%"}, key="A")  # fmt: skip
    store_item(
        database, "media:1", kind="single", prompt=TABLE_PROMPT, choices=FUND_CHOICES, key="A"
    )
    store_item(database, "lone:1", kind="single", prompt="我国A股市场实行的交易制度是（）。",
               choices={"A": "T+0", "B": "T+1", "C": "T+2"}, key="B")  # fmt: skip
    store_item(database, "clean:1", kind="single", prompt="中国的中央银行是（）。",
               choices={"A": "中国人民银行", "B": "中国银行", "C": "国家开发银行"}, key="A")  # fmt: skip
    right = {"wrong:1": "A", "judged:1": "A", "media:1": "A", "lone:1": "B", "clean:1": "A"}
    evaluate(database, "model-a", {**right, "wrong:1": "B", "lone:1": "C"})
    evaluate(database, "model-b", {**right, "wrong:1": "B"})
    for annotator in ("bob", "carol"):
        submit_judgment(database, annotator, "judged:1", revision_number=None, blind_answer="B",
                        verdict="wrong-key", corrected_key="B")  # fmt: skip
    return database


def test_items_are_ranked_by_the_signs_with_reasons_and_a_likely_decision(
    suspicious: Database,
) -> None:
    entries = rank_items(suspicious)
    assert [entry.item_id for entry in entries] == ["wrong:1", "judged:1", "media:1", "lone:1"]
    wrong, judged, media, lone = entries
    assert wrong.score == pytest.approx(4.0)
    assert wrong.reasons[0].text.startswith(
        "2 of 2 models answer B, not the key A (model-a, model-b"
    )
    assert (
        decide_command(wrong, "lena")
        == "vetbench decide wrong:1 --status approved --key B --as lena"
    )
    assert judged.score == pytest.approx(2.0 + 1.5)
    assert [r.sign for r in judged.reasons] == ["annotators", "annotators"]
    assert "bob answered B blind, verdict wrong-key, proposes B" in judged.reasons[0].text
    assert judged.suggestion is not None and judged.suggestion.key == "B"
    assert media.score == pytest.approx(2.0)
    assert media.reasons[0].sign == FlagName.NEEDS_MEDIA.value
    # no lead named: the command a lead runs as themselves, never a literal --as LEAD
    assert decide_command(media) == "vetbench decide media:1 --status rejected --reason flawed"
    assert lone.score == pytest.approx(0.25) and lone.suggestion is None
    assert decide_command(lone) is None
    assert "clean:1" not in [entry.item_id for entry in entries]


def test_a_blind_answer_its_annotator_then_kept_the_key_over_suggests_no_key(
    database: Database,
) -> None:
    """Answering otherwise blind is a sign; keeping the key after seeing it says the key
    is right, so triage suggests no other key on such answers alone (it once printed
    `decide … --key B` for one annotator who answered B, then kept the key A)."""
    with database.transaction() as session:
        set_setting(session, "overlap", "4")
    for item_id in ("kept:1", "kept:2", "contested:1", "tie:1"):
        store_item(database, item_id, kind="single", prompt=f"{item_id}: 中国的中央银行是（）。",
                   choices={"A": "中国人民银行", "B": "中国银行", "C": "国家开发银行"}, key="A")  # fmt: skip
    submit_judgment(database, "bob", "kept:1", revision_number=None, blind_answer="B",
                    verdict="keep")  # fmt: skip
    for annotator in ("bob", "carol"):
        submit_judgment(database, annotator, "kept:2", revision_number=None, blind_answer="B",
                        verdict="keep")  # fmt: skip
    submit_judgment(database, "bob", "contested:1", revision_number=None, blind_answer="B",
                    verdict="keep")  # fmt: skip
    submit_judgment(database, "carol", "contested:1", revision_number=None, blind_answer="B",
                    verdict="wrong-key", corrected_key="B")  # fmt: skip
    for annotator, answer, verdict in [
        ("bob", "B", "keep"),
        ("carol", "B", "keep"),
        ("dave", "C", "wrong-key"),
        ("erin", "C", "wrong-key"),
    ]:
        submit_judgment(database, annotator, "tie:1", revision_number=None, blind_answer=answer,
                        verdict=verdict, corrected_key=answer if verdict != "keep" else None)  # fmt: skip
    entries = {entry.item_id: entry for entry in rank_items(database)}

    lone = entries["kept:1"]
    assert [r.text for r in lone.reasons] == [
        "1 of 1 annotators disagree: bob answered B blind, then kept the key"
    ]
    assert lone.suggestion is None and decide_command(lone) is None
    # Two found B apart: still the stronger sign, but both kept the key.
    both = entries["kept:2"]
    assert [r.text for r in both.reasons][1] == "2 annotators agree on B instead of the key A"
    assert both.score == pytest.approx(2.0 + 1.5)
    assert both.suggestion is None
    # One of them asks for B as the key: that is a key to suggest.
    contested = entries["contested:1"]
    assert contested.suggestion is not None and contested.suggestion.key == "B"
    assert decide_command(contested) == "vetbench decide contested:1 --status approved --key B"
    # As many kept B as ask for C: C, the key someone asked for.
    tie = entries["tie:1"]
    assert tie.suggestion is not None and tie.suggestion.key == "C"


def test_the_runs_model_flag_is_not_counted_twice(suspicious: Database) -> None:
    from db.flags import current_flags, refresh_model_flags

    before = {entry.item_id: entry.score for entry in rank_items(suspicious)}
    with suspicious.transaction() as session:
        assert refresh_model_flags(session) == (1, 0)
    with suspicious.session() as session:
        [flag] = current_flags(session, ["wrong:1"])["wrong:1"]
    assert flag.name is FlagName.MODEL_DISAGREES and flag.source.value == "model"
    assert flag.summary == "2 of 2 models answer B; the key is A (model-a, model-b)"
    assert {entry.item_id: entry.score for entry in rank_items(suspicious)} == before


def test_the_triage_command_lists_reasons_and_the_commands_to_act(suspicious: Database) -> None:
    listed = json.loads(run_cli(suspicious, "triage", "--json").stdout)
    assert [entry["item_id"] for entry in listed] == ["wrong:1", "judged:1", "media:1", "lone:1"]
    assert list(listed[0]) == [
        "item_id", "kind", "status", "revision", "key", "score", "reasons", "suggestion",
    ]  # fmt: skip
    assert listed[0]["suggestion"] == {"status": "approved", "key": "B", "reason": None}
    assert listed[0]["reasons"][0]["sign"] == "models"
    text = run_cli(suspicious, "triage", "--limit", "2", "--as", "lena").stdout
    assert "  1. wrong:1  score 4.00" in text
    assert "→ vetbench decide wrong:1 --status approved --key B --as lena" in text
    assert "media:1" not in text  # beyond the limit
    assert "the 2 most suspicious items; --all lists every item with a score." in text
    whole = run_cli(suspicious, "triage", "--all").stdout
    assert "\n4 items.\n" in whole and "--all lists" not in whole
    assert "vetbench review --order suspicious --as lena" in text
    decided_only = json.loads(
        run_cli(suspicious, "triage", "--status", "approved", "--json").stdout
    )
    assert decided_only == []


def test_whose_judgments_say_what_is_for_leads_as_in_the_conflict_queue(
    suspicious: Database,
) -> None:
    """An annotator who asks keeps judging blind: the same items, order and scores, but the
    annotators' signs say only how many, and no key they proposed is suggested."""
    store_person(suspicious, "dan")
    for who in ((), ("--as", "dan")):  # the unregistered login, and an annotator
        blind = json.loads(run_cli(suspicious, "triage", "--json", *who).stdout)
        lead = json.loads(run_cli(suspicious, "triage", "--json", "--as", "lena").stdout)
        assert [(e["item_id"], e["score"]) for e in blind] == [
            (e["item_id"], e["score"]) for e in lead
        ]
        judged = {e["item_id"]: e for e in blind}["judged:1"]
        assert [reason["text"] for reason in judged["reasons"]] == [
            "2 of 2 annotators disagree (who and how: for leads)",
            "2 annotators agree on one answer other than the key",
        ]
        assert judged["suggestion"] is None
        said = run_cli(suspicious, "triage", *who).stdout
        assert "bob" not in said and "carol" not in said and "proposes" not in said
        assert (
            "Who judged what is for leads (--as a lead's name on SQLite; a lead's own login" in said
        )
        # the models' answers and the flags are anyone's to read (`runs suspects`, `flags`)
        assert "2 of 2 models answer B, not the key A" in said
    shown = {e["item_id"]: e for e in lead}["judged:1"]
    assert shown["reasons"][0]["text"].startswith("2 of 2 annotators disagree: bob answered B")
    assert shown["suggestion"] == {"status": "approved", "key": "B", "reason": None}
    as_lead = run_cli(suspicious, "triage", "--as", "lena").stdout
    assert "Who judged what" not in as_lead


def test_the_suspicious_order_serves_the_highest_score_first(suspicious: Database) -> None:
    queue = ReviewQueue(suspicious, "lena", order=QueueOrder.SUSPICIOUS)
    served = []
    while (item := queue.skip()) is not None and item.id not in served:
        served.append(item.id)
    # judged:1 has its two judgments (a conflict): not in the queue any more
    assert served == ["wrong:1", "media:1", "lone:1", "clean:1"]
    plain = ReviewQueue(suspicious, "dan")
    assert plain.fetch_next() is not None  # the default order is untouched


@pytest.mark.slow
async def test_a_lead_goes_from_triage_to_decisions_at_the_keyboard(
    suspicious: Database,
) -> None:
    """triage names the order; `review --order suspicious` serves wrong:1 first, blind (no
    flag, no score, no evidence on screen), then the reveal shows the flags; F3 lists the
    conflicts by score with the reasons, and a key press decides."""
    app = make_app(suspicious, "lena", order="suspicious")
    async with running(app):
        screen = app.review_screen
        assert screen.item is not None and screen.item.id == "wrong:1"
        await press(app, "c")  # the next item, media:1, holds a needs-media flag
        await press(app, "n")
        assert screen.item is not None and screen.item.id == "media:1"
        blind = screen_text(app)
        for word in ("needs-media", "Flags", "⚑", "does not contain", "score", "suspicious"):
            assert word not in blind, word
        reveal = screen.query_one(RevealPanel)
        assert not reveal.display and str(reveal.query_one("#reveal-flags", Static).render()) == ""
        await press(app, "b", "enter")
        shown = screen_text(app)
        assert "Flags" in shown and "needs-media" in shown and "如下表" in shown
        await press(app, "w")  # wrong key: asks for the corrected key
        await press(app, *"B", "enter")
        # bob's judgment completes the overlap: media:1 becomes a conflict for F3
        submit_judgment(suspicious, "bob", "media:1", revision_number=None, blind_answer="A",
                        verdict="flawed", comment="the table is missing")  # fmt: skip
        await press(app, "f3")
        adjudication = app.screen
        assert isinstance(adjudication, AdjudicationScreen)
        pilot = app.pilot  # type: ignore[attr-defined]
        await wait_until(pilot, lambda: len(adjudication.cases) == 2, "the conflict queue")
        queue = adjudication.query_one("#queue", DataTable)
        first, second = (queue.get_row_at(row) for row in range(2))
        assert str(first[0]) == "media:1" and str(second[0]) == "judged:1"
        assert float(str(first[1])) > float(str(second[1]))
        history = str(adjudication.query_one("#case-history", Static).render())
        assert "suspicion score" in history and "needs-media" in history
        await pilot.press("x")  # reject: the dialog names the suggested reason, the lead picks it
        await wait_until(pilot, lambda: isinstance(app.screen, ReasonModal), "the reason dialog")
        assert "flawed" in screen_text(app) or "wrong-key" in screen_text(app)
        # a single-answer item: no "no clear order", and each reason keeps its number
        assert "no-clear-order" not in screen_text(app)
        assert "1 several-valid-answers  more than one answer is defensible" in screen_text(app)
        assert "4 flawed" in screen_text(app)
        await pilot.press("4", "tab", *"needs the table", "enter")  # 4: flawed
        await wait_until(pilot, lambda: "media:1" not in adjudication.cases, "the decision")
    with suspicious.session() as session:
        from sqlmodel import select

        from db.models import Decision

        [decision] = session.exec(select(Decision)).all()
    # rejected with the reason the lead picked
    assert (decision.item_id, decision.status) == ("media:1", "rejected")
    assert decision.reason == "flawed"
    assert decision.comment == "needs the table"


def test_review_order_and_flag_options_reach_the_queue(db_path: Path) -> None:
    database = open_database(db_path)
    store_item(
        database, "media:1", kind="single", prompt=TABLE_PROMPT, choices=FUND_CHOICES, key="A"
    )
    store_item(database, "plain:1", kind="single", prompt="中国的中央银行是（）。", key="A")
    app = make_app(database, "lena", flag="needs-media", order="suspicious")
    assert app.queue.filters.flags == ("needs-media",) and app.queue.order is QueueOrder.SUSPICIOUS
    assert app.queue.fetch_next() is not None and app.queue.history.current == "media:1"
    assert app.queue.skip() is not None and app.queue.history.current == "media:1"  # nothing else
    database.dispose()


async def test_the_filter_serves_only_items_with_the_chosen_flag(suspicious: Database) -> None:
    app = make_app(suspicious, "dan")
    async with running(app):
        filters = await open_screen(app, "slash", FilterScreen)
        flag = filters.query_one("#filter-flags", Select)
        assert [str(value) for _label, value in flag._options[1:]] == [f.value for f in FlagName]
        flag.value = FlagName.NEEDS_MEDIA.value
        await press(app, "ctrl+s")
        screen = app.review_screen
        assert screen.item is not None and screen.item.id == "media:1"
        assert app.queue.filters.describe() == "flag needs-media"  # what the progress line says
        await press(app, "s")
        assert screen.item is not None and screen.item.id == "media:1"  # nothing else has it
