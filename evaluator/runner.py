"""The run loop: freeze an evaluated set, run a backend over it, store each prediction at once.

``create_run`` records what is evaluated (the item ids and their revisions), how
(mode, shots, templates, seed, backend settings) and with which shots; nothing is
evaluated yet.  ``execute_run`` evaluates the items that have no answer yet and
writes every prediction in its own transaction the moment it is finished, so:

- readers of the database (the TUI, ``vetbench runs show``, another machine)
  follow a run live;
- a run stopped by Ctrl-C, a crash or ``should_stop`` keeps what it finished, and
  calling ``execute_run`` again resumes it without recomputing anything;
- predictions that failed for infrastructure reasons (timeouts, exhausted
  retries, out of memory) are retried on resume.

Prompts are rebuilt from the recorded item revisions, shots and templates; a run
refuses to resume if its templates or shot file changed since it was created.

A run follows a protocol (``evaluator.protocols``: vetbench's own, CFLUE's or
EconLogicQA's), recorded in its params with everything it fixes: the layout, the
extractors (the first decides, the others are reported), the answer budget, the
shots per kind, whether options are permuted, and which repeat of a series it is.
With ``permute_options`` every item's options are shown in a seeded order with the
key remapped (``evaluator.generation.option_shuffle``); answers are read in the
shown labels and stored in the item's own, so every later figure and comparison
reads them like any other run's.
"""

from __future__ import annotations

import getpass
import hashlib
import logging
import os
import socket
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from sqlmodel import select

from db import json_types
from db.answers import LETTERS
from db.audit import record_event
from db.engine import Database
from db.errors import VetbenchError
from db.items import ItemSnapshot, get_item, iter_items
from db.models import EvalRun, Prediction, utcnow
from db.vocabulary import EvalMode, EvalProtocol, FailureKind, ItemKind, RunStatus
from evaluator.backends.base import (
    Backend,
    BackendInfo,
    GenerationRequest,
    GenerationResult,
    Prompt,
    ScoringRequest,
    ScoringResult,
)
from evaluator.extractors import LENIENT, answer_extractor, read_answers
from evaluator.generation.option_shuffle import (
    ShuffledOptions,
    remap_letter_references,
    shuffle_options,
)
from evaluator.kinds import kind_spec
from evaluator.metrics import key_position, score_answer
from evaluator.prompts import (
    DEFAULT_LAYOUT,
    DEFAULT_SHOT_SEED,
    PromptTemplates,
    answer_text,
    build_prompt,
    load_shot_file,
    load_templates,
    prefix_shots,
    prompt_hash,
    shot_pool,
    stop_sequences,
    template_language,
)
from evaluator.protocols import ProtocolSpec, StopRule, protocol_spec
from evaluator.results import CandidateRanking, JsonObject, JsonValue, Score
from evaluator.runs import RunNotFound, load_run
from evaluator.text_metrics import score_explanation

__all__ = [
    "MODES",
    "PredictionFields",
    "PredictionOutcome",
    "Repeat",
    "RunProgress",
    "RunSelection",
    "RunSetupError",
    "create_run",
    "execute_run",
    "pending_item_ids",
    "select_run_items",
]

log = logging.getLogger(__name__)

MODES = ("generate", "score")
TOP_CANDIDATES_STORED = 10  # score mode keeps the best candidates' log-likelihoods


class RunSetupError(VetbenchError, ValueError):
    """A run that cannot be created or resumed as asked; the message says why."""


@dataclass(frozen=True)
class PredictionFields:
    """What one answer from a backend becomes: the fields a stored prediction gets."""

    raw_output: str
    parsed_answer: str | None
    correct: bool | None  # None for an infrastructure failure
    scores: Score | None  # None for an infrastructure failure (stored as {})
    failure_kind: FailureKind | None
    error: str | None

    @property
    def is_infrastructure_failure(self) -> bool:
        return self.failure_kind is FailureKind.INFRASTRUCTURE

    @classmethod
    def failed(cls, error: str) -> PredictionFields:
        """An infrastructure failure (timeout, exhausted retries): retried on resume."""
        return cls("", None, None, None, FailureKind.INFRASTRUCTURE, error[:2000])


@dataclass(frozen=True)
class PredictionOutcome:
    """One stored prediction, as progress reports show it."""

    item_id: str
    key: str
    parsed_answer: str | None
    correct: bool | None
    failure_kind: FailureKind | None
    raw_output: str
    latency_s: float


