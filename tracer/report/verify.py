"""Check an evidence pack with nothing but its files.

Order: keys.json, then the DSSE signature over report.json, the checkpoint note's
signature, the digest of every other file, every cited log entry (leaf hash, RFC 6962
inclusion proof, its own signature), and finally what report.json claims against
those entries and against its texts (`bindings`).  Every check runs even after an
earlier one failed, so one altered byte is reported with everything it breaks, each
failure pinned to a file, a JSON path and, where there is one, an answer and passage.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from store.crypto import b64d, key_id_of, sha256_hex
from store.dsse import Envelope, verify_envelope
from store.errors import InputError, SignatureError
from store.merkle import ProofError, leaf_hash, verify_consistency, verify_inclusion
from store.note import Checkpoint, verify_checkpoint
from tracer.report.bindings import check_answers
from tracer.report.casecheck import check_case
from tracer.report.checks import Failure, PackVerification
from tracer.report.keys import parse_vkey
from tracer.report.model import (
    CHECKPOINT_FILE,
    DSSE_FILE,
    KEYS_FILE,
    PAYLOAD_TYPE,
    REPORT_FILE,
    SCHEMA_ID,
)
from tracer.report.recorded import recorded_in
from tracer.report.statements import check_record_signature, statement_of

__all__ = ["Failure", "PackVerification", "Record", "verify_pack"]

Record = dict[str, Any]


def _read(v: PackVerification, name: str) -> bytes | None:
    try:
        return (v.pack / name).read_bytes()
    except FileNotFoundError:
        v.fail(name, "$", "file is missing from the pack")
    except OSError as exc:
        v.fail(name, "$", f"cannot read ({exc.strerror})")
    return None


def _json(v: PackVerification, name: str, data: bytes | None) -> Any:
    if data is None:
        return None
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        v.fail(name, "$", f"not JSON ({exc})")
        return None


def _key(v: PackVerification, obj: Any, path: str) -> bytes | None:
    """A raw Ed25519 key from keys.json, cross-checked with the key id beside it."""
    with v.guard(KEYS_FILE, path):
        raw = b64d(obj["ed25519"])
        if len(raw) != 32:
            v.fail(KEYS_FILE, f"{path}.ed25519", f"Ed25519 key must be 32 bytes, got {len(raw)}")
            return None
        if obj.get("key_id") != key_id_of(raw):
            v.fail(KEYS_FILE, f"{path}.key_id", "is not the SHA-256 of the key beside it")
        return raw
    return None


def _keys(v: PackVerification, keys: Any) -> tuple[tuple[str, bytes] | None, dict[str, bytes], Any]:
    """(custodian name and key, exporter {key id: key}, parsed keys.json)."""
    if not isinstance(keys, dict):
        if keys is not None:
            v.fail(KEYS_FILE, "$", "expected a JSON object")
        return None, {}, {}
    custodian: tuple[str, bytes] | None = None
    with v.guard(KEYS_FILE, "$.custodian"):
        name, pub = parse_vkey(keys["custodian"]["verifier_key"])
        raw = _key(v, keys["custodian"], "$.custodian")
        if raw is not None and raw != pub:
            v.fail(KEYS_FILE, "$.custodian.ed25519", "differs from the custodian verifier_key")
        custodian = (name, pub)
        v.facts["custodian_verifier_key"] = keys["custodian"]["verifier_key"]
    exporter: dict[str, bytes] = {}
    raw = _key(v, keys.get("exporter"), "$.exporter")
    if raw is not None:
        exporter[key_id_of(raw)] = raw
    return custodian, exporter, keys


def _dsse(v: PackVerification, report_bytes: bytes | None, exporter: dict[str, bytes]) -> None:
    env_obj = _json(v, DSSE_FILE, _read(v, DSSE_FILE))
    if env_obj is None:
        return
    try:
        env = Envelope.from_json(env_obj, DSSE_FILE)
    except InputError as exc:
        v.fail(DSSE_FILE, exc.path, exc.message)
        return
    if env.payload_type != PAYLOAD_TYPE:
        v.fail(DSSE_FILE, "$.payloadType", f"is {env.payload_type!r}, expected {PAYLOAD_TYPE!r}")
    try:
        keyid = verify_envelope(env, exporter)
        v.checked["report signature"] += 1
        v.facts["signed_by"] = keyid
    except SignatureError as exc:
        v.fail(DSSE_FILE, "$.signatures[0].sig", f"{exc} (exporter key from {KEYS_FILE})")
    if report_bytes is not None and env.payload != report_bytes:
        v.fail(REPORT_FILE, "$", f"is not byte-for-byte the payload signed in {DSSE_FILE}")


def _checkpoint(v: PackVerification, custodian: tuple[str, bytes] | None, report: Any) -> Checkpoint | None:
    data = _read(v, CHECKPOINT_FILE)
    if data is None or custodian is None:
        return None
    try:
        note = data.decode("utf-8")
        cp = verify_checkpoint(note, *custodian)
    except (UnicodeDecodeError, InputError, SignatureError, ValueError) as exc:
        v.fail(CHECKPOINT_FILE, "$", f"checkpoint does not verify under the custodian key: {exc}")
        return None
    v.checked["checkpoint signature"] += 1
    v.facts["checkpoint"] = {"origin": cp.origin, "size": cp.size, "root": cp.root.hex()}
    with v.guard(REPORT_FILE, "$.checkpoint"):
        claimed = report["checkpoint"]
        if claimed["note"] != note:
            v.fail(REPORT_FILE, "$.checkpoint.note", f"differs from {CHECKPOINT_FILE}")
        if claimed["size"] != cp.size or claimed["root"] != cp.root.hex():
            v.fail(REPORT_FILE, "$.checkpoint", "size or root differs from the signed checkpoint")
        if report["vault"]["origin"] != cp.origin:
            v.fail(REPORT_FILE, "$.vault.origin", f"differs from the checkpoint origin {cp.origin!r}")
    return cp


def _files(v: PackVerification, report: Any) -> None:
    listed: dict[str, Any] = {}
    with v.guard(REPORT_FILE, "$.files"):
        listed = dict(report["files"])
    for name, digest in listed.items():
        if "/" in name or name.startswith("."):
            v.fail(REPORT_FILE, f"$.files.{name}", "not a file name inside the pack")
            continue
        data = _read(v, name)
        if data is None:
            continue
        if sha256_hex(data) != digest:
            v.fail(name, "$", f"SHA-256 differs from the digest signed in {REPORT_FILE} $.files")
        else:
            v.checked["file digests"] += 1
    known = {*listed, REPORT_FILE, DSSE_FILE}
    for p in sorted(v.pack.iterdir()):
        if p.name not in known:
            v.warnings.append(f"{p.name}: not listed in {REPORT_FILE}; no signature covers it")


def _head(v: PackVerification, report: Any, cp: Checkpoint | None, keys: Any) -> Checkpoint | None:
    """The exporter's checkpoint over its own entries, and its consistency with the
    custodian's: then entries after the custodian's checkpoint are under a checkpoint too."""
    head = report.get("head")
    if head is None or cp is None:
        return None
    with v.guard(REPORT_FILE, "$.head"):
        exporter = keys["exporter"]
        name, key = head["signer"]["name"], b64d(exporter["ed25519"])
        if head["signer"]["key_id"] != exporter["key_id"] or name != exporter["name"]:
            v.fail(REPORT_FILE, "$.head.signer", f"is not the exporter in {KEYS_FILE}")
        try:
            hc = verify_checkpoint(head["note"], name, key, origin=cp.origin)
        except (InputError, SignatureError, ValueError) as exc:
            v.fail(REPORT_FILE, "$.head.note", f"does not verify under the exporter key: {exc}")
            return None
        if hc.size != head["size"] or hc.root.hex() != head["root"]:
            v.fail(REPORT_FILE, "$.head", "size or root differs from the exporter's signed note")
            return None
        if not _head_extends(v, head["consistency"], cp, hc):
            return None
        v.checked["exporter checkpoint"] += 1
        v.checked["consistency proofs"] += 1
        v.facts["head"] = {"size": hc.size, "root": hc.root.hex(), "signer": name}
        return hc
    return None


def _head_extends(v: PackVerification, c: Any, cp: Checkpoint, hc: Checkpoint) -> bool:
    """Whether the pack's consistency proof `c` shows the exporter's checkpoint `hc`
    extending the custodian's `cp` (a failure is recorded in `v` when not)."""
    if c["from_size"] != cp.size or c["to_size"] != hc.size:
        v.fail(REPORT_FILE, "$.head.consistency", "sizes differ from the two checkpoints")
        return False
    try:
        verify_consistency(cp.size, hc.size, cp.root, hc.root, [bytes.fromhex(h) for h in c["hashes"]])
    except ProofError as exc:
        v.fail(
            REPORT_FILE,
            "$.head.consistency.hashes",
            f"the exporter's checkpoint does not extend the custodian's: {exc}",
        )
        return False
    return True


