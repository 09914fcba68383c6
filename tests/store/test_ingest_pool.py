"""Ingest with worker processes gives the vault that ingest in one process gives."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import pytest

from store import ingestpool
from store.ingest import IngestReport, ingest
from store.ingestpool import CHUNK_FILES, IngestPool
from tests.helpers import Case, manifest, new_case, passage, revision, signed

DOC = "# Returns\n\n## Window\n\nCustomers may request a refund within thirty days of delivery.\n"
ANSWER = "Refunds are accepted within thirty days."
NOW = "2026-06-01T00:00:00Z"


def _rev() -> dict[str, Any]:
    return revision("returns", "A", DOC, "2026-01-05T00:00:00Z")


def _inputs(case: Case, n: int) -> list[dict[str, Any]]:
    """A revision, then `n` manifests citing it (every fifth with a fault: an unreferenced
    text), then a deletion: more than two chunks, so both ends of `prepare_files` work."""
    out: list[dict[str, Any]] = [_rev()]
    for i in range(n):
        doc = signed(case, manifest(f"ans-{i:03d}", ANSWER, [passage(_rev(), "thirty days")]))
        if i % 5 == 0:
            doc["contents"]["0" * 64] = "stray"
        out.append(doc)
    out.append(
        {
            "schema": "tracer.document_deletion/v1",
            "document_id": "returns",
            "deleted_at": "2026-07-01T00:00:00Z",
            "reason": "retired",
        }
    )
    return out


def _run(tmp: Path, name: str, edit: Any = None, **kw: Any) -> tuple[Case, IngestReport]:
    case = new_case(tmp / name / "vault")
    docs = _inputs(case, 3 * CHUNK_FILES + 7)
    if edit is not None:
        edit(docs)
    files = [case.write(d) for d in docs]
    return case, ingest(case.vault, files, case.custodian, NOW, **kw)


def _log(case: Case) -> list[tuple[int, bytes]]:
    return [(int(s), bytes(e)) for s, e in case.vault.query("SELECT seq, entry FROM log ORDER BY seq")]


def _report(report: IngestReport) -> dict[str, Any]:
    """The report without file paths' directories (each run writes its own)."""
    doc = report.to_json()
    for key in ("accepted", "rejected", "faults"):
        for row in doc[key]:
            row["file"] = Path(row["file"]).name
    return doc


def test_pool_and_one_process_give_the_same_entries_in_the_same_order(
    tmp_path: Path, ingest_pool: IngestPool
) -> None:
    here, r_here = _run(tmp_path, "here", workers=0)
    pooled, r_pool = _run(tmp_path, "pooled", pool=ingest_pool)
    assert r_here.ok and r_pool.ok
    assert _report(r_here) == _report(r_pool)
    assert len(r_pool.faults) == len([i for i in range(3 * CHUNK_FILES + 7) if i % 5 == 0])
    assert _log(here) == _log(pooled)
    for table in ("v_answers", "v_passages", "v_digests", "v_revisions", "v_deletions"):
        sql = f"SELECT * FROM {table} ORDER BY ALL"  # noqa: S608 - fixed names
        assert here.vault.query(sql) == pooled.vault.query(sql), table


def _break_one(docs: list[dict[str, Any]]) -> None:
    """A manifest past the first chunks gets a payload type no producer signs."""
    docs[2 * CHUNK_FILES + 3]["envelope"]["payloadType"] = "application/json"


def test_a_refused_file_in_a_pooled_call_is_refused_as_in_one_process(
    tmp_path: Path, ingest_pool: IngestPool
) -> None:
    _here, r_here = _run(tmp_path, "here", _break_one, workers=0)
    pooled_case = new_case(tmp_path / "pooled" / "vault")
    before = _log(pooled_case)
    docs = _inputs(pooled_case, 3 * CHUNK_FILES + 7)
    _break_one(docs)
    files = [pooled_case.write(d) for d in docs]
    r_pool = ingest(pooled_case.vault, files, pooled_case.custodian, NOW, pool=ingest_pool)
    assert not r_pool.ok and not r_pool.appended
    [rejected] = r_pool.rejected
    assert rejected.file == str(files[2 * CHUNK_FILES + 3])
    assert rejected.path == "$.envelope.payloadType"
    assert _report(r_here)["rejected"] == _report(r_pool)["rejected"]
    assert _log(pooled_case) == before


def test_a_worker_that_dies_leaves_the_same_vault(tmp_path: Path) -> None:
    """A worker killed before the call: its runs are prepared here instead, and the vault
    ends exactly as an ingest in one process leaves it."""
    pool = IngestPool(1)
    try:
        pids = pool.pids()
        assert pids  # spawned when the pool was made
        for pid in pids:
            os.kill(pid, signal.SIGKILL)
        here, r_here = _run(tmp_path, "here", workers=0)
        pooled, r_pool = _run(tmp_path, "pooled", pool=pool)
        assert r_pool.ok and _report(r_here) == _report(r_pool)
        assert _log(here) == _log(pooled)
        assert pool.broken
    finally:
        pool.close()


def test_without_a_pool_ingest_runs_in_this_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kw: Any) -> Any:
        raise OSError("no semaphores here")

    ingestpool.close_shared_pool()
    monkeypatch.setattr(ingestpool, "ProcessPoolExecutor", refuse)
    monkeypatch.setattr("store.ingest.POOL_MIN_FILES", 1)
    assert ingestpool.shared_pool(1) is None
    here, r_here = _run(tmp_path, "here", workers=0)
    fallback, r_fallback = _run(tmp_path, "fallback", workers=1)
    assert r_fallback.ok and _report(r_here) == _report(r_fallback)
    assert _log(here) == _log(fallback)
    ingestpool.close_shared_pool()


def test_workers_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRACER_INGEST_WORKERS", "0")
    assert ingestpool.worker_count() == 0
    assert ingestpool.shared_pool() is None
    monkeypatch.setenv("TRACER_INGEST_WORKERS", "two")
    with pytest.raises(Exception, match="TRACER_INGEST_WORKERS"):
        ingestpool.worker_count()


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_workers_of_a_killed_ingest_exit(tmp_path: Path) -> None:
    """A process killed mid-ingest (the crash loops do it) leaves no worker behind holding
    its pipes: each worker watches for its parent and exits."""
    import subprocess
    import sys
    import time

    code = (
        "import sys, time\n"
        "from store.ingestpool import IngestPool\n"
        "pool = IngestPool(1)\n"
        "pool._pool.submit(int).result()\n"  # the worker is up
        "print(*pool.pids(), flush=True)\n"
        "time.sleep(600)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    pids = [int(p) for p in proc.stdout.readline().split()]
    assert pids
    proc.kill()
    proc.wait()
    deadline = time.monotonic() + 60  # a liveness bound, not a speed check
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(p) for p in pids)
    assert proc.stdout.read() == ""  # the pipe ended: no process holds it
