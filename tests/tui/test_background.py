"""The gate background workers pass before each step (`tracer/tui/background.py`)."""

from __future__ import annotations

from tracer.tui.background import BEAT, MAX_HOLD, QUIET, Background


class Clock:
    def __init__(self, step: float = 0.0) -> None:
        self.now = 100.0
        self.step = step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def test_a_key_holds_background_work_back_for_the_quiet_time() -> None:
    clock = Clock()
    gate = Background(clock)
    assert gate.clear()
    gate.input()
    assert not gate.clear()
    clock.now += QUIET / 2
    gate.beat()
    assert not gate.clear()
    clock.now += QUIET / 2
    gate.beat()
    assert gate.clear()


def test_a_ui_thread_behind_its_heartbeat_holds_background_work_back() -> None:
    clock = Clock()
    gate = Background(clock)
    clock.now += 4 * BEAT  # no beat: the event loop is busy drawing or building a screen
    assert not gate.clear()
    gate.beat()
    assert gate.clear()


def test_wait_turn_stops_when_its_screen_is_covered_or_the_work_is_gone() -> None:
    gate = Background(Clock())
    assert gate.wait_turn(lambda: True, lambda: False)
    assert not gate.wait_turn(lambda: False, lambda: False)  # another screen on top
    assert not gate.wait_turn(lambda: True, lambda: True)  # listing replaced or cancelled


def test_a_busy_ui_thread_holds_a_step_back_at_most_max_hold() -> None:
    clock = Clock(step=MAX_HOLD / 5)  # time passes at every look at the clock
    gate = Background(clock)
    clock.now += 10 * BEAT  # the heartbeat never comes
    looks: list[int] = []

    def may_run() -> bool:
        looks.append(1)
        return True

    assert gate.wait_turn(may_run, lambda: False)
    assert 1 < len(looks) <= 8


def test_work_off_the_gil_waits_for_a_late_heartbeat_but_not_for_keys() -> None:
    clock = Clock()
    gate = Background(clock)
    gate.input()
    assert gate.wait_for_ui(lambda: False)  # a key came: DuckDB work goes on anyway
    clock.now += 4 * BEAT  # the UI thread is behind: held back, at most MAX_HOLD
    clock.step = 0.05
    start = clock.now
    assert gate.wait_for_ui(lambda: False)
    assert clock.now - start >= MAX_HOLD
    assert not gate.wait_for_ui(lambda: True)
