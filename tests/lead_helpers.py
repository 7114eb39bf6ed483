"""Helpers for the agreement and adjudication tests: items, people and judgments stored directly.

Judgments are inserted as rows (bypassing ``reviewer.judging``) so tests can
build any pattern quickly, including retracted and superseded judgments.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

from sqlmodel import select

from db.engine import Database
from db.items import add_item
from db.models import Decision, ItemRevision, Judgment, Person, utcnow
from db.people import ensure_person
from db.validation import ItemDraft, validate_draft
from db.vocabulary import Role, Verdict
from reviewer.item_status import refresh_item_status

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"

CHOICES = {
    "ordering": 4,
    "single": 4,
    "multi": 5,
    "truefalse": 2,
}


def store_item(
    db: Database,
    item_id: str,
    *,
    kind: str = "ordering",
    key: str = "ABCD",
    source: str = "test",
    choices: int | None = None,
    prompt: str | None = None,
    explanation: str | None = "Because.",
) -> None:
    """Validate and store one item at revision 1."""
    count = choices or (len(key) if kind == "ordering" else CHOICES[kind])
    labels = "ABCDEFGH"[:count]
    draft = ItemDraft(
        kind=kind,
        prompt=prompt or f"Question {item_id}?",
        choices={label: f"choice {label} of {item_id}" for label in labels},
        key=key,
        explanation=explanation,
    )
    assert validate_draft(draft) == []
    with db.transaction() as session:
        add_item(session, item_id, source, draft, author="test")


def store_person(db: Database, name: str, role: Role = Role.ANNOTATOR) -> None:
    with db.transaction() as session:
        ensure_person(session, name, role)


_clock = {"now": utcnow()}


def store_judgment(
    db: Database,
    item_id: str,
    annotator: str,
    answer: str,
    verdict: str = Verdict.KEEP.value,
    *,
    revision: int = 1,
    seconds: float = 30.0,
    retracted: bool = False,
    comment: str = "",
    refresh: bool = True,
) -> None:
    """Insert one judgment row (strictly later than every earlier one) and refresh the status."""
    _clock["now"] += timedelta(seconds=1)
    with db.transaction() as session:
        person = ensure_person(session, annotator)
        revision_row = session.exec(
            select(ItemRevision).where(
                ItemRevision.item_id == item_id, ItemRevision.number == revision
            )
        ).one()
        session.add(
            Judgment(
                item_id=item_id,
                revision_id=revision_row.id,
                revision_number=revision,
                annotator_id=person.id,
                blind_answer=answer,
                verdict=verdict,
                seconds=seconds,
                comment=comment,
                retracted=retracted,
                created_at=_clock["now"],
            )
        )
        session.flush()
        if refresh:
            refresh_item_status(session, item_id)


def store_decision(db: Database, item_id: str, lead: str, status: str, key: str | None) -> None:
    with db.transaction() as session:
        person = session.exec(select(Person).where(Person.name == lead)).first() or ensure_person(
            session, lead, Role.LEAD
        )
        session.add(
            Decision(
                item_id=item_id,
                lead_id=person.id,
                status=status,
                revision_number=1,
                final_key=key,
            )
        )
        session.flush()
        refresh_item_status(session, item_id)


@dataclass
class StudyItem:
    """One item of a random study and the judgments stored for it (annotator -> answer, verdict)."""

    item_id: str
    kind: str
    key: str
    source: str
    judgments: dict[str, tuple[str, str]] = field(default_factory=dict)


def random_answer(rng: random.Random, kind: str, size: int) -> str:
    labels = "ABCDEFGH"[:size]
    if kind == "ordering":
        return "".join(rng.sample(labels, size))
    if kind == "multi":
        chosen = [label for label in labels if rng.random() < 0.5] or [rng.choice(labels)]
        return "".join(chosen)
    return rng.choice(labels)


def random_study(
    db: Database,
    seed: int,
    *,
    items: int = 40,
    annotators: tuple[str, ...] = ("ann", "bo", "cy", "di"),
    kinds: tuple[str, ...] = ("ordering", "single", "multi", "truefalse"),
    missing: float = 0.25,
    accuracy: float = 0.7,
    sources: tuple[str, ...] = ("src-a", "src-b"),
) -> list[StudyItem]:
    """Store random items and judgments (some missing, some retracted then redone)."""
    rng = random.Random(seed)
    verdicts = [verdict.value for verdict in Verdict if verdict is not Verdict.NO_ORDER]
    study: list[StudyItem] = []
    for index in range(items):
        kind = kinds[index % len(kinds)]
        size = CHOICES[kind] + (1 if kind == "ordering" and rng.random() < 0.3 else 0)
        key = random_answer(rng, kind, size)
        item = StudyItem(f"{kind}:{seed}:{index}", kind, key, rng.choice(sources))
        store_item(db, item.item_id, kind=kind, key=key, source=item.source, choices=size)
        for annotator in annotators:
            if rng.random() < missing:
                continue
            answer = key if rng.random() < accuracy else random_answer(rng, kind, size)
            verdict = "keep" if rng.random() < 0.6 else rng.choice(verdicts)
            if rng.random() < 0.15:  # an earlier judgment that was undone: must not count
                store_judgment(
                    db,
                    item.item_id,
                    annotator,
                    random_answer(rng, kind, size),
                    rng.choice(verdicts),
                    retracted=True,
                    refresh=False,
                )
            store_judgment(
                db,
                item.item_id,
                annotator,
                answer,
                verdict,
                seconds=rng.uniform(5, 120),
                refresh=False,
            )
            item.judgments[annotator] = (answer, verdict)
        study.append(item)
    return study
