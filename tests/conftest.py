"""Shared fixtures: every test gets its own TRACER_HOME and a pinned clock."""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import inspect
import os
import pickle
import shutil
from collections.abc import Callable, Iterator
from concurrent import futures
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.helpers import Case, new_case
from tests.xdist_order import order
from tracer import tuning

try:
    import fcntl
except ImportError:  # not on Windows: each worker builds its own
    fcntl = None  # type: ignore[assignment]

if TYPE_CHECKING:
    from sample_vault.build import BuildInfo

#: one DuckDB thread per connection, in this process and the CLI processes it starts:
#: pytest-xdist already runs a worker per core (and one more), and each connection's own
#: thread pool then only handed every small query's tasks between threads
#: (docs/benchmarks.md).  `tests/store/test_duckdb_threads.py` checks a verification
#: comes out the same with DuckDB's default; set the variable to run the suite with more.
os.environ.setdefault("TRACER_DUCKDB_THREADS", "1")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under pytest-xdist, the longest files first and the Pilot files spread among the
    others (`tests/xdist_order.py`); a run without xdist keeps pytest's order."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        items[:] = order(items)


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """Run `async def` tests (the Pilot tests) on a fresh event loop: no asyncio plugin
    is installed."""
    if not inspect.iscoroutinefunction(pyfuncitem.obj):
        return None
    names = pyfuncitem._fixtureinfo.argnames
    asyncio.run(pyfuncitem.obj(**{n: pyfuncitem.funcargs[n] for n in names}))
    return True


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = tmp_path / "tracer-home"
    monkeypatch.setenv("TRACER_HOME", str(home))
    monkeypatch.delenv("TRACER_KEY", raising=False)
    monkeypatch.delenv("TRACER_PASSPHRASE", raising=False)
    monkeypatch.delenv("TRACER_CLOCK", raising=False)
    yield home


class _BaselineCountedWhenRead(tuning.Collector):
    """`tuning.Collector` but for when it counts the frozen set it starts from (the
    baseline a pass while away compares with): when first read, not when the app unlocks.

    Counting walks every frozen object (`gc.get_freeze_count`), and an app's unlock
    freezes its whole process: in a test worker that is pytest, Hypothesis and every
    module the worker imported, ~65 ms per app, 7+ CPU-s over the suite's ~100 apps.
    Only `idle(away=True)` reads the baseline, and only after `AWAY` seconds without a
    key, which no Pilot test waits out: what the apps do is unchanged.  The collector's
    own tests (`tests/tui/test_collector.py`) keep the real class."""

    _baseline: int | None = None

    def __init__(self) -> None:
        real = gc.get_freeze_count
        gc.get_freeze_count = lambda: 0  # the one count the real __init__ makes
        try:
            super().__init__()
        finally:
            gc.get_freeze_count = real
        self._baseline = None

    @property
    def frozen_at_full(self) -> int:
        if self._baseline is None:
            self._baseline = max(1, gc.get_freeze_count())
        return self._baseline

    @frozen_at_full.setter
    def frozen_at_full(self, value: int) -> None:
        self._baseline = value


@pytest.fixture(autouse=True)
def _collector_baseline_when_read(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    if request.node.path.name != "test_collector.py":
        monkeypatch.setattr(tuning, "Collector", _BaselineCountedWhenRead)


@pytest.fixture
def case(tmp_path: Path) -> Iterator[Case]:
    c = new_case(tmp_path / "vault")
    yield c
    c.close()


@pytest.fixture(scope="session")
def sample_build(tmp_path_factory: pytest.TempPathFactory) -> BuildInfo:
    """The sample vault, built once per test run through the real ingest path.  Under
    pytest-xdist the first worker to ask builds it in the run's shared temporary directory
    and every worker takes its own copy (the build is deterministic and costs seconds)."""
    from sample_vault.build import build

    mine = tmp_path_factory.mktemp("sample") / "sample_vault"
    if not os.environ.get("PYTEST_XDIST_WORKER") or fcntl is None:
        return build(mine)
    shared = tmp_path_factory.getbasetemp().parent / "sample-build"
    shared.mkdir(exist_ok=True)
    with (shared / "lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # held until this worker has the finished build
        done = shared / "info.pickle"
        if not done.exists():
            built = build(shared / "sample_vault")
            (shared / "info.tmp").write_bytes(pickle.dumps(built))
            os.replace(shared / "info.tmp", done)
        info: BuildInfo = pickle.loads(done.read_bytes())  # noqa: S301 - written just above, by this run
    shutil.copytree(info.out_dir, mine)
    return dataclasses.replace(
        info,
        out_dir=mine,
        vault_dir=mine / info.vault_dir.relative_to(info.out_dir),
        db_path=mine / info.db_path.relative_to(info.out_dir),
        keys_dir=mine / info.keys_dir.relative_to(info.out_dir),
    )


@pytest.fixture
def sample_vault(sample_build: BuildInfo, tmp_path: Path) -> Path:
    """A private copy of the sample vault (opening it appends access entries)."""
    dest = tmp_path / "sample_vault"
    shutil.copytree(sample_build.out_dir, dest)
    return dest


class _KeptPool:
    """What `tracer.engine.runqueue` gets for a ProcessPoolExecutor while `shared_verify_pool`
    is in use: the module's one real pool of that size, already started.  `shutdown` does
    for this verification what the real one does (its queued runs are cancelled, its
    running ones awaited) and leaves the worker processes for the next."""

    def __init__(self, pool: ProcessPoolExecutor) -> None:
        self._pool = pool
        self._mine: list[Future[Any]] = []

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future = self._pool.submit(fn, *args, **kwargs)
        self._mine.append(future)
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        if cancel_futures:
            for future in self._mine:
                future.cancel()
        if wait:
            futures.wait(self._mine)
        self._mine.clear()


@pytest.fixture(scope="module")
def shared_verify_pool() -> Iterator[None]:
    """One set of verify worker processes for a module instead of one per verification:
    spawning a worker costs an interpreter and the engine's imports, the runs it checks
    cost milliseconds.  A pool found broken is replaced; the real pool's creation and
    shutdown are still what the tests outside such a module, and the CLI, go through."""
    from tracer.engine import runqueue

    real = ProcessPoolExecutor
    pools: dict[int, ProcessPoolExecutor] = {}

    def kept(workers: int, **kw: Any) -> _KeptPool:
        pool = pools.get(workers)
        if pool is None or getattr(pool, "_broken", False):
            pool = pools[workers] = real(workers, **kw)
        return _KeptPool(pool)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(runqueue, "ProcessPoolExecutor", kept)
        try:
            yield
        finally:
            for pool in pools.values():
                pool.shutdown(wait=True, cancel_futures=True)
