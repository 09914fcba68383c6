"""Signed notes and checkpoints, pinned to Go's golang.org/x/mod/sumdb/note vectors."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import given
from hypothesis import strategies as st

from store.crypto import Identity, b64d, b64e
from store.errors import InputError, SignatureError
from store.note import (
    Checkpoint,
    add_signature,
    note_key_id,
    open_note,
    parse_verifier_key,
    sign_note,
    verifier_key,
    verify_checkpoint,
)

# Vectors from golang.org/x/mod sumdb/note/note_test.go (TestSign, TestOpen).
PETER_VKEY = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW"
PETER_SKEY = "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz"
ENOCH_VKEY = "EnochRoot+af0cfe78+ATtqJ7zOtqQtYqOo0CpvDXNlMhV3HeJDpjrASKGLWdop"
TEXT = "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n"
PETER_SIG = (
    "— PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngot"
    "pRZb6KE6RyyBwJnAM=\n"
)
ENOCH_SIG = (
    "— EnochRoot rwz+eBzmZa0SO3NbfRGzPCpDckykFXSdeX+MNtCOXm2/5n2tiOHp+vAF1aGrQ5ovTG01oOTGwnWLox33"
    "WWd1RvMc+QQ=\n"
)
SIGNED = TEXT + "\n" + PETER_SIG


def go_signer(skey: str) -> tuple[str, bytes, Callable[[bytes], bytes]]:
    """Decode a Go "PRIVATE+KEY+name+hash+base64(0x01 || seed)" signer key."""
    private, key, name, _hash, key_b64 = skey.split("+", 4)  # base64 may contain "+"
    assert (private, key) == ("PRIVATE", "KEY")
    raw = base64.b64decode(key_b64)
    assert raw[0] == 1 and len(raw) == 33
    signing = Ed25519PrivateKey.from_private_bytes(raw[1:])
    return name, signing.public_key().public_bytes_raw(), signing.sign


PETER_NAME, PETER_PUB, PETER_SIGN = go_signer(PETER_SKEY)
ENOCH_NAME, ENOCH_PUB = parse_verifier_key(ENOCH_VKEY)


def ident_verifiers(*identities: Identity) -> dict[str, bytes]:
    return {i.name: i.public.ed25519 for i in identities}


# --- keys ----------------------------------------------------------------------------


def test_go_key_id_and_verifier_key() -> None:
    assert PETER_NAME == "PeterNeumann"
    assert note_key_id(PETER_NAME, PETER_PUB) == bytes.fromhex("c74f20a3")
    assert verifier_key(PETER_NAME, PETER_PUB) == PETER_VKEY
    assert parse_verifier_key(PETER_VKEY) == (PETER_NAME, PETER_PUB)
    assert note_key_id(ENOCH_NAME, ENOCH_PUB) == bytes.fromhex("af0cfe78")


def test_key_id_is_the_spec_formula() -> None:
    pub = Identity.from_seed("log", b"x").public.ed25519
    expected = hashlib.sha256(b"example.com/log\n\x01" + pub).digest()[:4]
    assert note_key_id("example.com/log", pub) == expected


def _verifier_key_manglings() -> list[str]:
    """Every proper substring and every single-character bump, as Go's TestNewVerifier."""
    b = PETER_VKEY
    out = {b[i:j] for i in range(len(b) + 1) for j in range(i + 1, len(b) + 1)} - {b}
    out |= {b[:i] + chr(ord(b[i]) + 1) + b[i + 1 :] for i in range(len(b))}
    # From Go: wrong key length and unknown algorithm, each with a re-adjusted key hash.
    out.add("PeterNeumann+cc469956+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TWBADKEY==")
    out.add("PeterNeumann+173116ae+ZRpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW")
    return sorted(out)


def test_every_mangled_verifier_key_is_refused() -> None:
    accepted = []
    for mangled in _verifier_key_manglings():
        try:
            parse_verifier_key(mangled)
        except InputError:
            continue
        accepted.append(mangled)
    assert accepted == []


def test_verifier_key_error_names_the_part() -> None:
    with pytest.raises(InputError) as info:
        parse_verifier_key(PETER_VKEY.replace("c74f20a3", "c74f20a4"), file="trust.toml")
    assert info.value.file == "trust.toml"
    assert info.value.path == "key id"
    assert "c74f20a3" in info.value.message


