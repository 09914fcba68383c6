"""Process-wide tuning, in one place: what each setting buys and when it applies.

Batch runs (ingest, verify, revalidate) pause the cyclic collector for their length
(`store.gcpause.no_cycle_collection`); this module holds what the interactive app sets
for the whole process, so no screen or engine changes interpreter state on its own.
"""

from __future__ import annotations

import gc
import sys

__all__ = ["interactive", "long_lived", "release"]

#: engine workers in the TUI are CPU-bound Python threads; at 1 ms the UI thread gets the
#: GIL within about a millisecond of a key event instead of the default 5 ms, many times
#: over per keystroke
SWITCH_INTERVAL = 0.001


def interactive() -> float:
    """Favour the UI thread over background workers; returns the previous interval."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(SWITCH_INTERVAL)
    return before


def long_lived() -> None:
    """Everything alive now (Textual, the session, a large log's leaf hashes) lives as
    long as the app: moved out of the cyclic collector's full passes, which otherwise
    stall a keystroke on a large vault (`docs/benchmarks.md`, "Docstring figures")."""
    gc.freeze()


def release(switch_interval: float | None = None) -> None:
    """Undo both for an embedding process (the tests): its collector back whole."""
    gc.unfreeze()
    if switch_interval is not None:
        sys.setswitchinterval(switch_interval)
