"""`Vault.blob_index`: the in-memory digest index gives exactly what the SQL lookup gives."""

from __future__ import annotations

import pytest

from store import blobstore as vault_module
from store.rows import BlobRow
from store.vault import Vault
from tests.helpers import Case, manifest, passage, revision, signed

DOC = "# Policy\n\nRefunds within thirty days.\n\nShipping is free.\n"


def _lookups(vault: Vault, digests: list[str]) -> dict[str, list[BlobRow]]:
    return vault.blobs.rows_many(digests)


def test_index_agrees_with_sql_including_shared_prefixes_and_strangers(
    case: Case, monkeypatch: pytest.MonkeyPatch
) -> None:
    rev = revision("policy", "A", DOC, "2026-01-05T00:00:00Z")
    ans = manifest("ans-1", "Thirty days.", [passage(rev, "thirty", "p1")])
    assert case.ingest(rev, signed(case, ans)).ok
    vault = case.vault
    stored = [str(r[0]) for r in vault.con.execute("SELECT DISTINCT digest FROM blobs").fetchall()]
    assert len(stored) >= 3
    # a row whose digest shares the first 64 bits of a real one must not be returned for it
    twin = stored[0][:16] + "f" * 48 if stored[0][16:] != "f" * 48 else stored[0][:16] + "0" * 48
    vault.con.execute(
        "INSERT INTO blobs SELECT ?, collection, dk_id, nonce, ct FROM blobs WHERE digest = ? LIMIT 1",
        [twin, stored[0]],
    )
    asked = [*stored, twin, "0" * 64, "not-a-digest", "", stored[0]]
    plain = _lookups(vault, asked)
    with vault.blobs.index():
        indexed = _lookups(vault, asked)
    assert indexed == plain
    assert set(indexed) == {*stored, twin}
    assert len(indexed[stored[0]]) == 1
    # a few digests go through the digest index, many through a join: the same rows
    monkeypatch.setattr(vault_module, "_POINT_LOOKUPS", 0)
    assert _lookups(vault, asked) == plain
    # looked up a chunk at a time (a long IN list is planned as a scan): still the same rows
    monkeypatch.setattr(vault_module, "_POINT_LOOKUPS", 1024)
    monkeypatch.setattr(vault_module, "INDEX_CHUNK", 2)
    assert _lookups(vault, asked) == plain


def test_a_vault_made_before_the_digest_index_gets_it_when_opened_for_writing(case: Case) -> None:
    case.vault.con.execute("DROP INDEX ix_blobs_digest")
    case.reopen()
    names = {str(r[0]) for r in case.vault.con.execute("SELECT index_name FROM duckdb_indexes()").fetchall()}
    assert "ix_blobs_digest" in names


def test_a_write_drops_the_index(case: Case) -> None:
    rev = revision("policy", "A", DOC, "2026-01-05T00:00:00Z")
    assert case.ingest(rev).ok
    vault = case.vault
    with vault.blobs.index():
        assert vault.blobs.indexed
        rev_b = revision("policy", "B", DOC + "\nNew paragraph.\n", "2026-02-05T00:00:00Z")
        assert case.ingest(rev_b).ok
        assert not vault.blobs.indexed  # the write dropped it
        new = str(
            vault.con.execute("SELECT content_sha256 FROM v_revisions WHERE revision = 'B'").fetchall()[0][0]
        )
        assert new in vault.blobs.rows_many([new])
