"""The consensus model (``db.consensus``) on planted truths, `vetbench consensus`, and
`approve-agreed --min-confidence`: real SQLite files and a real PostgreSQL server.

The studies are planted (``consensus_study``): items whose right answer and keep/drop
are known, about 10% of keys planted wrong, annotators of known skill, among them a
spammer who answers at random and always keeps."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from consensus_study import (
    AVERAGE,
    CARELESS,
    EXPERT,
    SPAMMER,
    Annotator,
    PlantedItem,
    judge_items,
    plant_items,
)
from helpers import (
    built_demo_database,
    item_status,
    run_cli,
    store_item,
    store_judgment,
    store_person,
)
from role_helpers import RoleNames, role_names

from db.answers import format_answer
from db.audit import read_audit
from db.consensus import (
    ConsensusOutcome,
    consensus_from_inputs,
    consensus_of,
    estimate_consensus,
)
from db.consensus_inputs import ConsensusInputs, InputItem, Rating
from db.engine import Database, open_database
from db.gold import add_gold
from db.item_scope import ItemScope
from db.items import add_revision, id_order
from db.model_answers import model_answers
from db.routing import Routing, item_beliefs, settles_alone
from db.settings import set_setting
from db.vocabulary import ItemKind, ItemStatus, Role
from evaluator.backends.scripted import Script, ScriptedBackend
from evaluator.item_filter import ItemFilter
from evaluator.runner import create_run, execute_run
from reviewer.judging import submit_judgment

TEAM = (EXPERT, Annotator("expert2", 0.93), AVERAGE, CARELESS, SPAMMER)
GOOD = {"expert", "expert2", "average"}
UNDECIDED = ["pending", "in_review", "agreed", "conflict"]


@pytest.fixture
def roles(database_url: str) -> Iterator[RoleNames]:
    yield from role_names(database_url)


def planted(database: Database, count: int = 120, seed: int = 7) -> list[PlantedItem]:
    items = plant_items(database, seed, count)
    judge_items(database, seed + 1, items, TEAM, per_item=3)
    return items


def test_the_consensus_recovers_planted_truths_and_ranks_the_spammer_lowest(
    database: Database,
) -> None:
    items = planted(database)
    with database.session() as session:
        consensus = estimate_consensus(session)
    by_id = {item.item_id: item for item in items}
    assert {item.item_id for item in consensus.items} == set(by_id)
    judged = [c for c in consensus.items if c.judgments >= 3]
    assert len(judged) == len(items)
    recovered = [c for c in judged if c.consensus_answer == by_id[c.item_id].truth]
    assert len(recovered) >= 0.95 * len(judged)

    # Planted wrong keys: none is confidently kept; where two good annotators saw it, the
    # key is unlikely and the suggestion is the truth.
    wrong = [p for p in items if not p.key_right]
    assert len(wrong) >= 8
    for planted_item in wrong:
        found = consensus.item(planted_item.item_id)
        assert found is not None
        assert found.outcome(0.95) is not ConsensusOutcome.APPROVE
        if sum(name in GOOD for name in planted_item.judges) >= 2:
            assert found.p_key_right < 0.5
            assert found.suggested_key == found.consensus_answer == planted_item.truth
    right = [c for c in consensus.items if by_id[c.item_id].key_right]
    assert sum(c.p_key_right for c in right) / len(right) > 0.9
    assert all(c.suggested_key is None for c in right if c.consensus_answer == c.key)

    # Flawed items are less likely kept than sound ones.
    flawed = [c.p_keep for c in consensus.items if by_id[c.item_id].flawed]
    sound = [c.p_keep for c in consensus.items if not by_id[c.item_id].flawed]
    assert flawed and sum(flawed) / len(flawed) < 0.5 < sum(sound) / len(sound)

    # Reliability: the planted skills in order, the spammer lowest; intervals hold it.
    people = {r.name: r for r in consensus.raters if r.kind == "person"}
    assert set(people) == {who.name for who in TEAM}
    assert min(people.values(), key=lambda r: r.reliability).name == SPAMMER.name
    assert people["expert"].reliability > people["average"].reliability
    assert people["average"].reliability > people["careless"].reliability
    assert people["careless"].reliability > people["spammer"].reliability
    for rater in people.values():
        assert 0 <= rater.low < rater.reliability < rater.high <= 1
        assert rater.n == sum(name == rater.name for p in items for name in p.judges)
    assert people["spammer"].high < people["careless"].low
    # The spammer does no better than guessing: their answers are left out of the
    # answer consensus (as evidence they would count against what they said).
    assert not people["spammer"].counted and people["spammer"].beyond_chance < 0.2
    assert all(rater.counted for name, rater in people.items() if name != "spammer")


def test_gold_items_fix_the_truth_where_a_lead_knows_it(database: Database) -> None:
    items = planted(database, count=60, seed=3)
    store_person(database, "lena", Role.LEAD)
    # Two careless annotators echo a wrong key; the lead knows the right answer.
    store_item(database, "gold:1", kind="single", key="A", choices=4)
    for name in ("careless", "spammer"):
        store_judgment(database, "gold:1", name, "A")
    with database.transaction() as session:
        add_gold(session, "lena", "gold:1", verdict="wrong-key", answer="C")
    with database.session() as session:
        consensus = estimate_consensus(session)
    gold = consensus.item("gold:1")
    assert gold is not None and gold.gold
    assert gold.consensus_answer == "C" and gold.suggested_key == "C"
    assert gold.p_key_right < 0.01 and gold.p_keep > 0.99
    assert gold.outcome(0.95) is ConsensusOutcome.WRONG_KEY
    # The gold rater is not a person or a model: it is never listed.
    assert {r.name for r in consensus.raters} == {who.name for who in TEAM}
    # Asking for some items gives those only, the raters still from everything.
    with database.session() as session:
        some = estimate_consensus(session, [items[0].item_id, "gold:1"])
    assert [c.item_id for c in some.items] == sorted([items[0].item_id, "gold:1"])
    assert some.raters == consensus.raters
    # A gold item no person judged: its figures approve it, the text says it never is.
    store_item(database, "gold:2", kind="single", key="B", choices=4)
    with database.transaction() as session:
        add_gold(session, "lena", "gold:2", verdict="keep", answer="B")
    shown = run_cli(database, "consensus", "--as", "lena").output
    [line] = [line for line in shown.splitlines() if line.startswith("gold:2")]
    assert line.endswith("(gold) (no person judged: never approved)"), line


def test_models_answers_count_as_raters_unless_left_out(database: Database) -> None:
    items = planted(database, count=40, seed=11)
    truths = {p.item_id: format_answer(p.kind, p.truth) for p in items}
    backend = ScriptedBackend(Script(truths), model="oracle")
    run_id = create_run(database, backend.info, item_filter=ItemFilter(statuses=tuple(UNDECIDED)))
    execute_run(database, run_id, backend)
    with database.session() as session:
        with_models = estimate_consensus(session)
        without = estimate_consensus(session, models=False)
    oracle = with_models.rater("oracle", "model")
    assert oracle is not None and oracle.n == len(items)
    assert oracle.reliability > 0.9
    assert with_models.raters[0].name in {"oracle", "expert"}
    assert all(c.models == 1 for c in with_models.items)
    assert without.rater("oracle", "model") is None
    assert all(c.models == 0 for c in without.items)
    by_id = {p.item_id: p for p in items}
    recovered = sum(c.consensus_answer == by_id[c.item_id].truth for c in with_models.items)
    assert recovered >= sum(c.consensus_answer == by_id[c.item_id].truth for c in without.items)


def test_the_oracle_handed_the_keys_is_no_evidence_about_them(database: Database) -> None:
    """`--model scripted:oracle` (the evaluation's self-check) answers every item with the
    key it is handed: counted as a rater, it would back every key, the planted wrong ones
    too.  Its run stays a run; no consensus, flag or triage reads its answers."""
    items = planted(database, count=40, seed=11)
    wrong_keys = [p.item_id for p in items if p.key != p.truth]
    assert wrong_keys  # the study plants some
    with database.session() as session:
        before = estimate_consensus(session)
    checked = run_cli(
        database, "eval", "--model", "scripted:oracle", "--shots", "0", "--status", "all"
    )
    assert checked.exit_code == 0, checked.output
    assert "acc 100.0%" in checked.output  # the oracle ran, and was right on every key
    with database.session() as session:
        after = estimate_consensus(session)
        assert model_answers(session) == []
    assert after.rater("oracle", "model") is None
    assert all(c.models == 0 for c in after.items)
    assert [(c.item_id, c.p_key_right) for c in after.items] == [
        (c.item_id, c.p_key_right) for c in before.items
    ]
    assert "oracle" not in run_cli(database, "consensus").output


def test_with_one_label_in_sight_nothing_is_certain(database: Database) -> None:
    """Everyone agreed with every key: the models cannot learn anything, and an item's
    figures grow with its judgments by the rule of succession, never to certainty."""
    store_item(database, "a:1", kind="single", key="B", choices=3)
    store_item(database, "a:2", kind="single", key="C", choices=3)
    store_judgment(database, "a:1", "ann", "B")
    for name in ("ann", "bo", "cy"):
        store_judgment(database, "a:2", name, "C")
    with database.session() as session:
        consensus = estimate_consensus(session, ["a:1", "a:2"])
        nothing = estimate_consensus(session, [])
    one, three = consensus.items
    assert (one.p_key_right, three.p_key_right) == (2 / 3, 4 / 5)
    assert three.outcome(0.95) is ConsensusOutcome.UNCERTAIN
    assert nothing.items == ()


def test_items_are_listed_as_people_number_them(database: Database) -> None:
    """``a:2`` comes before ``a:10``: text order would put ``a:10`` between ``a:1`` and
    ``a:2``, and a lead reading the list beside ``vetbench items`` would hunt for it."""
    for item_id in ("a:10", "a:2", "a:1", "b:1"):
        store_item(database, item_id, kind="single", key="B", choices=3)
        store_judgment(database, item_id, "ann", "B")
    with database.session() as session:
        listed = [item.item_id for item in estimate_consensus(session).items]
        some = [item.item_id for item in estimate_consensus(session, ["a:10", "a:2"]).items]
    assert listed == ["a:1", "a:2", "a:10", "b:1"] and some == ["a:2", "a:10"]
    assert sorted(["x:01", "x:1", "x:1a", "x"], key=id_order) == ["x", "x:01", "x:1", "x:1a"]


def test_one_newcomers_lone_judgment_is_read_as_routing_reads_it(database: Database) -> None:
    """A newcomer's first answers agree with the consensus they alone make: the fit gives
    them a reliability of 1.00 (or 0.00) from one answer, and an item only they judged
    would be referred with their answer as the suggested key, or approved on their keep.
    Read on the low end of their interval, as routing reads a lone judgment, the item
    stays at the share of right keys: uncertain, nobody's answer suggested."""
    planted(database, count=60, seed=13)
    store_item(database, "new:1", kind="single", key="A", choices=4)
    store_item(database, "new:2", kind="single", key="A", choices=4)
    store_judgment(database, "new:1", "newbie", "B")  # answered B blind, then kept the key
    store_judgment(database, "new:2", "newbie2", "A")
    low_bar = Routing(adaptive=True, overlap=3, max_overlap=3, target_confidence=0.5)
    with database.transaction() as session:
        consensus = estimate_consensus(session)
        routed = item_beliefs(session, ["new:1", "new:2"])
    for item_id in ("new:1", "new:2"):
        item = consensus.item(item_id)
        assert item is not None and item.judgments == 1
        assert item.p_key_right == pytest.approx(consensus.prior_key_right)
        assert (item.p_key_right, item.p_keep) == (
            routed[item_id].p_key_right,
            routed[item_id].p_keep,
        )
        assert item.suggested_key is None and item.consensus_answer == "A"
        assert item.outcome(0.95) is ConsensusOutcome.UNCERTAIN
        # The share of right keys alone approves nothing, however low the bar: the one
        # judgment does not back the key (an answer other than the key, or someone not
        # yet known to do better than chance), as no judgment would not.
        assert not item.vouched and not routed[item_id].vouched
        assert item.outcome(0.5) is ConsensusOutcome.UNCERTAIN
        assert routed[item_id].status(low_bar) is ItemStatus.IN_REVIEW
        assert "not backing the key" in item.describe(0.5)
    with database.session() as session:
        assert not settles_alone(session, "newbie2", low_bar)
    # Items several people judged keep the fit's figures, and a well-known annotator's
    # lone agreeing judgment still counts: their interval's low end is high.
    expert = consensus.rater("expert")
    assert expert is not None and expert.low > 0.8
    store_item(database, "new:3", kind="single", key="C", choices=4)
    store_judgment(database, "new:3", "expert", "C")
    with database.session() as session:
        alone = estimate_consensus(session).item("new:3")
    assert alone is not None and alone.p_key_right > consensus.prior_key_right
    assert alone.vouched and alone.outcome(0.5) is ConsensusOutcome.APPROVE


def test_the_consensus_command_prints_items_and_reliabilities(database: Database) -> None:
    empty = run_cli(database, "consensus")
    assert empty.exit_code == 0 and "no item is judged at its current revision yet" in empty.output
    store_item(database, "edited:1")
    store_judgment(database, "edited:1", "ann", "DABC")
    with database.transaction() as session:  # judged at revision 1, then edited
        add_revision(session, "edited:1", author="lena", change_note="typo", prompt="Reworded.")
    earlier = run_cli(database, "consensus")  # the judgment was of another text
    assert "no item is judged at its current revision yet" in earlier.output
    items = planted(database, count=40, seed=5)
    store_person(database, "lena", Role.LEAD)
    result = run_cli(database, "consensus", "--json", "--as", "lena")
    assert result.exit_code == 0, result.output
    shown = json.loads(result.output)
    assert [entry["item_id"] for entry in shown["items"]] == sorted(p.item_id for p in items)
    first = shown["items"][0]
    assert set(first) >= {"consensus_answer", "p_key_right", "p_keep", "judgments"}
    assert first["judgments"] == 3
    assert {rater["name"] for rater in shown["raters"]} == {who.name for who in TEAM}
    assert all(r["low"] <= r["reliability"] <= r["high"] for r in shown["raters"])
    assert shown["raters"][-1]["name"] == SPAMMER.name

    text = run_cli(database, "consensus", "--kind", "single", "--limit", "3", "--as", "lena").output
    lines = text.splitlines()
    assert lines[0].split() == [
        "item",
        "key",
        "consensus",
        "p(key)",
        "p(keep)",
        "judged",
        "outcome",
    ]
    assert len([line for line in lines if line.startswith("single:")]) == 3
    assert "… and 17 more" in text and "at confidence 0.95, undecided:" in text
    # the JSON holds what the text shows: each item's outcome and their counts (none is
    # decided yet: every item is counted among the undecided)
    said = text.split("at confidence 0.95, undecided: ")[1].split(" (what")[0]
    counts = {outcome: int(n) for outcome, n in (part.split() for part in said.split(", "))}
    singles = json.loads(
        run_cli(database, "consensus", "--kind", "single", "--json", "--as", "lena").output
    )
    assert singles["confidence"] == 0.95 and singles["outcomes"] == counts
    in_json = [entry["outcome"] for entry in singles["items"]]
    assert [line.split()[-1] for line in lines if line.startswith("single:")] == in_json[:3]
    assert "spammer" in lines[-1]

    # Anyone else: how many, the outcomes and the raters, not each item's consensus (it
    # shows what the annotators answered), as with the agreement's likely wrong keys.
    for who in ((), ("--as", TEAM[0].name)):
        counted = json.loads(run_cli(database, "consensus", "--json", *who).output)
        assert counted["items"] == 40 and counted["raters"] == shown["raters"]
        blind = run_cli(database, "consensus", "--kind", "single", *who).output
        assert blind.startswith("20 judged items: each one's consensus shows what its")
        assert "single:" not in blind and "at confidence 0.95, undecided:" in blind
        assert "spammer" in blind.splitlines()[-1]


def test_the_consensus_command_shows_decided_items_and_counts_as_approve_agreed(
    database: Database,
) -> None:
    """After approving by the consensus and rejecting one more item, `consensus` showed
    the approved items as `approve` and the rejected one as `uncertain`, and its counts
    (approve 37, uncertain 11) disagreed with approve-agreed's (10 uncertain items wait).
    Decided items now read as decided and are counted apart; the undecided counts are
    approve-agreed's; `(not backed)` is explained where it is shown."""
    planted(database, count=40, seed=5)
    store_person(database, "lena", Role.LEAD)
    confident = ("--min-confidence", "0.9")
    approved = run_cli(database, "approve-agreed", "--as", "lena", *confident, "--yes")
    assert approved.exit_code == 0, approved.output
    done = int(approved.output.splitlines()[-1].split()[1])
    assert done > 0
    text = run_cli(database, "consensus", "--as", "lena", *confident).output
    rows = [
        line
        for line in text.splitlines()
        if line.startswith(("single:", "multi:", "ordering:", "truefalse:"))
    ]
    undecided = [row for row in rows if "(decided)" not in row]
    reject = undecided[0].split()[0]
    ok_reject = run_cli(
        database, "decide", reject, "--as", "lena", "--status", "rejected", "--reason", "flawed"
    )
    assert ok_reject.exit_code == 0, ok_reject.output

    text = run_cli(database, "consensus", "--as", "lena", *confident).output
    lines = text.splitlines()
    (rejected,) = [line for line in lines if line.startswith(f"{reject} ")]
    assert rejected.endswith("rejected (decided)")
    assert sum(line.endswith("approved (decided)") for line in lines) == done
    assert f"decided by a lead: approved {done}, rejected 1" in lines
    (summary,) = [line for line in lines if line.startswith("at confidence 0.9, undecided: ")]
    assert summary.endswith("(what `approve-agreed --min-confidence 0.9` acts on)")
    said = summary.removeprefix("at confidence 0.9, undecided: ").split(" (what")[0]
    counts = {outcome: int(n) for outcome, n in (part.split() for part in said.split(", "))}
    assert sum(counts.values()) == len(rows) - done - 1
    # approve-agreed says the same of the same items
    plan = run_cli(database, "approve-agreed", "--as", "lena", *confident).output  # no: asks
    uncertain = counts.get("uncertain", 0)
    assert f"{uncertain} uncertain item" in plan
    referred = counts.get("wrong-key", 0) + counts.get("drop", 0)
    if referred:
        assert plan.startswith(f"{referred} item")
    if counts.get("approve"):
        assert f"{counts['approve']} item" in plan
    if any("(not backed)" in line for line in lines):
        assert any(line.startswith("(not backed): the figures would approve") for line in lines)
    helped = run_cli(database, "consensus", "--help").output
    assert "(decided)" in helped and "(not backed)" in helped


@pytest.mark.slow
def test_approve_agreed_with_min_confidence_approves_only_confident_keeps(
    database: Database,
) -> None:
    items = planted(database)
    store_person(database, "lena", Role.LEAD)
    by_id = {p.item_id: p for p in items}
    agreed_before = {p.item_id for p in items if item_status(database, p.item_id) == "agreed"}
    with database.session() as session:
        before = estimate_consensus(session)

    result = run_cli(
        database, "approve-agreed", "--as", "lena", "--min-confidence", "0.95", "--yes"
    )
    assert result.exit_code == 0, result.output
    approved = {p.item_id for p in items if item_status(database, p.item_id) == "approved"}
    expected = {c.item_id for c in before.items if c.outcome(0.95) is ConsensusOutcome.APPROVE}
    assert approved == expected and approved
    assert len(approved) > 1
    assert f"approved {len(approved):,} items by the consensus at 0.95" in result.output
    # Planted wrong keys never reach approved without a lead; the few flawed items that
    # slip through are what the figures allow.
    wrong = [p for p in items if not p.key_right]
    assert sum(p.item_id in approved for p in wrong) <= 0.05 * len(wrong)
    leaks = sum(by_id[item_id].flawed or not by_id[item_id].key_right for item_id in approved)
    assert leaks <= 0.05 * len(approved)
    # Referred items are listed with the suggested key and left undecided.
    referred = [c for c in before.items if c.outcome(0.95) is ConsensusOutcome.WRONG_KEY]
    assert referred
    for item in referred:
        assert item_status(database, item.item_id) not in ("approved", "rejected")
        assert item.suggested_key is not None
        suggested = format_answer(item.kind, item.suggested_key)
        assert f"{item.item_id}: wrong-key, suggested key {suggested}" in result.output
    # Each decision's audit event keeps the consensus figures.
    with database.session() as session:
        events = [e for e in read_audit(session, actions=["decide"]) if e.target in approved]
    assert len(events) == len(approved)
    for event in events:
        figures = event.changes["consensus"]
        assert isinstance(figures, dict)
        assert figures["min_confidence"] == 0.95
        assert float(str(figures["p_key_right"])) >= 0.95
        assert float(str(figures["p_keep"])) >= 0.95
        assert figures["judgments"] == 3 and event.changes["bulk"] is True
    # Nothing left to approve: the count says so and nothing is written.
    again = run_cli(database, "approve-agreed", "--as", "lena", "--min-confidence", "0.95", "--yes")
    assert "no items the consensus keeps with the key right at 0.95" in again.output
    # Without --min-confidence: today's approve-agreed, agreed items only.
    plain = run_cli(database, "approve-agreed", "--as", "lena", "--yes")
    assert plain.exit_code == 0
    newly = {p.item_id for p in items if item_status(database, p.item_id) == "approved"} - approved
    assert newly == agreed_before - approved


DEMO_WRONG_KEYS = ("cflue_mcq:19", "cflue_mcq:22", "econ_ordering:27")
"""The demo database's items that fixtures/README.md documents as wrong keys and that one
simulated annotator caught while the other kept."""


def test_a_split_over_a_key_is_never_approved_by_the_consensus(tmp_path: Path) -> None:
    """On the demo database, one annotator's answer against the key and another's keep
    approved the fixtures' documented wrong keys at 0.95 (p(key right) 1.00, from the two
    annotators' reliabilities on other items)."""
    database = open_database(str(built_demo_database(tmp_path / "demo.db")))
    with database.session() as session:
        consensus = estimate_consensus(session)
    by_id = {item.item_id: item for item in consensus.items}
    for item_id in DEMO_WRONG_KEYS:
        split = by_id[item_id]
        assert split.judgments == 2 and not split.vouched, split
        assert split.outcome(0.95) is ConsensusOutcome.UNCERTAIN
    result = run_cli(
        database, "approve-agreed", "--as", "lena", "--min-confidence", "0.95", "--yes"
    )
    assert result.exit_code == 0, result.output
    assert [item_status(database, item_id) for item_id in DEMO_WRONG_KEYS] == ["conflict"] * 3
    # The demo's lead approved the agreed items; the splits wait for a third annotator.
    assert "no items the consensus keeps with the key right at 0.95" in result.output


def test_a_guesser_left_out_of_the_consensus_backs_no_key() -> None:
    """An annotator who answers A to everything is left out of the answer consensus as
    guessing, yet their A made a majority for a key A that two counted annotators split
    over: on the demo database, with such an annotator added, the fixtures' documented
    wrong key cflue_mcq:19 was approved at 0.95."""
    items = {f"i:{n}": InputItem(f"i:{n}", ItemKind.SINGLE, 1, "B") for n in range(40)}
    items["wrong:1"] = InputItem("wrong:1", ItemKind.SINGLE, 1, "A")  # the answer is B
    ratings = [
        Rating(f"i:{n}", name, "person", "B", "flawed" if n < 4 else "keep")
        for n in range(40)
        for name in ("ann", "bo")
    ]
    ratings += [
        Rating("wrong:1", "ann", "person", "B", "wrong-key"),
        Rating("wrong:1", "bo", "person", "A", "keep"),
        *(Rating(item_id, "spam", "person", "A", "keep") for item_id in items),
    ]
    consensus = consensus_from_inputs(ConsensusInputs(items, tuple(ratings), {}))
    spammer = consensus.rater("spam")
    assert spammer is not None and not spammer.counted, spammer
    split = consensus.item("wrong:1")
    assert split is not None and split.judgments == 3 and not split.vouched, split
    assert split.outcome(0.95) is ConsensusOutcome.UNCERTAIN


@pytest.mark.slow
def test_approving_by_the_consensus_asks_first_and_annotators_cannot(
    database: Database, database_url: str, roles: RoleNames
) -> None:
    planted(database, count=40, seed=9)
    lead, annotator = roles.name("lena"), roles.name("ann")
    assert run_cli(database, "users", "add", lead, "--role", "lead", "--no-password").exit_code == 0
    assert run_cli(database, "users", "add", annotator, "--no-password").exit_code == 0
    asked = run_cli(database, "approve-agreed", "--as", lead, "--min-confidence", "0.9")
    assert "the consensus keeps with the key right at 0.9" in asked.output
    assert "Approve" in asked.output and "approved" not in asked.output.split("?")[-1]
    with database.session() as session:
        assert read_audit(session, actions=["decide"]) == []

    # An annotator's own login: the command refuses, nothing is written; the consensus
    # itself is read-only and open to them as counts (each item's is a lead's: it shows
    # what the annotators answered), on PostgreSQL without the gold answers.
    url = roles.url_for(annotator) if roles.is_postgres else database_url
    refused = run_cli(url, "approve-agreed", "--as", annotator, "--min-confidence", "0.9", "--yes")
    assert refused.exit_code != 0 and "only leads" in refused.output
    with database.session() as session:
        assert read_audit(session, actions=["decide"]) == []
    shown = run_cli(url, "consensus", "--json", "--as", annotator)
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.output)["items"] == 40
    lead_url = roles.url_for(lead) if roles.is_postgres else database_url
    done = run_cli(lead_url, "approve-agreed", "--as", lead, "--min-confidence", "0.9", "--yes")
    assert done.exit_code == 0 and "by the consensus at 0.9" in done.output


