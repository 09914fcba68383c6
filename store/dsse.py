"""DSSE v1 envelopes: how tracer signs and checks every statement and manifest.

The signature covers PAE(payloadType, payload) rather than the JSON envelope, so
the envelope can be re-serialized (canonicalized, embedded in a log entry) without
breaking signatures, and a signature over one payload type can never be replayed
as another.  Spec: https://github.com/secure-systems-lab/dsse (protocol.md for
PAE and verification, envelope.md for the JSON shape).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NotRequired, TypedDict

from store.crypto import Identity, b64e, ed25519_verify
from store.errors import InputError, SignatureError

__all__ = [
    "Envelope",
    "EnvelopeJSON",
    "Signature",
    "SignatureJSON",
    "pae",
    "sign_envelope",
    "verify_envelope",
]

_STD_B64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")
_URL_B64 = re.compile(r"[A-Za-z0-9_-]*={0,2}")
_ENVELOPE_FIELDS = frozenset({"payload", "payloadType", "signatures"})
_SIGNATURE_FIELDS = frozenset({"keyid", "sig"})


class SignatureJSON(TypedDict):
    keyid: NotRequired[str]
    sig: str


class EnvelopeJSON(TypedDict):
    """The DSSE envelope.md JSON form."""

    payload: str
    payloadType: str
    signatures: list[SignatureJSON]


def pae(payload_type: str, payload: bytes) -> bytes:
    """Pre-Authentication Encoding (DSSE protocol.md, "Signature Definition").

    Length-prefixing both fields is what makes the encoding injective: no choice of
    type and body can collide with another pair, which a plain concatenation allows.
    """
    type_bytes = payload_type.encode("utf-8")
    return b"DSSEv1 %d %b %d %b" % (len(type_bytes), type_bytes, len(payload), payload)


def _b64decode_either(text: str) -> bytes:
    """Decode standard or URL-safe base64, as protocol.md requires verifiers to accept.

    Padding is required and the encoding must be canonical (zero pad bits, RFC 4648
    §3.5), so one byte string has exactly one accepted spelling per alphabet; mixing
    the two alphabets in one string is refused.
    """
    # Fast path for what producers write: standard alphabet, padded.  A strict decode
    # only succeeds on standard-alphabet text with correct padding (so the slow path
    # would take the same branch), and every quantum but the last has no pad bits, so
    # re-encoding the last one is the whole canonical-form check.  Anything else goes
    # the slow way, which also words the errors.
    if not len(text) % 4 and text.isascii():
        data = text.encode("ascii")
        try:
            raw = binascii.a2b_base64(data, strict_mode=True)
        except binascii.Error:
            pass
        else:
            tail = len(raw) % 3 or 3
            if not raw or binascii.b2a_base64(raw[-tail:], newline=False) == data[-4:]:
                return raw
    return _b64decode_slow(text)


def _b64decode_slow(text: str) -> bytes:
    if _STD_B64.fullmatch(text):
        altchars = b"+/"
    elif _URL_B64.fullmatch(text):
        altchars = b"-_"
    else:
        raise ValueError("not base64 (standard or URL-safe alphabet)")
    if len(text) % 4:
        raise ValueError("base64 length is not a multiple of 4 (padding is required)")
    try:
        raw = base64.b64decode(text.encode("ascii"), altchars=altchars, validate=True)
    except binascii.Error as exc:
        raise ValueError(f"not base64 ({exc})") from exc
    if base64.b64encode(raw, altchars=altchars).decode("ascii") != text:
        raise ValueError("non-canonical base64 (padding bits must be zero)")
    return raw


@dataclass(frozen=True)
class Signature:
    """One DSSE signature; `keyid` is an unauthenticated hint, never a trust decision."""

    keyid: str
    sig: bytes


@dataclass(frozen=True)
class Envelope:
    """A DSSE JSON envelope, holding the payload exactly as it was encoded.

    `payload_b64` is kept verbatim (standard or URL-safe) so that an envelope read
    from a producer is written back byte-for-byte in its payload, and nothing
    downstream is tempted to re-encode what was signed.
    """

    payload_type: str
    payload_b64: str
    signatures: tuple[Signature, ...]
    #: the decoded payload, once known (never compared: it is a function of payload_b64)
    decoded: bytes | None = field(default=None, compare=False, repr=False)

    @property
    def payload(self) -> bytes:
        raw = self.decoded
        if raw is None:
            raw = _b64decode_either(self.payload_b64)
            object.__setattr__(self, "decoded", raw)
        return raw

    def to_json(self) -> EnvelopeJSON:
        """The envelope.md JSON form; an empty keyid is omitted, as envelope.md allows."""
        sigs: list[SignatureJSON] = []
        for s in self.signatures:
            entry: SignatureJSON = {"keyid": s.keyid, "sig": b64e(s.sig)} if s.keyid else {"sig": b64e(s.sig)}
            sigs.append(entry)
        return {"payload": self.payload_b64, "payloadType": self.payload_type, "signatures": sigs}

    @classmethod
    def from_json(cls, obj: Any, file: str, path_prefix: str = "$") -> Envelope:
        """Validate a parsed JSON envelope; errors name `file` and the JSON path.

        Unknown fields are refused rather than dropped: they are not covered by any
        signature, and silently discarding them would change the stored evidence.
        `keyid` may be absent because protocol.md makes it optional.
        """
        if not isinstance(obj, dict):
            raise InputError(file, path_prefix, "expected a DSSE envelope (JSON object)")
        _refuse_unknown(obj, _ENVELOPE_FIELDS, file, path_prefix)
        payload_b64 = _required_str(obj, "payload", file, path_prefix)
        payload_type = _required_str(obj, "payloadType", file, path_prefix)
        if not payload_type:
            raise InputError(file, f"{path_prefix}.payloadType", "must not be empty")
        try:
            decoded = _b64decode_either(payload_b64)
        except ValueError as exc:
            raise InputError(file, f"{path_prefix}.payload", str(exc)) from exc
        raw_sigs = obj.get("signatures")
        sigs_path = f"{path_prefix}.signatures"
        if raw_sigs is None:
            raise InputError(file, sigs_path, "missing required field")
        if not isinstance(raw_sigs, list):
            raise InputError(file, sigs_path, "expected a list of signatures")
        if not raw_sigs:
            raise InputError(file, sigs_path, "envelope has no signatures")
        signatures = tuple(
            _signature_from_json(item, file, f"{sigs_path}[{i}]") for i, item in enumerate(raw_sigs)
        )
        return cls(payload_type=payload_type, payload_b64=payload_b64, signatures=signatures, decoded=decoded)


def _refuse_unknown(obj: Mapping[str, object], allowed: frozenset[str], file: str, path: str) -> None:
    for key in obj:
        if key not in allowed:
            raise InputError(file, f"{path}.{key}", "unknown field (not covered by a signature)")


def _required_str(obj: Mapping[str, object], key: str, file: str, path: str) -> str:
    if key not in obj:
        raise InputError(file, f"{path}.{key}", "missing required field")
    value = obj[key]
    if not isinstance(value, str):
        raise InputError(file, f"{path}.{key}", f"expected a string, got {type(value).__name__}")
    return value


def _signature_from_json(item: Any, file: str, path: str) -> Signature:
    if not isinstance(item, dict):
        raise InputError(file, path, "expected a signature object")
    _refuse_unknown(item, _SIGNATURE_FIELDS, file, path)
    keyid = _required_str(item, "keyid", file, path) if "keyid" in item else ""
    sig_text = _required_str(item, "sig", file, path)
    try:
        sig = _b64decode_either(sig_text)
    except ValueError as exc:
        raise InputError(file, f"{path}.sig", str(exc)) from exc
    if not sig:
        raise InputError(file, f"{path}.sig", "signature is empty")
    return Signature(keyid=keyid, sig=sig)


def sign_envelope(payload: bytes, payload_type: str, signer: Identity) -> Envelope:
    """Sign PAE(type, payload) (protocol.md, "To sign"); keyid = signer.key_id."""
    sig = signer.sign(pae(payload_type, payload))
    return Envelope(
        payload_type=payload_type,
        payload_b64=b64e(payload),
        signatures=(Signature(keyid=signer.key_id, sig=sig),),
        decoded=bytes(payload),
    )


def verify_envelope(env: Envelope, keys: Mapping[str, bytes]) -> str:
    """Return the id of the trusted key behind the first signature that verifies.

    Follows protocol.md's multi-signature rule with t = 1: failing signatures are
    skipped, so a stray bad signature cannot veto a good one.  The keyid only narrows
    which trusted key to try (a missing keyid tries them all); trust comes from
    `keys` alone.  Checking payloadType is the caller's job (protocol.md, "To
    verify"), since only the caller knows which types it accepts.
    """
    message = pae(env.payload_type, env.payload)
    failed: list[str] = []
    for sig in env.signatures:
        if sig.keyid:
            candidates = [sig.keyid] if sig.keyid in keys else []
        else:
            candidates = list(keys)
        for keyid in candidates:
            try:
                ed25519_verify(keys[keyid], sig.sig, message)
            except SignatureError:
                failed.append(keyid)
                continue
            return keyid
    if failed:
        tried = ", ".join(dict.fromkeys(failed))
        raise SignatureError(f"signature by key {tried} does not verify")
    claimed = ", ".join(s.keyid or "(no keyid)" for s in env.signatures)
    trusted = ", ".join(sorted(keys)) or "(none)"
    raise SignatureError(
        f"no signature by a known key: envelope signed by {claimed}; trusted keys: {trusted}"
    )