def _record(
    v: PackVerification, i: int, rec: Any, cp: Checkpoint | None, keys: Any, head: Checkpoint | None = None
) -> Record | None:
    """Check one cited entry; returns the decoded entry body for `bindings`, or None."""
    path = f"$.records[{i}]"
    with v.guard(REPORT_FILE, path):
        seq = rec["seq"]
        data = b64d(rec["entry"])
        leaf = leaf_hash(data)
        if leaf.hex() != rec["leaf_hash"]:
            v.fail(REPORT_FILE, f"{path}.leaf_hash", f"entry {seq}: leaf hash does not match the entry bytes")
        body = json.loads(data)
        if body.get("seq") != seq or body.get("kind") != rec["kind"]:
            v.fail(REPORT_FILE, f"{path}.entry", f"entry {seq}: its own seq/kind differ from the record's")
        _inclusion(v, path, rec, seq, leaf, cp, head)
        check_record_signature(v, path, rec, body, keys)
        return {
            "seq": seq,
            "index": i,
            "body": body,
            "stmt": statement_of(body),
            "roles": rec.get("cited_by", []),
        }
    return None


def _inclusion(
    v: PackVerification,
    path: str,
    rec: Any,
    seq: int,
    leaf: bytes,
    cp: Checkpoint | None,
    head: Checkpoint | None = None,
) -> None:
    """Entries inside the custodian's checkpoint are proven to it; later ones to the
    exporter's checkpoint (`head`), itself proven consistent with the custodian's."""
    proof = rec.get("inclusion")
    if cp is None:
        return
    to = cp if seq < cp.size or head is None else head
    if proof is None:
        if seq < to.size:
            v.fail(REPORT_FILE, f"{path}.inclusion", f"entry {seq} is inside a checkpoint but has no proof")
        else:
            v.warnings.append(f"entry {seq}: appended after the checkpoint; checked by its signature only")
        return
    if proof["tree_size"] != to.size or proof["leaf_index"] != seq:
        v.fail(REPORT_FILE, f"{path}.inclusion", "tree size or leaf index differs from checkpoint/seq")
        return
    try:
        verify_inclusion(seq, to.size, leaf, [bytes.fromhex(h) for h in proof["hashes"]], to.root)
        v.checked["inclusion proofs"] += 1
    except ProofError as exc:
        v.fail(REPORT_FILE, f"{path}.inclusion.hashes", f"entry {seq}: {exc}")


