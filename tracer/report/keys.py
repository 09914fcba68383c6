"""keys.json: every public key a reader needs to check the pack, in formats their tools read.

Each key is given raw (base64 and hex), the custodian also as a C2SP verifier key
string (what Go's `note.NewVerifier` reads) and signing keys also in securesystemslib's
key format, so checking a pack never requires tracer.  The keys are only as
trustworthy as the pack: a reader pins the custodian key out of band.
"""

from __future__ import annotations

import json
from typing import Any

from store.crypto import PublicIdentity, b64d, b64e, key_id_of
from store.dsse import verify_envelope
from store.entries import LogEntry
from store.errors import SignatureError
from store.note import note_key_id, verifier_key
from store.roster import Investigator, ProducerKey
from store.words import SignatureState

__all__ = ["KEYS_SCHEMA", "keys_json", "manifest_signature", "parse_vkey", "sslib_key"]

KEYS_SCHEMA = "tracer.pack-keys/v1"


def sslib_key(ed25519: bytes) -> dict[str, Any]:
    """securesystemslib / TUF key metadata (`SSlibKey.from_dict(keyid, this)`)."""
    return {"keytype": "ed25519", "scheme": "ed25519", "keyval": {"public": ed25519.hex()}}


def _raw(name: str, ed25519: bytes) -> dict[str, Any]:
    return {
        "name": name,
        "key_id": key_id_of(ed25519),
        "ed25519": b64e(ed25519),
        "ed25519_hex": ed25519.hex(),
        "sslib_key": sslib_key(ed25519),
    }


def _producer(k: ProducerKey) -> dict[str, Any]:
    return {
        **_raw(k.name, k.ed25519),
        "valid_from": k.valid_from,
        "valid_until": k.valid_until,
        "revoked_at": k.revoked_at,
        "added_seq": k.added_seq,
    }


def keys_json(
    custodian: PublicIdentity,
    exporter: PublicIdentity,
    producers: list[ProducerKey],
    authors: list[Investigator],
) -> dict[str, Any]:
    """custodian (checkpoints, statements), exporter (the report), producers, finding authors."""
    return {
        "schema": KEYS_SCHEMA,
        "custodian": {
            **_raw(custodian.name, custodian.ed25519),
            "verifier_key": verifier_key(custodian.name, custodian.ed25519),
        },
        "exporter": {
            **_raw(exporter.name, exporter.ed25519),
            "verifier_key": verifier_key(exporter.name, exporter.ed25519),
        },
        "producers": [_producer(k) for k in sorted(producers, key=lambda k: k.key_id)],
        "investigators": [_raw(i.name, i.ed25519) for i in sorted(authors, key=lambda i: i.key_id)],
    }


def manifest_signature(entry: LogEntry, keys: dict[str, ProducerKey]) -> tuple[SignatureState, str]:
    """(`valid`, key id) when a producer key valid at generated_at signed it, else the claim.

    The same rule as the engine's trace, repeated here because the pack must say which
    key a reader should check each included manifest with, lineage manifests too.
    """
    env = entry.envelope
    if env is None:
        return SignatureState.SIGNATURE_INVALID, ""
    generated_at = str(json.loads(env.payload).get("generated_at", ""))
    valid = {k: v.ed25519 for k, v in keys.items() if v.valid_at(generated_at)}
    try:
        return SignatureState.VALID, verify_envelope(env, valid)
    except SignatureError:
        return SignatureState.SIGNATURE_INVALID, entry.signer or ""


def parse_vkey(text: str) -> tuple[str, bytes]:
    """(name, Ed25519 key) from a C2SP verifier key, splitting at the first two '+' only.

    Go's note.NewVerifier does the same; the base64 key itself may contain '+'.
    (store.note.parse_verifier_key splits at every '+' and so refuses such keys.)
    Raises ValueError with the reason.
    """
    name, sep1, rest = text.partition("+")
    hash_hex, sep2, key_b64 = rest.partition("+")
    if not (sep1 and sep2 and name):
        raise ValueError("expected <name>+<key id>+<base64 key>")
    key = b64d(key_b64)
    if len(key) != 33 or key[:1] != b"\x01":
        raise ValueError("expected an Ed25519 key (type byte 0x01 and 32 bytes)")
    if note_key_id(name, key[1:]).hex() != hash_hex.lower():
        raise ValueError("the key id does not match the name and key")
    return name, key[1:]
