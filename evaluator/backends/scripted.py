"""A scripted model: a backend like any other whose answers are written in advance.

``vetbench eval --model scripted:ANSWERS.json`` runs it from a file; tests, demos and
benchmarks build one in Python.  Either way it goes through the same registry, run
loop, extraction and metrics as a real model, so what it shows is what a model
giving those answers would get.

A :class:`Script` says, per item id, the exact text the model outputs (or that the
request fails, as a timeout would: an infrastructure failure, retried on resume),
and what it outputs for every other item.  :meth:`Script.answer_keys` writes the
script of a model that answers every item with its key, except the items given
otherwise: the ground truth for checking that a benchmark finds planted flaws.

In score mode the scripted output is the candidate the model ranks first
(log-likelihood 0); every other candidate gets -1, so without a scripted output the
first candidate wins.

The **oracle** (``--model scripted:oracle``, ``ScriptedBackend(oracle=True)``) needs no
script: it answers every item with its key, in the labels it was shown and the form
its protocol asks for (``答案：ABD`` and ``解析：`` with the item's analysis for CFLUE,
``Correct Order: D, A, C, B`` for EconLogicQA, ``D, A, C, B`` / ``ABD`` otherwise): the
run hands it that text with each request (``reference``).  Every figure of an oracle
run must be perfect; anything less is a fault of the evaluation, not of a model.

Script files (UTF-8):

- ``.json``: an object of item id -> output text;
- ``.jsonl``: one object per line, ``{"item_id": ..., "output": ...}`` or
  ``{"item_id": ..., "error": ...}`` (an infrastructure failure), one line per item;
  ``"seconds": S`` (0 to 86,400: a day) makes that answer take S seconds, as a slow
  model's would (to rehearse the live view, a Ctrl-C, or a kill in the middle of a run
  without loading a model).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from db.answers import format_answer
from db.formats.base import FormatError
from db.items import ItemSnapshot, id_order
from db.json_input import JsonInputError, json_lines, loads
from db.json_types import JsonObject
from db.vocabulary import ORACLE_SCRIPT, SCRIPTED_BACKEND
from db.words import agreeing, counted, few_of
from evaluator.backends.base import (
    BackendError,
    BackendInfo,
    GenerationRequest,
    GenerationResult,
    ScoringRequest,
    ScoringResult,
)
from evaluator.json_lines import read_input_text
from evaluator.stopping import finished_text

__all__ = ["SCRIPTED_BACKEND", "Script", "ScriptedBackend"]

# The longest one scripted answer may take: enough to rehearse any wait, and short of
# what a clock cannot add (``"seconds": 1e308``).
MAX_SCRIPTED_SECONDS = 86_400

RUNNER_UP_LOG_LIKELIHOOD = -1.0  # every candidate but the scripted one, in score mode

BeforeAnswer = Callable[[int, str], None]
"""Called with (position in the request batch, item id) before each answer."""


@dataclass(frozen=True)
class Script:
    """What a scripted model says: the output per item id, and for every other item."""

    outputs: Mapping[str, str] = field(default_factory=dict)
    failures: Mapping[str, str] = field(default_factory=dict)  # item id -> error message
    otherwise: str = ""  # the output for items not listed ("" reads as unparsed)
    seconds: Mapping[str, float] = field(default_factory=dict)  # item id -> time it takes

    def output_for(self, item_id: str) -> str:
        return self.outputs.get(item_id, self.otherwise)

    def with_outputs(self, outputs: Mapping[str, str]) -> Script:
        """The same script with some items' outputs replaced."""
        return replace(self, outputs={**self.outputs, **outputs})

    @classmethod
    def answer_keys(
        cls, items: Iterable[ItemSnapshot], *, except_for: Mapping[str, str] | None = None
    ) -> Script:
        """A model that answers every item with its key (written as a shot writes it,
        ``D, A, C, B`` or ``ABD``), but outputs ``except_for[item_id]`` for those items."""
        keys = {item.id: format_answer(item.kind, item.key) for item in items}
        return cls(outputs={**keys, **(except_for or {})})

    @classmethod
    def from_file(cls, path: Path) -> Script:
        """A script file (see the module docstring); errors name the file and line."""
        try:
            text = read_input_text(path)
        except FormatError as error:
            # A script names a place FILE:LINE, as its other problems do.
            message = f"{path}:{error.line}: not UTF-8 text" if error.line else str(error)
            raise BackendError(message) from None
        if path.suffix.lower() == ".jsonl":
            return _from_lines(path, text)
        try:
            data = loads(text)
        except JsonInputError as error:
            where = f"{path}:{error.lineno}" if error.lineno is not None else str(path)
            raise BackendError(f"{where}: not valid JSON ({error.msg})") from None
        if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
            raise BackendError(f"{path}: expected a JSON object of item id -> output text")
        return cls(outputs={str(item_id): output for item_id, output in data.items()})


