"""A reader without tracer can check a pack: securesystemslib for the DSSE signature, and
the C2SP note and RFC 6962 proof re-implemented here from the specs alone."""

from __future__ import annotations

import base64
import copy
import hashlib
import json
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from securesystemslib.dsse import Envelope as SslibEnvelope
from securesystemslib.signer import SSlibKey  # type: ignore[attr-defined]  # no __all__ upstream

from tracer.report import PAYLOAD_TYPE


def _load(pack: Path, name: str) -> Any:
    return json.loads((pack / name).read_text("utf-8"))


def test_securesystemslib_verifies_report_dsse(pack: Path) -> None:
    keys = _load(pack, "keys.json")
    exporter = keys["exporter"]
    key = SSlibKey.from_dict(exporter["key_id"], copy.deepcopy(exporter["sslib_key"]))
    env = SslibEnvelope.from_dict(_load(pack, "report.dsse.json"))
    assert env.payload_type == PAYLOAD_TYPE
    accepted = env.verify([key], 1)
    assert list(accepted) == [exporter["key_id"]]
    assert env.payload == (pack / "report.json").read_bytes()


def test_securesystemslib_rejects_an_altered_report(pack: Path) -> None:
    import pytest
    from securesystemslib.exceptions import VerificationError

    keys = _load(pack, "keys.json")
    key = SSlibKey.from_dict(keys["exporter"]["key_id"], copy.deepcopy(keys["exporter"]["sslib_key"]))
    d = _load(pack, "report.dsse.json")
    payload = base64.b64decode(d["payload"]).replace(b"thirty", b"thirtY", 1)
    d["payload"] = base64.b64encode(payload).decode()
    with pytest.raises(VerificationError):
        SslibEnvelope.from_dict(d).verify([key], 1)


def _open_note(note: str, vkey: str) -> str:
    """signed-note.md by hand: split text from signatures, match key id, verify Ed25519."""
    name, key_hash, key_b64 = vkey.split("+", 2)
    raw = base64.b64decode(key_b64)
    assert raw[0] == 1
    public = raw[1:]
    assert hashlib.sha256(name.encode() + b"\n" + raw).digest()[:4].hex() == key_hash
    text, sigs = note[: note.rindex("\n\n") + 1], note[note.rindex("\n\n") + 2 :]
    for line in sigs.splitlines():
        signer, sig_b64 = line.removeprefix("\u2014 ").split(" ")
        sig = base64.b64decode(sig_b64)
        if signer == name and sig[:4].hex() == key_hash:
            Ed25519PublicKey.from_public_bytes(public).verify(sig[4:], text.encode())
            return text
    raise AssertionError("no signature by the custodian key")


def _root_from_proof(index: int, size: int, leaf: bytes, proof: list[bytes]) -> bytes:
    """RFC 9162 section 2.1.3.2, written from the RFC, not from store.merkle."""
    fn, sn, r = index, size - 1, leaf
    for p in proof:
        assert sn != 0
        if fn & 1 or fn == sn:
            r = hashlib.sha256(b"\x01" + p + r).digest()
            while fn and not fn & 1:
                fn, sn = fn >> 1, sn >> 1
        else:
            r = hashlib.sha256(b"\x01" + r + p).digest()
        fn, sn = fn >> 1, sn >> 1
    assert sn == 0
    return r


def test_checkpoint_and_inclusion_proofs_check_by_hand(pack: Path) -> None:
    keys = _load(pack, "keys.json")
    text = _open_note((pack / "checkpoint.note").read_text("utf-8"), keys["custodian"]["verifier_key"])
    origin, size_text, root_b64 = text.splitlines()[:3]
    size, root = int(size_text), base64.b64decode(root_b64)
    report = _load(pack, "report.json")
    assert origin == report["vault"]["origin"]
    # entries after the custodian's checkpoint are proven to the exporter's own checkpoint
    # (its consistency with the custodian's is checked by hand in tests/case)
    heads = {size: root}
    if "head" in report:
        head_text = _open_note(report["head"]["note"], keys["exporter"]["verifier_key"])
        _origin, head_size, head_root = head_text.splitlines()[:3]
        heads[int(head_size)] = base64.b64decode(head_root)
    proven = 0
    for rec in report["records"]:
        entry = base64.b64decode(rec["entry"])
        leaf = hashlib.sha256(b"\x00" + entry).digest()
        assert leaf.hex() == rec["leaf_hash"]
        assert rec["inclusion"] is not None
        tree = rec["inclusion"]["tree_size"]
        assert tree == (size if rec["seq"] < size else max(heads))
        hashes = [bytes.fromhex(h) for h in rec["inclusion"]["hashes"]]
        assert _root_from_proof(rec["seq"], tree, leaf, hashes) == heads[tree]
        proven += 1
    assert proven >= 8


def test_text_digests_check_by_hand(pack: Path) -> None:
    report = _load(pack, "report.json")
    seen = 0

    def walk(node: Any) -> None:
        nonlocal seen
        if isinstance(node, dict):
            if isinstance(node.get("text"), str):
                assert hashlib.sha256(node["text"].encode()).hexdigest() == node["digest"]
                seen += 1
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(report["answers"])
    assert seen >= 6
