"""Fixture 5 of docs/fixtures.md: tampering, each kind caught by `verify` and pinned to its record.

The tests play the attacker: they edit the DuckDB file directly through `vault.con`
(the application has no such path), then open the vault the way an investigator does
and run `tracer.engine.verify.verify`.  Sessions are opened read-only so the vault is
not appended to while under examination, which keeps every pinned seq exact.

Log of the fixture vault: 0 vault_init, 1 key_add, 2 investigator_grant,
3 revision refund@A, 4 manifest ans-1, 5 manifest ans-2.  Checkpoints: id 0..3 at
sizes 1, 2, 3, 6.
"""

from __future__ import annotations

import base64
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from store import admin
from store.canonical import canonical
from store.crypto import aead_encrypt, sha256_hex
from store.entries import EntryKind, LogEntry, Statement
from store.errors import AccessDeniedError
from store.keyring import DataKeys
from store.merkle import leaf_hash
from store.vault import Vault
from tests.helpers import T0, Case, append_by_hand, case_copy, manifest, new_case, passage, revision, signed
from tracer.engine.catalog import revalidate
from tracer.engine.session import Session, unlock
from tracer.engine.trace import DamagedEntryError, Tracer
from tracer.engine.trust import TrustError, TrustStore
from tracer.engine.verify import Finding, Sizes, VerifyReport, verify
from tracer.engine.vocabulary import FindingKind

FIRST = "Customers may request a refund within thirty days of delivery."
SECOND = "Refunds are paid to the original payment method within five business days."
DOC = f"# Returns policy\n\n## Refund window\n\n{FIRST}\n\n{SECOND}\n"
MODEL_INPUT_1 = f"[1] {FIRST}"

REV_SEQ, ANS1_SEQ, ANS2_SEQ = 3, 4, 5
LAST_CHECKPOINT = 3

# every case verifies with worker processes: one set of them serves the module
pytestmark = pytest.mark.usefixtures("shared_verify_pool")


def _tamper_vault(case: Case) -> None:
    rev = revision("refund", "A", DOC, "2026-01-05T00:00:00Z")
    a1 = manifest("ans-1", "Thirty days.", [passage(rev, "thirty", "p1", model_input_text=MODEL_INPUT_1)])
    a2 = manifest("ans-2", "Five business days.", [passage(rev, "five business", "p2")])
    report = case.ingest(rev, signed(case, a1), signed(case, a2))
    assert report.ok
    assert [a.seq for a in report.accepted] == [REV_SEQ, ANS1_SEQ, ANS2_SEQ]
    # a clean verification leaves ines a receipt: every case below also runs incrementally
    s = case.session("ines", read_only=True)
    try:
        assert verify(s.vault, s, full=True).ok
    finally:
        s.close()


@pytest.fixture
def tv(tmp_path: Path) -> Iterator[Case]:
    """The fixture vault and the home its clean verification left, built once per process."""
    case = case_copy("tamper-vault", _tamper_vault, tmp_path)
    yield case
    case.close()


def both_ways(vault: Vault, session: Session | None) -> VerifyReport:
    """Verify in this process, then with worker processes taking one-entry runs and
    one-passage transform pages (so revisions verified on one page are reused, pinned,
    on the next), then from the receipt the fixture left (incremental, or full when the
    tampering contradicts it): every tampering below must be reported the same, in the
    same order, all three ways."""
    inline = _with_workers(0, vault, session, full=True)
    pooled = _with_workers(2, vault, session, full=True)
    assert [f.to_json() for f in pooled.findings] == [f.to_json() for f in inline.findings]
    assert (pooled.counts, pooled.checkpoint) == (inline.counts, inline.checkpoint)
    if session is not None:
        incremental = _with_workers(0, vault, session)
        assert [f.to_json() for f in incremental.findings] == [f.to_json() for f in inline.findings]

        # transformation verdicts are counted for the passages traced: after a receipt,
        # those of new entries (and of covered ones whose texts changed)
        def untraced(counts: dict[str, int]) -> dict[str, int]:
            return {k: v for k, v in counts.items() if not k.startswith("transform_")}

        assert untraced(incremental.counts) == untraced(inline.counts)
        assert incremental.checkpoint == inline.checkpoint
    return inline


def _with_workers(n: int, vault: Vault, session: Session | None, full: bool = False) -> VerifyReport:
    """With workers, every run one entry and every transform page one passage."""
    sizes = Sizes(run=1, transform_page=1, workers=n) if n else Sizes(workers=0)
    return verify(vault, session, full=full, sizes=sizes)


