"""`verify-dataset`'s manifest rows checked by worker processes (the DuckDB engine).

A Python function DuckDB calls runs on DuckDB's threads under one GIL, so the JSON
decoding, view derivation and DSSE wrapper of the per-entry checks would run one at a
time however many threads read the file.  Here a standard `ProcessPoolExecutor` runs
`check_batch` (the function Spark's executors run) on slices of the log the verifying
process has already read (`DatasetReader.log_table`), each written once to a temporary
Arrow IPC file the workers map (`tracer.engine.dataset_spool`): a worker that read its
own slice from `log.parquet` would decompress the whole row group it lies in, once per
slice.  Results come back keyed by file
position, and are handed on as each slice's arrive, so the verifying process loads
their view rows and traces their passages while the workers check the next slices.

The pool is started before the log is read, so the workers' start-up overlaps the leaf
and statement passes.  Workers are never forked from a process holding DuckDB: where the
platform has one, a fork server (a fresh interpreter, started once per process) imports
this module and forks each worker from itself, so the imports a worker needs are paid
once rather than once per worker (~0.5 CPU-s each, `docs/benchmarks.md`); elsewhere they
are spawned.  Workers receive public keyrings and log rows only: no
data key and no text.  Where no process can be started (a sandbox without semaphores)
the same checks run here.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_all_start_methods, get_context
from multiprocessing.context import BaseContext
from types import TracebackType
from typing import TYPE_CHECKING

import pyarrow as pa

from tracer.engine import runqueue
from tracer.engine.dataset_check import BatchResult, CheckContext, check_batch
from tracer.engine.dataset_spool import Spool, read_spooled

if TYPE_CHECKING:
    # the workers check rows, they never read an export: not imported there (DuckDB,
    # Parquet and the vault's modules would cost the fork server their import)
    from store import dataset as ds

__all__ = ["BATCH_ROWS", "POOL_MIN_ENTRIES", "PoolChecks", "worker_count"]

#: the fewest log rows per task: a task's overhead stays small beside its checks
BATCH_ROWS = 512
#: shorter logs are checked in this process: starting workers would cost more than they save
POOL_MIN_ENTRIES = 4_000


def worker_count(entries: int, workers: int | None = None) -> int:
    """Worker processes for `entries` log rows, sized as `tracer verify` sizes its own."""
    return runqueue.worker_count(entries, workers, POOL_MIN_ENTRIES)


def check_spooled(path: str, offset: int, ctx: CheckContext, leaves: bytes) -> BatchResult:
    """One task: the slice of the log spooled at `offset` of `path` (`Spool`), its manifest
    rows checked, with the leaves the verifying process recomputed from the same bytes
    (32 bytes a row)."""
    return check_batch(read_spooled(path, offset), ctx, leaves)


def check_slice(data: bytes, ctx: CheckContext, leaves: bytes) -> BatchResult:
    """`check_spooled` for a slice sent as Arrow IPC bytes (where it could not be spooled)."""
    return check_batch(pa.ipc.open_stream(data).read_all(), ctx, leaves)


def _ipc(table: pa.Table) -> bytes:
    """`table` as Arrow IPC stream bytes: only a slice's own rows (pickling a slice of a
    table would send the buffers it is a view of)."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return bytes(sink.getvalue())


#: tasks per worker: the verifying process loads each slice's view rows and traces its
#: passages as it arrives, so small slices keep that work beside the workers' rather
#: than after the last one, and the last tasks end close together
TASKS_PER_WORKER = 16


