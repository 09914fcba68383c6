"""The one module that touches cryptographic primitives.

Everything else in tracer calls these functions, so that algorithm choices,
key-file formats and error handling live in one reviewed place.

Identities hold two keys: an Ed25519 key for signing (DSSE, signed notes) and an
X25519 key for receiving wrapped data keys.  Both live in one passphrase-encrypted
file (two PKCS#8 PEM blocks), so "holding the identity" is one thing to protect.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidSignature, InvalidTag
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)
from cryptography.hazmat.primitives.asymmetric.x25519 import (
    X25519PrivateKey,
    X25519PublicKey,
)
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from store.errors import KeyFileError, SignatureError, UnwrapError

__all__ = [
    "Identity",
    "PublicIdentity",
    "aead_decrypt",
    "aead_encrypt",
    "b64d",
    "b64e",
    "ed25519_verify",
    "is_sha256_hex",
    "key_id_of",
    "load_identity",
    "load_public",
    "new_data_key",
    "sha256_hex",
    "unwrap_data_key",
    "wrap_data_key",
]

_PEM_END = b"-----END ENCRYPTED PRIVATE KEY-----"
_WRAP_INFO = b"tracer/wrap/v1"


def b64e(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def b64d(text: str) -> bytes:
    return base64.b64decode(text.encode("ascii"), validate=True)


_SHA256_HEX = re.compile(r"[0-9a-f]{64}")


def is_sha256_hex(value: object) -> bool:
    """True for a SHA-256 digest as tracer spells one: 64 lowercase hex digits, nothing
    after them (no trailing newline)."""
    return isinstance(value, str) and _SHA256_HEX.fullmatch(value) is not None


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def key_id_of(ed25519_public: bytes) -> str:
    """Key id = hex SHA-256 of the raw 32-byte public key (what securesystemslib expects)."""
    return sha256_hex(ed25519_public)


@functools.lru_cache(maxsize=1024)
def _ed25519_public(public: bytes) -> Ed25519PublicKey:
    """A verify pass checks thousands of signatures by a handful of keys: each key's
    object is built once (a refused key raises, and nothing is cached for it)."""
    return Ed25519PublicKey.from_public_bytes(public)


def ed25519_verify(public: bytes, signature: bytes, message: bytes) -> None:
    """Raise SignatureError unless `signature` is valid; never returns a bool to forget."""
    try:
        _ed25519_public(bytes(public)).verify(signature, message)
    except (InvalidSignature, ValueError) as exc:
        raise SignatureError("Ed25519 signature does not verify") from exc


@dataclass(frozen=True)
class PublicIdentity:
    """The public half of an identity, as written to NAME.pub."""

    name: str
    ed25519: bytes
    x25519: bytes

    @property
    def key_id(self) -> str:
        return key_id_of(self.ed25519)

    def to_json(self) -> dict[str, str]:
        return {
            "name": self.name,
            "key_id": self.key_id,
            "ed25519": b64e(self.ed25519),
            "x25519": b64e(self.x25519),
        }


class Identity:
    """A private identity: signs with Ed25519, receives data keys with X25519."""

    def __init__(self, name: str, signing: Ed25519PrivateKey, agreement: X25519PrivateKey):
        self.name = name
        self._signing = signing
        self._agreement = agreement
        self.public = PublicIdentity(
            name=name,
            ed25519=signing.public_key().public_bytes_raw(),
            x25519=agreement.public_key().public_bytes_raw(),
        )

    @classmethod
    def generate(cls, name: str) -> Identity:
        return cls(name, Ed25519PrivateKey.generate(), X25519PrivateKey.generate())

    @classmethod
    def from_seed(cls, name: str, seed: bytes) -> Identity:
        """Deterministic identity for fixtures and the sample vault; never for real users."""
        ed = hashlib.sha256(b"tracer/ed25519/" + seed).digest()
        xx = hashlib.sha256(b"tracer/x25519/" + seed).digest()
        return cls(
            name,
            Ed25519PrivateKey.from_private_bytes(ed),
            X25519PrivateKey.from_private_bytes(xx),
        )

    @property
    def key_id(self) -> str:
        return self.public.key_id

    def sign(self, message: bytes) -> bytes:
        return self._signing.sign(message)

    def agree(self, peer_x25519: bytes) -> bytes:
        return self._agreement.exchange(X25519PublicKey.from_public_bytes(peer_x25519))

    def save(self, directory: Path, passphrase: bytes) -> tuple[Path, Path]:
        """Write NAME.key (encrypted PKCS#8, two PEM blocks) and NAME.pub (JSON)."""
        directory.mkdir(parents=True, exist_ok=True)
        enc = serialization.BestAvailableEncryption(passphrase)
        pem = b"".join(
            k.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, enc)
            for k in (self._signing, self._agreement)
        )
        key_path = directory / f"{self.name}.key"
        pub_path = directory / f"{self.name}.pub"
        fd = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(pem)
        pub_path.write_text(json.dumps(self.public.to_json(), indent=2) + "\n", encoding="utf-8")
        return key_path, pub_path