@dataclass(frozen=True)
class RunProgress:
    """Where a run stands after each stored prediction (counts cover the whole run)."""

    run_id: int
    done: int  # items with an answer (right, wrong or unparsed)
    total: int
    correct: int
    unparsed: int
    infrastructure_failures: int = 0  # failed this session; retried on resume
    elapsed_s: float = 0.0  # this session
    finished_this_session: int = 0
    last: PredictionOutcome | None = None

    def after(self, outcome: PredictionOutcome, elapsed_s: float) -> RunProgress:
        """These figures once ``outcome`` is stored, ``elapsed_s`` into this session."""
        if outcome.failure_kind is FailureKind.INFRASTRUCTURE:
            counted = replace(self, infrastructure_failures=self.infrastructure_failures + 1)
        else:
            counted = replace(
                self,
                done=self.done + 1,
                correct=self.correct + int(bool(outcome.correct)),
                unparsed=self.unparsed + int(outcome.failure_kind is FailureKind.UNPARSED),
            )
        finished = self.finished_this_session + 1
        return replace(counted, elapsed_s=elapsed_s, finished_this_session=finished, last=outcome)

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.done if self.done else None

    @property
    def items_per_second(self) -> float | None:
        if self.elapsed_s <= 0 or not self.finished_this_session:
            return None
        return self.finished_this_session / self.elapsed_s


# ------------------------------------------------------------------ creation


@dataclass(frozen=True)
class Repeat:
    """Which of a series of runs this is (``vetbench eval --repeats N``, or a protocol's
    shot settings): runs of one series share ``series`` and differ in shots or seed."""

    series: str
    index: int  # 0-based
    count: int  # repeats per setting

    def to_json(self) -> JsonObject:
        return {"series": self.series, "index": self.index, "of": self.count}


@dataclass(frozen=True)
class RunSelection:
    """The items a run would evaluate, and those left out of score mode (id -> why)."""

    items: list[ItemSnapshot]
    excluded: dict[str, str]


def _shot_file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _group_name(kind: ItemKind, language: str) -> str:
    """Items share a prompt prefix per kind and template language; a run records the
    prefix's shots under this name: ``ordering/en``."""
    return f"{kind.value}/{language}"


def _score_candidates(item: ItemSnapshot) -> list[str] | None:
    # One rule for score mode here and in the lm-eval export's multiple_choice tasks.
    return kind_spec(item.kind).score_candidates(item.labels)


def _selected_kinds(filters: Mapping[str, Any], protocol: ProtocolSpec) -> list[str] | None:
    """The kinds asked for, within those the protocol asks (None: every kind)."""
    asked = [str(kind) for kind in filters.get("kind") or []]
    if protocol.kinds == frozenset(ItemKind):
        return asked or None
    allowed = [kind.value for kind in ItemKind if kind in protocol.kinds]
    return [kind for kind in asked if kind in allowed] if asked else allowed


def _select_items(
    db: Database, filters: Mapping[str, Any], protocol: ProtocolSpec
) -> list[ItemSnapshot]:
    limit = filters.get("limit")
    kinds = _selected_kinds(filters, protocol)
    if kinds == []:
        return []
    selected: list[ItemSnapshot] = []
    with db.session() as session:
        for item in iter_items(
            session,
            statuses=list(filters.get("status") or []) or None,
            kinds=kinds,
            sources=list(filters.get("source") or []) or None,
        ):
            selected.append(item)
            if limit is not None and len(selected) >= limit:
                break
    return selected


def _describe(filters: Mapping[str, Any], protocol: ProtocolSpec) -> str:
    parts = [
        f"{name} {', '.join(map(str, values))}"
        for name in ("status", "kind", "source")
        if (values := filters.get(name))
    ]
    if protocol.name is not EvalProtocol.CUSTOM:
        asked = ", ".join(kind.value for kind in ItemKind if kind in protocol.kinds)
        parts.append(f"the {protocol.name.value} protocol asks {asked} items")
    return "; ".join(parts) or "no filter"


def _clean_filters(filters: Mapping[str, Any] | None) -> JsonObject:
    return {name: value for name, value in dict(filters or {}).items() if value}


def _column_json(data: JsonObject) -> json_types.JsonObject:
    """``data`` as a JSON column holds it (and hands it back): sequences become lists."""
    return {name: _column_value(value) for name, value in data.items()}


