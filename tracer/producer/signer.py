"""The producer's signing key, unlocked once and held for the life of the process.

The key file is the one `tracer keygen` writes (passphrase-encrypted PKCS#8). The
unlocked key never leaves this object: it is not written to the outbox, not logged,
and not shown by `repr`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from store.crypto import Identity, load_identity
from store.errors import KeyFileError
from store.producer import SignedInputJSON, draft_to_input

__all__ = ["Signer"]


class Signer:
    """Signs manifests as DSSE envelopes (Ed25519 over RFC 8785 bytes), like `tracer pack`."""

    __slots__ = ("_identity",)

    def __init__(self, identity: Identity) -> None:
        if not isinstance(identity, Identity):
            raise TypeError("Signer needs an unlocked store.crypto.Identity")
        self._identity = identity

    @classmethod
    def from_key_file(cls, path: str | os.PathLike[str], passphrase: str | bytes | None = None) -> Signer:
        """Unlock `path` with `passphrase`, or with `TRACER_PASSPHRASE` when it is None.

        Call this once per process and share the result: unlocking is deliberately slow
        (scrypt) and is the only moment the passphrase is needed.
        """
        if passphrase is None:
            env = os.environ.get("TRACER_PASSPHRASE")
            if env is None:
                raise KeyFileError(f"{path}: no passphrase given and TRACER_PASSPHRASE is not set")
            passphrase = env
        secret = passphrase.encode("utf-8") if isinstance(passphrase, str) else passphrase
        return cls(load_identity(Path(path), secret))

    @property
    def key_id(self) -> str:
        """Lowercase hex SHA-256 of the Ed25519 public key: what `tracer keys add` registers."""
        return self._identity.key_id

    @property
    def name(self) -> str:
        return self._identity.name

    def __repr__(self) -> str:
        return f"Signer(name={self._identity.name!r}, key_id={self.key_id[:16]!r})"

    def sign_draft(self, draft: dict[str, Any], *, consume: bool = False) -> SignedInputJSON:
        """The ingest file for a draft with inline texts (the code `tracer pack` runs).
        `consume`: the draft was built for this call and may be changed (no deep copy)."""
        return draft_to_input(draft, self._identity, copy_draft=not consume)
