"""Runs of log rows checked by worker processes and handed back strictly in log order.

Scheduling only: which rows form a run and how a result is folded in is the log pass's
business (`tracer.engine.logpass`). Without workers (a small log, or where processes
cannot be started) every run is checked in this process, with the same outcome.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from multiprocessing import get_context

from store.cores import usable_cores, worker_setting
from tracer.engine.logcheck import LogRow, RunInput, RunResult, check_run
from tracer.engine.verifyrun import Sizes

__all__ = ["Pending", "Row", "RunQueue", "worker_count"]

#: a log row as the log pass hands it to a run
Row = LogRow


def worker_count(entries: int, workers: int | None = None, min_entries: int = Sizes.pool_min_entries) -> int:
    """Worker processes for `entries` log rows: one per core from `min_entries` rows, none
    for fewer; `workers`, else TRACER_VERIFY_WORKERS (0: all in this process), overrides.
    `tracer verify` and `verify-dataset` both size their pools here."""
    if workers is not None:
        return workers
    setting = worker_setting("TRACER_VERIFY_WORKERS")
    if setting is not None:
        return setting
    cores = usable_cores()
    return cores if cores > 1 and entries >= min_entries else 0


def _pool(workers: int) -> ProcessPoolExecutor | None:
    """Worker processes, or None: without them the same checks run in this process.

    Creating the pool can fail where processes cannot be started as usual (inside a
    Textual app before `tracer.tui.opening` started the resource tracker, stderr has no
    file descriptor to hand on; a sandbox may forbid semaphores): that is no reason to
    fail verification.
    """
    if not workers:
        return None
    try:
        return ProcessPoolExecutor(workers, mp_context=get_context("spawn"))
    except (OSError, ValueError, RuntimeError):
        return None


@dataclass
class Pending:
    """A run of log rows, checked in a worker (`future`) or, when its turn comes, here."""

    rows: list[Row]
    future: Future[RunResult] | None = None


class RunQueue:
    """A bounded queue of runs, oldest first; `close` stops the workers."""

    def __init__(self, workers: int, queued: int) -> None:
        self._pool = _pool(workers)
        self._queue: deque[Pending] = deque()
        self._limit = queued * max(workers, 1)

    @property
    def parallel(self) -> bool:
        """Whether runs go to workers (a broken pool turns this off for good)."""
        return self._pool is not None

    def submit(self, rows: list[Row], job: Callable[[], RunInput]) -> None:
        """Queue a run; a worker starts on it now, from `job()` as it stands."""
        item = Pending(rows)
        if self._pool is not None:
            try:
                item.future = self._pool.submit(check_run, job())
            except BrokenProcessPool:
                self._pool = None
        self._queue.append(item)

    def push(self, rows: list[Row]) -> None:
        """Queue a run to be checked here when its turn comes."""
        self._queue.append(Pending(rows))

    def all(self) -> Iterator[Pending]:
        """Every queued run, oldest first."""
        while self._queue:
            yield self._queue.popleft()

    def due(self) -> Iterator[Pending]:
        """The oldest runs that are done (or run here), then as many more as keep the
        queue within its bound."""
        q = self._queue
        while q and (q[0].future is None or q[0].future.done()):
            yield q.popleft()
        while len(q) > self._limit:
            yield q.popleft()

    def result(self, item: Pending, version: int, job: Callable[[], RunInput]) -> RunResult:
        """The run's outcome: the worker's if it started from keyring `version`, else
        (a key added or revoked earlier in a run still in flight, or a broken pool) the
        same checks run here from `job()`."""
        result: RunResult | None = None
        if item.future is not None:
            try:
                result = item.future.result()
            except BrokenProcessPool:
                self._pool = None
            if result is not None and result.started != version:
                result = None
        return result if result is not None else check_run(job())

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
