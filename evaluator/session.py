"""One evaluation core for ``vetbench eval`` and the app's evaluation screen (F4).

An evaluation is asked for as :class:`EvalChoices`: the protocol, shots (per kind
too), which items, mode, layout, templates, extractor, answer budget, repeats,
option permutation and seed.  This module

- plans the runs those choices make (:func:`plan_runs`): one per shot setting of the
  protocol and repeat, each with its seed (``seed``, ``seed + 1`` ...) and, when there
  are several, one series id they share;
- checks the choices before a model loads (:func:`check_choices`, :func:`check_model`)
  and sets what the protocol fixes about how the model runs (:func:`protocol_settings`:
  EconLogicQA's plain completion);
- creates and executes the runs with one backend (:func:`run_series`, and
  :func:`resume_series` for a stopped run), telling the caller how each run goes
  through one callback (:class:`RunUpdate`);
- computes a series' figures: each run's, and their mean ± sd per shot setting
  (:func:`series_figures`).

Both interfaces only turn their input into :class:`EvalChoices` and show what comes
back, so the same choices make the same stored runs from either.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from db.engine import Database
from db.errors import VetbenchError
from db.items import ItemSnapshot
from db.json_types import JsonObject
from db.vocabulary import EvalMode, EvalProtocol, ItemKind, ItemStatus, RunStatus, values
from db.words import agreeing, named
from evaluator.backends.base import Backend
from evaluator.backends.settings import BackendSettings
from evaluator.cflue_wording import read_cflue_wording
from evaluator.item_filter import ItemFilter
from evaluator.prompts import DEFAULT_SHOT_SEED, load_templates, template_files
from evaluator.protocols import protocol_spec
from evaluator.result_table import Spread, series_spread
from evaluator.results import RunFigures, RunProgress
from evaluator.run_create import (
    MODEL_OWN_LIMIT,
    RunSelection,
    RunSetupError,
    ShotSource,
    check_shots,
    create_run,
    select_run_items,
    shots_for_kinds,
)
from evaluator.run_params import Repeat, RunParams
from evaluator.run_plan import load_run_row
from evaluator.runner import execute_run
from evaluator.runs import run_figures, run_records
from evaluator.served_weights import check_served_weights

__all__ = [
    "DEFAULT_SHOTS",
    "EvalChoices",
    "PlannedRun",
    "RunFailed",
    "RunUpdate",
    "SeriesFigures",
    "ShotSpread",
    "check_choices",
    "check_model",
    "plan_runs",
    "protocol_settings",
    "resume_series",
    "run_series",
    "series_figures",
    "series_gap_note",
    "templates_note",
]

DEFAULT_SHOTS = 5  # the custom protocol's shots when none are asked for
MOST_REPEATS = 100  # runs per setting (`vetbench eval --repeats`)
MOST_NEW_TOKENS = 8192  # an answer budget asked for (`--max-new-tokens`)


class RunFailed(VetbenchError):
    """A run stopped by an error other than a setup problem; the message names the run."""

    def __init__(self, run_id: int, error: Exception) -> None:
        super().__init__(f"run {run_id} failed: {type(error).__name__}: {error}")
        self.run_id = run_id


@dataclass(frozen=True)
class EvalChoices:
    """Everything a person chooses about an evaluation, besides the model and how it runs
    (``BackendSettings``): ``vetbench eval``'s options and the evaluation screen's form."""

    protocol: EvalProtocol = EvalProtocol.CUSTOM
    shots: int | None = None  # None: DEFAULT_SHOTS, or the protocol's own settings
    shots_by_kind: Mapping[str, int] = field(default_factory=dict)
    shot_files: tuple[Path, ...] = ()  # one per kind, or one with every kind
    shots_from: str | None = None  # a source or status to draw the shots from
    allow_fewer_shots: bool = False  # else a run that would get fewer shots is refused
    statuses: tuple[str, ...] = (ItemStatus.APPROVED.value,)  # (): every status
    kinds: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    release: str | None = None  # a release's items as frozen (statuses do not apply)
    limit: int | None = None
    mode: EvalMode = EvalMode.GENERATE
    layout: str | None = None  # None: the protocol's
    templates_dir: Path | None = None
    extractor: str | None = None  # None: the protocol's
    max_new_tokens: int | None = None  # None: the protocol's (or each kind's) budget
    repeats: int = 1
    permute_options: bool = False
    seed: int = DEFAULT_SHOT_SEED
    cflue_repo: Path | None = None  # CFLUE's protocol: its official wording, from a clone

    @property
    def item_filter(self) -> ItemFilter:
        """The items chosen (a release's are its own, whatever their status now)."""
        return ItemFilter(
            statuses=() if self.release else self.statuses,
            kinds=self.kinds,
            sources=self.sources,
            release=self.release,
            limit=self.limit,
        )

    @property
    def shot_source(self) -> ShotSource:
        return ShotSource.of(self.shot_files, self.shots_from)

    def shot_settings(self) -> tuple[int, ...]:
        """The shot counts to run: the protocol's own (or the one of them asked for, as
        EconLogicQA's 5-shot run alone), else the one asked for; a protocol that fixes
        its shots refuses others."""
        settings = protocol_spec(self.protocol).shot_settings
        if settings is None:
            return (DEFAULT_SHOTS if self.shots is None else self.shots,)
        other_shots = self.shots is not None and self.shots not in settings
        if self.shots_by_kind or other_shots:
            fixed = " and ".join(str(k) for k in settings)
            given = [  # name the options given, not one that was not
                name
                for name, wrong in (("--shots", other_shots), ("--shots-for", self.shots_by_kind))
                if wrong
            ]
            either = ", or give one of those" if other_shots and len(settings) > 1 else ""
            raise RunSetupError(
                f"the {self.protocol.value} protocol fixes its shots ({fixed}); "
                f"leave out {' and '.join(given)}{either}"
            )
        return settings if self.shots is None else (self.shots,)


@dataclass(frozen=True)
class PlannedRun:
    """One run of a series: its shots, the seed of its shot draw (and permutation), and
    which repeat of the series it is (None for a lone run)."""

    shots: int
    seed: int
    repeat: Repeat | None


def plan_runs(choices: EvalChoices, *, series: str | None = None) -> tuple[PlannedRun, ...]:
    """The runs ``choices`` make: each shot setting × each repeat (seed, seed + 1 ...).
    Several runs share one series id (``series``, else a new one)."""
    if not 1 <= choices.repeats <= MOST_REPEATS:
        raise RunSetupError(f"repeats must be from 1 to {MOST_REPEATS} ({choices.repeats})")
    tokens = choices.max_new_tokens
    if tokens is not None and not 1 <= tokens <= MOST_NEW_TOKENS:
        raise RunSetupError(f"max new tokens must be from 1 to {MOST_NEW_TOKENS} ({tokens})")
    settings = choices.shot_settings()
    if choices.mode is EvalMode.SCORE and choices.protocol is not EvalProtocol.CUSTOM:
        raise RunSetupError(
            f"the {choices.protocol.value} protocol generates answers; "
            "--mode score needs --protocol custom"
        )
    planned = [(k, index) for k in settings for index in range(choices.repeats)]
    if len(planned) > 1:
        series = series or uuid.uuid4().hex[:12]
    return tuple(
        PlannedRun(
            shots=shots,
            seed=choices.seed + index,
            repeat=Repeat(series, index, choices.repeats) if len(planned) > 1 and series else None,
        )
        for shots, index in planned
    )


def check_choices(
    db: Database,
    choices: EvalChoices,
    *,
    model: str | None = None,
    settings: BackendSettings | None = None,
) -> RunSelection:
    """Refuse choices that cannot make a run, before any model loads, in this order: a
    protocol's fixed shots, score mode with a paper's protocol, a templates folder that
    cannot be used, CFLUE's wording, a ``model`` that cannot open (:func:`check_model`,
    when given, with the ``settings`` it will open with), an empty selection, fewer shots
    than asked (unless allowed)."""
    planned = plan_runs(choices, series="check")
    if choices.templates_dir is not None:  # a bad folder is said before a model loads
        load_templates(
            choices.templates_dir, layout=choices.layout or protocol_spec(choices.protocol).layout
        )
    if choices.cflue_repo is not None:
        if choices.protocol is not EvalProtocol.CFLUE:
            raise RunSetupError("--cflue-repo gives CFLUE's wording: it is for --protocol cflue")
        read_cflue_wording(choices.cflue_repo)  # a bad file is said before a model loads
    if model is not None:  # a model that cannot open is said before the items and shots
        check_model(model, choices.mode, settings)
    selection = _selected_items(db, choices)
    _check_shots(db, choices, planned, selection)
    return selection


def _selected_items(db: Database, choices: EvalChoices) -> RunSelection:
    """The items ``choices`` evaluate, refused as :func:`select_run_items` refuses them."""
    return select_run_items(
        db,
        choices.item_filter,
        protocol=choices.protocol,
        mode=choices.mode,
        extractor=choices.extractor,
    )


def _check_shots(
    db: Database, choices: EvalChoices, planned: tuple[PlannedRun, ...], selection: RunSelection
) -> None:
    """A ``FewerShotsError`` when a planned run would get fewer shots than it asks for,
    unless fewer were allowed (a bad shot source is refused either way)."""
    source = choices.shot_source
    _check_repeats(choices, planned, selection, source.pool(db))
    if choices.allow_fewer_shots:
        return
    settings = {(run.shots, tuple(sorted(choices.shots_by_kind.items()))) for run in planned}
    check_shots(
        db,
        selection,
        [(shots, dict(by_kind)) for shots, by_kind in sorted(settings)],
        source,
        seed=choices.seed,
        fixed_shots=protocol_spec(choices.protocol).shot_settings is not None,
    )


def _check_repeats(
    choices: EvalChoices,
    planned: tuple[PlannedRun, ...],
    selection: RunSelection,
    pool: list[ItemSnapshot],
) -> None:
    """Refuse repeats that cannot differ: every repeat of a shot setting gets the same
    shots and no option permutation, so the same prompts get the same greedy answers
    (from the response cache, even) and "mean ± sd over 3 runs" is one run three times."""
    if choices.permute_options:
        return
    source = choices.shot_source
    for shots in sorted({run.shots for run in planned}):
        seeds = [run.seed for run in planned if run.shots == shots]
        if len(seeds) < 2:
            continue
        shots_for = shots_for_kinds(selection.items, shots, choices.shots_by_kind)
        draws = {
            tuple(
                (group.name, tuple(shot.id for shot in group_shots))
                for group, group_shots in selection.shots(
                    pool, shots_for, source, seed=seed
                ).items()
            )
            for seed in seeds
        }
        if len(draws) > 1:
            continue
        if not any(shot_ids for _, shot_ids in next(iter(draws))):
            why, instead = "the prompts hold no shots", ""
        elif source.from_file:
            why = "a shot file gives each prompt group its first shots, whatever the seed"
            instead = ", draw shots from the database (leave out --shot-file)"
        else:
            why = "the shots available allow no other draw"
            instead = ""
        raise RunSetupError(
            f"--repeats {len(seeds)} would make {len(seeds)} identical {shots}-shot runs: {why}, "
            "and the same prompts get the same (greedy) answers; add --permute-options (each "
            f"repeat shows the options in another order){instead}, or leave out --repeats"
        )


def protocol_settings(choices: EvalChoices, settings: BackendSettings) -> BackendSettings:
    """``settings`` with what the protocol fixes about how the model runs, where the person
    chose nothing: EconLogicQA's prompts go as plain completion (no chat template)."""
    wanted = protocol_spec(choices.protocol).chat_template
    if settings.chat_template is None and wanted is not None:
        return replace(settings, chat_template=wanted)
    return settings


def check_model(spec: str, mode: EvalMode, settings: BackendSettings | None = None) -> None:
    """Refuse a model spec of no known form, score mode for models that cannot score, or
    what the spec names when a cheap look shows it unusable (a script file that cannot be
    read, a missing model file or folder, no API key where ``settings`` are given and
    need one), before anything loads (a ``BackendError`` or ``RunSetupError`` says why)."""
    from evaluator.backends.registry import find_provider

    provider = find_provider(spec)
    if mode is EvalMode.SCORE and provider.cannot_score:
        raise RunSetupError(f"{provider.cannot_score}; evaluate them with --mode generate")
    if provider.check is not None:
        provider.check(spec.strip().removeprefix(provider.prefix), settings)


@dataclass(frozen=True)
class RunUpdate:
    """How a run of the series goes: sent once when it starts (``progress`` has what was
    stored before) and after each prediction it stores."""

    run_id: int
    position: int  # 0-based, within the series
    runs: int  # how many runs the series has
    progress: RunProgress
    notes: tuple[str, ...] = ()  # on the starting update: where its shots fell short ...

    @property
    def starting(self) -> bool:
        return self.progress.finished_this_session == 0

    @property
    def never_started(self) -> int:
        """The runs of the series planned after this one: none is made if it stops here."""
        return self.runs - self.position - 1


OnUpdate = Callable[[RunUpdate], None]

LONG_ANSWERS_NOTE = (
    "answers may run to the model's own limit, as CFLUE's code lets them (a local model: "
    "up to its context, minutes an item on a CPU for one that does not stop; a server: "
    "its own default); --max-new-tokens N (F4: Max new tokens) caps them"
)


def templates_note(params: RunParams) -> str | None:
    """The prompt groups (``ordering/en``) for which a run's templates folder holds no
    file: they are asked in the built-in wording.  None without a folder (or for runs
    from before the files read were recorded)."""
    read = set(params.templates_read)
    if params.templates_dir is None or not read:
        return None
    spec = protocol_spec(params.protocol)
    plain: list[str] = []
    for name, shots in params.shots_used.items():
        kind, language = name.split("/")[:2]
        if kind not in values(ItemKind):
            continue
        files = template_files(
            kind,
            spec.template_language or language,
            with_shots=bool(shots),
            instructions_kind=spec.instructions_kind.get(ItemKind(kind)),
        )
        if not read & set(files) and f"{kind}/{language}" not in plain:
            plain.append(f"{kind}/{language}")
    if not plain:
        return None
    return (
        f"the templates folder {params.templates_dir} holds no template for the "
        f"{' and '.join(plain)} items: they are asked in the built-in wording"
    )


@dataclass(frozen=True)
class SeriesControls:
    """How a caller follows a series (``on_update``) and stops it (``should_stop``, asked
    after each prediction); the CLI only follows, the app does both."""

    on_update: OnUpdate | None = None
    should_stop: Callable[[], bool] | None = None


@dataclass(frozen=True)
class SeriesOutcome:
    """The runs a session made or resumed, in order, and how each ended."""

    run_ids: tuple[int, ...]
    statuses: tuple[RunStatus, ...]

    @property
    def failed(self) -> bool:
        return RunStatus.FAILED in self.statuses

    @property
    def stopped(self) -> bool:
        return RunStatus.INTERRUPTED in self.statuses


def run_series(
    db: Database,
    backend: Backend,
    choices: EvalChoices,
    *,
    actor: str,
    controls: SeriesControls = SeriesControls(),
) -> SeriesOutcome:
    """Create and execute every run ``choices`` plan, one after the other, with one
    backend.  A stop (``controls.should_stop``) ends the series after the current prediction;
    Ctrl-C propagates (the finished predictions are kept)."""
    planned = plan_runs(choices)
    if choices.mode is EvalMode.SCORE and not backend.supports_scoring:
        raise RunSetupError("this backend cannot score candidate answers; use --mode generate")
    # Before the first run is made: a series whose 5-shot run would fall short makes none.
    selection = _selected_items(db, choices)
    _check_shots(db, choices, planned, selection)
    run_ids: list[int] = []
    statuses: list[RunStatus] = []
    for position, run in enumerate(planned):
        run_id = create_run(
            db,
            backend.info,
            actor=actor,
            mode=choices.mode,
            shots=run.shots,
            item_filter=choices.item_filter,
            shot_file=choices.shot_files,
            shots_from=choices.shots_from,
            templates_dir=choices.templates_dir,
            seed=run.seed,
            protocol=choices.protocol,
            layout=choices.layout,
            extractor=choices.extractor,
            shots_by_kind=choices.shots_by_kind,
            max_new_tokens=choices.max_new_tokens,
            permute_options=choices.permute_options,
            repeat=run.repeat,
            cflue_repo=choices.cflue_repo,
        )
        run_ids.append(run_id)
        status = _execute(db, backend, run_id, position, len(planned), controls)
        statuses.append(status)
        if status is RunStatus.INTERRUPTED:
            break
    return SeriesOutcome(tuple(run_ids), tuple(statuses))


def resume_series(
    db: Database,
    backend: Backend,
    run_id: int,
    *,
    controls: SeriesControls = SeriesControls(),
) -> SeriesOutcome:
    """Continue a stopped run where it stopped (that run only: a note says which repeats
    of its series were never started).  A server that now says it serves other weights
    than when the run started is refused (``served_weights``); a note says what of that
    could not be checked."""
    recorded = RunParams.from_json(load_run_row(db, run_id).params).backend
    unchecked = check_served_weights(run_id, recorded, backend.info)
    notes = tuple(note for note in (series_gap_note(db, run_id), unchecked) if note)
    status = _execute(db, backend, run_id, 0, 1, controls, notes)
    return SeriesOutcome((run_id,), (status,))


def series_gap_note(db: Database, run_id: int) -> str | None:
    """Which repeats of run ``run_id``'s series (of its shot setting) were never made, as
    after Ctrl-C during ``--repeats``; None when every one was."""
    records = run_records(db)
    this = next((record for record in records if record.id == run_id), None)
    repeat = this.params.repeat if this is not None else None
    if this is None or repeat is None or not repeat.series:
        return None
    made = {
        record.params.repeat.index
        for record in records
        if record.params.repeat is not None
        and record.params.repeat.series == repeat.series
        and record.shots == this.shots
    }
    missing = [index + 1 for index in range(repeat.count) if index not in made]
    if not missing:
        return None
    return (
        f"run {run_id} is repeat {repeat.index + 1} of {repeat.count} ({this.shots}-shot); "
        f"{named('repeat', missing)} of its series {agreeing(len(missing), 'was', 'were')} "
        f"never started: --resume finishes run {run_id} only, and the series' figures "
        f"count {len(made)} of {repeat.count} runs (run the evaluation again for a full series)"
    )


def _execute(
    db: Database,
    backend: Backend,
    run_id: int,
    position: int,
    runs: int,
    controls: SeriesControls,
    more_notes: tuple[str, ...] = (),
) -> RunStatus:
    on_update = controls.on_update

    def report(progress: RunProgress) -> None:
        if on_update is not None:
            on_update(RunUpdate(run_id, position, runs, progress))

    if on_update is not None:
        figures = run_figures(db, run_id)
        notes = [*more_notes, *figures.run.shot_notes, *figures.run.params.excluded_notes()]
        backend_notes = getattr(backend, "notes_for", None)  # a script without some answers
        if backend_notes is not None:
            notes += backend_notes(list(figures.run.params.revisions))
        note = templates_note(figures.run.params)
        if note:
            notes.append(note)
        if figures.run.params.answer_budget == MODEL_OWN_LIMIT:
            notes.append(LONG_ANSWERS_NOTE)
        on_update(RunUpdate(run_id, position, runs, figures.progress, tuple(notes)))
    try:
        return execute_run(
            db, run_id, backend, on_progress=report, should_stop=controls.should_stop
        )
    except RunSetupError:
        raise
    except Exception as error:
        raise RunFailed(run_id, error) from error


@dataclass(frozen=True)
class ShotSpread:
    """Mean ± sd of the headline figures over the runs of one shot setting."""

    shots: int
    run_ids: tuple[int, ...]
    figures: Mapping[str, Spread]

    def to_json(self) -> JsonObject:
        return {
            "shots": self.shots,
            "runs": list(self.run_ids),
            "figures": {
                key: entry
                for name, value in self.figures.items()
                for key, entry in value.named(name).items()
            },
        }


@dataclass(frozen=True)
class SeriesFigures:
    """The figures of the runs a session made: each run's, and their spread per setting."""

    runs: tuple[RunFigures, ...]
    spreads: tuple[ShotSpread, ...]

    def to_json(self) -> JsonObject:
        """``vetbench eval --json``: the first run's figures, every run id, the spreads."""
        return {
            "run_id": self.runs[0].run.id,
            **self.runs[0].to_json(),
            "runs": [figures.run.id for figures in self.runs],
            "spread": [spread.to_json() for spread in self.spreads],
        }


def series_figures(db: Database, run_ids: tuple[int, ...] | list[int]) -> SeriesFigures:
    """Each run's figures, and their mean ± sd per shot setting (in the order first run)."""
    every = tuple(run_figures(db, run_id) for run_id in run_ids)
    by_shots: dict[int, list[RunFigures]] = {}
    for figures in every:
        by_shots.setdefault(figures.run.shots, []).append(figures)
    return SeriesFigures(
        every,
        tuple(
            ShotSpread(
                shots,
                tuple(figures.run.id for figures in group),
                series_spread([figures.summary for figures in group]),
            )
            for shots, group in by_shots.items()
        ),
    )
