"""C2SP signed notes and tlog checkpoints: the format tracer's log heads are signed in.

Using the same text format as the Go checksum database, Sigstore and the witness
network means a checkpoint tracer signs can be checked with off-the-shelf tools
(golang.org/x/mod/sumdb/note) and cosigned by witnesses.  Specs:
https://c2sp.org/signed-note and https://c2sp.org/tlog-checkpoint.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from store.crypto import Identity, b64d, b64e, ed25519_verify
from store.errors import InputError, SignatureError

__all__ = [
    "Checkpoint",
    "add_signature",
    "note_key_id",
    "open_note",
    "parse_verifier_key",
    "sign_note",
    "verifier_key",
    "verify_checkpoint",
]

_ED25519_TYPE = b"\x01"
_SIG_PREFIX = "\u2014 "  # em dash, space (signed-note.md, "Format")
_MAX_SIGNATURES = 100  # the spec's floor is 16; Go's sumdb/note also stops at 100
_HEX8 = re.compile(r"[0-9a-fA-F]{8}")
_SIZE = re.compile(r"0|[1-9][0-9]*")
_MAX_SIZE = 2**63 - 1  # Go's checkpoint parsers read the size as int64


def _name_problem(name: str) -> str | None:
    """Why `name` is not a valid key name (signed-note.md: non-empty, no spaces or '+')."""
    if not name:
        return "key name is empty"
    if "+" in name:
        return f"key name {name!r} contains '+'"
    if any(ch.isspace() or ord(ch) < 0x20 for ch in name):
        return f"key name {name!r} contains a space or control character"
    return None


def _has_control(text: str) -> bool:
    return any(ord(ch) < 0x20 for ch in text)


def _check_ed25519_public(public: bytes) -> None:
    if len(public) != 32:
        raise ValueError(f"Ed25519 public key must be 32 bytes, got {len(public)}")


def note_key_id(name: str, ed25519_public: bytes) -> bytes:
    """SHA-256(name || 0x0A || 0x01 || pubkey)[:4] (signed-note.md, "Ed25519 signatures").

    The id only routes a signature to a candidate key; it is deliberately short and
    not a security boundary, because the key itself is configured out of band.
    """
    _check_ed25519_public(ed25519_public)
    digest = hashlib.sha256(name.encode("utf-8") + b"\n" + _ED25519_TYPE + ed25519_public)
    return digest.digest()[:4]


def verifier_key(name: str, ed25519_public: bytes) -> str:
    """The "<name>+<hex key id>+<base64(0x01 || pubkey)>" string Go's note.NewVerifier reads."""
    problem = _name_problem(name)
    if problem:
        raise ValueError(problem)
    key_id = note_key_id(name, ed25519_public).hex()
    return f"{name}+{key_id}+{b64e(_ED25519_TYPE + ed25519_public)}"


def parse_verifier_key(text: str, *, file: str = "verifier key") -> tuple[str, bytes]:
    """Parse a verifier key into (name, raw Ed25519 public key).

    The embedded key id is recomputed and compared, so a key pasted under the wrong
    name (or with a damaged key) is caught here rather than as a puzzling signature
    failure later.
    """
    parts = text.split("+", 2)  # base64 may itself contain "+" (as Go's note.NewVerifier)
    if len(parts) != 3:
        raise InputError(file, "$", "expected <name>+<key id>+<base64 key>")
    name, hash_hex, key_b64 = parts
    problem = _name_problem(name)
    if problem:
        raise InputError(file, "name", problem)
    if not _HEX8.fullmatch(hash_hex):
        raise InputError(file, "key id", f"expected 8 hex digits, got {hash_hex!r}")
    try:
        key = b64d(key_b64)
    except ValueError as exc:  # binascii.Error and non-ASCII both
        raise InputError(file, "key", "not standard base64") from exc
    if key[:1] != _ED25519_TYPE:
        raise InputError(file, "key", "unsupported signature type (only 0x01, Ed25519)")
    if len(key) != 33:
        raise InputError(file, "key", f"Ed25519 key must be 32 bytes, got {len(key) - 1}")
    public = key[1:]
    expected = note_key_id(name, public).hex()
    if hash_hex.lower() != expected:
        raise InputError(file, "key id", f"{hash_hex} does not match name and key (expected {expected})")
    return name, public


def _check_note_chars(text: str, file: str) -> None:
    """signed-note.md: valid UTF-8 and no ASCII control characters other than newline."""
    for lineno, line in enumerate(text.split("\n"), start=1):
        for ch in line:
            if ord(ch) < 0x20:
                raise InputError(file, f"line {lineno}", f"control character U+{ord(ch):04X}")
        try:
            line.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise InputError(file, f"line {lineno}", "not valid UTF-8 (lone surrogate)") from exc


