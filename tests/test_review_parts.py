"""The plain parts of the review TUI: literal text, the active-time clock, the answer draft."""

from __future__ import annotations

from db.vocabulary import ItemKind
from reviewer.tui.literal import literal, visible_text
from reviewer.tui.timer import ActiveTimer
from reviewer.tui.widgets.answer_builder import AnswerDraft


def test_control_characters_become_visible_and_markup_stays_text() -> None:
    raw = "[bold]x[/] \x1b[31mred\x1b]0;title\x07 tab\tnew\nline\r\nend\x7f\x9b"
    shown = visible_text(raw)
    assert shown == "[bold]x[/] ␛[31mred␛]0;title␇ tab\tnew\nline\nend␡\ufffd"
    text = literal(raw)
    assert text.plain == shown and text.spans == []  # no markup was parsed
    assert not any(0x80 <= ord(c) < 0xA0 or (ord(c) < 0x20 and c not in "\n\t") for c in shown)


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_timer_counts_active_time_only() -> None:
    clock = FakeClock()
    timer = ActiveTimer(idle_cap=60, clock=clock)
    timer.start()
    clock.now = 10
    timer.touch()
    clock.now = 500  # walked away: only the idle cap counts
    timer.touch()
    assert timer.seconds == 70
    timer.pause()  # Ctrl+Z
    clock.now = 5000
    timer.resume()
    clock.now = 5005
    assert timer.seconds == 75
    timer.start()
    assert timer.seconds == 0


def test_ordering_draft() -> None:
    draft = AnswerDraft(ItemKind.ORDERING, list("ABCD"))
    assert draft.press("D") and draft.press("A")
    assert not draft.press("D")  # already placed
    assert not draft.press("E")  # not an event
    assert draft.describe().plain == "D, A, ·, ·"
    assert draft.back() and draft.letters == ["D"]
    assert draft.press_number(2) and draft.press_number(3)  # B, C
    assert not draft.press_number(9)
    assert not draft.is_complete
    draft.complete_last()  # one left: it is determined
    assert draft.is_complete and draft.answer == "DBCA"


def test_choice_drafts() -> None:
    multi = AnswerDraft(ItemKind.MULTI, list("ABCD"))
    for label in "DBAB":
        multi.press(label)
    assert multi.answer == "AD"  # B toggled twice; letters sorted
    single = AnswerDraft(ItemKind.SINGLE, list("ABC"))
    single.press("A")
    single.press("C")
    assert single.answer == "C" and single.is_complete
    truefalse = AnswerDraft(ItemKind.TRUEFALSE, ["A", "B"])
    truefalse.press_number(2)
    assert truefalse.describe().plain == "B (错)"
    assert not AnswerDraft(ItemKind.MULTI, ["A", "B"]).is_complete


def test_backspace_takes_back_the_last_key_pressed_whatever_it_did() -> None:
    multi = AnswerDraft(ItemKind.MULTI, list("ABCD"))
    for label in "bcdaa".upper():  # the last A un-chooses A
        multi.press(label)
    assert multi.answer == "BCD"
    assert multi.back() and multi.answer == "ABCD"  # A chosen again, D kept
    assert multi.back() and multi.answer == "BCD"  # then the A pressed before it
    single = AnswerDraft(ItemKind.SINGLE, list("ABC"))
    single.press("A")
    single.press("C")
    assert single.back() and single.answer == "A"  # the earlier choice returns
    assert single.back() and not single.is_complete
    assert not single.back()  # nothing left to take back
    order = AnswerDraft(ItemKind.ORDERING, list("ABC"))
    order.press("B")
    order.press("A")
    order.complete_last()  # Enter's step is taken back too
    assert order.answer == "BAC" and order.back() and order.letters == ["B", "A"]


def test_idle_collector_collects_in_quiet_moments_and_restores_python_settings() -> None:
    import gc

    from reviewer.tui.idle_gc import (
        FULL_COLLECTION_AT_LATEST_SECONDS,
        FULL_COLLECTION_EVERY_SECONDS,
        IdleCollector,
    )

    before = gc.get_threshold()
    clock = FakeClock()
    collector = IdleCollector(clock=clock)
    collector.start()
    try:
        assert gc.get_threshold()[:2] == before[:2] and gc.get_threshold()[2] > 10_000
        assert gc.get_freeze_count() > 0  # the start-up objects
        clock.now = FULL_COLLECTION_EVERY_SECONDS + 0.5
        collector.touch()  # typing: not now
        collector.tick()
        assert collector.collections == 0
        clock.now += 1.5  # quiet
        collector.tick()
        assert collector.collections == 1
        for _ in range(int(FULL_COLLECTION_AT_LATEST_SECONDS) + 1):  # typing without a pause
            clock.now += 1
            collector.touch()
            collector.tick()
        assert collector.collections == 2  # collected anyway, once
    finally:
        collector.stop()
    assert gc.get_threshold() == before


def test_idle_collector_leaves_what_a_host_process_froze_frozen() -> None:
    """gc.unfreeze() thaws the whole permanent generation: an app started in a process
    that had frozen objects (a test process, an embedding host) never calls it."""
    import gc

    from reviewer.tui.idle_gc import IdleCollector

    gc.freeze()
    frozen_by_host = gc.get_freeze_count()
    before = gc.get_threshold()
    collector = IdleCollector(clock=FakeClock())
    collector.start()
    assert gc.get_threshold()[2] > 10_000
    collector.stop()
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() >= frozen_by_host > 0
