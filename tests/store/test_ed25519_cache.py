"""Signature checks reuse one public-key object per key: the cache must never let a
signature pass under a key other than the one it was made with, nor remember a refused key."""

from __future__ import annotations

import pytest

from store.crypto import Identity, ed25519_verify
from store.errors import SignatureError

ALICE = Identity.from_seed("alice", b"cache-alice")
BOB = Identity.from_seed("bob", b"cache-bob")


def test_a_cached_key_still_refuses_another_signers_signature() -> None:
    message = b"statement"
    ed25519_verify(ALICE.public.ed25519, ALICE.sign(message), message)
    ed25519_verify(ALICE.public.ed25519, ALICE.sign(message), message)  # now from the cache
    with pytest.raises(SignatureError):
        ed25519_verify(ALICE.public.ed25519, BOB.sign(message), message)
    with pytest.raises(SignatureError):
        ed25519_verify(ALICE.public.ed25519, ALICE.sign(message), message + b".")


def test_a_key_that_is_no_key_is_refused_every_time() -> None:
    for _ in range(2):
        with pytest.raises(SignatureError):
            ed25519_verify(b"\x00" * 31, bytes(64), b"m")