def _column_value(value: JsonValue) -> json_types.JsonValue:
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, Mapping):
        return _column_json(dict(value))
    return [_column_value(element) for element in value]


def select_run_items(
    db: Database,
    filters: Mapping[str, Any] | None,
    *,
    protocol: EvalProtocol | str = EvalProtocol.CUSTOM,
    mode: str = EvalMode.GENERATE,
) -> RunSelection:
    """The items a run with these settings would evaluate; a ``RunSetupError`` says why
    there are none.  Cheap: the CLI asks it before loading a model."""
    spec = protocol_spec(protocol)
    cleaned = _clean_filters(filters)
    items = _select_items(db, cleaned, spec)
    excluded: dict[str, str] = {}
    if mode == EvalMode.SCORE:
        for item in items:
            if _score_candidates(item) is None:
                excluded[item.id] = f"too many candidate answers for score mode ({item.kind.value})"
        items = [item for item in items if item.id not in excluded]
    if not items:
        raise RunSetupError(f"no items to evaluate ({_describe(cleaned, spec)})")
    return RunSelection(items, excluded)


def _shots_for(
    items: Sequence[ItemSnapshot], shots: int, shots_by_kind: Mapping[str, int] | None
) -> dict[ItemKind, int]:
    by_kind = {ItemKind(kind): count for kind, count in (shots_by_kind or {}).items()}
    if any(count < 0 for count in by_kind.values()) or shots < 0:
        raise RunSetupError("the number of shots cannot be negative")
    return {item.kind: by_kind.get(item.kind, shots) for item in items}


def create_run(
    db: Database,
    backend_info: BackendInfo,
    *,
    mode: str = "generate",
    shots: int = 0,
    filters: Mapping[str, Any] | None = None,
    shot_file: Path | None = None,
    templates_dir: Path | None = None,
    seed: int = DEFAULT_SHOT_SEED,
    actor: str | None = None,
    protocol: EvalProtocol | str = EvalProtocol.CUSTOM,
    layout: str | None = None,
    extractor: str | None = None,
    shots_by_kind: Mapping[str, int] | None = None,
    max_new_tokens: int | None = None,
    permute_options: bool = False,
    repeat: Repeat | None = None,
) -> int:
    """Freeze the evaluated set and the run's settings; returns the new run's id.

    ``filters``: ``status``, ``kind``, ``source`` (lists of values) and ``limit``.
    ``protocol`` fixes the kinds asked, the layout, the stop rule and the extractors
    (``evaluator.protocols``); ``layout`` and ``extractor`` replace its choices,
    ``shots_by_kind`` gives some kinds other shots than ``shots``, ``max_new_tokens``
    another answer budget.  ``permute_options`` shows every item's options in a
    seeded order (from ``seed``); ``repeat`` says which run of a series this is.
    """
    if mode not in MODES:
        raise RunSetupError(f"unknown mode '{mode}' (choose {', '.join(MODES)})")
    if shots < 0:
        raise RunSetupError(f"the number of shots cannot be negative ({shots})")
    try:
        spec = protocol_spec(protocol)
    except ValueError:
        raise RunSetupError(f"unknown protocol '{protocol}'") from None
    if mode == EvalMode.SCORE and spec.name is not EvalProtocol.CUSTOM:
        raise RunSetupError(
            f"the {spec.name.value} protocol generates answers; score mode is for the custom one"
        )
    if max_new_tokens is not None and max_new_tokens < 1:
        raise RunSetupError(f"the answer budget must be at least 1 token ({max_new_tokens})")
    try:
        extractors = spec.reported_extractors(extractor)
        answer_extractor(extractors[0])
    except ValueError as error:
        raise RunSetupError(str(error)) from None
    filters = _clean_filters(filters)
    templates = load_templates(templates_dir, layout=layout or spec.layout)
    selection = select_run_items(db, filters, protocol=spec.name, mode=mode)
    items, excluded = selection.items, selection.excluded
    shots_for = _shots_for(items, shots, shots_by_kind)

    shot_path = Path(shot_file).expanduser().resolve() if shot_file is not None else None
    pool, from_shot_file = shot_pool(db, shot_path)
    chosen = prefix_shots(items, pool, shots_for, seed=seed, from_shot_file=from_shot_file)
    notes = _shot_notes(chosen, shots_for, from_shot_file=from_shot_file)

    params: JsonObject = {
        **backend_info.params,
        "seed": seed,
        "template_hash": templates.hash,
        "templates_dir": str(templates.override_dir) if templates.override_dir else None,
        "shot_file": str(shot_path) if shot_path else None,
        "shot_file_sha256": _shot_file_digest(shot_path) if shot_path else None,
        "shots_used": {
            _group_name(*group): [{"id": s.id, "revision": s.revision} for s in group_shots]
            for group, group_shots in chosen.items()
        },
        "shot_notes": notes,
        "revisions": {item.id: item.revision for item in items},
        "excluded": excluded,
        "protocol": spec.name.value,
        "layout": templates.layout,
        "extractors": list(extractors),
        "shots_by_kind": {kind.value: count for kind, count in sorted(shots_for.items())},
        "max_new_tokens": max_new_tokens,
        "permute_options": permute_options,
        "repeat": None if repeat is None else repeat.to_json(),
    }
    run = EvalRun(
        model=backend_info.model,
        backend=backend_info.backend,
        mode=mode,
        shots=shots,
        params=_column_json(params),
        filters=_column_json(filters),
        item_ids=[item.id for item in items],
        status=RunStatus.INTERRUPTED,  # nothing evaluated yet; execute_run sets it running
        host=socket.gethostname()[:255],
    )
    with db.transaction() as session:
        session.add(run)
        session.flush()
        assert run.id is not None
        record_event(
            session,
            actor or _current_user(),
            "eval-run",
            f"run:{run.id}",
            model=backend_info.model,
            backend=backend_info.backend,
            mode=mode,
            shots=shots,
            items=len(items),
            protocol=spec.name.value,
        )
    return run.id


