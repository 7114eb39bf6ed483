"""Creating a run: freeze the evaluated set and everything that decides its prompts.

``create_run`` records what is evaluated (the item ids and their revisions), how
(mode, shots, templates, seed, protocol, extractors, budget, permutation, backend
settings: :class:`~evaluator.run_params.RunParams`) and with which shots; nothing is
evaluated yet (``evaluator.runner.execute_run`` does that).  ``select_run_items`` says
cheaply which items a run would evaluate, before any model loads.
"""

from __future__ import annotations

import getpass
import hashlib
import socket
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from db.audit import record_event
from db.engine import Database
from db.errors import VetbenchError
from db.items import ItemSnapshot, iter_items
from db.json_types import JsonObject, JsonValue
from db.models import EvalRun
from db.releases import ReleaseError, get_release, release_items
from db.vocabulary import EvalMode, EvalProtocol, ItemKind, ItemStatus, RunStatus, values
from evaluator.backends.base import BackendInfo
from evaluator.cflue_wording import BUILT_IN, read_cflue_wording
from evaluator.extractors import answer_extractor
from evaluator.item_sets import ItemSet, item_set_of
from evaluator.kinds import kind_spec
from evaluator.prompts import (
    DEFAULT_SHOT_SEED,
    ShotGroup,
    load_templates,
    prefix_shots,
    shot_pool,
)
from evaluator.protocols import ProtocolSpec, protocol_spec
from evaluator.run_params import Repeat, RunParams, ShotRef

__all__ = [
    "RunSelection",
    "RunSetupError",
    "create_run",
    "score_candidates",
    "select_run_items",
    "shot_file_digest",
]


class RunSetupError(VetbenchError, ValueError):
    """A run that cannot be created or resumed as asked; the message says why."""


@dataclass(frozen=True)
class RunSelection:
    """The items a run would evaluate, and those left out of score mode (id -> why)."""

    items: list[ItemSnapshot]
    excluded: dict[str, str]


def shot_file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def score_candidates(item: ItemSnapshot) -> list[str] | None:
    """Score mode's candidate answers; one rule here and in the lm-eval export's
    multiple_choice tasks (None: too many to rank)."""
    return kind_spec(item.kind).score_candidates(item.labels)


def _selected_kinds(filters: Mapping[str, JsonValue], protocol: ProtocolSpec) -> list[str] | None:
    """The kinds asked for, within those the protocol asks (None: every kind)."""
    asked = [str(kind) for kind in _listed(filters, "kind")]
    if protocol.kinds == frozenset(ItemKind):
        return asked or None
    allowed = [kind.value for kind in ItemKind if kind in protocol.kinds]
    return [kind for kind in asked if kind in allowed] if asked else allowed


def _listed(filters: Mapping[str, JsonValue], name: str) -> list[str]:
    value = filters.get(name)
    return [str(v) for v in value] if isinstance(value, list) else []


def _select_items(
    db: Database, filters: Mapping[str, JsonValue], protocol: ProtocolSpec
) -> list[ItemSnapshot]:
    limit = filters.get("limit")
    kinds = _selected_kinds(filters, protocol)
    if kinds == []:
        return []
    selected: list[ItemSnapshot] = []
    release = filters.get("release")
    with db.session() as session:
        if isinstance(release, str):  # exactly as frozen, whatever changed since
            try:
                candidates: Iterable[ItemSnapshot] = release_items(
                    session, release, kinds=kinds or (), sources=_listed(filters, "source")
                )
            except ReleaseError as error:
                raise RunSetupError(str(error)) from None
        else:
            candidates = iter_items(
                session,
                statuses=_listed(filters, "status") or None,
                kinds=kinds,
                sources=_listed(filters, "source") or None,
            )
        for item in candidates:
            selected.append(item)
            if isinstance(limit, int) and len(selected) >= limit:
                break
    return selected


def _describe(filters: Mapping[str, JsonValue], protocol: ProtocolSpec) -> str:
    parts = [
        f"{name} {', '.join(values)}"
        for name in ("status", "kind", "source")
        if (values := _listed(filters, name))
    ]
    if isinstance(release := filters.get("release"), str):
        parts.insert(0, f"release {release}")
    if protocol.name is not EvalProtocol.CUSTOM:
        asked = ", ".join(kind.value for kind in ItemKind if kind in protocol.kinds)
        parts.append(f"the {protocol.name.value} protocol asks {asked} items")
    return "; ".join(parts) or "no filter"


def clean_filters(filters: Mapping[str, object] | None) -> JsonObject:
    """``status``, ``kind``, ``source`` (lists) and ``limit`` as a run stores them: those
    given, sequences as lists."""
    cleaned: JsonObject = {}
    for name, value in dict(filters or {}).items():
        if not value:
            continue
        if isinstance(value, list | tuple):
            cleaned[name] = [str(v) for v in value]
        elif isinstance(value, int) and not isinstance(value, bool):
            cleaned[name] = value
        else:
            cleaned[name] = str(value)
    return cleaned


def select_run_items(
    db: Database,
    filters: Mapping[str, object] | None,
    *,
    protocol: EvalProtocol | str = EvalProtocol.CUSTOM,
    mode: str = EvalMode.GENERATE,
) -> RunSelection:
    """The items a run with these settings would evaluate; a ``RunSetupError`` says why
    there are none.  Cheap: the CLI asks it before loading a model."""
    spec = protocol_spec(protocol)
    cleaned = clean_filters(filters)
    items = _select_items(db, cleaned, spec)
    excluded: dict[str, str] = {}
    if mode == EvalMode.SCORE:
        for item in items:
            if score_candidates(item) is None:
                excluded[item.id] = f"too many candidate answers for score mode ({item.kind.value})"
        items = [item for item in items if item.id not in excluded]
    if not items:
        raise RunSetupError(f"no items to evaluate ({_describe(cleaned, spec)})")
    return RunSelection(items, excluded)


