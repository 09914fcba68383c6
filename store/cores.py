"""How many worker processes a pool may use: the cores this process may run on, and the
environment setting that overrides them (verify's and ingest's pools both read it here)."""

from __future__ import annotations

import os

from store.errors import InputError

__all__ = ["usable_cores", "worker_setting"]


def usable_cores() -> int:
    """Cores this process may be scheduled on (the affinity mask where the OS has one)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def worker_setting(variable: str) -> int | None:
    """The whole number set in `variable` (0: all in this process), None when unset."""
    value = os.environ.get(variable, "").strip()
    if not value:
        return None
    if not value.isdigit():
        raise InputError("environment", variable, f"not a whole number: {value!r}")
    return int(value)
