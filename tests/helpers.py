"""The one set of test helpers: store items, people, judgments and decisions directly,
host a screen in a bare app, and wait for the TUI to settle.

Items are stored through ``db.items.add_item`` (the one way in) after validation.
Judgments and decisions are inserted as rows (bypassing ``reviewer.judging``) so
tests can build any pattern quickly, including retracted and superseded judgments.
"""

from __future__ import annotations

import atexit
import contextlib
import html
import os
import pty
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from select import select as wait_readable
from typing import IO, Any, TypeVar

import pytest
from click.testing import CliRunner, Result
from sqlalchemy import Connection, Engine, event
from sqlmodel import Session, col, select
from textual.app import App
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets._footer import FooterKey, FooterLabel  # no public module (8.2.8)
from textual.worker import Worker, WorkerCancelled, WorkerFailed

from db.engine import Database
from db.item_status import refresh_item_status
from db.items import add_item
from db.models import Decision, Item, ItemRevision, Judgment, utcnow
from db.people import ensure_person
from db.validation import ItemDraft, validate_draft
from db.vocabulary import DECISION_STATUSES, Role, Verdict
from evaluator.item_filter import ItemFilter
from reviewer.cli import cli
from reviewer.judging import ItemEdit, edit_item, submit_judgment
from reviewer.tui.app import ReviewApp
from reviewer.tui.screens.agreement import AgreementScreen
from reviewer.tui.screens.review import ReviewScreen
from reviewer.tui.widgets.footer import KeyFooter

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
APPROVED_ITEMS = ItemFilter(statuses=("approved",))  # what `eval` and F4 evaluate by default

# --- items ----------------------------------------------------------------------------

EVENTS = {
    "A": "The central bank raises interest rates.",
    "B": "Mortgage costs rise for new buyers.",
    "C": "Home sales slow down.",
    "D": "Inflation climbs above target.",
}
CHOICES = {"A": "Yes", "B": "No", "C": "Maybe"}
TRUEFALSE = {"A": "对", "B": "错"}
PROMPT = "Order the events of a rate rise cycle."
EXPLANATION = "Inflation comes first; the bank reacts; borrowing costs follow."


def store_draft(
    db: Database,
    item_id: str,
    draft: ItemDraft,
    *,
    source: str = "test",
    status: str | None = None,
    author: str = "test",
) -> str:
    """Validate ``draft`` and store it as item ``item_id`` at revision 1; returns the id.

    ``status`` sets the item's status directly (e.g. ``approved`` items to evaluate);
    approved and rejected ones with the decision that makes them so (the database
    refuses a bare one: ``db.guards``)."""
    problems = validate_draft(draft)
    assert problems == [], (item_id, problems)
    with db.transaction() as session:
        add_item(session, item_id, source, draft, author=author)
        if status is not None:
            session.flush()
            _set_status(session, item_id, status)
    return item_id


def decide_items(db: Database, item_ids: list[str], status: str = "approved") -> None:
    """Approve (or reject) items as a lead would: a decision row each, then the status."""
    with db.transaction() as session:
        for item_id in item_ids:
            _set_status(session, item_id, status)


def _set_status(session: Session, item_id: str, status: str) -> None:
    """Set an item's status; approved or rejected with the decision that makes it so."""
    if status in DECISION_STATUSES:
        add_decision_row(session, item_id, status)
    item = session.get(Item, item_id)
    assert item is not None
    item.status = status
    session.add(item)


def add_decision_row(
    session: Session,
    item_id: str,
    status: str,
    lead: str = "test-lead",
    final_key: str | None = None,
) -> None:
    """A decision row by ``lead`` about the item's current revision (the caller sets the
    status and commits)."""
    person = ensure_person(session, lead, Role.LEAD)
    item = session.get(Item, item_id)
    assert item is not None and person.id is not None
    session.add(
        Decision(
            item_id=item_id,
            lead_id=person.id,
            status=status,
            revision_number=item.current_revision,
            final_key=final_key,
        )
    )
    session.flush()


