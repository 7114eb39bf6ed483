"""Lead adjudication: the status flow, approve-agreed, decisions with corrected keys and
reasons, revised decisions, the conflict queue, and refusals for non-leads (service and CLI)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from helpers import (
    EXPLANATION,
    ctrl_c_in_commits,
    item_status,
    run_cli,
    store_item,
    store_person,
)
from sqlalchemy import update
from sqlmodel import col, select

from db.item_scope import ItemScope
from db.items import get_item, get_revisions
from db.models import AuditEvent, Decision, Item
from db.people import PermissionDenied
from db.settings import set_setting
from db.vocabulary import DecisionReason, ItemKind, Role
from reviewer.adjudication import AdjudicationError, approve_agreed, decide, rejection_reasons
from reviewer.cli import adjudication_commands as commands
from reviewer.cli import cli
from reviewer.conflict_cases import conflict_queue, count_agreed, decision_history, load_case
from reviewer.judging import ItemEdit, edit_item, submit_judgment


def team_statuses(db) -> list[str]:  # type: ignore[no-untyped-def]
    """The statuses of the team's items o:1, o:2 and o:3."""
    return [item_status(db, item_id) for item_id in ("o:1", "o:2", "o:3")]


@pytest.fixture
def team(database):  # type: ignore[no-untyped-def]
    """Two annotators, a lead, overlap 2, and three ordering items."""
    store_person(database, "ann")
    store_person(database, "bo")
    store_person(database, "lea", Role.LEAD)
    with database.transaction() as session:
        set_setting(session, "overlap", "2")
    for item_id in ("o:1", "o:2", "o:3"):
        store_item(database, item_id, key="DACB", source="econ")
    return database


def judge(db, who: str, item_id: str, answer: str, verdict: str = "keep", **extra) -> None:  # type: ignore[no-untyped-def]
    submit_judgment(
        db, who, item_id, revision_number=None, blind_answer=answer, verdict=verdict, **extra
    )


def test_status_flow_to_agreed_and_conflict(team) -> None:  # type: ignore[no-untyped-def]
    assert item_status(team, "o:1") == "pending"
    judge(team, "ann", "o:1", "DACB")
    assert item_status(team, "o:1") == "in_review"
    judge(team, "bo", "o:1", "D, A, C, B")
    assert item_status(team, "o:1") == "agreed"
    judge(team, "ann", "o:2", "DACB")
    judge(team, "bo", "o:2", "ADCB", "wrong-key", corrected_key="ADCB")
    assert item_status(team, "o:2") == "conflict"
    assert count_agreed(team) == 1


def test_approve_agreed_in_one_action(team) -> None:  # type: ignore[no-untyped-def]
    for item_id in ("o:1", "o:3"):
        judge(team, "ann", item_id, "DACB")
        judge(team, "bo", item_id, "DACB")
    judge(team, "ann", "o:2", "DACB", "flawed", comment="event C is unclear")
    judge(team, "bo", "o:2", "DACB")
    assert count_agreed(team) == 2
    assert approve_agreed(team, "lea") == 2
    assert team_statuses(team) == ["approved", "conflict", "approved"]
    with team.session() as session:
        decisions = list(session.exec(select(Decision).order_by(col(Decision.item_id))))
        events = list(session.exec(select(AuditEvent).where(AuditEvent.action == "decide")))
    assert [(d.item_id, d.status, d.final_key) for d in decisions] == [
        ("o:1", "approved", "DACB"),
        ("o:3", "approved", "DACB"),
    ]
    assert len(events) == 2 and events[0].actor == "lea"
    assert approve_agreed(team, "lea") == 0  # nothing left


