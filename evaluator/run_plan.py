"""Planning a run's execution: replay what it recorded into the prompts and requests.

A run's prompts are rebuilt from its :class:`~evaluator.run_params.RunParams`: the
recorded item revisions, shots, templates, layout, protocol, extractors, budget and
option permutation.  A run refuses to resume if its templates or shot file changed
since it was created.  With ``permute_options`` every item's options are shown in a
seeded order with the key remapped (``evaluator.generation.option_shuffle``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from sqlmodel import Session, select

from db.engine import Database
from db.items import ItemSnapshot, get_item
from db.json_types import JsonValue
from db.models import EvalRun, Prediction
from db.releases import release_items
from db.vocabulary import EvalMode, FailureKind
from evaluator.backends.base import GenerationRequest, Prompt, ScoringRequest
from evaluator.cflue_wording import FROM_REPOSITORY, PROMPT_MODULE, WordingError, read_cflue_wording
from evaluator.generation.option_shuffle import (
    ShuffledOptions,
    remap_letter_references,
    shuffle_options,
)
from evaluator.kinds import kind_spec
from evaluator.prompts import (
    PromptTemplates,
    answer_text,
    build_prompt,
    load_shot_files,
    load_templates,
    recorded_group_shots,
    stop_sequences,
)
from evaluator.protocols import ProtocolSpec, StopRule, protocol_spec
from evaluator.run_create import RunSetupError, score_candidates, shot_file_digest
from evaluator.run_params import RunParams
from evaluator.runs import RunNotFound, load_run

__all__ = [
    "RunPlan",
    "Shown",
    "generation_requests",
    "load_run_row",
    "pending_item_ids",
    "plan_run",
    "recorded_items",
    "scoring_requests",
    "shown_item",
]


@dataclass(frozen=True)
class Shown:
    """An item as the model sees it: its options in the shown order, and that order."""

    item: ItemSnapshot
    shuffle: ShuffledOptions | None  # None: shown as stored

    def to_item_labels(self, answer: str | None) -> str | None:
        """An answer read in the shown labels, in the item's own and in canonical form
        (sets in order, every position of an order mapped; letters it lacks stay), for
        every reader and both modes."""
        if answer is None or self.shuffle is None:
            return answer
        return self.shuffle.to_source(answer, self.item.kind)

    def explanation(self, explanation: str) -> str:
        """The analysis as the shown options would word it: option letters remapped."""
        if self.shuffle is None:
            return explanation
        return remap_letter_references(explanation, self.shuffle.new_label(), self.item.kind)

    @property
    def option_order(self) -> str | None:
        return None if self.shuffle is None else self.shuffle.source_labels


@dataclass(frozen=True)
class RunPlan:
    """Everything needed to evaluate one run's pending items."""

    run_id: int
    mode: EvalMode
    items: dict[str, ItemSnapshot]
    shown: dict[str, Shown]
    prompts: dict[str, Prompt]
    templates: PromptTemplates
    total: int
    protocol: ProtocolSpec
    extractors: tuple[str, ...]
    max_new_tokens: int | None


def shown_item(item: ItemSnapshot, *, permute: bool, seed: int) -> Shown:
    """``item`` with its options in a seeded order (key remapped), when asked to permute."""
    if not permute or len(item.choices) < 2:
        return Shown(item, None)
    shuffle = shuffle_options(item.choices, item.key, item.kind, seed=f"{seed}:{item.id}")
    if shuffle.source_labels == "".join(item.choices):  # true/false keeps A true, B false
        return Shown(item, None)
    return Shown(replace(item, choices=shuffle.choices, key=shuffle.key), shuffle)


def load_run_row(db: Database, run_id: int) -> EvalRun:
    """The run's row; a missing run is a setup error here."""
    try:
        return load_run(db, run_id)
    except RunNotFound as error:
        raise RunSetupError(str(error)) from None


def pending_item_ids(db: Database, run_id: int) -> list[str]:
    """Items of a run still to evaluate: no prediction yet, or an infrastructure failure."""
    return _pending(db, load_run_row(db, run_id))


def _pending(db: Database, run: EvalRun) -> list[str]:
    with db.session() as session:
        rows = session.exec(
            select(Prediction.item_id, Prediction.failure_kind).where(Prediction.run_id == run.id)
        ).all()
    answered = {item_id for item_id, failure in rows if failure != FailureKind.INFRASTRUCTURE}
    return [item_id for item_id in run.item_ids if item_id not in answered]


def _recorded_shots(db: Database, run_id: int, params: RunParams) -> dict[str, list[ItemSnapshot]]:
    used = params.shots_used
    if params.shot_file:
        files = [(params.shot_file, params.shot_file_sha256)]
        files += [(ref.path, ref.sha256) for ref in params.more_shot_files]
        for name, digest in files:
            path = Path(name)
            if not path.is_file():
                raise RunSetupError(f"run {run_id} used the shot file {path}, which is gone")
            if shot_file_digest(path) != digest:
                raise RunSetupError(f"the shot file {path} changed since run {run_id} was created")
        by_id = {shot.id: shot for shot in load_shot_files([Path(name) for name, _ in files])}
        return {group: [by_id[shot.id] for shot in shots] for group, shots in used.items()}
    recorded: dict[str, list[ItemSnapshot]] = {}
    with db.session() as session:
        for group, shots in used.items():
            group_shots = []
            for shot in shots:
                snapshot = get_item(session, shot.id, shot.revision)
                if snapshot is None:
                    raise RunSetupError(f"run {run_id}: shot {shot.id} is missing")
                group_shots.append(snapshot)
            recorded[group] = group_shots
    return recorded


