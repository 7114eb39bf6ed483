"""Typed results of the evaluator: what scoring, figures, run lists and comparisons return.

Both interfaces read these frozen dataclasses by attribute; nothing downstream looks
up string keys in nested dicts.  JSON is made once, at the edge: each result's
``to_json()`` gives the exact object the ``--json`` printers write (the README's
"JSON output" section lists the keys), and :meth:`Score.to_json` is also what a
prediction stores in its ``scores`` column.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime

from db.json_types import FieldsAsJson, JsonObject, attributes_json, fields_json
from db.vocabulary import EvalMode, EvalProtocol, FailureKind, ItemKind, RunStatus
from db.words import agreeing, counted, few_of
from evaluator.item_sets import ItemSet
from evaluator.run_params import RunParams, ShotCounts
from evaluator.text_metrics import BleuStatistics, ExplanationScore

__all__ = [
    "AnswerDifference",
    "ChangedItem",
    "CandidateRanking",
    "ExtractorFigures",
    "Figures",
    "FieldsAsJson",
    "Interval",
    "PositionFigures",
    "PredictionSummary",
    "PredictionView",
    "RunProgress",
    "StoredPrediction",
    "RunComparison",
    "RunDetail",
    "RunIdentity",
    "RunFigures",
    "RunOverview",
    "RunRecord",
    "Score",
    "SuspectKey",
]


Interval = tuple[float, float]
"""A 95% interval, ``(low, high)``; JSON writes it as a two-element list."""


def _number(value: object) -> float | None:
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


# ------------------------------------------------------------------ one prediction


@dataclass(frozen=True)
class CandidateRanking:
    """Score mode: how the model ranked the candidate answers of one item."""

    candidates: int  # how many were ranked
    log_likelihoods: Mapping[str, float]  # the best few, best first
    key_rank: int | None  # 1 for the best; None when the key was not a candidate


def _integers(value: object) -> tuple[int, ...]:
    return tuple(int(v) for v in value if isinstance(v, int)) if isinstance(value, list) else ()


def _explanation_from_json(data: object) -> ExplanationScore | None:
    if not isinstance(data, dict) or not isinstance(data.get("bleu"), dict):
        return None
    bleu = data["bleu"]
    return ExplanationScore(
        bleu=BleuStatistics(
            matches=_integers(bleu.get("matches")),
            totals=_integers(bleu.get("totals")),
            hypothesis_length=int(_number(bleu.get("hypothesis_length")) or 0),
            reference_length=int(_number(bleu.get("reference_length")) or 0),
        ),
        rouge_1=_number(data.get("rouge_1")) or 0.0,
        rouge_2=_number(data.get("rouge_2")) or 0.0,
        rouge_l=_number(data.get("rouge_l")) or 0.0,
    )


@dataclass(frozen=True)
class Score:
    """The scores of one parsed answer against its key.

    ``pairwise`` is set for kinds measured by pairwise accuracy (orders), ``set_f1``
    for kinds measured by set F1 (multi-answer items); ``ranking`` in score mode.
    ``extracted`` holds what each extractor of the run read (``evaluator.extractors``),
    ``explanation`` the explanation's BLEU statistics and ROUGE F-scores (CFLUE's
    protocol, items with an analysis), ``key_position`` the label the key's first
    letter was shown under (single-answer, true/false and ordering items), and
    ``option_order`` the original labels in the order they were shown, when options
    were permuted (``CADB``: the first option shown was C).  Answers are always stored
    in the item's own labels.  ``truncated``: the answer budget ran out before the
    model ended its answer.
    """

    correct: bool
    pairwise: float | None = None
    set_f1: float | None = None
    ranking: CandidateRanking | None = None
    extracted: Mapping[str, str | None] | None = None
    explanation: ExplanationScore | None = None
    key_position: str | None = None
    option_order: str | None = None
    truncated: bool = False

    def to_json(self) -> JsonObject:
        """The stored form: ``correct``, then the figures that apply, then the ranking,
        then what the extraction stage and the explanation metrics recorded."""
        data: JsonObject = {"correct": self.correct}
        if self.pairwise is not None:
            data["pairwise"] = self.pairwise
        if self.set_f1 is not None:
            data["set_f1"] = self.set_f1
        if self.ranking is not None:
            data["candidates"] = self.ranking.candidates
            data["log_likelihoods"] = dict(self.ranking.log_likelihoods)
            data["key_rank"] = self.ranking.key_rank
        if self.extracted is not None:
            data["extracted"] = dict(self.extracted)
        if self.explanation is not None:
            data["explanation"] = fields_json(self.explanation)
        if self.key_position is not None:
            data["key_position"] = self.key_position
        if self.option_order is not None:
            data["option_order"] = self.option_order
        if self.truncated:
            data["truncated"] = True
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, object] | None) -> Score | None:
        """A stored ``scores`` object read back; None for the empty one of a failed prediction."""
        if not data:
            return None
        ranking = None
        if "candidates" in data:
            likelihoods = data.get("log_likelihoods")
            key_rank = data.get("key_rank")
            ranking = CandidateRanking(
                candidates=int(_number(data["candidates"]) or 0),
                log_likelihoods={
                    str(answer): value
                    for answer, value in (
                        likelihoods.items() if isinstance(likelihoods, dict) else ()
                    )
                    if isinstance(value, int | float)
                },
                key_rank=key_rank if isinstance(key_rank, int) else None,
            )
        extracted = data.get("extracted")
        key_position, option_order = data.get("key_position"), data.get("option_order")
        return cls(
            correct=bool(data.get("correct")),
            pairwise=_number(data.get("pairwise")),
            set_f1=_number(data.get("set_f1")),
            ranking=ranking,
            extracted={
                str(name): answer if isinstance(answer, str) else None
                for name, answer in extracted.items()
            }
            if isinstance(extracted, dict)
            else None,
            explanation=_explanation_from_json(data.get("explanation")),
            key_position=key_position if isinstance(key_position, str) else None,
            option_order=option_order if isinstance(option_order, str) else None,
            truncated=data.get("truncated") is True,
        )


@dataclass(frozen=True)
class StoredPrediction:
    """One prediction as the run loop makes it and the ``prediction`` table stores it: what
    the model wrote, the answer read from it and how it scored.  The loop hands the same
    value to storage and (as ``RunProgress.last``) to whoever follows the run."""

    item_id: str
    raw_output: str
    parsed_answer: str | None
    correct: bool | None  # None for an infrastructure failure
    scores: Score | None  # None for an infrastructure failure (stored as {})
    failure_kind: FailureKind | None
    error: str | None
    prompt: str = ""  # the exact prompt text the backend was given
    latency_s: float = 0.0
    # Not stored: the failure is a server's refusal that a resume would meet again (an
    # HTTP 4xx: a wrong model or base URL), so the run's note says to start a new run.
    retry_cannot_fix: bool = False

    @property
    def is_infrastructure_failure(self) -> bool:
        return self.failure_kind is FailureKind.INFRASTRUCTURE

    @classmethod
    def failed(
        cls,
        item_id: str,
        error: str,
        *,
        prompt: str = "",
        latency_s: float = 0.0,
        retry_cannot_fix: bool = False,
    ) -> StoredPrediction:
        """An infrastructure failure (timeout, exhausted retries): retried on resume."""
        return cls(
            item_id,
            "",
            None,
            None,
            None,
            FailureKind.INFRASTRUCTURE,
            error[:2000],
            prompt,
            latency_s,
            retry_cannot_fix,
        )


@dataclass(frozen=True)
class PredictionView:
    """One stored prediction with the item's key, as plain data for widgets and the CLI."""

    run_id: int
    item_id: str
    kind: ItemKind
    source: str
    revision: int
    key: str
    parsed_answer: str | None
    correct: bool | None
    failure_kind: FailureKind | None
    raw_output: str
    prompt: str
    prompt_hash: str
    scores: Score | None  # None for an infrastructure failure (nothing was scored)
    latency_s: float
    error: str | None
    created_at: datetime

    def to_json(self, *, with_prompt: bool = True) -> JsonObject:
        data: JsonObject = {**fields_json(self)}  # scores by their own to_json()
        if self.scores is None:
            data["scores"] = {}  # nothing scored: an empty object, as always
        if not with_prompt:
            del data["prompt"]
        return data