def test_approve_agreed_reads_the_judgments_not_the_status_column(team) -> None:  # type: ignore[no-untyped-def]
    """A status set to agreed by hand (psql, a script) approves nothing: the judgments
    decide, and the item gets its real status back."""
    judge(team, "ann", "o:1", "DACB")
    judge(team, "bo", "o:1", "DACB")
    judge(team, "ann", "o:2", "DACB", "flawed", comment="event C is unclear")
    judge(team, "bo", "o:2", "DACB")
    judge(team, "ann", "o:3", "DACB")  # one judgment of two: still in review
    with team.transaction() as session:
        session.execute(
            update(Item).where(col(Item.id).in_(["o:2", "o:3"])).values(status="agreed")
        )
    assert approve_agreed(team, "lea") == 1
    assert team_statuses(team) == ["approved", "conflict", "in_review"]
    with team.session() as session:
        assert [d.item_id for d in session.exec(select(Decision))] == ["o:1"]


def test_the_key_offered_for_a_correction_is_one_someone_asked_for(team) -> None:  # type: ignore[no-untyped-def]
    """F3's `c` offers the other key someone who did not keep the key asked for, as
    triage suggests one: ann answered ADCB blind, then saw the key and kept it (the key
    is right, she says); bo answered DCAB and did not keep it.  With no one asking, the
    answer given most."""
    judge(team, "ann", "o:2", "ADCB")
    judge(team, "bo", "o:2", "DCAB", "flawed", comment="B and C could swap")
    assert load_case(team, "o:2").key_to_offer == "DCAB"
    judge(team, "ann", "o:3", "ADCB")
    judge(team, "bo", "o:3", "DACB", "flawed", comment="event C is unclear")
    assert load_case(team, "o:3").key_to_offer == "ADCB"
    judge(team, "ann", "o:1", "DACB", "flawed", comment="event C is unclear")
    judge(team, "bo", "o:1", "DACB", "sensitive", comment="names a real person")
    assert load_case(team, "o:1").key_to_offer == "DACB"  # nobody answered otherwise


def test_decide_with_corrected_key_makes_a_new_revision(team) -> None:  # type: ignore[no-untyped-def]
    judge(team, "ann", "o:2", "ADCB", "wrong-key", corrected_key="ADCB")
    judge(team, "bo", "o:2", "ADCB", "wrong-key", corrected_key="ADCB")
    record = decide(team, "lea", "o:2", "approved", key="A, D, C, B", comment="both right").record
    assert record.corrected_key and record.revision == 2 and record.final_key == "ADCB"
    assert record.reason == DecisionReason.WRONG_KEY
    assert item_status(team, "o:2") == "approved"
    with team.session() as session:
        assert get_item(session, "o:2").key == "ADCB"
        revisions = get_revisions(session, "o:2")
    assert [(r.number, r.key, r.author) for r in revisions] == [
        (1, "DACB", "test"),
        (2, "ADCB", "lea"),
    ]
    case = load_case(team, "o:2")
    assert case.item.revision == 2 and case.judgments == []
    assert [j.annotator for j in case.earlier_judgments] == ["ann", "bo"]
    assert case.earlier_revisions[0].key == "DACB"


def test_same_key_makes_no_revision(team) -> None:  # type: ignore[no-untyped-def]
    record = decide(team, "lea", "o:1", "approved", key="D A C B").record
    assert not record.corrected_key and record.revision == 1


def test_reject_needs_a_reason_and_records_it(team) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(AdjudicationError, match="needs a reason"):
        decide(team, "lea", "o:1", "rejected")
    with pytest.raises(AdjudicationError, match="not a reason"):
        decide(team, "lea", "o:1", "rejected", reason="boring")
    with pytest.raises(AdjudicationError, match="approval only"):
        decide(team, "lea", "o:1", "rejected", reason="flawed", key="ABCD")
    with pytest.raises(AdjudicationError, match="approved or rejected"):
        decide(team, "lea", "o:1", "agreed")
    with pytest.raises(AdjudicationError, match="no item"):
        decide(team, "lea", "o:404", "approved")
    with pytest.raises(AdjudicationError, match="key 'ABCE'"):
        decide(team, "lea", "o:1", "approved", key="ABCE")
    record = decide(team, "lea", "o:1", "rejected", reason="several-valid-orders").record
    assert record.reason == "several-valid-orders" and item_status(team, "o:1") == "rejected"
    with team.session() as session:
        assert session.exec(select(Decision)).one().final_key is None


