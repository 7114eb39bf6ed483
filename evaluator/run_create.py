"""Creating a run: freeze the evaluated set and everything that decides its prompts.

``create_run`` records what is evaluated (the item ids and their revisions), how
(mode, shots, templates, seed, protocol, extractors, budget, permutation, backend
settings: :class:`~evaluator.run_params.RunParams`) and with which shots; nothing is
evaluated yet (``evaluator.runner.execute_run`` does that).  ``select_run_items`` says
cheaply which items a run would evaluate, before any model loads.
"""

from __future__ import annotations

import getpass
import glob
import hashlib
import socket
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from sqlmodel import Session

from db.audit import record_event
from db.engine import Database
from db.errors import VetbenchError
from db.items import ItemSnapshot, count_items, iter_items
from db.json_types import JsonObject, JsonValue
from db.listings import source_names
from db.models import EvalRun
from db.releases import ReleaseError, get_release, release_items
from db.vocabulary import EvalMode, EvalProtocol, ItemKind, ItemStatus, RunStatus, values
from db.words import agreeing, counted, few_of
from evaluator.backends.base import BackendInfo
from evaluator.cflue_wording import BUILT_IN, read_cflue_wording
from evaluator.extractors import answer_extractor
from evaluator.item_filter import ItemFilter
from evaluator.item_sets import ItemSet, item_set_of
from evaluator.kinds import kind_spec
from evaluator.prompts import (
    DEFAULT_SHOT_SEED,
    LANGUAGES,
    ShotGroup,
    evaluated_shots,
    load_shot_files,
    load_templates,
    prefix_shots,
    shot_pool,
)
from evaluator.protocols import ProtocolSpec, protocol_spec
from evaluator.run_params import Repeat, RunParams, ShotFileRef, ShotRef
from evaluator.shot_advice import fewer_shots_advice, shot_examples

__all__ = [
    "FewerShotsError",
    "RunSelection",
    "RunSetupError",
    "ShotShortfall",
    "ShotSource",
    "check_shots",
    "create_run",
    "score_candidates",
    "select_run_items",
    "shot_examples",
    "shot_file_digest",
    "shots_for_kinds",
]


class RunSetupError(VetbenchError, ValueError):
    """A run that cannot be created or resumed as asked; the message says why."""


@dataclass(frozen=True)
class RunSelection:
    """The items a run would evaluate, and those chosen but left out (id -> why): of a kind
    the protocol does not ask, with options the deciding reader does not know, or with too
    many candidates for score mode."""

    items: list[ItemSnapshot]
    excluded: dict[str, str]
    # With --limit: the items the run would evaluate without it.  No shot is drawn from
    # them, so a limited run's prompts are the full run's for the same items (its shots
    # no longer depend on the limit).  Empty: no limit, ``items`` are the whole set.
    unlimited: Sequence[ItemSnapshot] = ()
    # Template languages the protocol's layout lacks (EconLogicQA's: Chinese): their items
    # take the shots there are, their own language's first (prefix_shots).
    any_language: frozenset[str] = frozenset()

    @property
    def whole_set(self) -> Sequence[ItemSnapshot]:
        """The evaluated set before the limit: the items no shot may be."""
        return self.unlimited or self.items

    def shots(
        self,
        pool: Sequence[ItemSnapshot],
        shots_for: Mapping[ItemKind, int],
        source: ShotSource,
        *,
        seed: int,
    ) -> dict[ShotGroup, list[ItemSnapshot]]:
        """The shots of its items' prompts (:func:`prefix_shots`), none of the whole set."""
        return prefix_shots(
            self.items,
            pool,
            shots_for,
            seed=seed,
            from_shot_file=source.from_file,
            whole_set=self.whole_set,
            any_language=self.any_language,
        )


