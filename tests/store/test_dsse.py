"""DSSE envelopes: spec vector, tamper resistance, strict parsing, securesystemslib interop."""

from __future__ import annotations

import base64
import copy
import hashlib
import json
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import given, settings
from hypothesis import strategies as st
from securesystemslib.dsse import Envelope as SslibEnvelope
from securesystemslib.exceptions import VerificationError
from securesystemslib.signer import (  # type: ignore[attr-defined]  # no __all__ upstream
    CryptoSigner,
    SSlibKey,
)

from store.crypto import Identity, b64e
from store.dsse import Envelope, Signature, pae, sign_envelope, verify_envelope
from store.errors import InputError, SignatureError

PAYLOAD_TYPE = "application/vnd.tracer.test.v1+json"
PAYLOAD = b'{"answer":"42","source":"doc-7"}'

ALICE = Identity.from_seed("alice", b"alice")
BOB = Identity.from_seed("bob", b"bob")


def keys_of(*identities: Identity) -> dict[str, bytes]:
    return {i.key_id: i.public.ed25519 for i in identities}


def signed() -> Envelope:
    return sign_envelope(PAYLOAD, PAYLOAD_TYPE, ALICE)


# --- PAE -----------------------------------------------------------------------------


def test_pae_matches_protocol_md_test_vector() -> None:
    assert (
        pae("http://example.com/HelloWorld", b"hello world")
        == b"DSSEv1 29 http://example.com/HelloWorld 11 hello world"
    )


def test_pae_lengths_are_utf8_byte_lengths() -> None:
    assert pae("t\u00e9", b"") == b"DSSEv1 3 t\xc3\xa9 0 "


def test_pae_is_injective_where_concatenation_is_not() -> None:
    assert pae("a b", b"c") != pae("a", b"b c")


# --- sign / verify -------------------------------------------------------------------


def test_sign_verify_round_trip() -> None:
    env = signed()
    assert env.payload == PAYLOAD
    assert env.payload_type == PAYLOAD_TYPE
    assert env.signatures[0].keyid == ALICE.key_id
    assert ALICE.key_id == hashlib.sha256(ALICE.public.ed25519).hexdigest()
    assert verify_envelope(env, keys_of(ALICE)) == ALICE.key_id


def test_json_round_trip_preserves_envelope() -> None:
    env = signed()
    obj = env.to_json()
    assert set(obj) == {"payload", "payloadType", "signatures"}
    assert obj["signatures"] == [{"keyid": ALICE.key_id, "sig": b64e(env.signatures[0].sig)}]
    again = Envelope.from_json(obj, "test")
    assert again == env
    assert verify_envelope(again, keys_of(ALICE)) == ALICE.key_id


def test_tampered_payload_fails() -> None:
    env = signed()
    forged = Envelope(env.payload_type, b64e(PAYLOAD + b" "), env.signatures)
    with pytest.raises(SignatureError, match="does not verify"):
        verify_envelope(forged, keys_of(ALICE))


def test_tampered_payload_type_fails() -> None:
    env = signed()
    forged = Envelope("application/vnd.tracer.other+json", env.payload_b64, env.signatures)
    with pytest.raises(SignatureError, match=f"signature by key {ALICE.key_id} does not verify"):
        verify_envelope(forged, keys_of(ALICE))


@pytest.mark.parametrize("index", [0, 31, 63])
def test_tampered_signature_fails(index: int) -> None:
    env = signed()
    sig = bytearray(env.signatures[0].sig)
    sig[index] ^= 0x01
    forged = Envelope(env.payload_type, env.payload_b64, (Signature(ALICE.key_id, bytes(sig)),))
    with pytest.raises(SignatureError, match="does not verify"):
        verify_envelope(forged, keys_of(ALICE))


def test_truncated_signature_fails() -> None:
    env = signed()
    forged = Envelope(
        env.payload_type, env.payload_b64, (Signature(ALICE.key_id, env.signatures[0].sig[:63]),)
    )
    with pytest.raises(SignatureError):
        verify_envelope(forged, keys_of(ALICE))


def test_unknown_key_is_reported_as_such() -> None:
    with pytest.raises(SignatureError, match="no signature by a known key") as info:
        verify_envelope(signed(), keys_of(BOB))
    assert ALICE.key_id in str(info.value)
    assert BOB.key_id in str(info.value)


def test_no_trusted_keys_at_all() -> None:
    with pytest.raises(SignatureError, match="no signature by a known key"):
        verify_envelope(signed(), {})


def test_keyid_claim_does_not_confer_trust() -> None:
    """A signature claiming Alice's keyid but made by Bob's key must not verify."""
    env = signed()
    bob_sig = BOB.sign(pae(PAYLOAD_TYPE, PAYLOAD))
    forged = Envelope(env.payload_type, env.payload_b64, (Signature(ALICE.key_id, bob_sig),))
    with pytest.raises(SignatureError, match=f"signature by key {ALICE.key_id} does not verify"):
        verify_envelope(forged, keys_of(ALICE, BOB))