def _signature_line(text: str, name: str, public: bytes, sign: Callable[[bytes], bytes]) -> str:
    problem = _name_problem(name)
    if problem:
        raise ValueError(problem)
    message = text.encode("utf-8")
    sig = sign(message)
    # Refuse to publish a signature line whose key id points at a key that did not
    # make it: every verifier would reject the note, long after the mistake.
    ed25519_verify(public, sig, message)
    return f"{_SIG_PREFIX}{name} {b64e(note_key_id(name, public) + sig)}\n"


def sign_note(text: str, name: str, public: bytes, sign: Callable[[bytes], bytes]) -> str:
    """Sign `text` as a one-signature note: text, blank line, "— name base64(id||sig)".

    `sign` must be the Ed25519 signing function for `public`; the result is checked
    against `public` so a mismatched pair raises SignatureError instead of producing
    a note nobody can verify.
    """
    if not text.endswith("\n"):
        raise ValueError("note text must end with a newline")
    _check_note_chars(text, "note text")
    return text + "\n" + _signature_line(text, name, public, sign)


@dataclass(frozen=True)
class _SigLine:
    name: str
    key_id: bytes
    sig: bytes
    line: str
    lineno: int


def _parse_note(note: str, file: str) -> tuple[str, list[_SigLine]]:
    """Split a signed note into its text and signature lines, checking only syntax."""
    _check_note_chars(note, file)
    split = note.rfind("\n\n")
    if split < 0:
        raise InputError(file, "$", "no blank line separating text from signatures")
    text, block = note[: split + 1], note[split + 2 :]
    if not block:
        raise InputError(file, "$", "no signature lines after the blank line")
    if not block.endswith("\n"):
        raise InputError(file, "$", "last signature line does not end with a newline")
    first_lineno = text.count("\n") + 2
    lines = block[:-1].split("\n")
    if len(lines) > _MAX_SIGNATURES:
        raise InputError(file, "$", f"more than {_MAX_SIGNATURES} signatures")
    return text, [_sig_line(line, first_lineno + offset, file) for offset, line in enumerate(lines)]


def _sig_line(line: str, lineno: int, file: str) -> _SigLine:
    """One signature line ("\u2014 name base64(key id + signature)"), syntax checked."""
    where = f"line {lineno}"
    if not line.startswith(_SIG_PREFIX):
        raise InputError(file, where, "signature line must start with '\u2014 '")
    name, sep, sig_b64 = line[len(_SIG_PREFIX) :].partition(" ")
    problem = _name_problem(name)
    if problem:
        raise InputError(file, where, problem)
    if not sep or not sig_b64:
        raise InputError(file, where, "signature line has no signature")
    try:
        raw = b64d(sig_b64)
    except ValueError as exc:  # binascii.Error and non-ASCII both
        raise InputError(file, where, "signature is not standard base64") from exc
    if len(raw) < 5:
        raise InputError(file, where, "signature shorter than key id plus one byte")
    return _SigLine(name, raw[:4], raw[4:], line, lineno)


def add_signature(note: str, name: str, public: bytes, sign: Callable[[bytes], bytes]) -> str:
    """Cosign an already signed note, keeping the existing signatures in order.

    An existing signature by the same name and key id is replaced, as Go's note.Sign
    does, so re-signing is idempotent rather than accumulating duplicates.  Existing
    signatures are not verified here: the signer vouches only for the text.
    """
    text, existing = _parse_note(note, "note")
    key_id = note_key_id(name, public)
    kept = [s.line + "\n" for s in existing if (s.name, s.key_id) != (name, key_id)]
    return text + "\n" + "".join(kept) + _signature_line(text, name, public, sign)


Verifiers = Mapping[str, bytes] | Iterable[tuple[str, bytes]]


def open_note(note: str, verifiers: Verifiers, *, file: str = "note") -> tuple[str, list[str]]:
    """Return (text, names that signed it validly), per signed-note.md "Signatures".

    Verifiers are (name, Ed25519 key) pairs (or a name -> key mapping); a signature is
    routed to a verifier by name AND key id together, as Go's note.VerifierList does, so
    one name may have several keys and two keys may share a name without shadowing each
    other.  Signatures matching no verifier are ignored (that is how cosignatures and key
    rotation coexist).  A signature that does match must verify, else the whole note is
    rejected, and at least one must.  Verifier keys must be 32 bytes (ValueError
    otherwise): they come from trusted configuration, normally via `parse_verifier_key`.
    """
    text, sigs = _parse_note(note, file)
    message = text.encode("utf-8")
    pairs = verifiers.items() if isinstance(verifiers, Mapping) else verifiers
    known: dict[tuple[str, bytes], bytes] = {}
    for name, pub in pairs:
        known[(name, note_key_id(name, pub))] = pub
    verified = _verified_names(sigs, known, message, file)
    if not verified:
        signers = ", ".join(f"{s.name}+{s.key_id.hex()}" for s in sigs)
        trusted = ", ".join(f"{n}+{k.hex()}" for n, k in sorted(known)) or "(none)"
        raise SignatureError(f"{file}: no signature by a known key: signed by {signers}; trusted: {trusted}")
    return text, verified


