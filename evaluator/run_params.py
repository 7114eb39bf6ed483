"""What a run records about how it evaluates: :class:`RunParams`, the typed ``EvalRun.params``.

A run's ``params`` column holds one JSON object: the backend's own settings (device,
dtype, base_url ... whatever ``BackendInfo.params`` gave) at the top level, then the
run's settings (seed, templates, shots, protocol, extractors ...), then what its
latest execution session recorded (process id, start, device).  Every reader goes
through :meth:`RunParams.from_json`, which reads every run stored so far: runs from
before protocols, extractors, budgets, permutation or repeats were recorded read as
custom runs with vetbench's layout and the lenient reader; :meth:`RunParams.to_json`
writes the object back key for key (``--json`` shows it as stored).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING

from db.json_types import FieldsAsJson, JsonObject, JsonValue
from db.vocabulary import EvalProtocol, ItemKind
from db.words import counted

if TYPE_CHECKING:
    from datetime import datetime

__all__ = [
    "KindShots",
    "Repeat",
    "RunParams",
    "RunSession",
    "ShotCounts",
    "ShotFileRef",
    "ShotRef",
]

DEFAULT_LAYOUT = "vetbench"  # evaluator.prompts.DEFAULT_LAYOUT (no import: prompts is heavier)
DEFAULT_EXTRACTOR = "lenient"  # evaluator.extractors.LENIENT
DEFAULT_SEED = 1234  # evaluator.prompts.DEFAULT_SHOT_SEED


@dataclass(frozen=True)
class Repeat:
    """Which of a series of runs this is (``vetbench eval --repeats N``, or a protocol's
    shot settings): runs of one series share ``series`` and differ in shots or seed."""

    series: str
    index: int  # 0-based
    count: int  # repeats per setting

    def to_json(self) -> JsonObject:
        return {"series": self.series, "index": self.index, "of": self.count}

    @classmethod
    def from_json(cls, data: JsonValue) -> Repeat | None:
        if not isinstance(data, dict) or not isinstance(data.get("index"), int):
            return None
        count = data.get("of")
        return cls(str(data.get("series") or ""), _int(data["index"]), _int(count, 1))


@dataclass(frozen=True)
class ShotRef(FieldsAsJson):
    """One shot a run recorded: the item and the revision its prompt showed."""

    id: str
    revision: int


@dataclass(frozen=True)
class ShotFileRef(FieldsAsJson):
    """A shot file a run read, and the SHA-256 of its bytes then."""

    path: str
    sha256: str


@dataclass(frozen=True)
class KindShots:
    """The shots one kind of a run's items asked for and the shots its prompts got."""

    kind: str
    asked: int
    used: tuple[int, ...]
    """The distinct counts its prompt groups got, lowest first (orders of different lengths
    are groups of their own); () when the run recorded no shots (taken as asked)."""

    @property
    def short(self) -> bool:
        return bool(self.used) and self.used[0] < self.asked

    @property
    def used_text(self) -> str:
        """``5``, or ``3–5`` when its groups got different counts."""
        used = self.used or (self.asked,)
        return str(used[0]) if len(used) == 1 else f"{used[0]}–{used[-1]}"

    def label(self) -> str:
        """``ordering 5-shot``, ``ordering 0-shot (5 asked)``."""
        asked = f" ({self.asked} asked)" if self.short else ""
        return f"{self.kind} {self.used_text}-shot{asked}"


