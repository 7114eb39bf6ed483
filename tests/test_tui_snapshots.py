"""SVG snapshots of every screen and modal, at 80×24 and at 120×35.

Textual is pinned exactly in pyproject.toml (and plotext, which draws F4's curve);
cursors do not blink, the clock and the data are fixed, and no timing reaches the
screen, so a snapshot changes only when the screen does.  Update after an intended
change with ``pytest tests/test_tui_snapshots.py --snapshot-update`` and look at
every new SVG before committing it (``tests/__snapshots__/test_tui_snapshots/``):
``python scripts/snapshots_to_png.py OUT.png SVG...`` renders them (Chinese included)
with headless Chromium.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from conftest import BuiltDatabases
from eval_helpers import MIXED_SET_ANSWERS, mixed_set
from helpers import (
    APPROVED_ITEMS,
    agreement_settled,
    random_study,
    settle,
    store_item,
    store_judgment,
    store_person,
    wait_until,
)
from sqlalchemy import update
from sqlmodel import col, select
from textual.pilot import Pilot
from textual.widgets import DataTable, Input, TabbedContent, TextArea

from db.engine import Database, open_database
from db.item_status import refresh_item_status
from db.models import Decision, EvalRun, ItemRevision, Judgment, Prediction
from db.vocabulary import Role
from evaluator.backends.scripted import ScriptedBackend
from evaluator.runner import create_run, execute_run
from reviewer.judging import ItemEdit, edit_item, submit_judgment
from reviewer.tui.app import ReviewApp, make_app
from reviewer.tui.screens.agreement import AgreementScreen
from reviewer.tui.screens.evaluation import EvaluationScreen
from reviewer.tui.screens.evaluation_form import fewer_shots_hint
from reviewer.tui.timer import ActiveTimer
from reviewer.tui.widgets.progress import ProgressLine

NARROW, WIDE = (80, 24), (120, 35)
SIZES = pytest.mark.parametrize("size", [NARROW, WIDE], ids=["80x24", "120x35"])
FIXED_TIME = datetime(2026, 3, 2, 9, 30, tzinfo=UTC)

Size = tuple[int, int]
RunBefore = Callable[[Pilot[None]], Awaitable[None]]


def fixed_clock() -> float:
    return 1000.0


# --- items: one source per kind and language, so a source filter serves exactly one -------

ITEMS: dict[str, dict[str, Any]] = {
    "en-ordering": {
        "kind": "ordering",
        "prompt": (
            "A central bank faces inflation well above its target while the housing "
            "market is still hot. Put the events in their logical order."
        ),
        "key": "DABC",
        "explanation": "Inflation comes first; the bank reacts; borrowing costs follow; sales slow.",
    },
    "zh-ordering": {
        "kind": "ordering",
        "language": "zh",
        "prompt": "中国人民银行宣布下调金融机构存款准备金率0.5个百分点，请将下列事件按逻辑顺序排列。",
        "choices": {
            "A": "商业银行可用于放贷的资金增加约1.2万亿元。",
            "B": "中国人民银行宣布自2019年6月1日起下调存款准备金率。",
            "C": "企业贷款利率下降，投资意愿回升。",
            "D": "市场流动性改善，银行间市场7天期回购利率回落至1.77%。",
        },
        "key": "BADC",
        "explanation": "先有降准公告，再有可贷资金增加，随后流动性改善、利率回落，最后企业投资回升。",
    },
    "en-single": {
        "kind": "single",
        "prompt": (
            "The price elasticity of demand for a good is -0.4. Demand for the good is best "
            "described as:"
        ),
        "choices": {
            "A": "perfectly elastic",
            "B": "elastic",
            "C": "inelastic",
            "D": "unit elastic",
        },
        "key": "C",
        "explanation": "The absolute value is below 1: quantity changes proportionally less than price.",
    },
    "zh-single": {
        "kind": "single",
        "language": "zh",
        "prompt": (
            "甲公司为增值税一般纳税人，2019年6月1日购入一台不需要安装的生产设备，取得的增值税专用"
            "发票上注明的价款为100万元，增值税税额为13万元，另支付运输费1.09万元（其中增值税税额为"
            "0.09万元）。假定不考虑其他因素，该设备的入账价值为（　）万元。"
        ),
        "choices": {"A": "100", "B": "101", "C": "113", "D": "114.09"},
        "key": "B",
        "explanation": (
            "入账价值＝100＋1.09－0.09＝101（万元），一般纳税人取得的增值税专用发票上注明的"
            "增值税税额可以抵扣，不计入设备成本。"
        ),
    },
    "en-multi": {
        "kind": "multi",
        "prompt": "Which of these are securities intermediaries?",
        "choices": {
            "A": "Brokers",
            "B": "Underwriters",
            "C": "Households",
            "D": "Custodians",
            "E": "Listed companies",
        },
        "key": "ABD",
        "explanation": "Brokers, underwriters and custodians serve issuers and investors.",
    },
    "zh-multi": {
        "kind": "multi",
        "language": "zh",
        "prompt": (
            "根据《中华人民共和国证券法》的规定，上市公司在报告期内的GDP增长率为6.5%，CPI上涨2.1%，"
            "M2余额同比增长8.7%，“稳健的货币政策”要保持流动性合理充裕；下列说法中，正确的有（  ）。"
        ),
        "choices": {
            "A": "降低存款准备金率属于扩张性货币政策",
            "B": "公开市场卖出国债会增加基础货币",
            "C": "再贷款利率下调有助于降低融资成本",
            "D": "提高再贴现率会增加市场流动性",
        },
        "key": "AC",
        "explanation": "降准与下调再贷款利率均为宽松操作；卖出国债回笼基础货币，提高再贴现率收紧流动性。",
    },
    "en-truefalse": {
        "kind": "truefalse",
        "prompt": "Lowering the reserve requirement ratio is an expansionary monetary policy.",
        "choices": {"A": "True", "B": "False"},
        "key": "A",
        "explanation": "Banks can lend more of their deposits.",
    },
    "zh-truefalse": {
        "kind": "truefalse",
        "language": "zh",
        "prompt": "我国存款保险对同一存款人在同一家投保机构的存款，实行最高偿付限额为人民币50万元。",
        "key": "A",
        "explanation": "根据《存款保险条例》，本金和利息合并计算，最高偿付限额为人民币50万元。",
    },
    "hostile": {
        "kind": "single",
        "prompt": (
            "[bold red]Ignore the key[/bold red] \x1b[2J\x1b]0;pwned\x07 <script>alert(1)</script> "
            "[@click=app.quit]click me[/] \u202eevil\u202c &lt;b&gt; and a tab\there."
        ),
        "choices": {
            "A": "[link=https://example.com]a link[/link]",
            "B": "\x1b[31mred\x1b[0m",
            "C": "plain",
        },
        "key": "C",
        "explanation": "[blink]blink[/blink] \x07 bell",
    },
    "latex": {
        "kind": "single",
        "language": "zh",
        "prompt": (
            "某债券面值1&amp;nbsp;000元，票面利率为5%，到期收益率为\\frac{r}{2}，则其久期D满足"
            "$D=\\sum_{t=1}^{n}\\frac{t\\times CF_t}{(1+y)^t}$，下列说法正确的是（&nbsp;）。"
        ),
        "choices": {
            "A": "久期随票面利率上升而增加",
            "B": "久期随到期收益率上升而减少",
            "C": "零息债券的久期小于其期限",
        },
        "key": "B",
        "explanation": "资料（2）：\\begin{aligned}借：银行存款 & 106 \\\\ 贷：主营业务收入 & 100\\end{aligned}",
    },
}


def store_items(db: Database, sources: list[str]) -> None:
    for source in sources:
        fields = dict(ITEMS[source])
        store_item(db, f"{source}:1", source=source, **fields)


def fix_timestamps(db: Database) -> None:
    """Every stored time to one fixed moment (lists show them)."""
    with db.transaction() as session:
        for table in (ItemRevision, Judgment, Decision, Prediction):
            session.execute(update(table).values(created_at=FIXED_TIME))


def build_review_db(db: Database) -> None:
    """One item per kind and language, the hostile and LaTeX items, a revised item and
    one alice judged with a comment."""
    store_person(db, "alice")
    store_person(db, "lena", Role.LEAD)
    store_items(db, list(ITEMS))
    store_item(db, "revised:1", source="revised", **ITEMS["zh-single"])
    edit_item(
        db,
        "lena",
        "revised:1",
        ItemEdit(
            note="运输费与税额按发票更正",
            prompt=ITEMS["zh-single"]["prompt"]
            .replace("1.09万元", "2.18万元")
            .replace("0.09万元", "0.18万元"),
            choices={"A": "100", "B": "102", "C": "113", "D": "115.18"},
        ),
        base_revision=1,
    )
    store_item(db, "judged:1", source="judged", **{**ITEMS["zh-single"], "key": "A"})
    submit_judgment(
        db,
        "alice",
        "judged:1",
        revision_number=1,
        blind_answer="B",
        verdict="wrong-key",
        corrected_key="B",
        comment="运输费1.09万元中的增值税税额0.09万元可以抵扣，所以答案应为101万元，不是100万元。",
        seconds=42.0,
    )
    fix_timestamps(db)


@pytest.fixture
def review_db(db_path: Path, built_databases: BuiltDatabases) -> Database:
    return built_databases.copy(db_path, build_review_db)


def app_for(db: Database, person: str = "alice", **filters: str) -> ReviewApp:
    return make_app(db, person, timer=ActiveTimer(clock=fixed_clock), **filters)


def progress_counted(pilot: Pilot[None]) -> bool:
    lines = list(pilot.app.query(ProgressLine))
    for screen in pilot.app.screen_stack:
        lines += list(screen.query(ProgressLine))
    return all("counting" not in str(line.render()) for line in lines)


def tables_measured(pilot: Pilot[None]) -> bool:
    """Whether every table has sized its columns to the rows it was given.

    A DataTable measures new cells when the app is next idle; a snapshot taken before
    that shows columns as wide as their headers, and one taken after shows them whole,
    so a picture is only the same every time once they are measured.  There is no
    public flag for it in Textual 8.2.8: these are the attributes ``_on_idle`` clears."""
    tables = [table for screen in pilot.app.screen_stack for table in screen.query(DataTable)]
    return not any(
        table._require_update_dimensions or table._updated_cells or table._new_rows
        for table in tables
    )


async def quiet(pilot: Pilot[None], *, toasts: bool = False) -> None:
    """Cursors that do not blink, no notifications (unless ``toasts``: the picture is of
    one), tables measured: the same picture every time."""
    for screen in pilot.app.screen_stack:
        for widget in [*screen.query(Input), *screen.query(TextArea)]:
            widget.cursor_blink = False
    if not toasts:
        pilot.app.clear_notifications()
    await pilot.pause()
    await wait_until(pilot, lambda: tables_measured(pilot), "the tables' column widths")
    await pilot.pause()


def steps(
    *keys: str, then: Callable[[Pilot[None]], Awaitable[None]] | None = None, toasts: bool = False
) -> RunBefore:
    """A run_before that presses keys one by one, waiting for the workers after each;
    ``toasts`` keeps the notifications ``then`` waits for."""

    async def run(pilot: Pilot[None]) -> None:
        await settle(pilot)
        for key in keys:
            await pilot.press(key)
            await settle(pilot)
        await wait_until(pilot, lambda: progress_counted(pilot), "the progress line")
        if then is not None:
            if toasts:
                pilot.app.clear_notifications()  # only the ones ``then`` brings
            await then(pilot)
        await quiet(pilot, toasts=toasts)

    return run


def typed(text: str) -> list[str]:
    return list(text)


def blind_keys(source: str) -> list[str]:
    """A blind answer that differs from the key, so the reveal shows the differences."""
    kind = ITEMS[source]["kind"]
    return {
        "ordering": ["d", "a", "c", "b"],
        "single": ["a"],
        "multi": ["a", "c"],
        "truefalse": ["b"],
    }[kind]


# --- the review screen ------------------------------------------------------------------

KIND_SOURCES = [source for source in ITEMS if source[:2] in ("en", "zh")]


@SIZES
@pytest.mark.parametrize("source", KIND_SOURCES)
def test_review_blind(snap_compare, review_db: Database, source: str, size: Size) -> None:  # type: ignore[no-untyped-def]
    app = app_for(review_db, source=source)
    assert snap_compare(app, terminal_size=size, run_before=steps(*blind_keys(source)[:1]))


@SIZES
@pytest.mark.parametrize("source", KIND_SOURCES)
def test_review_revealed(snap_compare, review_db: Database, source: str, size: Size) -> None:  # type: ignore[no-untyped-def]
    app = app_for(review_db, source=source)
    keys = [*blind_keys(source), "enter"]
    assert snap_compare(app, terminal_size=size, run_before=steps(*keys))


# The review screen and its modals: the source the queue serves, and the keys pressed
# before the picture is taken.
SCREENS: dict[str, tuple[str, list[str]]] = {
    "hostile-text": ("hostile", ["a", "enter"]),
    "raw-form": ("latex", ["a", "enter", "v"]),
    "display-form-of-latex": ("latex", ["a", "enter"]),
    "judged-item": ("judged", ["j", *typed("judged:1"), "enter"]),
    "nothing-left": ("no-such-source", []),
    "help": ("en-ordering", ["question_mark"]),
    # Ctrl+R: the changes in a window of their own (Tab: from the comment to the key, as
    # the blind answer differed from it, then to the scenario).
    "edit": (
        "zh-ordering",
        [
            *blind_keys("zh-ordering"),
            "enter",
            "f",
            "tab",
            "tab",
            "ctrl+e",
            *typed(" (2019)"),
            "ctrl+r",
        ],
    ),
    # The flawed form: the cursor in Comment, every field named in its border.
    "edit-form": ("zh-single", [*blind_keys("zh-single"), "enter", "f", *typed("B is right")]),
    "revisions": ("revised", ["a", "enter", "r"]),
    "jump": ("en-single", ["j", *typed("zh-single:1")]),
    "filter": ("en-single", ["slash"]),
    "judged-list": ("en-single", ["l"]),
}


@SIZES
@pytest.mark.parametrize(("source", "keys"), SCREENS.values(), ids=SCREENS.keys())
def test_review_screen(  # type: ignore[no-untyped-def]
    snap_compare, review_db: Database, source: str, keys: list[str], size: Size
) -> None:
    app = app_for(review_db, source=source)
    assert snap_compare(app, terminal_size=size, run_before=steps(*keys))


# --- the review screen's modals -----------------------------------------------------------


@SIZES
@pytest.mark.parametrize(
    ("verdict", "source"),
    [("m", "en-ordering"), ("w", "zh-single"), ("d", "en-multi")],
    ids=["ambiguous", "wrong-key", "duplicate"],
)
def test_verdict_prompt(
    snap_compare, review_db: Database, verdict: str, source: str, size: Size
) -> None:  # type: ignore[no-untyped-def]
    app = app_for(review_db, source=source)
    keys = [*blind_keys(source), "enter", verdict]
    assert snap_compare(app, terminal_size=size, run_before=steps(*keys))


# --- F2: agreement --------------------------------------------------------------------------


def build_study_db(db: Database) -> None:
    """Three annotators' judgments on a random study (some agreed, some in conflict), a
    lead, two Chinese conflicts, a conflict over LaTeX text and a likely wrong key."""
    store_person(db, "lena", Role.LEAD)
    study = random_study(db, 11, items=24, annotators=("ann", "bo", "cy"))
    with db.transaction() as session:
        for item in study:
            refresh_item_status(session, item.item_id)
    conflicts = {
        "zh-single": ("B", "A"),
        "zh-ordering": ("BADC", "ABDC"),
        "latex": ("B", "C"),
    }
    for source, (right, other) in conflicts.items():
        item_id = f"{source}:1"
        store_item(db, item_id, source=source, **ITEMS[source])
        store_judgment(db, item_id, "ann", right, "keep", seconds=35.0)
        store_judgment(
            db,
            item_id,
            "bo",
            other,
            "wrong-key",
            seconds=61.0,
            comment="运输费中的增值税0.09万元可以抵扣，入账价值应为101万元。",
        )
    store_item(db, "zh-multi:1", source="zh-multi", **ITEMS["zh-multi"])
    for annotator in ("ann", "bo", "cy"):  # all three agree on another answer than the key
        store_judgment(db, "zh-multi:1", annotator, "ACD", "wrong-key", seconds=48.0)
    fix_timestamps(db)


@pytest.fixture
def study_db(db_path: Path, built_databases: BuiltDatabases) -> Database:
    return built_databases.copy(db_path, build_study_db)


def open_tab(
    screen_type: type[Any], ready: Callable[[Any], bool], tab: str
) -> Callable[[Pilot[None]], Awaitable[None]]:
    async def then(pilot: Pilot[None]) -> None:
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, screen_type), "the screen")
        screen = pilot.app.screen
        await wait_until(pilot, lambda: ready(screen), "its figures")
        screen.query_one(TabbedContent).active = tab
        await pilot.pause()

    return then


@SIZES
@pytest.mark.parametrize(
    "tab", ["figures-tab", "annotators-tab", "breakdown-tab", "wrong-keys-tab"]
)
def test_agreement(snap_compare, study_db: Database, tab: str, size: Size) -> None:  # type: ignore[no-untyped-def]
    app = app_for(study_db, "lena", source="nowhere")
    then = open_tab(AgreementScreen, agreement_settled, tab)
    assert snap_compare(app, terminal_size=size, run_before=steps("f2", then=then))


# --- F3: adjudication -----------------------------------------------------------------------


def conflicts_read(pilot: Pilot[None]) -> bool:
    """The queue is listed and the consensus on its items read (it comes a worker later)."""
    tables = list(pilot.app.screen.query("#queue"))
    consensus = getattr(pilot.app.screen, "consensus", None)
    return bool(tables) and tables[0].row_count > 0 and bool(consensus)  # type: ignore[attr-defined]


def adjudication(*keys: str) -> Callable[[Pilot[None]], Awaitable[None]]:
    """Wait for the conflict queue, press ``keys``; with keys, wait for the dialog they open.

    A dialog can come a worker and a message later (approve-agreed counts first), so
    the picture is taken once it is the screen on top, not after a fixed number of
    frames: on a loaded machine those are not enough."""

    async def then(pilot: Pilot[None]) -> None:
        await wait_until(pilot, lambda: conflicts_read(pilot), "the conflict queue")
        depth = len(pilot.app.screen_stack)
        for key in keys:
            await pilot.press(key)
            await pilot.pause()
        await pilot.app.workers.wait_for_complete()
        if keys:
            await wait_until(pilot, lambda: len(pilot.app.screen_stack) > depth, "the dialog")
        await pilot.pause()

    return then


@SIZES
def test_adjudication_list(snap_compare, study_db: Database, size: Size) -> None:  # type: ignore[no-untyped-def]
    app = app_for(study_db, "lena", source="nowhere")
    assert snap_compare(app, terminal_size=size, run_before=steps("f3", then=adjudication()))


def case_of(item_id: str, *keys: str) -> Callable[[Pilot[None]], Awaitable[None]]:
    """Highlight ``item_id`` in the conflict queue, then press ``keys``."""

    async def then(pilot: Pilot[None]) -> None:
        await wait_until(pilot, lambda: conflicts_read(pilot), "the conflict queue")
        queue = pilot.app.screen.query_one("#queue", DataTable)
        queue.move_cursor(row=queue.get_row_index(item_id))
        await pilot.pause()
        for key in keys:
            await pilot.press(key)
            await pilot.pause()

    return then


@SIZES
def test_adjudication_chinese_case(snap_compare, study_db: Database, size: Size) -> None:  # type: ignore[no-untyped-def]
    app = app_for(study_db, "lena", source="nowhere")
    then = case_of("zh-ordering:1")
    assert snap_compare(app, terminal_size=size, run_before=steps("f3", then=then))


@SIZES
@pytest.mark.parametrize("keys", [(), ("v",)], ids=["display-form", "raw-form"])
def test_adjudication_latex_case(
    snap_compare, study_db: Database, keys: tuple[str, ...], size: Size
) -> None:  # type: ignore[no-untyped-def]
    app = app_for(study_db, "lena", source="nowhere")
    then = case_of("latex:1", *keys)
    assert snap_compare(app, terminal_size=size, run_before=steps("f3", then=then))


@SIZES
@pytest.mark.parametrize("key", ["x", "c", "A"], ids=["reject", "corrected-key", "approve-agreed"])
def test_adjudication_dialog(snap_compare, study_db: Database, key: str, size: Size) -> None:  # type: ignore[no-untyped-def]
    app = app_for(study_db, "lena", source="nowhere")
    assert snap_compare(app, terminal_size=size, run_before=steps("f3", then=adjudication(key)))


# --- F4: evaluation -------------------------------------------------------------------------


@pytest.fixture
def eval_db(db_path: Path) -> Database:
    """Eight approved items and two finished runs of scripted models, at fixed times."""
    db = open_database(db_path)
    store_person(db, "lena", Role.LEAD)
    mixed_set(db)
    weak = {**MIXED_SET_ANSWERS, "cflue:2": "答案：A", "cflue:4": "B", "econ:2": "A, B, C, D"}
    weaker = {item: "答案：A" for item in MIXED_SET_ANSWERS}
    weaker["econ:1"] = "The order is unclear to me."
    for model, answers in (("qwen2.5-7b-instruct", weak), ("smollm2-135m-instruct", weaker)):
        backend = ScriptedBackend(answers, model=model, latency_s=0.25)
        run_id = create_run(db, backend.info, mode="generate", shots=1, item_filter=APPROVED_ITEMS)
        execute_run(db, run_id, backend)
    with db.transaction() as session:
        for run in session.exec(select(EvalRun)).all():
            start = FIXED_TIME + timedelta(hours=run.id or 0)
            run.started_at, run.finished_at = start, start + timedelta(seconds=16)
            run.params = {**run.params, "session_started_at": start.isoformat()}
            session.add(run)
            predictions = session.exec(
                select(Prediction).where(Prediction.run_id == run.id).order_by(col(Prediction.id))
            ).all()
            for index, prediction in enumerate(predictions, start=1):
                prediction.created_at = start + timedelta(seconds=2 * index)
                session.add(prediction)
    return db


def evaluation(tab: str) -> Callable[[Pilot[None]], Awaitable[None]]:
    def ready(screen: EvaluationScreen) -> bool:
        figures = screen.query_one("#figures", DataTable)
        suspects = screen.query_one("#suspects", DataTable)
        return figures.row_count > 0 and suspects.row_count > 0

    return open_tab(EvaluationScreen, ready, tab)


@SIZES
@pytest.mark.parametrize("tab", ["live-tab", "leaderboard-tab", "suspects-tab"])
def test_evaluation(snap_compare, eval_db: Database, tab: str, size: Size) -> None:  # type: ignore[no-untyped-def]
    app = app_for(eval_db, "lena", source="nowhere")
    assert snap_compare(app, terminal_size=size, run_before=steps("f4", then=evaluation(tab)))


# --- issue 23: what 80 columns cut ------------------------------------------------------------


def test_review_reveal_scrolls_with_space(snap_compare, review_db: Database) -> None:  # type: ignore[no-untyped-def]
    """Space scrolls the item and the reveal a page on without Tab: the last events, the
    key in words and the explanation come into view."""
    app = app_for(review_db, source="zh-ordering")
    keys = [*blind_keys("zh-ordering"), "enter", "space"]
    assert snap_compare(app, terminal_size=NARROW, run_before=steps(*keys))


def test_adjudication_decision_toast_leaves_the_case_in_view(
    snap_compare, study_db: Database
) -> None:  # type: ignore[no-untyped-def]
    app = app_for(study_db, "lena", source="nowhere")

    async def then(pilot: Pilot[None]) -> None:
        await case_of("zh-single:1", "a")(pilot)
        await pilot.app.workers.wait_for_complete()
        await wait_until(pilot, lambda: bool(pilot.app._notifications), "the toast")
        await wait_until(pilot, lambda: conflicts_read(pilot), "the conflict queue again")
        await pilot.pause()

    assert snap_compare(app, terminal_size=NARROW, run_before=steps("f3", then=then, toasts=True))


def test_evaluation_run_finished_toast_leaves_the_run_in_view(
    snap_compare, eval_db: Database
) -> None:  # type: ignore[no-untyped-def]
    app = app_for(eval_db, "lena", source="nowhere")

    async def then(pilot: Pilot[None]) -> None:
        await evaluation("live-tab")(pilot)
        pilot.app.screen.post_message(EvaluationScreen.RunEnded((2,), "finished"))
        await wait_until(pilot, lambda: bool(pilot.app._notifications), "the toast")
        await pilot.pause()

    assert snap_compare(app, terminal_size=NARROW, run_before=steps("f4", then=then, toasts=True))


def test_evaluation_says_why_no_run_started_under_its_form(snap_compare, eval_db: Database) -> None:  # type: ignore[no-untyped-def]
    """Why a Start made no run, in full under the form at 80 columns, no field covered."""
    app = app_for(eval_db, "lena", source="nowhere")

    async def then(pilot: Pilot[None]) -> None:
        await evaluation("live-tab")(pilot)
        pilot.app.screen.post_message(
            EvaluationScreen.RunEnded(
                (),
                "failed",
                # the reason as F4 words it, with a shot file path that is the same
                # wherever the repository is (fewer_shots_hint names the real one)
                "too few shots: ordering would get 1 of 5 shots outside the evaluated set. "
                + fewer_shots_hint().split("(such as")[0]
                + "(such as fixtures/shots_*.jsonl), or a source or status.",
            )
        )
        await wait_until(
            pilot, lambda: pilot.app.screen.query_one("#start-message").display, "the message"
        )
        await pilot.pause()

    assert snap_compare(app, terminal_size=NARROW, run_before=steps("f4", then=then))


def test_status_line_names_an_active_filter_at_80_columns(
    snap_compare, review_db: Database
) -> None:  # type: ignore[no-untyped-def]
    app = app_for(review_db, source="zh-single", search="增值税 not:土地增值税")
    assert snap_compare(app, terminal_size=NARROW, run_before=steps("a"))
