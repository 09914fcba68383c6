"""Unlocking a vault as an authorized investigator.

Order matters: the custodian pin and the rollback/fork check run before any evidence is
decrypted, and the unlock itself is an access entry signed by the investigator (or, on
read-only media, a signed line in a local journal).  Historical authorization evidence
in manifests never grants access today; only the roster does.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from store import admin, merkle
from store.crypto import Identity, PublicIdentity, b64d
from store.entries import make_statement
from store.errors import AccessDeniedError, SignatureError
from store.keyring import ALL_SCOPES, DataKeys, in_scope
from store.note import Checkpoint, open_note
from store.roster import investigators
from store.vault import Vault
from tracer.clock import now_iso
from tracer.engine.evidence import TextResult, read_text, read_texts
from tracer.engine.trust import ForkError, RollbackError, Seen, TrustError, TrustStore

__all__ = [
    "OpenStatus",
    "RevokedInvestigatorError",
    "Session",
    "UnknownInvestigatorError",
    "VaultPeek",
    "peek",
    "unlock",
    "verify_latest_checkpoint",
]


class UnknownInvestigatorError(AccessDeniedError):
    """The key is neither the custodian's nor any granted investigator's."""


class RevokedInvestigatorError(AccessDeniedError):
    """The investigator was granted once and has since been revoked."""


@dataclass(frozen=True)
class VaultPeek:
    """What the unlock screen may show before any key is used: nothing but public facts."""

    origin: str
    custodian: str
    custodian_key_id: str
    pin: str
    size: int


@dataclass
class OpenStatus:
    """What the unlock screen and every later screen must say about this opening."""

    custodian: str
    custodian_key_id: str
    pin: str
    checkpoint_size: int
    checkpoint_root: str
    previous: Seen | None
    forensic: bool = False
    forensic_reason: str = ""
    journal: Path | None = None
    warnings: list[str] = field(default_factory=list)


def _custodian_from_log(vault: Vault) -> PublicIdentity:
    """The custodian as entry 0 says, cross-checked with the vault's metadata."""
    entry = vault.entry(0)
    payload = entry.payload_json()
    cust = payload["custodian"] if isinstance(payload, dict) else None
    if entry.kind != "vault_init" or not isinstance(cust, dict):
        raise TrustError(f"{vault.path}: log entry 0 is not a vault_init statement")
    pub = PublicIdentity(str(cust["name"]), b64d(cust["ed25519"]), b64d(cust["x25519"]))
    if pub.ed25519 != vault.custodian.ed25519:
        raise TrustError(f"{vault.path}: vault metadata names a different custodian than log entry 0")
    return pub


def verify_latest_checkpoint(vault: Vault, custodian: PublicIdentity) -> Checkpoint:
    """Signature by the custodian or a current investigator, origin and root.

    A revoked investigator's checkpoint is never the latest in an honest vault: the
    revocation itself is followed by a custodian checkpoint.
    """
    row = vault.latest_checkpoint()
    verifiers = {custodian.name: custodian.ed25519}
    for inv in investigators(vault).values():
        if inv.revoked_at is None:
            verifiers.setdefault(inv.name, inv.ed25519)
    _text, _names = open_note(row.note, verifiers)
    cp = Checkpoint.parse(_text)
    if cp.origin != vault.origin:
        raise TrustError(f"{vault.path}: checkpoint origin {cp.origin!r} is not {vault.origin!r}")
    return cp