@pytest.mark.parametrize("name", ["", "a+b", "a b", "a\u00a0b", "a\tb"])
def test_invalid_key_names_refused(name: str) -> None:
    with pytest.raises(ValueError):
        verifier_key(name, PETER_PUB)
    with pytest.raises(ValueError):
        sign_note(TEXT, name, PETER_PUB, PETER_SIGN)


# --- signing: Go golden vector -------------------------------------------------------


def test_sign_matches_go_byte_for_byte() -> None:
    assert sign_note(TEXT, PETER_NAME, PETER_PUB, PETER_SIGN) == SIGNED


def test_open_go_note() -> None:
    assert open_note(SIGNED, {PETER_NAME: PETER_PUB}) == (TEXT, [PETER_NAME])


def test_open_go_cosigned_note() -> None:
    note = TEXT + "\n" + PETER_SIG + ENOCH_SIG
    both = {PETER_NAME: PETER_PUB, ENOCH_NAME: ENOCH_PUB}
    assert open_note(note, both) == (TEXT, [PETER_NAME, ENOCH_NAME])
    # Unknown signers are ignored, as signed-note.md requires.
    assert open_note(note, {PETER_NAME: PETER_PUB}) == (TEXT, [PETER_NAME])
    assert open_note(note, {ENOCH_NAME: ENOCH_PUB}) == (TEXT, [ENOCH_NAME])


def test_sign_requires_final_newline() -> None:
    with pytest.raises(ValueError, match="newline"):
        sign_note("abc", PETER_NAME, PETER_PUB, PETER_SIGN)


def test_sign_refuses_mismatched_public_key() -> None:
    with pytest.raises(SignatureError):
        sign_note(TEXT, PETER_NAME, ENOCH_PUB, PETER_SIGN)


def test_sign_refuses_control_characters() -> None:
    with pytest.raises(InputError, match="control character"):
        sign_note("a\tb\n", PETER_NAME, PETER_PUB, PETER_SIGN)


def test_text_with_blank_lines_round_trips() -> None:
    alice = Identity.from_seed("alice", b"a")
    text = "first\n\nthird\n\n"
    note = sign_note(text, alice.name, alice.public.ed25519, alice.sign)
    assert open_note(note, ident_verifiers(alice)) == (text, ["alice"])


# --- cosigning -----------------------------------------------------------------------


def test_add_signature_cosigns_go_note() -> None:
    enoch = Identity.from_seed("EnochRoot", b"enoch")
    note = add_signature(SIGNED, enoch.name, enoch.public.ed25519, enoch.sign)
    assert note.startswith(SIGNED)
    verifiers = {PETER_NAME: PETER_PUB, enoch.name: enoch.public.ed25519}
    assert open_note(note, verifiers) == (TEXT, [PETER_NAME, "EnochRoot"])


def test_add_signature_replaces_same_key_like_go() -> None:
    bogus = f"— {PETER_NAME} {b64e(bytes.fromhex('c74f20a3') + bytes(64))}\n"
    assert add_signature(TEXT + "\n" + bogus, PETER_NAME, PETER_PUB, PETER_SIGN) == SIGNED
    assert add_signature(SIGNED, PETER_NAME, PETER_PUB, PETER_SIGN) == SIGNED


def test_add_signature_keeps_other_signatures_in_order() -> None:
    enoch_first = TEXT + "\n" + ENOCH_SIG
    assert add_signature(enoch_first, PETER_NAME, PETER_PUB, PETER_SIGN) == (
        TEXT + "\n" + ENOCH_SIG + PETER_SIG
    )


# --- opening: rejection --------------------------------------------------------------


def test_no_known_signer() -> None:
    with pytest.raises(SignatureError, match="no signature by a known key") as info:
        open_note(TEXT + "\n" + PETER_SIG + ENOCH_SIG, {})
    assert "PeterNeumann+c74f20a3" in str(info.value)


def test_same_name_other_key_is_ignored_not_trusted() -> None:
    """Name matches but key id does not: an unknown key, so nothing verifies."""
    with pytest.raises(SignatureError, match="no signature by a known key"):
        open_note(SIGNED, {PETER_NAME: ENOCH_PUB})