def test_consensus_of_narrows_items_to_the_scope(database: Database) -> None:
    planted(database, count=20, seed=13)
    everything = consensus_of(database)
    single = consensus_of(database, ItemScope(kinds=("single",)))
    assert {c.kind.value for c in single.items} == {"single"}
    assert len(single.items) == 10 and single.raters == everything.raters


def test_judgments_of_people_the_qualification_gate_leaves_out_do_not_count(
    database: Database,
) -> None:
    store_person(database, "lea", Role.LEAD)
    for number in range(1, 7):
        store_item(database, f"o:{number}", kind="single", key="A", choices=4)
        store_item(database, f"g:{number}", kind="single", key="B", choices=4)
    with database.transaction() as session:
        for number in range(1, 7):
            add_gold(session, "lea", f"g:{number}", verdict="keep", answer="B")
        set_setting(session, "calibration_items", "3")
        set_setting(session, "calibration_pass", "0.6")
    for who, gold_answer, answer, golds in (("passer", "B", "A", 3), ("failer", "C", "D", 6)):
        for number in range(1, golds + 1):
            submit_judgment(
                database, who, f"g:{number}", revision_number=1, blind_answer=gold_answer,
                verdict="keep",
            )  # fmt: skip
        for number in range(1, 7):
            submit_judgment(
                database, who, f"o:{number}", revision_number=1, blind_answer=answer,
                verdict="keep",
            )  # fmt: skip
    with database.session() as session:
        gated = estimate_consensus(session)
    assert [r.name for r in gated.raters if r.counted] == ["passer"]
    # The one left out is still measured, against a consensus they had no part in: their
    # gold answers and their answers to the other items are all wrong by it.
    failer = gated.rater("failer")
    assert failer is not None and not failer.qualified and not failer.counted
    assert (failer.reliability, failer.n) == (0.0, 12)
    assert failer.note == "not qualified"
    assert failer.reliability < gated.rater("passer").reliability  # type: ignore[union-attr]
    ordinary = gated.item("o:1")
    assert ordinary is not None and ordinary.judgments == 1
    assert ordinary.consensus_answer == "A"
    with database.transaction() as session:
        set_setting(session, "calibration_pass", "0")  # the gate off: everyone counts
    with database.session() as session:
        open_gate = estimate_consensus(session)
    assert {r.name for r in open_gate.raters} == {"passer", "failer"}
    assert all(r.qualified for r in open_gate.raters)
    assert open_gate.item("o:1").judgments == 2  # type: ignore[union-attr]