def _shot_notes(
    chosen: Mapping[tuple[ItemKind, str], list[ItemSnapshot]],
    shots_for: Mapping[ItemKind, int],
    *,
    from_shot_file: bool,
) -> list[str]:
    """Say where the shots fall short of k approved items from outside the evaluated set."""
    notes = []
    for (kind, language), group_shots in chosen.items():
        group = _group_name(kind, language)
        k = shots_for[kind]
        if len(group_shots) < k:
            where = "in the shot file" if from_shot_file else "outside the evaluated set"
            notes.append(f"{group}: only {len(group_shots)} of {k} shots available {where}")
        if not from_shot_file:
            unapproved = [s.id for s in group_shots if s.status != "approved"]
            if unapproved:
                notes.append(
                    f"{group}: too few approved items outside the evaluated set; "
                    f"using not-yet-approved {', '.join(unapproved)}"
                )
    return notes


def _current_user() -> str:
    try:
        return getpass.getuser()
    except Exception:
        return "vetbench"


# ----------------------------------------------------------------- execution


@dataclass(frozen=True)
class _Shown:
    """An item as the model sees it: its options in the shown order, and that order."""

    item: ItemSnapshot
    shuffle: ShuffledOptions | None  # None: shown as stored

    def to_item_labels(self, answer: str | None) -> str | None:
        """An answer read in the shown labels, in the item's own (letters it lacks stay)."""
        if answer is None or self.shuffle is None:
            return answer
        original = dict(zip(LETTERS, self.shuffle.source_labels, strict=False))
        return "".join(original.get(letter, letter) for letter in answer)

    @property
    def option_order(self) -> str | None:
        return None if self.shuffle is None else self.shuffle.source_labels


@dataclass
class _RunPlan:
    """Everything needed to evaluate one run's pending items."""

    run_id: int
    mode: str
    items: dict[str, ItemSnapshot]
    shown: dict[str, _Shown]
    prompts: dict[str, Prompt]
    templates: PromptTemplates
    total: int
    protocol: ProtocolSpec
    extractors: tuple[str, ...]
    max_new_tokens: int | None


def _shown(item: ItemSnapshot, *, permute: bool, seed: object) -> _Shown:
    """``item`` with its options in a seeded order (key remapped), when asked to permute."""
    if not permute or len(item.choices) < 2:
        return _Shown(item, None)
    shuffle = shuffle_options(item.choices, item.key, item.kind, seed=f"{seed}:{item.id}")
    if shuffle.source_labels == "".join(item.choices):  # true/false keeps A true, B false
        return _Shown(item, None)
    return _Shown(replace(item, choices=shuffle.choices, key=shuffle.key), shuffle)