def test_bad_signature_does_not_veto_a_good_one() -> None:
    env = signed()
    bad = Signature(BOB.key_id, bytes(64))
    both = Envelope(env.payload_type, env.payload_b64, (bad, *env.signatures))
    assert verify_envelope(both, keys_of(ALICE, BOB)) == ALICE.key_id


def test_first_verifying_signature_wins() -> None:
    env = signed()
    bob = sign_envelope(PAYLOAD, PAYLOAD_TYPE, BOB).signatures[0]
    both = Envelope(env.payload_type, env.payload_b64, (bob, *env.signatures))
    assert verify_envelope(both, keys_of(ALICE, BOB)) == BOB.key_id
    assert verify_envelope(both, keys_of(ALICE)) == ALICE.key_id


def test_missing_keyid_tries_every_trusted_key() -> None:
    env = signed()
    anonymous = Envelope(env.payload_type, env.payload_b64, (Signature("", env.signatures[0].sig),))
    assert verify_envelope(anonymous, keys_of(BOB, ALICE)) == ALICE.key_id
    with pytest.raises(SignatureError, match="does not verify"):
        verify_envelope(anonymous, keys_of(BOB))
    assert anonymous.to_json()["signatures"] == [{"sig": b64e(env.signatures[0].sig)}]


def test_url_safe_payload_is_accepted_and_kept_verbatim() -> None:
    payload = b"\xfb\xff\xfe" * 5  # standard base64 would contain '+' and '/'
    env = sign_envelope(payload, PAYLOAD_TYPE, ALICE)
    assert "+" in env.payload_b64 or "/" in env.payload_b64
    url_b64 = base64.urlsafe_b64encode(payload).decode("ascii")
    sig_url = base64.urlsafe_b64encode(env.signatures[0].sig).decode("ascii")
    obj = {
        "payload": url_b64,
        "payloadType": PAYLOAD_TYPE,
        "signatures": [{"keyid": ALICE.key_id, "sig": sig_url}],
    }
    parsed = Envelope.from_json(obj, "test")
    assert parsed.payload_b64 == url_b64
    assert parsed.payload == payload
    assert parsed.to_json()["payload"] == url_b64
    assert verify_envelope(parsed, keys_of(ALICE)) == ALICE.key_id


def test_protocol_md_example_envelope_parses() -> None:
    """The spec's example (ECDSA, no keyid) must parse and round-trip unchanged."""
    example = {
        "payload": "aGVsbG8gd29ybGQ=",
        "payloadType": "http://example.com/HelloWorld",
        "signatures": [
            {
                "sig": "A3JqsQGtVsJ2O2xqrI5IcnXip5GToJ3F+FnZ+O88SjtR6rDAajabZKciJTfUiHqJPcIAri"
                "EGAHTVeCUjW2JIZA=="
            }
        ],
    }
    env = Envelope.from_json(example, "protocol.md")
    assert env.payload == b"hello world"
    assert env.signatures[0].keyid == ""
    assert len(env.signatures[0].sig) == 64
    assert env.to_json() == example


# --- strict parsing ------------------------------------------------------------------


def valid_json() -> dict[str, Any]:
    """The envelope as plain JSON, as a forger holds it: any member may be edited."""
    out: dict[str, Any] = json.loads(json.dumps(signed().to_json()))
    return out


def _set(obj: dict[str, Any], path: list[str | int], value: Any) -> None:
    target: Any = obj
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value


def _delete(obj: dict[str, Any], path: list[str | int]) -> None:
    target: Any = obj
    for step in path[:-1]:
        target = target[step]
    del target[path[-1]]


MALFORMED: list[tuple[str, list[str | int], Any, str, str]] = [
    # (case, where, new value or DELETE, expected JSON path, message fragment)
    ("payload missing", ["payload"], "DELETE", "$.envelope.payload", "missing"),
    ("payload not str", ["payload"], 5, "$.envelope.payload", "expected a string"),
    ("payload not b64", ["payload"], "not base64!", "$.envelope.payload", "not base64"),
    ("payload unpadded", ["payload"], "aGVsbG8", "$.envelope.payload", "padding"),
    ("payload mixed", ["payload"], "ab+_", "$.envelope.payload", "not base64"),
    ("payload non-canon", ["payload"], "aGVsbG9=", "$.envelope.payload", "non-canonical"),
    ("payload newline", ["payload"], "aGVs\nbG8=", "$.envelope.payload", "not base64"),
    ("type missing", ["payloadType"], "DELETE", "$.envelope.payloadType", "missing"),
    ("type not str", ["payloadType"], None, "$.envelope.payloadType", "expected a string"),
    ("type empty", ["payloadType"], "", "$.envelope.payloadType", "empty"),
    ("sigs missing", ["signatures"], "DELETE", "$.envelope.signatures", "missing"),
    ("sigs not list", ["signatures"], {}, "$.envelope.signatures", "list"),
    ("sigs empty", ["signatures"], [], "$.envelope.signatures", "no signatures"),
    ("sig not obj", ["signatures", 0], "x", "$.envelope.signatures[0]", "signature object"),
    ("sig missing", ["signatures", 0, "sig"], "DELETE", "$.envelope.signatures[0].sig", "missing"),
    ("sig not str", ["signatures", 0, "sig"], 1, "$.envelope.signatures[0].sig", "string"),
    ("sig bad b64", ["signatures", 0, "sig"], "@@@@", "$.envelope.signatures[0].sig", "base64"),
    ("sig empty", ["signatures", 0, "sig"], "", "$.envelope.signatures[0].sig", "empty"),
    ("keyid not str", ["signatures", 0, "keyid"], 7, "$.envelope.signatures[0].keyid", "string"),
    ("extra field", ["cert"], "x", "$.envelope.cert", "unknown field"),
    ("extra sig field", ["signatures", 0, "x"], 1, "$.envelope.signatures[0].x", "unknown"),
]