def store_item(
    db: Database,
    item_id: str,
    *,
    kind: str = "ordering",
    key: str = "DABC",
    choices: dict[str, str] | int | None = None,
    prompt: str = PROMPT,
    explanation: str | None = EXPLANATION,
    source: str = "test",
    language: str = "en",
    status: str | None = None,
) -> str:
    """Store one item built from these fields; returns its id.

    ``choices`` defaults to four rate-rise events for an ordering item, Yes / No /
    Maybe for a choice item and 对 / 错 for a true/false one; a number asks for that
    many numbered choices (``choice A of econ:1`` ...), but a true/false item's two
    are always 对 / 错 (what its kind requires)."""
    if isinstance(choices, int) and kind != "truefalse":
        choices = {label: f"choice {label} of {item_id}" for label in "ABCDEFGH"[:choices]}
    elif isinstance(choices, int):
        choices = TRUEFALSE
    elif choices is None:
        choices = {"ordering": EVENTS, "truefalse": TRUEFALSE}.get(kind, CHOICES)
    draft = ItemDraft(
        kind=kind,
        prompt=prompt,
        choices=dict(choices),
        key=key,
        explanation=explanation,
        language=language,
    )
    return store_draft(db, item_id, draft, source=source, status=status)


def store_ordering_items(
    db: Database, count: int, *, prefix: str = "econ", source: str = "test"
) -> list[str]:
    """``count`` ordering items ``econ:000``, ``econ:001`` ..."""
    return [store_item(db, f"{prefix}:{index:03d}", source=source) for index in range(count)]


# --- people, judgments, decisions --------------------------------------------------------


def store_person(db: Database, name: str, role: Role = Role.ANNOTATOR) -> None:
    with db.transaction() as session:
        ensure_person(session, name, role)


_clock = {"now": utcnow()}


def store_judgment(
    db: Database,
    item_id: str,
    annotator: str,
    answer: str,
    verdict: str = Verdict.KEEP.value,
    *,
    revision: int = 1,
    seconds: float = 30.0,
    retracted: bool = False,
    comment: str = "",
    refresh: bool = True,
) -> None:
    """Insert one judgment row (strictly later than every earlier one) and refresh the status."""
    _clock["now"] += timedelta(seconds=1)
    with db.transaction() as session:
        person = ensure_person(session, annotator)
        revision_row = session.exec(
            select(ItemRevision).where(
                ItemRevision.item_id == item_id, ItemRevision.number == revision
            )
        ).one()
        session.add(
            Judgment(
                item_id=item_id,
                revision_id=revision_row.id,
                revision_number=revision,
                annotator_id=person.id,
                blind_answer=answer,
                verdict=verdict,
                seconds=seconds,
                comment=comment,
                retracted=retracted,
                created_at=_clock["now"],
            )
        )
        session.flush()
        if refresh:
            refresh_item_status(session, item_id)


def store_decision(db: Database, item_id: str, lead: str, status: str, key: str | None) -> None:
    """A lead's decision about the item's current revision, with the status it makes."""
    with db.transaction() as session:
        add_decision_row(session, item_id, status, lead, final_key=key)
        refresh_item_status(session, item_id)


def judge_flawed_then_edit(
    db: Database,
    annotator: str,
    item_id: str,
    edit: ItemEdit,
    *,
    comment: str,
    editor: str | None = None,
) -> None:
    """Through the product's own path: ``annotator`` judges revision 1 of ``item_id``
    flawed (blind answer ABCD, saying ``comment``), then ``editor`` (the annotator
    unless named) stores ``edit`` as revision 2."""
    submit_judgment(
        db,
        annotator,
        item_id,
        revision_number=1,
        blind_answer="ABCD",
        verdict="flawed",
        comment=comment,
    )
    edit_item(db, editor or annotator, item_id, edit)


def stored_judgments(db: Database) -> list[Judgment]:
    with db.session() as session:
        return list(session.exec(select(Judgment).order_by(col(Judgment.id))))


# --- a random study (agreement tests) ---------------------------------------------------

OPTION_COUNTS = {"ordering": 4, "single": 4, "multi": 5, "truefalse": 2}