def run_verify(case: Case, **kw: Any) -> VerifyReport:
    s = case.session("ines", read_only=True, **kw)
    try:
        return both_ways(s.vault, s)
    finally:
        s.close()


def structural(case: Case) -> VerifyReport:
    return both_ways(case.reopen(), None)


def kinds(report: VerifyReport) -> list[str]:
    return [f.kind for f in report.findings]


def only(report: VerifyReport, kind: str) -> list[Finding]:
    return [f for f in report.findings if f.kind == kind]


def row(case: Case, sql: str, *params: Any) -> tuple[Any, ...]:
    found = case.vault.con.execute(sql, list(params)).fetchone()
    assert found is not None
    return found


def entry_bytes(case: Case, seq: int) -> bytes:
    return bytes(row(case, "SELECT entry FROM log WHERE seq = ?", seq)[0])


def set_entry(case: Case, seq: int, data: bytes, *, fix_leaf: bool = False) -> None:
    if fix_leaf:
        case.vault.con.execute(
            "UPDATE log SET entry = ?, leaf_hash = ? WHERE seq = ?", [data, leaf_hash(data), seq]
        )
    else:
        case.vault.con.execute("UPDATE log SET entry = ? WHERE seq = ?", [data, seq])


def flip_one(data: bytes, needle: bytes, offset: int = 0) -> bytes:
    """Change exactly one byte: the one `offset` bytes into the first `needle`."""
    i = data.index(needle) + offset
    new = bytes([data[i] + 1 if data[i] not in (ord("9"), ord("z"), ord("Z")) else data[i] - 1])
    out = data[:i] + new + data[i + 1 :]
    assert sum(a != b for a, b in zip(data, out, strict=True)) == 1
    return out


def test_untouched_vault_is_clean(tv: Case) -> None:
    report = run_verify(tv)
    assert report.ok and report.findings == []
    assert report.counts["entries"] == 6 and report.counts["checkpoints"] == 4
    assert report.counts["manifests"] == 2
    # Counted per reference: 1 revision, 2 questions, 2 answers, 2 x (retrieved, model input).
    assert report.counts["intact"] == 9
    assert report.counts["transform_found_at_locator"] == 2
    assert report.checkpoint["size"] == 6 and report.checkpoint["log_size"] == 6


# -- blobs ---------------------------------------------------------------------------------


def test_blob_reencrypted_with_modified_plaintext(tv: Case) -> None:
    """The attacker holds the data key: authentication passes, the digest does not."""
    digest = sha256_hex(FIRST.encode())
    ((coll, dk_id, _nonce, _ct),) = tv.vault.blobs.rows(digest)
    key = DataKeys(tv.vault, tv.custodian).keys[dk_id]
    forged = FIRST.replace("thirty", "ninety").encode()
    nonce, ct = aead_encrypt(key, forged, f"{digest}\n{coll}".encode())
    tv.vault.con.execute("UPDATE blobs SET nonce = ?, ct = ? WHERE digest = ?", [nonce, ct, digest])
    report = run_verify(tv)
    assert kinds(report) == ["checksum_mismatch"]
    (f,) = report.findings
    assert (f.seq, f.record) == (
        ANS1_SEQ,
        {"digest": digest, "role": "retrieved", "answer_id": "ans-1", "passage_id": "p1"},
    )
    assert sha256_hex(forged)[:16] in f.detail
    s = tv.session("ines", read_only=True)
    t = Tracer(s).trace("ans-1")
    s.close()
    p = t.passages[0]
    assert (p.retrieved.state, p.retrieved.text, p.retrieved.recomputed) == (
        "checksum_mismatch",
        None,
        sha256_hex(forged),
    )
    assert p.model_input.text == MODEL_INPUT_1  # the other text still verifies
    assert t.integrity == "checksum_mismatch" and t.citations[0].integrity == "checksum_mismatch"


def test_ciphertext_byte_flipped(tv: Case) -> None:
    digest = sha256_hex(MODEL_INPUT_1.encode())
    ((_c, _k, _nonce, ct),) = tv.vault.blobs.rows(digest)
    bad = ct[:5] + bytes([ct[5] ^ 0x01]) + ct[6:]
    tv.vault.con.execute("UPDATE blobs SET ct = ? WHERE digest = ?", [bad, digest])
    report = run_verify(tv)
    assert kinds(report) == ["checksum_mismatch"]
    (f,) = report.findings
    assert (f.seq, f.record) == (
        ANS1_SEQ,
        {"digest": digest, "role": "model_input", "answer_id": "ans-1", "passage_id": "p1"},
    )
    assert "authentication" in f.detail


