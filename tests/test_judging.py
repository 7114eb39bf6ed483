"""The judgment service: every rule of submit, undo and edit, checked on a real database."""

from __future__ import annotations

import pytest
from helpers import item_status, store_item, stored_judgments
from sqlmodel import col, select

from db.engine import Database
from db.models import AuditEvent, Claim, Item, ItemRevision, Person
from db.people import ensure_person
from db.settings import set_setting
from db.vocabulary import ItemStatus, Verdict
from reviewer.judging import (
    ItemEdit,
    JudgmentRefused,
    edit_item,
    retract_last_judgment,
    submit_judgment,
)
from reviewer.revisions import diff_revisions, revision_history


def judge(db: Database, who: str, item_id: str = "econ:1", **fields: object):
    values: dict[str, object] = {
        "revision_number": 1,
        "blind_answer": "D, A, B, C",
        "verdict": "keep",
    }
    values.update(fields)
    return submit_judgment(db, who, item_id, **values)  # type: ignore[arg-type]


@pytest.fixture
def item(database: Database) -> str:
    store_item(database, "econ:1", key="DABC")
    return "econ:1"


def test_keep_is_stored_with_audit_and_status(database: Database, item: str) -> None:
    receipt = judge(database, "alice", blind_answer="D,A,B,C", seconds=12.5, comment="  clear  ")
    assert receipt.matches_key and receipt.verdict is Verdict.KEEP
    assert receipt.item_status == ItemStatus.IN_REVIEW
    [stored] = stored_judgments(database)
    assert (stored.blind_answer, stored.verdict, stored.seconds, stored.comment) == (
        "DABC",
        "keep",
        12.5,
        "clear",
    )
    with database.session() as session:
        assert session.exec(select(Person).where(Person.name == "alice")).one().role == "annotator"
        actions = [e.action for e in session.exec(select(AuditEvent))]
    assert "judge" in actions and "register" in actions

    judge(database, "bob")
    assert item_status(database, item) == ItemStatus.AGREED


def test_disagreeing_second_judgment_makes_a_conflict(database: Database, item: str) -> None:
    judge(database, "alice")
    judge(database, "bob", blind_answer="ABCD")
    assert item_status(database, item) == ItemStatus.CONFLICT


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ("DAB", "missing C"),
        ("DAXC", "'X' is not one of the events"),
        ("DDAB", "more than once"),
        ("", "empty"),
    ],
)
def test_bad_blind_answers_are_refused_and_nothing_is_written(
    database: Database, item: str, answer: str, message: str
) -> None:
    with pytest.raises(JudgmentRefused, match=message):
        judge(database, "alice", blind_answer=answer)
    assert stored_judgments(database) == []
    with database.session() as session:
        assert session.exec(select(Person)).all() == []  # not even the registration


def test_mcq_answers_follow_the_item_kind(database: Database) -> None:
    store_item(database, "mcq:1", kind="single", key="B")
    store_item(database, "mcq:2", kind="multi", key="AC")
    store_item(database, "tf:1", kind="truefalse", key="A")
    with pytest.raises(JudgmentRefused, match="exactly one letter"):
        judge(database, "alice", "mcq:1", blind_answer="AB")
    with pytest.raises(JudgmentRefused, match="'E' is not one of the choices"):
        judge(database, "alice", "mcq:2", blind_answer="AE")
    judge(database, "alice", "mcq:2", blind_answer="C, A")
    judge(database, "alice", "tf:1", blind_answer="错")
    assert [j.blind_answer for j in stored_judgments(database)] == ["AC", "B"]


def test_ambiguous_needs_other_valid_orders(database: Database, item: str) -> None:
    with pytest.raises(JudgmentRefused, match="at least one valid order besides the key"):
        judge(database, "alice", verdict="ambiguous")
    with pytest.raises(JudgmentRefused, match="is the key itself"):
        judge(database, "alice", verdict="ambiguous", alternative_orders=["D,A,B,C"])
    with pytest.raises(JudgmentRefused, match="alternative order 'ADBX'"):
        judge(database, "alice", verdict="ambiguous", alternative_orders=["ADBX"])
    judge(
        database,
        "alice",
        verdict="ambiguous",
        alternative_orders=["A,D,B,C", "ADBC", "D A C B"],
    )
    assert stored_judgments(database)[0].alternative_orders == ["ADBC", "DACB"]


def test_wrong_key_needs_a_different_corrected_key(database: Database, item: str) -> None:
    with pytest.raises(JudgmentRefused, match="needs the corrected key"):
        judge(database, "alice", verdict="wrong-key")
    with pytest.raises(JudgmentRefused, match="same as the current key"):
        judge(database, "alice", verdict="wrong-key", corrected_key="d a b c")
    judge(database, "alice", verdict="wrong-key", corrected_key="A, B, C, D")
    assert stored_judgments(database)[0].corrected_key == "ABCD"


