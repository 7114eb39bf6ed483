# ruff: noqa: F811  (tests take the fixture `team` imported from test_privileges)
"""Writes a member made with psql around vetbench's rules (db.guards, migration 0017), run
as real PostgreSQL login roles with raw SQL; and vetbench's own paths, which still work."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa
from test_privileges import JUDGMENT_SQL, Team, raw, run, team  # noqa: F401  (team: the fixture)

pytestmark = pytest.mark.postgres
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

GOLD_JUDGMENT_SQL = JUDGMENT_SQL.replace(", retracted)", ", retracted, gold_id)").replace(
    ", false)", ", false, :gold)"
)
KNOWN_SQL = "SELECT g.item_id, k.answer FROM gold_item g, vetbench_gold_known(g.id) k"


def in_one_transaction(url: str, *statements: str, **params: object) -> None:
    """``statements`` in one transaction, as ``url``'s role."""
    engine = sa.create_engine(url)
    try:
        with engine.begin() as connection:
            for statement in statements:
                connection.execute(sa.text(statement), params)
    finally:
        engine.dispose()


def test_a_judgment_names_only_the_gold_of_its_own_item(team: Team) -> None:
    # A judgment of o:1 naming o:2's gold, then vetbench_gold_known told o:2's answer.
    marked = run(
        team.url(team.lena), "gold", "add", "o:2", "--verdict", "wrong-key", "--answer", "DCBA"
    )
    assert marked.exit_code == 0, marked.output
    alice = team.url(team.alice)
    gold = raw(alice, "SELECT id FROM gold_item WHERE item_id = 'o:2'").scalar_one()
    with pytest.raises(sa.exc.ProgrammingError, match="names gold item .* of item o:2 revision 1"):
        raw(alice, GOLD_JUDGMENT_SQL, annotator=team.person_id(team.alice), gold=gold)
    assert raw(alice, KNOWN_SQL).all() == []
    # vetbench's own calibration judgment of o:2 names its gold and is then told.
    judged = run(alice, "judge", "o:2", "--answer", "ABCD", "--verdict", "keep")
    assert judged.exit_code == 0, judged.output
    assert "your answer ✗ differs" in judged.output
    assert raw(alice, KNOWN_SQL).all() == [("o:2", "DCBA")]