def test_revision_blob_altered(tv: Case) -> None:
    digest = sha256_hex(DOC.encode())
    ((_c, _k, _nonce, ct),) = tv.vault.blobs.rows(digest)
    tv.vault.con.execute("UPDATE blobs SET ct = ? WHERE digest = ?", [ct[:-1] + bytes([ct[-1] ^ 1]), digest])
    report = run_verify(tv)
    assert kinds(report) == ["checksum_mismatch"]
    assert (report.findings[0].seq, report.findings[0].record) == (
        REV_SEQ,
        {"digest": digest, "role": "revision", "document_id": "refund", "revision": "A"},
    )
    s = tv.session("ines", read_only=True)
    p = Tracer(s).trace("ans-1").passages[0]
    s.close()
    assert p.integrity == "intact"
    assert (p.currency.state, p.currency.reason) == ("unchecked", "latest_revision_unreadable")
    assert p.transform.state == "revision_unreadable"


def test_blob_deleted_without_tombstone_is_missing(tv: Case) -> None:
    digest = sha256_hex(b"Five business days.")
    tv.vault.con.execute("DELETE FROM blobs WHERE digest = ?", [digest])
    report = run_verify(tv)
    assert kinds(report) == ["missing"]
    assert (report.findings[0].seq, report.findings[0].record) == (
        ANS2_SEQ,
        {"digest": digest, "role": "answer", "answer_id": "ans-2"},
    )
    s = tv.session("ines", read_only=True)
    t = Tracer(s).trace("ans-2")
    s.close()
    assert t.answer.state == "missing" and t.answer.text is None and t.integrity == "missing"


# -- log entries -----------------------------------------------------------------------------


def test_one_byte_in_a_log_entry(tv: Case) -> None:
    """An unsigned annotation changed: the leaf hash and the signed checkpoint catch it."""
    data = entry_bytes(tv, ANS1_SEQ)
    set_entry(tv, ANS1_SEQ, flip_one(data, b'"ingested_at":"2026-06-01', len(b'"ingested_at":"2026-06-0')))
    report = run_verify(tv)  # unlock checks stored leaf hashes only: it opens
    assert kinds(report) == ["leaf_hash_mismatch", "checkpoint_root_mismatch"]
    leaf, root = report.findings
    assert (leaf.seq, leaf.record) == (
        ANS1_SEQ,
        {"kind": "manifest", "answer_id": "ans-1", "run_id": "run-ans-1"},
    )
    assert (root.seq, root.record) == (
        None,
        {"checkpoint": LAST_CHECKPOINT, "size": 6, "first_seq": 3, "last_seq": 5},
    )


def test_one_byte_in_an_entry_with_its_leaf_hash_recomputed(tv: Case) -> None:
    data = entry_bytes(tv, REV_SEQ)
    forged = flip_one(data, b'"kind":"revision"', 1)  # "kind" -> "lind": now not a revision at all
    set_entry(tv, REV_SEQ, forged, fix_leaf=True)
    with pytest.raises(TrustError, match=r"does not match its latest checkpoint|entries were removed"):
        tv.session("ines")
    report = run_verify(tv, forensic=True)
    assert "checkpoint_root_mismatch" in kinds(report)
    assert only(report, "checkpoint_root_mismatch")[0].record == {
        "checkpoint": LAST_CHECKPOINT,
        "size": 6,
        "first_seq": 3,
        "last_seq": 5,
    }


def test_one_byte_in_a_signature(tv: Case) -> None:
    data = entry_bytes(tv, ANS1_SEQ)
    set_entry(tv, ANS1_SEQ, flip_one(data, b'"sig":"', len(b'"sig":"') + 3))
    report = run_verify(tv)
    assert kinds(report) == ["leaf_hash_mismatch", "signature_invalid", "checkpoint_root_mismatch"]
    rec = {"kind": "manifest", "answer_id": "ans-1", "run_id": "run-ans-1"}
    assert [(f.seq, f.record) for f in report.findings[:2]] == [(ANS1_SEQ, rec), (ANS1_SEQ, rec)]
    s = tv.session("ines", read_only=True)
    t = Tracer(s).trace("ans-1")
    s.close()
    assert t.signature == "signature_invalid" and t.integrity == "signature_invalid"


