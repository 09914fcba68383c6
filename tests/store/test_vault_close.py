"""Closing a vault leaves one self-contained file, and does so cheaply.

DuckDB checkpoints when the connection closes; the vault keeps that (no write-ahead log
is left beside the file, so a copy of `vault.duckdb` alone, a read-only or forensic open
and an export all see every committed write). What made that close slow after a one-row
append was DuckDB's default compression of the log's entry bytes, so new vaults store
`log.entry` (and the incompressible `blobs.ct`) uncompressed (`store.schema.RAW_DDL`).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb

from store.schema import DB_FILE
from store.vault import Vault
from tests.helpers import Case, manifest, passage, revision, signed
from tracer.engine.session import unlock
from tracer.engine.trust import TrustStore

A = "# Returns policy\n\n## Refund window\n\nCustomers may request a refund within thirty days of delivery.\n"


def _compressions(db: Path, table: str, column: str) -> set[str]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute(
            f"SELECT DISTINCT compression FROM pragma_storage_info('{table}') "  # noqa: S608
            "WHERE column_name = ? AND segment_type IN ('VARCHAR', 'BLOB')",
            [column],
        ).fetchall()
    finally:
        con.close()
    return {str(r[0]) for r in rows}


def test_an_unlock_leaves_no_wal_and_a_one_file_copy_holds_its_entry(case: Case, tmp_path: Path) -> None:
    ra = revision("returns", "A", A, "2026-01-05T00:00:00Z")
    report = case.ingest(ra, signed(case, manifest("ans-1", "Thirty days.", [passage(ra, "thirty days")])))
    assert report.ok, report.to_json()
    case.vault.close()
    s = unlock(case.path, case.custodian, trust=TrustStore())  # appends its access entry
    size, head = s.vault.size(), s.vault.latest_checkpoint()
    s.close()
    case.vault = Vault.open(case.path)
    case.vault.close()
    db = case.path / DB_FILE
    assert not db.with_name(DB_FILE + ".wal").exists()
    copy = tmp_path / "copy"
    copy.mkdir()
    shutil.copy(db, copy / DB_FILE)  # the file alone, nothing beside it
    with Vault.open(copy, read_only=True) as v:
        assert v.size() == size
        assert v.latest_checkpoint() == head
    assert _compressions(db, "log", "entry") == {"Uncompressed"}
    assert _compressions(db, "blobs", "ct") == {"Uncompressed"}
    case.vault = Vault.open(case.path)