def _load_run(db: Database, run_id: int) -> EvalRun:
    try:
        return load_run(db, run_id)
    except RunNotFound as error:
        raise RunSetupError(str(error)) from None


def pending_item_ids(db: Database, run_id: int) -> list[str]:
    """Items of a run still to evaluate: no prediction yet, or an infrastructure failure."""
    run = _load_run(db, run_id)
    with db.session() as session:
        rows = session.exec(
            select(Prediction.item_id, Prediction.failure_kind).where(Prediction.run_id == run_id)
        ).all()
    answered = {item_id for item_id, failure in rows if failure != FailureKind.INFRASTRUCTURE}
    return [item_id for item_id in run.item_ids if item_id not in answered]


@dataclass(frozen=True)
class _ShotRef:
    """One shot a run recorded: the item and the revision its prompt showed."""

    id: str
    revision: int


def _shot_refs(params: Mapping[str, Any]) -> dict[str, list[_ShotRef]]:
    """The shots a run recorded per prefix group (``shots_used``)."""
    used = params.get("shots_used") or {}
    return {
        group: [_ShotRef(str(shot["id"]), int(shot["revision"])) for shot in shots]
        for group, shots in used.items()
    }


def _text_param(params: json_types.JsonObject, name: str) -> str | None:
    """A text a run recorded in its ``params``; None when it is absent or not text."""
    value = params.get(name)
    return value if isinstance(value, str) else None


def _recorded_shots(db: Database, run: EvalRun) -> dict[str, list[ItemSnapshot]]:
    params = run.params
    used = _shot_refs(params)
    shot_file = _text_param(params, "shot_file")
    if shot_file:
        path = Path(shot_file)
        if not path.is_file():
            raise RunSetupError(f"run {run.id} used the shot file {path}, which is gone")
        if _shot_file_digest(path) != params.get("shot_file_sha256"):
            raise RunSetupError(f"the shot file {path} changed since run {run.id} was created")
        by_id = {shot.id: shot for shot in load_shot_file(path)}
        return {group: [by_id[shot.id] for shot in shots] for group, shots in used.items()}
    recorded: dict[str, list[ItemSnapshot]] = {}
    with db.session() as session:
        for group, shots in used.items():
            group_shots = []
            for shot in shots:
                snapshot = get_item(session, shot.id, shot.revision)
                if snapshot is None:
                    raise RunSetupError(f"run {run.id}: shot {shot.id} is missing")
                group_shots.append(snapshot)
            recorded[group] = group_shots
    return recorded


def _plan(db: Database, run: EvalRun) -> _RunPlan:
    assert run.id is not None
    params = run.params
    templates_dir = _text_param(params, "templates_dir")
    # Runs from before protocols were recorded are custom runs with vetbench's layout.
    spec = protocol_spec(_text_param(params, "protocol") or EvalProtocol.CUSTOM)
    templates = load_templates(
        Path(templates_dir) if templates_dir else None,
        layout=_text_param(params, "layout") or DEFAULT_LAYOUT,
    )
    if templates.hash != run.params.get("template_hash"):
        raise RunSetupError(
            f"the prompt templates changed since run {run.id} was created; "
            f"start a new run instead of resuming"
        )
    shots = _recorded_shots(db, run)
    recorded_revisions = params.get("revisions")
    revisions = (
        {
            item_id: number
            for item_id, number in recorded_revisions.items()
            if isinstance(number, int)
        }
        if isinstance(recorded_revisions, dict)
        else {}
    )
    pending = pending_item_ids(db, run.id)
    items: dict[str, ItemSnapshot] = {}
    with db.session() as session:
        for item_id in pending:
            snapshot = get_item(session, item_id, revisions.get(item_id))
            if snapshot is None:
                raise RunSetupError(f"run {run.id}: item {item_id} is missing")
            items[item_id] = snapshot
    permute = bool(params.get("permute_options"))
    shown = {
        item_id: _shown(item, permute=permute, seed=params.get("seed"))
        for item_id, item in items.items()
    }
    prompts = {
        item_id: build_prompt(
            shown[item_id].item,
            shots.get(_group_name(item.kind, template_language(item.language)), []),
            templates,
            language=spec.template_language,
            instructions_kind=spec.instructions_kind.get(item.kind),
        )
        for item_id, item in items.items()
    }
    recorded_extractors = params.get("extractors")
    extractors = (
        tuple(name for name in recorded_extractors if isinstance(name, str))
        if isinstance(recorded_extractors, list) and recorded_extractors
        else (LENIENT,)
    )
    budget = params.get("max_new_tokens")
    return _RunPlan(
        run.id,
        run.mode,
        items,
        shown,
        prompts,
        templates,
        len(run.item_ids),
        spec,
        extractors,
        budget if isinstance(budget, int) else spec.max_new_tokens,
    )