@dataclass
class StudyItem:
    """One item of a random study and the judgments stored for it (annotator -> answer, verdict)."""

    item_id: str
    kind: str
    key: str
    source: str
    judgments: dict[str, tuple[str, str]] = field(default_factory=dict)


def random_answer(rng: random.Random, kind: str, size: int) -> str:
    labels = "ABCDEFGH"[:size]
    if kind == "ordering":
        return "".join(rng.sample(labels, size))
    if kind == "multi":
        chosen = [label for label in labels if rng.random() < 0.5] or [rng.choice(labels)]
        return "".join(chosen)
    return rng.choice(labels)


def random_study(
    db: Database,
    seed: int,
    *,
    items: int = 40,
    annotators: tuple[str, ...] = ("ann", "bo", "cy", "di"),
    kinds: tuple[str, ...] = ("ordering", "single", "multi", "truefalse"),
    missing: float = 0.25,
    accuracy: float = 0.7,
    sources: tuple[str, ...] = ("src-a", "src-b"),
) -> list[StudyItem]:
    """Store random items and judgments (some missing, some retracted then redone)."""
    rng = random.Random(seed)
    verdicts = [verdict.value for verdict in Verdict if verdict is not Verdict.NO_ORDER]
    study: list[StudyItem] = []
    for index in range(items):
        kind = kinds[index % len(kinds)]
        size = OPTION_COUNTS[kind] + (1 if kind == "ordering" and rng.random() < 0.3 else 0)
        key = random_answer(rng, kind, size)
        item = StudyItem(f"{kind}:{seed}:{index}", kind, key, rng.choice(sources))
        store_item(db, item.item_id, kind=kind, key=key, source=item.source, choices=size)
        for annotator in annotators:
            if rng.random() < missing:
                continue
            answer = key if rng.random() < accuracy else random_answer(rng, kind, size)
            verdict = "keep" if rng.random() < 0.6 else rng.choice(verdicts)
            if rng.random() < 0.15:  # an earlier judgment that was undone: must not count
                store_judgment(
                    db,
                    item.item_id,
                    annotator,
                    random_answer(rng, kind, size),
                    rng.choice(verdicts),
                    retracted=True,
                    refresh=False,
                )
            store_judgment(
                db,
                item.item_id,
                annotator,
                answer,
                verdict,
                seconds=rng.uniform(5, 120),
                refresh=False,
            )
            item.judgments[annotator] = (answer, verdict)
        study.append(item)
    return study


# --- the TUI ----------------------------------------------------------------------------


class ScreenHost(App[None]):
    """A bare app that shows one screen (the lead and evaluation screens, tested alone)."""

    def __init__(self, screen: Screen[None]) -> None:
        super().__init__()
        self._hosted = screen

    def on_mount(self) -> None:
        self.push_screen(self._hosted)


async def wait_until(pilot: Pilot[None], condition: Callable[[], bool], what: str) -> None:
    """Let the app run until ``condition()`` holds, else fail naming ``what``.

    The limit (60 s) is a deadline for a stuck app, not a measure of speed: a loaded CI
    machine can take many seconds to read a queue."""
    for _ in range(1200):
        if condition():
            return
        await pilot.pause(0.05)
    raise AssertionError(f"timed out waiting for {what}")


@asynccontextmanager
async def agreement_shown(
    db: Database,
    viewer: str,
    *,
    resamples: int = 0,
    size: tuple[int, int] = (120, 40),
    poll_seconds: float | None = None,
) -> AsyncIterator[tuple[AgreementScreen, Pilot[None]]]:
    """F2 as ``viewer`` sees it in a bare app, once its first figures are computed."""
    screen = AgreementScreen(db, viewer, resamples=resamples)
    if poll_seconds is not None:
        screen.POLL_SECONDS = poll_seconds  # type: ignore[misc]
    async with ScreenHost(screen).run_test(size=size) as pilot:
        await wait_until(pilot, lambda: agreement_settled(screen), "the first figures")
        yield screen, pilot


