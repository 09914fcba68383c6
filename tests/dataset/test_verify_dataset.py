"""verify-dataset reports what `tracer verify` reports, and an export is deterministic."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.dataset.conftest import Exported, export, run_cli
from tests.helpers import Case
from tracer.engine.dataset_export import export_dataset
from tracer.engine.dataset_verify import verify_dataset
from tracer.engine.verify import verify


def test_sample_vault_findings_equal_tracer_verify(exported: Exported) -> None:
    rc, out = run_cli("verify-dataset", str(exported.dataset), "--json")
    report = json.loads(out)
    assert rc == 1
    assert [f["kind"] for f in exported.verify_json["findings"]] == ["checksum_mismatch"]
    assert report["findings"] == exported.verify_json["findings"]
    for key in (
        "entries",
        "checkpoints",
        "manifests",
        "purged",
        "out_of_scope",
        "intact",
        "checksum_mismatch",
    ):
        assert report["counts"][key] == exported.verify_json["counts"][key]
    assert report["checkpoint"]["recomputed_root"] == exported.verify_json["checkpoint"]["recomputed_root"]


def test_the_export_carries_the_vault_findings_in_its_signed_manifest(exported: Exported) -> None:
    manifest = json.loads((exported.dataset / "manifest.json").read_bytes())
    assert manifest["findings"] == exported.verify_json["findings"]


def test_clean_vault_findings_equal_tracer_verify(case: Case, tmp_path: Path) -> None:
    session = case.session("ines", read_only=True)
    try:
        expected = [f.to_json() for f in verify(session.vault, session, full=True).findings]
        export_dataset(session, tmp_path / "ds", "plaintext", 2)
    finally:
        session.close()
    report = verify_dataset(tmp_path / "ds")
    assert expected == []
    assert [f.to_json() for f in report.findings] == expected
    assert report.ok


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_two_exports_are_byte_identical_but_for_the_signature(exported: Exported, tmp_path: Path) -> None:
    second = tmp_path / "again"
    export(exported.vault, second, exported.key, exported.passphrase, "--row-group", "64")
    a, b = _files(exported.dataset), _files(second)
    assert a.keys() == b.keys()
    differ = sorted(name for name in a if a[name] != b[name])
    assert differ in ([], ["manifest.dsse.json"])
    env_a, env_b = json.loads(a["manifest.dsse.json"]), json.loads(b["manifest.dsse.json"])
    assert env_a["payload"] == env_b["payload"]


def test_row_groups_are_perfect_subtrees(exported: Exported) -> None:
    import pyarrow.parquet as pq

    meta = pq.ParquetFile(exported.dataset / "log.parquet").metadata
    sizes = [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]
    assert all(n == 64 for n in sizes[:-1]) and 0 < sizes[-1] <= 64
    assert sum(sizes) == exported.verify_json["counts"]["entries"]


@pytest.mark.parametrize("mode", ["digests", "ciphertext"])
def test_without_plaintext_no_text_is_checked_and_none_is_read(
    exported: Exported, tmp_path: Path, mode: str
) -> None:
    out = tmp_path / mode
    export(exported.vault, out, exported.key, exported.passphrase, "--texts", mode)
    import pyarrow.parquet as pq

    for path in sorted((out / "texts").glob("*.parquet")):
        texts = pq.read_table(path)
        assert texts.column("text").null_count == texts.num_rows
    report = verify_dataset(out)
    assert "checksum_mismatch" not in {f.kind for f in report.findings}
    assert report.counts.get("intact", 0) == 0
