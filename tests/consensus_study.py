"""A planted review study for the consensus tests and the simulation: items whose
truth is known (some keys planted wrong, some items planted flawed), judged by
simulated annotators of known skill, stored as real rows in one transaction."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from helpers import random_answer, store_item
from sqlmodel import col, select

from db.engine import Database
from db.item_status import refresh_item_statuses
from db.models import ItemRevision, Judgment, utcnow
from db.people import ensure_person
from db.vocabulary import Verdict

DROP_VERDICTS = (Verdict.FLAWED.value, Verdict.SENSITIVE.value, Verdict.DUPLICATE.value)


@dataclass(frozen=True)
class Annotator:
    """A simulated annotator: right answers with ``accuracy`` (None: answers at random
    and always keeps, a spammer), flaws seen with ``sees_flaws``."""

    name: str
    accuracy: float | None
    sees_flaws: float = 0.9
    false_drops: float = 0.03


@dataclass
class PlantedItem:
    item_id: str
    kind: str
    size: int
    truth: str
    key: str
    flawed: bool
    judges: list[str] = field(default_factory=list)

    @property
    def key_right(self) -> bool:
        return self.truth == self.key


EXPERT = Annotator("expert", 0.95)
AVERAGE = Annotator("average", 0.8, sees_flaws=0.7, false_drops=0.08)
CARELESS = Annotator("careless", 0.6, sees_flaws=0.5, false_drops=0.15)
SPAMMER = Annotator("spammer", None)


def _answer(rng: random.Random, who: Annotator, item: PlantedItem) -> str:
    if who.accuracy is not None and rng.random() < who.accuracy:
        return item.truth
    while True:
        answer = random_answer(rng, item.kind, item.size)
        if who.accuracy is None or answer != item.truth:
            return answer


def _verdict(rng: random.Random, who: Annotator, item: PlantedItem, answer: str) -> str:
    if who.accuracy is None:
        return Verdict.KEEP.value
    if item.flawed:
        return rng.choice(DROP_VERDICTS) if rng.random() < who.sees_flaws else Verdict.KEEP.value
    if rng.random() < who.false_drops:
        return rng.choice(DROP_VERDICTS)
    return Verdict.KEEP.value if answer == item.key else Verdict.WRONG_KEY.value


def plant_items(
    db: Database,
    seed: int,
    count: int,
    *,
    wrong_keys: float = 0.1,
    flawed: float = 0.1,
    kinds: tuple[str, ...] = ("single", "ordering"),
) -> list[PlantedItem]:
    """``count`` items, each stored with its key; about ``wrong_keys`` of the keys are
    not the truth, about ``flawed`` of the items should be dropped."""
    rng = random.Random(seed)
    items = []
    for index in range(count):
        kind = kinds[index % len(kinds)]
        size = 4
        truth = random_answer(rng, kind, size)
        key = truth
        if rng.random() < wrong_keys:
            while key == truth:
                key = random_answer(rng, kind, size)
        item = PlantedItem(f"{kind}:{index:04d}", kind, size, truth, key, rng.random() < flawed)
        store_item(db, item.item_id, kind=kind, key=key, choices=size)
        items.append(item)
    return items


def judge_items(
    db: Database,
    seed: int,
    items: list[PlantedItem],
    annotators: tuple[Annotator, ...],
    per_item: int = 3,
) -> None:
    """``per_item`` judgments of each item by annotators drawn at random, stored as rows
    in one transaction, then the items' statuses refreshed."""
    rng = random.Random(seed)
    now = utcnow()
    with db.transaction() as session:
        people = {who.name: ensure_person(session, who.name) for who in annotators}
        revisions = dict(
            session.execute(
                select(col(ItemRevision.item_id), col(ItemRevision.id)).where(
                    col(ItemRevision.number) == 1
                )
            ).all()
        )
        for item in items:
            for who in rng.sample(annotators, per_item):
                answer = _answer(rng, who, item)
                session.add(
                    Judgment(
                        item_id=item.item_id,
                        revision_id=revisions[item.item_id],
                        revision_number=1,
                        annotator_id=people[who.name].id,
                        blind_answer=answer,
                        verdict=_verdict(rng, who, item, answer),
                        seconds=20.0,
                        created_at=now,
                    )
                )
                item.judges.append(who.name)
        session.flush()
        refresh_item_statuses(session, [item.item_id for item in items])
