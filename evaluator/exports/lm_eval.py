"""Export items as an lm-evaluation-harness task folder that scores them the way vetbench does.

``lm_eval --model hf --model_args pretrained=MODEL,softmax_dtype=float32 --tasks vetbench --include_path DIR``

Same prompts: each document carries the exact prompt vetbench builds for it
(``evaluator.prompts.build_prompt``: instructions, the seeded shots, the question),
and the tasks take it as is (``num_fewshot: 0``; the shots are already inside).
Same decoding: ``generate_until`` with greedy decoding, the same stop sequences and
answer budget as each item gets from ``vetbench eval`` (a task has one of each, so a kind
whose items differ in them, with more options or in another language, gets a task for
each), and like vetbench it reads the whole text up to a stop string
(``read_answer``).  Same
extraction and metrics: the folder's ``utils.py`` imports vetbench's
``evaluator.extraction`` (through ``read_answer``) and ``evaluator.metrics`` from the
installed vetbench, so both tools read answers with one piece of code.

What the folder holds:

- ``<name>_<kind>.yaml``: one generation task per item kind present, with
  ``exact_match``, ``unparsed`` and ``pairwise_accuracy`` (ordering),
  ``weighted_f1`` (multiple choice, CFLUE's) and ``set_f1`` (multi-answer); where the
  kind's items differ in answer budget (their option count) or stop sequences (their
  language), one task per budget and stops instead (``<name>_<kind>_5_options``,
  ``<name>_<kind>_zh``), and ``_<name>_<kind>.yaml``, the group ``<name>_<kind>`` over
  them (the per-item means weighted by size, so the kind's means over all its items);
- CFLUE's weighted F1 of such a kind: lm-eval's groups can only average their tasks'
  figures, and a weighted F1 over all the kind's items is no average of its tasks' (the
  classes' supports and predictions pool across tasks), so the group reports none and
  each task's ``weighted_f1`` is over its own items only.  The kind's, as the paper and
  ``vetbench eval`` compute it, is what ``python DIR/utils.py SAMPLES.jsonl...`` prints
  from lm-eval's ``--log_samples`` files (:func:`weighted_f1_by_kind`); the manifest's
  ``group_figures`` says this per group;
- ``_<name>.yaml``: the group ``<name>`` over the kinds (exact match weighted by size);
- ``<name>_mc_<kind>.yaml`` and the group ``<name>_mc``: score mode, the
  ``multiple_choice`` variant ranking every candidate answer by log-likelihood
  (``acc``, ``acc_norm``), one task per answer delimiter (``<name>_mc_<kind>_<language>``
  where a kind mixes them): the delimiter is the task's ``target_delimiter``, which
  lm-eval leaves out under ``--apply_chat_template`` as vetbench does. Candidates are
  the choice letters for single-answer and true/false items, every non-empty set of
  letters for multi-answer items, and every order for ordering items; items whose
  candidates would exceed ``evaluator.kinds.MAX_SCORE_CANDIDATES`` are left out of
  score mode (the manifest names them);
- ``data/<task>.jsonl`` and ``utils.py``; ``vetbench-export.json`` (the manifest).

A model with a chat template sees the prompt through it in ``vetbench eval``; pass
``--apply_chat_template`` to lm_eval for the same text.  ``softmax_dtype=float32``:
vetbench takes the log-softmax of a half-precision model's logits in float32, and
lm-eval takes it in the model's dtype unless told otherwise; in bfloat16 its coarser
log-likelihoods tie between candidates that vetbench tells apart (on an H200, 17 of 51
items tied, each then ranked by candidate order; with ``softmax_dtype=float32`` both
ranked 51 of 51 alike, as in float32).
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

import yaml

from db.engine import Database
from db.items import ItemSnapshot
from db.json_input import json_lines
from db.vocabulary import ItemKind
from db.words import counted
from evaluator.backends.base import Prompt
from evaluator.exports.folder import ExportSummary, select_items, write_folder
from evaluator.exports.selection import APPROVED_ITEMS, ExportError, Selection
from evaluator.kinds import Metric, kind_spec
from evaluator.metrics import score_answer, weighted_f1
from evaluator.prompts import (
    DEFAULT_SHOT_SEED,
    PromptTemplates,
    ShotGroup,
    answer_text,
    build_prompt,
    load_templates,
    prefix_shots,
    shot_pool,
    stop_sequences,
    template_language,
)

DEFAULT_TASK_NAME = "vetbench"
DATA_DIR = "data"

UTILS_PY = '''\
"""Helpers for the vetbench tasks in this folder (written by `vetbench export --format lm-eval`).

