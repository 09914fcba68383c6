"""The DuckDB engine's worker processes report what the in-process checks report."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.dataset.conftest import Exported
from tests.dataset.test_tamper_matrix import CASES
from tracer.engine.dataset_pool import PoolChecks
from tracer.engine.dataset_verify import verify_dataset


def _with_workers(root: Path, workers: int) -> list[dict[str, object]]:
    with PoolChecks(0, workers=workers, batch_rows=32) as checks:
        assert (checks.workers, checks.running) == (workers, workers > 0)
        return [f.to_json() for f in verify_dataset(root, "duckdb", checks).findings]


def test_two_workers_find_what_one_process_finds(exported: Exported, tmp_path: Path) -> None:
    assert _with_workers(exported.dataset, 2) == exported.verify_json["findings"]
    root = tmp_path / "ds"
    shutil.copytree(exported.dataset, root)
    tamper, kind, seq = CASES["entry byte"]
    tamper(root)
    pooled = _with_workers(root, 2)
    assert pooled == _with_workers(root, 0)
    assert any(f["kind"] == kind and f["seq"] == seq for f in pooled)
