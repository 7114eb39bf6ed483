"""`approve-agreed --min-confidence` and items judged fewer times than the overlap.

Under fixed routing every item gets `overlap` judgments; the consensus may still keep an
item one reliable annotator judged (the README's "backed" lone judgment), and approved
it without a word that the team's overlap was not met.  It now says so, naming them,
before asking.  Under adaptive routing one judgment can be the rule: nothing to say.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import built_demo_database, item_status, run_cli

from db.engine import Database, open_database
from db.items import get_item
from reviewer.judging import submit_judgment

JUDGED_ONCE = ("cflue_mcq:5", "econ_ordering:3", "econ_ordering:6")  # pending in the demo


@pytest.fixture
def judged_once(tmp_path: Path) -> Database:
    """The demo database, where ``demo-bo`` (reliable: 0.96, low end 0.88) judged three
    pending items alone, blind answer the key and keep."""
    database = open_database(str(built_demo_database(tmp_path / "demo.db")))
    for item_id in JUDGED_ONCE:
        with database.session() as session:
            item = get_item(session, item_id)
        assert item is not None and item_status(database, item_id) == "pending"
        submit_judgment(
            database, "demo-bo", item_id, revision_number=None, blind_answer=item.key,
            verdict="keep",
        )  # fmt: skip
    return database


def test_approving_below_the_overlap_is_said_before_it_is_done(judged_once: Database) -> None:
    assert [item_status(judged_once, item_id) for item_id in JUDGED_ONCE] == ["in_review"] * 3
    asked = run_cli(judged_once, "approve-agreed", "--as", "lena", "--min-confidence", "0.95")
    note = (
        "Of the 3 items to approve, 3 have fewer judgments than overlap 2 (routing fixed: "
        "every item gets 2), and the review queue still serves them: cflue_mcq:5 (1), "
        "econ_ordering:3 (1), econ_ordering:6 (1)."
    )
    assert note in asked.stdout and asked.stdout.index(note) < asked.stdout.index("Approve 3")
    assert [item_status(judged_once, item_id) for item_id in JUDGED_ONCE] == ["in_review"] * 3
    # `consensus` counts what approve-agreed acts on, and says the same of them
    assert note in run_cli(judged_once, "consensus", "--as", "lena").stdout
    done = run_cli(
        judged_once, "approve-agreed", "--as", "lena", "--min-confidence", "0.95", "--yes"
    )
    assert done.exit_code == 0 and note in done.stdout, done.output
    assert [item_status(judged_once, item_id) for item_id in JUDGED_ONCE] == ["approved"] * 3


def test_under_adaptive_routing_one_judgment_is_the_rule(judged_once: Database) -> None:
    setting = run_cli(judged_once, "config", "set", "routing", "adaptive", "--as", "lena")
    assert setting.exit_code == 0, setting.output
    result = run_cli(
        judged_once, "approve-agreed", "--as", "lena", "--min-confidence", "0.95", "--yes"
    )
    assert result.exit_code == 0, result.output
    assert "fewer judgments than overlap" not in result.stdout
    assert [item_status(judged_once, item_id) for item_id in JUDGED_ONCE] == ["approved"] * 3


def test_an_item_under_the_overlap_is_never_agreed_under_fixed_routing(
    judged_once: Database,
) -> None:
    """Without --min-confidence unanimity decides, and only at `overlap` judgments."""
    result = run_cli(judged_once, "approve-agreed", "--as", "lena", "--yes")
    assert result.stdout == "no agreed items to approve\n"
    assert [item_status(judged_once, item_id) for item_id in JUDGED_ONCE] == ["in_review"] * 3
