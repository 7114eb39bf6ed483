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

from db.kappa_paradox import paradox_note
from reviewer.agreement.annotators import AnnotatorStats
from reviewer.agreement.bootstrap import Figure
from reviewer.agreement.summary import AgreementFigures
from reviewer.agreement.verdicts import VerdictAgreement

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


def _paradox(
    codings: Sequence[tuple[str, VerdictAgreement]], people: Sequence[AnnotatorStats]
) -> str | None:
    """One note for every coding the paradox shows in (:func:`db.kappa_paradox.paradox_note`),
    with the one-sided annotators that explain it."""
    numbers = [
        (
            coding,
            agreement.percent.value,
            (("alpha", agreement.alpha.value), ("Fleiss' kappa", agreement.fleiss.value)),
        )
        for coding, agreement in codings
    ]
    return paradox_note(numbers, _one_sided(people))


def constant_pair_notes(figures: AgreementFigures, people: Sequence[AnnotatorStats]) -> list[str]:
    """A note for each pair whose Cohen's kappa on keep/drop is exactly 0 because one of
    them kept every item, or none: kappa is then 0 whatever the other does (its interval
    too, as every resample is as one-sided), which reads as no agreement at all."""
    rates = {stats.name: stats.keep_rate.value for stats in people}
    full_kappa = {(pair.first, pair.second): pair.kappa for pair in figures.verdict.cohen}
    notes = []
    for pair in figures.keep_drop.cohen:
        if pair.kappa.value is None or abs(pair.kappa.value) > 1e-9:
            continue
        constant = [name for name in (pair.first, pair.second) if rates.get(name) in (0.0, 1.0)]
        if not constant:
            continue
        name = constant[0]
        kept = "kept every item" if rates[name] == 1.0 else "kept no item"
        full = full_kappa.get((pair.first, pair.second))
        both = full is not None and full.value is not None and abs(full.value) <= 1e-9
        codings = "verdicts and keep/drop" if both else "keep/drop"
        notes.append(
            f"Cohen's kappa of {pair.first} and {pair.second} is 0 on {codings}: {name} "
            f"{kept} they judged, and kappa is 0 whenever one rater never varies (raw "
            "agreement says how often they agree)."
        )
    return notes


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
