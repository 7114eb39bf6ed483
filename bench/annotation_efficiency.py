"""Benchmark: the same trustworthy decisions with fewer judgments? Fixed k = 3 against
adaptive overlap, on real items with planted wrong keys and simulated annotators.

Items: a seeded sample of the real CFLUE knowledge questions (``--cflue``; without the
file only the team's fixture items are used, and it says so) and every real ordering
item of ``fixtures/``.  About a tenth get a planted wrong key (the key changed to another
answer, ``bench.planted_flaws``) and one in twenty a flaw the simulated annotators may
notice (their verdict ``flawed``); a few untouched ones become gold items, which the queue
mixes in as it always does (``calibration_items`` first, then ``gold_rate``).

Annotators (answers drawn per annotator and item, so both runs see the same people give
the same answers): two experts, two average annotators, a careless one, and a spammer
who answers at random and always keeps (``--spammer-pace 2``: twice as fast as the
others).  The others answer blind with their skill (the right answer, else another one)
and say ``keep`` when their answer is the key, ``wrong-key`` with their answer
otherwise; on a flawed item they notice the flaw with their skill.

Both runs have the qualification gate on (``--calibration-pass``, default 0.8 of 5
calibration items; 0 turns it off), as a lead would run either routing: whom it leaves
out counts for nothing and is served nothing more, in both runs alike.

Each run starts from the same database and drives the real queue in-process, as
``vetbench next`` and ``vetbench judge`` do (``reviewer.queue.annotator_queue`` and
``reviewer.judging.submit_judgment``), round after round until no one is served
anything; then a lead runs approve-agreed (with ``--min-confidence`` where it exists).
It prints judgments used, leaks (planted wrong keys approved), wrong keys kept from
``approved``, good items sent to the lead, decision accuracy against the planted
truth, each annotator's estimated reliability against their true skill, and the time
the queue and the judgments took.

    .venv/bin/python bench/annotation_efficiency.py [--items 300] [--target 0.99]
        [--spammer-pace 1] [--calibration-pass 0.8] [--seed 25] [--cflue PATH] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sqlmodel import col, select  # noqa: E402

from bench.planted_flaws import CFLUE_KNOWLEDGE, Item, _other_answer, real_items  # noqa: E402
from db.answers import LETTERS  # noqa: E402
from db.consensus import estimate_consensus  # noqa: E402
from db.engine import Database, open_database  # noqa: E402
from db.gold import add_gold  # noqa: E402
from db.importer import import_files  # noqa: E402
from db.item_status import refresh_judged_items  # noqa: E402
from db.models import Item as ItemRow  # noqa: E402
from db.models import Judgment, Person  # noqa: E402
from db.people import add_person  # noqa: E402
from db.qualification import qualification_states  # noqa: E402
from db.routing import fits_made, forget_fits  # noqa: E402
from db.settings import set_setting  # noqa: E402
from db.vocabulary import ItemKind, Role, Verdict  # noqa: E402
from reviewer.adjudication import approve_agreed  # noqa: E402
from reviewer.consensus_decisions import approve_confident  # noqa: E402
from reviewer.judging import submit_judgment  # noqa: E402
from reviewer.queue import annotator_queue  # noqa: E402

LEAD = "lena"
WRONG_KEY_SHARE = 0.1
FLAWED_SHARE = 0.05
CALIBRATION_ITEMS = 5
CALIBRATION_PASS = 0.8  # the example pass mark: 4 of 5
GOLD_RATE = 5  # percent: every 20th item after calibration
CONFIDENCE = 0.95  # approve-agreed --min-confidence


@dataclass(frozen=True)
class Annotator:
    name: str
    skill: float  # chance of answering right (the spammer: chance level)
    pace: int = 1  # items per round
    spammer: bool = False


ANNOTATORS = (
    Annotator("expert-1", 0.95),
    Annotator("expert-2", 0.93),
    Annotator("average-1", 0.8),
    Annotator("average-2", 0.75),
    Annotator("careless", 0.55),
    Annotator("spammer", 0.0, spammer=True),
)


@dataclass
class Bench:
    """The items as planted: the truth of each item, which keys are wrong, which are gold."""

    items: dict[str, Item]
    truth: dict[str, str]  # item id -> the right answer
    wrong: set[str]  # planted wrong keys
    flawed: set[str]  # planted flaws in the text (never with a wrong key)
    gold: set[str]


def choose_items(cflue: Path | None, count: int, gold: int, rng: random.Random) -> Bench:
    everything = real_items(cflue)
    cflue_items = [item for item in everything if item.source == "knowledge"]
    ordering = [item for item in everything if item.kind == ItemKind.ORDERING.value]
    chosen = rng.sample(cflue_items, min(count, len(cflue_items))) + ordering
    if not cflue_items:  # the fixture multiple-choice items stand in
        chosen += [item for item in everything if item.source == "cflue_mcq"]
    rng.shuffle(chosen)
    gold_ids = {item.id for item in chosen[:gold]}
    rest = chosen[gold:]
    wrong = {item.id for item in rng.sample(rest, round(len(rest) * WRONG_KEY_SHARE))}
    intact = [item for item in rest if item.id not in wrong]
    flawed = {item.id for item in rng.sample(intact, round(len(rest) * FLAWED_SHARE))}
    items: dict[str, Item] = {}
    truth: dict[str, str] = {}
    for item in chosen:
        truth[item.id] = item.key
        items[item.id] = replace(item, key=_other_answer(rng, item)) if item.id in wrong else item
    return Bench(items, truth, wrong, flawed, gold_ids)


def random_answer(item: Item, rng: random.Random) -> str:
    labels = list(item.choices)
    if item.kind == ItemKind.ORDERING.value:
        order = labels[:]
        rng.shuffle(order)
        return "".join(order)
    if item.kind == ItemKind.MULTI.value:
        size = rng.randint(1, len(labels))
        return "".join(sorted(rng.sample(labels, size), key=LETTERS.index))
    return rng.choice(labels)


def answer_of(annotator: Annotator, item: Item, bench: Bench, seed: int) -> tuple[str, Verdict]:
    """What ``annotator`` answers to ``item`` and the verdict they give (the same every run)."""
    rng = random.Random(f"{seed}:{annotator.name}:{item.id}")
    if annotator.spammer:
        return random_answer(item, rng), Verdict.KEEP
    truth = bench.truth[item.id]
    noticed = rng.random() < annotator.skill
    if rng.random() < annotator.skill:
        answer = truth
    else:
        answer = _other_answer(rng, replace(item, key=truth))
    if item.id in bench.flawed and noticed:
        return answer, Verdict.FLAWED
    return answer, Verdict.KEEP if answer == item.key else Verdict.WRONG_KEY


def build_database(path: Path, bench: Bench, folder: Path, calibration_pass: float) -> None:
    """The items imported through the real import path, the people, the gold items and
    the qualification gate (both runs start from this database, so both have it)."""
    source = folder / "items.jsonl"
    with source.open("w", encoding="utf-8") as handle:
        for item in bench.items.values():
            handle.write(json.dumps(item.record(), ensure_ascii=False) + "\n")
    database = open_database(path)
    report = import_files(database, [source])
    assert report.ok, report.files[0].problems[:5]
    add_person(database, LEAD, Role.LEAD, actor="bench")
    for annotator in ANNOTATORS:
        add_person(database, annotator.name, Role.ANNOTATOR, actor="bench")
    with database.transaction() as session:
        for item_id in sorted(bench.gold):
            add_gold(session, LEAD, item_id, verdict="keep", answer=bench.truth[item_id])
        set_setting(session, "calibration_items", str(CALIBRATION_ITEMS))
        set_setting(session, "gold_rate", str(GOLD_RATE))
        set_setting(session, "calibration_pass", f"{calibration_pass:g}")
    database.dispose()


@dataclass
class Decisions:
    """Where the items ended after one decision rule, against the planted truth."""

    approved: int = 0
    leaks: int = 0  # planted wrong keys approved
    caught: int = 0  # planted wrong keys not approved
    flawed_approved: int = 0
    good_to_lead: int = 0  # untouched items left to the lead (conflicts)
    undecided: int = 0  # pending or in review
    right: int = 0  # approved exactly when the item is sound
    items: int = 0
    seconds: float = 0.0


@dataclass
class Outcome:
    name: str
    judgments: int = 0
    gold_judgments: int = 0
    rules: dict[str, Decisions] = field(default_factory=dict)
    consensus_right: int = 0
    consensus_items: int = 0
    three_right: int = 0
    three_items: int = 0
    next_seconds: list[float] = field(default_factory=list)
    judge_seconds: list[float] = field(default_factory=list)
    fits: int = 0
    reliability: dict[str, tuple[float, float, float, int]] = field(default_factory=dict)
    accuracy: dict[str, tuple[int, int]] = field(default_factory=dict)  # right, answered
    judged: Counter[str] = field(default_factory=Counter)  # judgments (not gold) per annotator
    gate: dict[str, str] = field(default_factory=dict)  # annotator -> the gate's word on them
    left_out: set[str] = field(default_factory=set)  # annotators the gate left out


def simulate(
    database: Database,
    bench: Bench,
    seed: int,
    outcome: Outcome,
    annotators: tuple[Annotator, ...] = ANNOTATORS,
) -> None:
    """Every annotator asks the queue for items, round after round, until none is served."""
    queues = {a.name: annotator_queue(database, a.name) for a in annotators}
    rng = random.Random(seed)
    answered: Counter[tuple[str, bool]] = Counter()
    settled = False
    while True:
        served = 0
        for annotator in rng.sample(annotators, len(annotators)):
            for _ in range(annotator.pace):
                queue = queues[annotator.name]
                started = time.perf_counter()
                shown = queue.fetch_next()
                outcome.next_seconds.append(time.perf_counter() - started)
                if shown is None:
                    break
                served += 1
                item_id = shown.id
                item = bench.items[item_id]
                answer, verdict = answer_of(annotator, item, bench, seed)
                answered[(annotator.name, answer == bench.truth[item_id])] += 1
                started = time.perf_counter()
                submit_judgment(
                    database,
                    annotator.name,
                    item_id,
                    revision_number=shown.revision,
                    blind_answer=answer,
                    verdict=verdict,
                    corrected_key=answer if verdict is Verdict.WRONG_KEY else None,
                    comment="simulated: the text is flawed" if verdict is Verdict.FLAWED else "",
                )
                outcome.judge_seconds.append(time.perf_counter() - started)
        if served:
            settled = False
        elif settled:
            break
        else:
            settle(database)
            settled = True
    for annotator in annotators:
        right = answered[(annotator.name, True)]
        outcome.accuracy[annotator.name] = (right, right + answered[(annotator.name, False)])


def settle(database: Database) -> None:
    """A consensus fit on every judgment, and every status read again under it: an item
    the last fit was sure of may be unsure now, and goes back to the queue."""
    forget_fits()
    with database.transaction() as session:
        refresh_judged_items(session)


AGREED_RULE = "approve-agreed"
CONFIDENT_RULE = f"approve-agreed --min-confidence {CONFIDENCE:g}"


def decide(database: Database, rule: str, bench: Bench) -> Decisions:
    """The lead approves by ``rule``; where every item ends, against the truth."""
    started = time.perf_counter()
    if rule == AGREED_RULE:
        approve_agreed(database, LEAD)
    else:
        approve_confident(database, LEAD, CONFIDENCE)
    decisions = Decisions(seconds=time.perf_counter() - started)
    with database.session() as session:
        statuses = dict(session.exec(select(ItemRow.id, ItemRow.status)).all())
    for item_id, status in statuses.items():
        if item_id in bench.gold:
            continue
        wrong = item_id in bench.wrong
        flawed = item_id in bench.flawed
        approved = status == "approved"
        decisions.approved += approved
        decisions.leaks += wrong and approved
        decisions.caught += wrong and not approved
        decisions.flawed_approved += flawed and approved
        decisions.good_to_lead += not wrong and not flawed and status == "conflict"
        decisions.undecided += status in ("pending", "in_review")
        decisions.items += 1
        decisions.right += approved != (wrong or flawed)
    return decisions


def tally(database: Database, bench: Bench, outcome: Outcome) -> None:
    """Judgments used, the consensus against the truth, and each annotator's reliability."""
    with database.session() as session:
        judgments = session.exec(select(Judgment).where(col(Judgment.retracted).is_(False))).all()
        consensus = estimate_consensus(session)
        names = dict(session.exec(select(Person.id, Person.name)).all())
        for name, standing in qualification_states(session).items():
            outcome.gate[name] = standing.describe()
            if not standing.counts:
                outcome.left_out.add(name)
    outcome.judged = Counter(names[j.annotator_id] for j in judgments if j.gold_id is None)
    outcome.judgments = sum(1 for j in judgments if j.gold_id is None)
    outcome.gold_judgments = sum(1 for j in judgments if j.gold_id is not None)
    for estimate in consensus.items:
        if estimate.item_id in bench.gold or not estimate.judgments:
            continue
        right = estimate.consensus_answer == bench.truth[estimate.item_id]
        outcome.consensus_items += 1
        outcome.consensus_right += right
        if estimate.judgments >= 3:
            outcome.three_items += 1
            outcome.three_right += right
    for rater in consensus.raters:
        if rater.kind == "person":
            outcome.reliability[rater.name] = (rater.reliability, rater.low, rater.high, rater.n)