# ----------------------------------------------------------------- sets of them


@dataclass(frozen=True)
class ExtractorFigures(FieldsAsJson):
    """What one extractor recovered from a set of outputs, and how many it read right."""

    parsed: int
    unparsed: int
    correct: int
    accuracy: float | None  # over the predictions it read (parsed or not)


@dataclass(frozen=True)
class PositionFigures(FieldsAsJson):
    """Accuracy by the label the key was shown under (its first letter for orders)."""

    n: int
    correct: int
    accuracy: float | None


@dataclass(frozen=True)
class Figures(FieldsAsJson):
    """The figures of a set of predictions (see :mod:`evaluator.metrics`).

    A figure with nothing to average over is None (no ordering items: no pairwise
    accuracy), never a made-up 0.
    """

    n: int  # every prediction
    scored: int  # less infrastructure failures: the denominator of every rate
    correct: int
    unparsed: int
    infrastructure_failures: int
    accuracy: float | None
    accuracy_ci: Interval | None  # Wilson 95%
    unparsed_rate: float | None
    pairwise_accuracy: float | None
    weighted_f1: float | None
    set_f1: float | None
    chance: float | None  # expected accuracy of a random choice, exact per item
    explained: int  # predictions whose explanation was scored (CFLUE's protocol)
    bleu_1: float | None
    bleu_4: float | None
    rouge_1: float | None
    rouge_2: float | None
    rouge_l: float | None
    extractors: Mapping[str, ExtractorFigures]  # by extractor name; {} when not recorded
    key_positions: Mapping[str, PositionFigures]  # by the label the key was shown under
    position_bias: float | None  # highest minus lowest accuracy over key positions
    truncated: int  # answers cut off by the answer budget (counted, scored as they stand)