def _from_lines(path: Path, text: str) -> Script:
    outputs: dict[str, str] = {}
    failures: dict[str, str] = {}
    seconds: dict[str, float] = {}
    line_of: dict[str, int] = {}  # item id -> the line that scripts it
    for line in json_lines(text.splitlines()):
        where = f"{path}:{line.number}"
        if line.error is not None:
            raise BackendError(f"{where}: not valid JSON ({line.error.msg})")
        record = line.value
        item_id = record.get("item_id") if isinstance(record, dict) else None
        if not isinstance(item_id, str) or not item_id:
            raise BackendError(f"{where}: item_id: must be a non-empty string")
        if item_id in line_of:
            raise BackendError(
                f"{where}: item_id: {item_id} is scripted on line {line_of[item_id]} too; "
                "give each item one line"
            )
        line_of[item_id] = line.number
        if isinstance(record.get("output"), str):
            outputs[item_id] = record["output"]
        elif isinstance(record.get("error"), str):
            failures[item_id] = record["error"]
        else:
            raise BackendError(f"{where}: give output (the model's text) or error (a failure)")
        if "seconds" in record:
            taken = record["seconds"]
            if (
                isinstance(taken, bool)
                or not isinstance(taken, int | float)
                or not 0 <= taken <= MAX_SCRIPTED_SECONDS
            ):
                raise BackendError(
                    f"{where}: seconds: must be a number of seconds, 0 or more and at most "
                    f"{MAX_SCRIPTED_SECONDS:,} (a day)"
                )
            seconds[item_id] = float(taken)
    return Script(outputs=outputs, failures=failures, seconds=seconds)


class ScriptedBackend:
    """The :class:`~evaluator.backends.base.Backend` that answers from a :class:`Script`.

    It keeps what it was asked (``generate_calls``, ``score_calls``, ``requests_seen``),
    so a test can check the requests a run sends.  ``before_answer`` runs before each
    answer; raising there behaves like a model that crashes (or a Ctrl-C), and waiting
    there like a slow one.
    """

    supports_scoring = True

    def __init__(
        self,
        script: Script | Mapping[str, str] | None = None,
        *,
        model: str = SCRIPTED_BACKEND,
        before_answer: BeforeAnswer | None = None,
        latency_s: float = 0.0,
        params: Mapping[str, str] | None = None,
        oracle: bool = False,
    ) -> None:
        self.script = script if isinstance(script, Script) else Script(outputs=dict(script or {}))
        self.wants_reference = oracle  # the run sends each item's key text
        self.before_answer = before_answer
        self.latency_s = latency_s  # reported for every answer
        recorded: JsonObject = {"device": "none", **(params or {})}
        if oracle:  # what keeps its answers out of the models' evidence (db.model_answers)
            recorded["script"] = ORACLE_SCRIPT
        self.info = BackendInfo(backend=SCRIPTED_BACKEND, model=model, params=recorded)
        self.generate_calls: list[list[str]] = []
        self.score_calls: list[list[ScoringRequest]] = []
        self.requests_seen: dict[str, GenerationRequest] = {}
        self.closed = False

    def __repr__(self) -> str:
        return f"ScriptedBackend(model={self.info.model!r})"

    def notes_for(self, item_ids: Collection[str]) -> tuple[str, ...]:
        """What to say before a run of ``item_ids``: the items the script has no answer
        for (they read as unparsed) and the ids it answers that are not among them (a
        misspelt id, or another set's script).  Nothing for the oracle."""
        if self.wants_reference:
            return ()
        scripted = set(self.script.outputs) | set(self.script.failures)
        missing = sorted((i for i in item_ids if i not in scripted), key=id_order)
        unused = sorted(scripted.difference(item_ids), key=id_order)
        notes = []
        if missing:
            notes.append(
                f"the script has no answer for {len(missing):,} of the "
                f"{counted(len(item_ids), 'item')} evaluated ({few_of(missing)}): "
                f"{agreeing(len(missing), 'it reads', 'they read')} as unparsed"
            )
        if unused:
            notes.append(
                f"the script answers {counted(len(unused), 'item')} not evaluated here: "
                f"{few_of(unused)}"
            )
        return tuple(notes)

    def _answering(self, position: int, item_id: str) -> tuple[str | None, float]:
        """Run the hook and take the answer's scripted time; the scripted failure of one
        answer, if any, and the latency to report."""
        if self.before_answer is not None:
            self.before_answer(position, item_id)
        taken = self.script.seconds.get(item_id, 0.0)
        if taken:
            time.sleep(taken)
        return self.script.failures.get(item_id), taken or self.latency_s

    def generate(self, requests: Sequence[GenerationRequest]) -> Iterator[GenerationResult]:
        """Each request's scripted output, cut at its first stop string, in request order."""
        self.generate_calls.append([request.item_id for request in requests])
        for position, request in enumerate(requests):
            failure, latency = self._answering(position, request.item_id)
            self.requests_seen[request.item_id] = request
            text = request.prompt.text
            if failure is not None:
                yield GenerationResult(request.item_id, text, "", latency, error=failure)
                continue
            said = self._said(request.item_id, request.reference)
            output = finished_text(said, request.stop)
            yield GenerationResult(request.item_id, text, output, latency)

    def score(self, requests: Sequence[ScoringRequest]) -> Iterator[ScoringResult]:
        """Log-likelihood 0 for the candidate that is the scripted output, -1 for the rest."""
        self.score_calls.append(list(requests))
        for position, request in enumerate(requests):
            failure, latency = self._answering(position, request.item_id)
            text = request.prompt.text
            if failure is not None:
                yield ScoringResult(request.item_id, text, (), latency, error=failure)
                continue
            said = self._said(request.item_id, request.reference).strip()
            scores = tuple(
                0.0 if said and candidate.strip() == said else RUNNER_UP_LOG_LIKELIHOOD
                for candidate in request.candidates
            )
            yield ScoringResult(request.item_id, text, scores, latency)

    def _said(self, item_id: str, reference: str | None) -> str:
        if self.wants_reference:
            if reference is None:
                raise BackendError(f"the oracle was sent no key text for item {item_id}")
            return reference
        return self.script.output_for(item_id)

    def close(self) -> None:
        self.closed = True
