"""Process-wide tuning, in one place: what each setting buys and when it applies.

Batch runs (ingest, verify, revalidate) pause the cyclic collector for their length
(`store.gcpause.no_cycle_collection`); this module holds what the interactive app sets
for the whole process, so no screen or engine changes interpreter state on its own.

The cyclic collector's full pass walks every tracked object that is not frozen, holding
the GIL: with the answers list's states cached for a whole vault, one pass stalls every
thread, the UI's included, for longer than a key may take (`docs/benchmarks.md`, issue 27
item 8). While the app runs, the collector keeps its young passes (cheap, automatic); it
never starts a full pass by itself, and between keys what survived the young passes is
frozen (`Collector`), so no pass walks the states cached before.
"""

from __future__ import annotations

import gc
import sys
from dataclasses import dataclass

__all__ = ["Collector", "Tuned", "interactive", "long_lived", "release"]

#: engine workers in the TUI are CPU-bound Python threads; at 1 ms the UI thread gets the
#: GIL within about a millisecond of a key event instead of the default 5 ms, many times
#: over per keystroke
SWITCH_INTERVAL = 0.001
#: the oldest generation's threshold while the app runs: young passes stay automatic, a
#: full pass never starts by itself (`Collector.idle` makes them)
NO_AUTOMATIC_FULL = 1 << 30
#: passes over the middle generation after which the next moment between keys freezes
#: the survivors (CPython's own default threshold for a pass over the oldest generation)
FULL_AFTER = 10
#: a pass over everything (frozen objects too, which may have become cyclic garbage)
#: once the frozen set has grown this many times over since the last such pass
REFREEZE_GROWTH = 2


@dataclass(frozen=True)
class Tuned:
    """What `interactive` changed, for `release` to put back."""

    switch_interval: float
    thresholds: tuple[int, int, int]


def interactive() -> Tuned:
    """Favour the UI thread over background workers, and keep the collector's full
    passes for idle moments; returns what was set before."""
    before = Tuned(sys.getswitchinterval(), gc.get_threshold())
    sys.setswitchinterval(SWITCH_INTERVAL)
    young, middle, _old = before.thresholds
    gc.set_threshold(young, middle, NO_AUTOMATIC_FULL)
    return before


def long_lived() -> None:
    """Everything alive now (Textual, the session, a large log's leaf hashes) lives as
    long as the app: moved out of the cyclic collector's full passes, which otherwise
    stall a keystroke on a large vault (`docs/benchmarks.md`, "Docstring figures")."""
    gc.freeze()


def release(tuned: Tuned | None = None) -> None:
    """Undo both for an embedding process (the tests): its collector back whole."""
    gc.unfreeze()
    if tuned is not None:
        sys.setswitchinterval(tuned.switch_interval)
        gc.set_threshold(*tuned.thresholds)


class Collector:
    """Collector passes at moments the app chooses (see the module's docstring).

    `idle()` is called by the app between keys.  When enough young passes ran since the
    last call, it makes one more young pass (what dies young is freed) and freezes what
    is left: objects that survived young passes live long (cached states, screens), and
    frozen they are never walked again, so no pass between keys grows with the session.
    A frozen object that later becomes cyclic garbage (a screen closed, a cache replaced)
    is freed only by a pass over everything; that one is long, so it is made only while
    the investigator is away from the keyboard (`away`), once the frozen set has grown
    `REFREEZE_GROWTH` times since the last such pass."""

    def __init__(self) -> None:
        self.frozen_at_full = max(1, gc.get_freeze_count())
        self._young_at = _young_passes()
        #: freezes made, and of them passes over everything (for the tests and the bench)
        self.passes = 0
        self.whole_passes = 0

    def due(self) -> bool:
        return _young_passes() - self._young_at >= FULL_AFTER

    def idle(self, away: bool = False) -> bool:
        """A young pass and a freeze if due (over everything when away and grown); True
        when it made one."""
        if not self.due():
            return False
        whole = away and gc.get_freeze_count() >= REFREEZE_GROWTH * self.frozen_at_full
        if whole:
            gc.unfreeze()
            gc.collect()
        else:
            gc.collect(1)
        gc.freeze()
        if whole:
            self.frozen_at_full = max(1, gc.get_freeze_count())
            self.whole_passes += 1
        self._young_at = _young_passes()
        self.passes += 1
        return True


def _young_passes() -> int:
    """How many passes over the middle generation the collector has made so far."""
    return int(gc.get_stats()[1]["collections"])