@dataclass(frozen=True)
class PredictionSummary(Figures):
    """The figures overall, and the same figures for each kind and each source (sorted)."""

    by_kind: Mapping[str, Figures]
    by_source: Mapping[str, Figures]  # JSON: after the overall figures (Figures.to_json)


# ------------------------------------------------------------------------ runs


@dataclass(frozen=True)
class RunIdentity(FieldsAsJson):
    """Which run: its model, how it asks it, and where it stands."""

    id: int
    model: str
    backend: str  # the provider: "transformers", "openai", "scripted"
    mode: EvalMode
    shots: int
    status: RunStatus
    stale: bool  # marked running, but its process on this host is gone

    @property
    def is_running(self) -> bool:
        return self.status is RunStatus.RUNNING and not self.stale


@dataclass(frozen=True)
class RunRecord(RunIdentity):
    """A run's own record: what it evaluates, how, and where it stands."""

    host: str
    error: str | None
    filters: JsonObject  # status, kind, source, limit: as given when it was created
    params: RunParams  # backend settings, seed, templates, shots used, protocol ...
    total: int
    started_at: datetime
    finished_at: datetime | None
    item_set: ItemSet = ItemSet(None)  # the release, or the hash of its ad hoc item set

    @property
    def shot_notes(self) -> tuple[str, ...]:
        """Where the shots fell short (too few, or not yet approved)."""
        return self.params.shot_notes

    def to_json(self) -> JsonObject:
        data = fields_json(self)
        # The per-item revision map is for resuming; a count (``total``) is enough to show.
        data["params"] = self.params.to_json(with_revisions=False)
        return data


