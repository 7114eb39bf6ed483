"""The finished runs a paper-style table reads, and how a cell picks among them.

A cell is the mean over the runs of one *series* (``vetbench eval --repeats N`` or one
protocol call); for each model and column the latest series no ``--limit`` cut short
counts (:func:`latest_series`), and where it evaluated other items than another series
of the same cell (a quick ``--limit`` check after the full run, an older run on fewer
items), :func:`replacement_note` says so and names the other runs; where
it has fewer finished runs than it planned, :func:`incomplete_series_note` says so.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from urllib.parse import urlsplit

from db.engine import Database
from db.vocabulary import RunStatus
from db.words import counted, named
from evaluator.metrics import ScoredPrediction
from evaluator.protocols import run_departures
from evaluator.results import Figures, RunRecord

__all__ = [
    "TableRun",
    "evaluated_items",
    "finished_runs",
    "incomplete_series_note",
    "latest_series",
    "replacement_note",
    "variant_suffix",
]


@dataclass(frozen=True)
class TableRun:
    """A finished run as a table reads it: its record and its scored predictions."""

    record: RunRecord
    outcomes: list[ScoredPrediction]
    server: str | None = None
    """Where it was served, set only where runs of its model name were served by several
    (``127.0.0.1:8001``): one name on two servers may be two models (:func:`server_labels`)."""

    @property
    def model(self) -> str:
        """The model as a row or column names it: ``m1``, or ``m1 @ 127.0.0.1:8001``."""
        return self.record.model if self.server is None else f"{self.record.model} @ {self.server}"

    @property
    def protocol(self) -> str:
        return self.record.params.protocol.value

    @property
    def permuted(self) -> bool:
        return self.record.params.permute_options

    @property
    def departures(self) -> tuple[str, ...]:
        """A layout or deciding reader not the protocol's own (``read by lenient``)."""
        return run_departures(self.record.params)

    @property
    def series(self) -> str:
        repeat = self.record.params.repeat
        return repeat.series if repeat is not None and repeat.series else f"run:{self.record.id}"

    def shots_for(self, kind: str) -> tuple[int, str]:
        """The shots ``kind`` asked for, and those it got when fewer (else "")."""
        got = self.record.params.shot_counts(self.record.shots).of_kind(kind)
        return got.asked, got.used_text if got.short else ""

    @property
    def shots_setting(self) -> str:
        """The run's shots in a breakdown's setting: ``5``, or each kind's when they differ
        from it (``ordering 0-shot (5 asked), single 5-shot``)."""
        got = self.record.params.shot_counts(self.record.shots)
        return str(self.record.shots) if got.plain else got.label()


def finished_runs(
    db: Database, *, protocol: str | None, models: Sequence[str], run_ids: Sequence[int]
) -> list[TableRun]:
    """The finished runs with their predictions: of ``run_ids``, ``models`` and ``protocol``
    where given."""
    from evaluator.runs import run_outcomes, run_records

    chosen = []
    for record in run_records(db):
        if record.status is not RunStatus.FINISHED:
            continue
        if run_ids and record.id not in run_ids:
            continue
        if models and record.model not in models:
            continue
        run = TableRun(record, [])
        if protocol is not None and run.protocol != protocol:
            continue
        chosen.append(TableRun(record, run_outcomes(db, record.id)))
    return server_labels(chosen)


def _server(record: RunRecord) -> tuple[str, str | None]:
    """Where a run's model was served: the API's base URL (the backend's name for a local
    model), and the model root the server said it serves, where it said one."""
    backend = record.params.backend
    url, root = backend.get("base_url"), backend.get("server_model_root")
    return (
        url if isinstance(url, str) else record.backend,
        root if isinstance(root, str) else None,
    )


def server_labels(runs: Sequence[TableRun]) -> list[TableRun]:
    """``runs``, each named by its server where runs of its model name were served by
    several (other base URLs, or other recorded model roots): by host and port where those
    tell the servers apart, else by the whole address, and by the model root where roots
    differ.  A name served by one server keeps its plain label."""
    by_name: dict[str, set[tuple[str, str | None]]] = defaultdict(set)
    for run in runs:
        by_name[run.record.model].add(_server(run.record))
    labelled = []
    for run in runs:
        seen = by_name[run.record.model]
        urls = {url for url, _root in seen}
        roots_differ = len({root for _url, root in seen if root is not None}) > 1
        if len(urls) < 2 and not roots_differ:
            labelled.append(run)
            continue
        url, root = _server(run.record)
        parts = []
        if len(urls) > 1:
            hosts = {_host(where) for where in urls}
            parts.append(_host(url) if len(hosts) == len(urls) else url.split("://", 1)[-1])
        if roots_differ:
            parts.append(f"root {root or 'not recorded'}")
        labelled.append(replace(run, server=", ".join(parts)))
    return labelled


