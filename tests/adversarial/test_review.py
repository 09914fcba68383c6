"""Security review: an attacker who can write the vault file and TRACER_HOME but holds no
key, and a revoked investigator who kept their old key.  Each test asserts the SAFE
behaviour; a test marked xfail(strict) documents a hole that is still open."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

import duckdb
import pytest

from store import admin, queries
from store.casefile import load_casefile
from store.crypto import b64e, sha256_hex
from store.entries import STATEMENT_TYPE, EntryKind, Statement
from store.errors import StoreError, VaultError
from tests.case.world import build_world
from tests.cli.conftest import World
from tests.helpers import Case, append_by_hand, manifest, passage, revision, signed
from tracer.engine.case import CaseDesk
from tracer.engine.session import RevokedInvestigatorError
from tracer.engine.trust import TrustError
from tracer.engine.verify import verify

LATER = "2026-06-01T00:00:00Z"
NOW = "2026-07-01T12:00:00Z"


def _relabel(case: Case, seq: int, kind: str) -> None:
    """Rewrite the `kind` column of one log row (not covered by the leaf hash)."""
    case.vault.con.execute("UPDATE log SET kind = ? WHERE seq = ?", [kind, seq])
    case.reopen()


def _kinds(case: Case, who: str = "ines", full: bool = True) -> list[str]:
    s = case.session(who, read_only=True, forensic=True)
    try:
        return [f.kind for f in verify(s.vault, s, full=full).findings]
    finally:
        s.close()
        case.reopen()


# -- the kind column ----------------------------------------------------------------------


def test_relabelled_revocation_does_not_let_the_revoked_investigator_in(case: Case) -> None:
    omar = case.grant("omar", ["support"])
    revoke = admin.revoke_investigator(case.vault, case.custodian, omar.key_id, LATER)
    _relabel(case, revoke, "access")
    with pytest.raises((RevokedInvestigatorError, TrustError)):
        s = case.session("omar")
        s.close()


def test_relabelled_revocation_is_reported_by_verify(case: Case) -> None:
    omar = case.grant("omar", ["support"])
    revoke = admin.revoke_investigator(case.vault, case.custodian, omar.key_id, LATER)
    _relabel(case, revoke, "access")
    assert "entry_kind_mismatch" in _kinds(case)


def test_relabelled_producer_revocation_lets_no_late_manifest_in(case: Case) -> None:
    revoke = admin.revoke_producer_key(
        case.vault, case.custodian, case.producer.key_id, "2026-03-01T00:00:00Z"
    )
    _relabel(case, revoke, "access")
    rev = revision("refund", "A", "Refunds within thirty days.\n", "2026-01-05T00:00:00Z")
    late = manifest("ans-late", "Thirty days.", [passage(rev, "thirty")], generated_at="2026-04-01T00:00:00Z")
    try:
        case.ingest(rev, signed(case, late))
    except StoreError:
        pass
    assert case.reopen().query("SELECT count(*) FROM v_answers WHERE answer_id = 'ans-late'") == [(0,)]


def test_relabelled_hold_still_blocks_a_purge(tmp_path: Path) -> None:
    world = build_world(tmp_path)
    s = world.session("ines")
    hold = CaseDesk(s).hold("document", "runbook", "litigation")
    s.close()
    c = world.case
    c.reopen()
    _relabel(c, hold, "access")
    with pytest.raises(VaultError, match=r"under legal hold|legal hold entry"):
        admin.purge(c.vault, c.custodian, world.runbook_digest, "retention", "expired", "dpo", NOW)
    c.close()


def test_revoked_investigators_case_note_never_counts_after_a_relabel(tmp_path: Path) -> None:
    world = build_world(tmp_path)
    c = world.case
    s = world.session("ines")
    CaseDesk(s).open_case("INC-7", "t", "p")
    s.close()
    c.reopen()
    pat = c.investigators["pat"]
    revoke = admin.revoke_investigator(c.vault, c.custodian, pat.key_id, LATER)
    _relabel(c, revoke, "access")
    try:
        s = world.session("pat")
        CaseDesk(s).note("INC-7", "pat says: nothing to see here")
        s.close()
    except StoreError:
        pass
    c.reopen()
    assert not [n for n in load_casefile(c.vault).notes if "nothing to see" in n.text]
    c.close()


# -- derived views trusted where the log should be -----------------------------------------


SECRET = "Employees may claim up to 40 EUR per day.\n"


def _purged(case: Case) -> tuple[dict[str, object], str, list[tuple[object, ...]]]:
    """A text ingested, its ciphertext row kept (an old copy of the file), then purged."""
    rev = revision("travel", "A", SECRET, "2026-01-05T00:00:00Z")
    ps = passage(rev, "40 EUR")
    assert case.ingest(rev, signed(case, manifest("ans-1", "Forty euros.", [ps]))).ok
    digest = sha256_hex(str(ps["retrieved_text"]).encode())
    old = case.vault.con.execute("SELECT * FROM blobs WHERE digest = ?", [digest]).fetchall()
    admin.purge(case.vault, case.custodian, digest, "RET-6M", "superseded", "HR", "2026-05-01T00:00:00Z")
    return rev, digest, old


def test_purged_text_put_back_with_its_tombstone_view_row_deleted_is_never_shown(case: Case) -> None:
    _rev, digest, old = _purged(case)
    con = case.vault.con
    con.executemany("INSERT INTO blobs VALUES (?, ?, ?, ?, ?)", old)
    con.execute("DELETE FROM v_tombstones WHERE digest = ?", [digest])
    case.reopen()
    s = case.session()
    try:
        result = s.text(digest, "support")
        assert result.state == "purged" and result.text is None
    finally:
        s.close()


def test_ingest_never_stores_a_purged_text_even_with_its_tombstone_view_row_deleted(case: Case) -> None:
    rev, digest, _old = _purged(case)
    case.vault.con.execute("DELETE FROM v_tombstones WHERE digest = ?", [digest])
    case.reopen()
    case.ingest(signed(case, manifest("ans-2", "Forty euros again.", [passage(rev, "40 EUR")])))
    assert not queries.blob_present(case.vault, digest)


def test_purged_text_put_back_with_its_tombstone_view_row_deleted_is_reported(case: Case) -> None:
    _rev, digest, old = _purged(case)
    con = case.vault.con
    con.executemany("INSERT INTO blobs VALUES (?, ?, ?, ?, ?)", old)
    con.execute("DELETE FROM v_tombstones WHERE digest = ?", [digest])
    case.reopen()
    kinds = _kinds(case)
    assert "purged_blob_still_present" in kinds and "view_row_missing_or_altered" in kinds


def test_a_document_hold_survives_an_edited_revisions_view(tmp_path: Path) -> None:
    world = build_world(tmp_path)
    s = world.session("ines")
    CaseDesk(s).hold("document", "runbook", "litigation")
    s.close()
    c = world.case
    c.reopen()
    c.vault.con.execute("UPDATE v_revisions SET document_id = 'x' WHERE document_id = 'runbook'")
    c.vault.con.execute("UPDATE v_passages SET document_id = 'x' WHERE document_id = 'runbook'")
    c.reopen()
    with pytest.raises(VaultError, match="under legal hold"):
        admin.purge(c.vault, c.custodian, world.runbook_digest, "retention", "expired", "dpo", NOW)
    c.close()


def test_a_case_finding_survives_a_deleted_case_items_row(tmp_path: Path) -> None:
    world = build_world(tmp_path)
    c = world.case
    s = world.session("ines")
    CaseDesk(s).open_case("INC-7", "t", "p")
    s.case_id = "INC-7"
    seq = s.add_finding("ans-restart", "answer", "the answer ignores the settlement rule")
    s.close()
    c.reopen()
    assert [f.seq for f in load_casefile(c.vault).findings] == [seq]
    c.vault.con.execute("DELETE FROM v_case_items WHERE seq = ?", [seq])
    c.reopen()
    assert [f.seq for f in load_casefile(c.vault).findings] == [seq]
    c.close()


# -- hidden characters and tracebacks at the terminal ---------------------------------------

ESC = "\x1b]0;owned\x07\x1b[2J"


def _ines(w: World) -> list[str | Path]:
    return ["verify", w.vault, "--key", w.key("ines")]


def _con(w: World) -> duckdb.DuckDBPyConnection:
    return duckdb.connect(str(w.vault / "vault.duckdb"))


def _trust(w: World) -> Path:
    return Path(w.env["TRACER_HOME"]) / "known_vaults.json"


def _clean(text: str) -> bool:
    return "\x1b" not in text and "\x07" not in text and "Traceback" not in text


def test_a_hostile_pinned_custodian_name_never_reaches_the_terminal(vault_world: World) -> None:
    w = vault_world
    assert w.run(*_ines(w)).code == 0  # pins the custodian
    data = json.loads(_trust(w).read_text(encoding="utf-8"))
    data["tracer.test/cli"]["custodian"] = "0" * 64
    data["tracer.test/cli"]["custodian_name"] = ESC
    _trust(w).write_text(json.dumps(data), encoding="utf-8")
    r = w.run(*_ines(w))
    assert r.code == 2 and "CUSTODIAN KEY CHANGED" in r.err
    assert _clean(r.err), repr(r.err)


def test_a_hostile_remembered_origin_never_reaches_the_terminal(vault_world: World) -> None:
    w = vault_world
    assert w.run(*_ines(w)).code == 0
    data = json.loads(_trust(w).read_text(encoding="utf-8"))
    data["_paths"] = {k: ESC for k in data["_paths"]}
    _trust(w).write_text(json.dumps(data), encoding="utf-8")
    r = w.run(*_ines(w))
    assert "ORIGIN CHANGED" in r.err
    assert _clean(r.err), repr(r.err)


def test_a_hostile_access_view_row_never_reaches_the_terminal(vault_world: World) -> None:
    w = vault_world
    assert w.run(*_ines(w)).code == 0  # leaves access entries
    con = _con(w)
    con.execute("UPDATE v_access SET action = ?, at_time = ?", [ESC, ESC])
    con.close()
    r = w.run("access", w.vault)
    assert r.code == 0
    assert _clean(r.out), repr(r.out)


def _journal(w: World) -> Path:
    d = Path(w.env["TRACER_HOME"]) / "journal"
    d.mkdir(parents=True, exist_ok=True)
    return d / "tracer.test_cli.jsonl"


def _forged_line(payload: bytes) -> str:
    env = {
        "payload": b64e(payload),
        "payloadType": STATEMENT_TYPE,
        "signatures": [{"keyid": "00" * 32, "sig": b64e(bytes(64))}],
    }
    return json.dumps({"vault": "tracer.test/cli", "entry": {"envelope": env}}) + "\n"


def test_a_forged_journal_line_never_puts_escapes_on_the_terminal(vault_world: World) -> None:
    w = vault_world
    stmt = {"statement": {"action": ESC, "target": "x", "at": ESC}, "type": "access"}
    _journal(w).write_text(_forged_line(json.dumps(stmt).encode()), encoding="utf-8")
    r = w.run("access", w.vault)
    assert r.code == 0 and "SIGNATURE_INVALID" in r.out
    assert _clean(r.out), repr(r.out)


def test_a_journal_line_with_a_garbage_payload_is_no_traceback(vault_world: World) -> None:
    w = vault_world
    _journal(w).write_text(_forged_line(b"not json"), encoding="utf-8")
    r = w.run("access", w.vault)
    assert r.code in (0, 2) and "Traceback" not in r.err, r.err


def test_a_damaged_custodian_key_in_meta_is_a_plain_refusal(vault_world: World) -> None:
    w = vault_world
    con = _con(w)
    con.execute("UPDATE meta SET value = '!!not base64!!' WHERE key = 'custodian_ed25519'")
    con.close()
    r = w.run(*_ines(w))
    assert r.code == 2 and "Traceback" not in r.err, r


@pytest.mark.parametrize(("column", "value"), [("custodian_x25519", "AAAA"), ("custodian_name", "ines")])
def test_edited_custodian_metadata_is_not_a_clean_verify(vault_world: World, column: str, value: str) -> None:
    w = vault_world
    con = _con(w)
    con.execute("UPDATE meta SET value = ? WHERE key = ?", [value, column])
    con.close()
    r = w.run(*_ines(w))
    assert r.code in (1, 2) and "Traceback" not in r.err, r


def _entry0(w: World, payload: bytes | None, raw: bytes | None = None) -> None:
    if raw is None:
        assert payload is not None
        env = {
            "payload": b64e(payload),
            "payloadType": STATEMENT_TYPE,
            "signatures": [{"keyid": "00" * 32, "sig": b64e(bytes(64))}],
        }
        raw = json.dumps({"envelope": env, "kind": "vault_init", "seq": 0}).encode()
    con = _con(w)
    con.execute("UPDATE log SET entry = ? WHERE seq = 0", [raw])
    con.close()


_ENTRY0 = pytest.mark.parametrize(
    ("label", "payload", "raw"),
    [
        ("payload not JSON", b"not json", None),
        ("custodian without a name", json.dumps({"statement": {"custodian": {}}}).encode(), None),
        (
            "custodian key not base64",
            json.dumps({"statement": {"custodian": {"name": "c", "ed25519": "!", "x25519": "!"}}}).encode(),
            None,
        ),
        ("entry not JSON", None, b"\xff\xfe garbage"),
    ],
)


@_ENTRY0
def test_a_damaged_entry_zero_is_a_plain_refusal_at_unlock(
    vault_world: World, label: str, payload: bytes | None, raw: bytes | None
) -> None:
    w = vault_world
    _entry0(w, payload, raw)
    r = w.run(*_ines(w))
    assert r.code == 2 and "Traceback" not in r.err, (label, r.err)


@_ENTRY0
def test_a_damaged_entry_zero_is_found_by_structural_verify_and_access(
    vault_world: World, label: str, payload: bytes | None, raw: bytes | None
) -> None:
    w = vault_world
    _entry0(w, payload, raw)
    cmds: list[list[str | Path]] = [["verify", w.vault, "--structural-only"], ["access", w.vault]]
    for cmd in cmds:
        r = w.run(*cmd)
        assert r.code in (0, 1, 2) and "Traceback" not in r.err, (label, cmd, r.err)


# -- incremental verification from a receipt -----------------------------------------------


def _clean_receipt(case: Case) -> None:
    """A clean verification by ines, which leaves her signed receipt."""
    rev = revision("refund", "A", "Refunds within thirty days.\n", "2026-01-05T00:00:00Z")
    ps = passage(rev, "thirty")
    assert case.ingest(rev, signed(case, manifest("ans-1", "Thirty days.", [ps]))).ok
    s = case.session()
    try:
        report = verify(s.vault, s)
        assert report.ok, report.to_json()
    finally:
        s.close()
        case.reopen()
    assert list(_receipts())


def _receipts() -> list[Path]:
    return sorted((Path(os.environ["TRACER_HOME"]) / "receipts").rglob("*.json"))


def _incremental(case: Case) -> tuple[bool, str, list[str]]:
    s = case.session()
    try:
        report = verify(s.vault, s)
        return report.ok, report.mode, [f.kind for f in report.findings]
    finally:
        s.close()
        case.reopen()


def test_incremental_verify_catches_an_edited_view_row_of_a_covered_entry(case: Case) -> None:
    _clean_receipt(case)
    case.vault.con.execute("UPDATE v_answers SET producer_system = 'someone-else' WHERE answer_id = 'ans-1'")
    case.reopen()
    ok, _mode, kinds = _incremental(case)
    assert not ok and "view_row_altered_or_extra" in kinds


def test_incremental_verify_catches_a_relabelled_covered_row(case: Case) -> None:
    _clean_receipt(case)
    seq = int(case.vault.query("SELECT max(seq) FROM v_access")[0][0])
    _relabel(case, seq, "finding")
    ok, _mode, kinds = _incremental(case)
    assert not ok and "entry_kind_mismatch" in kinds


def test_incremental_verify_catches_swapped_ciphertexts_of_covered_texts(case: Case) -> None:
    _clean_receipt(case)
    con = case.vault.con
    rows = con.execute("SELECT digest, nonce, ct FROM blobs ORDER BY digest LIMIT 2").fetchall()
    (d1, n1, c1), (d2, n2, c2) = rows
    con.execute("UPDATE blobs SET nonce = ?, ct = ? WHERE digest = ?", [n2, c2, d1])
    con.execute("UPDATE blobs SET nonce = ?, ct = ? WHERE digest = ?", [n1, c1, d2])
    case.reopen()
    ok, _mode, kinds = _incremental(case)
    assert not ok and "checksum_mismatch" in kinds


def test_incremental_verify_catches_a_swap_of_covered_rows(case: Case) -> None:
    _clean_receipt(case)
    con = case.vault.con
    a, b = (
        con.execute("SELECT entry, leaf_hash, kind FROM log WHERE seq = ?", [q]).fetchall()[0] for q in (3, 4)
    )
    con.execute("UPDATE log SET entry = ?, leaf_hash = ?, kind = ? WHERE seq = 3", list(b))
    con.execute("UPDATE log SET entry = ?, leaf_hash = ?, kind = ? WHERE seq = 4", list(a))
    case.reopen()
    with pytest.raises(TrustError):
        case.session().close()
    case.reopen()
    kinds = _kinds(case, full=False)
    assert "checkpoint_root_mismatch" in kinds


def test_an_edited_receipt_is_ignored(case: Case) -> None:
    _clean_receipt(case)
    (receipt,) = _receipts()
    env = json.loads(receipt.read_text(encoding="utf-8"))
    body = json.loads(base64.b64decode(env["payload"]))
    body["size"] = 1
    env["payload"] = b64e(json.dumps(body).encode())
    receipt.write_text(json.dumps(env), encoding="utf-8")
    case.vault.con.execute("UPDATE v_answers SET producer_system = 'x'")
    case.reopen()
    s = case.session()
    try:
        report = verify(s.vault, s)
    finally:
        s.close()
        case.reopen()
    assert report.mode == "full" and any("signature" in w for w in report.warnings)
    assert not report.ok


def test_another_viewers_receipt_is_ignored(case: Case) -> None:
    omar = case.grant("omar", ["*"])
    _clean_receipt(case)
    (receipt,) = _receipts()
    receipt.rename(receipt.with_name(f"{omar.key_id}.json"))
    case.vault.con.execute("UPDATE v_answers SET producer_system = 'x'")
    case.reopen()
    s = case.session("omar")
    try:
        report = verify(s.vault, s)
    finally:
        s.close()
        case.reopen()
    assert report.mode == "full" and not report.ok


# -- scope --------------------------------------------------------------------------------


def test_verify_names_no_answer_outside_the_viewers_scope(tmp_path: Path) -> None:
    from tests.helpers import new_case

    c = new_case(tmp_path / "vault", {"omar": ["support"]})
    rd = revision(
        "brightwater", "D1", "# B\n\nThe amount is nine hundred.\n", "2026-01-05T00:00:00Z", "legal"
    )
    secret = manifest(
        "ans-brightwater",
        "Confidential.",
        [passage(rd, "nine hundred")],
        citations=[(0, 5, ["ghost-passage"])],
        collection="legal",
    )
    assert c.ingest(rd, signed(c, secret)).ok
    s = c.session("omar")
    try:
        report = verify(s.vault, s)
    finally:
        s.close()
        c.close()
    shown = json.dumps(report.to_json()["findings"])
    assert "brightwater" not in shown and "ghost-passage" not in shown


# -- checkpoints: nobody signs over rows they did not check; nobody is locked out ----------


def test_a_revoked_investigators_checkpoint_covers_nothing(case: Case) -> None:
    omar = case.grant("omar", ["support"])
    admin.revoke_investigator(case.vault, case.custodian, omar.key_id, LATER)
    stmt = Statement(EntryKind.ACCESS, {"action": "unlock", "target": "", "at": NOW}, omar)
    seq = append_by_hand(case, stmt, checkpoint_signer=omar)
    with pytest.raises(TrustError, match="no valid signature"):
        case.session("ines")
    case.reopen()
    kinds = _kinds(case)
    assert "signature_invalid" in kinds and "checkpoint_signature_invalid" in kinds, seq


def test_an_old_checkpoint_relabelled_to_the_new_size_covers_nothing(case: Case) -> None:
    note = case.vault.checkpoints()[-1].note
    stmt = Statement(
        EntryKind.ACCESS, {"action": "unlock", "target": "", "at": NOW}, case.investigators["ines"]
    )
    append_by_hand(case, stmt)
    size = case.vault.size()
    case.vault.con.execute(
        "INSERT INTO checkpoints SELECT max(id) + 1, ?, 'x', ? FROM checkpoints", [size, note]
    )
    case.reopen()
    with pytest.raises(TrustError):
        case.session("ines")


def test_junk_checkpoint_rows_lock_nobody_out(case: Case) -> None:
    size = case.vault.size()
    for n, note in enumerate(["garbage", "tracer.test/vault\n99\nAAAA\n\n— custodian AAAAAAAA\n"]):
        case.vault.con.execute(
            "INSERT INTO checkpoints SELECT max(id) + 1, ?, 'x', ? FROM checkpoints", [size + 5 * n, note]
        )
    case.reopen()
    s = case.session("ines")
    s.close()
    case.reopen()