@dataclass(frozen=True)
class RunProgress:
    """How far a run is: the one progress figure, whether the run loop counts it as it
    stores each prediction (``execute_run``'s ``on_progress``) or it is read back from
    the database (``run_figures``), so a run looks the same followed from anywhere.

    ``items_per_second`` is over the latest session.  ``elapsed_s``: from the run's
    start to its latest prediction when read back, into this session when counted by
    the loop.  ``infrastructure_failures``: every stored one when read back, this
    session's when counted by the loop (they are retried on resume).
    """

    done: int  # items with an answer (right, wrong or unparsed)
    total: int
    items_per_second: float | None = None
    eta_s: float | None = None  # only while it runs
    elapsed_s: float | None = None
    correct: int = 0
    unparsed: int = 0
    infrastructure_failures: int = 0
    finished_this_session: int = 0
    last: StoredPrediction | None = None  # the prediction stored last (counted by the loop)

    @property
    def remaining(self) -> int:
        return self.total - self.done

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.done if self.done else None

    def after(self, prediction: StoredPrediction, elapsed_s: float) -> RunProgress:
        """These figures once ``prediction`` is stored, ``elapsed_s`` into this session."""
        if prediction.is_infrastructure_failure:
            counted = replace(self, infrastructure_failures=self.infrastructure_failures + 1)
        else:
            counted = replace(
                self,
                done=self.done + 1,
                correct=self.correct + int(bool(prediction.correct)),
                unparsed=self.unparsed + int(prediction.failure_kind is FailureKind.UNPARSED),
            )
        finished = self.finished_this_session + 1
        rate = finished / elapsed_s if elapsed_s > 0 else None
        return replace(
            counted,
            elapsed_s=elapsed_s,
            items_per_second=rate,
            eta_s=counted.remaining / rate if rate else None,
            finished_this_session=finished,
            last=prediction,
        )

    def to_json(self) -> JsonObject:
        """What ``--json`` shows of a run's progress (the counts are in its figures)."""
        names = ("done", "total", "remaining", "items_per_second", "eta_s", "elapsed_s")
        return attributes_json(self, *names)


@dataclass(frozen=True)
class RunFigures:
    """One run's figures: its record, its progress, and the metrics of its predictions."""

    run: RunRecord
    progress: RunProgress
    summary: PredictionSummary
    accuracy_curve: tuple[float, ...] = ()
    """Accuracy over the scored predictions so far, after each one, in the order stored
    (what a live view plots; not part of the JSON)."""

    @property
    def is_running(self) -> bool:
        return self.run.is_running

    def to_json(self) -> JsonObject:
        return {
            "run": self.run.to_json(),
            "progress": self.progress.to_json(),
            **self.summary.to_json(),
        }


@dataclass(frozen=True)
class RunDetail:
    """A run's figures and every prediction (``vetbench runs show``; the exact prompts
    only when asked for, ``--prompt``: they are most of the bytes)."""

    figures: RunFigures
    predictions: tuple[PredictionView, ...]
    with_prompts: bool = False

    def to_json(self) -> JsonObject:
        return {
            **self.figures.to_json(),
            "predictions": [
                view.to_json(with_prompt=self.with_prompts) for view in self.predictions
            ],
        }


@dataclass(frozen=True)
class RunOverview(RunIdentity):
    """One line of the run list: progress and accuracy (Wilson 95% interval)."""

    done: int
    total: int
    infrastructure_failures: int
    correct: int
    accuracy: float | None
    accuracy_ci: Interval | None
    started_at: datetime
    finished_at: datetime | None
    shot_counts: ShotCounts | None = None  # None: as asked (the run recorded no shots)
    protocol: EvalProtocol = EvalProtocol.CUSTOM
    error: str | None = None  # the run's note: why it failed or stopped
    release: str | None = None  # the release its items were drawn from, if any

    @property
    def model_label(self) -> str:
        """The model, and the protocol when it is a paper's: ``demo (econlogicqa)``, so
        that two runs of one model asked in other ways do not look alike in a list."""
        if self.protocol is EvalProtocol.CUSTOM:
            return self.model
        return f"{self.model} ({self.protocol.value})"

    @property
    def shots_got(self) -> ShotCounts:
        """The shots its kinds asked for and got (its label: ``ordering 0-shot (5 asked)``)."""
        return self.shot_counts or ShotCounts(self.shots, ())

    def to_json(self) -> JsonObject:
        """Its fields as ``runs --json`` has always listed them, and the release (the shots
        got and the protocol are in ``runs show``'s params, the note in its ``error``)."""
        data = fields_json(self)
        del data["shot_counts"], data["protocol"], data["error"]
        return data


