"""The case pack: it verifies offline, every file altered by one byte is caught, a
reader without tracer checks its envelope and proofs, and what people wrote is inert."""

from __future__ import annotations

import base64
import copy
import hashlib
import json
from pathlib import Path

import pytest

from tests.case.conftest import CLOCK
from tests.case.packs import PURPOSE, report_of, worked_pack
from tracer.report import verify_pack


@pytest.fixture
def pack(tmp_path: Path) -> Path:
    return worked_pack(tmp_path / "pack", CLOCK)


def test_the_case_pack_carries_the_case_and_verifies_offline(pack: Path) -> None:
    v = verify_pack(pack)
    assert v.ok, [f.line() for f in v.failures]
    assert v.warnings == []  # nothing is "signature only": every entry is under a checkpoint
    assert v.checked["consistency proofs"] == 1 and v.checked["case entries"] >= 6
    r = report_of(pack)
    c = r["case"]
    assert c["case_id"] == "INC-7" and c["purpose"] == PURPOSE
    assert [t["tag"] for t in c["tags"]] == ["dropped-exception", "context"]
    assert c["conclusion"]["text"].startswith("The assistant dropped")
    assert [h["subject"] for h in c["holds"]] == [{"kind": "document", "id": "runbook"}]
    assert [p["name"] for p in c["investigators"]] == ["ines"]
    assert [a["action"] for a in c["activity"]] == ["export"]
    assert r["verification"]["ok"] is True and r["verification"]["scope"] == "whole vault"
    by_answer = {a["answer_id"]: a for a in r["answers"]}
    assert [h["seq"] for h in by_answer["ans-restart"]["holds"]] == [c["holds"][0]["seq"]]
    assert all(rec["inclusion"] is not None for rec in r["records"])
    head = r["head"]
    assert head["signer"]["name"] == "ines" and head["size"] > r["checkpoint"]["size"]


def test_every_file_altered_by_one_byte_is_caught(pack: Path, tmp_path: Path) -> None:
    import shutil

    for name in sorted(p.name for p in pack.iterdir()):
        data = (pack / name).read_bytes()
        for where in (len(data) // 3, len(data) - 2):
            copy_dir = Path(shutil.copytree(pack, tmp_path / f"t-{name}-{where}"))
            altered = bytearray(data)
            altered[where] = ord("#") if altered[where] != ord("#") else ord("!")
            (copy_dir / name).write_bytes(bytes(altered))
            assert not verify_pack(copy_dir).ok, f"{name} altered at byte {where} went unnoticed"


def test_a_case_item_rewritten_in_the_report_is_caught_even_if_resigned(pack: Path) -> None:
    """Rewriting a note in report.json and re-signing it needs the exporter's key; with it,
    the note still differs from its signed log entry, which is the evidence."""
    from store.crypto import Identity
    from store.dsse import sign_envelope
    from tracer.report import PAYLOAD_TYPE
    from tracer.report.export import dump_json

    r = report_of(pack)
    r["case"]["notes"][0]["text"] = "Nothing to see."
    r["case"]["holds"][0]["reason"] = "none"
    data = dump_json(r)
    (pack / "report.json").write_bytes(data)
    ines = Identity.from_seed("ines", b"ines")
    (pack / "report.dsse.json").write_bytes(dump_json(sign_envelope(data, PAYLOAD_TYPE, ines).to_json()))
    v = verify_pack(pack)
    paths = {f.path for f in v.failures}
    assert "$.case.notes[0].text" in paths and "$.case.holds[0].reason" in paths


def test_securesystemslib_verifies_the_case_pack_envelope(pack: Path) -> None:
    from securesystemslib.dsse import Envelope
    from securesystemslib.signer import SSlibKey  # type: ignore[attr-defined]

    keys = json.loads((pack / "keys.json").read_text())
    exporter = keys["exporter"]
    key = SSlibKey.from_dict(exporter["key_id"], copy.deepcopy(exporter["sslib_key"]))
    env = Envelope.from_dict(json.loads((pack / "report.dsse.json").read_text()))
    assert list(env.verify([key], 1)) == [exporter["key_id"]]
    assert env.payload == (pack / "report.json").read_bytes()


def _node(a: bytes, b: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + a + b).digest()


def _verify_consistency(m: int, n: int, old: bytes, new: bytes, proof: list[bytes]) -> None:
    """RFC 9162 section 2.1.4.2, written from the RFC, not from store.merkle."""
    if m == n:
        assert not proof and old == new
        return
    if m & (m - 1) == 0:  # m is a power of two: the old root is the first node
        proof = [old, *proof]
    fn, sn = m - 1, n - 1
    while fn & 1:
        fn, sn = fn >> 1, sn >> 1
    fr = sr = proof[0]
    for c in proof[1:]:
        assert sn != 0
        if fn & 1 or fn == sn:
            fr, sr = _node(c, fr), _node(c, sr)
            while not fn & 1 and fn != 0:
                fn, sn = fn >> 1, sn >> 1
        else:
            sr = _node(sr, c)
        fn, sn = fn >> 1, sn >> 1
    assert sn == 0 and fr == old and sr == new


def test_the_consistency_proof_checks_by_hand(pack: Path) -> None:
    r = report_of(pack)
    old_root = bytes.fromhex(r["checkpoint"]["root"])
    lines = r["head"]["note"].splitlines()
    assert lines[0] == r["vault"]["origin"]
    size, new_root = int(lines[1]), base64.b64decode(lines[2])
    c = r["head"]["consistency"]
    assert (c["from_size"], c["to_size"]) == (r["checkpoint"]["size"], size)
    _verify_consistency(c["from_size"], size, old_root, new_root, [bytes.fromhex(h) for h in c["hashes"]])
    with pytest.raises(AssertionError):
        _verify_consistency(
            c["from_size"], size, old_root, bytes(32), [bytes.fromhex(h) for h in c["hashes"]]
        )


def test_lineage_prov_json_loads_with_the_prov_library(pack: Path) -> None:
    from prov.model import ProvDocument

    doc = ProvDocument.deserialize(source=str(pack / "lineage.prov.json"), format="json")
    ids = {str(rec.identifier) for rec in doc.get_records() if rec.identifier is not None}
    assert any("ans-restart" in i for i in ids)
    assert doc.get_records()


def test_what_people_wrote_is_inert_in_every_view(pack: Path) -> None:
    md = (pack / "report.md").read_text("utf-8")
    html = (pack / "report.html").read_text("utf-8")
    for text in (md, html):
        assert "\x1b" not in text and "\u202e" not in text and "\x07" not in text
        assert "⟨ESC⟩" in text and "⟨U+202E⟩" in text
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "<b>dropped</b>" not in html
    assert "\\<script\\>" in md
    assert (pack / "report.json").read_bytes().isascii()
    # the cover page says who signed, where the signature is, and how to check it
    for text in (md, html):
        assert "signed by ines" in text and "report.dsse.json" in text
        assert "tracer verify-pack" in text and "securesystemslib" in text
