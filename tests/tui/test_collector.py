"""The cyclic collector while the app runs (`tracer/tuning.py`): young passes stay
automatic, full passes happen only when the app is idle, and what survives is frozen."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from tracer import tuning
from tracer.tui.background import IDLE, Background


@pytest.fixture
def tuned() -> Iterator[tuning.Tuned]:
    before = tuning.interactive()
    try:
        yield before
    finally:
        tuning.release(before)


class _Cycle:
    def __init__(self) -> None:
        self.me = self


def test_interactive_keeps_young_passes_and_stops_automatic_full_ones(tuned: tuning.Tuned) -> None:
    young, middle, old = gc.get_threshold()
    assert (young, middle) == tuned.thresholds[:2]
    assert old == tuning.NO_AUTOMATIC_FULL
    tuning.release(tuned)
    assert gc.get_threshold() == tuned.thresholds


def test_an_idle_pass_frees_cycles_and_freezes_what_survives(tuned: tuning.Tuned) -> None:
    gc.freeze()  # as the unlock does
    collector = tuning.Collector()
    assert not collector.idle()  # no young passes since: nothing is due
    kept = [_Cycle() for _ in range(10)]
    old = [_Cycle() for _ in range(10)]
    gone = [weakref.ref(c) for c in old]
    while not collector.due():
        gc.collect(1)  # young passes move them to the oldest generation, alive
    del old  # cyclic garbage in the oldest generation: only a full pass frees it
    assert all(r() is not None for r in gone)
    frozen_before = gc.get_freeze_count()
    assert collector.idle()
    assert collector.passes == 1
    assert all(r() is None for r in gone)
    assert gc.get_count()[2] == 0
    assert gc.get_freeze_count() > frozen_before  # the survivors: out of the next passes
    assert all(gc.is_tracked(k) for k in kept)


def test_a_grown_frozen_set_is_walked_whole_again(tuned: tuning.Tuned) -> None:
    gc.freeze()
    collector = tuning.Collector()
    base = collector.frozen_at_full
    hold = [_Cycle() for _ in range(tuning.REFREEZE_GROWTH * base)]
    gone = [weakref.ref(c) for c in hold[:10]]
    gc.freeze()  # as an earlier idle pass would have: the frozen set grew past the limit
    del hold  # frozen cyclic garbage now: only a pass over everything frees it
    assert all(r() is not None for r in gone)
    while not collector.due():
        gc.collect(1)
    assert collector.idle()
    assert collector.frozen_at_full < tuning.REFREEZE_GROWTH * base
    assert all(r() is None for r in gone)


def test_the_app_is_idle_only_after_no_input_for_idle_seconds() -> None:
    now = [100.0]
    gate = Background(lambda: now[0])
    gate.input()
    assert not gate.idle()
    now[0] += IDLE / 2
    assert not gate.idle()
    now[0] += IDLE / 2
    assert gate.idle()
