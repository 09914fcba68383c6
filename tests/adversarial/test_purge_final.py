"""A purge is final.  Before, ingesting any manifest that carried a purged text stored it
again, and `trace` on the original answer showed it INTACT."""

from __future__ import annotations

from store import admin, queries
from store.crypto import sha256_hex
from store.entries import EntryKind, Statement
from store.keyring import DataKeys
from tests.helpers import T0, Case, manifest, passage, revision, signed
from tracer.engine.verify import verify

SECRET = "Employees may claim up to 40 EUR per day.\n"


def _setup(case: Case) -> tuple[dict[str, object], str]:
    rev = revision("travel", "A", SECRET, "2026-01-05T00:00:00Z")
    ps = passage(rev, "40 EUR")
    assert case.ingest(rev, signed(case, manifest("ans-1", "Forty euros.", [ps]))).ok
    digest = sha256_hex(ps["retrieved_text"].encode())
    admin.purge(case.vault, case.custodian, digest, "RET-6M", "superseded", "HR", "2026-05-01T00:00:00Z")
    return rev, digest


def test_reingesting_a_purged_text_does_not_store_it_again(case: Case) -> None:
    rev, digest = _setup(case)
    again = manifest("ans-2", "Forty euros again.", [passage(rev, "40 EUR")])
    report = case.ingest(signed(case, again))
    assert report.ok
    assert {f.code for f in report.faults} == {"text_purged"}
    assert not queries.blob_present(case.vault, digest)
    s = case.session()
    try:
        assert s.text(digest, "support").state == "purged"
    finally:
        s.close()


def test_a_source_revision_with_purged_content_is_refused(case: Case) -> None:
    _setup(case)
    revision_digest = sha256_hex(SECRET.encode())
    admin.purge(
        case.vault, case.custodian, revision_digest, "RET-6M", "superseded", "HR", "2026-05-01T00:00:00Z"
    )
    report = case.ingest(revision("travel-copy", "A", SECRET, "2026-02-05T00:00:00Z"))
    assert not report.ok and "purge is final" in report.rejected[0].message


def test_a_blob_put_back_by_hand_is_never_shown_and_is_reported(case: Case) -> None:
    rev, digest = _setup(case)
    text = str(passage(rev, "40 EUR")["retrieved_text"]).encode()
    keys = DataKeys(case.vault, case.custodian)
    with case.vault.batch(case.custodian) as b:  # the custodian's key, misused to restore it
        keys.encrypt_into(b, "support", text, {})
        b.append(
            Statement(EntryKind.ACCESS, {"action": "restore", "target": digest, "at": T0}, case.custodian)
        )
    assert queries.blob_present(case.vault, digest)
    s = case.session()
    try:
        result = s.text(digest, "support")
        assert result.state == "purged" and result.text is None
        kinds = [f.kind for f in verify(s.vault, s).findings]
    finally:
        s.close()
    assert "purged_blob_still_present" in kinds