def _shots_for(
    items: Sequence[ItemSnapshot], shots: int, shots_by_kind: Mapping[str, int] | None
) -> dict[ItemKind, int]:
    by_kind = {ItemKind(kind): count for kind, count in (shots_by_kind or {}).items()}
    if any(count < 0 for count in by_kind.values()):  # shots itself: create_run refused
        raise RunSetupError("the number of shots cannot be negative")
    return {item.kind: by_kind.get(item.kind, shots) for item in items}


def create_run(
    db: Database,
    backend_info: BackendInfo,
    *,
    mode: str = EvalMode.GENERATE,
    shots: int = 0,
    filters: Mapping[str, object] | None = None,
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
    cflue_repo: Path | None = None,
) -> int:
    """Freeze the evaluated set and the run's settings; returns the new run's id.

    ``filters``: ``status``, ``kind``, ``source`` (lists of values) and ``limit``.
    ``protocol`` fixes the kinds asked, the layout, the stop rule and the extractors
    (``evaluator.protocols``); ``layout`` and ``extractor`` replace its choices,
    ``shots_by_kind`` gives some kinds other shots than ``shots``, ``max_new_tokens``
    another answer budget.  ``permute_options`` shows every item's options in a
    seeded order (from ``seed``); ``repeat`` says which run of a series this is.
    ``cflue_repo`` (CFLUE's protocol) takes the prompt wording from a clone of CFLUE's
    repository (``evaluator.cflue_wording``); the run records which wording it used.
    """
    if mode not in values(EvalMode):
        raise RunSetupError(f"unknown mode '{mode}' (choose {', '.join(values(EvalMode))})")
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
    cleaned = clean_filters(filters)
    if cflue_repo is not None and spec.name is not EvalProtocol.CFLUE:
        raise RunSetupError("--cflue-repo gives CFLUE's wording: it is for --protocol cflue")
    templates = load_templates(templates_dir, layout=layout or spec.layout)
    wording: JsonObject | None = None
    if cflue_repo is not None:
        official = read_cflue_wording(cflue_repo)
        templates, wording = templates.with_texts(official.instructions), official.to_json()
    elif spec.name is EvalProtocol.CFLUE:
        wording = (
            {"source": BUILT_IN}
            if templates.override_dir is None
            else {"source": "templates", "path": str(templates.override_dir)}
        )
    selection = select_run_items(db, cleaned, protocol=spec.name, mode=mode)
    items, excluded = selection.items, selection.excluded
    shots_for = _shots_for(items, shots, shots_by_kind)

    shot_path = Path(shot_file).expanduser().resolve() if shot_file is not None else None
    pool, from_shot_file = shot_pool(db, shot_path)
    chosen = prefix_shots(items, pool, shots_for, seed=seed, from_shot_file=from_shot_file)
    params = RunParams(
        seed=seed,
        template_hash=templates.hash,
        templates_dir=str(templates.override_dir) if templates.override_dir else None,
        shot_file=str(shot_path) if shot_path else None,
        shot_file_sha256=shot_file_digest(shot_path) if shot_path else None,
        shots_used={
            group.name: tuple(ShotRef(s.id, s.revision) for s in group_shots)
            for group, group_shots in chosen.items()
        },
        shot_notes=tuple(_shot_notes(chosen, shots_for, from_shot_file=from_shot_file)),
        revisions={item.id: item.revision for item in items},
        excluded=excluded,
        protocol=spec.name,
        layout=templates.layout,
        extractors=tuple(extractors),
        shots_by_kind={kind.value: count for kind, count in sorted(shots_for.items())},
        max_new_tokens=max_new_tokens,
        permute_options=permute_options,
        repeat=repeat,
        answer_budget=_answer_budget(spec, max_new_tokens),
        wording=wording,
        backend=dict(backend_info.params),
    )
    item_set = _item_set(db, items, cleaned)
    run = EvalRun(
        model=backend_info.model,
        backend=backend_info.backend,
        mode=mode,
        shots=shots,
        params=params.to_json(),
        filters=cleaned,
        item_ids=[item.id for item in items],
        release_name=item_set.release,
        item_set_hash=item_set.hash,
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
            **item_set.to_json(),
        )
    return run.id


def _item_set(db: Database, items: Sequence[ItemSnapshot], filters: JsonObject) -> ItemSet:
    """What the run evaluates: items drawn from a release (its name), or ad hoc (none)."""
    release = filters.get("release")
    if not isinstance(release, str):
        return item_set_of(items, release=None)
    with db.session() as session:
        return item_set_of(items, release=get_release(session, release).name)


def _answer_budget(spec: ProtocolSpec, asked: int | None) -> JsonValue:
    """The answer budget a run works with, as recorded: tokens, or whose limit it is."""
    if asked is not None or spec.max_new_tokens is not None:
        return asked or spec.max_new_tokens
    return "the model's own limit, within its context" if spec.model_length else "the kind's own"


def _shot_notes(
    chosen: Mapping[ShotGroup, list[ItemSnapshot]],
    shots_for: Mapping[ItemKind, int],
    *,
    from_shot_file: bool,
) -> list[str]:
    """Say where the shots fall short of k approved items from outside the evaluated set."""
    notes = []
    for shot_group, group_shots in chosen.items():
        group = shot_group.name
        k = shots_for[shot_group.kind]
        if len(group_shots) < k:
            where = "in the shot file" if from_shot_file else "outside the evaluated set"
            notes.append(f"{group}: only {len(group_shots)} of {k} shots available {where}")
        if not from_shot_file:
            unapproved = [s.id for s in group_shots if s.status != ItemStatus.APPROVED]
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