@dataclass(frozen=True)
class AnswerDifference(FieldsAsJson):
    """An item two runs answered differently; ``key`` is both runs' (a paired item's key
    never differs: one that does is a :class:`ChangedItem`)."""

    item_id: str
    key: str
    a: str | None
    b: str | None


@dataclass(frozen=True)
class ChangedItem(FieldsAsJson):
    """A shared item the two runs evaluated at revisions whose key or text differ: not the
    same question, so it stays out of the paired figures and is shown with each run's own."""

    item_id: str
    changed: tuple[str, ...]  # what differs: "kind", "question", "options", "key"
    revision_a: int
    key_a: str
    a: str | None  # A's parsed answer
    correct_a: bool | None
    revision_b: int
    key_b: str
    b: str | None
    correct_b: bool | None

    def line(self) -> str:
        """``cflue:2 (key): A at revision 1, key A, answered A (right); B at ...``."""

        def side(name: str, revision: int, key: str, answer: str | None, right: object) -> str:
            verdict = "right" if right else "wrong"
            return f"{name} at revision {revision}, key {key}, answered {answer or '—'} ({verdict})"

        return (
            f"{self.item_id} ({', '.join(self.changed)}): "
            f"{side('A', self.revision_a, self.key_a, self.a, self.correct_a)}; "
            f"{side('B', self.revision_b, self.key_b, self.b, self.correct_b)}"
        )