@dataclass(frozen=True)
class ShotShortfall:
    """A kind whose prompts would get fewer shots than asked: the fewest any of its
    prompt groups gets, and where they were looked for."""

    kind: str
    got: int
    asked: int
    where: str
    group: str = ""  # the kind's prompts that fall short, when not all do: "5-event orders"

    def text(self) -> str:
        which = f" for its {self.group}" if self.group else ""
        return (
            f"{self.kind} would get {self.got} of {counted(self.asked, 'shot')}{which} {self.where}"
        )


class FewerShotsError(RunSetupError):
    """A run would get fewer shots than asked and fewer were not allowed.  The message
    says how to give shots on the command line; ``shortfalls`` let the app say it its way."""

    def __init__(
        self,
        shortfalls: Sequence[ShotShortfall],
        *,
        fixed_shots: bool = False,
        source: ShotSource | None = None,
    ) -> None:
        self.shortfalls = tuple(shortfalls)
        source = source or ShotSource()
        advice = fewer_shots_advice(
            {shortfall.kind for shortfall in self.shortfalls},
            shot_files=source.shot_files,
            shots_from=source.shots_from,
            fixed_shots=fixed_shots,  # a protocol that fixes its shots refuses --shots
        )
        super().__init__(f"{self.what}: {advice}")

    @property
    def what(self) -> str:
        """``too few shots: ordering would get 0 of 5 shots outside the evaluated set``."""
        return "too few shots: " + "; ".join(s.text() for s in self.shortfalls)


@dataclass(frozen=True)
class ShotSource:
    """Where a run's shots come from: shot files (one per kind, or one with every kind),
    the stored items of one source or one status (``--shots-from``), or (neither) every
    stored item; never the evaluated set."""

    shot_files: tuple[Path, ...] = ()
    shots_from: str | None = None

    def __post_init__(self) -> None:
        if self.shot_files and self.shots_from is not None:
            raise RunSetupError("give --shot-file or --shots-from, not both")
        if self.shots_from == ItemStatus.REJECTED.value:
            raise RunSetupError("rejected items never serve as shots: name another status")

    @classmethod
    def of(cls, shot_file: Path | Sequence[Path] | None, shots_from: str | None) -> ShotSource:
        files = (
            () if shot_file is None else (shot_file,) if isinstance(shot_file, Path) else shot_file
        )
        return cls(tuple(Path(path).expanduser().resolve() for path in files), shots_from)

    @property
    def from_file(self) -> bool:
        return bool(self.shot_files)

    @property
    def where(self) -> str:
        if self.shot_files:
            return f"in the shot {agreeing(len(self.shot_files), 'file', 'files')}"
        if self.shots_from is not None:
            return f"among the {self.shots_from} items outside the evaluated set"
        return "outside the evaluated set"

    def pool(self, db: Database) -> list[ItemSnapshot]:
        """The items shots are drawn from; an unknown source or status is refused."""
        if self.shot_files:
            return load_shot_files(self.shot_files)
        name = self.shots_from
        if name is None:
            return shot_pool(db, None)[0]
        with db.session() as session:
            if name in values(ItemStatus):
                return list(iter_items(session, statuses=[name]))
            found = list(iter_items(session, sources=[name]))
            if not found:
                raise RunSetupError(_no_such_shot_source(name, source_names(session)))
        return found


def names_a_file(word: str) -> bool:
    """Whether ``word`` is meant as a file rather than a source or status: it is one, or
    it has a folder, a wildcard or a JSON ending (source and status names have none)."""
    return (
        Path(word).expanduser().is_file()
        or glob.has_magic(word)
        or any(separator in word for separator in "/\\")
        or word.endswith((".jsonl", ".json"))
    )


def _no_such_shot_source(name: str, sources: Sequence[str]) -> str:
    """Why ``--shots-from NAME`` finds nothing, and what it could have been."""
    statuses = ", ".join(values(ItemStatus))
    said = f"--shots-from {name}: no items of that source, and not a status ({statuses})"
    if names_a_file(name):
        return f"{said}; shot files go to --shot-file"
    return f"{said}; the sources: {few_of(sources, 8)}" if sources else f"{said}; no items yet"


