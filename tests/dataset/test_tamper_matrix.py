"""Tamper with an export: every change is a finding pinned to the entry it touches."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.dataset.conftest import Exported
from tracer.engine.dataset_verify import verify_dataset
from tracer.engine.logcheck import Finding

SEQ = 100  # a manifest in row group 1 (row groups of 64)


def _rewrite_log(root: Path, change: Callable[[list[dict[str, object]]], list[dict[str, object]]]) -> None:
    path = root / "log.parquet"
    table = pq.read_table(path)
    rows = change(table.to_pylist())
    pq.write_table(
        pa.Table.from_pylist(rows, schema=table.schema), path, row_group_size=64, compression="zstd"
    )


def _flip(value: bytes, at: int = 40) -> bytes:
    return value[:at] + bytes([value[at] ^ 0x01]) + value[at + 1 :]


def _set(column: str, fn: Callable[[object], object]) -> Callable[[Path], None]:
    def tamper(root: Path) -> None:
        def change(rows: list[dict[str, object]]) -> list[dict[str, object]]:
            rows[SEQ][column] = fn(rows[SEQ][column])
            return rows

        _rewrite_log(root, change)

    return tamper


def _drop(root: Path) -> None:
    _rewrite_log(root, lambda rows: rows[:SEQ] + rows[SEQ + 1 :])


def _duplicate(root: Path) -> None:
    _rewrite_log(root, lambda rows: rows[: SEQ + 1] + rows[SEQ:])


def _reorder_groups(root: Path) -> None:
    _rewrite_log(root, lambda rows: rows[:64] + rows[128:192] + rows[64:128] + rows[192:])


def _swap_tile(root: Path) -> None:
    a, b = root / "tile/0/000", root / "tile/entries/000"
    bundle = root / "tile/0/001.p"
    partial = next(bundle.iterdir())
    data = a.read_bytes()
    a.write_bytes(partial.read_bytes() + data[len(partial.read_bytes()) :])
    assert b.exists()


def _edit_manifest(root: Path) -> None:
    manifest = json.loads((root / "manifest.json").read_bytes())
    manifest["findings"] = []
    (root / "manifest.json").write_bytes(json.dumps(manifest).encode())


def _edit_text(root: Path) -> None:
    for path in sorted((root / "texts").glob("*.parquet")):
        rows = pq.read_table(path).to_pylist()
        for row in rows:
            if row["state"] == "plaintext" and row["digest"] == TEXT_DIGEST:
                row["text"] = row["text"] + b" (edited)"
                table = pa.Table.from_pylist(rows, schema=pq.read_table(path).schema)
                pq.write_table(table, path)
                return
    raise AssertionError("no plaintext to edit")


TEXT_DIGEST = ""


def _edit_reference(root: Path) -> None:
    path = root / "references.parquet"
    table = pq.read_table(path)
    rows = table.to_pylist()
    row = next(r for r in rows if r["seq"] == SEQ)
    row["digest"] = "0" * 64
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), path)


def _drop_tombstone(root: Path) -> None:
    path = root / "tombstones.parquet"
    table = pq.read_table(path)
    assert table.num_rows > 0
    pq.write_table(table.slice(1), path)


def _first_tombstone_seq(root: Path) -> int:
    return int(pq.read_table(root / "tombstones.parquet").column("seq")[0].as_py())


def _kinds(report_findings: list[Finding]) -> set[tuple[str, int | None]]:
    return {(f.kind, f.seq) for f in report_findings}


CASES: dict[str, tuple[Callable[[Path], None], str, int | None]] = {
    "entry byte": (_set("entry", lambda v: _flip(v)), "leaf_hash_mismatch", SEQ),  # type: ignore[arg-type]
    "leaf_hash byte": (_set("leaf_hash", lambda v: _flip(v, 3)), "leaf_hash_mismatch", SEQ),  # type: ignore[arg-type]
    "seq value": (_set("seq", lambda v: int(v) + 1), "dataset_row_out_of_place", SEQ + 1),  # type: ignore[call-overload]
    "kind value": (_set("kind", lambda v: "revision"), "entry_kind_mismatch", SEQ),
    "signer value": (_set("signer", lambda v: "0" * 64), "dataset_signer_mismatch", SEQ),
    "dropped row": (_drop, "dataset_row_out_of_place", SEQ + 1),
    "duplicated row": (_duplicate, "dataset_row_out_of_place", SEQ),
    "reordered row group": (_reorder_groups, "dataset_row_out_of_place", 128),
    "swapped tile": (_swap_tile, "dataset_tile_mismatch", 0),
    "edited manifest": (_edit_manifest, "dataset_manifest_mismatch", None),
    "edited reference": (_edit_reference, "dataset_reference_altered", SEQ),
    "dropped tombstone": (_drop_tombstone, "dataset_tombstone_mismatch", -1),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_tamper_is_a_finding_pinned_to_the_entry(exported: Exported, tmp_path: Path, name: str) -> None:
    tamper, kind, seq = CASES[name]
    root = tmp_path / "ds"
    shutil.copytree(exported.dataset, root)
    if seq == -1:
        seq = _first_tombstone_seq(root)
    tamper(root)
    report = verify_dataset(root)
    assert not report.ok
    assert (kind, seq) in _kinds(report.findings), [(f.kind, f.seq) for f in report.findings]


def test_a_text_that_does_not_match_its_digest(exported: Exported, tmp_path: Path) -> None:
    global TEXT_DIGEST
    root = tmp_path / "ds"
    shutil.copytree(exported.dataset, root)
    refs = pq.read_table(root / "references.parquet").to_pylist()
    ref = next(r for r in refs if r["seq"] == SEQ and r["role"] == "retrieved")
    TEXT_DIGEST = str(ref["digest"])
    _edit_text(root)
    report = verify_dataset(root)
    hits = [
        f for f in report.findings if f.kind == "checksum_mismatch" and f.record.get("digest") == TEXT_DIGEST
    ]
    assert hits and all(f.seq is not None for f in hits)
    assert SEQ in {f.seq for f in hits}


def test_the_untouched_export_is_what_verify_said(exported: Exported) -> None:
    report = verify_dataset(exported.dataset)
    assert [f.to_json() for f in report.findings] == exported.verify_json["findings"]
