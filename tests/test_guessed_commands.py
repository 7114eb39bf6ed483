"""Commands typed the way a newcomer guesses them: `judge` without an item, a status after
`decide ITEM_ID`, a bare number for an id of the form SOURCE:NUMBER.  Each is told what
was meant, and nothing is written."""

from __future__ import annotations

import pytest
from helpers import run_cli, store_item, store_person, stored_judgments
from sqlmodel import select

from db.engine import Database
from db.models import Decision
from db.vocabulary import Role
from reviewer.tui.screens.prompt import Refused, item_id_validator


@pytest.fixture
def team(database: Database) -> Database:
    """knowledge:7, econ:7 and knowledge:17; bob annotates, lena leads."""
    for item_id in ("knowledge:7", "econ:7", "knowledge:17"):
        store_item(database, item_id, key="DABC")
    store_person(database, "bob")
    store_person(database, "lena", Role.LEAD)
    return database


def test_judge_without_an_item_says_to_give_one_or_a_file(team: Database) -> None:
    result = run_cli(team, "judge", "--as", "bob")
    assert result.exit_code == 2
    assert "Error: give ITEM_ID (with --answer, --verdict or both), or --from FILE" in result.output
    assert "Missing argument" not in result.output


def test_a_status_after_the_item_is_told_where_it_goes(team: Database) -> None:
    for word, command in (
        ("approve", "decide knowledge:7 --status approved"),
        ("approved", "decide knowledge:7 --status approved"),
        ("reject", "decide knowledge:7 --status rejected --reason REASON"),
    ):
        result = run_cli(team, "decide", "knowledge:7", word, "--as", "lena")
        assert result.exit_code == 2, result.output
        assert "Error: the status goes in --status: vetbench --db " in result.output
        assert result.output.rstrip().endswith(command), result.output
    stray = run_cli(team, "decide", "knowledge:7", "soon", "--status", "approved", "--as", "lena")
    assert stray.exit_code == 2 and "Error: unexpected extra argument (soon)" in stray.output
    missing = run_cli(team, "decide", "knowledge:7", "--as", "lena")
    assert missing.exit_code == 2 and "Error: Missing option '--status'" in missing.output
    with team.session() as session:  # nothing was decided
        assert session.exec(select(Decision)).all() == []


def test_a_bare_number_is_told_the_ids_it_may_stand_for(team: Database) -> None:
    """judge, decide, gold and the app's id prompt (duplicate of, open item) say it alike;
    knowledge:17 does not end in :7."""
    hint = "there is no item '7'; did you mean econ:7, knowledge:7?"
    judged = run_cli(team, "judge", "7", "--as", "bob", "--answer", "DABC", "--verdict", "keep")
    assert judged.exit_code == 1 and f"error: not saved: {hint}" in judged.output
    duplicate = run_cli(
        team, "judge", "knowledge:17", "--as", "bob", "--answer", "DABC", "--verdict",
        "duplicate", "--duplicate-of", "7",
    )  # fmt: skip
    assert f"duplicate-of: {hint}" in duplicate.output
    decided = run_cli(team, "decide", "7", "--status", "approved", "--as", "lena")
    assert decided.exit_code == 1 and f"error: {hint}" in decided.output
    gold = run_cli(team, "gold", "add", "7", "--as", "lena")
    assert gold.exit_code == 1 and f"error: {hint}" in gold.output
    with pytest.raises(Refused, match=f"^{hint.replace('?', '[?]')}$"):
        item_id_validator(team, "give an id")("7")
    assert stored_judgments(team) == []
    # no guess without a match, nor for an id that names its source
    nothing = run_cli(team, "decide", "8", "--status", "approved", "--as", "lena")
    assert nothing.output.strip() == "error: there is no item '8'"
    named = run_cli(team, "decide", "econ:17", "--status", "approved", "--as", "lena")
    assert named.output.strip() == "error: there is no item 'econ:17'"