def _generation_request(plan: _RunPlan, item_id: str) -> GenerationRequest:
    """How one item is generated: the protocol's stop rule and answer budget."""
    item = plan.shown[item_id].item
    spec = kind_spec(item.kind)
    language = plan.protocol.template_language or item.language
    budget = plan.max_new_tokens or spec.max_new_tokens(len(item.labels))
    rule = plan.protocol.stop_rule
    if rule == StopRule.ANSWER:
        stop = stop_sequences(item.kind, plan.templates, language)
        complete = spec.answer_is_complete(item.labels)
    else:
        cue = plan.templates.new_question_cue(language)
        stop = ("\n" + cue,) if rule == StopRule.NEW_QUESTION and cue else ()
        complete = None
    return GenerationRequest(
        item_id=item_id,
        prompt=plan.prompts[item_id],
        stop=stop,
        max_new_tokens=budget,
        complete=complete,
    )


def _generation_requests(plan: _RunPlan) -> list[GenerationRequest]:
    return [_generation_request(plan, item_id) for item_id in plan.items]


def _scoring_requests(plan: _RunPlan) -> tuple[list[ScoringRequest], dict[str, list[str]]]:
    from evaluator.exports.lm_eval import answer_delimiter

    requests, candidates_of = [], {}
    for item_id in plan.items:
        item = plan.shown[item_id].item
        candidates = _score_candidates(item)
        if candidates is None:  # excluded at creation; the item set is frozen
            raise RunSetupError(f"item {item_id} has too many candidates for score mode")
        delimiter = answer_delimiter(plan.templates, item.language)
        texts = tuple(delimiter + answer_text(item.kind, c) for c in candidates)
        candidates_of[item_id] = candidates
        requests.append(ScoringRequest(item_id, plan.prompts[item_id], texts))
    return requests, candidates_of


def _canonical(kind: ItemKind, extractor: str, answer: str | None) -> str | None:
    """The lenient reader's choice sets stay sorted in the item's labels; the other
    extractors' answers stay as their rule read them (CFLUE's ``BA`` is not ``AB``)."""
    if answer is None or extractor != LENIENT or kind is ItemKind.ORDERING:
        return answer
    return "".join(sorted(answer, key=LETTERS.index))


def _explanation_reference(shown: _Shown, explanation: str) -> str:
    """The analysis as the shown options would word it: option letters remapped."""
    if shown.shuffle is None:
        return explanation
    return remap_letter_references(explanation, shown.shuffle.new_label())


def _generated_prediction(
    plan: _RunPlan, item: ItemSnapshot, result: GenerationResult
) -> PredictionFields:
    if result.error is not None:
        return PredictionFields.failed(result.error)
    shown = plan.shown[item.id]
    read = read_answers(plan.extractors, item.kind, result.output, shown.item.labels)
    extracted = {
        name: _canonical(item.kind, name, shown.to_item_labels(answer))
        for name, answer in read.items()
    }
    parsed = extracted.get(plan.extractors[0])
    explanation = None
    if plan.protocol.scores_explanations and (item.explanation or "").strip():
        reference = _explanation_reference(shown, item.explanation or "")
        explanation = score_explanation(result.output, reference)
    score = replace(
        score_answer(item.kind, parsed, item.key),
        extracted=extracted,
        explanation=explanation,
        key_position=key_position(item.kind, shown.item.key),
        option_order=shown.option_order,
    )
    return PredictionFields(
        raw_output=result.output,
        parsed_answer=parsed,
        correct=score.correct,
        scores=score,
        failure_kind=FailureKind.UNPARSED if parsed is None else None,
        error=None,
    )