def test_an_approval_takes_no_reason_to_reject(team) -> None:  # type: ignore[no-untyped-def]
    # It was stored and audited as "approved ... reason=duplicate".
    for reason in ("duplicate", "sensitive", "flawed", "no-order", "wrong-key"):
        with pytest.raises(AdjudicationError, match="contradicts itself: that is a reason to"):
            decide(team, "lea", "o:1", "approved", reason=reason)
    flagged = run_cli(team, "decide", "--flag", "duplicate", "--status", "approved",
                      "--reason", "sensitive", "--as", "lea", "--yes")  # fmt: skip
    assert flagged.exit_code == 1
    assert "approving the items flagged duplicate for the reason sensitive" in flagged.output
    with team.session() as session:
        assert session.exec(select(Decision)).all() == []
        assert session.exec(select(AuditEvent).where(AuditEvent.action == "decide")).all() == []
    assert decide(team, "lea", "o:1", "approved", reason="other").record.reason == "other"
    corrected = decide(team, "lea", "o:2", "approved", key="ABCD", reason="wrong-key").record
    assert corrected.reason == "wrong-key" and corrected.corrected_key
    assert decide(team, "lea", "o:3", "approved").record.reason is None


def test_no_clear_order_is_a_reason_for_ordering_items_only(team) -> None:  # type: ignore[no-untyped-def]
    store_item(team, "c:1", kind="single", key="B", source="cflue")
    with pytest.raises(AdjudicationError, match="c:1 is a single item: the reason no-clear-order"):
        decide(team, "lea", "c:1", "rejected", reason="no-clear-order")
    assert item_status(team, "c:1") == "pending"  # nothing was decided
    assert DecisionReason.NO_CLEAR_ORDER not in rejection_reasons(ItemKind.SINGLE)
    assert rejection_reasons(ItemKind.ORDERING) == tuple(DecisionReason)
    record = decide(team, "lea", "c:1", "rejected", reason="several-valid-orders").record
    assert record.reason == "several-valid-orders"
    # stored by that name, shown by what it means for a multiple-choice item
    store_item(team, "c:2", kind="multi", key="AB", source="cflue")
    said = run_cli(team, "decide", "c:2", "--status", "rejected", "--as", "lea",
                   "--reason", "several-valid-orders")  # fmt: skip
    assert said.exit_code == 0 and said.output == "c:2: rejected, reason several-valid-answers\n"
    assert decision_history(team, "c:2")[0].reason == "several-valid-orders"


def test_the_verdict_words_name_the_reasons_they_mean(team) -> None:  # type: ignore[no-untyped-def]
    """`--reason` takes the annotators' verdicts no-order and ambiguous, and the shown name
    several-valid-answers, for the reasons they mean; the stored name is the reason's own."""
    store_item(team, "c:1", kind="multi", key="AB", source="cflue")
    for item_id, word, stored, shown in (
        ("o:1", "no-order", "no-clear-order", "no-clear-order"),
        ("o:2", "ambiguous", "several-valid-orders", "several-valid-orders"),
        ("c:1", "several-valid-answers", "several-valid-orders", "several-valid-answers"),
    ):
        said = run_cli(team, "decide", item_id, "--status", "rejected", "--as", "lea",
                       "--reason", word)  # fmt: skip
        assert said.exit_code == 0, said.output
        assert said.output == f"{item_id}: rejected, reason {shown}\n"
        assert decision_history(team, item_id)[0].reason == stored
    record = decide(team, "lea", "o:3", "rejected", reason="no-order").record  # the service too
    assert record.reason == "no-clear-order"
    refused = run_cli(team, "decide", "o:3", "--status", "rejected", "--as", "lea",
                      "--reason", "no-ordr")  # fmt: skip
    assert refused.exit_code == 2
    assert (
        "(or ambiguous or several-valid-answers for several-valid-orders; no-order for "
        "no-clear-order)" in " ".join(refused.output.split())
    )
    assert "no-order for no-clear-order" in " ".join(
        run_cli(team, "decide", "--help").output.split()
    )