def _host(url: str) -> str:
    """``127.0.0.1:8001`` of ``http://127.0.0.1:8001/v1`` (a backend's name stays as it is)."""
    return urlsplit(url).netloc or url


def cut_by_limit(run: TableRun) -> bool:
    """Whether ``--limit`` cut the run short of its whole selection: it was limited and
    evaluated as many items as the limit (fewer: the limit left nothing out)."""
    limit = run.record.filters.get("limit")
    return isinstance(limit, int) and run.record.total >= limit


def latest_series(entries: Sequence[tuple[TableRun, Figures]]) -> list[tuple[TableRun, Figures]]:
    """The entries of the series a cell shows: the newest of those no ``--limit`` cut
    short, so that a quick check after the full run does not stand in for it (a 3-item
    check read 0.00 over the full run's 18 items); where every one was cut, the one on
    the most items, the newest of equals."""
    by_series: dict[str, list[tuple[TableRun, Figures]]] = defaultdict(list)
    for entry in entries:
        by_series[entry[0].series].append(entry)

    def preference(group: list[tuple[TableRun, Figures]]) -> tuple[bool, int, int]:
        cut = any(cut_by_limit(run) for run, _ in group)
        items = max(run.record.total for run, _ in group) if cut else 0
        return not cut, items, max(run.record.id for run, _ in group)

    return max(by_series.values(), key=preference)


def evaluated_items(
    entries: Iterable[tuple[TableRun, Figures]], kind: str | None
) -> frozenset[str]:
    """The items ``entries`` evaluated (of ``kind`` when given)."""
    return frozenset(
        row.item_id
        for run, _figures in entries
        for row in run.outcomes
        if kind is None or row.kind.value == kind
    )


def _run_ids_text(entries: Iterable[tuple[TableRun, Figures]]) -> str:
    """``run 3`` or ``runs 3, 4``."""
    return named("run", sorted({run.record.id for run, _figures in entries}))


def replacement_note(
    where: str,
    entries: Sequence[tuple[TableRun, Figures]],
    latest: Sequence[tuple[TableRun, Figures]],
    kind: str | None = None,
) -> str | None:
    """A sentence when ``latest``, the series a cell shows, evaluated other items than an
    older series of its ``entries``, which it replaced in the table (None when none did)."""
    shown = evaluated_items(latest, kind)
    older = [entry for entry in entries if entry not in latest]
    replaced = [entry for entry in older if evaluated_items([entry], kind) != shown]
    if not replaced:
        return None
    counts = sorted({len(evaluated_items([entry], kind)) for entry in replaced})
    newest_replaced = max(run.record.id for run, _figures in replaced)
    shown_newest = max(run.record.id for run, _figures in latest)
    when = "newer" if newest_replaced > shown_newest else "older"
    cut = " (cut by --limit)" if all(cut_by_limit(run) for run, _ in replaced) else ""
    return (
        f"{where}: shows {_run_ids_text(latest)} on {counted(len(shown), 'item')}; {when} "
        f"{_run_ids_text(replaced)}{cut} evaluated other items "
        f"({' or '.join(map(str, counts))}; `runs table --run {newest_replaced}` shows it)"
    )


def incomplete_series_note(where: str, latest: Sequence[tuple[TableRun, Figures]]) -> str | None:
    """A sentence when the series a cell shows has fewer finished runs than it planned
    (``--repeats 3`` stopped by Ctrl-C: a repeat interrupted, or never started)."""
    repeat = latest[0][0].record.params.repeat if latest else None
    if repeat is None or len(latest) >= repeat.count:
        return None
    return (
        f"{where}: mean over {len(latest)} of {repeat.count} planned runs "
        f"({_run_ids_text(latest)}); the series' other repeats were stopped or never started"
    )


def variant_suffix(permuted: bool, departures: tuple[str, ...]) -> str:
    """A column key's tail for permuted options and a layout or reader not the protocol's
    own: ``/permuted/read-by-lenient``."""
    return ("/permuted" if permuted else "") + "".join(
        f"/{part.replace(' ', '-')}" for part in departures
    )
