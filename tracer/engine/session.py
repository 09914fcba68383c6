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
from store.entries import EntryKind, make_statement
from store.errors import AccessDeniedError, InputError, SignatureError, VaultDamagedError
from store.guarded import commitment, signed_commitment
from store.keyring import ALL_SCOPES, DataKeys, in_scope
from store.note import Checkpoint, open_note
from store.roster import Roster, RosterProblem, load_roster
from store.statements import AccessStatement, JournalPlaceJSON
from store.vault import Vault
from store.viewcommit import EAGER_VIEWS
from tracer.clock import now_iso
from tracer.engine.evidence import TextResult, read_text, read_texts
from tracer.engine.trust import ForkError, RollbackError, Seen, TrustError, TrustStore

__all__ = [
    "OpenStatus",
    "RevokedInvestigatorError",
    "Session",
    "UnknownInvestigatorError",
    "VaultPeek",
    "head_checkpoint",
    "peek",
    "remember_writes",
    "unlock",
    "valid_prefix_checkpoint",
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
    #: the origin this machine last opened at this path, when it was another vault
    origin_before: str | None = None


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
    #: the warning (one of `warnings`) that this machine last opened another vault at this
    #: path: to be said loudly, never as a plain "first use"
    origin_changed: str | None = None


def _custodian_from_log(vault: Vault) -> PublicIdentity:
    """The custodian as entry 0 says, cross-checked with the vault's metadata."""
    try:
        entry = vault.entry(0)
        payload = entry.payload_json()
        cust = payload["custodian"] if isinstance(payload, dict) else None
        if entry.kind != EntryKind.VAULT_INIT or not isinstance(cust, dict):
            raise TrustError(f"{vault.path}: log entry 0 is not a vault_init statement")
        pub = PublicIdentity(str(cust["name"]), b64d(str(cust["ed25519"])), b64d(str(cust["x25519"])))
        meta = vault.custodian
    except (ValueError, KeyError, TypeError, AttributeError, InputError) as exc:
        raise TrustError(f"{vault.path}: log entry 0 or the vault's metadata cannot be read ({exc})") from exc
    if (pub.name, pub.ed25519, pub.x25519) != (meta.name, meta.ed25519, meta.x25519):
        raise TrustError(f"{vault.path}: vault metadata names a different custodian than log entry 0")
    return pub


def _valid_checkpoints(vault: Vault, roster: Roster) -> tuple[list[Checkpoint], set[int]]:
    """Every stored checkpoint whose note a (name, key) pair of the roster signed for this
    origin, largest first, and the sizes of all stored rows.  Rows nobody could have
    signed do not decide what the vault's head is (verify reports each of them)."""
    verifiers = roster.note_verifiers()
    out: list[Checkpoint] = []
    sizes: set[int] = set()
    for row in vault.checkpoints():
        sizes.add(row.size)
        try:
            cp = Checkpoint.parse(open_note(row.note, verifiers)[0])
        except (SignatureError, InputError, ValueError):
            continue
        if cp.origin == vault.origin and cp.size == row.size:
            out.append(cp)
    out.sort(key=lambda c: c.size, reverse=True)
    return out, sizes


def head_checkpoint(
    vault: Vault, roster: Roster, size: int, root: bytes
) -> tuple[Checkpoint | None, str, str]:
    """(the signed checkpoint covering all `size` entries, '', '') or (None, code, why).

    Codes: `entry_not_checkpointed` (entries past the latest signed checkpoint: appended
    by someone without a key, never to be signed over), `log_truncated`,
    `checkpoint_root_mismatch` and `checkpoint_signature_invalid`.
    """
    valid, sizes = _valid_checkpoints(vault, roster)
    top = valid[0] if valid else None
    if top is not None and top.size > size:
        # the largest signed tree decides: a smaller checkpoint matching the shorter log
        # is exactly what deleting the newest entries leaves behind
        return (
            None,
            "log_truncated",
            (f"a signed checkpoint covers {top.size} entries but the log holds {size}: entries were removed"),
        )
    found = _exact_checkpoint(vault, valid, size, root)
    if found is not None:
        return found
    return _uncovered(top, size, sizes)


def _exact_checkpoint(
    vault: Vault, valid: list[Checkpoint], size: int, root: bytes
) -> tuple[Checkpoint | None, str, str] | None:
    """The verdict of the valid checkpoint over exactly this log (its size and root), when
    one exists: it must also commit to the log's guarded entries as they are now."""
    guard = commitment(vault.index.guarded_pairs())
    for cp in valid:
        if cp.size == size and cp.root == root:
            if signed_commitment(cp.extensions) != guard:
                return (
                    None,
                    "guarded_entries_changed",
                    (
                        "the revocations, tombstones and legal holds in the log are not the ones its latest "
                        "checkpoint commits to: one was hidden (relabelled or rewritten) or forged"
                    ),
                )
            return cp, "", ""
    return None


def _uncovered(top: Checkpoint | None, size: int, sizes: set[int]) -> tuple[None, str, str]:
    """Why no valid checkpoint covers the log's `size` entries (`top`: the largest valid one)."""
    if top is not None and top.size == size:
        return (
            None,
            "checkpoint_root_mismatch",
            (
                f"the log does not match its latest checkpoint (size {size}, root {top.root.hex()[:16]}): "
                "an entry was changed, removed or reordered"
            ),
        )
    if size in sizes or top is None:
        return (
            None,
            "checkpoint_signature_invalid",
            (
                f"latest checkpoint signature: the checkpoint over the log's {size} entries carries no valid "
                "signature by the custodian or an active investigator"
            ),
        )
    return (
        None,
        "entry_not_checkpointed",
        (
            f"entries {top.size}..{size - 1} are past the latest signed checkpoint (size {top.size}): "
            "either they were appended without a key or the checkpoint covering them was deleted, and "
            "they will not be signed over unchecked (`tracer verify --structural-only` pins them; if "
            "every one verifies, the custodian can cover them: `tracer checkpoint VAULT "
            "--cover-checked-tail`)"
        ),
    )


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
        name: str | None = None,
    ):
        self.vault = vault
        self.identity = identity
        #: the name the roster gives this key (a key file's name is only a file name)
        self.name = name or identity.name
        #: the case selected now: every access entry and note made meanwhile belongs to it
        self.case_id: str | None = None
        self.role = role
        self.scopes = scopes
        self.status = status
        self.trust = trust
        self.keys = DataKeys(vault, identity)

    @property
    def who(self) -> str:
        return f"{self.name} ({self.role}, {self.identity.key_id[:12]})"

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
            place: JournalPlaceJSON = {
                "origin": self.vault.origin,
                "journal": True,
                "size": self.status.checkpoint_size,
                "root": self.status.checkpoint_root,
            }
            stmt: AccessStatement = {"action": action, "target": target, "at": now, "journal": True}
            if self.case_id is not None:
                stmt["case_id"] = self.case_id
            entry = make_statement(EntryKind.ACCESS, stmt, self.identity, place)
            self.status.journal.parent.mkdir(parents=True, exist_ok=True)
            with self.status.journal.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps({"vault": self.vault.origin, "entry": entry.body}) + "\n")
            return
        admin.record_access(
            self.vault, self.identity, action, target, now, self.status.forensic, case_id=self.case_id
        )
        self.remember()

    def add_finding(self, answer_id: str, target: str, note: str) -> int:
        if self.vault.read_only:
            raise AccessDeniedError(f"{self.vault.path}: vault is read-only; findings cannot be appended")
        seq = admin.record_finding(
            self.vault, self.identity, answer_id, target, note, now_iso(), case_id=self.case_id
        )
        self.remember()
        return seq

    def remember(self) -> None:
        """The checkpoint this session just signed becomes the one shown and remembered."""
        head = self.vault.tree.covered_head()
        if head is None:
            return
        size, root = head
        self.status.checkpoint_size = size
        self.status.checkpoint_root = root.hex()
        if not self.status.forensic:
            self.trust.remember(self.vault.origin, self.identity.key_id, Seen(size, root.hex(), now_iso()))

    def close(self) -> None:
        self.vault.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _check_history(
    leaves: list[bytes], root: bytes, seen: list[tuple[str, Seen]]
) -> tuple[type[TrustError], str]:
    """(TrustError, '') when the log extends every checkpoint this machine saw of it;
    otherwise the error and reason.

    Every investigator's record on this machine counts, not only the one opening now:
    a vault one of them caught rolled back stays caught for the next.  The roots at the
    remembered sizes are read off one pass over the stored leaves.
    """
    sizes = sorted({s.size for _who, s in seen if 0 <= s.size <= len(leaves)})
    roots: dict[int, bytes] = {}
    acc = merkle.RootAccumulator()
    for size in sizes:
        while acc.size < size:
            acc.append(leaves[acc.size])
        roots[size] = acc.root()
    for _who, prev in sorted(seen, key=lambda item: -item[1].size):
        if prev.size > len(leaves):
            return RollbackError, (
                f"ROLLBACK: this machine last saw size {prev.size} root {prev.root[:16]}, the vault is "
                f"at size {len(leaves)} root {root.hex()[:16]} (an older copy?)"
            )
        if prev.size < 0 or roots.get(prev.size) != bytes.fromhex(prev.root):
            return ForkError, (
                f"FORK: the vault at size {len(leaves)} root {root.hex()[:16]} does not extend the "
                f"checkpoint this machine saw at size {prev.size} root {prev.root[:16]}"
            )
    return TrustError, ""