def agreement_settled(screen: AgreementScreen) -> bool:
    """Whether F2 shows figures, and the raters' reliability estimated for them (which
    comes a worker later)."""
    return screen.computations >= 1 and not screen.reliability_pending


REVIEW_GROUPS = {"review", "progress", "default"}
"""Worker groups of the review screens (other areas' screens may keep pollers running)."""


def _review_work_running(app: App[Any]) -> list[Worker[Any]] | None:
    """The review workers running now; an empty list while the review screen is busy
    between them; None when the app has no review work in hand."""
    running = [w for w in app.workers if w.is_running and w.group in REVIEW_GROUPS]
    review_stack = app.get_screen_stack(app.DEFAULT_MODE)  # also while an area is in sight
    screens = [s for s in review_stack if isinstance(s, ReviewScreen)]
    return running if running or (screens and screens[0].busy) else None


async def settle(pilot: Pilot[None]) -> None:
    """Wait until the review workers are done and their messages have been handled."""
    app = pilot.app
    for _ in range(400):
        await pilot.pause()
        running = _review_work_running(app)
        if running is None:
            await pilot.pause()
            return
        if running:
            with contextlib.suppress(WorkerFailed, WorkerCancelled):
                await running[0].wait()
    raise AssertionError("the review app did not settle")


@asynccontextmanager
async def running(app: ReviewApp, size: tuple[int, int] = (120, 40)) -> AsyncIterator[ReviewApp]:
    """The review app running headless at ``size`` (120 x 40), settled; ``press`` drives it."""
    async with app.run_test(size=size) as pilot:
        app.pilot = pilot  # type: ignore[attr-defined]
        await settle(pilot)
        yield app


def pilot_of(app: ReviewApp) -> Pilot[None]:
    """The pilot driving an app from :func:`running`."""
    pilot: Pilot[None] = app.pilot  # type: ignore[attr-defined]
    return pilot


async def press(app: ReviewApp, *keys: str) -> None:
    """Press ``keys`` in an app from :func:`running` as a person does: a key that starts
    review work (a submission, an undo ...) is waited on before the next, which the app
    would refuse with a bell while busy; then wait for it to settle.  (Without the wait
    between keys, ``"u", "w"`` passed where the undo ended within the pilot's idle wait,
    and failed on a loaded machine.)"""
    pilot = pilot_of(app)
    for key in keys:
        await pilot.press(key)
        if _review_work_running(app) is not None:
            await settle(pilot)
    await settle(pilot)


ScreenType = TypeVar("ScreenType", bound=Screen[Any])


async def open_screen(app: ReviewApp, key: str, screen_type: type[ScreenType]) -> ScreenType:
    """Press ``key`` in an app from :func:`running`; the screen it must open."""
    await press(app, key)
    assert isinstance(app.screen, screen_type), app.screen
    return app.screen


_SVG_TEXT = re.compile(r"<text[^>]*>(.*?)</text>", re.DOTALL)


def notices(app: App[Any]) -> list[str]:
    """The messages of the notices the app shows now, oldest first (Textual 8.2.8 keeps
    them in ``App._notifications``, with no public reader)."""
    return [str(notice.message) for notice in app._notifications]


def footer_keys(app: App[None]) -> list[str]:
    """The keys (grouped ones too) and group labels the footer shows now, in order."""
    shown = []
    for child in app.screen.query_one(KeyFooter).query("*"):
        if not child.display or not child.parent or not child.parent.display:
            continue
        if isinstance(child, FooterKey):
            shown.append(child.key)
        elif isinstance(child, FooterLabel):
            shown.append(str(child.render()))
    return shown


def rendered_lines(app: App[Any]) -> list[str]:
    """The terminal's lines as the compositor sends them (a cut wide character is spaces)."""
    strips = app.screen._compositor.render_strips()
    return ["".join(segment.text for segment in strip) for strip in strips]


def screen_text(app: App[None]) -> str:
    """Everything rendered on the terminal right now, as plain text (from an SVG screenshot)."""
    svg = app.export_screenshot()
    return html.unescape("".join(_SVG_TEXT.findall(svg))).replace("\xa0", " ")


# --- the command line, and files and records to import --------------------------------

