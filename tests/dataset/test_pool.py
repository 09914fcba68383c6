"""The DuckDB engine's worker processes report what the in-process checks report."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

import pytest

from store.dataset import DatasetReader
from tests.dataset.conftest import Exported
from tests.dataset.test_tamper_matrix import CASES
from tracer.engine import dataset_verify
from tracer.engine.dataset_check import CheckContext
from tracer.engine.dataset_pool import PoolChecks
from tracer.engine.dataset_verify import verify_dataset
from tracer.engine.jsonshapes import FindingJSON


def _with_workers(root: Path, workers: int) -> list[FindingJSON]:
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


def test_slices_go_out_while_the_log_is_read_with_the_keyrings_in_force(
    exported: Exported, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The workers are handed each slice as soon as the keyrings over its rows are final,
    before the rest of the log is read: a slice before a change of who signs goes out with
    fewer keyrings than the last, and the findings are still `tracer verify`'s."""
    monkeypatch.setattr(dataset_verify, "_HANDOUT", 8)
    handed: list[tuple[int, int, bool]] = []
    submit = PoolChecks._submit

    def spy(
        self: PoolChecks,
        reader: DatasetReader,
        upto: int,
        ctx: CheckContext,
        leaves: Sequence[bytes],
        whole: bool,
    ) -> None:
        handed.append((upto, len(ctx.keyrings), whole))
        submit(self, reader, upto, ctx, leaves, whole)

    monkeypatch.setattr(PoolChecks, "_submit", spy)
    with PoolChecks(0, workers=2, batch_rows=8) as checks:
        assert checks.running
        report = verify_dataset(exported.dataset, "duckdb", checks)
    assert [f.to_json() for f in report.findings] == exported.verify_json["findings"]
    early = [(upto, rings) for upto, rings, whole in handed if whole]
    last_upto, last_rings, last_whole = handed[-1]
    assert not last_whole and last_upto == report.counts["entries"]
    assert early and early[0][0] < last_upto
    assert early[0][1] < last_rings, handed


def test_the_workers_go_once_every_result_is_in(exported: Exported) -> None:
    """The pool serves one verification: its workers are let go as its last result comes
    in (they exit while the report is finished), and a second verification with the same
    object checks in this process, to the same findings."""
    with PoolChecks(0, workers=2, batch_rows=32) as checks:
        assert checks.running
        first = [f.to_json() for f in verify_dataset(exported.dataset, "duckdb", checks).findings]
        assert not checks.running
        again = [f.to_json() for f in verify_dataset(exported.dataset, "duckdb", checks).findings]
    assert first == again == exported.verify_json["findings"]