@dataclass(frozen=True)
class RunComparison:
    """Two runs item by item, over the items both answered (item ids in run A's order).

    The paired figures (the four outcome lists, different answers, agreement, McNemar) read
    the shared items both runs asked as the same question; ``changed_items``, evaluated at
    revisions whose key or text differ, are left out of them and listed apart."""

    run_a: int
    run_b: int
    shared_items: int
    only_in_a: int  # answered by A only
    only_in_b: int
    both_right: tuple[str, ...]
    both_wrong: tuple[str, ...]
    only_a: tuple[str, ...]  # right in A only
    only_b: tuple[str, ...]
    different_answers: tuple[AnswerDifference, ...]
    agreement: float | None  # share of shared items both answered alike (not both unparsed)
    mcnemar_p: float | None  # exact McNemar test; None without discordant items
    item_set_a: ItemSet = ItemSet(None)
    item_set_b: ItemSet = ItemSet(None)
    other_revisions: tuple[str, ...] = ()  # shared items each run saw at another revision
    changed_items: tuple[ChangedItem, ...] = ()  # of those, the ones not the same question
    filter_differences: tuple[
        str, ...
    ] = ()  # how the runs' filters chose (``B limited to 5 items``)
    other_prompts: tuple[str, ...] = ()  # paired items whose prompts differ (by stored hash)

    @property
    def paired_items(self) -> int:
        """The shared items compared as the same question (the paired figures' count)."""
        return self.shared_items - len(self.changed_items)

    @property
    def same_item_set(self) -> bool:
        """Both runs evaluated one recorded item set, the same items at the same revisions,
        whether drawn from a release or not (never true for an unrecorded one)."""
        return self.item_set_a.hash is not None and self.item_set_a.hash == self.item_set_b.hash

    def item_set_notes(self) -> list[str]:
        """What the item sets say about comparing the two runs: the one they share, or how
        they differ (other item sets, other revisions of shared items)."""
        a, b = self.item_set_a, self.item_set_b
        if self.same_item_set and a.release == b.release:
            return [f"same item set: {a.label}"]
        if self.same_item_set:  # one drew them from a release, the other as they were
            return [f"same item set ({(a.hash or '')[:12]}): A {a.drawn_from}, B {b.drawn_from}"]
        same_question = " as the same question" if self.changed_items else ""
        compared = (
            f"compared on the {counted(self.paired_items, 'item')} both answered{same_question}"
            if self.paired_items
            else "no item both answered was asked as the same question"
        )
        chosen = "".join(f"; {difference}" for difference in self.filter_differences)
        notes = [
            f"different item sets: A on {self.item_set_a.label}, B on "
            f"{self.item_set_b.label}{chosen}; {compared}"
        ]
        if self.other_revisions:
            more = ", ..." if len(self.other_revisions) > 5 else ""
            left_out = (
                f" ({len(self.changed_items)} with another key or text, left out: listed below)"
                if self.changed_items
                else ""
            )
            notes.append(
                f"{len(self.other_revisions)} of them at different revisions: "
                f"{', '.join(self.other_revisions[:5])}{more}{left_out}"
            )
        return notes

    def prompt_note(self) -> str | None:
        """Whether the paired items were asked with the same prompts (their stored hashes):
        other shots, templates or layout make another question of the same item."""
        if not self.paired_items:
            return None
        paired = counted(self.paired_items, "paired item")
        if not self.other_prompts:
            return f"same prompts for the {paired}"
        return (
            f"different prompts for {len(self.other_prompts)} of the {paired} (other shots, "
            f"templates or layout): {few_of(list(self.other_prompts))}"
        )

    def nothing_paired(self) -> str | None:
        """Why there are no paired figures, when every shared item was evaluated at
        revisions whose key or text differ (a table of zeros would read as a comparison);
        None when some item pairs."""
        if self.paired_items:
            return None
        return (
            "nothing to pair: no item was evaluated at the same revision, or at revisions "
            f"with the same key and text, in both runs (the {counted(self.shared_items, 'shared item')} "
            f"{agreeing(self.shared_items, 'is', 'are')} listed below with each run's own)"
        )

    @property
    def counts(self) -> dict[str, int]:
        return {
            "both_right": len(self.both_right),
            "both_wrong": len(self.both_wrong),
            "only_a": len(self.only_a),
            "only_b": len(self.only_b),
        }

    def to_json(self) -> JsonObject:
        counts: JsonObject = dict(self.counts)
        return {
            "run_a": self.run_a,
            "run_b": self.run_b,
            "shared_items": self.shared_items,
            "only_in_a": self.only_in_a,
            "only_in_b": self.only_in_b,
            "counts": counts,
            "both_right": list(self.both_right),
            "both_wrong": list(self.both_wrong),
            "only_a": list(self.only_a),
            "only_b": list(self.only_b),
            "different_answers": [row.to_json() for row in self.different_answers],
            "agreement": self.agreement,
            "mcnemar_p": self.mcnemar_p,
            "same_item_set": self.same_item_set,
            "item_sets": {"a": self.item_set_a.to_json(), "b": self.item_set_b.to_json()},
            "other_revisions": list(self.other_revisions),
            "paired_items": self.paired_items,
            "changed_items": [row.to_json() for row in self.changed_items],
        }


@dataclass(frozen=True)
class SuspectKey(FieldsAsJson):
    """An item every model that answered it gets wrong with one and the same answer."""

    item_id: str
    kind: ItemKind
    key: str
    answer: str
    models: tuple[str, ...]
    runs: tuple[int, ...]
    other_models: int = 0
    """How many other evaluated models did not answer it (never asked, or it failed)."""

    def to_json(self) -> JsonObject:
        data = fields_json(self)
        del data["other_models"]  # the pinned shape: the models that answered
        return data

    @property
    def agreement(self) -> str:
        """Who answered it, and how: ``both models that answered it (fake, fake2) answer
        B; 4 other models did not answer it``."""
        n = len(self.models)
        who = "the one model" if n == 1 else "both models" if n == 2 else f"all {n} models"
        line = f"{who} that answered it ({', '.join(self.models)}) {agreeing(n, 'answers', 'answer')} {self.answer}"
        if self.other_models:
            line += f"; {counted(self.other_models, 'other model')} did not answer it"
        return line