def test_the_same_ratings_asked_again_reuse_the_fit_and_a_new_one_refits(db_path: Path) -> None:
    # One backend: what is reused depends on the ratings read, not on where they are stored.
    database = open_database(db_path)
    planted(database, count=20, seed=5)
    first = consensus_of(database)
    assert consensus_of(database) is first  # nobody wrote: F3's next poll, an approval
    store_person(database, "newcomer")
    item = first.items[0]
    store_judgment(database, item.item_id, "newcomer", item.key, "keep")
    again = consensus_of(database)
    assert again is not first
    assert any(r.name == "newcomer" for r in again.raters)
    assert again.item(item.item_id) != first.item(item.item_id)
    database.dispose()


def test_the_reliability_intervals_are_scipy_stats_beta_quantiles_to_the_bit() -> None:
    """``_jeffreys`` reads the quantiles without importing scipy.stats; they are the same
    floats ``scipy.stats.beta.ppf`` gives, for small and large counts, whole and weighted."""
    from scipy.stats import beta

    from db.consensus import INTERVAL, _jeffreys

    tail = (1 - INTERVAL) / 2
    checked = 0
    for n in (*range(0, 40), 97, 250, 1_000, 12_345):
        for successes in {0.0, 0.25 * n, 0.5 * n, n - 0.5 if n else 0.0, float(n), n / 3}:
            a, b = successes + 0.5, n - successes + 0.5
            expected = (float(beta.ppf(tail, a, b)), float(beta.ppf(1 - tail, a, b)))
            assert _jeffreys(successes, n) == expected, (successes, n)
            checked += 1
    assert checked > 200
