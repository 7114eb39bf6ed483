"""Benchmark: plant every kind of flaw in real items, then measure what the flags and triage find.

Starts from real data: the CFLUE knowledge file (``../shared/data/cflue/knowledge.json``,
3,864 real exam questions) and the team's fixtures (``fixtures/``: English and Chinese
multiple-choice items, and the EconLogicQA-style ordering items).  A seeded generator
plants, each on its own item (never one already flagged):

- duplicates of several kinds, as new items copying an untouched one: options or events
  shuffled with the key remapped, labels written into the options, a single-answer item
  copied as a multi-answer one, full-width forms, other punctuation, extra spacing, a
  question number in front;
- references to media the item does not contain (如下表所示, 根据下图, an image tag,
  "the following table");
- HTML entities and tags;
- key/explanation mismatches (故选X or "the correct order is ..." naming another answer);
- events listed in key order;
- wrong keys (the key changed to another answer).

Everything is imported in one file through the real import path (flags raised as each
revision is stored, near-duplicates checked at the end).  Three scripted models then
answer every item: two answer correctly except on the planted wrong keys (where they
give the right answer, not the stored key), a third also errs at random on
``--noise`` of the items; ``flags recompute`` turns the runs into model flags and
``reviewer.triage`` ranks everything.  It prints the recall per flaw type, the false
flags on untouched items (per flag) and a sample of those to look at by hand.

    .venv/bin/python bench/planted_flaws.py [--seed 20261202] [--per-kind 40] [--keep DIR]
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import shutil
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from db.answers import LETTERS, format_answer  # noqa: E402
from db.canonical_text import item_text  # noqa: E402
from db.engine import Database, open_database  # noqa: E402
from db.flag_recompute import recompute_flags  # noqa: E402
from db.flag_rules import RevisionText, text_findings  # noqa: E402
from db.flags import ItemFlag, current_flags  # noqa: E402
from db.formats.cflue import TASK_KINDS, parse_choices  # noqa: E402
from db.importer import import_files  # noqa: E402
from db.items import iter_items  # noqa: E402
from db.vocabulary import FlagName, FlagSource, ItemKind  # noqa: E402
from evaluator.backends.scripted import Script, ScriptedBackend  # noqa: E402
from evaluator.generation.option_shuffle import shuffle_options  # noqa: E402
from evaluator.item_filter import ItemFilter  # noqa: E402
from evaluator.runner import create_run, execute_run  # noqa: E402
from reviewer.triage import TriageEntry, rank_items  # noqa: E402

CFLUE_KNOWLEDGE = ROOT.parent / "shared" / "data" / "cflue" / "knowledge.json"
FIXTURES = ROOT / "fixtures"
RECALL_TARGET = 0.95
FALSE_FLAG_TARGET = 0.02
AUTOMATIC = "automatic"
FULL_WIDTH = str.maketrans({chr(code): chr(code + 0xFEE0) for code in range(0x21, 0x7F)})
TO_ENGLISH_PUNCTUATION = str.maketrans({"。": ".", "、": ",", "“": '"', "”": '"', "；": ";"})


@dataclass
class Item:
    """One item as written to the benchmark's JSONL file."""

    id: str
    kind: str
    prompt: str
    choices: dict[str, str]
    key: str
    explanation: str | None
    language: str
    source: str

    def record(self) -> dict[str, object]:
        return asdict(self)

    @property
    def text(self) -> RevisionText:
        return RevisionText(self.kind, self.prompt, self.choices, self.key, self.explanation)


@dataclass(frozen=True)
class Plant:
    """A planted flaw: which item carries it, of what type, what should catch it."""

    item_id: str
    flaw: str  # "duplicate: shuffled", "needs-media", "wrong key", ...
    flag: FlagName
    original: str | None = None  # the item a planted duplicate copies
    true_key: str | None = None  # a planted wrong key's right answer


@dataclass
class Planted:
    items: list[Item]
    plants: list[Plant] = field(default_factory=list)


# --- the data --------------------------------------------------------------------------------