def shot_shortfalls(
    chosen: Mapping[ShotGroup, Sequence[ItemSnapshot]],
    shots_for: Mapping[ItemKind, int],
    source: ShotSource,
    left_out: Sequence[ItemSnapshot] = (),
) -> list[ShotShortfall]:
    """The kinds whose prompts get fewer shots than asked (each kind once, its fewest);
    ``left_out``: the shots of a shot file left out as evaluated items, said with their kind."""
    short: dict[ItemKind, list[ShotGroup]] = {}  # each kind's groups with too few, fewest first
    for group, group_shots in sorted(chosen.items(), key=lambda entry: len(entry[1])):
        if len(group_shots) < shots_for[group.kind]:
            short.setdefault(group.kind, []).append(group)
    shortfalls = []
    for kind, groups in short.items():
        evaluated = sum(shot.kind is kind for shot in left_out)
        where = source.where + (
            f" (leaving out {counted(evaluated, 'evaluated item')})" if evaluated else ""
        )
        got = len(chosen[groups[0]])
        shortfalls.append(
            ShotShortfall(kind.value, got, shots_for[kind], where, _short_groups(chosen, groups))
        )
    return shortfalls


def _short_groups(
    chosen: Mapping[ShotGroup, Sequence[ItemSnapshot]], short: Sequence[ShotGroup]
) -> str:
    """The kind's prompts that fall short when not all do: ``zh items`` (a shot must be in
    the question's language), ``5-event orders`` (and have its number of events), else
    nothing: the whole kind does."""
    kind = short[0].kind
    languages = {group.language for group in short}
    all_languages = {g.language for g in chosen if g.kind is kind}
    which = "" if languages == all_languages else " and ".join(sorted(languages))
    sizes = sorted({group.events for group in short if group.events is not None})
    all_sizes = {g.events for g in chosen if g.kind is kind and g.events is not None}
    if sizes and set(sizes) != all_sizes:
        return f"{which} {' and '.join(map(str, sizes))}-event orders".strip()
    return f"{which} items" if which else ""


def check_shots(
    db: Database,
    selection: RunSelection,
    settings: Iterable[tuple[int, Mapping[str, int] | None]],
    source: ShotSource,
    *,
    seed: int = DEFAULT_SHOT_SEED,
    fixed_shots: bool = False,
) -> None:
    """Refuse (``FewerShotsError``) when a run of any of these shot ``settings`` (shots,
    shots by kind) on the ``selection`` would get fewer shots than it asks for; how many a
    seeded draw finds does not depend on the seed.  ``fixed_shots``: the protocol fixes them."""
    items, pool = selection.items, source.pool(db)
    left_out = evaluated_shots(selection.whole_set, pool) if source.from_file else []
    shortfalls: dict[str, ShotShortfall] = {}
    for shots, by_kind in settings:
        shots_for = shots_for_kinds(items, shots, by_kind)
        chosen = selection.shots(pool, shots_for, source, seed=seed)
        for shortfall in shot_shortfalls(chosen, shots_for, source, left_out):
            shortfalls.setdefault(shortfall.kind, shortfall)
    if shortfalls:
        raise FewerShotsError(list(shortfalls.values()), fixed_shots=fixed_shots, source=source)


def shot_file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def score_candidates(item: ItemSnapshot) -> list[str] | None:
    """Score mode's candidate answers; one rule here and in the lm-eval export's
    multiple_choice tasks (None: too many to rank)."""
    return kind_spec(item.kind).score_candidates(item.labels)


