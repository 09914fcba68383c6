"""`verify-dataset`'s manifest rows checked by worker processes (the DuckDB engine).

A Python function DuckDB calls runs on DuckDB's threads under one GIL, so the JSON
decoding, view derivation and DSSE wrapper of the per-entry checks ran one at a time
however many threads read the file.  Here a standard `ProcessPoolExecutor` runs
`check_batch` (the function Spark's executors run) on slices of the log's row groups,
each worker reading its slice from `log.parquet` itself as Spark's executors do, so
only (row group, offset, count) travels to a worker and its results come back keyed by
file position: the order they arrive in does not matter.  DuckDB still reads the log
for the leaf and statement passes, and runs the verdict queries.

The pool is started before the leaf and statement passes, so the workers' start-up
overlaps them, and the checks run while the verifying process checks the tiles and
the dataset's own files.  Workers are spawned (never forked from a process holding
DuckDB) and receive public keyrings and log rows only: no data key and no text.  Where
no process can be started (a sandbox without semaphores) the same checks run here.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context
from pathlib import Path
from types import TracebackType

from store import dataset as ds
from tracer.engine import runqueue
from tracer.engine.dataset_check import BatchResult, CheckContext, check_batch

__all__ = ["BATCH_ROWS", "POOL_MIN_ENTRIES", "PoolChecks", "worker_count"]

#: the fewest log rows per task: a task's overhead stays small beside its checks
BATCH_ROWS = 512
#: shorter logs are checked in this process: starting workers would cost more than they save
POOL_MIN_ENTRIES = 4_000


def worker_count(entries: int, workers: int | None = None) -> int:
    """Worker processes for `entries` log rows, sized as `tracer verify` sizes its own."""
    return runqueue.worker_count(entries, workers, POOL_MIN_ENTRIES)


def check_slice(root: Path, group: int, start: int, rows: int, ctx: CheckContext) -> BatchResult:
    """One task: read a slice of a row group and check its manifest rows."""
    return check_batch(ds.read_log_slice(root, group, start, rows), ctx)


def _slice_rows(sizes: list[int], workers: int, least: int) -> int:
    """Rows per task: a whole row group when there are several per worker (each task
    then decompresses its group once), else pieces enough for four tasks per worker
    (a slice decompresses its whole group, so no smaller than needed)."""
    want = 4 * max(workers, 1)
    if len(sizes) >= want:
        return max(sizes, default=1)
    return max(least, -(-sum(sizes) // want))


def _ready() -> None:
    """A first task per worker: importing this module is the start-up it waits for."""


class PoolChecks:
    """A `ManifestRows` over a process pool, used as a context manager that owns the pool."""

    def __init__(self, entries: int, workers: int | None = None, batch_rows: int = BATCH_ROWS) -> None:
        self.workers = worker_count(entries, workers)
        self.batch_rows = batch_rows
        self._pool: ProcessPoolExecutor | None = None

    @property
    def running(self) -> bool:
        """True while worker processes are there to take tasks (else checks run here)."""
        return self._pool is not None

    def __enter__(self) -> PoolChecks:
        if self.workers:
            try:
                self._pool = ProcessPoolExecutor(self.workers, mp_context=get_context("spawn"))
                for _ in range(self.workers):
                    self._pool.submit(_ready)
            except (OSError, ValueError, RuntimeError, BrokenProcessPool):
                self._pool = None
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def __call__(
        self, reader: ds.DatasetReader, ctx: CheckContext, positions: list[int]
    ) -> Callable[[], list[BatchResult]]:
        """Start checking every slice of the log; the function returned waits for the results."""
        slices = ds.log_slices(
            reader.root, _slice_rows(reader.row_group_sizes, self.workers, self.batch_rows)
        )
        futures: list[Future[BatchResult] | None] = []
        for group, start, rows in slices:
            future = None
            if self._pool is not None:
                try:
                    future = self._pool.submit(check_slice, reader.root, group, start, rows, ctx)
                except BrokenProcessPool:
                    self._pool = None
            futures.append(future)

        def results() -> list[BatchResult]:
            out: list[BatchResult] = []
            for (group, start, rows), future in zip(slices, futures, strict=True):
                result = None
                if future is not None:
                    try:
                        result = future.result()
                    except BrokenProcessPool:
                        result = None
                out.append(
                    result if result is not None else check_slice(reader.root, group, start, rows, ctx)
                )
            return out

        return results
