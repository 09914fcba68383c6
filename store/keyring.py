"""Evidence encryption at rest: per-collection data keys wrapped to each reader.

A collection's data key encrypts its texts with AES-256-GCM; the key itself is stored
only wrapped (X25519 + HKDF + AES-GCM) to the custodian and to every investigator whose
scopes include the collection.  Holding the DuckDB file is therefore not holding the
evidence.  Digests stay over plaintext, so checksums keep their meaning.

Wrapped keys live outside the Merkle log on purpose: they are random, carry no evidence,
and tampering with them can only deny decryption, never forge text, because every
decrypted text is checked against the digest the log committed to.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from store.crypto import (
    Identity,
    aead_decrypt,
    aead_encrypt,
    new_data_key,
    sha256_hex,
    unwrap_data_key,
    wrap_data_key,
)
from store.errors import UnwrapError
from store.rows import BlobRow

if TYPE_CHECKING:
    # types only: a worker that checks log rows imports this module, never a vault
    from store.batch import Batch
    from store.vault import Vault

__all__ = ["ALL_SCOPES", "DataKeys", "in_scope"]

ALL_SCOPES = "*"


def in_scope(scopes: Iterable[str], collection: str) -> bool:
    s = scopes if isinstance(scopes, (tuple, list, set, frozenset)) else set(scopes)
    return ALL_SCOPES in s or collection in s


def _context(collection: str, dk_id: str) -> bytes:
    return f"{collection}\n{dk_id}".encode()


def _aad(digest: str, collection: str) -> bytes:
    return f"{digest}\n{collection}".encode()


class DataKeys:
    """The data keys one identity can unwrap, and (for writers) the means to add more."""

    def __init__(self, vault: Vault, identity: Identity):
        self.vault = vault
        self.identity = identity
        self.keys: dict[str, bytes] = {}
        self.current: dict[str, tuple[int, str]] = {}
        self.failed: list[str] = []
        for row in vault.blobs.data_key_rows(identity.key_id):
            try:
                key = unwrap_data_key(identity, json.loads(row.wrapped), _context(row.collection, row.dk_id))
            except (UnwrapError, ValueError, KeyError):
                self.failed.append(row.dk_id)
                continue
            self.keys[row.dk_id] = key
            if row.generation >= self.current.get(row.collection, (-1, ""))[0]:
                self.current[row.collection] = (row.generation, row.dk_id)

    @property
    def collections(self) -> set[str]:
        return set(self.current)

    def decrypt(self, digest: str) -> tuple[str, bytes] | None:
        """(collection, plaintext) for the first readable copy, or None if none is readable.

        Raises UnwrapError when a copy we hold the key for fails authentication: that is
        tampering, not lack of access, and must not be reported as "out of scope".
        """
        rows = self.vault.blobs.rows(digest)
        for collection, dk_id, nonce, ct in rows:
            key = self.keys.get(dk_id)
            if key is None:
                continue
            return collection, self.open_row(digest, collection, dk_id, nonce, ct)
        return None

    def open_row(self, digest: str, collection: str, dk_id: str, nonce: bytes, ct: bytes) -> bytes:
        """Decrypt one stored row with a key we hold (KeyError if we hold none).

        Raises UnwrapError when the row fails authentication, like `aead_decrypt`.
        """
        return aead_decrypt(self.keys[dk_id], nonce, ct, _aad(digest, collection))

    def decrypt_many(
        self,
        digests: Sequence[str],
        rows: Mapping[str, list[BlobRow]] | None = None,
    ) -> dict[str, tuple[str, bytes] | UnwrapError]:
        """`decrypt` for many digests with one blob query (or over `rows` already read).

        A digest with no readable copy is absent from the result; a copy that fails
        authentication maps to its UnwrapError instead of raising, so one altered blob
        does not hide the verdicts of the others.
        """
        if rows is None:
            rows = self.vault.blobs.rows_many(digests)
        out: dict[str, tuple[str, bytes] | UnwrapError] = {}
        for digest in digests:
            if digest in out:
                continue
            for collection, dk_id, nonce, ct in rows.get(digest, ()):
                if dk_id not in self.keys:
                    continue
                try:
                    out[digest] = (collection, self.open_row(digest, collection, dk_id, nonce, ct))
                except UnwrapError as exc:
                    out[digest] = exc
                break
        return out

    def encrypt_into(self, batch: Batch, collection: str, text: bytes, recipients: dict[str, bytes]) -> str:
        """Encrypt `text` for `collection` into the batch; returns its digest."""
        digest = sha256_hex(text)
        _gen, dk_id = self.ensure(batch, collection, recipients)
        nonce, ct = aead_encrypt(self.keys[dk_id], text, _aad(digest, collection))
        batch.put_blob(digest, collection, dk_id, nonce, ct)
        return digest

    def ensure(self, batch: Batch, collection: str, recipients: dict[str, bytes]) -> tuple[int, str]:
        if collection not in self.current:
            self.rotate(batch, collection, recipients)
        return self.current[collection]

    def rotate(self, batch: Batch, collection: str, recipients: dict[str, bytes]) -> str:
        """New generation of `collection`'s key, wrapped to `recipients` (key_id -> X25519)."""
        generation = self.current.get(collection, (-1, ""))[0] + 1
        key = new_data_key()
        dk_id = f"{collection}#{generation}:{sha256_hex(key)[:16]}"
        targets = dict(recipients)
        targets[self.identity.key_id] = self.identity.public.x25519
        for recipient, x25519 in sorted(targets.items()):
            batch.put_wrap(
                dk_id,
                collection,
                generation,
                recipient,
                wrap_data_key(key, x25519, _context(collection, dk_id)),
            )
        self.keys[dk_id] = key
        self.current[collection] = (generation, dk_id)
        return dk_id

    def share(self, batch: Batch, collection: str, recipient: str, x25519: bytes) -> int:
        """Wrap every generation we hold of `collection` to a newly granted reader."""
        count = 0
        for dk_id, key in self.keys.items():
            if dk_id.startswith(f"{collection}#"):
                gen = int(dk_id.split("#", 1)[1].split(":", 1)[0])
                batch.put_wrap(
                    dk_id,
                    collection,
                    gen,
                    recipient,
                    wrap_data_key(key, x25519, _context(collection, dk_id)),
                )
                count += 1
        return count
