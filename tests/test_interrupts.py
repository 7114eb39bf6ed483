"""Ctrl-C held until the step in hand is whole (db/interrupts.py)."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from db.interrupts import interrupt_after


def test_ctrl_c_inside_the_block_is_raised_when_the_block_has_ended() -> None:
    steps: list[str] = []
    with pytest.raises(KeyboardInterrupt), interrupt_after():
        os.kill(os.getpid(), signal.SIGINT)
        steps.append("stored")
        steps.append("counted")
    assert steps == ["stored", "counted"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_without_ctrl_c_the_block_runs_as_it_is() -> None:
    with interrupt_after():
        pass
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_an_error_in_the_block_is_raised_and_the_handler_restored() -> None:
    with pytest.raises(ValueError, match="bad answer"), interrupt_after():
        raise ValueError("bad answer")
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_another_thread_or_handler_is_left_alone() -> None:
    seen: list[object] = []

    def in_a_thread() -> None:
        with interrupt_after():
            seen.append(signal.getsignal(signal.SIGINT))

    thread = threading.Thread(target=in_a_thread)
    thread.start()
    thread.join()
    assert seen == [signal.default_int_handler]

    def own(_signum: int, _frame: object) -> None:
        seen.append("own handler")

    previous = signal.signal(signal.SIGINT, own)
    try:
        with interrupt_after():
            os.kill(os.getpid(), signal.SIGINT)
        assert seen[-1] == "own handler"  # the program's own handler ran, nothing held
    finally:
        signal.signal(signal.SIGINT, previous)


def test_ctrl_c_held_arrives_as_the_type_asked_for() -> None:
    class Held(KeyboardInterrupt):
        pass

    with pytest.raises(Held), interrupt_after(Held):
        os.kill(os.getpid(), signal.SIGINT)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_second_ctrl_c_does_not_wait_for_the_block() -> None:
    class Again(KeyboardInterrupt):
        pass

    steps: list[str] = []
    with pytest.raises(Again), interrupt_after(again=Again):
        os.kill(os.getpid(), signal.SIGINT)
        steps.append("held")
        os.kill(os.getpid(), signal.SIGINT)
        steps.append("never reached")
    assert steps == ["held"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