BUILTIN_TEMPLATES = FIXTURES.parent / "evaluator" / "templates"


def write_file(folder: Path, name: str, content: str | bytes) -> Path:
    """Write ``folder/name`` exactly as given: bytes raw, text as UTF-8 with its own line ends."""
    path = folder / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8", newline="")
    return path


def write_folder(parent: Path, name: str, files: dict[str, str]) -> Path:
    """A new folder ``parent/name`` holding ``files`` (file name: text), as a command is
    given one: a templates folder for ``--templates``, a model folder for ``--model``."""
    folder = parent / name
    folder.mkdir()
    for file_name, content in files.items():
        write_file(folder, file_name, content)
    return folder


def jsonl_record(**overrides: Any) -> dict[str, Any]:
    """One record of vetbench's own JSONL format (what ``import`` reads and what a shot
    file holds), a two-choice single question keyed A, with ``overrides`` applied."""
    choices = {"A": "a", "B": "b"}
    return {"kind": "single", "prompt": "Q", "choices": choices, "key": "A", **overrides}


def cflue_record(**overrides: Any) -> dict[str, Any]:
    """One CFLUE JSON record, a single-choice question, with ``overrides`` applied."""
    record: dict[str, Any] = {
        "名称": "银行从业资格",
        "task": "单项选择题",
        "question": "下列属于货币政策工具的是（　）。",
        "choices": "{'A': '公开市场操作', 'B': '财政补贴', 'C': '税收', 'D': '国债'}",
        "answer": "A",
        "analysis": None,
    }
    record.update(overrides)
    return record


CFLUE_MULTI_RECORD: dict[str, Any] = {
    "名称": "证券从业资格",
    "task": "多项选择题",
    "question": "我国金融市场体系包括（）。",
    "choices": "{'A': '货币市场', 'B': '债券市场', 'C': '商品市场', 'D': '金融衍生品市场'}",
    "answer": "ABD",
    "analysis": "商品市场不是金融市场。",
}
"""A CFLUE multiple-choice record (key ABD) with an analysis."""


def run_cli(db: Database | Path | str, *args: str) -> Result:
    """``vetbench --db DB ARGS`` in this process (a Database by its full URL, password
    included); a traceback in the output fails the test."""
    url = db.engine.url.render_as_string(hide_password=False) if isinstance(db, Database) else db
    result = CliRunner().invoke(cli, ["--db", str(url), *args], prog_name="vetbench")
    assert "Traceback" not in result.output, result.output
    return result


@contextlib.contextmanager
def ctrl_c_in_commits(presses: int = 1, *, storing_source: str | None = None) -> Iterator[None]:
    """Inside the block, press Ctrl-C (a real SIGINT to this process) ``presses`` times
    whenever a database of this process is about to commit, as a person might in the
    middle of the commit (SQLAlchemy's engine ``commit`` event); with ``storing_source``,
    only in a commit whose transaction holds items of that source."""

    def press(connection: Connection) -> None:
        if storing_source is not None:
            cursor = connection.connection.driver_connection.cursor()  # type: ignore[union-attr]
            cursor.execute(f"SELECT count(*) FROM item WHERE source = '{storing_source}'")
            if not cursor.fetchone()[0]:
                return
        for _ in range(presses):
            os.kill(os.getpid(), signal.SIGINT)

    event.listen(Engine, "commit", press)
    try:
        yield
    finally:
        event.remove(Engine, "commit", press)


