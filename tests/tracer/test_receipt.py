"""Incremental verification from a signed local receipt: it finds what the full pass
finds, and a receipt that was edited, copied or outgrown is ignored with a warning."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from store import admin
from store.crypto import Identity, sha256_hex
from tests.helpers import Case, case_copy, manifest, passage, revision, signed
from tracer.engine.receipt import receipt_path
from tracer.engine.trust import TrustStore
from tracer.engine.verify import VerifyReport, verify

DOC = "# Refunds\n\nRefunds within thirty days.\n\nFive business days to process.\n"


def _build(case: Case) -> None:
    rev = revision("refund", "A", DOC, "2026-01-05T00:00:00Z")
    a1 = manifest("ans-1", "Thirty days.", [passage(rev, "thirty", "p1")])
    assert case.ingest(rev, signed(case, a1)).ok


def _built_and_verified(case: Case) -> None:
    _build(case)
    _verify(case)


@pytest.fixture
def verified(tmp_path: Path) -> Iterator[Case]:
    """`_build`, then a clean verify by ines (her receipt in the home): once per process,
    copied per test."""
    c = case_copy("receipt-verified", _built_and_verified, tmp_path)
    yield c
    c.close()


def _verify(case: Case, full: bool = False) -> VerifyReport:
    s = case.session("ines", read_only=True)
    try:
        return verify(s.vault, s, full=full)
    finally:
        s.close()
        case.reopen()


def _receipt(case: Case) -> dict[str, object]:
    path = receipt_path(TrustStore().home, case.vault.origin, case.investigators["ines"].key_id)
    data: dict[str, object] = json.loads(path.read_text(encoding="utf-8"))
    return data


def test_a_clean_verify_leaves_a_receipt_and_the_next_one_starts_from_it(case: Case) -> None:
    _build(case)
    first = _verify(case)
    assert first.ok and first.mode == "full"
    size = case.vault.size()
    assert "signatures" in _receipt(case)
    second = _verify(case)
    assert second.ok and (second.mode, second.verified_from) == ("incremental", size)
    rev = revision("refund", "B", DOC + "\nNew paragraph.\n", "2026-02-05T00:00:00Z")
    assert case.ingest(
        rev, signed(case, manifest("ans-2", "Thirty days.", [passage(rev, "thirty", "p2")]))
    ).ok
    third = _verify(case)
    assert third.ok and third.verified_from == size and third.counts["manifests"] == 2
    assert _verify(case, full=True).mode == "full"


def test_an_edited_receipt_is_ignored_with_a_warning(verified: Case) -> None:
    case = verified
    path = receipt_path(TrustStore().home, case.vault.origin, case.investigators["ines"].key_id)
    env = json.loads(path.read_text(encoding="utf-8"))
    env["payload"] = env["payload"][:-4] + ("AAAA" if not env["payload"].endswith("AAAA") else "BBBB")
    path.write_text(json.dumps(env), encoding="utf-8")
    report = _verify(case)
    assert report.mode == "full" and any("does not verify" in w or "readable" in w for w in report.warnings)


def test_a_receipt_signed_by_someone_else_is_ignored(case: Case) -> None:
    _build(case)
    omar = case.grant("omar", ["*"])
    s = case.session("omar", read_only=True)
    try:
        verify(s.vault, s)
    finally:
        s.close()
        case.reopen()
    home = TrustStore().home
    theirs = receipt_path(home, case.vault.origin, omar.key_id)
    mine = receipt_path(home, case.vault.origin, case.investigators["ines"].key_id)
    mine.write_bytes(theirs.read_bytes())
    report = _verify(case)
    assert report.mode == "full" and report.warnings


def test_a_text_altered_after_the_receipt_is_found_incrementally(verified: Case) -> None:
    case = verified
    digest = sha256_hex(
        passage(revision("refund", "A", DOC, "2026-01-05T00:00:00Z"), "thirty")["retrieved_text"].encode()
    )
    ct = case.vault.con.execute("SELECT ct FROM blobs WHERE digest = ?", [digest]).fetchall()[0][0]
    case.vault.con.execute(
        "UPDATE blobs SET ct = ? WHERE digest = ?", [bytes([ct[0] ^ 1]) + bytes(ct[1:]), digest]
    )
    report = _verify(case)
    assert report.mode == "incremental"
    assert "checksum_mismatch" in [f.kind for f in report.findings]
    assert [f.to_json() for f in report.findings] == [f.to_json() for f in _verify(case, full=True).findings]


def test_a_view_row_edited_after_the_receipt_makes_it_full_and_is_found(verified: Case) -> None:
    case = verified
    case.vault.con.execute("UPDATE v_passages SET doc_revision = 'Z' WHERE answer_id = 'ans-1'")
    report = _verify(case)
    assert report.mode == "full" and any("view rows" in w for w in report.warnings)
    assert "view_row_altered_or_extra" in [f.kind for f in report.findings]


def test_a_purge_after_the_receipt_retraces_the_covered_passages(verified: Case) -> None:
    case = verified
    admin.purge(
        case.vault, case.custodian, sha256_hex(DOC.encode()), "RET", "old", "HR", "2026-05-01T00:00:00Z"
    )
    inc, full = _verify(case), _verify(case, full=True)
    assert inc.mode == "incremental"
    assert [f.to_json() for f in inc.findings] == [f.to_json() for f in full.findings]
    assert {k: v for k, v in inc.counts.items() if k.startswith("transform_")} == {
        k: v for k, v in full.counts.items() if k.startswith("transform_")
    }


def test_each_investigator_starts_from_their_own_receipt(case: Case) -> None:
    _build(case)
    omar = Identity.from_seed("omar", b"omar")
    admin.grant_investigator(case.vault, case.custodian, omar.public, ["support"], "2026-01-01T00:00:00Z")
    case.investigators["omar"] = omar
    s = case.session("omar", read_only=True)
    try:
        assert verify(s.vault, s).mode == "full"
        assert verify(s.vault, s).mode == "incremental"
    finally:
        s.close()
        case.reopen()