def test_one_byte_in_an_older_checkpoint_note(tv: Case) -> None:
    note: str = row(tv, "SELECT note FROM checkpoints WHERE id = 1")[0]
    root_line = note.splitlines()[2]
    bad = note.replace(root_line, root_line[:5] + ("A" if root_line[5] != "A" else "B") + root_line[6:], 1)
    tv.vault.con.execute("UPDATE checkpoints SET note = ? WHERE id = 1", [bad])
    report = run_verify(tv)
    assert kinds(report) == ["checkpoint_signature_invalid"]
    assert (report.findings[0].seq, report.findings[0].record) == (None, {"checkpoint": 1, "size": 2})


def test_one_byte_in_the_latest_checkpoint_note(tv: Case) -> None:
    note: str = row(tv, "SELECT note FROM checkpoints WHERE id = ?", LAST_CHECKPOINT)[0]
    sig_line = note.rstrip("\n").splitlines()[-1]
    i = len(sig_line) - 5
    bad_line = sig_line[:i] + ("A" if sig_line[i] != "A" else "B") + sig_line[i + 1 :]
    tv.vault.con.execute(
        "UPDATE checkpoints SET note = ? WHERE id = ?", [note.replace(sig_line, bad_line), LAST_CHECKPOINT]
    )
    with pytest.raises(TrustError, match="latest checkpoint signature"):
        tv.session("ines")
    report = structural(tv)
    assert kinds(report) == ["checkpoint_signature_invalid"]
    assert report.findings[0].record == {"checkpoint": LAST_CHECKPOINT, "size": 6}


def test_entry_removed(tv: Case) -> None:
    tv.vault.con.execute("DELETE FROM log WHERE seq = ?", [ANS1_SEQ])
    with pytest.raises(TrustError, match=r"does not match its latest checkpoint|entries were removed"):
        tv.session("ines")
    report = run_verify(tv, forensic=True)
    missing = only(report, "entry_missing")
    assert [(f.seq, f.record) for f in missing] == [(ANS1_SEQ, {"answer_id": "ans-1", "run_id": "run-ans-1"})]
    assert [f.record for f in only(report, "checkpoint_beyond_log")] == [
        {"checkpoint": LAST_CHECKPOINT, "size": 6}
    ]
    stale_rows = only(report, "view_row_altered_or_extra")
    assert {f.record["table"] for f in stale_rows} == {"v_answers", "v_passages", "v_citations", "v_digests"}
    assert all(f.seq == ANS1_SEQ for f in stale_rows)
    assert not report.ok


def test_two_entries_swapped(tv: Case) -> None:
    con = tv.vault.con
    a = row(tv, "SELECT entry, leaf_hash FROM log WHERE seq = ?", ANS1_SEQ)
    b = row(tv, "SELECT entry, leaf_hash FROM log WHERE seq = ?", ANS2_SEQ)
    con.execute("UPDATE log SET entry = ?, leaf_hash = ? WHERE seq = ?", [b[0], b[1], ANS1_SEQ])
    con.execute("UPDATE log SET entry = ?, leaf_hash = ? WHERE seq = ?", [a[0], a[1], ANS2_SEQ])
    with pytest.raises(TrustError, match=r"does not match its latest checkpoint|entries were removed"):
        tv.session("ines")
    report = run_verify(tv, forensic=True)
    assert [(f.seq, f.record) for f in only(report, "entry_out_of_place")] == [
        (ANS1_SEQ, {"kind": "manifest", "answer_id": "ans-2", "run_id": "run-ans-2", "written_as": ANS2_SEQ}),
        (ANS2_SEQ, {"kind": "manifest", "answer_id": "ans-1", "run_id": "run-ans-1", "written_as": ANS1_SEQ}),
    ]
    assert [f.record for f in only(report, "checkpoint_root_mismatch")] == [
        {"checkpoint": LAST_CHECKPOINT, "size": 6, "first_seq": 3, "last_seq": 5}
    ]
    assert {f.seq for f in only(report, "view_row_missing_or_altered")} == {ANS1_SEQ, ANS2_SEQ}