def run_process(
    *args: str, stdin: bytes | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[bytes]:
    """``vetbench ARGS`` in a process of its own, ``stdin`` on its standard input (a pipe),
    this checkout first on the path; its output as bytes."""
    return subprocess.run(
        [sys.executable, "-m", "reviewer.cli", *args],
        input=stdin,
        capture_output=True,
        env={**os.environ, "PYTHONPATH": str(FIXTURES.parent)},
        timeout=timeout,
        check=False,
    )


def run_in_terminal(
    db: Database | Path | str,
    *args: str,
    stdout: IO[Any] | int | None = None,
    timeout: float = 60,
    ctrl_c_at: bytes | None = None,
) -> tuple[int, str]:
    """``vetbench --db DB ARGS`` in a process of its own whose standard input, output and
    error are a real terminal (a pseudo-terminal), or whose output goes to ``stdout`` (a
    pipe, a file); returns its exit status and what it wrote on the terminal.  For
    commands that end by themselves: one that waits for keys fails the test at
    ``timeout``.  ``ctrl_c_at``: press Ctrl-C (SIGINT) once the terminal shows it."""
    url = db.engine.url.render_as_string(hide_password=False) if isinstance(db, Database) else db
    env = {key: value for key, value in os.environ.items() if key != "TEXTUAL_DRIVER"}
    main, terminal = pty.openpty()
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "reviewer.cli", "--db", str(url), *args],
            stdin=terminal,
            stdout=terminal if stdout is None else stdout,
            stderr=terminal,
            env={**env, "PYTHONPATH": str(FIXTURES.parent), "TERM": "xterm-256color"},
        )
    finally:
        os.close(terminal)
    shown = bytearray()
    deadline = time.monotonic() + timeout
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"vetbench {' '.join(args)} did not end: {bytes(shown)!r}")
            if not wait_readable([main], [], [], left)[0]:
                continue
            try:
                chunk = os.read(main, 4096)
            except OSError:  # EIO: the process ended, and the terminal with it
                break
            if not chunk:
                break
            shown += chunk
            if ctrl_c_at is not None and ctrl_c_at in shown:
                process.send_signal(signal.SIGINT)
                ctrl_c_at = None
        code = process.wait(timeout=max(deadline - time.monotonic(), 1))
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(main)
    return code, shown.decode("utf-8", "replace").replace("\r\n", "\n")


def run_at_80_columns(db: Database | Path | str, *args: str) -> tuple[int, str]:
    """:func:`run_in_terminal` on a terminal 80 columns wide (``COLUMNS=80``)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("COLUMNS", "80")
        return run_in_terminal(db, *args)


def fits_80_columns_as_piped(db: Database | Path | str, *args: str, status: int = 0) -> str:
    """``vetbench --db DB ARGS`` on an 80-column terminal (``COLUMNS=80``): it ends with
    ``status`` (0: it succeeds), no line is wider than 80 cells (Chinese counted two), and a
    reader sees every character but blanks that the piped output (and error) holds,
    wherever its lines broke; what it showed."""
    from collections import Counter

    from db.visible_text import east_asian_cell_len

    ended, shown = run_at_80_columns(db, *args)
    assert ended == status, shown
    widest = max(shown.splitlines(), key=east_asian_cell_len)
    assert east_asian_cell_len(widest) <= 80, widest
    piped = run_cli(db, *args)
    assert piped.exit_code == status, piped.output
    seen = Counter(character for character in shown if not character.isspace())
    assert seen == Counter(character for character in piped.output if not character.isspace())
    return shown


_demo_built: list[Path] = []  # the demo database this test process built, to copy from


def built_demo_database(path: Path) -> Path:
    """The demo database (``scripts/make_demo_db.py``, as ``scripts/demo.sh`` builds it)
    at ``path``: built once per test process (about 2 s), then copied with SQLite's backup
    API (a consistent copy, what the write-ahead log holds included)."""
    if not _demo_built:
        scripts = str(FIXTURES.parent / "scripts")
        sys.path.insert(0, scripts)
        try:
            from make_demo_db import build_demo_database
        finally:
            sys.path.remove(scripts)
        folder = Path(tempfile.mkdtemp(prefix="vetbench-demo-"))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        build_demo_database(folder / "demo.db")
        _demo_built.append(folder / "demo.db")
    with (
        contextlib.closing(sqlite3.connect(_demo_built[0])) as source,
        contextlib.closing(sqlite3.connect(path)) as target,
    ):
        source.backup(target)
    return path


def item_status(db: Database, item_id: str) -> str:
    """The status column of item ``item_id`` as stored now."""
    with db.session() as session:
        item = session.get(Item, item_id)
        assert item is not None, item_id
        return item.status
