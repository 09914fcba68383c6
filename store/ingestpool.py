"""Worker processes that prepare manifest files for ingest, kept for the life of the process.

Preparing a manifest (strict JSON, schemas, Ed25519, ids, faults: `store.ingestprep`) is
most of an ingest call's CPU and needs no vault, so a large call hands runs of files to
workers while its own process prepares runs too, from the other end (`prepare_files`):
the calling process never waits for a worker to start, and a worker that never comes
costs nothing but its start. Results are taken back strictly in file order.

One pool serves every call of the process (`shared_pool`): the bench and a generator's
many batches, the outbox drain, a `tracer ingest` of many files. Spawning a worker costs
an interpreter and the imports of `store.ingestprep`, more than a worker saves on a few
hundred files (docs/benchmarks.md, issue 23 item 2), so the pool is started only for
calls of at least `POOL_MIN_FILES` files, and its workers stay idle between calls. Workers are spawned,
never forked from a process holding DuckDB, and receive public keys and file paths only.
Where no process can be started, or a worker dies, the same functions run here.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context
from pathlib import Path

from store.cores import usable_cores, worker_setting
from store.errors import InputError
from store.ingestprep import ManifestContext, Prepared, load_chunk, prepare_chunk, prepare_file

__all__ = [
    "CHUNK_FILES",
    "POOL_MIN_FILES",
    "IngestPool",
    "Item",
    "close_shared_pool",
    "prepare_files",
    "running_pool",
    "shared_pool",
    "worker_count",
]

#: files per task: small enough that the two ends meet evenly, large enough that a
#: task's round trip (a pickled context, one marshal result) stays small beside it
CHUNK_FILES = 20
#: fewer files are prepared in the calling process alone (docs/benchmarks.md, issue 23
#: item 2: a worker's start costs more CPU than it saves below this)
POOL_MIN_FILES = 200

#: what preparing one file gives: a manifest, a refusal, or None for a file the vault's
#: process prepares (a revision or a deletion)
Item = Prepared | InputError | None


def worker_count(workers: int | None = None) -> int:
    """Worker processes for the shared pool: one per core but the one the calling process
    keeps busy; `workers`, else TRACER_INGEST_WORKERS (0: all in this process), overrides."""
    if workers is not None:
        return workers
    setting = worker_setting("TRACER_INGEST_WORKERS")
    if setting is not None:
        return setting
    cores = usable_cores()
    return max(cores - 1, 0)


def _ready() -> None:
    """A first task per worker: its start is importing `store.ingestprep`."""


def _orphan_watch(parent: int) -> None:
    """Runs in each worker: exit once the process that started it is gone. A worker left
    behind by a killed ingest would otherwise idle for ever, holding the pipes it
    inherited (a caller reading the dead process's output would never see it end)."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.2)
        os._exit(0)

    threading.Thread(target=watch, name="orphan-watch", daemon=True).start()


class IngestPool:
    """Spawned workers running `prepare_chunk`; `broken` once one died (then unused)."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self.broken = False
        self._pool: ProcessPoolExecutor | None = ProcessPoolExecutor(
            workers, mp_context=get_context("spawn"), initializer=_orphan_watch, initargs=(os.getpid(),)
        )
        for _ in range(workers):
            self._pool.submit(_ready)

    def submit(self, ctx: ManifestContext, paths: list[str]) -> Future[bytes] | None:
        """A task started (or queued) on the workers; None if the pool is gone."""
        if self._pool is None or self.broken:
            return None
        try:
            return self._pool.submit(prepare_chunk, ctx, paths)
        except (BrokenProcessPool, RuntimeError):
            self.broken = True
            return None

    def pids(self) -> list[int]:
        """The workers' process ids (for the bench's CPU accounting)."""
        processes = getattr(self._pool, "_processes", None) or {}
        return list(processes)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


_lock = threading.Lock()
_shared: IngestPool | None = None
_unavailable = False


def shared_pool(workers: int | None = None) -> IngestPool | None:
    """The process's ingest pool, started on first use; None without workers (one core,
    TRACER_INGEST_WORKERS=0, or processes cannot be started here). A broken pool is
    replaced by a new one."""
    global _shared, _unavailable
    count = worker_count(workers)
    if count <= 0:
        return None
    with _lock:
        if _shared is not None and (_shared.broken or _shared.workers != count):
            _shared.close()
            _shared = None
        if _shared is None and not _unavailable:
            try:
                _shared = IngestPool(count)
            except (OSError, ValueError, RuntimeError, BrokenProcessPool):
                # no semaphores in a sandbox, no stderr descriptor for the resource
                # tracker inside a Textual app: no reason to fail an ingest
                _unavailable = True
        return _shared


def running_pool() -> IngestPool | None:
    """The shared pool if one was started (and not closed), without starting one."""
    return _shared


def close_shared_pool() -> None:
    """Stop the shared pool's workers (the next large call starts new ones)."""
    global _shared, _unavailable
    with _lock:
        if _shared is not None:
            _shared.close()
        _shared = None
        _unavailable = False


def _local(ctx: ManifestContext, paths: list[Path]) -> list[Item]:
    return [prepare_file(ctx, p) for p in paths]


def prepare_files(
    ctx: ManifestContext,
    files: list[Path],
    pool: IngestPool | None,
    *,
    local: Callable[[ManifestContext, list[Path]], list[Item]] = _local,
) -> list[Item]:
    """`prepare_file` of every file, in file order: runs of `CHUNK_FILES` go to `pool`
    from the front while this process prepares runs from the back (any the workers have
    not started) and loads the workers' results as they finish. A run whose worker died
    is prepared here. The outcome is the same as `[prepare_file(ctx, f) for f in files]`."""
    chunks = [files[i : i + CHUNK_FILES] for i in range(0, len(files), CHUNK_FILES)]
    if pool is None:
        return [item for chunk in chunks for item in local(ctx, chunk)]
    futures = [pool.submit(ctx, [str(p) for p in chunk]) for chunk in chunks]
    results: list[list[Item] | None] = [None] * len(chunks)
    front, back = 0, len(chunks) - 1
    try:
        while front <= back:
            future = futures[front]
            if future is not None and future.done():
                results[front] = _result(ctx, future, chunks[front], pool, local)
                front += 1
                continue
            last = futures[back]
            if last is None or last.cancel():
                results[back] = local(ctx, chunks[back])
                back -= 1
                continue
            # every run left is running or queued in a worker: wait for them in order
            while front <= back:
                results[front] = _result(ctx, futures[front], chunks[front], pool, local)
                front += 1
    finally:
        for future in futures:
            if future is not None:
                future.cancel()
    return [item for chunk_items in results if chunk_items is not None for item in chunk_items]


def _result(
    ctx: ManifestContext,
    future: Future[bytes] | None,
    chunk: list[Path],
    pool: IngestPool,
    local: Callable[[ManifestContext, list[Path]], list[Item]],
) -> list[Item]:
    if future is not None:
        try:
            return load_chunk(future.result())
        except BrokenProcessPool:
            pool.broken = True
    return local(ctx, chunk)
