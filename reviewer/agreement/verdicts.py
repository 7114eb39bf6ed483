"""Agreement on verdicts: over the seven verdict categories, and collapsed to keep/drop."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from reviewer.agreement.bootstrap import BootstrapSettings, Figure
from reviewer.agreement.data import KEEP, JudgmentData
from reviewer.agreement.nominal import (
    Codes,
    PairKappa,
    cohen_kappa_pairs,
    fleiss_kappa,
    krippendorff_alpha,
    percent_agreement,
)

KEEP_DROP_LABELS = ("keep", "drop")


@dataclass(frozen=True)
class VerdictAgreement:
    """Agreement on one coding of the verdicts (all categories, or keep/drop)."""

    alpha: Figure
    fleiss: Figure
    fleiss_raters: int | None  # judgments per item in the Fleiss subset
    percent: Figure
    cohen: list[PairKappa]


def verdict_codes(data: JudgmentData, *, keep_drop: bool) -> Codes:
    """Each judgment's verdict as a category code; keep/drop maps every non-keep verdict to drop."""
    if keep_drop:
        codes = (data.row_verdict != KEEP).astype(np.int64)
        labels: tuple[str, ...] = KEEP_DROP_LABELS
    else:
        codes, labels = data.row_verdict, data.verdict_names
    return Codes(data.row_unit, data.row_annotator, codes, labels, data.n_units)


def verdict_agreement(
    data: JudgmentData, settings: BootstrapSettings, *, keep_drop: bool, with_pairs: bool = True
) -> VerdictAgreement:
    """Alpha, Fleiss' kappa, raw agreement and (optionally) Cohen's kappa per annotator pair."""
    codes = verdict_codes(data, keep_drop=keep_drop)
    name = "verdict-keep-drop" if keep_drop else "verdict"
    what = "keep/drop verdict" if keep_drop else "verdict"
    fleiss, raters = fleiss_kappa(codes, settings, f"{name}/fleiss", what=what)
    pairs = (
        cohen_kappa_pairs(codes, data.annotator_names, settings, f"{name}/cohen", what=what)
        if with_pairs
        else []
    )
    return VerdictAgreement(
        alpha=krippendorff_alpha(codes, settings, f"{name}/alpha", what=what),
        fleiss=fleiss,
        fleiss_raters=raters,
        percent=percent_agreement(codes),
        cohen=pairs,
    )
