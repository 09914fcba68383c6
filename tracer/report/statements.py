"""Each cited log entry's own signature, checked with the keys the pack lists.

The inclusion proof says an entry is in the log the custodian signed; the entry's
DSSE signature says who made it.  Manifests must verify under a producer key that was
valid when the answer was generated (unless the report itself says the signature was
invalid, which is then evidence, not a failure); custodian statements under the
custodian key; findings under the investigator who wrote them.
"""

from __future__ import annotations

import json
from typing import Any

from store.crypto import b64d
from store.dsse import Envelope, verify_envelope
from store.entries import CUSTODIAN_KINDS, INVESTIGATOR_KINDS, MANIFEST_TYPE, STATEMENT_TYPE, EntryKind
from store.errors import InputError, SignatureError
from store.words import SignatureState
from tracer.report.checks import PackVerification
from tracer.report.model import KEYS_FILE, REPORT_FILE

__all__ = ["check_record_signature", "statement_of"]


def statement_of(body: dict[str, Any]) -> dict[str, Any]:
    """The signed statement (or manifest payload) inside a log entry body."""
    payload = json.loads(Envelope.from_json(body["envelope"], REPORT_FILE).payload)
    if body.get("kind") != EntryKind.MANIFEST and isinstance(payload, dict) and "statement" in payload:
        inner: dict[str, Any] = payload["statement"]
        return inner
    out: dict[str, Any] = payload
    return out


def _keys_by_id(items: Any) -> dict[str, dict[str, Any]]:
    return {str(k["key_id"]): k for k in items or []}


def _in_window(key: dict[str, Any], when: str) -> bool:
    if key.get("valid_from") and when < key["valid_from"]:
        return False
    if key.get("valid_until") and when >= key["valid_until"]:
        return False
    return not (key.get("revoked_at") and when >= key["revoked_at"])


def _manifest(v: PackVerification, path: str, rec: Any, env: Envelope, keys: Any) -> None:
    seq = rec["seq"]
    if rec.get("signature") != SignatureState.VALID:
        v.warnings.append(f"entry {seq}: the report declares this manifest's signature invalid")
        return
    key = _keys_by_id(keys.get("producers")).get(rec.get("signer", ""))
    if key is None:
        v.fail(KEYS_FILE, "$.producers", f"no producer key {rec.get('signer')!r} for manifest entry {seq}")
        return
    generated_at = str(json.loads(env.payload).get("generated_at", ""))
    if not _in_window(key, generated_at):
        v.fail(KEYS_FILE, "$.producers", f"producer key {key['key_id'][:16]} was not valid at {generated_at}")
    if env.payload_type != MANIFEST_TYPE:
        v.fail(REPORT_FILE, f"{path}.entry", f"entry {seq}: payloadType is not {MANIFEST_TYPE}")
    try:
        verify_envelope(env, {key["key_id"]: b64d(key["ed25519"])})
        v.checked["manifest signatures"] += 1
    except SignatureError as exc:
        v.fail(REPORT_FILE, f"{path}.entry", f"manifest entry {seq}: {exc}")


def _statement(v: PackVerification, path: str, rec: Any, env: Envelope, keys: Any) -> None:
    seq, kind = rec["seq"], rec["kind"]
    if kind in CUSTODIAN_KINDS:
        trusted = {keys["custodian"]["key_id"]: b64d(keys["custodian"]["ed25519"])}
    elif kind in INVESTIGATOR_KINDS:
        people = [*(keys.get("investigators") or []), keys["exporter"], keys["custodian"]]
        trusted = {k["key_id"]: b64d(k["ed25519"]) for k in people}
    else:
        v.fail(REPORT_FILE, f"{path}.kind", f"entry {seq}: unknown entry kind {kind!r}")
        return
    if env.payload_type != STATEMENT_TYPE:
        v.fail(REPORT_FILE, f"{path}.entry", f"entry {seq}: payloadType is not {STATEMENT_TYPE}")
    try:
        verify_envelope(env, trusted)
        v.checked["statement signatures"] += 1
    except SignatureError as exc:
        v.fail(REPORT_FILE, f"{path}.entry", f"{kind} entry {seq}: {exc}")


def _key_facts(v: PackVerification, path: str, rec: Any, body: dict[str, Any], keys: Any) -> None:
    """Keys in keys.json must be the ones the log itself recorded."""
    stmt = statement_of(body)
    if rec["kind"] == EntryKind.VAULT_INIT and stmt["custodian"]["ed25519"] != keys["custodian"]["ed25519"]:
        v.fail(KEYS_FILE, "$.custodian.ed25519", "differs from the custodian named in log entry 0")
    if rec["kind"] == EntryKind.KEY_ADD:
        listed = _keys_by_id(keys.get("producers")).get(stmt["key_id"])
        if listed is not None and listed["ed25519"] != stmt["ed25519"]:
            v.fail(KEYS_FILE, "$.producers", f"key {stmt['key_id'][:16]} differs from log entry {rec['seq']}")


def check_record_signature(v: PackVerification, path: str, rec: Any, body: dict[str, Any], keys: Any) -> None:
    try:
        env = Envelope.from_json(body["envelope"], REPORT_FILE, f"{path}.entry.envelope")
    except InputError as exc:
        v.fail(REPORT_FILE, exc.path, exc.message)
        return
    if not isinstance(keys, dict) or "custodian" not in keys:
        return
    with v.guard(REPORT_FILE, f"{path}.entry"):
        if rec["kind"] == EntryKind.MANIFEST:
            _manifest(v, path, rec, env, keys)
        else:
            _statement(v, path, rec, env, keys)
        _key_facts(v, path, rec, body, keys)