def _with_recorded_wording(
    templates: PromptTemplates, wording: Mapping[str, JsonValue] | None, run_id: int
) -> PromptTemplates:
    """The templates with the CFLUE wording a run read from a repository, read again."""
    if wording is None or wording.get("source") != FROM_REPOSITORY:
        return templates
    module = Path(str(wording.get("path")))
    try:
        official = read_cflue_wording(module.parents[len(PROMPT_MODULE.parts) - 1])
    except WordingError as error:
        raise RunSetupError(f"run {run_id} used CFLUE's wording from {module}: {error}") from None
    return templates.with_texts(official.instructions)


def recorded_items(
    session: Session, release: str | None, revisions: Mapping[str, int | None]
) -> dict[str, ItemSnapshot]:
    """The items a run asked, in the order of ``revisions`` (id -> the revision it
    recorded): a release's as frozen (their revisions, and the language they had then),
    others at their revision; an item no longer there is left out."""
    frozen = {item.id: item for item in release_items(session, release)} if release else {}
    found: dict[str, ItemSnapshot] = {}
    for item_id, revision in revisions.items():
        snapshot = frozen.get(item_id) or get_item(session, item_id, revision)
        if snapshot is not None:
            found[item_id] = snapshot
    return found


def plan_run(db: Database, run: EvalRun) -> RunPlan:
    """The prompts and settings for ``run``'s pending items, replayed from its params."""
    assert run.id is not None
    params = RunParams.from_json(run.params)
    spec = protocol_spec(params.protocol)
    templates = load_templates(
        Path(params.templates_dir) if params.templates_dir else None, layout=params.layout
    )
    templates = _with_recorded_wording(templates, params.wording, run.id)
    if templates.hash != params.template_hash:
        raise RunSetupError(
            f"the prompt templates changed since run {run.id} was created; "
            f"start a new run instead of resuming"
        )
    shots = _recorded_shots(db, run.id, params)
    pending = _pending(db, run)  # the row in hand, not read again
    with db.session() as session:
        wanted = {item_id: params.revisions.get(item_id) for item_id in pending}
        items = recorded_items(session, run.release_name, wanted)
    missing = next((item_id for item_id in pending if item_id not in items), None)
    if missing is not None:
        raise RunSetupError(f"run {run.id}: item {missing} is missing")
    shown = {
        item_id: shown_item(item, permute=params.permute_options, seed=params.seed)
        for item_id, item in items.items()
    }
    prompts = {
        item_id: build_prompt(
            shown[item_id].item,
            recorded_group_shots(shots, item),
            templates,
            language=spec.template_language,
            instructions_kind=spec.instructions_kind.get(item.kind),
        )
        for item_id, item in items.items()
    }
    return RunPlan(
        run.id,
        EvalMode(run.mode),
        items,
        shown,
        prompts,
        templates,
        len(run.item_ids),
        spec,
        params.extractors,
        params.max_new_tokens or spec.max_new_tokens,
    )


def _generation_request(
    plan: RunPlan, item_id: str, *, with_reference: bool = False
) -> GenerationRequest:
    """How one item is generated: the protocol's stop strings and answer budget (none of
    the protocol's own for CFLUE's: the model's limit), and for the oracle self-test what
    a model that knows the key writes.  Nothing else ends it: a backend that stopped once
    the text read as an answer would read what a served model's later text overrules."""
    shown = plan.shown[item_id]
    item = shown.item
    spec = kind_spec(item.kind)
    language = plan.protocol.template_language or item.language
    budget = plan.max_new_tokens or (
        None if plan.protocol.model_length else spec.max_new_tokens(len(item.labels))
    )
    rule = plan.protocol.stop_rule
    if rule == StopRule.ANSWER:
        stop = stop_sequences(item.kind, plan.templates, language)
    else:
        cue = plan.templates.new_question_cue(language)
        stop = ("\n" + cue,) if rule == StopRule.NEW_QUESTION and cue else ()
    return GenerationRequest(
        item_id=item_id,
        prompt=plan.prompts[item_id],
        stop=stop,
        max_new_tokens=budget,
        reference=plan.protocol.reference_output(
            item.kind, item.key, shown.explanation(item.explanation or "")
        )
        if with_reference
        else None,
    )


def generation_requests(plan: RunPlan, *, with_reference: bool = False) -> list[GenerationRequest]:
    """Every pending item's request; ``with_reference`` (the oracle) adds the key's text."""
    return [
        _generation_request(plan, item_id, with_reference=with_reference) for item_id in plan.items
    ]


def scoring_requests(
    plan: RunPlan, *, with_reference: bool = False
) -> tuple[list[ScoringRequest], dict[str, list[str]]]:
    """Score mode's requests, and each item's candidates in the order scored."""
    from evaluator.exports.lm_eval import answer_delimiter

    requests, candidates_of = [], {}
    for item_id in plan.items:
        item = plan.shown[item_id].item
        candidates = score_candidates(item)
        if candidates is None:  # excluded at creation; the item set is frozen
            raise RunSetupError(f"item {item_id} has too many candidates for score mode")
        delimiter = answer_delimiter(plan.templates, item.language)
        texts = tuple(delimiter + answer_text(item.kind, c) for c in candidates)
        candidates_of[item_id] = candidates
        reference = answer_text(item.kind, item.key) if with_reference else None
        requests.append(ScoringRequest(item_id, plan.prompts[item_id], texts, reference))
    return requests, candidates_of
