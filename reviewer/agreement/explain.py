"""Agreement figures that need words: undefined coefficients, and the kappa paradox.

A chance-corrected coefficient (Krippendorff's alpha, Fleiss' and Cohen's kappa)
compares the agreement seen with the agreement chance alone would give.  When one
verdict dominates — an annotator who keeps every item, or a set where almost every
item is sound — chance agreement is nearly as high as the agreement seen, so the
coefficient sits near zero (or below) while raw agreement is high.  That is the
"kappa paradox" (Feinstein & Cicchetti 1990): the annotators may well agree, but
the judgments cannot show that they do better than chance.  The notes below say
so, with the keep rates that explain it, instead of leaving a lead with 0.78 beside
0.00.
"""

from __future__ import annotations

from collections.abc import Sequence

from reviewer.agreement.annotators import AnnotatorStats
from reviewer.agreement.bootstrap import Figure
from reviewer.agreement.summary import AgreementFigures
from reviewer.agreement.verdicts import VerdictAgreement

PARADOX_RAW_AGREEMENT = 0.6  # raw agreement at least this ...
PARADOX_GAP = 0.35  # ... and a coefficient this far below it
ONE_SIDED = 0.95  # a keep rate at or above this (or at or below 1 - this) is one-sided


def _rate(value: float) -> str:
    return f"{value:.0%}"


def _one_sided(people: Sequence[AnnotatorStats]) -> list[str]:
    """``alice kept every item she judged (keep rate 100%)`` for each one-sided annotator."""
    lines = []
    for stats in people:
        rate = stats.keep_rate.value
        if rate is None or stats.judgments < 2:
            continue
        if rate >= ONE_SIDED:
            what = "kept every item" if rate == 1 else "kept almost every item"
        elif rate <= 1 - ONE_SIDED:
            what = "kept no item" if rate == 0 else "kept almost no item"
        else:
            continue
        lines.append(f"{stats.name} {what} they judged (keep rate {_rate(rate)})")
    return lines


def _below_raw(agreement: VerdictAgreement) -> str | None:
    """``0.78 but alpha is -0.07 and Fleiss' kappa is -0.08`` where raw agreement is high
    and a chance-corrected coefficient far below it; else None."""
    raw = agreement.percent.value
    if raw is None or raw < PARADOX_RAW_AGREEMENT:
        return None
    low = [
        (name, figure.value)
        for name, figure in (("alpha", agreement.alpha), ("Fleiss' kappa", agreement.fleiss))
        if figure.value is not None and raw - figure.value >= PARADOX_GAP
    ]
    if not low:
        return None
    shown = " and ".join(f"{name} is {value:+.2f}" for name, value in low)
    return f"{raw:.2f} but {shown}"


def _paradox(
    codings: Sequence[tuple[str, VerdictAgreement]], people: Sequence[AnnotatorStats]
) -> str | None:
    """One note for every coding the paradox shows in: the reason is the same."""
    gaps = [(coding, gap) for coding, agreement in codings if (gap := _below_raw(agreement))]
    if not gaps:
        return None
    (coding, gap), *more = gaps
    said = f"Raw agreement on {coding} is {gap}" + "".join(
        f"; on {other} it is {its_gap}" for other, its_gap in more
    )
    reasons = _one_sided(people)
    why = (
        "; ".join(reasons)
        if reasons
        else "one verdict dominates the judgments, so chance alone would agree almost as often"
    )
    return (
        f"{said}: {why}. Chance-corrected "
        "coefficients give no credit for agreeing on a verdict someone gives to nearly "
        "everything (the kappa paradox): read them with the raw agreement and each "
        "annotator's keep rate."
    )


def _undefined(label: str, figure: Figure) -> str | None:
    if figure.defined or not figure.reason:
        return None
    return f"{label} is undefined: {figure.reason}."


def figure_notes(figures: AgreementFigures, people: Sequence[AnnotatorStats]) -> list[str]:
    """Sentences explaining the headline figures that are undefined or paradoxical."""
    codings = (("verdicts", figures.verdict), ("keep/drop", figures.keep_drop))
    paradox = _paradox(codings, people)
    notes: list[str] = [paradox] if paradox else []
    for coding, agreement in codings:
        for label, figure in (
            (f"Krippendorff's alpha on {coding}", agreement.alpha),
            (f"Fleiss' kappa on {coding}", agreement.fleiss),
        ):
            note = _undefined(label, figure)
            if note and note not in notes:
                notes.append(note)
    for pair in figures.keep_drop.cohen:
        note = _undefined(
            f"Cohen's kappa of {pair.first} and {pair.second} on keep/drop", pair.kappa
        )
        if note:
            notes.append(note)
    return notes