def _select_items(
    db: Database, item_filter: ItemFilter, protocol: ProtocolSpec
) -> tuple[list[ItemSnapshot], dict[str, str], list[ItemSnapshot]]:
    """The items chosen that the protocol asks (up to the limit), those of the kinds it
    does not ask (id -> why: :meth:`ProtocolSpec.leaves_out`), which the run records, and
    with a limit every item it asks without the limit (else nothing: the first are all).

    One stream in the items' order serves all three, so that a limited run records only
    what it passed over on the way to its items, not every such item in the database (a
    `--limit 20` check said "1,843 ordering items left out")."""
    asked = item_filter.kinds_within(protocol.kinds)
    chosen_kinds = item_filter.kinds or values(ItemKind)
    other_kinds = [kind for kind in chosen_kinds if protocol.leaves_out(ItemKind(kind))]
    streamed = None if asked is None else (*asked, *other_kinds)
    selected: list[ItemSnapshot] = []
    left_out: dict[str, str] = {}
    unlimited: list[ItemSnapshot] = []
    with db.session() as session:
        for item in _candidates(session, item_filter, streamed):
            reason = protocol.leaves_out(item.kind)
            if reason is None and item_filter.limit:
                unlimited.append(item)
            if item_filter.limit and len(selected) >= item_filter.limit:
                continue  # past the limit: only the whole set is gathered
            if reason is not None:
                left_out[item.id] = reason
                continue
            selected.append(item)
    return selected, left_out, unlimited


def _candidates(
    session: Session, item_filter: ItemFilter, kinds: tuple[str, ...] | None
) -> Iterable[ItemSnapshot]:
    """The items of ``kinds`` (None: every kind) ``item_filter`` chooses, without its limit."""
    if item_filter.release:  # exactly as frozen, whatever changed since
        try:
            return release_items(
                session, item_filter.release, kinds=kinds or (), sources=item_filter.sources
            )
        except ReleaseError as error:
            raise RunSetupError(str(error)) from None
    return iter_items(
        session,
        statuses=list(item_filter.statuses) or None,
        kinds=list(kinds) if kinds is not None else None,
        sources=list(item_filter.sources) or None,
    )


def _describe(item_filter: ItemFilter, protocol: ProtocolSpec) -> str:
    described = item_filter.describe()
    if protocol.name is EvalProtocol.CUSTOM:
        return described
    asked = ", ".join(kind.value for kind in ItemKind if kind in protocol.kinds)
    asks = f"the {protocol.name.value} protocol asks {asked} items"
    return asks if described == "no filter" else f"{described}; {asks}"


def select_run_items(
    db: Database,
    item_filter: ItemFilter,
    *,
    protocol: EvalProtocol | str = EvalProtocol.CUSTOM,
    mode: str = EvalMode.GENERATE,
    extractor: str | None = None,
) -> RunSelection:
    """The items a run with these settings would evaluate; a ``RunSetupError`` says why
    there are none, or that the deciding reader (``extractor``, None: the protocol's) does
    not read some of them.  Cheap: the CLI asks it before loading a model."""
    spec = protocol_spec(protocol)
    items, not_asked, unlimited = _select_items(db, item_filter, spec)
    if mode == EvalMode.GENERATE:
        deciding = spec.reported_extractors(extractor)[0]
        _check_reader(deciding, items)
        reader = answer_extractor(deciding)

        def left_out(item: ItemSnapshot) -> str | None:
            # options its letters lack: CFLUE's reader knows A–F only
            return reader.leaves_out(item.kind, item.labels)
    else:

        def left_out(item: ItemSnapshot) -> str | None:
            if score_candidates(item) is None:
                return f"too many candidate answers for score mode ({item.kind.value})"
            return None

    # Each item asked once: with a limit, the whole set holds every item chosen.  The
    # whole set the shots are drawn outside of leaves out what the run leaves out, as an
    # unlimited run's does, so a limited run asks its items with the same shots.
    reasons = {
        item.id: reason for item in unlimited or items if (reason := left_out(item)) is not None
    }
    excluded = {item.id: reasons[item.id] for item in items if item.id in reasons}
    items = [item for item in items if item.id not in reasons]
    unlimited = [item for item in unlimited if item.id not in reasons]
    if not items:
        hint = (
            f": {'; '.join(RunParams(excluded=excluded).excluded_notes())}"
            if excluded
            else _other_statuses_hint(db, item_filter, spec)
        )
        raise RunSetupError(f"no items to evaluate ({_describe(item_filter, spec)}){hint}")
    foreign = frozenset(LANGUAGES) - spec.languages if spec.languages else frozenset()
    return RunSelection(items, {**excluded, **not_asked}, unlimited, foreign)


