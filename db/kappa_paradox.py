"""The kappa paradox in words, over plain numbers: one sentence for the agreement report
(``reviewer/agreement/explain.py``, from live figures and each annotator's keep rate) and
a release's stored figures (``db/releases.py``, which keep the coefficients and the raw
agreement but no keep rates).

A chance-corrected coefficient (Krippendorff's alpha, Fleiss' and Cohen's kappa) compares
the agreement seen with the agreement chance alone would give.  When one verdict
dominates, chance agreement is nearly as high as the agreement seen, so the coefficient
sits near zero (or below) while raw agreement is high (Feinstein & Cicchetti 1990).
Standard library only: ``db`` sits below the reviewer.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["DECIMALS", "PARADOX_GAP", "PARADOX_RAW_AGREEMENT", "paradox_note"]

DECIMALS = 3  # an agreement figure's decimals: in the tables, `release show` and this note

PARADOX_RAW_AGREEMENT = 0.6  # raw agreement at least this ...
PARADOX_GAP = 0.35  # ... and a coefficient this far below it

DOMINANT = "one verdict dominates the judgments, so chance alone would agree almost as often"

Coding = tuple[str, float | None, Sequence[tuple[str, float | None]]]
"""A coding's name (``verdicts``), its raw agreement, and its coefficients by name."""


def _below_raw(raw: float | None, coefficients: Sequence[tuple[str, float | None]]) -> str | None:
    """``0.776 but alpha is -0.067 and Fleiss' kappa is -0.078`` where raw agreement is
    high and a chance-corrected coefficient far below it; else None.  The figures have the
    decimals the tables beside the note give them: one figure, said twice, reads the same."""
    if raw is None or raw < PARADOX_RAW_AGREEMENT:
        return None
    low = [
        (name, value)
        for name, value in coefficients
        if value is not None and raw - value >= PARADOX_GAP
    ]
    if not low:
        return None
    shown = " and ".join(f"{name} is {value:.{DECIMALS}f}" for name, value in low)
    return f"{raw:.{DECIMALS}f} but {shown}"


def paradox_note(codings: Sequence[Coding], reasons: Sequence[str] = ()) -> str | None:
    """One note for every coding the paradox shows in (the reason is the same), with
    ``reasons`` (``alice kept every item they judged (keep rate 100%)``) where known;
    None where no coefficient falls far below a high raw agreement."""
    gaps = [
        (name, gap) for name, raw, coefficients in codings if (gap := _below_raw(raw, coefficients))
    ]
    if not gaps:
        return None
    (coding, gap), *more = gaps
    said = f"Raw agreement on {coding} is {gap}" + "".join(
        f"; on {other} it is {its_gap}" for other, its_gap in more
    )
    why = "; ".join(reasons) if reasons else DOMINANT
    return (
        f"{said}: {why}. Chance-corrected "
        "coefficients give no credit for agreeing on a verdict someone gives to nearly "
        "everything (the kappa paradox): read them with the raw agreement and each "
        "annotator's keep rate."
    )
