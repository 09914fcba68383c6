"""Every Parquet file of an export, cut short: `verify-dataset` exits 2 naming the file.

A damaged export is not a report (nothing in it could be compared), and never a
traceback: each file the verifier reads, whichever step reads it, fails the same way."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.dataset.conftest import Exported, run_cli


def _parquet_files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*.parquet"))


def test_the_sample_export_has_the_files_this_test_cuts(exported: Exported) -> None:
    names = _parquet_files(exported.dataset)
    for name in ("log.parquet", "checkpoints.parquet", "references.parquet", "tombstones.parquet"):
        assert name in names
    assert any(n.startswith("texts/") for n in names)


@pytest.mark.parametrize(
    "name",
    ["log.parquet", "checkpoints.parquet", "references.parquet", "tombstones.parquet", "texts/0000.parquet"],
)
def test_a_cut_parquet_file_is_exit_2_naming_it(
    exported: Exported, tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    root = tmp_path / "ds"
    shutil.copytree(exported.dataset, root)
    data = (root / name).read_bytes()
    (root / name).write_bytes(data[: len(data) // 2])
    rc, out = run_cli("verify-dataset", str(root))
    err = capsys.readouterr().err
    assert rc == 2
    assert out == ""
    assert name in err and "Traceback" not in err