Answers are read and scored by vetbench itself (`evaluator.exports.lm_eval.read_answer`,
which applies vetbench's extraction where `vetbench eval` would have stopped generating,
and `evaluator.metrics`), so vetbench must be installed in the environment running lm_eval.
"""

from __future__ import annotations

from pathlib import Path

import datasets

from evaluator.exports.lm_eval import score_document
from evaluator.metrics import weighted_f1

HERE = Path(__file__).resolve().parent


def load_docs(data_file: str, **_metadata):
    """The task's documents, read from this folder wherever it has been moved."""
    test = datasets.load_dataset("json", data_files=str(HERE / data_file), split="train")
    return datasets.DatasetDict({"test": test})


def process_results(doc, results):
    """Read the answer from the generated text and score it the way `vetbench eval` does."""
    return score_document(doc["kind"], results[0], doc["labels"], doc["answer"])


def aggregate_weighted_f1(pairs):
    """CFLUE's weighted F1 over (key, parsed answer) pairs; unparsed is a class of its own."""
    keys = [key for key, _ in pairs]
    predictions = [parsed for _, parsed in pairs]
    return weighted_f1(keys, predictions)


if __name__ == "__main__":
    # `python utils.py SAMPLES.jsonl...`: each kind's weighted F1 over all its items, from
    # lm-eval's --log_samples files of one run (a kind split into tasks has no group figure).
    import sys

    from evaluator.exports.lm_eval import print_weighted_f1_by_kind

    sys.exit(print_weighted_f1_by_kind(sys.argv[1:]))