def test_entry_appended_without_a_checkpoint(tv: Case) -> None:
    data = entry_bytes(tv, ANS2_SEQ)
    tv.vault.con.execute("INSERT INTO log VALUES (6, 'manifest', ?, ?)", [data, leaf_hash(data)])
    # An uncovered tail is never signed over: unlock refuses, and says why ...
    with pytest.raises(TrustError, match="past the latest signed checkpoint"):
        tv.session("ines", read_only=True)
    # ... and forensic inspection pins it.
    report = run_verify(tv, forensic=True)
    assert [(f.kind, f.seq) for f in report.findings if f.kind.startswith("entry_")] == [
        ("entry_out_of_place", 6),
        ("entry_not_checkpointed", 6),
    ]
    assert only(report, "entry_out_of_place")[0].record["answer_id"] == "ans-2"


# -- views ---------------------------------------------------------------------------------


def test_view_row_edited(tv: Case) -> None:
    tv.vault.con.execute("UPDATE v_passages SET doc_revision = 'Z' WHERE answer_id = 'ans-1'")
    report = run_verify(tv)
    rec = {"table": "v_passages", "answer_id": "ans-1", "passage_id": "p1", "document_id": "refund"}
    assert [(f.kind, f.seq, f.record) for f in report.findings] == [
        ("view_row_altered_or_extra", ANS1_SEQ, rec),
        ("view_row_missing_or_altered", ANS1_SEQ, rec),
    ]
    assert '"doc_revision": "Z"' in report.findings[0].detail


def test_view_row_deleted(tv: Case) -> None:
    tv.vault.con.execute("DELETE FROM v_answers WHERE answer_id = 'ans-2'")
    report = run_verify(tv)
    assert [(f.kind, f.seq, f.record) for f in report.findings] == [
        (
            "view_row_missing_or_altered",
            ANS2_SEQ,
            {"table": "v_answers", "answer_id": "ans-2", "run_id": "run-ans-2"},
        )
    ]
    # the deleted row no longer hides the answer: the table is derived again from the log
    s = tv.session("ines", read_only=True)
    assert Tracer(s).trace("ans-2").answer_id == "ans-2"
    assert any("v_answers" in w for w in s.vault.views.warnings)
    s.close()


def test_view_pointing_an_answer_at_another_entry_is_refused(tv: Case) -> None:
    tv.vault.con.execute("UPDATE v_answers SET seq = ? WHERE answer_id = 'ans-1'", [ANS2_SEQ])
    s = tv.session("ines", read_only=True)
    # the row is found against the signed commitment and derived again: ans-1's own record
    assert Tracer(s).trace("ans-1").answer_id == "ans-1"
    report = verify(s.vault, s)
    s.close()
    assert {f.kind for f in report.findings} == {"view_row_altered_or_extra", "view_row_missing_or_altered"}


# -- whole vault replaced --------------------------------------------------------------------


def _remember(path: Path, case: Case) -> Session:
    return unlock(path, case.investigators["ines"], trust=TrustStore())


def test_vault_replaced_by_an_older_copy(tv: Case, tmp_path: Path) -> None:
    tv.vault.close()  # DuckDB shares one instance per file within a process
    s = _remember(tv.path, tv)  # this machine now remembers the vault
    old_size, old_root = s.status.checkpoint_size, s.status.checkpoint_root
    s.close()
    backup = tmp_path / "old-copy"
    shutil.copytree(tv.path, backup)
    tv.reopen()
    rev = revision("refund", "B", DOC.replace("thirty", "fourteen"), "2026-03-01T00:00:00Z")
    assert tv.ingest(rev).ok
    tv.vault.close()
    s = _remember(tv.path, tv)
    new_size, new_root = s.status.checkpoint_size, s.status.checkpoint_root
    s.close()
    assert new_size > old_size
    shutil.rmtree(tv.path)
    shutil.copytree(backup, tv.path)
    with pytest.raises(TrustError) as err:
        _remember(tv.path, tv)
    msg = str(err.value)
    assert "ROLLBACK" in msg
    assert f"size {new_size}" in msg and new_root[:16] in msg
    assert f"size {old_size}" in msg and old_root[:16] in msg
    s = unlock(tv.path, tv.investigators["ines"], trust=TrustStore(), forensic=True, read_only=True)
    try:
        assert s.status.forensic and "ROLLBACK" in s.status.forensic_reason
        assert verify(s.vault, s).ok  # the old copy is internally consistent: only the memory catches it
    finally:
        s.close()