def run(
    mode: str,
    base: Path,
    folder: Path,
    bench: Bench,
    seed: int,
    target: float,
    annotators: tuple[Annotator, ...],
) -> Outcome:
    path = folder / f"{mode}.db"
    shutil.copy(base, path)
    database = open_database(path)
    with database.transaction() as session:
        if mode == "fixed":
            set_setting(session, "overlap", "3")
        else:
            set_setting(session, "routing", "adaptive")
            set_setting(session, "max_overlap", "3")
            set_setting(session, "target_confidence", str(target))
    forget_fits()
    fits_before = fits_made()
    outcome = Outcome("fixed k=3" if mode == "fixed" else f"adaptive {target:g}")
    started = time.perf_counter()
    simulate(database, bench, seed, outcome, annotators)
    print(f"  {outcome.name}: simulated in {time.perf_counter() - started:.0f} s", flush=True)
    outcome.fits = fits_made() - fits_before
    tally(database, bench, outcome)
    database.dispose()
    for number, rule in enumerate((AGREED_RULE, CONFIDENT_RULE)):
        copy = folder / f"{mode}-{number}.db"
        shutil.copy(path, copy)
        decided = open_database(copy)
        outcome.rules[rule] = decide(decided, rule, bench)
        decided.dispose()
    return outcome