def refuse_if_rolled_back(vault: Vault, trust: TrustStore | None = None) -> None:
    """Raise RollbackError or ForkError when `vault` does not extend every checkpoint this
    machine saw of it. For the custodian's writes (ingest, purge, keys, investigators,
    holds), which open the vault without an investigator's unlock: a write signs a new
    checkpoint, and one over a rolled-back copy would launder the rollback (a machine
    that never saw the newer vault would accept the shorter history as clean)."""
    seen = (trust or TrustStore()).all_seen(vault.origin)
    if not seen:
        return
    leaves = vault.leaf_hashes()
    acc = merkle.RootAccumulator()
    for leaf in leaves:
        acc.append(leaf)
    error, why = _check_history(leaves, acc.root(), seen)
    if why:
        raise error(
            f"{vault.path}: {why}. Refusing to write to it: a new checkpoint would be signed over "
            "this history. Inspect it with `tracer open --forensic` or `tracer verify`."
        )
    vault.tree.adopt(acc)  # the write that follows starts from this tree


def valid_prefix_checkpoint(vault: Vault, leaves: list[bytes]) -> int | None:
    """The size of the newest validly signed checkpoint over a prefix of this log (its root
    and guarded commitment those of the prefix), or None."""
    valid, _sizes = _valid_checkpoints(vault, vault.roster())
    pairs = vault.index.guarded_pairs()
    for cp in valid:
        if cp.size > len(leaves) or cp.root != merkle.root(leaves[: cp.size]):
            continue
        if signed_commitment(cp.extensions) == commitment(p for p in pairs if p[0] < cp.size):
            return cp.size
    return None


