"""Agreement on blind answers (given before the key is shown), and with the proposed key.

Alpha over blind answers is computed per kind, because answers of different
kinds are not comparable: the nominal distance for orderings, single-answer
and true/false items, and the MASI distance (partial credit for overlapping
letter sets) for multi-answer items.  Items where every annotator gave the same
blind answer but it is not the key are listed as likely wrong keys.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from db.vocabulary import ItemKind
from reviewer.agreement.bootstrap import BootstrapSettings, Figure
from reviewer.agreement.coefficients import masi_distance_matrix
from reviewer.agreement.data import JudgmentData
from reviewer.agreement.nominal import (
    Codes,
    distance_alpha,
    krippendorff_alpha,
    percent_agreement,
)

# Above this many distinct answers the krippendorff package's dense arrays get too large.
_PACKAGE_MAX_VALUES = 16


@dataclass(frozen=True)
class AnswerAlpha:
    kind: str
    distance: str  # "nominal" or "masi"
    alpha: Figure


@dataclass(frozen=True)
class ItemKeyAgreement:
    """Share of one item revision's blind answers that equal its key."""

    item_id: str
    revision: int
    kind: str
    key: str
    share: float
    judgments: int


@dataclass(frozen=True)
class LikelyWrongKey:
    """Annotators agree with each other on an answer that is not the key."""

    item_id: str
    revision: int
    kind: str
    source: str
    key: str
    agreed_answer: str
    annotators: int
    is_current: bool  # False once the item has a newer revision
    decision: str  # the item's latest decision status, "" if none


@dataclass(frozen=True)
class KeyAgreement:
    overall: Figure  # share of all blind answers equal to the key (n = judgments)
    items_below_full: list[ItemKeyAgreement]  # item revisions where some answer differs
    likely_wrong_keys: list[LikelyWrongKey]


def answer_codes(data: JudgmentData) -> Codes:
    """Each blind answer as a category code (distinct answers, across all kinds)."""
    values, codes = np.unique(data.row_answer, return_inverse=True)
    return Codes(
        data.row_unit,
        data.row_annotator,
        codes.astype(np.int64),
        data.answer_text(values).tolist(),
        data.n_units,
    )


def answer_alphas(
    data: JudgmentData,
    settings: BootstrapSettings,
    cache: dict[bytes, AnswerAlpha] | None = None,
) -> dict[str, AnswerAlpha]:
    """Alpha over blind answers for each kind that was judged.

    ``cache`` (keyed by the units' fingerprint) lets breakdowns that contain
    the same items of a kind reuse the figure instead of bootstrapping it again.
    """
    results: dict[str, AnswerAlpha] = {}
    cache = {} if cache is None else cache
    for kind in ItemKind:
        mask = data.unit_kind == kind.value
        if not mask.any():
            continue
        subset = data.subset(mask)
        fingerprint = subset.fingerprint()
        if fingerprint not in cache:
            cache[fingerprint] = _answer_alpha(subset, kind, settings)
        results[kind.value] = cache[fingerprint]
    return results


def _answer_alpha(subset: JudgmentData, kind: ItemKind, settings: BootstrapSettings) -> AnswerAlpha:
    codes = answer_codes(subset)
    name = f"answer/{kind.value}/alpha"
    if kind is ItemKind.MULTI:
        masi = masi_distance_matrix(codes.labels)
        return AnswerAlpha(
            kind.value, "masi", distance_alpha(codes, masi, settings, name, what="answer")
        )
    if codes.n_values <= _PACKAGE_MAX_VALUES:
        alpha = krippendorff_alpha(codes, settings, name, what="answer")
    else:
        alpha = distance_alpha(codes, None, settings, name, what="answer")
    return AnswerAlpha(kind.value, "nominal", alpha)


def answer_percent_agreement(data: JudgmentData) -> Figure:
    """Raw agreement on blind answers: per item the share of annotator pairs with equal answers."""
    return percent_agreement(answer_codes(data))


def key_agreement(data: JudgmentData, *, with_items: bool = True) -> KeyAgreement:
    """Agreement of blind answers with the key, per judgment and per item, and likely wrong keys.

    Without ``with_items`` the per-item list stays empty (breakdowns only need the totals).
    """
    if data.n_rows == 0:
        return KeyAgreement(Figure.undefined("no judgments"), [], [])
    matches = data.row_answer == data.row_key()
    overall = Figure.of(float(matches.mean()), data.n_rows)

    judgments = data.judgments_per_unit()
    matching = np.bincount(data.row_unit, weights=matches, minlength=data.n_units)
    below = np.flatnonzero(matching < judgments) if with_items else np.zeros(0, dtype=np.int64)
    items = [
        ItemKeyAgreement(item, revision, kind, key, hits / count, count)
        for item, revision, kind, key, hits, count in zip(
            data.unit_item[below].tolist(),
            data.unit_revision[below].tolist(),
            data.unit_kind[below].tolist(),
            data.answer_text(data.unit_key[below]).tolist(),
            matching[below].tolist(),
            judgments[below].tolist(),
            strict=True,
        )
    ]

    # Compare every answer with one answer of its unit (any will do): none differs
    # exactly when all are the same.
    some_row = np.zeros(data.n_units, dtype=np.int64)
    some_row[data.row_unit] = np.arange(data.n_rows)
    unit_answer = data.row_answer[some_row]
    differing = np.bincount(
        data.row_unit, weights=data.row_answer != unit_answer[data.row_unit], minlength=data.n_units
    )
    wrong_units = np.flatnonzero((judgments >= 2) & (differing == 0) & (matching == 0))
    wrong = [
        LikelyWrongKey(item, revision, kind, source, key, answer, count, current, decision)
        for item, revision, kind, source, key, answer, count, current, decision in zip(
            data.unit_item[wrong_units].tolist(),
            data.unit_revision[wrong_units].tolist(),
            data.unit_kind[wrong_units].tolist(),
            data.unit_source[wrong_units].tolist(),
            data.answer_text(data.unit_key[wrong_units]).tolist(),
            data.answer_text(unit_answer[wrong_units]).tolist(),
            judgments[wrong_units].tolist(),
            data.unit_is_current[wrong_units].tolist(),
            data.unit_decision[wrong_units].tolist(),
            strict=True,
        )
    ]
    return KeyAgreement(overall, items, wrong)