def test_invalid_signature_by_known_key_rejects_note() -> None:
    corrupted = PETER_SIG[:60] + "ABCD" + PETER_SIG[60:]  # as in Go's TestOpen
    with pytest.raises(SignatureError, match=r"invalid signature for key PeterNeumann\+c74f20a3"):
        open_note(TEXT + "\n" + corrupted, {PETER_NAME: PETER_PUB})


def test_invalid_known_signature_rejects_even_beside_a_valid_one() -> None:
    bad = PETER_SIG[:60] + "ABCD" + PETER_SIG[60:]
    with pytest.raises(SignatureError, match="invalid signature"):
        open_note(TEXT + "\n" + PETER_SIG + bad, {PETER_NAME: PETER_PUB})


def test_tampered_text_rejected() -> None:
    tampered = SIGNED.replace("cryptography", "cryptografy")
    with pytest.raises(SignatureError, match="invalid signature"):
        open_note(tampered, {PETER_NAME: PETER_PUB})


def test_duplicate_valid_signatures_reported_once() -> None:
    assert open_note(SIGNED + PETER_SIG, {PETER_NAME: PETER_PUB}) == (TEXT, [PETER_NAME])


MALFORMED_NOTES = [
    ("text only", TEXT, "$"),
    ("blank line, no signatures", TEXT + "\n", "$"),
    ("no final newline", TEXT + "\n" + PETER_SIG[:-1], "$"),
    ("control character", "\x01" + TEXT + "\n" + PETER_SIG, "line 1"),
    ("carriage return", TEXT.replace("\n", "\r\n", 1) + "\n" + PETER_SIG, "line 1"),
    (
        "name with space",
        TEXT + "\n— Bad Name x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGU\n",
        "line 4",
    ),
    ("unexpected line", TEXT + "\n" + PETER_SIG + "Unexpected line.\n", "line 5"),
    ("hyphen not em dash", TEXT + "\n" + PETER_SIG.replace("—", "-"), "line 4"),
    ("no signature", TEXT + "\n— PeterNeumann\n", "line 4"),
    ("empty signature", TEXT + "\n— PeterNeumann \n", "line 4"),
    ("bad base64", TEXT + "\n— PeterNeumann x08go/ZJ!!==\n", "line 4"),
    ("too short", TEXT + "\n— PeterNeumann x08gow==\n", "line 4"),
    ("too many signatures", TEXT + "\n" + PETER_SIG * 101, "$"),
]


@pytest.mark.parametrize(
    ("note", "path"),
    [case[1:] for case in MALFORMED_NOTES],
    ids=[case[0] for case in MALFORMED_NOTES],
)
def test_malformed_note(note: str, path: str) -> None:
    with pytest.raises(InputError) as info:
        open_note(note, {PETER_NAME: PETER_PUB})
    assert info.value.file == "note"
    assert info.value.path == path


def test_sixteen_signatures_accepted() -> None:
    """signed-note.md: verifiers MUST accept at least 16 signatures."""
    others = [Identity.from_seed(f"w{i}.example", b"%d" % i) for i in range(15)]
    note = SIGNED
    for w in others:
        note = add_signature(note, w.name, w.public.ed25519, w.sign)
    text, names = open_note(note, {PETER_NAME: PETER_PUB} | ident_verifiers(*others))
    assert text == TEXT
    assert len(names) == 16


# --- checkpoints ---------------------------------------------------------------------

SPEC_CHECKPOINT = "example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n"
LOG = Identity.from_seed("example.com/log", b"log")
ROOT = hashlib.sha256(b"root").digest()


def test_parse_spec_example() -> None:
    cp = Checkpoint.parse(SPEC_CHECKPOINT)
    assert cp.origin == "example.com/behind-the-sofa"
    assert cp.size == 20852163
    assert cp.root == b64d("CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=")
    assert cp.extensions == ()
    assert cp.body() == SPEC_CHECKPOINT


def test_checkpoint_sign_verify_round_trip() -> None:
    cp = Checkpoint("example.com/log", 7, ROOT, ("ext one", "ext two"))
    note = cp.sign(LOG)
    assert note.startswith(cp.body() + "\n— example.com/log ")
    assert verify_checkpoint(note, LOG.name, LOG.public.ed25519) == cp
    assert verify_checkpoint(note, LOG.name, LOG.public.ed25519, origin="example.com/log") == cp
    assert open_note(note, ident_verifiers(LOG)) == (cp.body(), [LOG.name])