def _slice_rows(entries: int, workers: int, least: int) -> int:
    """Rows per task: `TASKS_PER_WORKER` tasks per worker, and no fewer than `least`
    rows, so a task's overhead stays small beside its checks."""
    return max(least, -(-entries // (TASKS_PER_WORKER * max(workers, 1))))


def _ready() -> None:
    """A first task per worker: importing this module is the start-up it waits for."""


def _context() -> BaseContext:
    """A fork server that has imported this module, where the platform has one (Linux,
    macOS), else spawn: either way no worker is forked from a process with a DuckDB
    connection open (the server imports DuckDB, never connects)."""
    if "forkserver" in get_all_start_methods():
        context = get_context("forkserver")
        # not pandas: pyarrow imports it on a process's first `pa.array`, to ask whether
        # the values are a pandas object, but a batch's columns are built from their
        # buffers (`store.rowtables.exact_array`), so no worker asks.  The server is
        # started once per process, at the first pool: one already running keeps what it
        # imported
        context.set_forkserver_preload([__name__])
        return context
    return get_context("spawn")


class PoolChecks:
    """A `ManifestRows` over a process pool, used as a context manager that owns the pool."""

    def __init__(self, entries: int, workers: int | None = None, batch_rows: int = BATCH_ROWS) -> None:
        self.workers = worker_count(entries, workers)
        self.batch_rows = batch_rows
        self._pool: ProcessPoolExecutor | None = None
        #: the pool once every result of the verification is in (`_finished`)
        self._done: ProcessPoolExecutor | None = None
        self._starting: threading.Thread | None = None
        self._spool = Spool()
        #: the slices handed out so far, in log order, each with its task (None: checked here)
        self._slices: list[tuple[pa.Table, CheckContext, Future[BatchResult] | None]] = []

    @property
    def running(self) -> bool:
        """True while worker processes are there to take tasks (else checks run here)."""
        return self._started() is not None

    def __enter__(self) -> PoolChecks:
        if self.workers:
            # started on a thread: the first worker waits for the fork server to import
            # this module (a second or so), which the log's read need not wait for
            self._starting = threading.Thread(target=self._start, name="verify-dataset-pool", daemon=True)
            self._starting.start()
        return self

    def _start(self) -> None:
        pool = None
        try:
            pool = ProcessPoolExecutor(self.workers, mp_context=_context())
            for _ in range(self.workers):
                pool.submit(_ready)
        except (OSError, ValueError, RuntimeError, BrokenProcessPool):
            if pool is not None:
                pool.shutdown(wait=False, cancel_futures=True)
            return
        self._pool = pool

    def _started(self) -> ProcessPoolExecutor | None:
        """The pool once its start (on its thread) is over; None where it failed."""
        if self._starting is not None:
            self._starting.join()
            self._starting = None
        return self._pool

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        for pool in (self._started(), self._done):
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=True)
        self._pool = self._done = None
        self._spool.close()

    def submit_upto(
        self, reader: ds.DatasetReader, upto: int, ctx: CheckContext, leaves: Sequence[bytes]
    ) -> None:
        """Hand the workers every whole slice of the log's first `upto` rows not handed out
        yet, checked against `ctx` (the keyrings in force over those rows are final), while
        the verifying process reads the rest: the workers start on the first slices rather
        than after the last row is read.  Nothing is handed out while the pool is still
        starting (waiting for it would hold up the read); the next call, or `__call__`,
        hands those slices out."""
        if self._starting is not None and self._starting.is_alive():
            return
        self._submit(reader, upto, ctx, leaves, whole=True)

    def _submit(
        self, reader: ds.DatasetReader, upto: int, ctx: CheckContext, leaves: Sequence[bytes], whole: bool
    ) -> None:
        log = reader.log_table()
        step = _slice_rows(log.num_rows, self.workers, self.batch_rows)
        pool = self._started()
        for start in range(len(self._slices) * step, upto, step):
            if whole and start + step > upto:
                break
            part = log.slice(start, min(step, upto - start))
            future = None
            if pool is not None:
                try:
                    future = self._task(pool, part, ctx, b"".join(leaves[start : start + step]))
                except BrokenProcessPool:
                    self._pool = pool = None
            self._slices.append((part, ctx, future))

    def _task(
        self, pool: ProcessPoolExecutor, part: pa.Table, ctx: CheckContext, leaves: bytes
    ) -> Future[BatchResult]:
        """One slice handed to the pool: spooled, or sent whole where no temporary file
        can be written."""
        try:
            offset = self._spool.put(part)
        except OSError:
            return pool.submit(check_slice, _ipc(part), ctx, leaves)
        return pool.submit(check_spooled, self._spool.path, offset, ctx, leaves)

    def __call__(
        self, reader: ds.DatasetReader, ctx: CheckContext, leaves: Sequence[bytes]
    ) -> Callable[[], Iterator[BatchResult]]:
        """Start checking every slice of the log not handed out yet (`submit_upto`); the
        function returned yields each slice's results as they come, in log order."""
        self._submit(reader, reader.log_table().num_rows, ctx, leaves, whole=False)
        slices, self._slices = self._slices, []

        def results() -> Iterator[BatchResult]:
            for part, context, future in slices:
                result = None
                if future is not None:
                    try:
                        result = future.result()
                    except (BrokenProcessPool, OSError):
                        # a worker gone, or one that could not map the spooled file
                        result = None
                yield result if result is not None else check_batch(part, context, None)
            self._finished()

        return results

    def _finished(self) -> None:
        """Every result is in: the workers are told to exit now, and do so while the
        verifying process finishes the report (`__exit__` then finds them gone).  The
        pool serves one verification."""
        pool, self._pool = self._pool, None
        if pool is not None:
            self._done = pool
            pool.shutdown(wait=False)
        self._spool.close()
