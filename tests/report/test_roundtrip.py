"""A freshly exported pack verifies offline, holds every file, and was recorded."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from store import queries
from tests.report.packs import ALL_IDS, Built, answer, export, report_of
from tracer.report import PAYLOAD_TYPE, SCHEMA_ID, verify_pack

FILES = {
    "report.json",
    "report.dsse.json",
    "report.md",
    "report.html",
    "lineage.prov.json",
    "checkpoint.note",
    "keys.json",
}


def test_pack_round_trip_verifies(pack: Path) -> None:
    assert {p.name for p in pack.iterdir()} == FILES
    v = verify_pack(pack)
    assert v.ok, [f.line() for f in v.failures]
    assert v.checked["report signature"] == 1
    assert v.checked["checkpoint signature"] == 1
    assert v.checked["inclusion proofs"] >= 6
    assert v.checked["manifest signatures"] >= 4
    assert v.checked["text digests"] >= 6
    assert v.checked["file digests"] == 5


def test_pack_verifies_after_the_vault_is_gone(built: Built, tmp_path: Path) -> None:
    pack = export(built, tmp_path / "pack")
    built.case.close()
    shutil.rmtree(built.case.path)
    moved = shutil.move(pack, tmp_path / "elsewhere")
    assert verify_pack(Path(moved)).ok


def test_report_json_schema_fields(pack: Path) -> None:
    r = report_of(pack)
    assert r["schema"] == SCHEMA_ID
    assert r["computed_at"] == "2026-07-01T12:00:00Z"
    assert r["exported_by"]["name"] == "ines"
    assert r["vault"]["origin"] == "tracer.test/vault"
    assert r["checkpoint"]["note"] == (pack / "checkpoint.note").read_text("utf-8")
    assert [a["answer_id"] for a in r["answers"]] == ALL_IDS
    stale = answer(r, "ans-stale")
    assert (stale["integrity"], stale["currency"]) == ("intact", "stale")
    p = stale["trace"]["passages"][0]
    assert p["currency"]["reason"] == "quote_changed"
    assert stale["trace"]["findings"][0]["note"].startswith("Answer drops")
    roles = {c["role"] for rec in r["records"] for c in rec["cited_by"]}
    assert roles >= {"manifest", "cited_revision", "current_revision", "tombstone", "finding", "vault_init"}
    assert roles >= {"producer_key", "lineage_manifest"}
    assert (pack / "report.json").read_bytes().isascii()


def test_dsse_covers_report_bytes(pack: Path) -> None:
    env = json.loads((pack / "report.dsse.json").read_text())
    assert env["payloadType"] == PAYLOAD_TYPE
    import base64

    assert base64.b64decode(env["payload"]) == (pack / "report.json").read_bytes()


def test_export_is_an_access_entry(built: Built, tmp_path: Path) -> None:
    export(built, tmp_path / "pack")
    rows = queries.access_rows(built.session.vault)
    exports = [r for r in rows if r.action == "export"]
    assert exports and exports[0].target == ",".join(ALL_IDS)
    assert exports[0].investigator == built.session.identity.key_id


def test_prov_json_has_the_three_relations(pack: Path) -> None:
    prov = json.loads((pack / "lineage.prov.json").read_text())
    rels = {rec["tracer:relation"] for rec in prov["wasDerivedFrom"].values()}
    assert rels == {"wasDerivedFrom", "wasRevisionOf", "wasQuotedFrom"}
    types = {rec.get("prov:type", {}).get("$") for rec in prov["wasDerivedFrom"].values()}
    assert {"prov:Revision", "prov:Quotation"} <= types
    for rec in prov["wasDerivedFrom"].values():
        assert rec["prov:generatedEntity"] in prov["entity"]
        assert rec["prov:usedEntity"] in prov["entity"]
    revision_of = [r for r in prov["wasDerivedFrom"].values() if r["tracer:relation"] == "wasRevisionOf"]
    assert any(
        r["prov:generatedEntity"].endswith("returns@C") and r["prov:usedEntity"].endswith("returns@A")
        for r in revision_of
    )


def test_custodian_can_export_and_the_pack_verifies(built: Built, tmp_path: Path) -> None:
    from tracer.engine.session import unlock
    from tracer.engine.trust import TrustStore
    from tracer.report import export_pack

    built.case.close()
    s = unlock(built.case.path, built.case.custodian, trust=TrustStore())
    try:
        pack = export_pack(s, ["ans-secret", "ans-stale"], tmp_path / "pack", {"json"})
    finally:
        s.close()
    r = report_of(pack)
    assert r["exported_by"]["role"] == "custodian"
    assert answer(r, "ans-secret")["visible"] is True
    assert all(rec["inclusion"] is not None for rec in r["records"])  # the custodian signs the last head
    v = verify_pack(pack)
    assert v.ok, [f.line() for f in v.failures]