class Session:
    """An unlocked vault: the only way the application reads evidence text."""

    def __init__(
        self,
        vault: Vault,
        identity: Identity,
        role: str,
        scopes: tuple[str, ...],
        status: OpenStatus,
        trust: TrustStore,
    ):
        self.vault = vault
        self.identity = identity
        self.role = role
        self.scopes = scopes
        self.status = status
        self.trust = trust
        self.keys = DataKeys(vault, identity)

    @property
    def who(self) -> str:
        return f"{self.identity.name} ({self.role}, {self.identity.key_id[:12]})"

    def can_read(self, collection: str) -> bool:
        return in_scope(self.scopes, collection)

    def text(self, digest: str, collection: str) -> TextResult:
        return read_text(self, digest, collection)

    def texts(self, items: Sequence[tuple[str, str]]) -> dict[str, TextResult]:
        """`text` for many (digest, collection) pairs in one read, keyed by digest."""
        return read_texts(self, items)

    def record(self, action: str, target: str) -> None:
        """Every look at evidence goes on the record, in the log or the local journal."""
        now = now_iso()
        if self.status.journal is not None:
            entry = make_statement(
                "access",
                {"action": action, "target": target, "at": now, "journal": True},
                self.identity,
            )
            self.status.journal.parent.mkdir(parents=True, exist_ok=True)
            with self.status.journal.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps({"vault": self.vault.origin, "entry": entry.body}) + "\n")
            return
        admin.record_access(self.vault, self.identity, action, target, now, self.status.forensic)
        self._remember()

    def add_finding(self, answer_id: str, target: str, note: str) -> int:
        if self.vault.read_only:
            raise AccessDeniedError(f"{self.vault.path}: vault is read-only; findings cannot be appended")
        seq = admin.record_finding(self.vault, self.identity, answer_id, target, note, now_iso())
        self._remember()
        return seq

    def _remember(self) -> None:
        if self.status.forensic:
            return
        cp = Checkpoint.parse(open_note(self.vault.latest_checkpoint().note, self._verifiers())[0])
        self.status.checkpoint_size = cp.size
        self.status.checkpoint_root = cp.root.hex()
        self.trust.remember(self.vault.origin, self.identity.key_id, Seen(cp.size, cp.root.hex(), now_iso()))

    def _verifiers(self) -> dict[str, bytes]:
        out = {self.status.custodian: _custodian_from_log(self.vault).ed25519}
        for inv in investigators(self.vault).values():
            out.setdefault(inv.name, inv.ed25519)
        return out

    def close(self) -> None:
        self.vault.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _check_history(vault: Vault, cp: Checkpoint, prev: Seen | None) -> tuple[type[TrustError], str]:
    """(TrustError, '') when the log extends what we saw; otherwise the error and reason.

    One pass over the stored leaves: the root at `prev.size` on the way to `cp.size`
    decides rollback/fork exactly as a consistency proof built from the same leaves
    would, without hashing the tree a second time (120k leaves at a million passages).
    """
    leaves = vault.leaf_hashes(cp.size)
    acc = merkle.RootAccumulator()
    mid = min(max(prev.size, 0), cp.size) if prev is not None else 0
    append = acc.append
    for leaf in leaves[:mid]:
        append(leaf)
    at_prev = acc.root()
    for leaf in leaves[mid:]:
        append(leaf)
    if len(leaves) < cp.size or acc.root() != cp.root:
        return TrustError, (
            f"the log does not match its latest checkpoint (size {cp.size}, root "
            f"{cp.root.hex()[:16]}); run `tracer verify` to pin the damage"
        )
    vault.adopt_accumulator(acc)
    if prev is None:
        return TrustError, ""
    if prev.size > cp.size:
        return RollbackError, (
            f"ROLLBACK: this machine last saw size {prev.size} root {prev.root[:16]}, the vault is "
            f"at size {cp.size} root {cp.root.hex()[:16]} (an older copy?)"
        )
    if prev.size < 0 or at_prev != bytes.fromhex(prev.root):
        return ForkError, (
            f"FORK: the vault at size {cp.size} root {cp.root.hex()[:16]} does not extend the "
            f"checkpoint this machine saw at size {prev.size} root {prev.root[:16]}"
        )
    return TrustError, ""


def unlock(
    path: Path,
    identity: Identity,
    *,
    forensic: bool = False,
    read_only: bool | None = None,
    trust: TrustStore | None = None,
) -> Session:
    """Open `path` as `identity`; raises AccessDeniedError or TrustError with a clear reason."""
    trust = trust or TrustStore()
    vault = Vault.open(path, read_only=read_only)
    try:
        custodian = _custodian_from_log(vault)
        pin = trust.check_custodian(vault.origin, custodian.key_id, custodian.name)
        try:
            cp = verify_latest_checkpoint(vault, custodian)
        except SignatureError as exc:
            raise TrustError(f"{vault.path}: latest checkpoint signature: {exc}") from exc
        scopes: tuple[str, ...]
        if identity.key_id == custodian.key_id:
            role, scopes = "custodian", (ALL_SCOPES,)
        else:
            inv = investigators(vault).get(identity.key_id)
            if inv is None:
                raise UnknownInvestigatorError(
                    f"{vault.path}: {identity.name} ({identity.key_id[:16]}) is not an investigator "
                    "of this vault; ask the custodian for a grant"
                )
            if inv.revoked_at:
                raise RevokedInvestigatorError(
                    f"{vault.path}: {inv.name} ({identity.key_id[:16]}) was revoked at {inv.revoked_at}"
                )
            role, scopes = "investigator", inv.scopes
        prev = trust.last_seen(vault.origin, identity.key_id)
        error, problem = _check_history(vault, cp, prev)
        status = OpenStatus(
            custodian=custodian.name,
            custodian_key_id=custodian.key_id,
            pin=pin,
            checkpoint_size=cp.size,
            checkpoint_root=cp.root.hex(),
            previous=prev,
        )
        if problem:
            if not forensic:
                raise error(
                    f"{vault.path}: {problem}. Refusing to open; --forensic opens it for inspection only."
                )
            status.forensic = True
            status.forensic_reason = problem
        if vault.read_only or status.forensic:
            # never extend (and so bless) a tree that failed its checks
            status.journal = trust.journal(vault.origin)
            why = "vault is read-only" if vault.read_only else "forensic inspection"
            status.warnings.append(f"{why}: access is recorded in the local journal {status.journal}")
        session = Session(vault, identity, role, tuple(scopes), status, trust)
        session.record("unlock", "forensic" if status.forensic else "")
        if status.journal is not None and not status.forensic:
            trust.remember(vault.origin, identity.key_id, Seen(cp.size, cp.root.hex(), now_iso()))
        return session
    except BaseException:
        vault.close()
        raise


def peek(path: Path, trust: TrustStore | None = None) -> VaultPeek:
    """Public facts for the unlock screen: custodian fingerprint and its pin state.

    Opens read-only, decrypts nothing, writes nothing and pins nothing.
    """
    trust = trust or TrustStore()
    with Vault.open(path, read_only=True) as vault:
        custodian = _custodian_from_log(vault)
        return VaultPeek(
            origin=vault.origin,
            custodian=custodian.name,
            custodian_key_id=custodian.key_id,
            pin=trust.pin_state(vault.origin, custodian.key_id),
            size=vault.size(),
        )