@pytest.mark.parametrize(
    ("where", "value", "path", "fragment"),
    [case[1:] for case in MALFORMED],
    ids=[case[0] for case in MALFORMED],
)
def test_malformed_envelope_names_the_path(
    where: list[str | int], value: Any, path: str, fragment: str
) -> None:
    obj = valid_json()
    if value == "DELETE":
        _delete(obj, where)
    else:
        _set(obj, where, value)
    with pytest.raises(InputError) as info:
        Envelope.from_json(obj, "entry.json", "$.envelope")
    assert info.value.file == "entry.json"
    assert info.value.path == path
    assert fragment in info.value.message


def test_second_signature_error_names_its_index() -> None:
    obj = valid_json()
    obj["signatures"].append({"keyid": "k", "sig": "%%%%"})
    with pytest.raises(InputError) as info:
        Envelope.from_json(obj, "f")
    assert info.value.path == "$.signatures[1].sig"


@pytest.mark.parametrize("obj", [None, [], "envelope", 3])
def test_non_object_envelope(obj: Any) -> None:
    with pytest.raises(InputError) as info:
        Envelope.from_json(obj, "f", "$.envelope")
    assert info.value.path == "$.envelope"


# --- independent cross-check with securesystemslib -----------------------------------


def sslib_key(identity: Identity) -> SSlibKey:
    return SSlibKey(
        keyid=identity.key_id,
        keytype="ed25519",
        scheme="ed25519",
        keyval={"public": identity.public.ed25519.hex()},
    )


def test_securesystemslib_verifies_our_envelope() -> None:
    ours = valid_json()
    # from_dict rewrites the signature dicts in place, so hand it a copy.
    theirs = SslibEnvelope.from_dict(copy.deepcopy(ours))
    assert theirs.payload == PAYLOAD
    assert theirs.pae() == pae(PAYLOAD_TYPE, PAYLOAD)
    accepted = theirs.verify([sslib_key(ALICE)], 1)
    assert list(accepted) == [ALICE.key_id]


def test_securesystemslib_rejects_our_tampered_envelope() -> None:
    ours = valid_json()
    ours["payloadType"] = "application/vnd.tracer.other+json"
    with pytest.raises(VerificationError):
        SslibEnvelope.from_dict(ours).verify([sslib_key(ALICE)], 1)


def test_we_verify_a_securesystemslib_envelope() -> None:
    private = Ed25519PrivateKey.from_private_bytes(hashlib.sha256(b"carol").digest())
    public = private.public_key().public_bytes_raw()
    key_id = hashlib.sha256(public).hexdigest()
    key = SSlibKey(key_id, "ed25519", "ed25519", {"public": public.hex()})
    theirs = SslibEnvelope(PAYLOAD, PAYLOAD_TYPE, {})
    theirs.sign(CryptoSigner(private, key))
    env = Envelope.from_json(theirs.to_dict(), "sslib")
    assert env.payload == PAYLOAD
    assert verify_envelope(env, {key_id: public}) == key_id


# -- the fast base64 path decides exactly as the full one ----------------------------------


def _outcome(fn: Any, text: str) -> Any:
    try:
        return ("ok", fn(text))
    except ValueError as exc:
        return ("refused", str(exc))


_B64_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_= \\n.é"


@settings(max_examples=2000, deadline=None)
@given(
    st.one_of(
        st.text(alphabet=_B64_CHARS, max_size=16),
        st.binary(max_size=12).map(lambda b: base64.b64encode(b).decode()),
        st.binary(max_size=12).map(lambda b: base64.urlsafe_b64encode(b).decode()),
        st.tuples(st.binary(min_size=1, max_size=12), st.integers(0, 63)).map(
            # flip pad bits or the last character: non-canonical spellings
            lambda t: (
                base64.b64encode(t[0]).decode().rstrip("=")[:-1]
                + _B64_CHARS[t[1]]
                + "=" * (-len(base64.b64encode(t[0]).decode().rstrip("=")) % 4)
            )
        ),
    )
)
def test_fast_base64_matches_reference(text: str) -> None:
    from store.dsse import _b64decode_either, _b64decode_slow

    assert _outcome(_b64decode_either, text) == _outcome(_b64decode_slow, text)
