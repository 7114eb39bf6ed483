"""Export items as a Hugging Face dataset folder that ``datasets.load_dataset(DIR)`` reads.

The folder holds ``data/test.jsonl`` (one item per line) and a ``README.md`` dataset
card whose YAML header names the data file and declares the schema, so the column
types are fixed even where every value of a column is empty.

Columns: ``id``, ``kind``, ``source``, ``source_ref``, ``language``, ``revision``,
``question``, ``labels`` and ``choices`` (parallel lists: ``labels[i]`` names
``choices[i]``), ``answer`` (canonical: ``"DACB"``, ``"ABD"``, ``"A"``),
``answer_text`` (as shown to people: ``"D, A, C, B"``), ``explanation`` (may be
null) and ``meta`` (the item's format-specific extras as a JSON object in a string).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

import yaml

from db.answers import format_answer
from db.engine import Database
from db.items import ItemSnapshot
from db.json_types import JsonObject
from db.releases import ReleaseInfo, figure_rows, get_release, tally
from db.settings import get_setting
from db.words import counted
from evaluator.exports.folder import ExportSummary, count_kinds, select_items, write_folder
from evaluator.exports.selection import APPROVED_ITEMS, Selection

DATA_FILE = "data/test.jsonl"
SPLIT = "test"

# (name, datasets feature spec, what it holds): the schema of every row, in column order.
COLUMNS: tuple[tuple[str, dict[str, str], str], ...] = (
    ("id", {"dtype": "string"}, "stable item id, e.g. `econ_ordering:3`"),
    ("kind", {"dtype": "string"}, "`ordering`, `single`, `multi` or `truefalse`"),
    ("source", {"dtype": "string"}, "where the item came from (file stem or generator)"),
    ("source_ref", {"dtype": "string"}, "where in the source, e.g. `line 18`"),
    ("language", {"dtype": "string"}, "`en`, `zh`, ..."),
    ("revision", {"dtype": "int32"}, "the item revision exported (1 = as imported)"),
    ("question", {"dtype": "string"}, "the scenario (ordering) or the question (MCQ)"),
    ("labels", {"sequence": "string"}, "choice letters, `A`, `B`, ..."),
    ("choices", {"sequence": "string"}, "event or option texts, parallel to `labels`"),
    ("answer", {"dtype": "string"}, "canonical key: an order `DACB`, letters `ABD`, `A`/`B`"),
    ("answer_text", {"dtype": "string"}, "the key as people read it: `D, A, C, B`"),
    ("explanation", {"dtype": "string"}, "why the key is right (may be null)"),
    ("meta", {"dtype": "string"}, "format-specific extras as a JSON object"),
)


class ItemRow(TypedDict):
    """One line of ``data/test.jsonl``: the columns above, in their order."""

    id: str
    kind: str
    source: str
    source_ref: str
    language: str
    revision: int
    question: str
    labels: list[str]
    choices: list[str]
    answer: str
    answer_text: str
    explanation: str | None
    meta: str


def item_row(item: ItemSnapshot) -> ItemRow:
    """One item as a dataset row (the schema above)."""
    return {
        "id": item.id,
        "kind": item.kind.value,
        "source": item.source,
        "source_ref": item.source_ref,
        "language": item.language,
        "revision": item.revision,
        "question": item.prompt,
        "labels": list(item.choices),
        "choices": list(item.choices.values()),
        "answer": item.key,
        "answer_text": format_answer(item.kind, item.key),
        "explanation": item.explanation,
        "meta": json.dumps(item.meta, ensure_ascii=False, sort_keys=True),
    }


@dataclass(frozen=True)
class CardFacts:
    """What a dataset card says beyond the items: the license, and for a release its
    record (name, hash, figures) and the changelog against the release before it."""

    license: str
    release: ReleaseInfo | None = None
    changelog: str | None = None  # Markdown; None: the first release (or not a release)


def _card_header(items: list[ItemSnapshot], data_bytes: int, facts: CardFacts) -> JsonObject:
    header: JsonObject = {
        "license": facts.license,
        "pretty_name": f"vetbench {facts.release.name}" if facts.release else "vetbench items",
        "configs": [
            {
                "config_name": "default",
                "data_files": [{"split": SPLIT, "path": DATA_FILE}],
            }
        ],
        "dataset_info": {
            "features": [{"name": name, **spec} for name, spec, _ in COLUMNS],
            "splits": [{"name": SPLIT, "num_bytes": data_bytes, "num_examples": len(items)}],
            "download_size": data_bytes,
            "dataset_size": data_bytes,
        },
    }
    return header


def _release_section(items: list[ItemSnapshot], facts: CardFacts) -> str:
    release = facts.release
    if release is None:
        return (
            "Not a release: a lead freezes one with `vetbench release create NAME`, and "
            "`vetbench export --release NAME` writes it with its hash, review figures and "
            "changelog.\n\n"
        )
    sources = Counter(item.source for item in items)
    lines = [
        f"## Release {release.name}\n",
        f"- hash (SHA-256 over every item's id and content hash): `{release.hash}`",
        f"- made {release.created_at:%Y-%m-%d %H:%M} UTC by {release.created_by}"
        + (f": {release.note}" if release.note else ""),
        f"- items in this export: {len(items)} of the release's {release.item_count} "
        f"({tally(count_kinds(items))}); by source: {tally(dict(sorted(sources.items())))}",
        "- check it: `vetbench release verify --export PATH`",
        "",
        "## Review statistics (when the release was made)\n",
        "| figure | value |",
        "|---|---|",
    ]
    lines += [f"| {label} | {value} |" for label, value in figure_rows(release)]
    lines += ["", "## Changelog\n"]
    if facts.changelog:
        lines.append(_demoted(facts.changelog))
    else:
        lines.append("The first release: no earlier release to compare with.\n")
    lines += ["", "## Citation\n", "```bibtex", _bibtex(release), "```", ""]
    return "\n".join(lines) + "\n"


def _demoted(markdown: str) -> str:
    """A changelog's headings one level down, under the card's own (not inside code blocks,
    where a line may start with ``#``)."""
    lines, in_code = [], False
    for line in markdown.splitlines():
        if line.startswith("```"):
            in_code = not in_code
        lines.append("#" + line if line.startswith("#") and not in_code else line)
    return "\n".join(lines)


def _bibtex(release: ReleaseInfo) -> str:
    """The entry to cite the release by: a key plain BibTeX accepts (ASCII letters and digits),
    the name with LaTeX's special characters escaped (``v1_final``, ``50%`` or a brace would
    otherwise break the document that cites it)."""
    from pylatexenc.latexencode import unicode_to_latex

    key = "".join(ch if ch.isascii() and ch.isalnum() else "_" for ch in release.name)
    name = unicode_to_latex(release.name, unknown_char_warning=False)  # CJK kept as written
    return (
        f"@misc{{vetbench_{key},\n"
        f"  title = {{vetbench benchmark, release {name}}},\n"
        f"  year = {{{release.created_at:%Y}}},\n"
        f"  note = {{{counted(release.item_count, 'item')}; release hash SHA-256 {release.hash}}}\n"
        "}"
    )


def _dataset_card(
    items: list[ItemSnapshot], selection_text: str, data_bytes: int, facts: CardFacts
) -> str:
    kinds = ", ".join(f"{count} {kind}" for kind, count in count_kinds(items).items())
    sources = sorted({item.source for item in items})
    languages = sorted({item.language for item in items})
    rows = "\n".join(f"| `{name}` | {_type_name(spec)} | {text} |" for name, spec, text in COLUMNS)
    title = (
        f"# vetbench items, release {facts.release.name}" if facts.release else "# vetbench items"
    )
    return (
        "---\n"
        + yaml.safe_dump(
            _card_header(items, data_bytes, facts), sort_keys=False, allow_unicode=True
        )
        + "---\n\n"
        + f"{title}\n\n"
        + f"{counted(len(items), 'item')} ({kinds}) exported by vetbench; "
        + f"selection: {selection_text}.\n"
        + f"Sources: {', '.join(sources)}. Languages: {', '.join(languages)}. "
        + f"License: {facts.license}.\n\n"
        + "Ordering items follow EconLogicQA (put the events in logical order); "
        + "multiple-choice items follow CFLUE (single answer, several answers, true/false).\n\n"
        + _release_section(items, facts)
        + "## Loading\n\n"
        + "```python\nimport datasets\n\n"
        + 'items = datasets.load_dataset("path/to/this/folder", split="test")\n```\n\n'
        + "## Schema\n\n| column | type | holds |\n|---|---|---|\n"
        + rows
        + "\n\nAnswers: an ordering answer is a permutation of the event letters (`DACB`); "
        + "a multiple-choice answer is its sorted letters (`ABD`); a true/false answer "
        + "is `A` (true, 对) or `B` (false, 错).\n"
    )


def _type_name(spec: dict[str, str]) -> str:
    return f"list of {spec['sequence']}" if "sequence" in spec else spec["dtype"]


def export_hf(
    db: Database,
    out_dir: Path | str,
    *,
    selection: Selection = APPROVED_ITEMS,
    changelog: str | None = None,
) -> ExportSummary:
    """Write the selected items (by default the approved ones; with a release, that
    release's items as frozen) as a dataset folder.  The card's license is the ``license``
    setting; a release's card adds its hash, review figures, ``changelog`` (Markdown, the
    caller's: against the release before) and a citation."""
    out_dir = Path(out_dir)
    selection, items = select_items(db, selection)
    release = selection.release
    with db.session() as session:
        facts = CardFacts(
            license=get_setting(session, "license"),
            release=get_release(session, release) if release is not None else None,
            changelog=changelog,
        )
    data = "".join(json.dumps(item_row(item), ensure_ascii=False) + "\n" for item in items)
    card = _dataset_card(items, selection.describe(), len(data.encode("utf-8")), facts)
    return write_folder(
        out_dir,
        {DATA_FILE: data, "README.md": card},
        export_format="hf",
        selection=selection,
        items=items,
        command=f'datasets.load_dataset("{out_dir}", split="{SPLIT}")',
    )