def remember_writes(vault: Vault, trust: TrustStore | None = None) -> None:
    """Before a write that opens the vault without an unlock (the custodian's ingest,
    import, purge, keys, grants, holds): refuse a vault whose custodian differs from the
    one this machine pinned, and record every checkpoint the write signs
    exactly as an unlock does.  Without it a copy rolled back past a revocation the
    custodian made here would be written to, and so blessed, from the same machine."""
    store = trust or TrustStore()
    custodian = _custodian_from_log(vault)
    pinned = store.pinned(vault.origin)
    if pinned is not None and pinned != custodian.key_id:
        raise TrustError(
            f"{vault.path}: CUSTODIAN KEY CHANGED: this machine pinned {pinned[:16]}, the vault's entry 0 "
            f"names {custodian.key_id[:16]}; refusing to write to it"
        )

    def remember(size: int, root: bytes, signer: str) -> None:
        store.remember(vault.origin, signer, Seen(size, root.hex(), now_iso()))

    vault.on_commit = remember


_WAYS_FORWARD = (
    "Refusing to open. To inspect it anyway (nothing is signed or remembered), use --forensic; "
    "for a rebuilt demo vault, use a fresh TRACER_HOME (see sample_vault/README.md)."
)


def unlock(
    path: Path,
    identity: Identity,
    *,
    forensic: bool = False,
    read_only: bool | None = None,
    trust: TrustStore | None = None,
) -> Session:
    """Open `path` as `identity`; raises AccessDeniedError or TrustError with a clear reason.

    Nothing is decrypted and nothing appended before every check has passed: the
    custodian pin, the roster read from the log, a signed checkpoint covering every
    entry, and the history this machine remembers.
    """
    trust = trust or TrustStore()
    vault = Vault.open(path, read_only=read_only)
    try:
        custodian = _custodian_from_log(vault)
        pin = trust.check_custodian(vault.origin, custodian.key_id, custodian.name, path)
        leaves = vault.leaf_hashes()
        roster, problems = load_roster(vault, leaves)
        acc = merkle.RootAccumulator()
        for leaf in leaves:
            acc.append(leaf)
        root = acc.root()
        error: type[TrustError] = TrustError
        cp, damage = _log_damage(vault, roster, problems, len(leaves), root, forensic)
        role, scopes, name = _role(vault, identity, custodian, roster)
        prev = trust.last_seen(vault.origin, identity.key_id)
        if not damage:
            error, damage = _check_history(leaves, root, trust.all_seen(vault.origin))
        status = OpenStatus(
            custodian=custodian.name,
            custodian_key_id=custodian.key_id,
            pin=pin.state,
            checkpoint_size=cp.size if cp is not None else len(leaves),
            checkpoint_root=(cp.root if cp is not None else root).hex(),
            previous=prev,
        )
        status.warnings.extend(pin.warnings)
        status.origin_changed = pin.origin_changed
        if damage:
            if not forensic:
                raise error(f"{vault.path}: {damage}. {_WAYS_FORWARD}")
            status.forensic = True
            status.forensic_reason = damage
        _journal_or_adopt(vault, status, trust, acc, roster, problems)
        _prove_eager_views(vault, status)
        return _start_session(Session(vault, identity, role, tuple(scopes), status, trust, name))
    except BaseException:
        vault.close()
        raise


