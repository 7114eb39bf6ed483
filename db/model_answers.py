"""What the evaluated models answered, item by item: the one reading of the prediction
tables that the evaluator's suspect keys, the ``model-disagrees`` flag and triage share.

Only predictions on an item's current revision count (an edit makes older answers
moot), failures (timeouts, exhausted retries) do not count, the oracle's do not (it
was handed the key: its agreement with the key says nothing), and each model's
latest run speaks for it.  Living in ``db/``, it lets the review domain weigh the
models' answers without importing the evaluator.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import ColumnElement, and_, func
from sqlalchemy import select as sa_select
from sqlmodel import Session, col

from db.models import EvalRun, Item, ItemRevision, Prediction, is_current_revision
from db.vocabulary import ORACLE_SCRIPT, SCRIPTED_BACKEND, ItemKind

__all__ = ["ItemAnswers", "ModelAnswer", "model_answers"]


@dataclass(frozen=True)
class ModelAnswer:
    """One model's answer to an item, from its latest run that answered it."""

    model: str
    run_id: int
    answer: str | None  # canonical; None when unparsed
    correct: bool | None


@dataclass(frozen=True)
class ItemAnswers:
    """Every model's latest answer to one item's current revision."""

    item_id: str
    revision: int  # the current revision, which the answers are about
    kind: ItemKind
    key: str
    answers: tuple[ModelAnswer, ...]  # by model name

    @property
    def wrong_consensus(self) -> tuple[str, tuple[ModelAnswer, ...]] | None:
        """The answer other than the key that most models gave, with those models
        (None when no model gave a parsed answer other than the key)."""
        wrong = [a for a in self.answers if a.answer is not None and a.answer != self.key]
        if not wrong:
            return None
        answer, _count = Counter(a.answer for a in wrong).most_common(1)[0]
        assert answer is not None
        return answer, tuple(a for a in wrong if a.answer == answer)


def model_answers(session: Session, item_ids: Sequence[str] | None = None) -> list[ItemAnswers]:
    """Each item's models' latest answers on its current revision, in item id order
    (only items some model answered)."""
    query = (
        sa_select(  # sqlalchemy's select: more columns than sqlmodel's types take
            col(Prediction.item_id),
            col(Prediction.parsed_answer),
            col(Prediction.correct),
            col(Prediction.run_id),
            col(EvalRun.model),
            col(Item.kind),
            col(ItemRevision.key),
            col(Item.current_revision),
        )
        .join(EvalRun, col(EvalRun.id) == col(Prediction.run_id))
        .join(Item, col(Item.id) == col(Prediction.item_id))
        .join(ItemRevision, is_current_revision())
        .where(col(Prediction.revision_number) == col(Item.current_revision))
        .where(col(Prediction.failure_kind).is_(None))
        .where(~_oracle_run())
    )
    if item_ids is not None:
        query = query.where(col(Prediction.item_id).in_(list(item_ids)))
    latest: dict[tuple[str, str], ModelAnswer] = {}
    details: dict[str, tuple[str, str, int]] = {}
    for item_id, parsed, correct, run_id, model, kind, key, revision in session.execute(query):
        previous = latest.get((item_id, model))
        if previous is None or run_id > previous.run_id:
            latest[(item_id, model)] = ModelAnswer(model, run_id, parsed, correct)
        details[item_id] = (kind, key, revision)
    by_item: dict[str, list[ModelAnswer]] = defaultdict(list)
    known_kinds = {kind.value for kind in ItemKind}
    for (item_id, _model), answer in latest.items():
        if details[item_id][0] in known_kinds:  # rows not written by vetbench are skipped
            by_item[item_id].append(answer)
    return [
        ItemAnswers(
            item_id,
            details[item_id][2],
            ItemKind(details[item_id][0]),
            details[item_id][1],
            tuple(sorted(answers, key=lambda a: a.model)),
        )
        for item_id, answers in sorted(by_item.items())
    ]


def _oracle_run() -> ColumnElement[bool]:
    """Runs of the oracle, which answers with the key it is handed (``scripted:oracle``)."""
    script = col(EvalRun.params)["script"].as_string()
    return and_(
        col(EvalRun.backend) == SCRIPTED_BACKEND, func.coalesce(script, "") == ORACLE_SCRIPT
    )
