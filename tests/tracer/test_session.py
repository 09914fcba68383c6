"""Authorized investigators: unlock, refusals, scopes, access log, encryption at rest."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from store import admin, queries
from store.crypto import Identity, load_identity
from store.errors import AccessDeniedError, KeyFileError
from store.keyring import DataKeys
from tests.helpers import PASSPHRASE, Case, manifest, new_case, passage, revision, signed
from tracer.engine.serialize import trace_json
from tracer.engine.session import unlock
from tracer.engine.trace import Tracer
from tracer.engine.trust import Seen, TrustError, TrustStore

PUBLIC = "# FAQ\n\n## Shipping\n\nOrders ship within two business days from our Leeds warehouse.\n"
SECRET = "# Draft settlement\n\n## Terms\n\nNorthstar will pay the claimant four hundred thousand euros.\n"


def _build(tmp_path: Path) -> Case:
    c = new_case(tmp_path / "vault", {"ines": ["*"], "omar": ["support"]})
    faq = revision("faq", "1", PUBLIC, "2026-01-02T00:00:00Z")
    draft = revision(
        "settlement", "1", SECRET, "2026-01-03T00:00:00Z", collection="legal", title="Settlement draft"
    )
    note_text = "Shipping takes two days; the settlement is four hundred thousand euros."
    note = manifest(
        "note-1",
        note_text,
        [passage(faq, "two business days", "p-faq"), passage(draft, "four hundred", "p-legal", rank=2)],
        collection="legal",
        kind="note",
    )
    mem = {
        **passage(faq, "two business days", "p-note"),
        "retrieved_text": note_text,
        "derived_from": "note-1",
        "document": {"document_id": "memory", "uri": "memory://note-1", "revision": "1", "backend": "memory"},
    }
    ans = manifest("ans-note", "It ships in two days.", [mem], lineage=["note-1"])
    plain = manifest("ans-faq", "Orders ship within two business days.", [passage(faq, "two business days")])
    report = c.ingest(faq, draft, signed(c, note), signed(c, ans), signed(c, plain))
    assert report.ok, report.to_json()
    return c


def test_unknown_investigator_is_refused_without_evidence(tmp_path: Path) -> None:
    c = _build(tmp_path)
    c.vault.close()
    stranger = Identity.from_seed("mallory", b"mallory")
    with pytest.raises(AccessDeniedError, match="not an investigator"):
        unlock(c.path, stranger, trust=TrustStore())


def test_revoked_investigator_is_refused(tmp_path: Path) -> None:
    c = _build(tmp_path)
    admin.revoke_investigator(c.vault, c.custodian, c.investigators["omar"].key_id, "2026-07-01T00:00:00Z")
    c.vault.close()
    with pytest.raises(AccessDeniedError, match="revoked at 2026-07-01"):
        unlock(c.path, c.investigators["omar"], trust=TrustStore())


def test_wrong_passphrase_is_refused(tmp_path: Path) -> None:
    ident = Identity.from_seed("ines", b"ines")
    key, _pub = ident.save(tmp_path / "keys", PASSPHRASE)
    with pytest.raises(KeyFileError, match="wrong passphrase"):
        load_identity(key, b"not it")
    assert load_identity(key, PASSPHRASE).key_id == ident.key_id


def test_revocation_rotates_keys_for_new_content(tmp_path: Path) -> None:
    c = _build(tmp_path)
    omar = c.investigators["omar"]
    admin.revoke_investigator(c.vault, c.custodian, omar.key_id, "2026-07-01T00:00:00Z")
    later = revision("faq", "2", PUBLIC + "\nNew paragraph after the revocation.\n", "2026-08-01T00:00:00Z")
    assert c.ingest(later).ok
    keys = DataKeys(c.vault, omar)
    new_digest = queries.revisions_of(c.vault, "faq")[-1].content_sha256
    assert keys.decrypt(new_digest) is None


def test_scopes_hide_restricted_evidence_and_inherit_through_lineage(tmp_path: Path) -> None:
    c = _build(tmp_path)
    s = c.session("omar")
    tr = Tracer(s)
    t = tr.trace("ans-note")
    assert t.currency == "unavailable"
    assert all(ci.currency == "unavailable" for ci in t.citations)
    dumped = json.dumps(trace_json(t))
    for leak in ("four hundred", "Settlement draft", "settlement.md", "Terms"):
        assert leak not in dumped
    note = tr.trace("note-1")
    assert not note.visible and note.answer.text is None
    assert tr.trace("ans-faq").currency == "verified"
    s.close()
    s = c.session("ines")
    t = Tracer(s).trace("ans-note")
    assert t.currency != "unavailable"
    assert t.lineage[0].answer_id == "note-1"
    s.close()


def test_access_entries_are_signed_and_listed(tmp_path: Path) -> None:
    c = _build(tmp_path)
    s = c.session("ines")
    Tracer(s).trace("ans-faq")
    rows = queries.access_rows(s.vault)
    actions = [(r.investigator, r.action, r.target) for r in rows]
    ines = c.investigators["ines"].key_id
    assert (ines, "open_answer", "ans-faq") in actions
    assert (ines, "unlock", "") in actions
    from tracer.engine.verify import verify

    report = verify(s.vault, s)
    assert report.ok, [f.to_json() for f in report.findings]
    s.close()


def test_plaintext_is_not_in_the_vault_file(tmp_path: Path) -> None:
    c = _build(tmp_path)
    c.vault.close()
    data = b"".join(p.read_bytes() for p in c.path.iterdir() if p.is_file())
    for sentence in ("Leeds warehouse", "four hundred thousand euros", "It ships in two days"):
        assert sentence.encode() not in data


def test_rollback_is_refused_and_forensic_opens_labelled(tmp_path: Path) -> None:
    import shutil

    c = _build(tmp_path)
    c.vault.close()
    old = tmp_path / "old-copy"
    shutil.copytree(c.path, old)
    s = unlock(c.path, c.investigators["ines"], trust=TrustStore())
    seen = s.status.checkpoint_size
    s.close()
    shutil.rmtree(c.path)
    shutil.copytree(old, c.path)
    with pytest.raises(TrustError, match=rf"ROLLBACK: this machine last saw size {seen}"):
        unlock(c.path, c.investigators["ines"], trust=TrustStore())
    before = (c.path / "vault.duckdb").read_bytes()
    s = unlock(c.path, c.investigators["ines"], trust=TrustStore(), forensic=True)
    assert s.status.forensic and "ROLLBACK" in s.status.forensic_reason
    size = s.vault.size()
    Tracer(s).trace("ans-faq")
    assert s.vault.size() == size, "a forensic session must not extend the suspect tree"
    assert s.status.journal is not None and s.status.journal.exists()
    s.close()
    last = TrustStore().last_seen("tracer.test/vault", c.investigators["ines"].key_id)
    assert last is not None and last.size == seen
    assert before


def test_changed_custodian_is_a_loud_refusal(tmp_path: Path) -> None:
    c = _build(tmp_path)
    c.vault.close()
    unlock(c.path, c.investigators["ines"], trust=TrustStore()).close()
    store = TrustStore()
    data = json.loads(store.path.read_text())
    data["tracer.test/vault"]["custodian"] = "00" * 32
    store.path.write_text(json.dumps(data))
    with pytest.raises(TrustError, match="CUSTODIAN KEY CHANGED"):
        unlock(c.path, c.investigators["ines"], trust=TrustStore())


def test_fork_is_refused(tmp_path: Path) -> None:
    c = _build(tmp_path)
    c.vault.close()
    s = unlock(c.path, c.investigators["ines"], trust=TrustStore())
    size, root = s.status.checkpoint_size, s.status.checkpoint_root
    s.close()
    TrustStore().remember("tracer.test/vault", c.investigators["ines"].key_id, Seen(size - 1, "ab" * 32, "t"))
    with pytest.raises(TrustError, match="FORK"):
        unlock(c.path, c.investigators["ines"], trust=TrustStore())
    assert root


def test_read_only_vault_journals_access(tmp_path: Path) -> None:
    c = _build(tmp_path)
    c.vault.close()
    s = unlock(c.path, c.investigators["ines"], trust=TrustStore(), read_only=True)
    assert s.status.journal is not None
    Tracer(s).trace("ans-faq")
    lines = s.status.journal.read_text().splitlines()
    assert [json.loads(x)["entry"]["kind"] for x in lines] == ["access", "access"]
    from tracer.engine.journal import read_journal

    entries = read_journal(s.vault)
    assert [(e.investigator, e.action, e.signature) for e in entries] == [
        ("ines", "unlock", "valid"),
        ("ines", "open_answer", "valid"),
    ]
    forged = json.loads(lines[1])
    sig = bytearray(base64.b64decode(forged["entry"]["envelope"]["signatures"][0]["sig"]))
    sig[0] ^= 0x01
    forged["entry"]["envelope"]["signatures"][0]["sig"] = base64.b64encode(bytes(sig)).decode()
    with s.status.journal.open("a") as fh:
        fh.write(json.dumps(forged) + "\n")
    assert read_journal(s.vault)[-1].signature == "signature_invalid"
    s.close()


def test_historical_authorization_is_data_not_a_grant(tmp_path: Path) -> None:
    c = _build(tmp_path)
    s = c.session("omar")
    t = Tracer(s).trace("ans-faq")
    assert t.authorization["principal"] == "agent:helpdesk"
    assert "legal" not in s.scopes
    s.close()


def test_new_case_helper_is_isolated(tmp_path: Path) -> None:
    c = new_case(tmp_path / "v2")
    assert c.vault.size() >= 3
    c.close()
