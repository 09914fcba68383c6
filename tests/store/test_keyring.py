"""Batched blob reads: one query for many digests, the same answers as one at a time."""

from __future__ import annotations

from store import admin
from store.crypto import sha256_hex
from store.errors import UnwrapError
from store.keyring import DataKeys, in_scope
from tests.helpers import T0, Case, manifest, passage, revision, signed

FIRST = "Customers may request a refund within thirty days of delivery."
SECOND = "Refunds are paid to the original payment method within five business days."
DOC = f"# Returns policy\n\n## Refund window\n\n{FIRST}\n\n{SECOND}\n"


def _fill(case: Case) -> list[str]:
    rev = revision("refund", "A", DOC, "2026-01-05T00:00:00Z")
    ops = revision("runbook", "A", f"# Ops\n\n{SECOND}\n", "2026-01-05T00:00:00Z", collection="ops")
    a1 = manifest("ans-1", "Thirty days.", [passage(rev, "thirty", "p1")])
    report = case.ingest(rev, ops, signed(case, a1))
    assert report.ok, report.to_json()
    return sorted({str(r[0]) for r in case.vault.query("SELECT digest FROM blobs")})


def test_blob_rows_many_matches_blob_rows(case: Case) -> None:
    digests = _fill(case)
    absent = "0" * 64
    many = case.vault.blobs.rows_many([*digests, absent, digests[0]])
    assert set(many) == set(digests)
    for d in digests:
        assert many[d] == case.vault.blobs.rows(d)
    assert case.vault.blobs.rows_many([]) == {}


def test_decrypt_many_matches_decrypt_and_isolates_tampering(case: Case) -> None:
    digests = _fill(case)
    keys = DataKeys(case.vault, case.custodian)
    bad = sha256_hex(FIRST.encode())
    ((_c, _k, _n, ct),) = case.vault.blobs.rows(bad)
    case.vault.con.execute("UPDATE blobs SET ct = ? WHERE digest = ?", [ct[:-1] + bytes([ct[-1] ^ 1]), bad])
    many = keys.decrypt_many([*digests, "0" * 64])
    assert "0" * 64 not in many
    assert isinstance(many[bad], UnwrapError)
    for d in digests:
        if d != bad:
            assert many[d] == keys.decrypt(d)
            got = many[d]
            assert not isinstance(got, UnwrapError) and sha256_hex(got[1]) == d


def test_decrypt_many_skips_copies_without_a_key(case: Case) -> None:
    digests = _fill(case)
    omar = case.grant("omar", ["ops"])
    keys = DataKeys(case.vault, omar)
    many = keys.decrypt_many(digests)
    colls = {d: case.vault.blobs.rows(d)[0][0] for d in digests}
    assert set(many) == {d for d, c in colls.items() if c == "ops"}


def test_tombstone_rows_many(case: Case) -> None:
    digests = _fill(case)
    target = sha256_hex(DOC.encode())
    admin.purge(case.vault, case.custodian, target, "retention", "test", "legal", T0)
    rows = case.vault.index.tombstone_rows_many([*digests, target])
    assert set(rows) == {target}
    assert (rows[target].digest, rows[target].policy) == (target, "retention")


def test_in_scope() -> None:
    assert in_scope(("*",), "x") and in_scope(["a", "x"], "x") and not in_scope(("a",), "x")
    assert in_scope(iter(["a", "x"]), "x")


def test_duckdb_memory_is_capped(case: Case) -> None:
    """DuckDB's default (80 % of RAM) would let the buffer pool and indexes grow past 1 GiB."""
    number, unit = str(case.vault.query("SELECT current_setting('memory_limit')")[0][0]).split()
    assert unit in ("KiB", "MiB") or (unit == "GiB" and float(number) <= 4)