@dataclass(frozen=True)
class ShotCounts:
    """The shots a run asked for and got, per kind of its items (the kinds in their
    vocabulary order)."""

    shots: int  # the run's number of shots (``EvalRun.shots``)
    kinds: tuple[KindShots, ...]

    @property
    def short(self) -> bool:
        """Some kind got fewer shots than it asked for."""
        return any(kind.short for kind in self.kinds)

    @property
    def plain(self) -> bool:
        """Every kind asked for the run's shots and got them: ``5-shot`` says it all."""
        return all(kind.asked == self.shots and not kind.short for kind in self.kinds)

    @property
    def used_text(self) -> str:
        """The shots its prompts got: ``5``, ``0``, or ``0–5`` over kinds and groups."""
        used = sorted({n for kind in self.kinds for n in kind.used or (kind.asked,)})
        if not used:
            return str(self.shots)
        return str(used[0]) if len(used) == 1 else f"{used[0]}–{used[-1]}"

    def label(self) -> str:
        """``5-shot`` when plain, else each kind: ``ordering 0-shot (5 asked), single 5-shot``."""
        if self.plain:
            return f"{self.shots}-shot"
        return ", ".join(kind.label() for kind in self.kinds)

    def of_kind(self, kind: str) -> KindShots:
        found = next((entry for entry in self.kinds if entry.kind == kind), None)
        return found or KindShots(kind, self.shots, ())


@dataclass(frozen=True)
class RunSession:
    """What a run's latest execution session recorded: readers measure speed from it, and
    a second process refuses to run a run whose process is still alive."""

    pid: int | None
    started_at: str | None  # ISO timestamp
    done_before: int  # items the run had answered when this session began
    device: JsonValue  # the backend's device for this session (None when it has none)

    @classmethod
    def begin(
        cls, pid: int, started_at: datetime, done_before: int, device: JsonValue
    ) -> RunSession:
        return cls(pid, started_at.isoformat(), done_before, device)

    def to_json(self) -> JsonObject:
        return {
            "pid": self.pid,
            "session_started_at": self.started_at,
            "session_done_before": self.done_before,
            "session_device": self.device,
        }


_SESSION_KEYS = frozenset(("pid", "session_started_at", "session_done_before", "session_device"))