'''


class _FunctionTag:
    """A ``!function module.name`` value in a task YAML (lm-eval resolves it on load)."""

    def __init__(self, target: str) -> None:
        self.target = target


def _represent_function(dumper: yaml.SafeDumper, value: _FunctionTag) -> yaml.Node:
    return dumper.represent_scalar("!function", value.target)


class _TaskDumper(yaml.SafeDumper):
    pass


_TaskDumper.add_representer(_FunctionTag, _represent_function)


def _dump_yaml(config: Mapping[str, object]) -> str:
    return yaml.dump(config, Dumper=_TaskDumper, sort_keys=False, allow_unicode=True, width=100)


def read_answer(kind: ItemKind | str, output: str, labels: Sequence[str]) -> str | None:
    """The answer vetbench reads from ``output``, generated until a stop string.

    Both tools generate on to a stop string or the token budget and read all of it
    (``evaluator.stopping``: no early stop, as a later span may win), each item with the
    budget and stops ``vetbench eval`` gives it (its task's: see :func:`_generation_tasks`).
    """
    return kind_spec(kind).extract(output, labels)


def score_document(
    kind: ItemKind | str, output: str, labels: Sequence[str], key: str
) -> dict[str, float | tuple[str, str | None]]:
    """One document's figures for lm-eval: exact match, unparsed, and the kind's own metrics
    (a per-item value, or the ``(key, answer)`` pair that weighted F1 aggregates)."""
    parsed = read_answer(kind, output, labels)
    score = score_answer(kind, parsed, key)
    figures: dict[str, float | tuple[str, str | None]] = {
        Metric.EXACT_MATCH.value: float(score.correct),
        "unparsed": float(parsed is None),
    }
    for metric in kind_spec(kind).metrics:
        if metric is Metric.PAIRWISE_ACCURACY:
            figures[metric.value] = float(score.pairwise or 0.0)
        elif metric is Metric.WEIGHTED_F1:
            figures[metric.value] = (key, parsed)
        elif metric is Metric.SET_F1:
            figures[metric.value] = float(score.set_f1 or 0.0)
    return figures


@dataclass(frozen=True)
class KindWeightedF1:
    """CFLUE's weighted F1 of one kind over all its items in an lm-eval run."""

    kind: str
    weighted_f1: float
    items: int


def weighted_f1_by_kind(samples: Iterable[Mapping[str, Any]]) -> list[KindWeightedF1]:
    """Each kind's weighted F1 over all its items, from lm-eval's logged samples (each
    holds its document and the ``(key, parsed answer)`` pair its task aggregates), computed
    as ``vetbench eval`` computes it (:func:`evaluator.metrics.weighted_f1`).  A kind split
    into tasks by budget or language has no such figure in lm-eval's results (see the
    module docstring); samples without the pair (other kinds, score mode) are passed over.
    An item met twice (two runs' files given together) is refused: figures of one run only."""
    pairs: dict[str, dict[str, tuple[str, str | None]]] = defaultdict(dict)
    for sample in samples:
        pair, doc = sample.get(Metric.WEIGHTED_F1.value), sample.get("doc")
        if pair is None or not isinstance(doc, Mapping):
            continue
        if not (isinstance(pair, list | tuple) and len(pair) == 2 and {"id", "kind"} <= set(doc)):
            raise ExportError(
                f"not a sample of a vetbench task: weighted_f1 {pair!r} (a [key, answer] "
                f"pair of a document with an id and kind), document {dict(doc)!r:.200}"
            )
        key, parsed = pair
        if doc["id"] in pairs[doc["kind"]]:
            raise ExportError(
                f"item {doc['id']} is in the samples twice: give the --log_samples files "
                "of one lm-eval run"
            )
        pairs[doc["kind"]][doc["id"]] = (key, parsed)
    return [
        KindWeightedF1(
            kind,
            weighted_f1([key for key, _ in found.values()], [p for _, p in found.values()]),
            len(found),
        )
        for kind, found in sorted(pairs.items())
    ]


def read_samples(paths: Sequence[Path]) -> list[dict[str, Any]]:
    """The samples in lm-eval's ``samples_<task>_<time>.jsonl`` files (``--log_samples``);
    a line that is not a JSON object is refused with its file and line."""
    samples = []
    for path in paths:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise ExportError(f"{path}: cannot read it ({error})") from None
        for line in json_lines(text.splitlines()):
            if line.error is not None or not isinstance(line.value, dict):
                why = line.error or "not a JSON object"
                raise ExportError(f"{path}, line {line.number}: not an lm-eval sample ({why})")
            samples.append(line.value)
    return samples


def print_weighted_f1_by_kind(arguments: Sequence[str]) -> int:
    """``python utils.py SAMPLES.jsonl...`` in an exported folder: prints each kind's
    weighted F1 over all its items; returns the exit status (2: nothing to read)."""
    if not arguments:
        print(
            "usage: python utils.py SAMPLES.jsonl... (lm_eval --log_samples files of one run)",
            file=sys.stderr,
        )
        return 2
    try:
        figures = weighted_f1_by_kind(read_samples([Path(argument) for argument in arguments]))
    except ExportError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    if not figures:
        print("error: no sample with a weighted_f1 pair in these files", file=sys.stderr)
        return 1
    for found in figures:
        print(
            f"{found.kind}: weighted F1 {found.weighted_f1:.4f} over {counted(found.items, 'item')}"
        )
    return 0


def answer_delimiter(templates: PromptTemplates, language: str) -> str:
    """What the shot template writes between the answer cue and the answer (``" "`` in
    English: ``Answer: B``; nothing in Chinese: ``答案：B``)."""
    rendered = templates.render(
        f"shot.{template_language(language)}.txt", question_block="\x00", answer="\x01"
    )
    start, end = rendered.find("\x00"), rendered.find("\x01")
    return rendered[start + 1 : end] if 0 <= start < end else " "


def _prompts_for(
    items: Sequence[ItemSnapshot],
    pool: Sequence[ItemSnapshot],
    *,
    shots: int,
    seed: int,
    from_shot_file: bool,
    templates: PromptTemplates,
) -> tuple[dict[str, Prompt], dict[str, list[str]]]:
    """The prompt of every item, and the shots used per prefix (named as a run names it)."""
    shots_by_prefix = prefix_shots(
        items, pool, dict.fromkeys(ItemKind, shots), seed=seed, from_shot_file=from_shot_file
    )
    prompts = {
        item.id: build_prompt(item, shots_by_prefix[ShotGroup.of(item)], templates)
        for item in items
    }
    used = {group.name: [s.id for s in chosen] for group, chosen in shots_by_prefix.items()}
    return prompts, used


class _Document(TypedDict):
    """One line of a generation task's data file, as ``utils.load_docs`` hands it to lm-eval."""

    id: str
    kind: str
    source: str
    language: str
    revision: int
    labels: list[str]
    answer: str
    answer_text: str
    prompt: str
    prefix: str
    question: str
    stop: list[str]
    max_new_tokens: int
    answer_delimiter: str


class _ScoreDocument(_Document):
    """One line of a score-mode (``multiple_choice``) task's data file: the candidates too."""

    candidates: list[str]
    choice_texts: list[str]
    target_index: int


def _document(item: ItemSnapshot, prompt: Prompt, templates: PromptTemplates) -> _Document:
    language = template_language(item.language)
    return {
        "id": item.id,
        "kind": item.kind.value,
        "source": item.source,
        "language": item.language,
        "revision": item.revision,
        "labels": item.labels,
        "answer": item.key,
        "answer_text": answer_text(item.kind, item.key),
        "prompt": prompt.text,
        "prefix": prompt.prefix,
        "question": prompt.question,
        "stop": list(stop_sequences(item.kind, templates, language)),
        "max_new_tokens": kind_spec(item.kind).max_new_tokens(len(item.labels)),
        "answer_delimiter": answer_delimiter(templates, language),
    }


def _with_candidates(document: _Document, item: ItemSnapshot) -> _ScoreDocument | None:
    candidates = kind_spec(item.kind).score_candidates(item.labels)
    if candidates is None:
        return None
    return {
        **document,
        "candidates": candidates,
        # the delimiter is the task's target_delimiter (see _score_tasks)
        "choice_texts": [answer_text(item.kind, c) for c in candidates],
        "target_index": candidates.index(item.key),
    }


def _score_tasks(
    base_name: str, scored: list[_ScoreDocument]
) -> list[tuple[str, str, list[_ScoreDocument]]]:
    """The score-mode tasks of one kind, as (name, answer delimiter, documents): one per
    delimiter, since lm-eval writes a task's ``target_delimiter`` before every candidate
    and leaves it out under ``--apply_chat_template``, just as ``vetbench eval`` drops
    leading whitespace where the answer opens the assistant's turn.  A kind whose items
    share one delimiter keeps the plain name; otherwise each task is suffixed with its
    template language (``vetbench_mc_single_en``), which decides the delimiter."""
    by_delimiter: dict[str, list[_ScoreDocument]] = defaultdict(list)
    for doc in scored:
        by_delimiter[doc["answer_delimiter"]].append(doc)
    if len(by_delimiter) == 1:
        [(delimiter, docs)] = by_delimiter.items()
        return [(base_name, delimiter, docs)]
    named = {
        f"{base_name}_{template_language(docs[0]['language'])}": (delimiter, docs)
        for delimiter, docs in by_delimiter.items()
    }
    return [(name, *named[name]) for name in sorted(named)]


def _task_head(name: str, data_file: str, output_type: str) -> dict[str, object]:
    """The first keys of every task's YAML: its name, documents and output type."""
    return {
        "task": name,
        "custom_dataset": _FunctionTag("utils.load_docs"),
        "dataset_kwargs": {"data_file": data_file},
        "test_split": "test",
        "output_type": output_type,
        "num_fewshot": 0,
        "doc_to_text": "prompt",
    }


def _generation_tasks(base_name: str, docs: list[_Document]) -> list[tuple[str, list[_Document]]]:
    """The generation tasks of one kind, as (name, documents): one per answer budget and
    stop sequences, since lm-eval gives a task's items one ``max_gen_toks`` and one
    ``until``, and ``vetbench eval`` gives each item its own (the budget grows with the
    option count, the stops come with the language's template).  A kind whose items share
    them keeps the plain name; otherwise each task is suffixed with what tells it apart:
    the template language (``vetbench_multi_zh``), the option count
    (``vetbench_multi_5_options``)."""
    by_settings: dict[tuple[int, tuple[str, ...]], list[_Document]] = defaultdict(list)
    for doc in docs:
        by_settings[doc["max_new_tokens"], tuple(doc["stop"])].append(doc)
    if len(by_settings) == 1:
        return [(base_name, docs)]
    stops_differ = len({stops for _, stops in by_settings}) > 1
    budgets_differ = len({budget for budget, _ in by_settings}) > 1
    named: dict[str, list[_Document]] = {}
    for group in by_settings.values():
        first = group[0]
        language = f"_{template_language(first['language'])}" if stops_differ else ""
        options = f"_{len(first['labels'])}_options" if budgets_differ else ""
        named[f"{base_name}{language}{options}"] = group
    assert len(named) == len(by_settings)  # the language decides the stops, the count the budget
    return sorted(named.items())


def _generation_task(name: str, data_file: str, docs: list[_Document], kind: str) -> str:
    """A ``generate_until`` task over documents that share one budget and one set of
    stops (:func:`_generation_tasks`)."""
    ((budget, stops),) = {(doc["max_new_tokens"], tuple(doc["stop"])) for doc in docs}
    metrics = [
        {
            "metric": metric.value,
            # weighted F1 is not a mean of per-item values: it is computed over all pairs
            "aggregation": _FunctionTag("utils.aggregate_weighted_f1")
            if metric is Metric.WEIGHTED_F1
            else "mean",
            "higher_is_better": True,
        }
        for metric in kind_spec(kind).metrics
    ]
    metrics.append({"metric": "unparsed", "aggregation": "mean", "higher_is_better": False})
    return _dump_yaml(
        {
            **_task_head(name, data_file, "generate_until"),
            "doc_to_target": "answer_text",
            "generation_kwargs": {
                "until": list(stops),
                "do_sample": False,
                "max_gen_toks": budget,
            },
            "process_results": _FunctionTag("utils.process_results"),
            "metric_list": metrics,
            "metadata": {"version": 1.0},
        }
    )


def _score_task(name: str, data_file: str, delimiter: str) -> str:
    return _dump_yaml(
        {
            **_task_head(name, data_file, "multiple_choice"),
            "doc_to_choice": "choice_texts",
            "doc_to_target": "target_index",
            "target_delimiter": delimiter,
            "metric_list": [
                {"metric": "acc", "aggregation": "mean", "higher_is_better": True},
                {"metric": "acc_norm", "aggregation": "mean", "higher_is_better": True},
            ],
            "metadata": {"version": 1.0},
        }
    )


def _group(name: str, tasks: list[str], *metrics: str) -> str:
    return _dump_yaml(
        {
            "group": name,
            "task": tasks,
            "aggregate_metric_list": [
                {"metric": metric, "aggregation": "mean", "weight_by_size": True}
                for metric in metrics
            ],
            "metadata": {"version": 1.0},
        }
    )


def _mean_metrics(kind: str) -> list[str]:
    """The kind's figures that are means over its items, so a group of its tasks can
    weigh them by size into the kind's (not CFLUE's weighted F1, computed over all pairs)."""
    return [
        Metric.EXACT_MATCH.value,
        *(
            m.value
            for m in kind_spec(kind).metrics
            if m not in (Metric.EXACT_MATCH, Metric.WEIGHTED_F1)
        ),
        "unparsed",
    ]


def _group_figures(kind: str, tasks: Sequence[str]) -> str:
    """What a kind's group reports, in words (the manifest's ``group_figures``)."""
    means = ", ".join(_mean_metrics(kind))
    said = (
        f"{means}: the means over the kind's items (its {len(tasks)} tasks' figures "
        "weighted by their sizes)"
    )
    if Metric.WEIGHTED_F1 not in kind_spec(kind).metrics:
        return said
    return (
        f"{said}; no weighted_f1: lm-eval's groups only average their tasks' figures, and "
        "CFLUE's weighted F1 over the kind's items is no such average. Each task's "
        "weighted_f1 is over that task's items only; the kind's is printed by "
        "`python utils.py SAMPLES.jsonl...` from lm_eval's --log_samples files of the run "
        "(and reported by vetbench eval)"
    )


def _jsonl(docs: Sequence[_Document]) -> str:
    return "".join(json.dumps(doc, ensure_ascii=False) + "\n" for doc in docs)


def export_lm_eval(
    db: Database,
    out_dir: Path | str,
    *,
    selection: Selection = APPROVED_ITEMS,
    shots: int = 5,
    seed: int = DEFAULT_SHOT_SEED,
    shot_file: Path | None = None,
    templates_dir: Path | None = None,
    task_name: str = DEFAULT_TASK_NAME,
) -> ExportSummary:
    """Write the selected items as an lm-eval task folder (see the module docstring).

    Shots are drawn as ``vetbench eval`` draws them: a seeded selection of items
    outside the exported set, one selection per kind and language, or the items of
    ``shot_file``.  With a release, its items as frozen; the manifest names it.
    """
    if shots < 0:
        raise ExportError(f"shots must be 0 or more, got {shots}")
    out_dir = Path(out_dir)
    selection, items = select_items(db, selection)
    templates = load_templates(templates_dir)
    pool, from_shot_file = shot_pool(db, shot_file)
    prompts, shots_used = _prompts_for(
        items, pool, shots=shots, seed=seed, from_shot_file=from_shot_file, templates=templates
    )

    by_kind: dict[str, list[ItemSnapshot]] = defaultdict(list)
    for item in items:
        by_kind[item.kind.value].append(item)
    files: dict[str, str] = {"utils.py": UTILS_PY}
    generation_tasks, score_tasks, too_many_candidates = [], [], []
    kinds, kind_groups = [], []  # what the group covers: each kind's task, or its group
    group_figures: dict[str, str] = {}
    for kind_name in sorted(by_kind):
        kind_items = by_kind[kind_name]
        docs = [_document(item, prompts[item.id], templates) for item in kind_items]
        kind_task = f"{task_name}_{kind_name}"
        tasks = _generation_tasks(kind_task, docs)
        for task, task_docs in tasks:
            data_file = f"{DATA_DIR}/{task}.jsonl"
            files[data_file] = _jsonl(task_docs)
            files[f"{task}.yaml"] = _generation_task(task, data_file, task_docs, kind_name)
            generation_tasks.append(task)
        if len(tasks) > 1:  # one name for the kind still: its group
            names = [task for task, _ in tasks]
            files[f"_{kind_task}.yaml"] = _group(kind_task, names, *_mean_metrics(kind_name))
            kind_groups.append(kind_task)
            group_figures[kind_task] = _group_figures(kind_name, names)
        kinds.append(kind_task)

        scored = []
        for doc, item in zip(docs, kind_items, strict=True):
            with_candidates = _with_candidates(doc, item)
            if with_candidates is None:
                too_many_candidates.append(item.id)
            else:
                scored.append(with_candidates)
        for score_task, delimiter, score_docs in _score_tasks(
            f"{task_name}_mc_{kind_name}", scored
        ):
            score_file = f"{DATA_DIR}/{score_task}.jsonl"
            files[score_file] = _jsonl(score_docs)
            files[f"{score_task}.yaml"] = _score_task(score_task, score_file, delimiter)
            score_tasks.append(score_task)
    files[f"_{task_name}.yaml"] = _group(task_name, kinds, "exact_match")
    if score_tasks:
        files[f"_{task_name}_mc.yaml"] = _group(f"{task_name}_mc", score_tasks, "acc")

    groups = [task_name] + ([f"{task_name}_mc"] if score_tasks else []) + kind_groups
    return write_folder(
        out_dir,
        files,
        export_format="lm-eval",
        selection=selection,
        items=items,
        extra_manifest={
            "shots": shots,
            "seed": seed,
            "shot_file": str(shot_file) if shot_file else None,
            "template_hash": templates.hash,
            "shots_used": shots_used,
            "left_out_of_score_mode": too_many_candidates,
            "tasks": generation_tasks,
            "score_tasks": score_tasks,
            "group_figures": group_figures,
        },
        tasks=groups + generation_tasks + score_tasks,
        command=(
            f"lm_eval --model hf --model_args pretrained=MODEL,softmax_dtype=float32 --tasks {task_name} "
            f"--include_path {out_dir} --apply_chat_template  "
            "# as vetbench eval does: leave out --apply_chat_template for a model without one"
        ),
    )
