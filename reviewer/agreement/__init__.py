"""Inter-annotator agreement computed from stored judgments.

The entry point is :func:`compute_agreement`; the modules hold one part each:
``data`` (judgments loaded into arrays), ``coefficients`` and ``bootstrap``
(vectorised coefficients and seeded intervals), ``nominal`` (alpha, Fleiss',
Cohen's kappa and raw agreement on categories), ``verdicts``, ``blind_answers``,
``orders``, ``annotators`` and ``summary`` (everything together, JSON).
"""

from __future__ import annotations

from reviewer.agreement.bootstrap import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    BootstrapSettings,
    Figure,
)
from reviewer.agreement.data import JudgmentData, load_judgments
from reviewer.agreement.summary import (
    AgreementFigures,
    AgreementReport,
    agreement_from_data,
    compute_agreement,
)

__all__ = [
    "DEFAULT_RESAMPLES",
    "DEFAULT_SEED",
    "AgreementFigures",
    "AgreementReport",
    "BootstrapSettings",
    "Figure",
    "JudgmentData",
    "agreement_from_data",
    "compute_agreement",
    "load_judgments",
]
