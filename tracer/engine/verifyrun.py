"""What one verification carries between its passes: findings, counts, progress, sizes.

The log pass (`tracer.engine.logpass`), the transform pass (`tracer.engine.transformpass`)
and the store checks (`tracer.engine.storecheck`) each add to one `Tally`; `Sizes` says
how they cut their work into pieces.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tracer.engine.logcheck import Finding, finding

__all__ = ["Progress", "Sizes", "Tally"]

Progress = Callable[[str, int, int], None]


def _quiet(_phase: str, _done: int, _total: int) -> None:
    return None


@dataclass
class Tally:
    """Findings in the order they are found, counts by name, and the progress callback."""

    progress: Progress = _quiet
    findings: list[Finding] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)

    def find(self, kind: str, seq: int | None, detail: str, /, **record: Any) -> None:
        self.findings.append(finding(kind, seq, detail, **record))

    def bump(self, key: str, n: int = 1) -> None:
        self.counts[key] = self.counts.get(key, 0) + n


@dataclass(frozen=True)
class Sizes:
    """How verification cuts its work into pieces. The findings, their order and the
    counts never depend on these (the tamper matrix runs with every size at 1); they
    trade memory against speed, and are parameters so tests need patch no module."""

    #: manifest rows per run handed to a worker
    run: int = 250
    #: runs queued per worker before the pass waits for results
    queued: int = 3
    #: passages whose transform checks are grouped into one page
    transform_page: int = 200_000
    #: cited revisions whose texts are read at once within a page
    text_chunk: int = 2_000
    #: logs shorter than this are checked in-line (workers would cost more than they save)
    pool_min_entries: int = 4_000
    #: worker processes; None: TRACER_VERIFY_WORKERS, else one per core for a large log
    workers: int | None = None
