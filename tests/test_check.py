"""``vetbench check``: a second opinion from a strong model, against a real OpenAI-compatible
server on 127.0.0.1 (tests/fake_openai_server.py), into a real database.

The model's concerns become flags with its reasons (model-disagrees, second-opinion),
never verdicts; structured output falls back to plain text; answers are cached, so
running again asks nothing new and stores nothing twice; the API key is never stored."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from fake_openai_server import FakeOpenAIServer, ItemReview, completion, second_opinion
from helpers import store_item, store_person
from sqlmodel import select

from db.engine import Database, open_database
from db.flags import current_flags
from db.models import AuditEvent, Decision, Item
from db.vocabulary import FlagName, FlagSource, Role
from evaluator.second_opinion import CheckUnreadable, parse_check_answer
from reviewer.cli import cli

SECRET = "sk-check-SECRET-0123456789"
KEY_ENV = "VETBENCH_CHECK_TEST_KEY"

REVIEWS = {
    # the key says A; 30 / 2 = 15, which is B
    "cflue:19": ItemReview(
        key_is_right=False,
        proposed_key="B",
        reasons="30 / 2 = 15, so the multiplier is 15 (B), not 6.",
    ),
    # brochures and shipping the stand are independent: two orders hold
    "econ:7": ItemReview(
        one_defensible_answer=False,
        other_defensible_answers=("D, A, C, B",),
        reasons="Printing the brochures and shipping the stand can happen in either order.",
    ),
    "econ:9": ItemReview(sensitive=True, reasons="It mocks a named ethnic group."),
}


@pytest.fixture
def database(db_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Database]:
    monkeypatch.setenv(KEY_ENV, SECRET)
    db = open_database(db_path)
    store_person(db, "lena", Role.LEAD)
    store_item(db, "econ:1", key="DABC")
    store_item(
        db,
        "econ:7",
        prompt="A firm prepares a trade fair. Put the events in logical order.",
        choices={
            "A": "The brochures are printed.",
            "B": "The fair opens.",
            "C": "The stand is shipped to the venue.",
            "D": "The firm books a stand.",
        },
        key="DCAB",
    )
    store_item(db, "econ:9", prompt="A joke about a group of traders. Order the events.")
    store_item(
        db,
        "cflue:19",
        kind="single",
        prompt="某商品需求价格弹性为2，价格下降30%，需求量增加的倍数约为（）。",
        choices={"A": "6倍", "B": "15倍", "C": "60倍", "D": "0.6倍"},
        key="A",
        explanation=None,
        source="cflue",
        language="zh",
    )
    store_item(
        db,
        "cflue:20",
        kind="single",
        prompt="两只基金的收益率如下表所示，夏普比率较高的是（）。",
        choices={"A": "基金甲", "B": "基金乙"},
        key="A",
        explanation=None,
        source="cflue",
        language="zh",
    )
    yield db
    db.dispose()


def check(db: Database, server: FakeOpenAIServer, *args: str) -> Result:
    return CliRunner().invoke(
        cli,
        [
            "--db",
            str(db.engine.url.database),
            "check",
            *server.cli_options("openai:reviewer-1", KEY_ENV),
            "--max-retries",
            "0",
            "--as",
            "lena",
            *args,
        ],
    )


def flags_by_item(db: Database) -> dict[str, list[Any]]:
    with db.session() as session:
        return current_flags(session, ["econ:1", "econ:7", "econ:9", "cflue:19", "cflue:20"])


def check_flags(db: Database) -> dict[str, list[tuple[str, str]]]:
    return {
        item_id: [
            (flag.name.value, flag.summary) for flag in flags if flag.source is FlagSource.CHECK
        ]
        for item_id, flags in flags_by_item(db).items()
        if any(flag.source is FlagSource.CHECK for flag in flags)
    }


@pytest.mark.parametrize("structured", [True, False], ids=["json-schema", "plain-text"])
def test_the_models_concerns_become_flags_with_its_reasons(
    database: Database, structured: bool
) -> None:
    with FakeOpenAIServer(default=second_opinion(REVIEWS, structured=structured)) as server:
        result = check(database, server, "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["planned"] == summary["answered"] == 5
    assert (summary["failed"], summary["unreadable"]) == (0, 0)
    assert summary["flagged_items"] == 4
    assert summary["new_flags"] == {"model-disagrees": 1, "second-opinion": 3}
    flags = flags_by_item(database)
    found = check_flags(database)
    assert set(found) == {"econ:7", "econ:9", "cflue:19", "cflue:20"}
    [(name, text)] = found["cflue:19"]
    assert name == FlagName.MODEL_DISAGREES.value
    assert "the key A is wrong; it should be B" in text and "30 / 2 = 15" in text
    [wrong_key] = [f for f in flags["cflue:19"] if f.source is FlagSource.CHECK]
    assert wrong_key.evidence["proposed_key"] == "B"
    assert wrong_key.evidence["model"] == "reviewer-1"
    [(name, text)] = found["econ:7"]
    assert name == FlagName.SECOND_OPINION.value
    assert "several orders defensible (also D, A, C, B)" in text
    assert "either order" in text
    assert found["econ:9"] == [
        ("second-opinion", "reviewer-1: sensitive — It mocks a named ethnic group.")
    ]
    [(name, text)] = found["cflue:20"]
    assert "depends on material it does not contain" in text
    # a second opinion is a hint: nothing was decided, no status moved
    with database.session() as session:
        assert session.exec(select(Decision)).all() == []
        assert {item.status for item in session.exec(select(Item))} == {"pending"}
    # the requests asked for JSON only where the server takes it
    asked = [("response_format" in (r.body or {})) for r in server.chat_requests()]
    assert all(asked) if structured else not all(asked)


def test_a_second_run_asks_nothing_new_and_stores_nothing_twice(database: Database) -> None:
    with FakeOpenAIServer(default=second_opinion(REVIEWS)) as server:
        first = check(database, server, "--json")
        asked = len(server.chat_requests())
        second = check(database, server, "--json")
        assert len(server.chat_requests()) == asked  # every answer came from the cache
    assert first.exit_code == second.exit_code == 0
    again = json.loads(second.stdout)
    assert again["cached"] == 5 and again["flagged_items"] == 0 and again["new_flags"] == {}
    assert sum(len(flags) for flags in check_flags(database).values()) == 4
    with database.session() as session:
        events = session.exec(select(AuditEvent).where(AuditEvent.action == "flag")).all()
    assert sorted(event.target for event in events) == ["cflue:19", "cflue:20", "econ:7", "econ:9"]
    assert {event.actor for event in events} == {"lena"}
    assert all(event.payload["source"] == "check" for event in events)


def test_the_key_is_never_stored_or_printed(database: Database, db_path: Path) -> None:
    with FakeOpenAIServer(default=second_opinion(REVIEWS)) as server:
        result = check(database, server)
        assert server.chat_requests()[0].headers["authorization"] == f"Bearer {SECRET}"
    assert result.exit_code == 0
    assert SECRET not in result.output
    database.dispose()
    assert SECRET.encode() not in db_path.read_bytes()


def test_unreadable_answers_and_failures_store_nothing_and_say_so(database: Database) -> None:
    def garbled(request: Any) -> Any:
        return completion("I think it is mostly fine, perhaps.")

    with FakeOpenAIServer(default=garbled) as server:
        result = check(database, server, "--item", "cflue:19", "--json")
    assert result.exit_code == 0
    summary = json.loads(result.stdout)
    assert (summary["answered"], summary["unreadable"], summary["flagged_items"]) == (1, 1, 0)
    assert "neither JSON nor the expected lines" in summary["failures"][0]
    assert check_flags(database) == {}


def test_only_openai_models_and_known_items_are_checked(database: Database) -> None:
    with FakeOpenAIServer(default=second_opinion(REVIEWS)) as server:
        wrong_model = CliRunner().invoke(
            cli, ["--db", str(database.engine.url.database), "check", "--model", "demo"]
        )
        missing = check(database, server, "--item", "cflue:404")
    assert wrong_model.exit_code == 1 and "openai:NAME" in wrong_model.output
    assert missing.exit_code == 1 and "cflue:404" in missing.output


def test_the_plain_text_answer_is_read_in_either_case_and_language_of_yes() -> None:
    answer = parse_check_answer(
        "**ONE ANSWER**: no: D, A, C, B; C, D, A, B\nKEY RIGHT: No: B\n"
        "MISSING MATERIAL: yes\nSENSITIVE: 否\nREASONS: two orders."
    )
    assert answer.other_defensible_answers == ("D, A, C, B", "C, D, A, B")
    assert (answer.key_is_right, answer.proposed_key) == (False, "B")
    assert (answer.needs_missing_material, answer.sensitive) == (True, False)
    assert answer.reasons == "two orders." and not answer.structured
    with pytest.raises(CheckUnreadable, match="KEY RIGHT"):
        parse_check_answer("ONE ANSWER: yes\nMISSING MATERIAL: no\nSENSITIVE: no")
    with pytest.raises(CheckUnreadable, match="expected true or false"):
        parse_check_answer(json.dumps({"key_is_right": "maybe"}))