def verify_pack(pack: Path) -> PackVerification:
    """Check every signature, proof, digest and claim in the pack at `pack`."""
    v = PackVerification(pack)
    report_bytes = _read(v, REPORT_FILE)
    report = _json(v, REPORT_FILE, report_bytes)
    if report is not None and (not isinstance(report, dict) or report.get("schema") != SCHEMA_ID):
        v.fail(REPORT_FILE, "$.schema", f"not a {SCHEMA_ID} report")
        report = None
    custodian, exporter, keys = _keys(v, _json(v, KEYS_FILE, _read(v, KEYS_FILE)))
    _dsse(v, report_bytes, exporter)
    if report is None:
        return v
    with v.guard(REPORT_FILE, "$.exported_by.key_id"):
        if report["exported_by"]["key_id"] not in exporter:
            v.fail(REPORT_FILE, "$.exported_by.key_id", f"is not the exporter key in {KEYS_FILE}")
    cp = _checkpoint(v, custodian, report)
    head = _head(v, report, cp, keys)
    _files(v, report)
    records: dict[int, Record] = {}
    for i, rec in enumerate(report.get("records") or []):
        checked = _record(v, i, rec, cp, keys, head)
        if checked is not None:
            records[checked["seq"]] = checked
            v.checked["log entries"] += 1
    check_answers(v, report, records)
    check_case(v, report, records, keys)
    v.recorded = recorded_in(report)
    return v