def _log_damage(
    vault: Vault, roster: Roster, problems: list[RosterProblem], size: int, root: bytes, forensic: bool
) -> tuple[Checkpoint | None, str]:
    """The checkpoint covering the whole log, and what is wrong with the roster or the log
    (empty: nothing); raises TrustError for damage unless `forensic`."""
    damage = _roster_damage(problems)
    cp, _code, why = head_checkpoint(vault, roster, size, root)
    if cp is None and not damage:
        damage = why
    if damage and not forensic:
        raise TrustError(f"{vault.path}: {damage}. {_WAYS_FORWARD}")
    return cp, damage


def _journal_or_adopt(
    vault: Vault,
    status: OpenStatus,
    trust: TrustStore,
    acc: merkle.RootAccumulator,
    roster: Roster,
    problems: list[RosterProblem],
) -> None:
    """A read-only or forensic open records access in the local journal and never extends
    (and so blesses) a tree that failed its checks; a writable one adopts the checked
    tree, and the roster when every roster entry held."""
    if vault.read_only or status.forensic:
        status.journal = trust.journal(vault.origin)
        why_journal = "vault is read-only" if vault.read_only else "forensic inspection"
        status.warnings.append(f"{why_journal}: access is recorded in the local journal {status.journal}")
        return
    vault.tree.adopt(acc)
    if not problems:
        vault.rosters.adopt(roster)


def _start_session(session: Session) -> Session:
    """Record the unlock; a journalled (read-only) open also remembers the checkpoint seen."""
    status = session.status
    session.record("unlock", "forensic" if status.forensic else "")
    if status.journal is not None and not status.forensic:
        session.trust.remember(
            session.vault.origin,
            session.identity.key_id,
            Seen(status.checkpoint_size, status.checkpoint_root, now_iso()),
        )
    return session


def _roster_damage(problems: list[RosterProblem]) -> str:
    if not problems:
        return ""
    p = problems[0]
    return (
        f"log entry {p.seq} ({p.kind}) does not hold: {p.code}: {p.detail}; the roster of keys "
        "and investigators cannot be trusted"
    )


def _role(
    vault: Vault, identity: Identity, custodian: PublicIdentity, roster: Roster
) -> tuple[str, tuple[str, ...], str]:
    """(role, scopes, name) of whoever unlocks: the custodian, or a granted investigator
    who was not revoked (anyone else is refused)."""
    if identity.key_id == custodian.key_id:
        return "custodian", (ALL_SCOPES,), custodian.name
    inv = roster.investigators.get(identity.key_id)
    if inv is None:
        raise UnknownInvestigatorError(
            f"{vault.path}: {identity.name} ({identity.key_id[:16]}) is not an investigator "
            "of this vault; ask the custodian for a grant"
        )
    if inv.revoked_at:
        raise RevokedInvestigatorError(
            f"{vault.path}: {inv.name} ({identity.key_id[:16]}) was revoked at {inv.revoked_at}"
        )
    return "investigator", tuple(inv.scopes), inv.name


def _prove_eager_views(vault: Vault, status: OpenStatus) -> None:
    """The small derived tables every screen decides from are proven (or mended from the
    log, and said so) before anything reads them; the per-answer ones on first use."""
    try:
        vault.views.require(*EAGER_VIEWS)
    except VaultDamagedError as exc:
        if not status.forensic:
            raise
        status.warnings.append(f"derived tables could not be checked against the log: {exc}")
    status.warnings.extend(vault.views.warnings)


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
            origin_before=before if (before := trust.origin_at(path)) not in (None, vault.origin) else None,
        )