def test_forked_history_with_the_same_origin(tv: Case, tmp_path: Path) -> None:
    tv.vault.close()  # DuckDB shares one instance per file within a process
    s = _remember(tv.path, tv)
    seen = s.status.checkpoint_size
    s.close()
    other = new_case(tmp_path / "fork")  # same custodian, same origin, different history
    rev = revision("refund", "A", DOC.replace("thirty", "sixty"), "2026-01-05T00:00:00Z")
    assert other.ingest(rev, revision("other", "1", "# Other\n\nText.\n", T0)).ok
    for i in range(3):
        assert other.ingest(revision("other", f"x{i}", f"# Other\n\nText {i}.\n", T0)).ok
    assert other.vault.size() > seen
    other.close()
    shutil.rmtree(tv.path)
    shutil.copytree(other.path, tv.path)
    with pytest.raises(TrustError) as err:
        _remember(tv.path, tv)
    assert "FORK" in str(err.value) and f"size {seen}" in str(err.value)
    s = unlock(tv.path, tv.investigators["ines"], trust=TrustStore(), forensic=True, read_only=True)
    assert s.status.forensic and "FORK" in s.status.forensic_reason
    s.close()


def test_report_json_is_the_documented_shape(tv: Case) -> None:
    tv.vault.con.execute("UPDATE v_passages SET doc_revision = 'Z' WHERE answer_id = 'ans-1'")
    doc = json.loads(json.dumps(run_verify(tv).to_json()))
    assert set(doc) == {
        "ok",
        "computed_at",
        "viewer",
        "mode",
        "verified_from",
        "warnings",
        "checkpoint",
        "counts",
        "findings",
    }
    assert doc["ok"] is False
    for f in doc["findings"]:
        assert set(f) == {"kind", "seq", "record", "detail"}
    assert canonical(doc)  # JCS-serializable: plain JSON types only


def test_signed_statement_reused_under_another_kind(tv: Case) -> None:
    """A custodian-signed grant pasted into the revision entry: the signature is valid, the kind is not."""
    grant = json.loads(entry_bytes(tv, 2))
    body = json.loads(entry_bytes(tv, REV_SEQ))
    body["envelope"] = grant["envelope"]
    set_entry(tv, REV_SEQ, canonical(body), fix_leaf=True)
    report = run_verify(tv, forensic=True)
    (f,) = only(report, "entry_kind_mismatch")
    assert f.seq == REV_SEQ and f.record == {"kind": "revision"}
    assert "reused under another kind" in f.detail


def test_revoked_investigator_cannot_sign_later_entries(tv: Case) -> None:
    ines = tv.investigators["ines"]
    seq = admin.revoke_investigator(tv.vault, tv.custodian, ines.key_id, "2026-06-02T00:00:00Z")
    # The store refuses to let a revoked key sign anything ...
    with pytest.raises(AccessDeniedError, match="neither the custodian's nor an active"):
        with tv.vault.batch(ines) as b:
            b.append(
                Statement(
                    EntryKind.ACCESS, {"action": "open", "target": "", "at": "2026-06-03T00:00:00Z"}, ines
                )
            )
    # ... so the attacker, who still holds ines's key and the file, writes rows by hand.
    forged = seq + 1
    stmt = Statement(EntryKind.ACCESS, {"action": "open", "target": "", "at": "2026-06-03T00:00:00Z"}, ines)
    assert append_by_hand(tv, stmt, checkpoint_signer=ines) == forged
    report = structural(tv)
    assert [(f.kind, f.seq) for f in report.findings] == [
        ("signature_invalid", forged),
        ("checkpoint_signature_invalid", None),
    ]
    assert report.findings[1].record == {"checkpoint": LAST_CHECKPOINT + 2, "size": forged + 1}


def test_forged_manifest_without_required_fields_is_reported_not_crashed(tv: Case) -> None:
    body = json.loads(entry_bytes(tv, ANS2_SEQ))
    payload = json.loads(base64.b64decode(body["envelope"]["payload"]))
    del payload["passages"]
    body["envelope"]["payload"] = base64.b64encode(canonical(payload)).decode()
    set_entry(tv, ANS2_SEQ, canonical(body), fix_leaf=True)
    s = tv.session("ines", read_only=True, forensic=True)
    try:
        with pytest.raises(DamagedEntryError, match="fails its signature"):
            Tracer(s).trace("ans-2")
        by_id = {a.row.answer_id: a.summary for a in revalidate(s).answers}
        report = verify(s.vault, s)
    finally:
        s.close()
    assert (by_id["ans-2"].integrity, by_id["ans-2"].reasons) == ("signature_invalid", ("entry_damaged",))
    assert by_id["ans-1"].integrity == "intact"
    assert ("signature_invalid", ANS2_SEQ) in [(f.kind, f.seq) for f in report.findings]
    assert ("entry_malformed", ANS2_SEQ) in [(f.kind, f.seq) for f in report.findings]