def _other_statuses_hint(db: Database, item_filter: ItemFilter, spec: ProtocolSpec) -> str:
    """Where the statuses asked for hold nothing but the kinds and sources do (no item
    approved yet, say): how many there are, and how to evaluate them."""
    kinds = item_filter.kinds_within(spec.kinds)
    if item_filter.release or not item_filter.statuses or kinds == ():
        return ""
    with db.session() as session:
        others = count_items(
            session,
            kinds=list(kinds) if kinds is not None else None,
            sources=list(item_filter.sources) or None,
        )
    if not others:
        return ""
    return (
        f"; {counted(others, 'item')} {agreeing(others, 'has', 'have')} another status: "
        f"`vetbench eval --status all` takes {agreeing(others, 'it', 'them')}"
    )


def _check_reader(name: str, items: Sequence[ItemSnapshot]) -> None:
    """Refuse a deciding reader that does not read some items' kind: their answers would
    all count as unparsed (an oracle scored 49% with ``--extractor cflue`` on a set with
    orders)."""
    try:
        reader = answer_extractor(name)
    except ValueError as error:
        raise RunSetupError(str(error)) from None
    unread = Counter(item.kind.value for item in items if not reader.applies_to(item.kind))
    if unread:
        reads = ", ".join(kind.value for kind in ItemKind if reader.applies_to(kind))
        counts = ", ".join(f"{count} {kind}" for kind, count in sorted(unread.items()))
        raise RunSetupError(
            f"the {name} reader reads {reads} answers, not those of the items here ({counts}): "
            "choose the kinds it reads with --kind, or another reader with --extractor"
        )


