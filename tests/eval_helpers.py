"""Items for the evaluator's tests: a small mixed set stored with the one item factory, and
a database file holding it for the command line (run with :func:`helpers.run_cli`)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from click.testing import Result
from helpers import run_cli, store_draft
from sqlmodel import col, select

from db.engine import Database, open_database
from db.models import EvalRun, Prediction
from db.validation import ItemDraft
from db.vocabulary import ItemStatus


def ordering(n: int, key: str = "DACB") -> ItemDraft:
    return ItemDraft(
        kind="ordering",
        prompt=f"Scenario {n}: a firm responds to rising costs. Put the events in logical order.",
        choices={
            "A": f"The firm raises prices ({n}).",
            "B": "Customers buy less.",
            "C": "Rivals follow the price rise.",
            "D": "Input costs jump.",
        },
        key=key,
        explanation="Costs rise first; prices follow; rivals match; demand falls.",
    )


def single_zh(n: int, key: str = "B") -> ItemDraft:
    return ItemDraft(
        kind="single",
        prompt=f"第{n}题：我国A股市场目前实行的交易制度是（　）。",
        choices={"A": "T+0", "B": "T+1", "C": "T+2", "D": "T+3"},
        key=key,
        explanation="A股实行T+1交易制度。",
        language="zh",
        meta={"名称": "证券从业资格"},
    )


def multi_en(n: int, key: str = "ABD") -> ItemDraft:
    return ItemDraft(
        kind="multi",
        prompt=f"Question {n}: which of these are securities intermediaries?",
        choices={
            "A": "Brokers",
            "B": "Underwriters",
            "C": "Households",
            "D": "Custodians",
        },
        key=key,
        explanation=None,
    )


def truefalse_zh(n: int, key: str = "A") -> ItemDraft:
    return ItemDraft(
        kind="truefalse",
        prompt=f"第{n}题：下调法定存款准备金率属于扩张性货币政策。",
        choices={"A": "对", "B": "错"},
        key=key,
        explanation="准备金率下调增加可贷资金。",
        language="zh",
    )


def store(
    database: Database,
    drafts: Iterable[tuple[str, ItemDraft]],
    *,
    status: str = ItemStatus.APPROVED,
) -> list[str]:
    """Validate and store ``(item_id, draft)`` pairs with ``status``; returns the ids."""
    return [
        store_draft(database, item_id, draft, source=item_id.split(":")[0], status=status)
        for item_id, draft in drafts
    ]


MIXED_SET_ANSWERS = {
    "econ:1": "D, A, C, B",
    "econ:2": "B, A, D, C",
    "cflue:1": "B",
    "cflue:2": "C",
    "cflue:3": "ABD",
    "cflue:4": "BC",
    "cflue:5": "对",
    "cflue:6": "错",
}
"""Right answers to the eight approved items of :func:`mixed_set`, as a model would write them."""


def mixed_set(database: Database) -> list[str]:
    """Eight approved items (2 of each kind) and four agreed ones that can serve as shots."""
    approved = store(
        database,
        [
            ("econ:1", ordering(1, "DACB")),
            ("econ:2", ordering(2, "BADC")),
            ("cflue:1", single_zh(1, "B")),
            ("cflue:2", single_zh(2, "C")),
            ("cflue:3", multi_en(3, "ABD")),
            ("cflue:4", multi_en(4, "BC")),
            ("cflue:5", truefalse_zh(5, "A")),
            ("cflue:6", truefalse_zh(6, "B")),
        ],
    )
    store(
        database,
        [
            ("shots:1", ordering(11, "CBDA")),
            ("shots:2", single_zh(12, "A")),
            ("shots:3", multi_en(13, "AC")),
            ("shots:4", truefalse_zh(14, "B")),
        ],
        status=ItemStatus.AGREED,
    )
    return approved


def mixed_set_url(url: str | Path) -> str:
    """The database at ``url`` (a file path or a URL) holding :func:`mixed_set`; its URL
    for ``--db``."""
    database = open_database(url)
    mixed_set(database)
    database.dispose()
    return str(url)


def ok(result: Result) -> Result:
    """``result``, once it is known to have succeeded (else fail showing its output)."""
    assert result.exit_code == 0, result.output + result.stderr
    return result


def refusal(result: Result) -> str:
    """What ``result`` said on standard error, once it is known to have failed with an
    expected error (exit status 1; else fail showing its output)."""
    assert result.exit_code == 1, result.output + result.stderr
    return result.stderr.strip()


def eval_json(db: Path | str, *args: str) -> Any:
    """The JSON document ``vetbench eval ARGS --json`` prints, once it has succeeded."""
    return json.loads(ok(run_cli(db, "eval", *args, "--json")).stdout)


def stored_runs(url: str) -> list[EvalRun]:
    """Every run stored at ``url``, oldest first."""
    database = open_database(url)
    try:
        with database.session() as session:
            return list(session.exec(select(EvalRun).order_by(col(EvalRun.id))).all())
    finally:
        database.dispose()


def stored_predictions(url: str, run_id: int) -> dict[str, Prediction]:
    """A run's stored predictions by item id."""
    database = open_database(url)
    try:
        with database.session() as session:
            rows = session.exec(select(Prediction).where(Prediction.run_id == run_id)).all()
            return {row.item_id: row for row in rows}
    finally:
        database.dispose()