def _scored_prediction(
    shown: _Shown, item: ItemSnapshot, result: ScoringResult, candidates: Sequence[str]
) -> PredictionFields:
    if result.error is not None:
        return PredictionFields.failed(result.error)
    if len(result.log_likelihoods) != len(candidates):
        return PredictionFields.failed(
            f"backend returned {len(result.log_likelihoods)} scores for {len(candidates)} candidates"
        )
    ranked = sorted(
        (
            (_canonical(item.kind, LENIENT, shown.to_item_labels(answer)) or answer, ll)
            for answer, ll in zip(candidates, result.log_likelihoods, strict=True)
        ),
        key=lambda p: -p[1],
    )
    best = ranked[0][0]
    key_rank = next(
        (rank for rank, (answer, _) in enumerate(ranked, 1) if answer == item.key), None
    )
    score = replace(
        score_answer(item.kind, best, item.key),
        ranking=CandidateRanking(
            candidates=len(candidates),
            log_likelihoods={answer: round(ll, 4) for answer, ll in ranked[:TOP_CANDIDATES_STORED]},
            key_rank=key_rank,
        ),
        key_position=key_position(item.kind, shown.item.key),
        option_order=shown.option_order,
    )
    return PredictionFields(
        raw_output=answer_text(item.kind, best),
        parsed_answer=best,
        correct=score.correct,
        scores=score,
        failure_kind=None,
        error=None,
    )


def _store_prediction(
    db: Database,
    run_id: int,
    item: ItemSnapshot,
    prompt_text: str,
    latency_s: float,
    fields: PredictionFields,
) -> None:
    """Write one prediction in its own transaction (replacing an infrastructure failure)."""
    with db.transaction() as session:
        row = session.exec(
            select(Prediction).where(Prediction.run_id == run_id, Prediction.item_id == item.id)
        ).first()
        digest = prompt_hash(prompt_text)
        if row is None:
            row = Prediction(
                run_id=run_id,
                item_id=item.id,
                revision_number=item.revision,
                prompt_hash=digest,
            )
        row.revision_number = item.revision
        row.prompt_hash = digest
        row.prompt = prompt_text
        row.latency_s = float(latency_s)
        row.created_at = utcnow()
        row.raw_output = _storable(fields.raw_output)
        row.parsed_answer = fields.parsed_answer
        row.correct = fields.correct
        row.scores = {} if fields.scores is None else _column_json(fields.scores.to_json())
        row.failure_kind = fields.failure_kind
        row.error = None if fields.error is None else _storable(fields.error)
        session.add(row)


def _storable(text: str) -> str:
    """Model text as a text column takes it: PostgreSQL refuses NUL characters, so a NUL
    a model wrote is kept as U+FFFD (the replacement character), on every database alike."""
    return text.replace("\x00", "\ufffd")


def _set_status(
    db: Database, run_id: int, status: RunStatus, *, error: str | None = None, **params: Any
) -> None:
    with db.transaction() as session:
        run = session.get(EvalRun, run_id)
        assert run is not None
        run.status = status
        run.error = error
        if params:
            run.params = {**run.params, **params}  # a new dict, so the JSON column is saved
        if status is RunStatus.RUNNING:
            run.finished_at = None
            run.host = socket.gethostname()[:255]
        else:
            run.finished_at = utcnow()
        session.add(run)


def _progress_so_far(db: Database, run_id: int, total: int) -> RunProgress:
    """The run's figures over its stored predictions, before this session adds any."""
    with db.session() as session:
        rows = session.exec(
            select(Prediction.correct, Prediction.failure_kind).where(Prediction.run_id == run_id)
        ).all()
    answered = [row for row in rows if row[1] != FailureKind.INFRASTRUCTURE]
    correct = sum(1 for row in answered if row[0])
    unparsed = sum(1 for row in answered if row[1] == FailureKind.UNPARSED)
    return RunProgress(run_id, len(answered), total, correct=correct, unparsed=unparsed)


def _check_started_by_this_role(db: Database, run: EvalRun) -> None:
    """PostgreSQL: only the role that started a run (or the owner) writes to it
    (``db.guards``); anyone else is told so before any work is done."""
    from db.identity import database_account

    account = database_account(db)
    if account is None or account.is_admin or run.db_role in (None, account.name):
        return
    raise RunSetupError(
        f"run {run.id} was started by {run.db_role}; only they (or the database's owner) "
        "may resume it: start a run of your own"
    )