def test_checkpoint_interoperates_with_go_note_keys() -> None:
    """A checkpoint signed with the Go test key verifies through the verifier-key string."""
    cp = Checkpoint("PeterNeumann", 0, bytes(32))
    note = sign_note(cp.body(), PETER_NAME, PETER_PUB, PETER_SIGN)
    name, pub = parse_verifier_key(PETER_VKEY)
    assert verify_checkpoint(note, name, pub) == cp


def test_empty_tree_size_zero() -> None:
    cp = Checkpoint.parse("o\n0\n" + b64e(ROOT) + "\n")
    assert cp.size == 0


def test_origin_mismatch_refused() -> None:
    note = Checkpoint("example.com/log", 1, ROOT).sign(LOG)
    with pytest.raises(InputError, match="origin"):
        verify_checkpoint(note, LOG.name, LOG.public.ed25519, origin="example.com/other")


GOOD_ROOT = b64e(ROOT)
URL_SAFE_ROOT = base64.urlsafe_b64encode(b"\xff" * 32).decode("ascii")
BAD_CHECKPOINTS = [
    ("no final newline", f"o\n1\n{GOOD_ROOT}", "$"),
    ("two lines", "o\n1\n", "$"),
    ("empty origin", f"\n1\n{GOOD_ROOT}\n", "line 1"),
    ("leading zero", f"o\n01\n{GOOD_ROOT}\n", "line 2"),
    ("double zero", f"o\n00\n{GOOD_ROOT}\n", "line 2"),
    ("negative", f"o\n-1\n{GOOD_ROOT}\n", "line 2"),
    ("plus sign", f"o\n+1\n{GOOD_ROOT}\n", "line 2"),
    ("space", f"o\n 1\n{GOOD_ROOT}\n", "line 2"),
    ("decimal point", f"o\n1.0\n{GOOD_ROOT}\n", "line 2"),
    ("underscore", f"o\n1_000\n{GOOD_ROOT}\n", "line 2"),
    ("non-ascii digit", f"o\n\u0661\n{GOOD_ROOT}\n", "line 2"),
    ("empty size", f"o\n\n{GOOD_ROOT}\n", "line 2"),
    ("size beyond int64", f"o\n{2**63}\n{GOOD_ROOT}\n", "line 2"),
    ("root not base64", "o\n1\nnot base64!\n", "line 3"),
    ("root 31 bytes", f"o\n1\n{b64e(bytes(31))}\n", "line 3"),
    ("root 33 bytes", f"o\n1\n{b64e(bytes(33))}\n", "line 3"),
    ("root url-safe", f"o\n1\n{URL_SAFE_ROOT}\n", "line 3"),
    ("root non-canonical", f"o\n1\n{GOOD_ROOT[:-2]}B=\n", "line 3"),
    ("empty extension", f"o\n1\n{GOOD_ROOT}\n\n", "line 4"),
    ("control char", f"o\t\n1\n{GOOD_ROOT}\n", "line 1"),
]


@pytest.mark.parametrize(
    ("text", "path"),
    [case[1:] for case in BAD_CHECKPOINTS],
    ids=[case[0] for case in BAD_CHECKPOINTS],
)
def test_bad_checkpoint_text(text: str, path: str) -> None:
    with pytest.raises(InputError) as info:
        Checkpoint.parse(text)
    assert info.value.file == "checkpoint"
    assert info.value.path == path


def test_bad_checkpoint_construction() -> None:
    with pytest.raises(ValueError):
        Checkpoint("", 1, ROOT)
    with pytest.raises(ValueError):
        Checkpoint("o", -1, ROOT)
    with pytest.raises(ValueError):
        Checkpoint("o", 1, ROOT[:31])
    with pytest.raises(ValueError):
        Checkpoint("o", 1, ROOT, ("",))
    with pytest.raises(ValueError):
        Checkpoint("o\nx", 1, ROOT)


def _signed_checkpoint() -> tuple[Checkpoint, str]:
    cp = Checkpoint("example.com/log", 12, ROOT)
    return cp, cp.sign(LOG)