def real_items(cflue: Path | None = CFLUE_KNOWLEDGE) -> list[Item]:
    """The real CFLUE questions (``cflue``; None: the fixtures only) and the team's
    fixture items, as they are."""
    items: list[Item] = []
    records = [] if cflue is None else json.loads(cflue.read_text(encoding="utf-8"))
    for number, record in enumerate(records, start=1):
        items.append(_cflue_item(f"knowledge:{number}", record, "knowledge"))
    fixture_mcq = json.loads((FIXTURES / "cflue_mcq.json").read_text(encoding="utf-8"))
    for number, record in enumerate(fixture_mcq, start=1):
        items.append(_cflue_item(f"cflue_mcq:{number}", record, "cflue_mcq"))
    for name in ("econ_ordering.csv", "econ_ordering_5events.csv"):
        with (FIXTURES / name).open(encoding="utf-8", newline="") as handle:
            for number, row in enumerate(csv.DictReader(handle), start=1):
                labels = [label for label in LETTERS if row.get(label)]
                items.append(
                    Item(
                        f"{name.removesuffix('.csv')}:{number}",
                        "ordering",
                        row["Question"],
                        {label: row[label] for label in labels},
                        row["Answer"].replace(",", "").replace(" ", ""),
                        row.get("Explanation") or None,
                        "en",
                        name.removesuffix(".csv"),
                    )
                )
    with (FIXTURES / "shots_ordering.jsonl").open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            row = json.loads(line)
            items.append(
                Item(
                    f"shots:{number}",
                    "ordering",
                    row["prompt"],
                    row["choices"],
                    row["key"],
                    row.get("explanation"),
                    "en",
                    "shots",
                )  # fmt: skip
            )
    return items


def _cflue_item(item_id: str, record: dict[str, object], source: str) -> Item:
    question = str(record["question"])
    chinese = any("\u4e00" <= char <= "\u9fff" for char in question)
    return Item(
        item_id,
        TASK_KINDS[str(record["task"])].value,
        question,
        parse_choices(str(record["choices"])),
        str(record["answer"]),
        str(record["analysis"]) if record.get("analysis") else None,
        "zh" if chinese else "en",
        source,
    )


# --- planting --------------------------------------------------------------------------------


def _other_answer(rng: random.Random, item: Item) -> str:
    """A key other than the item's own, of the same kind."""
    labels = list(item.choices)
    kind = ItemKind(item.kind)
    while True:
        if kind is ItemKind.ORDERING:
            order = list(item.key)
            first = rng.randrange(len(order) - 1)
            order[first], order[first + 1] = order[first + 1], order[first]
            answer = "".join(order)
        elif kind is ItemKind.MULTI:
            size = rng.randint(2, len(labels))
            answer = "".join(sorted(rng.sample(labels, size), key=LETTERS.index))
        else:
            answer = rng.choice(labels)
        if answer != item.key:
            return answer


def _shuffled(item: Item, seed: str, *, labelled: bool = False) -> tuple[dict[str, str], str]:
    shuffled = shuffle_options(item.choices, item.key, item.kind, seed)
    choices = dict(shuffled.choices)
    if labelled:  # labels written into the text: "(2) ..." as some sources do
        choices = {
            label: f"({position}) {text}"
            for position, (label, text) in enumerate(choices.items(), 1)
        }
    return choices, shuffled.key


def _spaced(text: str, rng: random.Random) -> str:
    """Extra spaces after punctuation and between some characters."""
    out = []
    for char in text:
        out.append(char)
        if char in "，。、：；,.:" or rng.random() < 0.05:
            out.append(" ")
    return "".join(out)