def share(part: int, whole: int) -> str:
    return f"{part}/{whole} ({part / whole:.1%})" if whole else "-"


def seconds(values: list[float]) -> str:
    if not values:
        return "-"
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return f"{statistics.median(ordered) * 1000:.0f} / {p95 * 1000:.0f} / {ordered[-1] * 1000:.0f}"


def report(bench: Bench, fixed: Outcome, adaptive: Outcome) -> None:
    planted = len(bench.wrong)
    good = len(bench.items) - len(bench.gold) - planted - len(bench.flawed)
    rows: list[tuple[str, Callable[[Outcome], str]]] = [
        ("judgments (items)", lambda o: str(o.judgments)),
        ("judgments (gold, calibration)", lambda o: str(o.gold_judgments)),
        ("consensus answer right", lambda o: share(o.consensus_right, o.consensus_items)),
        ("  on items with >= 3 judgments", lambda o: share(o.three_right, o.three_items)),
        ("next ms (median / p95 / max)", lambda o: seconds(o.next_seconds)),
        ("judge ms (median / p95 / max)", lambda o: seconds(o.judge_seconds)),
        ("consensus fits during the run", lambda o: str(o.fits)),
    ]
    for rule in (AGREED_RULE, CONFIDENT_RULE):

        def on(o: Outcome, figure: Callable[[Decisions], str], rule: str = rule) -> str:
            return figure(o.rules[rule])

        rows += [
            (f"after {rule}:", lambda o: ""),
            ("  approved", lambda o, on=on: on(o, lambda d: str(d.approved))),
            ("  leaks: wrong keys approved", lambda o, on=on: on(o, lambda d: str(d.leaks))),
            (
                "  wrong keys kept from approved",
                lambda o, on=on: on(o, lambda d: share(d.caught, planted)),
            ),
            (
                "  flawed items approved",
                lambda o, on=on: on(o, lambda d: share(d.flawed_approved, len(bench.flawed))),
            ),
            (
                "  good items left to the lead",
                lambda o, on=on: on(o, lambda d: share(d.good_to_lead, good)),
            ),
            ("  items left undecided", lambda o, on=on: on(o, lambda d: str(d.undecided))),
            (
                "  decision accuracy",
                lambda o, on=on: on(o, lambda d: share(d.right, d.items)),
            ),
            ("  seconds", lambda o, on=on: on(o, lambda d: f"{d.seconds:.1f}")),
        ]
    print(
        f"\n{len(bench.items)} items: {planted} planted wrong keys, {len(bench.flawed)} "
        f"flawed, {len(bench.gold)} gold"
    )
    print(f"{'':42} {fixed.name:>18} {adaptive.name:>18}")
    for label, value in rows:
        print(f"{label:42} {value(fixed):>18} {value(adaptive):>18}")
    print("\nannotator     true skill  measured    estimated reliability [95% interval] (n)")
    for annotator in ANNOTATORS:
        right, total = fixed.accuracy[annotator.name]
        cells = []
        for outcome in (fixed, adaptive):
            found = outcome.reliability.get(annotator.name)
            cells.append(
                "-"
                if found is None
                else f"{found[0]:.2f} [{found[1]:.2f}, {found[2]:.2f}] ({found[3]})"
                + (" gated out" if annotator.name in outcome.left_out else "")
            )
        skill = "random" if annotator.spammer else f"{annotator.skill:.2f}"
        print(
            f"{annotator.name:12} {skill:>10} {right / total if total else 0:>9.2f}    "
            f"fixed {cells[0]:26} adaptive {cells[1]}"
        )
    for outcome in (fixed, adaptive):
        if outcome.left_out:
            gated = ", ".join(f"{name} ({outcome.gate[name]})" for name in sorted(outcome.left_out))
            print(f"{outcome.name}: the gate left out {gated}")
    print("\njudgments (not gold) per annotator: fixed / adaptive")
    for annotator in ANNOTATORS:
        print(
            f"  {annotator.name:12} {fixed.judged[annotator.name]:>5} / "
            f"{adaptive.judged[annotator.name]:<5}"
        )
    print("\ndone when:")
    ratio = adaptive.judgments / fixed.judgments if fixed.judgments else 0
    checks = [(f"adaptive uses {ratio:.0%} of fixed k=3's judgments (<= 50%)", ratio <= 0.5)]
    for rule in (AGREED_RULE, CONFIDENT_RULE):
        mine, theirs = adaptive.rules[rule].leaks, fixed.rules[rule].leaks
        checks.append((f"{rule}: adaptive leaks {mine} <= fixed's {theirs}", mine <= theirs))
        for outcome in (fixed, adaptive):
            caught = outcome.rules[rule].caught / planted if planted else 1.0
            checks.append(
                (
                    f"{rule}, {outcome.name}: {caught:.1%} of wrong keys kept from approved "
                    "(>= 95%)",
                    caught >= 0.95,
                )
            )
    for outcome in (fixed, adaptive):
        # Everyone is measured, those the gate left out too (against the consensus they
        # had no part in, and the gold items).
        people = outcome.reliability
        spammer = people.get("spammer", (1.0, 0, 0, 0))[0]
        lowest = all(spammer < value[0] for name, value in people.items() if name != "spammer")
        checks.append(
            (f"{outcome.name}: the spammer's reliability is the lowest ({spammer:.2f})", lowest)
        )
    for outcome in (fixed, adaptive):
        recovered = outcome.three_right / outcome.three_items if outcome.three_items else 1.0
        checks.append(
            (
                f"{outcome.name}: the consensus recovers the truth on {recovered:.1%} of the "
                "items with >= 3 judgments (>= 95%)",
                recovered >= 0.95,
            )
        )
    for text, ok in checks:
        print(f"  [{'x' if ok else ' '}] {text}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=300, help="CFLUE items sampled")
    parser.add_argument("--gold", type=int, default=30, help="untouched items made gold")
    parser.add_argument("--seed", type=int, default=25)
    parser.add_argument(
        "--target", type=float, default=0.99, help="adaptive routing's target_confidence"
    )
    parser.add_argument("--cflue", type=Path, default=CFLUE_KNOWLEDGE)
    parser.add_argument(
        "--spammer-pace", type=int, default=1, help="items the spammer judges per round (others: 1)"
    )
    parser.add_argument(
        "--calibration-pass",
        type=float,
        default=CALIBRATION_PASS,
        help="the qualification gate's pass mark in both runs (0: no gate)",
    )
    parser.add_argument("--keep", type=Path, help="keep the databases here")
    args = parser.parse_args()
    cflue: Path | None = args.cflue
    if cflue is not None and not cflue.exists():
        print(f"note: no CFLUE file at {cflue}; the fixture items only")
        cflue = None
    folder = args.keep or Path(tempfile.mkdtemp(prefix="vetbench-efficiency-"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        bench = choose_items(cflue, args.items, args.gold, random.Random(args.seed))
        base = folder / "base.db"
        build_database(base, bench, folder, args.calibration_pass)
        team = tuple(replace(a, pace=args.spammer_pace) if a.spammer else a for a in ANNOTATORS)
        fixed = run("fixed", base, folder, bench, args.seed, args.target, team)
        adaptive = run("adaptive", base, folder, bench, args.seed, args.target, team)
        report(bench, fixed, adaptive)
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