def test_revising_a_decision_keeps_history(team) -> None:  # type: ignore[no-untyped-def]
    decide(team, "lea", "o:1", "rejected", reason="no-clear-order")
    decide(team, "lea", "o:1", "approved", comment="on second thought")
    history = decision_history(team, "o:1")
    assert [(d.status, d.reason, d.lead) for d in history] == [
        ("rejected", "no-clear-order", "lea"),
        ("approved", None, "lea"),
    ]
    assert item_status(team, "o:1") == "approved"


def test_the_decision_in_force_repeated_is_not_stored_again(team) -> None:  # type: ignore[no-untyped-def]
    first = decide(team, "lea", "o:1", "rejected", reason="flawed", comment="a typo in B")
    assert first.stored
    with team.session() as session:
        events = len(session.exec(select(AuditEvent)).all())
    for comment in ("", "a typo in B"):  # left out, or the same: the same decision
        repeated = decide(team, "lea", "o:1", "rejected", reason="flawed", comment=comment)
        assert not repeated.stored and repeated.record == first.record
    with team.session() as session:
        assert len(session.exec(select(Decision)).all()) == 1
        assert len(session.exec(select(AuditEvent)).all()) == events
    # Anything new is a new decision: another comment, another reason, another lead's
    assert decide(team, "lea", "o:1", "rejected", reason="flawed", comment="and in C").stored
    assert decide(team, "lea", "o:1", "rejected", reason="sensitive").stored
    store_person(team, "max", Role.LEAD)
    assert decide(team, "max", "o:1", "rejected", reason="sensitive").stored
    assert len(decision_history(team, "o:1")) == 4


def test_non_leads_are_refused_and_nothing_is_written(team) -> None:  # type: ignore[no-untyped-def]
    judge(team, "ann", "o:1", "DACB")
    judge(team, "bo", "o:1", "DACB")
    with pytest.raises(PermissionDenied, match="only leads"):
        decide(team, "ann", "o:1", "approved")
    with pytest.raises(PermissionDenied, match="not a registered person"):
        approve_agreed(team, "stranger")
    with team.session() as session:
        assert session.exec(select(Decision)).all() == []
    assert item_status(team, "o:1") == "agreed"


def test_conflict_queue_shows_every_judgment_side_by_side(team) -> None:  # type: ignore[no-untyped-def]
    judge(
        team,
        "ann",
        "o:2",
        "ADCB",
        "wrong-key",
        corrected_key="ADCB",
        comment="A is first",
        seconds=41,
    )
    judge(team, "bo", "o:2", "DCAB", "ambiguous", alternative_orders=["DCAB"], seconds=12)
    judge(team, "ann", "o:1", "DACB")
    judge(team, "bo", "o:1", "DACB")
    queue = conflict_queue(team)
    assert [case.item.id for case in queue] == ["o:2"]
    case = queue[0]
    assert case.key == "DACB" and case.explanation == EXPLANATION
    by_name = {j.annotator: j for j in case.judgments}
    assert by_name["ann"].corrected_key == "ADCB" and by_name["ann"].comment == "A is first"
    assert by_name["ann"].seconds == 41 and not by_name["ann"].matches_key
    assert by_name["bo"].alternative_orders == ("DCAB",) and by_name["bo"].verdict == "ambiguous"
    assert len(case.disagreements) == 2
    assert conflict_queue(team, ItemScope(kinds=("single",))) == []


# --- the command line -----------------------------------------------------------------


def run(db_path, *args: str, input: str | None = None):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, ["--db", str(db_path), *args], input=input)