def _verified_names(
    sigs: list[_SigLine], known: dict[tuple[str, bytes], bytes], message: bytes, file: str
) -> list[str]:
    """The names whose known key verifies their signature, each once, in note order.

    A signature matching no verifier is skipped; one that matches and fails rejects the note.
    """
    verified: list[str] = []
    for s in sigs:
        pub = known.get((s.name, s.key_id))
        if pub is None:
            continue
        try:
            ed25519_verify(pub, s.sig, message)
        except SignatureError as exc:
            raise SignatureError(
                f"{file}: line {s.lineno}: invalid signature for key {s.name}+{s.key_id.hex()}"
            ) from exc
        if s.name not in verified:
            verified.append(s.name)
    return verified


@dataclass(frozen=True)
class Checkpoint:
    """A tlog checkpoint body (tlog-checkpoint.md, "Note text"): the signed tree head.

    Construction validates, so `body()` always yields text that `parse` accepts and
    that parses back to an equal value; the signature is over exactly that text.
    """

    origin: str
    size: int
    root: bytes
    extensions: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.origin or _has_control(self.origin):
            raise ValueError("checkpoint origin must be one non-empty line of text")
        if not 0 <= self.size <= _MAX_SIZE:
            raise ValueError(f"checkpoint size out of range: {self.size}")
        if len(self.root) != 32:
            raise ValueError(f"checkpoint root must be 32 bytes, got {len(self.root)}")
        for ext in self.extensions:
            if not ext or _has_control(ext):
                raise ValueError("checkpoint extensions must each be one non-empty line of text")

    def body(self) -> str:
        lines = [self.origin, str(self.size), b64e(self.root), *self.extensions]
        return "".join(line + "\n" for line in lines)

    @classmethod
    def parse(cls, text: str, *, file: str = "checkpoint") -> Checkpoint:
        """Strict parse: anything `body()` would not reproduce byte-for-byte is refused."""
        if not text.endswith("\n"):
            raise InputError(file, "$", "checkpoint text must end with a newline")
        _check_note_chars(text, file)
        lines = text[:-1].split("\n")
        if len(lines) < 3:
            raise InputError(file, "$", "expected origin, size and root hash lines")
        origin, size_text, root_text, *extensions = lines
        if not origin:
            raise InputError(file, "line 1", "origin is empty")
        if not _SIZE.fullmatch(size_text):
            raise InputError(
                file, "line 2", f"tree size must be decimal without leading zeros: {size_text!r}"
            )
        size = int(size_text)
        if size > _MAX_SIZE:
            raise InputError(file, "line 2", "tree size exceeds 2^63-1")
        root = _parse_root(root_text, file)
        for i, ext in enumerate(extensions, start=4):
            if not ext:
                raise InputError(file, f"line {i}", "extension lines must be non-empty")
        return cls(origin=origin, size=size, root=root, extensions=tuple(extensions))

    def sign(self, identity: Identity) -> str:
        """A signed note of `body()` by `identity` (key name = identity.name)."""
        return self.sign_as(identity, identity.name)

    def sign_as(self, identity: Identity, name: str) -> str:
        """A signed note of `body()` by `identity` under key name `name` (the roster's)."""
        return sign_note(self.body(), name, identity.public.ed25519, identity.sign)


def _parse_root(root_text: str, file: str) -> bytes:
    """A checkpoint's root hash line: canonical standard base64 of 32 bytes."""
    try:
        root = b64d(root_text)
    except ValueError as exc:  # binascii.Error and non-ASCII both
        raise InputError(file, "line 3", "root hash is not standard base64") from exc
    if len(root) != 32:
        raise InputError(file, "line 3", f"root hash must be 32 bytes, got {len(root)}")
    if base64.b64encode(root).decode("ascii") != root_text:
        raise InputError(file, "line 3", "root hash is non-canonical base64")
    return root


def verify_checkpoint(note: str, name: str, public: bytes, *, origin: str | None = None) -> Checkpoint:
    """Open a checkpoint note signed by the log key (name, public) and parse its body.

    tlog-checkpoint.md only says the key name SHOULD equal the origin, so the origin
    is checked only when the caller says which one it expects.
    """
    text, _ = open_note(note, {name: public}, file="checkpoint")
    checkpoint = Checkpoint.parse(text)
    if origin is not None and checkpoint.origin != origin:
        raise InputError("checkpoint", "line 1", f"origin {checkpoint.origin!r}, expected {origin!r}")
    return checkpoint