def shots_for_kinds(
    items: Sequence[ItemSnapshot], shots: int, shots_by_kind: Mapping[str, int] | None
) -> dict[ItemKind, int]:
    """How many shots each kind of the ``items`` asks: ``shots``, or its ``--shots-for``."""
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
    item_filter: ItemFilter | None = None,
    shot_file: Path | Sequence[Path] | None = None,
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
    shots_from: str | None = None,
) -> int:
    """Freeze the evaluated set and the run's settings; returns the new run's id.

    ``item_filter``: which items (default: every stored item, of any status).
    ``protocol`` fixes the kinds asked, the layout, the stop rule and the extractors
    (``evaluator.protocols``); ``layout`` and ``extractor`` replace its choices,
    ``shots_by_kind`` gives some kinds other shots than ``shots``, ``max_new_tokens``
    another answer budget.  ``permute_options`` shows every item's options in a
    seeded order (from ``seed``); ``repeat`` says which run of a series this is.
    ``cflue_repo`` (CFLUE's protocol) takes the prompt wording from a clone of CFLUE's
    repository (``evaluator.cflue_wording``); the run records which wording it used.
    Shots come from ``shot_file`` (one or several), else the items of source or status ``shots_from``,
    else every stored item (:class:`ShotSource`).  A run that gets fewer shots than
    asked is made as it is, with notes; ``evaluator.session`` refuses it beforehand
    unless fewer were allowed.
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
    item_filter = item_filter or ItemFilter()
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
    selected = select_run_items(
        db, item_filter, protocol=spec.name, mode=mode, extractor=extractors[0]
    )
    items, excluded = selected.items, selected.excluded
    shots_for = shots_for_kinds(items, shots, shots_by_kind)

    source = ShotSource.of(shot_file, shots_from)
    first_file, *more_files = source.shot_files or (None,)
    pool = source.pool(db)
    chosen = selected.shots(pool, shots_for, source, seed=seed)
    params = RunParams(
        seed=seed,
        template_hash=templates.hash,
        templates_dir=str(templates.override_dir) if templates.override_dir else None,
        templates_read=templates.read_from_folder,
        shot_file=str(first_file) if first_file else None,
        shot_file_sha256=shot_file_digest(first_file) if first_file else None,
        more_shot_files=tuple(
            ShotFileRef(str(path), shot_file_digest(path)) for path in more_files
        ),
        shots_used={
            group.name: tuple(ShotRef(s.id, s.revision) for s in group_shots)
            for group, group_shots in chosen.items()
        },
        shot_notes=(
            *_unused_shots_for(shots_for, shots_by_kind),
            *_shot_notes(chosen, shots_for, source, selected, pool),
        ),
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
        shots_from=shots_from,
        wording=wording,
        backend=dict(backend_info.params),
    )
    item_set = _item_set(db, items, item_filter.release)
    run = EvalRun(
        model=backend_info.model,
        backend=backend_info.backend,
        mode=mode,
        shots=shots,
        params=params.to_json(),
        filters=item_filter.to_json(),
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


def _item_set(db: Database, items: Sequence[ItemSnapshot], release: str | None) -> ItemSet:
    """What the run evaluates: items drawn from a release (its name), or ad hoc (none)."""
    if not release:
        return item_set_of(items, release=None)
    with db.session() as session:
        return item_set_of(items, release=get_release(session, release).name)


MODEL_OWN_LIMIT = "the model's own limit, within its context"
"""The answer budget recorded where the protocol lets the model write as long as it will."""


def _answer_budget(spec: ProtocolSpec, asked: int | None) -> JsonValue:
    """The answer budget a run works with, as recorded: tokens, or whose limit it is."""
    if asked is not None or spec.max_new_tokens is not None:
        return asked or spec.max_new_tokens
    return MODEL_OWN_LIMIT if spec.model_length else "the kind's own"


def _unused_shots_for(
    shots_for: Mapping[ItemKind, int], shots_by_kind: Mapping[str, int] | None
) -> list[str]:
    """Say which ``--shots-for`` were given for a kind no evaluated item has."""
    return [
        f"--shots-for {kind}={count} is not used: no {kind} item is evaluated"
        for kind, count in (shots_by_kind or {}).items()
        if ItemKind(kind) not in shots_for
    ]


def _shot_notes(
    chosen: Mapping[ShotGroup, list[ItemSnapshot]],
    shots_for: Mapping[ItemKind, int],
    source: ShotSource,
    selection: RunSelection,
    pool: Sequence[ItemSnapshot],
) -> list[str]:
    """Say which shots of a shot file were left out as evaluated items (of the whole set
    before a limit), and where the shots fall short of k approved items from outside the
    evaluated set (shots asked from a status are of that status: no note says so)."""
    notes = []
    left_out = evaluated_shots(selection.whole_set, pool) if source.from_file else []
    if left_out:
        limited = " (before --limit)" if selection.unlimited else ""
        notes.append(
            f"{counted(len(left_out), 'shot')} {source.where} left out: "
            f"{agreeing(len(left_out), 'it is an evaluated item', 'they are evaluated items')}"
            f"{limited} ({few_of([shot.id for shot in left_out])})"
        )
    for shot_group, group_shots in chosen.items():
        group = shot_group.name
        k = shots_for[shot_group.kind]
        if len(group_shots) < k:
            notes.append(
                f"{group}: only {len(group_shots)} of {counted(k, 'shot')} available {source.where}"
            )
        if not source.from_file and source.shots_from not in values(ItemStatus):
            unapproved = [s.id for s in group_shots if s.status != ItemStatus.APPROVED]
            if unapproved:
                where = "" if source.shots_from is None else f" of {source.shots_from}"
                # A few named (params.shots_used lists them all): a note is read, and in F4
                # a long one covered the results.
                notes.append(
                    f"{group}: too few approved items{where} outside the evaluated set; "
                    f"using not-yet-approved {few_of(unapproved)}"
                )
    return notes


def _current_user() -> str:
    try:
        return getpass.getuser()
    except Exception:
        return "vetbench"