@pytest.fixture
def team_file(db_path):  # type: ignore[no-untyped-def]
    from db.engine import open_database

    db = open_database(db_path)
    store_person(db, "ann")
    store_person(db, "bo")
    store_person(db, "lea", Role.LEAD)
    with db.transaction() as session:
        set_setting(session, "overlap", "2")
    for item_id in ("o:1", "o:2"):
        store_item(db, item_id, key="DACB")
    for who in ("ann", "bo"):
        judge(db, who, "o:1", "DACB")
    judge(db, "ann", "o:2", "DACB", seconds=42.0)
    judge(db, "bo", "o:2", "ADCB", "wrong-key", corrected_key="ADCB")  # untimed, as from a sheet
    db.dispose()
    return db_path


def test_cli_bootstrap_defaults_match_the_agreement_module() -> None:
    from reviewer.agreement import DEFAULT_RESAMPLES, DEFAULT_SEED

    assert (commands.DEFAULT_RESAMPLES, commands.DEFAULT_SEED) == (DEFAULT_RESAMPLES, DEFAULT_SEED)


def test_cli_decide_and_refusal(team_file) -> None:  # type: ignore[no-untyped-def]
    refused = run(team_file, "decide", "o:2", "--as", "ann", "--status", "approved")
    assert refused.exit_code == 1 and "only leads can decide" in refused.output
    assert "Traceback" not in refused.output
    missing_reason = run(team_file, "decide", "o:2", "--as", "lea", "--status", "rejected")
    assert missing_reason.exit_code == 1 and "needs a reason" in missing_reason.output
    done = run(
        team_file, "decide", "o:2", "--as", "lea", "--status", "approved", "--key", "A, D, C, B"
    )
    assert done.exit_code == 0, done.output
    assert "approved with key A, D, C, B (new revision 2)" in done.output
    # The same command again (a script run twice) stores nothing: no second decision
    repeated = run(
        team_file, "decide", "o:2", "--as", "lea", "--status", "approved", "--key", "A, D, C, B"
    )
    assert repeated.exit_code == 0, repeated.output
    assert repeated.output == "o:2: already approved by lea at revision 2; nothing stored\n"
    again = run(
        team_file, "decide", "o:2", "--as", "lea", "--status", "rejected", "--reason", "flawed"
    )
    assert again.exit_code == 0 and "revises 1 earlier decision" in again.output


@pytest.mark.parametrize("presses", [1, 2], ids=["once", "twice"])
def test_ctrl_c_while_a_decision_commits_is_not_told_as_aborted(team_file, presses: int) -> None:  # type: ignore[no-untyped-def]
    """Once, the commit goes through first and the command says so; twice, it is cut short
    and the command says it may or may not be stored; never click's bare "Aborted!"."""
    with ctrl_c_in_commits(presses):
        result = run(team_file, "decide", "o:1", "--as", "lea", "--status", "approved")
    assert result.exit_code == 130, result.output
    assert "Aborted!" not in result.output
    said = " ".join(result.stderr.split())
    if presses == 1:
        assert said == (
            "error: interrupted (Ctrl-C) just after a change was stored; `vetbench audit "
            "--limit 5` shows what the command stored"
        )
    else:
        assert said.startswith(
            "error: interrupted (Ctrl-C twice) while a change was being stored: it may or "
            "may not be; `vetbench audit --limit 5`"
        )
    events = json.loads(run(team_file, "audit", "--as", "lea", "--json", "--limit", "1").stdout)
    decided = [event for event in events if event["action"] == "decide"]
    assert len(decided) == (1 if presses == 1 else 0)  # SQLite here: cut before it committed