# -- batched reads -----------------------------------------------------------------------------


def test_read_texts_agrees_with_read_text_on_every_state(tv: Case) -> None:
    """One batched read gives exactly the verdicts of one read_text per digest."""
    from tracer.engine.evidence import read_text, read_texts

    intact = sha256_hex(SECOND.encode())
    flipped = sha256_hex(MODEL_INPUT_1.encode())
    forged = sha256_hex(FIRST.encode())
    gone = sha256_hex(b"Five business days.")
    purged = sha256_hex(DOC.encode())
    ((_c, _k, _n, ct),) = tv.vault.blobs.rows(flipped)
    tv.vault.con.execute(
        "UPDATE blobs SET ct = ? WHERE digest = ?", [ct[:5] + bytes([ct[5] ^ 1]) + ct[6:], flipped]
    )
    ((coll, dk_id, _n, _ct),) = tv.vault.blobs.rows(forged)
    key = DataKeys(tv.vault, tv.custodian).keys[dk_id]
    nonce, ct2 = aead_encrypt(key, b"ninety days", f"{forged}\n{coll}".encode())
    tv.vault.con.execute("UPDATE blobs SET nonce = ?, ct = ? WHERE digest = ?", [nonce, ct2, forged])
    tv.vault.con.execute("DELETE FROM blobs WHERE digest = ?", [gone])
    admin.purge(tv.vault, tv.custodian, purged, "retention", "test", "legal", T0)
    absent = "0" * 64
    items = [
        (intact, "support"),
        (flipped, "support"),
        (forged, "support"),
        (gone, "support"),
        (purged, "support"),
        (absent, "support"),
        (intact, "legal"),  # same digest again: the first pair decides
        ("1" * 64, "legal"),
    ]
    expected_states = {
        intact: "intact",
        flipped: "checksum_mismatch",
        forged: "checksum_mismatch",
        gone: "missing",
        purged: "purged",
        absent: "missing",
    }
    tv.grant("omar", ["ops"])
    for who, scoped in (("ines", {}), ("omar", dict.fromkeys(expected_states, "unavailable"))):
        s = tv.session(who, read_only=True)
        try:
            many = read_texts(s, items)
            assert many == s.texts(items)
            assert set(many) == {d for d, _c in items}
            for digest, collection in dict(reversed(items)).items():
                assert many[digest] == read_text(s, digest, collection), (who, digest)
            for digest, state in expected_states.items():
                assert many[digest].state == scoped.get(digest, state), (who, digest)
            assert many[intact].text == (None if scoped else SECOND)
            assert many["1" * 64].state == ("missing" if not scoped else "unavailable")
        finally:
            s.close()
    # a copy with no data key for the reader: present but unreadable
    tv.reopen()
    tv.vault.con.execute("DELETE FROM data_keys WHERE recipient = ?", [tv.investigators["ines"].key_id])
    s = tv.session("ines", read_only=True)
    try:
        many = read_texts(s, [(intact, "support")])
        assert many[intact] == read_text(s, intact, "support")
        assert many[intact].state == "unavailable" and "no data key" in many[intact].detail
    finally:
        s.close()


def test_views_compared_range_by_range_find_the_same_rows(tv: Case, monkeypatch: pytest.MonkeyPatch) -> None:
    """compare_views works one seq range at a time; ranges of one seq change nothing."""
    from store import audit

    tv.vault.con.execute("UPDATE v_passages SET doc_revision = 'Z' WHERE answer_id = 'ans-1'")
    tv.vault.con.execute("DELETE FROM v_answers WHERE answer_id = 'ans-2'")
    tv.vault.con.execute("INSERT INTO v_deletions VALUES (-7, 'refund', '2026-01-01T00:00:00Z', 'forged')")
    whole = [(f.kind, f.seq, f.record, f.detail) for f in run_verify(tv).findings]
    monkeypatch.setattr(audit, "_COMPARE", 1)
    ranged = [(f.kind, f.seq, f.record, f.detail) for f in run_verify(tv).findings]
    assert ranged == whole
    assert [k for k, *_ in whole].count(FindingKind.VIEW_ROW_ALTERED_OR_EXTRA) == 2  # v_passages, v_deletions
    assert ("view_row_altered_or_extra", -7) in [(k, s) for k, s, *_ in whole]