def plant(items: list[Item], rng: random.Random, per_kind: int) -> Planted:
    """Plant each flaw on its own untouched item (none already flagged, none a copy)."""
    by_text: Counter[str] = Counter(item_text(item.prompt, item.choices) for item in items)
    clean = [
        item
        for item in items
        if not text_findings(item.text) and by_text[item_text(item.prompt, item.choices)] == 1
    ]
    rng.shuffle(clean)
    mcq_zh = [
        i for i in clean if i.kind != "ordering" and i.language == "zh" and i.kind != "truefalse"
    ]
    tf = [i for i in clean if i.kind == "truefalse"]
    english = [i for i in clean if i.kind != "ordering" and i.language == "en"]
    ordering = [i for i in clean if i.kind == "ordering"]
    used: set[str] = set()

    def take(pool: list[Item], count: int) -> list[Item]:
        chosen = [item for item in pool if item.id not in used][:count]
        used.update(item.id for item in chosen)
        return chosen

    result = Planted(items=list(items))
    index = {item.id: position for position, item in enumerate(result.items)}
    copies = 0

    def add_copy(original: Item, flaw: str, **changes: object) -> None:
        nonlocal copies
        copies += 1
        copy = replace(original, id=f"planted:{copies}", source="planted", **changes)  # type: ignore[arg-type]
        result.items.append(copy)
        result.plants.append(Plant(copy.id, f"duplicate: {flaw}", FlagName.DUPLICATE, original.id))

    def change(
        item: Item, flaw: str, flag: FlagName, true_key: str | None = None, **changes: object
    ) -> None:
        result.items[index[item.id]] = replace(item, **changes)  # type: ignore[arg-type]
        result.plants.append(Plant(item.id, flaw, flag, true_key=true_key))

    # Duplicates: new items that copy an untouched one.
    for original in take(mcq_zh, per_kind):
        choices, key = _shuffled(original, f"shuffle {original.id}")
        add_copy(original, "options shuffled, key remapped", choices=choices, key=key)
    for original in take(ordering, max(8, per_kind // 5)):
        choices, key = _shuffled(original, f"events {original.id}")
        add_copy(original, "events shuffled, key remapped", choices=choices, key=key)
    for original in take(mcq_zh + english, per_kind // 2):
        choices, key = _shuffled(original, f"labels {original.id}", labelled=True)
        add_copy(original, "relabelled options", choices=choices, key=key)
    for original in take([i for i in mcq_zh + english if i.kind == "single"], per_kind // 2):
        other = next(label for label in original.choices if label != original.key)
        key = "".join(sorted(original.key + other, key=LETTERS.index))
        add_copy(original, "single copied as multi", kind="multi", key=key)
    for original in take(mcq_zh, per_kind // 2):
        add_copy(
            original,
            "full-width forms",
            prompt=original.prompt.translate(FULL_WIDTH),
        )
    for original in take(mcq_zh, per_kind // 2):
        add_copy(
            original, "other punctuation", prompt=original.prompt.translate(TO_ENGLISH_PUNCTUATION)
        )
    for original in take(mcq_zh + tf, per_kind // 2):
        add_copy(original, "extra spacing", prompt=_spaced(original.prompt, rng))
    for number, original in enumerate(take(mcq_zh + english, per_kind // 2), start=1):
        prefix = f"第{number}题：" if original.language == "zh" else f"Question {number}: "
        add_copy(original, "question number in front", prompt=prefix + original.prompt)

    # Media the text does not contain.
    zh_media = (
        "（相关数据如下表所示）",
        "根据下图，",
        "见下表。",
        "&lt;img src=&quot;https://cdn.example.com/q.png&quot;&gt;",
    )
    for position, item in enumerate(take(mcq_zh + tf, per_kind)):
        addition = zh_media[position % len(zh_media)]
        prompt = addition + item.prompt if addition.endswith("，") else item.prompt + addition
        change(item, "needs-media", FlagName.NEEDS_MEDIA, prompt=prompt)
    for item in take(english + ordering, max(8, per_kind // 5)):
        change(item, "needs-media", FlagName.NEEDS_MEDIA,
               prompt=item.prompt + " Use the figures in the following table.")  # fmt: skip

    # HTML entities and tags.
    for position, item in enumerate(take(mcq_zh, per_kind)):
        html = ("&amp;nbsp;", "<br>", "&lt;b&gt;", "&quot;")[position % 4]
        cut = len(item.prompt) // 2
        change(item, "html", FlagName.HTML, prompt=item.prompt[:cut] + html + item.prompt[cut:])

    # Explanations that conclude with another answer.
    for item in take([i for i in mcq_zh if i.explanation], per_kind):
        said = _other_answer(rng, item)
        change(item, "key-mismatch", FlagName.KEY_MISMATCH,
               explanation=f"{item.explanation} 综上，故选{said}。")  # fmt: skip
    for item in take(ordering + english, max(8, per_kind // 5)):
        said = _other_answer(rng, item)
        sentence = (
            f" The correct order is {format_answer(ItemKind.ORDERING, said)}."
            if item.kind == "ordering"
            else f" Therefore, the answer is {format_answer(ItemKind(item.kind), said)}."
        )
        change(
            item,
            "key-mismatch",
            FlagName.KEY_MISMATCH,
            explanation=(item.explanation or "") + sentence,
        )

    # Events listed in the order of the key.
    for item in take(ordering, max(8, per_kind // 4)):
        labels = LETTERS[: len(item.choices)]
        choices = {labels[position]: item.choices[label] for position, label in enumerate(item.key)}
        change(item, "order-leak", FlagName.ORDER_LEAK, choices=choices, key=labels)

    # One option (or event) written again in another's place.
    for item in take(mcq_zh + english + ordering, max(8, per_kind // 4)):
        first, *_, last = item.choices
        choices = {**item.choices, last: item.choices[first]}
        change(item, "same-choices", FlagName.SAME_CHOICES, choices=choices)

    # Wrong keys: only the models can tell.
    for item in take(mcq_zh + tf + english + ordering, per_kind):
        change(
            item,
            "wrong key",
            FlagName.MODEL_DISAGREES,
            true_key=item.key,
            key=_other_answer(rng, item),
        )
    return result


# --- running ---------------------------------------------------------------------------------


def evaluate(database: Database, planted: Planted, noise: float, rng: random.Random) -> None:
    """Two scripted models answer every item right (the true key on planted wrong keys);
    a third errs at random on ``noise`` of the items as well."""
    with database.session() as session:
        snapshots = list(iter_items(session))
    truths = {
        plant.item_id: format_answer(
            ItemKind(next(s.kind for s in snapshots if s.id == plant.item_id)), plant.true_key
        )
        for plant in planted.plants
        if plant.true_key
    }
    by_id = {item.id: item for item in planted.items}
    noisy = dict(truths)
    for snapshot in snapshots:
        if rng.random() < noise:
            noisy[snapshot.id] = format_answer(
                snapshot.kind, _other_answer(rng, by_id[snapshot.id])
            )
    for model, except_for in (("oracle-a", truths), ("oracle-b", truths), ("noisy-c", noisy)):
        backend = ScriptedBackend(Script.answer_keys(snapshots, except_for=except_for), model=model)
        run_id = create_run(database, backend.info, item_filter=ItemFilter(statuses=("pending",)))
        execute_run(database, run_id, backend)


def caught(plant: Plant, flags: dict[str, list[ItemFlag]], texts: dict[str, str]) -> bool:
    for flag in flags.get(plant.item_id, []):
        if flag.name is not plant.flag:
            continue
        if plant.flag is FlagName.DUPLICATE:
            of = str(flag.evidence.get("of"))
            return of == plant.original or texts.get(of) == texts.get(str(plant.original))
        if plant.flag is FlagName.MODEL_DISAGREES:
            return flag.source is FlagSource.MODEL
        return True
    return False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=20261202)
    parser.add_argument("--per-kind", type=int, default=40, help="planted items per main flaw kind")
    parser.add_argument(
        "--noise", type=float, default=0.15, help="random errors of the third model"
    )
    parser.add_argument("--sample", type=int, default=15, help="flagged untouched items to print")
    parser.add_argument("--keep", type=Path, help="keep the input file and database here")
    args = parser.parse_args()
    if not CFLUE_KNOWLEDGE.exists():
        sys.exit(f"the real CFLUE file is not at {CFLUE_KNOWLEDGE}; nothing to plant flaws in")
    directory = args.keep or Path(tempfile.mkdtemp(prefix="vetbench-planted-"))
    directory.mkdir(parents=True, exist_ok=True)
    rng = random.Random(args.seed)
    try:
        items = real_items()
        planted = plant(items, rng, args.per_kind)
        path = directory / "planted.jsonl"
        with path.open("w", encoding="utf-8") as handle:
            for item in planted.items:
                handle.write(json.dumps(item.record(), ensure_ascii=False) + "\n")
        database = open_database(directory / "planted.db")
        started = time.perf_counter()
        report = import_files(database, [path])
        imported = time.perf_counter() - started
        assert report.ok, report.files[0].problems[:5]
        started = time.perf_counter()
        evaluate(database, planted, args.noise, rng)
        evaluated = time.perf_counter() - started
        started = time.perf_counter()
        with database.transaction() as session:
            recompute_flags(session, "bench")
        ranking = rank_items(database)
        triaged = time.perf_counter() - started
        with database.session() as session:
            flags = current_flags(session, [item.id for item in planted.items])
        database.dispose()
        print_results(planted, flags, ranking, (imported, evaluated, triaged), args.sample, rng)
    finally:
        if not args.keep:
            shutil.rmtree(directory, ignore_errors=True)


def print_results(
    planted: Planted,
    flags: dict[str, list[ItemFlag]],
    ranking: list[TriageEntry],
    seconds: tuple[float, float, float],
    sample: int,
    rng: random.Random,
) -> None:
    texts = {item.id: item_text(item.prompt, item.choices) for item in planted.items}
    imported, evaluated, triaged = seconds
    print(
        f"{len(planted.items):,} items ({len(planted.plants)} planted flaws); import with flags "
        f"{imported:.1f} s, 3 scripted runs {evaluated:.1f} s, recompute + triage {triaged:.1f} s"
    )
    print()
    by_flaw: dict[str, list[bool]] = defaultdict(list)
    for plant in planted.plants:
        by_flaw[plant.flaw].append(caught(plant, flags, texts))
    print(f"{'flaw planted':<42} {'n':>4} {'found':>6} {'recall':>7}")
    failed = []
    for flaw, results in by_flaw.items():
        recall = sum(results) / len(results)
        mark = "" if recall >= RECALL_TARGET else "  < target"
        if mark and flaw != "wrong key":
            failed.append(flaw)
        print(f"{flaw:<42} {len(results):>4} {sum(results):>6} {recall:>7.1%}{mark}")
    automatic = [r for flaw, results in by_flaw.items() if flaw != "wrong key" for r in results]
    print(
        f"{'all automatic flags':<42} {len(automatic):>4} {sum(automatic):>6} {sum(automatic) / len(automatic):>7.1%}"
    )
    # Triage: where the planted items land in the ranking.
    planted_ids = {plant.item_id for plant in planted.plants}
    wrong_keys = {plant.item_id for plant in planted.plants if plant.flaw == "wrong key"}
    rank_of = {entry.item_id: rank for rank, entry in enumerate(ranking, start=1)}
    top = [entry.item_id for entry in ranking[: len(wrong_keys)]]
    print()
    print(
        f"triage: {len(ranking):,} items with a score; the {len(wrong_keys)} planted wrong keys are "
        f"the top {len(wrong_keys)}: {sum(1 for i in top if i in wrong_keys)} of {len(wrong_keys)}; "
        f"worst rank of a wrong key: {max(rank_of.get(i, 10**9) for i in wrong_keys)}"
    )
    in_ranking = sum(1 for item_id in planted_ids if item_id in rank_of)
    print(f"triage lists {in_ranking} of {len(planted_ids)} planted items")
    # False flags: untouched items (neither planted nor a planted copy's original).
    untouched = [
        item for item in planted.items
        if item.id not in planted_ids and item.source != "planted"
    ]  # fmt: skip
    flagged = {item.id: flags[item.id] for item in untouched if flags.get(item.id)}
    per_flag = Counter(flag.name.value for found in flagged.values() for flag in found)
    rate = len(flagged) / len(untouched)
    print()
    print(
        f"untouched items: {len(untouched):,}; with any flag: {len(flagged)} ({rate:.2%}); "
        f"by flag: {', '.join(f'{name} {count}' for name, count in per_flag.most_common())}"
    )
    without_html = [
        i for i, found in flagged.items() if any(f.name is not FlagName.HTML for f in found)
    ]
    print(
        f"  without html (real entities in the scraped text are true flags): "
        f"{len(without_html)} ({len(without_html) / len(untouched):.2%})"
    )
    print(f"a sample of flagged untouched items to check by hand ({min(sample, len(flagged))}):")
    for item_id in sorted(rng.sample(sorted(flagged), min(sample, len(flagged)))):
        for flag in flagged[item_id]:
            print(f"  {item_id}: {flag.name.value}: {flag.summary[:160]}")
    if failed:
        print(f"\nbelow the {RECALL_TARGET:.0%} target: {', '.join(failed)}")


if __name__ == "__main__":
    main()