def test_duplicate_needs_another_existing_item(database: Database, item: str) -> None:
    store_item(database, "econ:2")
    with pytest.raises(JudgmentRefused, match="needs the id of the other item"):
        judge(database, "alice", verdict="duplicate")
    with pytest.raises(JudgmentRefused, match="cannot be a duplicate of itself"):
        judge(database, "alice", verdict="duplicate", duplicate_of=item)
    with pytest.raises(JudgmentRefused, match="there is no item 'econ:99'"):
        judge(database, "alice", verdict="duplicate", duplicate_of="econ:99")
    judge(database, "alice", verdict="duplicate", duplicate_of=" econ:2 ")
    assert stored_judgments(database)[0].duplicate_of == "econ:2"


def test_fields_of_another_verdict_are_refused(database: Database, item: str) -> None:
    with pytest.raises(JudgmentRefused, match="ambiguous only"):
        judge(database, "alice", alternative_orders=["ABCD"])
    with pytest.raises(JudgmentRefused, match="wrong-key only"):
        judge(database, "alice", corrected_key="ABCD")
    with pytest.raises(JudgmentRefused, match="duplicate only"):
        judge(database, "alice", duplicate_of="econ:1")
    with pytest.raises(JudgmentRefused, match="not a verdict; use one of keep"):
        judge(database, "alice", verdict="fine")
    with pytest.raises(JudgmentRefused, match="non-negative"):
        judge(database, "alice", seconds=-1.0)


def test_no_order_is_for_ordering_items(database: Database) -> None:
    store_item(database, "mcq:1", kind="single", key="B")
    with pytest.raises(JudgmentRefused, match="no-order applies to ordering items"):
        judge(database, "alice", "mcq:1", blind_answer="B", verdict="no-order")


@pytest.mark.parametrize("verdict", ["no-order", "flawed", "sensitive"])
def test_simple_verdicts_are_stored(database: Database, item: str, verdict: str) -> None:
    receipt = judge(database, "alice", verdict=verdict, comment="what a lead needs to know")
    assert receipt.verdict == verdict
    assert stored_judgments(database)[0].verdict == verdict


def test_unknown_item_is_refused(database: Database) -> None:
    with pytest.raises(JudgmentRefused, match="there is no item 'nope'"):
        judge(database, "alice", "nope")


def test_same_revision_cannot_be_judged_twice_unless_retracted(
    database: Database, item: str
) -> None:
    judge(database, "alice")
    with pytest.raises(JudgmentRefused, match="already judged item econ:1 revision 1"):
        judge(database, "alice", verdict="flawed", comment="B is unclear")
    retraction = retract_last_judgment(database, "alice")
    assert retraction.item_id == item and retraction.item_status == ItemStatus.PENDING
    judge(database, "alice", verdict="flawed", comment="B is unclear")
    rows = stored_judgments(database)
    assert [(j.verdict, j.retracted) for j in rows] == [("keep", True), ("flawed", False)]
    assert rows[0].retracted_at is not None


def test_undo_walks_back_through_the_annotators_judgments(database: Database) -> None:
    store_item(database, "econ:1")
    store_item(database, "econ:2")
    judge(database, "alice", "econ:1")
    judge(database, "alice", "econ:2")
    judge(database, "bob", "econ:1")
    assert retract_last_judgment(database, "alice").item_id == "econ:2"
    assert retract_last_judgment(database, "alice").item_id == "econ:1"
    with pytest.raises(JudgmentRefused, match="alice has no judgment to undo"):
        retract_last_judgment(database, "alice")
    with pytest.raises(JudgmentRefused, match="nobody has no judgment"):
        retract_last_judgment(database, "nobody")
    assert len(stored_judgments(database)) == 3  # nothing deleted
    assert item_status(database, "econ:1") == ItemStatus.IN_REVIEW  # bob's judgment remains
    with database.session() as session:
        assert (
            len(session.exec(select(AuditEvent).where(AuditEvent.action == "retract")).all()) == 2
        )


def test_submitting_releases_the_annotators_claim(database: Database, item: str) -> None:
    with database.transaction() as session:
        person = ensure_person(session, "alice")
        session.add(Claim(item_id=item, person_id=person.id))
    judge(database, "alice")
    with database.session() as session:
        assert session.exec(select(Claim)).all() == []