def test_cli_approve_agreed_asks_first(team_file) -> None:  # type: ignore[no-untyped-def]
    declined = run(team_file, "approve-agreed", "--as", "lea", input="n\n")
    assert (
        "Approve 1 agreed item as lea?" in declined.output and "nothing approved" in declined.output
    )
    # A script whose standard input ends unanswered is told about --yes; nothing is done.
    unanswered = run(team_file, "approve-agreed", "--as", "lea", input="")
    assert unanswered.exit_code == 1 and unanswered.stderr == (
        "\nerror: no answer on standard input, so nothing was done: pass --yes to go ahead "
        "unasked\n"
    )
    assert unanswered.stdout == "Approve 1 agreed item as lea? [y/N]: "
    refused = run(team_file, "approve-agreed", "--as", "bo", "--yes")
    assert refused.exit_code == 1 and "only leads" in refused.output
    done = run(team_file, "approve-agreed", "--as", "lea", "--yes")
    assert done.exit_code == 0 and "approved 1 agreed item" in done.output
    assert "no agreed items" in run(team_file, "approve-agreed", "--as", "lea", "--yes").output


def test_approve_agreed_says_fewer_when_another_lead_decided_meanwhile(team_file) -> None:  # type: ignore[no-untyped-def]
    """The count is shown, then another lead approves the item before the answer: the
    summary says 1 fewer than counted, never "+1"."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    asking = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "reviewer.cli",
            "--db",
            str(team_file),
            "approve-agreed",
            "--as",
            "lea",
        ],
        env={**os.environ, "PYTHONPATH": str(root)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    assert asking.stdin is not None and asking.stdout is not None
    shown = b""
    while b"[y/N]" not in shown:
        byte = asking.stdout.read(1)
        assert byte, shown
        shown += byte
    assert b"Approve 1 agreed item as lea?" in shown
    meanwhile = run(team_file, "decide", "o:1", "--as", "lea", "--status", "approved")
    assert meanwhile.exit_code == 0, meanwhile.output
    rest, _ = asking.communicate(b"y\n", timeout=60)
    assert asking.returncode == 0, rest
    assert "approved 0 agreed items (1 fewer than counted" in rest.decode()
    assert "+1" not in rest.decode()


def test_cli_conflicts_for_leads_only(team_file) -> None:  # type: ignore[no-untyped-def]
    # a non-lead reads the count, never the judgments (issue 23: no refusal for reading)
    counted = run(team_file, "conflicts", "--as", "ann")
    assert counted.exit_code == 0, counted.output
    assert "1 conflict (1 ordering); ann is not a lead" in counted.output
    assert "o:2" not in counted.output and "key should be" not in counted.output
    refused = run(team_file, "conflicts", "--as", "ann", "--json")
    assert refused.exit_code == 1 and "every judgment" in refused.output
    listed = run(team_file, "conflicts", "--as", "lea")
    assert (
        listed.exit_code == 0
        and "o:2" in listed.output
        and "key should be A, D, C, B" in listed.output
    )
    # a judgment without a time says so: "0s" read as judged in no time
    times = {line.split()[0]: line for line in listed.output.splitlines() if "DACB"[0] in line}
    assert "keep          42 s" in listed.output and "wrong-key  untimed" in listed.output, times
    data = json.loads(run(team_file, "conflicts", "--as", "lea", "--json").output)
    assert [case["id"] for case in data] == ["o:2"]
    assert {j["annotator"] for j in data[0]["judgments"]} == {"ann", "bo"}


def test_cli_conflicts_and_agreement_keep_their_columns_with_a_chinese_name(team_file) -> None:  # type: ignore[no-untyped-def]
    from db.engine import open_database
    from db.visible_text import east_asian_cell_len

    db = open_database(team_file)
    store_person(db, "王小明是审校员")  # 14 terminal cells, more than the 12 a name is given
    judge(db, "王小明是审校员", "o:2", "DACB")
    db.dispose()
    listed = run(team_file, "conflicts", "--as", "lea")
    marks = [
        (line, line.find(" = ") if " = " in line else line.find(" ≠ "))
        for line in listed.output.splitlines()
        if " = " in line or " ≠ " in line
    ]
    assert len(marks) == 3, listed.output
    # each judgment's mark (= or ≠) in the same terminal column, after the widest name
    assert {east_asian_cell_len(line[:at]) for line, at in marks} == {4 + 14}, listed.output
    # the agreement's per-annotator table: each row's second column at one terminal cell
    table = run(team_file, "agreement").output.split("Per annotator")[1].split("\n\n")[0]
    rows = table.splitlines()[1:]  # the title line, then the header and a row each
    assert len(rows) == 4, table
    assert {east_asian_cell_len(row[: row.index(row.split()[1])]) for row in rows} == {16}, table


def test_cli_conflicts_json_keeps_its_keys_in_order(team_file) -> None:  # type: ignore[no-untyped-def]
    """Scripts rely on the exact shape of ``conflicts --json``, earlier revisions included."""
    from db.engine import open_database

    db = open_database(team_file)
    edit_item(db, "lea", "o:2", ItemEdit(note="clearer", prompt="Order these events."))
    for who, answer in (("ann", "DACB"), ("bo", "ADCB")):
        judge(
            db,
            who,
            "o:2",
            answer,
            "keep" if answer == "DACB" else "wrong-key",
            **({} if answer == "DACB" else {"corrected_key": "ADCB"}),
        )
    db.dispose()
    [case] = json.loads(run(team_file, "conflicts", "--as", "lea", "--json").output)
    assert list(case) == [
        "id",
        "kind",
        "source",
        "status",
        "revision",
        "prompt",
        "choices",
        "key",
        "explanation",
        "disagreements",
        "judgments",
        "earlier_judgments",
        "earlier_revisions",
        "decisions",
    ]
    assert [list(revision) for revision in case["earlier_revisions"]] == [
        ["number", "prompt", "choices", "key", "explanation", "author", "change_note", "created_at"]
    ]
    assert list(case["judgments"][0]) == [
        "annotator",
        "revision",
        "blind_answer",
        "verdict",
        "alternative_orders",
        "corrected_key",
        "duplicate_of",
        "comment",
        "seconds",
        "created_at",
        "matches_key",
    ]


def test_cli_agreement_table_and_json(team_file) -> None:  # type: ignore[no-untyped-def]
    table = run(team_file, "agreement", "--bootstrap", "50")
    assert table.exit_code == 0, table.output
    assert "Krippendorff's alpha, verdicts" in table.output and "ann / bo" in table.output
    data = json.loads(
        run(team_file, "agreement", "--json", "--bootstrap", "50", "--seed", "3").output
    )
    assert data["items_compared"] == 2
    assert data["bootstrap"] == {"resamples": 50, "seed": 3, "method": data["bootstrap"]["method"]}
    assert set(data["krippendorff_alpha"]) == {"verdict", "verdict_keep_drop", "answer"}
    assert data["cohen_kappa"]["verdict"][0]["annotators"] == ["ann", "bo"]
    from db.engine import open_database

    db = open_database(team_file)
    store_item(db, "o:3", key="DACB")
    for who in ("ann", "bo"):
        judge(db, who, "o:3", "ADCB")  # both agree, on another order than the key
    db.dispose()
    as_annotator = json.loads(run(team_file, "agreement", "--json", "--as", "ann").output)
    assert as_annotator["likely_wrong_keys"] == 1  # a count: annotators must not see answers
    as_lead = json.loads(run(team_file, "agreement", "--json", "--as", "lea").output)
    assert [entry["item_id"] for entry in as_lead["likely_wrong_keys"]] == ["o:3"]
    assert as_lead["likely_wrong_keys"][0]["agreed_answer"] == "ADCB"
    table = run(team_file, "agreement", "--as", "ann", "--bootstrap", "0").output
    assert "only leads see it" in table and "o:3" not in table
    only_single = json.loads(run(team_file, "agreement", "--json", "--kind", "single").output)
    assert only_single["items_compared"] == 0 and only_single["filters"] == {"kind": ["single"]}