def load_identity(path: Path, passphrase: bytes, name: str | None = None) -> Identity:
    """Load NAME.key; wrong passphrase or a damaged file raises KeyFileError."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise KeyFileError(f"{path}: cannot read key file ({exc.strerror})") from exc
    blocks = [b + _PEM_END for b in raw.split(_PEM_END) if b.strip()]
    if len(blocks) != 2:
        raise KeyFileError(f"{path}: not a tracer key file (expected two encrypted PEM blocks)")
    try:
        signing = serialization.load_pem_private_key(blocks[0], password=passphrase)
        agreement = serialization.load_pem_private_key(blocks[1], password=passphrase)
    except (ValueError, TypeError) as exc:
        raise KeyFileError(f"{path}: wrong passphrase or damaged key file") from exc
    if not isinstance(signing, Ed25519PrivateKey) or not isinstance(agreement, X25519PrivateKey):
        raise KeyFileError(f"{path}: key file must hold an Ed25519 and an X25519 key")
    return Identity(name or path.stem, signing, agreement)


_PUB_FIELDS = frozenset({"name", "key_id", "ed25519", "x25519"})
_PUB_LIMIT = 64 * 1024


def load_public(path: Path) -> PublicIdentity:
    """Read NAME.pub as strictly as a manifest: I-JSON (no duplicate members, no NaN),
    exactly the known fields, a signer name (`store.textrules.NAME_RULE`), two 32-byte
    keys, and a key_id (if present) that is the SHA-256 of the Ed25519 key.  Errors name
    the file and the field."""
    from store.canonical import parse_strict
    from store.errors import InputError
    from store.textrules import name_problem

    file = str(path)
    raw = _read_public_file(path)
    try:
        data = parse_strict(raw, file)
    except InputError as exc:
        raise KeyFileError(f"{path}: not a valid public key file: {exc.path}: {exc.message}") from exc
    if not isinstance(data, dict):
        raise KeyFileError(f"{path}: $: expected a JSON object")
    extra = sorted(set(data) - _PUB_FIELDS)
    if extra:
        raise KeyFileError(f"{path}: $.{extra[0]}: unknown field in a public key file")
    keys = {name: _public_key(path, name, data.get(name)) for name in ("ed25519", "x25519")}
    problem = name_problem(data.get("name"))
    if problem:
        raise KeyFileError(f"{path}: $.name: {problem}")
    pub = PublicIdentity(name=data["name"], ed25519=keys["ed25519"], x25519=keys["x25519"])
    if "key_id" in data and data["key_id"] != pub.key_id:
        raise KeyFileError(f"{path}: $.key_id: is not the SHA-256 of $.ed25519 (expected {pub.key_id})")
    return pub


def _read_public_file(path: Path) -> bytes:
    """A public key file's bytes: a regular file of at most `_PUB_LIMIT` bytes."""
    try:
        if not path.is_file():
            raise KeyFileError(f"{path}: not a regular file")
        raw = path.read_bytes()[: _PUB_LIMIT + 1]
    except OSError as exc:
        raise KeyFileError(f"{path}: cannot read public key file ({exc.strerror})") from exc
    if len(raw) > _PUB_LIMIT:
        raise KeyFileError(f"{path}: larger than {_PUB_LIMIT} bytes: not a public key file")
    return raw


def _public_key(path: Path, name: str, value: object) -> bytes:
    """The 32-byte key field `name` holds in standard base64; refused otherwise."""
    try:
        key = b64d(value) if isinstance(value, str) else b""
    except ValueError:
        key = b""
    if len(key) != 32:
        raise KeyFileError(f"{path}: $.{name}: must be a base64 32-byte key")
    return key


def new_data_key() -> bytes:
    return AESGCM.generate_key(bit_length=256)


def aead_encrypt(key: bytes, plaintext: bytes, aad: bytes) -> tuple[bytes, bytes]:
    """AES-256-GCM with a fresh random 96-bit nonce; returns (nonce, ciphertext)."""
    nonce = os.urandom(12)
    return nonce, AESGCM(key).encrypt(nonce, plaintext, aad)


def aead_decrypt(key: bytes, nonce: bytes, ciphertext: bytes, aad: bytes) -> bytes:
    """Raise UnwrapError when the ciphertext or its binding data was altered."""
    try:
        return AESGCM(key).decrypt(nonce, ciphertext, aad)
    except (InvalidTag, ValueError) as exc:
        raise UnwrapError("authenticated decryption failed") from exc


def _wrap_key(shared: bytes, context: bytes) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_WRAP_INFO + context).derive(shared)


def wrap_data_key(data_key: bytes, recipient_x25519: bytes, context: bytes) -> dict[str, str]:
    """Wrap to a recipient: ephemeral X25519 + HKDF-SHA256 + AES-256-GCM (ECIES style)."""
    eph = X25519PrivateKey.generate()
    shared = eph.exchange(X25519PublicKey.from_public_bytes(recipient_x25519))
    epk = eph.public_key().public_bytes_raw()
    nonce, ct = aead_encrypt(_wrap_key(shared, context + epk), data_key, context)
    return {"epk": b64e(epk), "nonce": b64e(nonce), "ct": b64e(ct)}


def unwrap_data_key(identity: Identity, wrapped: dict[str, str], context: bytes) -> bytes:
    epk = b64d(wrapped["epk"])
    shared = identity.agree(epk)
    return aead_decrypt(
        _wrap_key(shared, context + epk), b64d(wrapped["nonce"]), b64d(wrapped["ct"]), context
    )