def _check_not_running_elsewhere(run: EvalRun) -> None:
    if run.status != RunStatus.RUNNING:
        return
    pid = run.params.get("pid")
    if run.host == socket.gethostname()[:255] and isinstance(pid, int) and _process_alive(pid):
        raise RunSetupError(f"run {run.id} is still running (process {pid} on {run.host})")


def _process_alive(pid: int) -> bool:
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def execute_run(
    db: Database,
    run_id: int,
    backend: Backend,
    *,
    on_progress: Callable[[RunProgress], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> RunStatus:
    """Evaluate the run's items that have no answer yet; returns the run's final status.

    Each prediction is stored as soon as the backend returns it.  Ctrl-C marks the
    run interrupted (and re-raises); ``should_stop()`` returning True does the same
    quietly; any other error marks it failed (and re-raises).
    """
    run = _load_run(db, run_id)
    if run.backend != backend.info.backend or run.model != backend.info.model:
        raise RunSetupError(
            f"run {run_id} evaluates {run.backend}:{run.model}, "
            f"not {backend.info.backend}:{backend.info.model}"
        )
    if run.mode == "score" and not backend.supports_scoring:
        raise RunSetupError(f"the {backend.info.backend} backend cannot score candidates")
    _check_not_running_elsewhere(run)
    _check_started_by_this_role(db, run)
    plan = _plan(db, run)
    progress = _progress_so_far(db, run_id, plan.total)
    # Readers measure speed over this session: from its start, counting what it adds.
    _set_status(
        db,
        run_id,
        RunStatus.RUNNING,
        pid=os.getpid(),
        session_started_at=utcnow().isoformat(),
        session_done_before=progress.done,
        session_device=backend.info.params.get("device"),
    )
    started = time.perf_counter()
    stopped = False
    results = _results(plan, backend)
    try:
        for item_id, prompt_text, latency, fields in results:
            item = plan.items[item_id]
            _store_prediction(db, run_id, item, prompt_text, latency, fields)
            outcome = PredictionOutcome(
                item_id,
                item.key,
                fields.parsed_answer,
                fields.correct,
                fields.failure_kind,
                fields.raw_output,
                latency,
            )
            progress = progress.after(outcome, time.perf_counter() - started)
            if on_progress is not None:
                on_progress(progress)
            if should_stop is not None and should_stop():
                stopped = True
                break
    except KeyboardInterrupt:
        _close_quietly(results)
        _set_status(db, run_id, RunStatus.INTERRUPTED, error="interrupted (Ctrl-C)")
        raise
    except BaseException as error:
        _close_quietly(results)
        _set_status(db, run_id, RunStatus.FAILED, error=f"{type(error).__name__}: {error}")
        raise
    if stopped:
        _close_quietly(results)
        _set_status(db, run_id, RunStatus.INTERRUPTED, error="stopped")
        return RunStatus.INTERRUPTED
    failures = progress.infrastructure_failures
    if failures and failures == progress.finished_this_session:
        _set_status(
            db,
            run_id,
            RunStatus.FAILED,
            error=f"all {failures} predictions failed; resume the run to retry them",
        )
        return RunStatus.FAILED
    note = (
        f"{failures} infrastructure failure(s); resume the run to retry them" if failures else None
    )
    _set_status(db, run_id, RunStatus.FINISHED, error=note)
    return RunStatus.FINISHED


def _results(
    plan: _RunPlan, backend: Backend
) -> Iterator[tuple[str, str, float, PredictionFields]]:
    """``(item id, exact prompt, latency, prediction fields)`` as the backend finishes items."""
    if not plan.items:
        return
    if plan.mode == "score":
        requests, candidates_of = _scoring_requests(plan)
        for scored in backend.score(requests):
            item = plan.items[scored.item_id]
            shown = plan.shown[scored.item_id]
            fields = _scored_prediction(shown, item, scored, candidates_of[scored.item_id])
            yield scored.item_id, scored.prompt_text, scored.latency_s, fields
        return
    for generated in backend.generate(_generation_requests(plan)):
        item = plan.items[generated.item_id]
        fields = _generated_prediction(plan, item, generated)
        yield generated.item_id, generated.prompt_text, generated.latency_s, fields


def _close_quietly(results: Iterable[Any]) -> None:
    close = getattr(results, "close", None)
    if close is not None:
        try:
            close()
        except Exception:  # closing a broken generator must not hide the original error
            log.debug("closing the result stream failed", exc_info=True)