def test_edit_makes_a_new_revision_and_old_judgments_stay_with_the_old_one(
    database: Database, item: str
) -> None:
    judge(database, "alice", verdict="flawed", comment="a typo, and the key is wrong")
    receipt = edit_item(
        database,
        "alice",
        item,
        ItemEdit(
            note="typo and key",
            prompt="Order the events of a rate rise cycle (fixed).",
            key="D, A, C, B",
        ),
    )
    assert (receipt.old_revision, receipt.new_revision) == (1, 2)
    assert receipt.item_status == ItemStatus.PENDING
    with database.session() as session:
        revisions = session.exec(
            select(ItemRevision)
            .where(ItemRevision.item_id == item)
            .order_by(col(ItemRevision.number))
        ).all()
        assert [(r.number, r.key, r.change_note) for r in revisions] == [
            (1, "DABC", "import"),
            (2, "DACB", "typo and key"),
        ]
        assert session.get(Item, item).current_revision == 2  # type: ignore[union-attr]
    assert stored_judgments(database)[0].revision_number == 1
    with pytest.raises(JudgmentRefused, match="now at revision 2, not revision 1"):
        judge(database, "bob", revision_number=1)
    judge(database, "alice", revision_number=2, blind_answer="DACB")  # a new revision, judged anew


def test_an_edit_started_from_an_older_revision_is_refused(database: Database, item: str) -> None:
    edit_item(database, "alice", item, ItemEdit(note="key was wrong", key="DACB"), base_revision=1)
    with pytest.raises(JudgmentRefused, match="revised by someone else while you edited"):
        edit_item(
            database, "bob", item, ItemEdit(note="typo", prompt="Bob's wording."), base_revision=1
        )
    history = revision_history(database, item)
    assert [(r.number, r.author) for r in history] == [(1, "test"), (2, "alice")]


def test_concurrent_edits_of_one_item_each_make_their_own_revision(
    database: Database, item: str
) -> None:
    """Edits made at the same moment queue on the item's row lock: revisions 2..N+1,
    no unique-number clash and no error (this matters on PostgreSQL)."""
    from concurrent.futures import ThreadPoolExecutor

    def edit(n: int) -> int:
        explanation = f"explanation {n}"
        return edit_item(
            database, f"ed{n}", item, ItemEdit(note="more", explanation=explanation)
        ).new_revision

    with ThreadPoolExecutor(max_workers=6) as pool:
        numbers = sorted(pool.map(edit, range(6)))
    assert numbers == [2, 3, 4, 5, 6, 7]
    history = revision_history(database, item)
    assert [r.number for r in history] == [1, 2, 3, 4, 5, 6, 7]


def test_edit_is_validated_like_an_import(database: Database, item: str) -> None:
    with pytest.raises(JudgmentRefused, match="key: 'DAB'"):
        edit_item(database, "alice", item, ItemEdit(note="key", key="DAB"))
    with pytest.raises(JudgmentRefused, match="scenario: is empty"):
        edit_item(database, "alice", item, ItemEdit(note="blank", prompt="   "))
    with pytest.raises(JudgmentRefused, match="nothing changed"):
        edit_item(database, "alice", item, ItemEdit(note="same", key="D,A,B,C"))
    with pytest.raises(JudgmentRefused, match="needs a short note"):
        edit_item(database, "alice", item, ItemEdit(note=" ", key="ABCD"))
    with pytest.raises(JudgmentRefused, match="there is no item"):
        edit_item(database, "alice", "missing", ItemEdit(note="x", key="ABCD"))
    with database.session() as session:
        assert len(session.exec(select(ItemRevision)).all()) == 1


def test_edit_can_change_choices_and_explanation(database: Database) -> None:
    store_item(database, "mcq:1", kind="single", key="B")
    edit_item(
        database,
        "lead",
        "mcq:1",
        ItemEdit(
            note="added option D",
            choices={"A": "Yes", "B": "No", "C": "Maybe", "D": "Never"},
            key="D",
            explanation="Only D is right.",
        ),
    )
    history = revision_history(database, "mcq:1")
    assert [revision.kind for revision in history] == ["single", "single"]
    assert history[-1].choices["D"] == "Never" and history[-1].explanation == "Only D is right."


def test_revision_diff_shows_what_changed(database: Database, item: str) -> None:
    edit_item(
        database,
        "alice",
        item,
        ItemEdit(note="cut", prompt="Order the events of a rate cut cycle."),
    )
    history = revision_history(database, item)
    lines = diff_revisions(history[0], history[1])
    removed = [line for line in lines if line.tag == "removed"]
    added = [line for line in lines if line.tag == "added"]
    assert [line.text for line in removed] == ["-  Order the events of a rate rise cycle."]
    assert [line.text for line in added] == ["+  Order the events of a rate cut cycle."]
    start, end = added[0].changes[0]
    assert "cut" in added[0].text[start : end + 2]
    assert lines[0].tag == "header" and "revision 1" in lines[0].text


def test_overlap_setting_changes_when_an_item_is_agreed(database: Database, item: str) -> None:
    with database.transaction() as session:
        set_setting(session, "overlap", "3")
    judge(database, "alice")
    judge(database, "bob")
    assert item_status(database, item) == ItemStatus.IN_REVIEW
    judge(database, "carol")
    assert item_status(database, item) == ItemStatus.AGREED
