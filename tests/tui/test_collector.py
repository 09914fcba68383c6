"""The cyclic collector while the app runs (`tracer/tuning.py`): young passes stay
automatic, full passes happen only when the app is idle, and what survives is frozen."""

from __future__ import annotations

import gc
import subprocess
import sys
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest

from tracer import tuning
from tracer.tui.background import AWAY, Background

ROOT = Path(__file__).resolve().parents[2]


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


def _until_due(collector: tuning.Collector) -> None:
    while not collector.due():
        gc.collect(1)


def test_between_keys_young_garbage_is_freed_and_the_survivors_frozen(tuned: tuning.Tuned) -> None:
    gc.freeze()  # as the unlock does
    collector = tuning.Collector()
    assert not collector.idle()  # no young passes since: nothing is due
    kept = [_Cycle() for _ in range(10)]
    young = weakref.ref(_Cycle())  # cyclic garbage, never through a young pass yet
    _until_due(collector)
    assert young() is None  # the young passes freed it
    frozen_before = gc.get_freeze_count()
    assert collector.idle()
    assert collector.passes == 1 and collector.whole_passes == 0
    assert not collector.due()
    assert gc.get_freeze_count() >= frozen_before + len(kept)  # out of every later pass
    assert all(gc.is_tracked(k) for k in kept)


def frozen_cycles_are_freed_only_by_a_pass_while_away() -> None:
    """The check itself, run by the test below in an interpreter of its own."""
    tuned = tuning.interactive()
    try:
        gc.freeze()
        collector = tuning.Collector()
        base = collector.frozen_at_full
        hold = [_Cycle() for _ in range(tuning.REFREEZE_GROWTH * base)]
        gone = [weakref.ref(c) for c in hold[:10]]
        _until_due(collector)
        assert collector.idle()  # between keys: frozen, the set has grown past the limit
        del hold  # frozen cyclic garbage now: only a pass over everything frees it
        _until_due(collector)
        assert collector.idle()  # between keys again: nothing frozen is walked
        assert all(r() is not None for r in gone)
        _until_due(collector)
        assert collector.idle(away=True)
        assert collector.whole_passes == 1
        assert collector.frozen_at_full < tuning.REFREEZE_GROWTH * base
        assert all(r() is None for r in gone)
    finally:
        tuning.release(tuned)


def test_frozen_cycles_are_freed_only_by_a_pass_while_away() -> None:
    """In a fresh interpreter: the set this must grow past `REFREEZE_GROWTH` times is
    everything the process has frozen, which in a test worker is pytest, Hypothesis and
    every module the worker imported (millions of objects, 2-3 CPU-s to double and walk);
    in a process of its own, as in `tracer open`, it is what the check imports."""
    r = subprocess.run(
        [
            sys.executable,
            "-c",
            f"import {__name__} as t; t.{frozen_cycles_are_freed_only_by_a_pass_while_away.__name__}()",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr


def test_the_investigator_is_away_only_after_no_input_for_away_seconds() -> None:
    now = [100.0]
    gate = Background(lambda: now[0])
    gate.input()
    assert not gate.away()
    now[0] += AWAY / 2
    assert not gate.away()
    now[0] += AWAY / 2
    assert gate.away()