@pytest.mark.parametrize(
    "tamper",
    [
        lambda n: n.replace("example.com/log\n", "example.com/lag\n", 1),
        lambda n: n.replace("\n12\n", "\n13\n", 1),
        lambda n: n.replace(GOOD_ROOT, b64e(hashlib.sha256(b"other").digest()), 1),
    ],
    ids=["origin", "size", "root"],
)
def test_tampered_checkpoint_body_rejected(tamper: Callable[[str], str]) -> None:
    _, note = _signed_checkpoint()
    forged = tamper(note)
    assert forged != note
    with pytest.raises(SignatureError, match="invalid signature"):
        verify_checkpoint(forged, LOG.name, LOG.public.ed25519)


@pytest.mark.parametrize("byte_index", [4, 20, 67])
def test_tampered_checkpoint_signature_byte_rejected(byte_index: int) -> None:
    cp, note = _signed_checkpoint()
    head, sig_line = note[: len(cp.body()) + 1], note[len(cp.body()) + 1 :]
    prefix, sig_b64 = sig_line.rstrip("\n").rsplit(" ", 1)
    raw = bytearray(b64d(sig_b64))
    raw[byte_index] ^= 0x01
    forged = f"{head}{prefix} {b64e(bytes(raw))}\n"
    with pytest.raises(SignatureError, match="invalid signature"):
        verify_checkpoint(forged, LOG.name, LOG.public.ed25519)


def test_tampered_checkpoint_key_id_byte_means_unknown_key() -> None:
    cp, note = _signed_checkpoint()
    head, sig_line = note[: len(cp.body()) + 1], note[len(cp.body()) + 1 :]
    prefix, sig_b64 = sig_line.rstrip("\n").rsplit(" ", 1)
    raw = bytearray(b64d(sig_b64))
    raw[0] ^= 0x01
    with pytest.raises(SignatureError, match="no signature by a known key"):
        verify_checkpoint(f"{head}{prefix} {b64e(bytes(raw))}\n", LOG.name, LOG.public.ed25519)


def test_checkpoint_wrong_key_rejected() -> None:
    _, note = _signed_checkpoint()
    other = Identity.from_seed("example.com/log", b"impostor")
    with pytest.raises(SignatureError, match="no signature by a known key"):
        verify_checkpoint(note, other.name, other.public.ed25519)
    with pytest.raises(SignatureError, match="no signature by a known key"):
        verify_checkpoint(note, "example.com/other", LOG.public.ed25519)


def test_checkpoint_signed_by_impostor_with_same_name_rejected() -> None:
    impostor = Identity.from_seed("example.com/log", b"impostor")
    note = Checkpoint("example.com/log", 12, ROOT).sign(impostor)
    with pytest.raises(SignatureError):
        verify_checkpoint(note, LOG.name, LOG.public.ed25519)


def test_verify_checkpoint_refuses_malformed_body() -> None:
    note = sign_note("example.com/log\n012\n" + GOOD_ROOT + "\n", LOG.name, LOG.public.ed25519, LOG.sign)
    with pytest.raises(InputError) as info:
        verify_checkpoint(note, LOG.name, LOG.public.ed25519)
    assert info.value.path == "line 2"


_line = st.text(alphabet=st.characters(min_codepoint=0x20, codec="utf-8"), min_size=1)


@given(
    origin=_line,
    size=st.integers(min_value=0, max_value=2**63 - 1),
    root=st.binary(min_size=32, max_size=32),
    extensions=st.lists(_line, max_size=3).map(tuple),
)
def test_checkpoint_body_parse_round_trip(
    origin: str, size: int, root: bytes, extensions: tuple[str, ...]
) -> None:
    cp = Checkpoint(origin, size, root, extensions)
    assert Checkpoint.parse(cp.body()) == cp


def test_verifier_key_whose_base64_contains_plus_round_trips() -> None:
    from store.crypto import Identity
    from store.note import parse_verifier_key, verifier_key

    for i in range(200):
        ident = Identity.from_seed("custodian", f"seed-{i}".encode())
        text = verifier_key("custodian", ident.public.ed25519)
        if "+" in text.split("+", 2)[2]:
            assert parse_verifier_key(text) == ("custodian", ident.public.ed25519)
            return
    raise AssertionError("no key with '+' in its base64 among 200 seeds")