def test_views_rebuilt_range_by_range_never_exist_whole(tv: Case, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each seq range is derived, compared and dropped before the next: the rebuilt
    views never hold rows of two ranges, and stored rows in ranges the log has no entry
    in (negative seqs, beyond the log) are still reported, in seq order."""
    from store import audit

    tv.vault.con.execute("UPDATE v_passages SET doc_revision = 'Z' WHERE answer_id = 'ans-1'")
    for seq in (-7, 999999):
        tv.vault.con.execute(
            "INSERT INTO v_deletions VALUES (?, 'refund', '2026-01-01T00:00:00Z', 'forged')", [seq]
        )
    whole = [(f.kind, f.seq, f.record, f.detail) for f in run_verify(tv).findings]
    seen: list[tuple[int, int, int]] = []
    close = audit._Ranges.close

    def spy(self: Any, lo: int, rows: Any) -> None:
        close(self, lo, rows)
        after = self.vault.query("SELECT count(*) FROM temp.r_v_digests")[0][0]
        seen.append((lo, len(self.done), int(after)))

    monkeypatch.setattr(audit, "_COMPARE", 2)
    monkeypatch.setattr(audit._Ranges, "close", spy)
    s = tv.session("ines", read_only=True)
    try:
        ranged = [(f.kind, f.seq, f.record, f.detail) for f in verify(s.vault, s).findings]
    finally:
        s.close()
    assert ranged == whole
    assert len(seen) >= 3 and all(after == 0 for _lo, _n, after in seen)  # dropped after each range
    assert [lo for lo, *_ in seen] == sorted({lo for lo, *_ in seen})
    extra = [
        s for k, s, rec, _d in whole if k == "view_row_altered_or_extra" and rec["table"] == "v_deletions"
    ]
    assert extra == [-7, 999999]


def test_key_added_in_a_row_labelled_manifest_is_checked_the_same_by_workers(tv: Case) -> None:
    """Workers check runs of manifest rows against the keyring as it stood when the run
    was handed out.  A key_add relabelled as a manifest changes the keyring inside such a
    run, so every later run in flight must be checked again: the findings must be those
    of a one-by-one pass (the relabelling is reported, the new key's manifest verifies)."""
    from store.crypto import Identity

    second = Identity.from_seed("producer-2", b"producer-2")
    seq = admin.add_producer_key(tv.vault, tv.custodian, second.public, T0)
    rev = revision("refund", "B", DOC, "2026-01-06T00:00:00Z")
    ans = manifest("ans-3", "Thirty days.", [passage(rev, "thirty", "p3")])
    assert tv.ingest(rev, signed(tv, ans, second)).ok
    tv.vault.con.execute("UPDATE log SET kind = 'manifest' WHERE seq = ?", [seq])
    # unlock refuses the relabelled roster row; forensic inspection pins it
    with pytest.raises(TrustError, match="entry_out_of_place"):
        tv.session("ines", read_only=True)
    report = run_verify(tv, forensic=True)
    assert [(f.kind, f.seq) for f in report.findings] == [("entry_kind_mismatch", seq)]
    assert "signature_invalid" not in kinds(report)


# -- replayed statements (both ways: in-process and with workers) ----------------------------


def _stored(case: Case, seq: int) -> bytes:
    return bytes(row(case, "SELECT entry FROM log WHERE seq = ?", seq)[0])


def test_replayed_grant_is_out_of_place_both_ways(tv: Case) -> None:
    omar = tv.grant("omar", ["support"])
    grant = tv.vault.size() - 1
    admin.revoke_investigator(tv.vault, tv.custodian, omar.key_id, "2026-06-02T00:00:00Z")
    seq = append_by_hand(tv, LogEntry.from_bytes(_stored(tv, grant)))
    report = run_verify(tv, forensic=True)
    assert [(f.kind, f.seq) for f in report.findings if f.seq == seq] == [
        ("statement_out_of_place", seq),
        ("entry_not_checkpointed", seq),
    ]


def test_replayed_key_add_is_out_of_place_both_ways(tv: Case) -> None:
    admin.revoke_producer_key(tv.vault, tv.custodian, tv.producer.key_id, "2026-06-02T00:00:00Z")
    seq = append_by_hand(tv, LogEntry.from_bytes(_stored(tv, 1)), checkpoint_signer=tv.custodian)
    report = run_verify(tv, forensic=True)
    assert [(f.kind, f.seq) for f in report.findings] == [("statement_out_of_place", seq)]
