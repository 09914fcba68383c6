"""The temporary file the workers read their slices from: each slice whole, in place,
and the file gone when the pool is done (also when the verification fails)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pyarrow as pa
import pytest

from tests.dataset.conftest import Exported
from tracer.engine import dataset_pool
from tracer.engine.dataset_pool import PoolChecks
from tracer.engine.dataset_spool import Spool, read_spooled
from tracer.engine.dataset_verify import verify_dataset


def test_each_slice_reads_back_as_written() -> None:
    table = pa.table({"seq": list(range(9)), "entry": [b"\x1b[31m" * i for i in range(9)]})
    spool = Spool()
    offsets = [spool.put(table.slice(start, 4)) for start in range(0, 9, 4)]
    path = spool.path
    assert oct(os.stat(os.path.dirname(path)).st_mode & 0o777) == "0o700"
    assert os.stat(path).st_uid == os.getuid()
    read = [read_spooled(path, offset) for offset in offsets]
    spool.close()
    assert not os.path.exists(path)
    assert pa.concat_tables(read).equals(table)
    assert read[2].column("seq").to_pylist() == [8]  # still readable: the buffers hold the mapping


@pytest.fixture
def spool_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The spool's directories made under `tmp_path`, and only those: setting
    `tempfile.tempdir` instead also moved multiprocessing's own directory there, and a
    fork server first started in such a test put its socket past the 108 bytes a Unix
    socket path may hold under a long TMPDIR, so no pool started for the rest of the
    worker."""
    real = tempfile.mkdtemp

    def mkdtemp(suffix: str | None = None, prefix: str | None = None, dir: str | None = None) -> str:  # noqa: A002
        if prefix == "tracer-verify-dataset-":
            dir = str(tmp_path)  # noqa: A001
        return real(suffix, prefix, dir)

    monkeypatch.setattr(tempfile, "mkdtemp", mkdtemp)
    return tmp_path


def test_the_file_goes_when_the_verification_ends(
    exported: Exported, monkeypatch: pytest.MonkeyPatch, spool_dir: Path
) -> None:
    tmp_path = spool_dir
    spooled: list[str] = []
    put = Spool.put

    def seen(self: Spool, part: pa.Table) -> int:
        offset = put(self, part)
        spooled.append(self.path)
        return offset

    monkeypatch.setattr(Spool, "put", seen)
    with PoolChecks(0, workers=2, batch_rows=32) as checks:
        assert checks.running
        report = verify_dataset(exported.dataset, "duckdb", checks)
    assert [f.to_json() for f in report.findings] == exported.verify_json["findings"]
    assert spooled and all(Path(p).parent.parent == tmp_path for p in spooled)
    assert list(tmp_path.glob("tracer-verify-dataset-*")) == []


def test_where_no_file_can_be_written_the_slices_travel_whole(
    exported: Exported, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent: list[str] = []

    def refuse(self: Spool, part: pa.Table) -> int:
        raise OSError("no space left on device")

    real = dataset_pool._ipc

    def counted(table: pa.Table) -> bytes:
        sent.append("ipc")
        return real(table)

    monkeypatch.setattr(Spool, "put", refuse)
    monkeypatch.setattr(dataset_pool, "_ipc", counted)
    with PoolChecks(0, workers=2, batch_rows=32) as checks:
        assert checks.running
        report = verify_dataset(exported.dataset, "duckdb", checks)
    assert [f.to_json() for f in report.findings] == exported.verify_json["findings"]
    assert sent


def test_the_file_goes_when_the_verification_fails_midway(
    exported: Exported, monkeypatch: pytest.MonkeyPatch, spool_dir: Path
) -> None:
    """Every slice handed out, then a failure before any result is read: leaving the
    pool's context still removes the file."""
    from tracer.engine import dataset_verify

    tmp_path = spool_dir

    def fail(*_args: object) -> None:
        assert list(tmp_path.glob("tracer-verify-dataset-*/log.arrows"))
        raise RuntimeError("midway")

    monkeypatch.setattr(dataset_verify._Verifier, "_other_statements", fail)
    with pytest.raises(RuntimeError, match="midway"), PoolChecks(0, workers=2, batch_rows=32) as checks:
        assert checks.running
        verify_dataset(exported.dataset, "duckdb", checks)
    assert list(tmp_path.glob("tracer-verify-dataset-*")) == []


def test_a_worker_that_cannot_read_the_file_leaves_its_slice_to_this_process(
    exported: Exported, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The spooled file gone before the workers read it (a cleaner of /tmp, a platform
    that will not share it): each slice is checked here instead, to the same findings."""

    def vanish(self: Spool, part: pa.Table) -> int:
        offset = put(self, part)
        os.remove(self.path)
        return offset

    put = Spool.put
    monkeypatch.setattr(Spool, "put", vanish)
    with PoolChecks(0, workers=2, batch_rows=32) as checks:
        assert checks.running
        report = verify_dataset(exported.dataset, "duckdb", checks)
    assert [f.to_json() for f in report.findings] == exported.verify_json["findings"]