@dataclass(frozen=True)
class RunParams:
    """How a run evaluates, as recorded when it was created (and its latest session)."""

    seed: int = DEFAULT_SEED
    template_hash: str | None = None
    templates_dir: str | None = None
    templates_read: tuple[str, ...] = ()
    """The files of ``templates_dir`` in use (the others were the built-in ones)."""
    shot_file: str | None = None
    shot_file_sha256: str | None = None
    more_shot_files: tuple[ShotFileRef, ...] = ()
    """The shot files after the first (``shot_file``), when a run read several."""
    shots_used: Mapping[str, tuple[ShotRef, ...]] = field(default_factory=dict)
    """The shots per prompt group (``ordering/en``), in the order the prompt shows them."""
    shot_notes: tuple[str, ...] = ()
    """Where the shots fell short (too few, or not yet approved)."""
    revisions: Mapping[str, int] = field(default_factory=dict)  # item id -> revision evaluated
    excluded: Mapping[str, str] = field(default_factory=dict)
    """Items chosen but left out, id -> why: a kind the protocol does not ask, too many
    candidates for score mode (``ProtocolSpec.leaves_out``, ``run_create``)."""
    protocol: EvalProtocol = EvalProtocol.CUSTOM
    layout: str = DEFAULT_LAYOUT
    extractors: tuple[str, ...] = (DEFAULT_EXTRACTOR,)
    """The readers of the answers: the first decides, the others are reported."""
    shots_by_kind: Mapping[str, int] = field(default_factory=dict)
    max_new_tokens: int | None = None  # None: the protocol's (or the kind's) budget
    permute_options: bool = False
    repeat: Repeat | None = None
    answer_budget: JsonValue = None
    """The budget the run works with, in words or tokens (None: runs from before it was
    recorded); ``max_new_tokens`` is what was asked."""
    shots_from: str | None = None
    """The source or status the shots were drawn from (``--shots-from``; None: every item
    outside the evaluated set, or the shot file)."""
    wording: Mapping[str, JsonValue] | None = None
    """Where CFLUE's prompt wording came from: ``{"source": "built-in"}``, a templates
    folder, or ``{"source": "cflue-repo", "path": ..., "sha256": ...}``."""
    backend: Mapping[str, JsonValue] = field(default_factory=dict)
    """The backend's own settings (``BackendInfo.params``), as it recorded them."""
    session: RunSession | None = None

    def to_json(self, *, with_revisions: bool = True) -> JsonObject:
        """The stored object: backend settings, the run's settings, then its session."""
        data: JsonObject = {
            **self.backend,
            "seed": self.seed,
            "template_hash": self.template_hash,
            "templates_dir": self.templates_dir,
            "shot_file": self.shot_file,
            "shot_file_sha256": self.shot_file_sha256,
            "shots_used": {
                group: [shot.to_json() for shot in shots]
                for group, shots in self.shots_used.items()
            },
            "shot_notes": list(self.shot_notes),
            "revisions": dict(self.revisions),
            "excluded": dict(self.excluded),
            "protocol": self.protocol.value,
            "layout": self.layout,
            "extractors": list(self.extractors),
            "shots_by_kind": dict(self.shots_by_kind),
            "max_new_tokens": self.max_new_tokens,
            "permute_options": self.permute_options,
            "repeat": None if self.repeat is None else self.repeat.to_json(),
        }
        # Written only when recorded, so older runs read back key for key.
        if self.answer_budget is not None:
            data["answer_budget"] = self.answer_budget
        if self.wording is not None:
            data["wording"] = dict(self.wording)
        if self.shots_from is not None:
            data["shots_from"] = self.shots_from
        if self.templates_read:
            data["templates_read"] = list(self.templates_read)
        if self.more_shot_files:
            data["more_shot_files"] = [ref.to_json() for ref in self.more_shot_files]
        if not with_revisions:
            del data["revisions"]  # a map per item, for resuming; readers need only a count
        if self.session is not None:
            data.update(self.session.to_json())
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, JsonValue]) -> RunParams:
        """A stored ``params`` object read back; keys an older run lacks take the defaults
        runs had before they were recorded."""
        protocol = data.get("protocol")
        extractors = [name for name in _list(data.get("extractors")) if isinstance(name, str)]
        budget = data.get("max_new_tokens")
        return cls(
            seed=_int(data.get("seed"), DEFAULT_SEED),
            template_hash=_text(data.get("template_hash")),
            templates_dir=_text(data.get("templates_dir")),
            templates_read=tuple(str(name) for name in _list(data.get("templates_read"))),
            shot_file=_text(data.get("shot_file")),
            shot_file_sha256=_text(data.get("shot_file_sha256")),
            more_shot_files=tuple(
                ShotFileRef(str(ref.get("path")), str(ref.get("sha256")))
                for ref in _list(data.get("more_shot_files"))
                if isinstance(ref, dict)
            ),
            shots_used={
                str(group): tuple(
                    ShotRef(str(shot.get("id")), _int(shot.get("revision"), 1))
                    for shot in _list(shots)
                    if isinstance(shot, dict)
                )
                for group, shots in _dict(data.get("shots_used")).items()
            },
            shot_notes=tuple(str(note) for note in _list(data.get("shot_notes"))),
            revisions={
                str(item_id): number
                for item_id, number in _dict(data.get("revisions")).items()
                if isinstance(number, int)
            },
            excluded={str(k): str(v) for k, v in _dict(data.get("excluded")).items()},
            protocol=EvalProtocol(protocol) if protocol in _PROTOCOLS else EvalProtocol.CUSTOM,
            layout=_text(data.get("layout")) or DEFAULT_LAYOUT,
            extractors=tuple(extractors) or (DEFAULT_EXTRACTOR,),
            shots_by_kind={
                str(kind): count
                for kind, count in _dict(data.get("shots_by_kind")).items()
                if isinstance(count, int)
            },
            max_new_tokens=budget if isinstance(budget, int) and budget > 0 else None,
            permute_options=data.get("permute_options") is True,
            repeat=Repeat.from_json(data.get("repeat")),
            answer_budget=data.get("answer_budget"),
            shots_from=_text(data.get("shots_from")),
            wording=_dict(data["wording"]) if isinstance(data.get("wording"), dict) else None,
            # Every other key is the backend's (keys this version does not know too).
            backend={k: v for k, v in data.items() if k not in _RUN_KEYS | _SESSION_KEYS},
            session=_session(data),
        )

    def excluded_notes(self) -> tuple[str, ...]:
        """The items left out, counted per reason: ``11 ordering items left out: the cflue
        protocol reads multiple-choice items only`` (a reason ending in its kind, as
        ``(ordering)``, names the kind in the count)."""
        counts = Counter(self.excluded.values())
        notes = []
        for reason, count in counts.items():
            what, kind = reason, ""
            head, _, tail = reason.rpartition(" (")
            if head and tail.endswith(")") and tail[:-1] in _KINDS:
                what, kind = head, tail[:-1] + " "
            notes.append(f"{counted(count, kind + 'item')} left out: {what}")
        return tuple(notes)

    def with_session(
        self, session: RunSession, backend: Mapping[str, JsonValue] | None = None
    ) -> RunParams:
        """These params with the latest session's record; ``backend``: the backend settings
        that session ran with where they replace the stored ones (a resumed run's API
        settings given again), so the stored params say what the run last used."""
        merged = self.backend if backend is None else {**self.backend, **backend}
        return replace(self, session=session, backend=merged)

    @classmethod
    def stored_shot_counts(cls, data: Mapping[str, JsonValue], shots: int) -> ShotCounts:
        """:meth:`shot_counts` of a stored ``params`` object, reading only its shot keys
        (a run list reads many runs, each with a revision per item)."""
        keys = ("shots_used", "shots_by_kind")
        return cls.from_json({key: data[key] for key in keys if key in data}).shot_counts(shots)

    @classmethod
    def stored_protocol(cls, data: Mapping[str, JsonValue]) -> EvalProtocol:
        """The protocol of a stored ``params`` object, reading only that key."""
        return cls.from_json({"protocol": data["protocol"]} if "protocol" in data else {}).protocol

    @property
    def template_languages(self) -> frozenset[str]:
        """The template languages its prompts were written in: those of its prompt groups
        (``ordering/zh/4``: zh), every one of which ``shots_used`` names."""
        return frozenset(group.split("/")[1] for group in self.shots_used if "/" in group)

    def shot_counts(self, shots: int) -> ShotCounts:
        """The shots each kind asked for (``shots_by_kind``, else ``shots``) and got (the
        recorded ``shots_used``, grouped by the kind that starts a group's name)."""
        used: dict[str, set[int]] = {}
        for group, refs in self.shots_used.items():
            used.setdefault(group.split("/", 1)[0], set()).add(len(refs))
        names = set(used) | set(self.shots_by_kind)
        order = [kind.value for kind in ItemKind]
        return ShotCounts(
            shots,
            tuple(
                KindShots(
                    kind, self.shots_by_kind.get(kind, shots), tuple(sorted(used.get(kind, ())))
                )
                for kind in sorted(names, key=lambda k: (_rank(order, k), k))
            ),
        )


_PROTOCOLS = frozenset(protocol.value for protocol in EvalProtocol)
_KINDS = frozenset(kind.value for kind in ItemKind)
# The run's own keys are its fields' names (``to_json``); the backend's and the session's
# are written beside them, so they are not among these.
_RUN_KEYS = frozenset(f.name for f in fields(RunParams)) - {"backend", "session"}


def _session(data: Mapping[str, JsonValue]) -> RunSession | None:
    if not any(key in data for key in _SESSION_KEYS):
        return None
    pid = data.get("pid")
    return RunSession(
        pid=pid if isinstance(pid, int) and not isinstance(pid, bool) else None,
        started_at=_text(data.get("session_started_at")),
        done_before=_int(data.get("session_done_before"), 0),
        device=data.get("session_device"),
    )


def _rank(order: list[str], name: str) -> int:
    return order.index(name) if name in order else len(order)


def _int(value: JsonValue, default: int = 0) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _text(value: JsonValue) -> str | None:
    return value if isinstance(value, str) else None


def _list(value: JsonValue) -> list[JsonValue]:
    return value if isinstance(value, list) else []


def _dict(value: JsonValue) -> dict[str, JsonValue]:
    return value if isinstance(value, dict) else {}
