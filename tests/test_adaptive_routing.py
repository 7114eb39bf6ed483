"""Adaptive overlap (``routing adaptive``, ``db.routing``): an item stops needing
judgments once the consensus is sure of it, gets more while it is not, and goes to the
lead after ``max_overlap``; the queue serves the items another judgment is worth most
for first, never twice, never one's own revision blind.  Real SQLite files and a real
PostgreSQL server.

Alice and Bob are known to be reliable and Sam to answer at random: all three judged
the same eight gold items (``calibrated``), so the consensus has their measure."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from conftest import BuiltDatabases
from helpers import item_status, run_cli, store_item, store_person
from role_helpers import RoleNames, role_names

from db.engine import Database
from db.gold import add_gold
from db.item_status import refresh_open_statuses
from db.routing import forget_fits, item_beliefs
from db.settings import set_setting
from db.vocabulary import Role
from evaluator.backends.scripted import Script, ScriptedBackend
from evaluator.item_filter import ItemFilter
from evaluator.runner import create_run, execute_run
from reviewer.adjudication import approve_agreed
from reviewer.judging import ItemEdit, edit_item, submit_judgment
from reviewer.queue import CLAIM_TTL, ReviewQueue, annotator_queue

KEY = "DABC"  # the key of every ordering item stored here
OTHER = "ADBC"


@pytest.fixture
def roles(database_url: str) -> Iterator[RoleNames]:
    yield from role_names(database_url)


@pytest.fixture
def calibrated(database: Database, built_databases: BuiltDatabases) -> Database:
    """The calibrated study (``calibrate``), built once per test process and backend and
    copied; no fit made yet, as on a database it was just stored into."""
    built_databases.fill(database, calibrate)
    forget_fits()
    return database


def calibrate(database: Database) -> None:
    """Eight gold items, two with a wrong key; alice and bob answer them right, sam at
    random."""
    store_person(database, "lena", Role.LEAD)
    for name in ("alice", "bob", "carol", "dave", "sam"):
        store_person(database, name)
    for number in range(8):
        item_id = store_item(database, f"gold:{number}", kind="single", key="B")
        right = "C" if number < 2 else "B"  # two keys are wrong, as some always are
        with database.transaction() as session:
            verdict = "keep" if right == "B" else "wrong-key"
            add_gold(session, "lena", item_id, verdict=verdict, answer=right)
        for name, answer in (("alice", right), ("bob", right), ("sam", "AB"[number % 2])):
            submit_judgment(
                database,
                name,
                item_id,
                revision_number=None,
                blind_answer=answer,
                verdict="keep" if answer == "B" else "wrong-key",
                corrected_key=None if answer == "B" else answer,
            )


def adaptive(database: Database, *, max_overlap: int = 3, target: str = "0.95") -> None:
    with database.transaction() as session:
        set_setting(session, "routing", "adaptive")
        set_setting(session, "max_overlap", str(max_overlap))
        set_setting(session, "target_confidence", target)
    refresh_open_statuses(database)


def judge(database: Database, who: str, item_id: str, answer: str = KEY) -> str:
    receipt = submit_judgment(
        database,
        who,
        item_id,
        revision_number=None,
        blind_answer=answer,
        verdict="keep" if answer == KEY else "wrong-key",
        corrected_key=None if answer == KEY else answer,
    )
    return receipt.item_status


def beliefs(database: Database, *item_ids: str) -> str:
    """The routing's figures, for an assertion's message."""
    with database.transaction() as session:
        return repr(item_beliefs(session, item_ids))


def drain(queue: ReviewQueue, answer: str = KEY) -> list[str]:
    served = []
    while (item := queue.fetch_next()) is not None:
        served.append(item.id)
        judge(queue.db, queue.annotator, item.id, answer)
    return served


def test_routing_is_fixed_until_a_lead_sets_it(calibrated: Database) -> None:
    store_item(calibrated, "econ:1")
    assert run_cli(calibrated, "config", "get", "routing").output.strip() == "fixed"
    assert judge(calibrated, "alice", "econ:1") == "in_review"  # k = 2, as always
    refused = run_cli(calibrated, "config", "set", "routing", "adaptive", "--as", "alice")
    assert refused.exit_code == 1 and "only leads change settings" in refused.output
    for name, value in (("routing", "smart"), ("max_overlap", "0"), ("target_confidence", "1")):
        wrong = run_cli(calibrated, "config", "set", name, value, "--as", "lena")
        assert wrong.exit_code == 1 and name in wrong.output, wrong.output
    assert run_cli(calibrated, "config", "get", "routing").output.strip() == "fixed"
    done = run_cli(calibrated, "config", "set", "routing", "adaptive", "--as", "lena")
    assert done.exit_code == 0, done.output
    assert "item statuses recomputed for routing adaptive: 1 changed" in done.output
    assert item_status(calibrated, "econ:1") == "agreed", beliefs(calibrated, "econ:1")


def test_one_judgment_from_a_reliable_annotator_can_be_enough(calibrated: Database) -> None:
    store_item(calibrated, "econ:1")
    adaptive(calibrated)
    assert judge(calibrated, "alice", "econ:1") == "agreed", beliefs(calibrated, "econ:1")
    assert annotator_queue(calibrated, "bob").fetch_next() is None  # nothing else needs bob
    assert approve_agreed(calibrated, "lena") == 1
    assert item_status(calibrated, "econ:1") == "approved"


def test_an_unreliable_judgment_asks_for_another(calibrated: Database) -> None:
    store_item(calibrated, "econ:1")
    adaptive(calibrated)
    assert judge(calibrated, "sam", "econ:1") == "in_review", beliefs(calibrated, "econ:1")
    served = annotator_queue(calibrated, "bob").fetch_next()
    assert served is not None and served.id == "econ:1"
    assert judge(calibrated, "bob", "econ:1") == "agreed", beliefs(calibrated, "econ:1")


def test_disagreement_asks_for_more_then_goes_to_the_lead(calibrated: Database) -> None:
    store_item(calibrated, "econ:1")
    adaptive(calibrated, max_overlap=3, target="0.99")
    judge(calibrated, "alice", "econ:1")
    with calibrated.transaction() as session:
        set_setting(session, "target_confidence", "0.999")  # alice alone is not enough now
    refresh_open_statuses(calibrated)
    assert item_status(calibrated, "econ:1") == "in_review", beliefs(calibrated, "econ:1")
    assert judge(calibrated, "bob", "econ:1", OTHER) == "in_review", beliefs(calibrated, "econ:1")
    served = annotator_queue(calibrated, "carol").fetch_next()
    assert served is not None and served.id == "econ:1"  # still unsure: a third judgment
    judge(calibrated, "carol", "econ:1", "ABDC")  # a third answer settles nothing
    assert item_status(calibrated, "econ:1") == "conflict", beliefs(calibrated, "econ:1")
    assert annotator_queue(calibrated, "dave").fetch_next() is None  # max_overlap reached


def test_a_confidently_wrong_key_goes_to_the_lead_before_max_overlap(
    calibrated: Database,
) -> None:
    store_item(calibrated, "econ:1")
    adaptive(calibrated, max_overlap=5)
    judge(calibrated, "alice", "econ:1", OTHER)
    assert judge(calibrated, "bob", "econ:1", OTHER) == "conflict", beliefs(calibrated, "econ:1")
    assert annotator_queue(calibrated, "carol").fetch_next() is None
    assert approve_agreed(calibrated, "lena") == 0  # never decided silently


def test_the_queue_serves_the_items_worth_most_first(calibrated: Database) -> None:
    """A model or a flag doubting the key first, then the judged item the consensus is
    least sure of (Sam's random answer leaves it at the prior), before the untouched
    ones."""
    for item_id in ("a:1", "a:2", "a:3", "a:4"):
        store_item(calibrated, item_id)
    store_item(calibrated, "a:5", explanation="The correct order is A, D, B, C.")  # key-mismatch
    adaptive(calibrated, target="0.999")
    judge(calibrated, "sam", "a:2")  # a random answer: the prior
    backend = ScriptedBackend(Script({"a:4": "A, D, B, C"}, otherwise="D, A, B, C"), model="m")
    run_id = create_run(calibrated, backend.info, item_filter=ItemFilter(statuses=("pending",)))
    execute_run(calibrated, run_id, backend)  # a:3, a:5: the model agrees; a:4: it does not
    queue = annotator_queue(calibrated, "carol")
    order = []
    while (item := queue.fetch_next()) is not None:
        order.append(item.id)
        queue.release_claim(item.id)
        queue.history.skipped.add(item.id)
        if len(order) == 3:
            break
    shown = beliefs(calibrated, "a:1", "a:2", "a:4", "a:5")
    assert order[:2] in (["a:4", "a:5"], ["a:5", "a:4"]), shown
    assert order[2] == "a:2", shown


def test_never_twice_and_never_ones_own_revision_blind(calibrated: Database) -> None:
    for item_id in ("b:1", "b:2", "b:3"):
        store_item(calibrated, item_id)
    adaptive(calibrated, target="0.999")  # nothing is sure after one judgment
    edit_item(calibrated, "carol", "b:3", ItemEdit(note="clearer", prompt="Order these events."))
    assert sorted(drain(annotator_queue(calibrated, "sam"))) == ["b:1", "b:2", "b:3"]
    assert annotator_queue(calibrated, "sam").fetch_next() is None  # never twice
    assert sorted(drain(annotator_queue(calibrated, "carol"))) == ["b:1", "b:2"]  # not b:3


def test_annotators_work_under_adaptive_routing_with_their_own_logins(
    calibrated: Database, database_url: str, roles: RoleNames
) -> None:
    """On PostgreSQL as real login roles: an annotator cannot change the routing, and
    `next` and `judge` under adaptive routing work with what their role may read and
    write (the consensus without the gold answers, statuses refreshed by the fit)."""
    store_item(calibrated, "econ:1")
    lead, annotator = roles.name("lena"), roles.name("ann")
    # SQLite: the database has a lead (lena), whose --as adds another; PostgreSQL: the owner.
    by_lead = () if roles.is_postgres else ("--as", "lena")
    added = run_cli(calibrated, "users", "add", lead, "--role", "lead", "--no-password", *by_lead)
    assert added.exit_code == 0, added.output
    assert run_cli(calibrated, "users", "add", annotator, "--no-password").exit_code == 0
    lead_url = roles.url_for(lead) if roles.is_postgres else database_url
    url = roles.url_for(annotator) if roles.is_postgres else database_url
    refused = run_cli(url, "config", "set", "routing", "adaptive", "--as", annotator)
    assert refused.exit_code == 1 and "only leads" in refused.output
    done = run_cli(lead_url, "config", "set", "routing", "adaptive", "--as", lead)
    assert done.exit_code == 0, done.output
    shown = run_cli(url, "next", "--as", annotator, "--json")
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.output)["item"]["item_id"] == "econ:1"
    judged = run_cli(
        url, "judge", "econ:1", "--as", annotator, "--answer", KEY, "--verdict", "keep"
    )
    assert judged.exit_code == 0, judged.output
    assert item_status(calibrated, "econ:1") in ("in_review", "agreed")


def test_one_judgment_rests_on_the_low_end_of_the_annotators_reliability(
    calibrated: Database,
) -> None:
    """Nina answered two gold items right: her estimate is as high as Alice's, but two
    answers say little, so her judgment alone settles nothing; Alice's (eight) does."""
    for number in range(2, 4):
        submit_judgment(
            calibrated,
            "nina",
            f"gold:{number}",
            revision_number=None,
            blind_answer="B",
            verdict="keep",
        )
    store_item(calibrated, "econ:1")
    store_item(calibrated, "econ:2")
    adaptive(calibrated)
    assert judge(calibrated, "nina", "econ:1") == "in_review", beliefs(calibrated, "econ:1")
    assert judge(calibrated, "alice", "econ:2") == "agreed", beliefs(calibrated, "econ:2")
    assert judge(calibrated, "alice", "econ:1") == "agreed", beliefs(calibrated, "econ:1")


def test_reliable_annotators_get_fresh_items_and_the_others_second_opinions(
    calibrated: Database,
) -> None:
    """Sam's random answer leaves c:2 unsure.  Alice, whose one judgment settles an item,
    is served the untouched c:1 first; Carol, whom the consensus does not know yet, the
    second opinion on c:2; once nothing fresh is left, Alice gets the unsure ones too."""
    store_item(calibrated, "c:1")
    store_item(calibrated, "c:2")
    adaptive(calibrated)
    judge(calibrated, "sam", "c:2")
    alice = annotator_queue(calibrated, "alice").fetch_next()
    assert alice is not None and alice.id == "c:1", beliefs(calibrated, "c:1", "c:2")
    carol = annotator_queue(calibrated, "carol").fetch_next()
    assert carol is not None and carol.id == "c:2", beliefs(calibrated, "c:1", "c:2")
    judge(calibrated, "alice", "c:1")
    queue = annotator_queue(calibrated, "alice")
    served = queue.fetch_next()  # carol's claim holds c:2, but nothing else is left
    assert served is not None and served.id == "c:2"


def test_a_weaker_annotator_leaves_fresh_items_to_a_colleague_at_work(
    calibrated: Database,
) -> None:
    """Sam's judgment settles nothing alone, and Alice, who judged minutes ago, settles
    fresh items alone: Sam is served only second opinions, and none waits yet.  Carol,
    whom the consensus has not measured, still gets a fresh item; once her judgment
    leaves it unsure, Sam gets it, as his judgment is its last (``max_overlap`` 2)."""
    store_item(calibrated, "d:1")
    store_item(calibrated, "d:2")
    adaptive(calibrated, max_overlap=2)
    assert annotator_queue(calibrated, "sam").fetch_next() is None, beliefs(calibrated, "d:1")
    carol = annotator_queue(calibrated, "carol").fetch_next()
    assert carol is not None and carol.id in ("d:1", "d:2")
    assert judge(calibrated, "carol", carol.id) == "in_review", beliefs(calibrated, carol.id)
    sam = annotator_queue(calibrated, "sam").fetch_next()
    assert sam is not None and sam.id == carol.id


def test_a_weaker_judgment_waits_for_a_more_reliable_colleague_unless_it_is_the_last(
    calibrated: Database,
) -> None:
    """With Alice and Bob at work, a judged item waits for them: Carol doubts the key,
    and Sam, the least reliable, is not served it while it could take two more
    judgments (``max_overlap`` 3).  With no one at work, Sam is served as anyone; and
    once the item has two judgments, Sam's would be its last, which ends its need for
    judgments whatever he says, and he gets it."""
    store_item(calibrated, "d:1")
    adaptive(calibrated)
    carol = annotator_queue(calibrated, "carol").fetch_next()
    assert carol is not None and carol.id == "d:1"
    assert judge(calibrated, "carol", "d:1", OTHER) == "in_review", beliefs(calibrated, "d:1")
    waiting = annotator_queue(calibrated, "sam")
    assert waiting.fetch_next() is None, beliefs(calibrated, "d:1")
    assert waiting.held_for_colleagues == 1
    told = run_cli(calibrated, "next", "--as", "sam")
    assert told.exit_code == 0, told.output
    assert "1 judged item waits for a more reliable colleague at work" in told.output
    later = datetime.now(UTC) + CLAIM_TTL * 2  # no one at work then
    alone = annotator_queue(calibrated, "sam", clock=lambda: later).fetch_next()
    assert alone is not None and alone.id == "d:1"
    assert judge(calibrated, "dave", "d:1") == "in_review", beliefs(calibrated, "d:1")
    last = annotator_queue(calibrated, "sam").fetch_next()
    assert last is not None and last.id == "d:1"
