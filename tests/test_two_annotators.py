"""Two annotators at once on one SQLite file, in two processes: no error, no lost judgment.

Each process works the way the review app does (queue -> blind answer -> submit,
the same ``ReviewQueue`` and ``submit_judgment``); a second test runs two shell
loops of `vetbench judge`.
"""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from helpers import store_ordering_items
from sqlmodel import select

from db.engine import open_database
from db.models import Item, Judgment, Person
from db.people import add_person
from db.vocabulary import ItemStatus, Role

ROOT = Path(__file__).resolve().parent.parent
VETBENCH = Path(sys.executable).with_name("vetbench")

SESSION = """
import sys
from db.engine import open_database
from reviewer.judging import submit_judgment
from reviewer.queue import ReviewQueue

db = open_database(sys.argv[1])
queue = ReviewQueue(db, sys.argv[2])
while (item := queue.fetch_next()) is not None:
    receipt = submit_judgment(
        db, queue.annotator, item.id, revision_number=item.revision,
        blind_answer=item.key, verdict="keep", seconds=1.0,
    )
    queue.record_submitted(receipt.judgment_id)
    print(receipt.judgment_id, item.id, flush=True)
"""


def test_two_review_sessions_at_once_lose_nothing(db_path: Path) -> None:
    db = open_database(db_path)
    ids = store_ordering_items(db, 40)
    db.dispose()
    sessions = [
        subprocess.Popen(
            [sys.executable, "-c", SESSION, str(db_path), name],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("alice", "bob")
    ]
    outputs = [session.communicate(timeout=300) for session in sessions]
    for session, (_out, err) in zip(sessions, outputs, strict=True):
        assert session.returncode == 0, err
        assert err == ""
    reported = {int(line.split()[0]) for out, _ in outputs for line in out.splitlines()}

    db = open_database(db_path)
    with db.session() as session:
        stored = session.exec(select(Judgment)).all()
        names = {p.id: p.name for p in session.exec(select(Person))}
        statuses = Counter(item.status for item in session.exec(select(Item)))
    db.dispose()
    # Every judgment a session was told was saved is there, and nothing else.
    assert {j.id for j in stored} == reported
    # k = 2: each annotator judged every item exactly once.
    per_pair = Counter((names[j.annotator_id], j.item_id) for j in stored)
    assert set(per_pair.values()) == {1}
    assert {item for _name, item in per_pair} == set(ids)
    assert len(stored) == 2 * len(ids)
    assert statuses == {ItemStatus.AGREED: len(ids)}


@pytest.mark.slow
def test_two_shell_loops_of_vetbench_judge(db_path: Path) -> None:
    db = open_database(db_path)
    ids = store_ordering_items(db, 4)
    for name in ("alice", "bob"):  # registering is explicit (users add)
        add_person(db, name, Role.ANNOTATOR, actor="test")
    db.dispose()
    loop = " && ".join(
        f'"{VETBENCH}" --db "{db_path}" judge {item_id} --as "$1" --answer DABC --verdict keep'
        for item_id in ids
    )
    shells = [
        subprocess.Popen(
            ["bash", "-c", loop, "judge-loop", name],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("alice", "bob")
    ]
    for shell in shells:
        out, err = shell.communicate(timeout=300)
        assert shell.returncode == 0, err
        assert err == "" and out.count("saved judgment") == len(ids)
    db = open_database(db_path)
    with db.session() as session:
        assert len(session.exec(select(Judgment)).all()) == 2 * len(ids)
        assert {item.status for item in session.exec(select(Item))} == {ItemStatus.AGREED}
    db.dispose()
