"""A pause of the cyclic garbage collector for one batch run (ingest, verify, revalidate)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["no_cycle_collection"]


@contextmanager
def no_cycle_collection() -> Iterator[None]:
    """Pause the cyclic garbage collector for a batch run.

    A run over the whole log allocates millions of small acyclic objects (payloads,
    rows, verdicts) on top of large live caches, and each generation-2 collection walks
    all of them (`docs/benchmarks.md`, "Docstring figures", has the share of a run).
    Reference counting still frees everything; the collector is re-enabled (if it was
    on) as soon as the run ends.

    What the run leaves alive (its result, warm caches) is handed to the oldest
    generation, where two young collections would have moved it anyway: otherwise the
    first allocation after the run walks all of it at once. Skipped while objects are
    frozen (the TUI's `gc.freeze`), whose unfreeze would move the frozen set too.
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            if gc.get_freeze_count() == 0:
                gc.freeze()
                gc.unfreeze()
            gc.enable()
