"""Every agreement figure for a set of judgments, and its JSON form.

``compute_agreement`` loads the judgments once and computes the headline
figures for all of them, for each kind and for each source, plus Cohen's kappa
per annotator pair, per-annotator figures and the item lists.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace

import numpy as np

from db.bulk_reads import collector_paused
from db.engine import Database
from db.item_scope import EVERY_ITEM, ItemScope
from db.json_types import JsonObject, JsonValue
from reviewer.agreement.annotators import AnnotatorStats, annotator_stats
from reviewer.agreement.blind_answers import (
    AnswerAlpha,
    KeyAgreement,
    answer_alphas,
    answer_percent_agreement,
    key_agreement,
)
from reviewer.agreement.bootstrap import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    BootstrapSettings,
    Figure,
)
from reviewer.agreement.data import JudgmentData, load_judgments
from reviewer.agreement.gold import GoldAccuracy, gold_accuracy
from reviewer.agreement.orders import OrderAgreement, order_agreement
from reviewer.agreement.verdicts import PairKappa, VerdictAgreement, verdict_agreement


@dataclass(frozen=True)
class AgreementFigures:
    """The headline figures for one set of judgments (everything, one kind or one source)."""

    judgments: int
    items_judged: int  # item revisions with at least one judgment
    items_compared: int  # item revisions with judgments from two or more annotators
    annotators: int
    verdict: VerdictAgreement
    keep_drop: VerdictAgreement
    answer_alpha: dict[str, AnswerAlpha]
    answer_percent: Figure  # raw pairwise agreement on blind answers
    orders: OrderAgreement
    key: KeyAgreement


@dataclass(frozen=True)
class AgreementReport:
    figures: AgreementFigures
    per_annotator: list[AnnotatorStats]
    by_kind: dict[str, AgreementFigures]
    by_source: dict[str, AgreementFigures]
    settings: BootstrapSettings
    filters: dict[str, list[str]] = field(default_factory=dict)
    gold: list[GoldAccuracy] = field(default_factory=list)  # calibration, per annotator

    @property
    def notes(self) -> list[str]:
        """Sentences explaining undefined or paradoxical headline figures."""
        from reviewer.agreement.explain import figure_notes

        return figure_notes(self.figures, self.per_annotator)

    @property
    def reader_notes(self) -> list[str]:
        """:attr:`notes` and, for people reading the tables, why a pair's Cohen's kappa is 0
        (the CLI's text and F2; ``--json`` keeps its ``notes`` as they were)."""
        from reviewer.agreement.explain import constant_pair_notes

        return self.notes + constant_pair_notes(self.figures, self.per_annotator)

    def gold_of(self, name: str) -> GoldAccuracy | None:
        return next((entry for entry in self.gold if entry.name == name), None)

    @property
    def cohen_verdict(self) -> list[PairKappa]:
        return self.figures.verdict.cohen

    @property
    def cohen_keep_drop(self) -> list[PairKappa]:
        return self.figures.keep_drop.cohen

    def to_json(self, *, item_answers: bool = True) -> JsonObject:
        """Every figure as JSON.  Without ``item_answers`` the list of likely wrong keys
        (which shows what annotators answered on each item) becomes a count, for people
        who are not leads: annotators must not see others' answers before their own."""
        data = figures_json(self.figures, detailed=True)
        if not item_answers:
            data["likely_wrong_keys"] = len(self.figures.key.likely_wrong_keys)
        data["per_annotator"] = [_annotator_json(stats) for stats in self.per_annotator]
        data["by_kind"] = {kind: figures_json(f) for kind, f in self.by_kind.items()}
        data["by_source"] = {source: figures_json(f) for source, f in self.by_source.items()}
        data["bootstrap"] = {
            "resamples": self.settings.resamples,
            "seed": self.settings.seed,
            "method": "percentile, items resampled with replacement",
        }
        data["filters"] = {name: list(values) for name, values in self.filters.items()}
        data["gold_accuracy"] = [entry.to_json() for entry in self.gold]
        data["notes"] = list(self.notes)
        return data


def compute_figures(
    data: JudgmentData,
    settings: BootstrapSettings,
    *,
    detailed: bool,
    alpha_cache: dict[bytes, AnswerAlpha] | None = None,
) -> AgreementFigures:
    """The headline figures for ``data``; ``detailed`` adds Cohen's kappa per annotator pair
    and the per-item lists (breakdowns leave them out)."""
    judgments = data.judgments_per_unit()
    verdict, keep_drop = verdict_agreement(data, settings, with_pairs=detailed)
    return AgreementFigures(
        judgments=data.n_rows,
        items_judged=data.n_units,
        items_compared=int((judgments >= 2).sum()),
        annotators=int(np.unique(data.row_annotator).size),
        verdict=verdict,
        keep_drop=keep_drop,
        answer_alpha=answer_alphas(data, settings, alpha_cache),
        answer_percent=answer_percent_agreement(data),
        orders=order_agreement(data, with_items=detailed),
        key=key_agreement(data, with_items=detailed),
    )


def agreement_from_data(
    data: JudgmentData,
    settings: BootstrapSettings | None = None,
    *,
    filters: dict[str, list[str]] | None = None,
) -> AgreementReport:
    """All figures for already loaded judgments."""
    with collector_paused():  # many small result objects, no cycles
        return _agreement(data, settings or BootstrapSettings(), filters or {})


def _agreement(
    data: JudgmentData, settings: BootstrapSettings, filters: dict[str, list[str]]
) -> AgreementReport:
    alpha_cache: dict[bytes, AnswerAlpha] = {}
    overall = compute_figures(data, settings, detailed=True, alpha_cache=alpha_cache)
    # A breakdown that selects the same items as another (a source with one kind) is reused.
    breakdowns: dict[bytes, AgreementFigures] = {data.fingerprint(): overall}

    def breakdown(mask: np.ndarray) -> AgreementFigures:
        subset = data.subset(mask)
        fingerprint = subset.fingerprint()
        if fingerprint not in breakdowns:
            breakdowns[fingerprint] = compute_figures(
                subset, settings, detailed=False, alpha_cache=alpha_cache
            )
        return breakdowns[fingerprint]

    def breakdown_by(labels: np.ndarray) -> dict[str, AgreementFigures]:
        """The figures for each value of ``labels`` (each unit's kind, or its source)."""
        return {str(label): breakdown(labels == label) for label in sorted(set(labels.tolist()))}

    return AgreementReport(
        figures=overall,
        per_annotator=annotator_stats(data),
        by_kind=breakdown_by(data.unit_kind),
        by_source=breakdown_by(data.unit_source),
        settings=settings,
        filters=filters,
    )


def compute_agreement(
    db: Database,
    scope: ItemScope = EVERY_ITEM,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> AgreementReport:
    """Load the active judgments (of the items in ``scope``) and compute every figure."""
    kinds, sources = scope.kinds, scope.sources
    data = load_judgments(db, kinds=kinds, sources=sources)
    filters = {
        name: list(values) for name, values in (("kind", kinds), ("source", sources)) if values
    }
    report = agreement_from_data(
        data, BootstrapSettings(resamples=resamples, seed=seed), filters=filters
    )
    return replace(report, gold=gold_accuracy(db, kinds=kinds, sources=sources))


def _pairs_json(pairs: list[PairKappa]) -> list[JsonValue]:
    return [{"annotators": [pair.first, pair.second], **pair.kappa.to_json()} for pair in pairs]


def figures_json(figures: AgreementFigures, *, detailed: bool = False) -> JsonObject:
    """The JSON form of one set of figures; ``detailed`` adds per-pair and per-item lists."""
    fleiss: JsonObject = {
        "verdict": {**figures.verdict.fleiss.to_json(), "raters": figures.verdict.fleiss_raters},
        "verdict_keep_drop": {
            **figures.keep_drop.fleiss.to_json(),
            "raters": figures.keep_drop.fleiss_raters,
        },
    }
    kendall_w = figures.orders.mean_w.to_json()
    key_agreement = figures.key.overall.to_json()
    data: JsonObject = {
        "judgments": figures.judgments,
        "items_judged": figures.items_judged,
        "items_compared": figures.items_compared,
        "annotators": figures.annotators,
        "krippendorff_alpha": {
            "verdict": figures.verdict.alpha.to_json(),
            "verdict_keep_drop": figures.keep_drop.alpha.to_json(),
            "answer": {
                kind: {**alpha.alpha.to_json(), "distance": alpha.distance}
                for kind, alpha in figures.answer_alpha.items()
            },
        },
        "fleiss_kappa": fleiss,
        "percent_agreement": {
            "verdict": figures.verdict.percent.to_json(),
            "verdict_keep_drop": figures.keep_drop.percent.to_json(),
            "answer": figures.answer_percent.to_json(),
        },
        "exact_order_agreement": figures.orders.exact.to_json(),
        "mean_kendall_tau": figures.orders.mean_tau.to_json(),
        "kendall_w": kendall_w,
        "key_agreement": key_agreement,
        "likely_wrong_keys": [asdict(wrong) for wrong in figures.key.likely_wrong_keys],
    }
    if detailed:
        data["cohen_kappa"] = {
            "verdict": _pairs_json(figures.verdict.cohen),
            "verdict_keep_drop": _pairs_json(figures.keep_drop.cohen),
        }
        kendall_w["items"] = [asdict(item) for item in figures.orders.items]
        key_agreement["items_below_full"] = [asdict(item) for item in figures.key.items_below_full]
    else:
        data["likely_wrong_keys"] = len(figures.key.likely_wrong_keys)
    return data


def _annotator_json(stats: AnnotatorStats) -> JsonObject:
    return {
        "name": stats.name,
        "judgments": stats.judgments,
        "verdict_agreement": stats.verdict_agreement.to_json(),
        "answer_agreement": stats.answer_agreement.to_json(),
        "key_agreement": stats.key_agreement.to_json(),
        "decision_agreement": stats.decision_agreement.to_json(),
        "median_seconds": stats.median_seconds,
        "verdicts": dict(stats.verdicts),
        "keep_rate": stats.keep_rate.to_json(),
    }
