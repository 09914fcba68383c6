"""Custodian and investigator statements: keyring, roster, purge, access, findings.

Each operation is one append batch: a signed statement bound to its place in the log,
whatever rows it implies, and a fresh checkpoint, committed together or not at all.
Roster changes are refused here by the same rules (`Roster.refusal`) that `verify`
applies to the log, so nothing the custodian signs can later read as a forgery.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from store.casefile import digests_by_entry, load_casefile
from store.crypto import Identity, PublicIdentity, b64e, is_sha256_hex
from store.entries import HOLD_KINDS, EntryKind, Statement
from store.errors import InputError, VaultDamagedError, VaultError
from store.guarded import guarded_kind
from store.keyring import ALL_SCOPES, DataKeys
from store.roster import Investigator, ProducerKey, Roster
from store.statements import (
    AccessStatement,
    FindingStatement,
    InvestigatorGrantStatement,
    InvestigatorRevokeStatement,
    KeyAddStatement,
    KeyRevokeStatement,
    TombstoneStatement,
)
from store.textrules import id_problem
from store.vault import Vault

__all__ = [
    "add_producer_key",
    "grant_investigator",
    "purge",
    "record_access",
    "record_finding",
    "revoke_investigator",
    "revoke_producer_key",
]


def _require_custodian(vault: Vault, custodian: Identity) -> None:
    vault.require_custodian(custodian)


def _refuse(vault: Vault, roster: Roster, kind: EntryKind, stmt: Mapping[str, object]) -> None:
    problem = roster.refusal(kind, stmt)
    if problem is not None:
        raise VaultError(f"{vault.path}: {kind} refused: {problem}")


def _one_match(vault: Vault, what: str, key_id: str, ids: list[str]) -> str:
    matches = [k for k in ids if k.startswith(key_id)] if len(key_id) >= 8 else []
    if len(matches) != 1:
        raise VaultError(f"{vault.path}: no single {what} matches {key_id!r}")
    return matches[0]


def add_producer_key(
    vault: Vault,
    custodian: Identity,
    key: PublicIdentity,
    now: str,
    valid_from: str | None = None,
    valid_until: str | None = None,
) -> int:
    _require_custodian(vault, custodian)
    stmt: KeyAddStatement = {
        "key_id": key.key_id,
        "name": key.name,
        "role": "producer",
        "ed25519": b64e(key.ed25519),
        "at": now,
    }
    if valid_from:
        stmt["valid_from"] = valid_from
    if valid_until:
        stmt["valid_until"] = valid_until
    _refuse(vault, vault.roster(), EntryKind.KEY_ADD, stmt)
    with vault.batch(custodian) as b:
        return b.append(Statement(EntryKind.KEY_ADD, stmt, custodian))


def revoke_producer_key(vault: Vault, custodian: Identity, key_id: str, now: str, reason: str = "") -> int:
    _require_custodian(vault, custodian)
    roster = vault.roster()
    k: ProducerKey = roster.producers[_one_match(vault, "producer key", key_id, list(roster.producers))]
    stmt: KeyRevokeStatement = {"key_id": k.key_id, "at": now, "reason": reason}
    _refuse(vault, roster, EntryKind.KEY_REVOKE, stmt)
    with vault.batch(custodian) as b:
        return b.append(Statement(EntryKind.KEY_REVOKE, stmt, custodian))


def _scoped_collections(scopes: list[str], keys: DataKeys) -> set[str]:
    return keys.collections if ALL_SCOPES in scopes else set(scopes) & keys.collections


def grant_investigator(
    vault: Vault,
    custodian: Identity,
    who: PublicIdentity,
    scopes: list[str],
    now: str,
    rights: list[str] | None = None,
) -> int:
    """Add an investigator and wrap every data key of their scopes to them.

    Refused for a key that was ever revoked (a revocation is final), a name already in
    use, a name that cannot sign a checkpoint note, an empty scope, or an unknown right
    (`store.roster.RIGHTS`: `hold` lets them place and release legal holds).
    """
    _require_custodian(vault, custodian)
    wanted = sorted(set(scopes))
    stmt: InvestigatorGrantStatement = {
        "key_id": who.key_id,
        "name": who.name,
        "scopes": wanted,
        "ed25519": b64e(who.ed25519),
        "x25519": b64e(who.x25519),
        "at": now,
    }
    if rights:
        stmt["rights"] = sorted(set(rights))
    _refuse(vault, vault.roster(), EntryKind.INVESTIGATOR_GRANT, stmt)
    keys = DataKeys(vault, custodian)
    with vault.batch(custodian) as b:
        seq = b.append(Statement(EntryKind.INVESTIGATOR_GRANT, stmt, custodian))
        for collection in sorted(_scoped_collections(wanted, keys)):
            keys.share(b, collection, who.key_id, who.x25519)
    return seq


def revoke_investigator(vault: Vault, custodian: Identity, key_id: str, now: str, reason: str = "") -> int:
    """Revoke, and rotate the data keys they held so new content is sealed from them.

    Text they already read or exported cannot be recalled; the rotation only protects
    content ingested after this point.
    """
    _require_custodian(vault, custodian)
    roster = vault.roster()
    inv: Investigator = roster.investigators[
        _one_match(vault, "investigator", key_id, list(roster.investigators))
    ]
    stmt: InvestigatorRevokeStatement = {"key_id": inv.key_id, "name": inv.name, "at": now, "reason": reason}
    _refuse(vault, roster, EntryKind.INVESTIGATOR_REVOKE, stmt)
    keys = DataKeys(vault, custodian)
    with vault.batch(custodian) as b:
        seq = b.append(Statement(EntryKind.INVESTIGATOR_REVOKE, stmt, custodian))
        for collection in sorted(_scoped_collections(list(inv.scopes), keys)):
            recipients = {k: x for k, x in roster.recipients(collection).items() if k != inv.key_id}
            keys.rotate(b, collection, recipients)
    return seq


def purge(
    vault: Vault,
    custodian: Identity,
    digest: str,
    policy: str,
    reason: str,
    authorizer: str,
    effective_at: str,
) -> int:
    """Append a tombstone, then delete the blob, in one transaction.

    A purge is final: ingest never stores the text again (`store.ingest`), and a text
    found stored under a tombstone is shown as purged and reported by `verify`.  Text
    under a legal hold in force is refused, naming the hold (`store.casefile`).
    """
    _require_custodian(vault, custodian)
    _check_tombstone_fields(digest, policy, reason, authorizer)
    case_file = load_casefile(vault)
    hold_seqs = {seq for seq, _k, data, _l in vault.index.guarded_rows() if guarded_kind(data) in HOLD_KINDS}
    damaged = [p for p in case_file.problems if p.seq in hold_seqs]
    if damaged:
        # a hold or release whose row does not hold (relabelled, rewritten) may be one in force
        raise VaultDamagedError(
            f"{vault.path}: the legal hold entry at log entry {damaged[0].seq} does not hold "
            f"({damaged[0].code}: {damaged[0].detail}); refusing to purge anything (run `tracer verify`)"
        )
    held = case_file.holds_on_digest(vault, digest)
    if held:
        raise VaultError(f"{vault.path}: digest {digest} is under legal hold: {held[0].describe()}")
    if not _referenced(vault, digest):
        raise VaultError(f"{vault.path}: digest {digest} is not referenced by any log entry")
    if digest in vault.index.tombstone_index():
        raise VaultError(f"{vault.path}: digest {digest} is already purged (a tombstone exists)")
    stmt: TombstoneStatement = {
        "digest": digest,
        "policy": policy,
        "reason": reason,
        "authorizer": authorizer,
        "effective_at": effective_at,
    }
    with vault.batch(custodian) as b:
        seq = b.append(Statement(EntryKind.TOMBSTONE, stmt, custodian))
        b.delete_blobs(digest)
    return seq


def _referenced(vault: Vault, digest: str) -> bool:
    """Whether a log entry names `digest`: a `v_digests` row counts only once the entry it
    points to says so in its own bytes, so no derived row decides; when none does (rows
    deleted, or none), the table is checked against its signed commitment and asked again."""

    def named(rows: list[tuple[Any, ...]]) -> bool:
        found = digests_by_entry(vault, [int(r[0]) for r in rows])  # one read for all rows
        return any(digest in names for names in found.values())

    sql = "SELECT DISTINCT seq FROM v_digests WHERE digest = ? ORDER BY seq LIMIT 64"
    if named(vault.query(sql, [digest])):
        return True
    vault.views.require("v_digests")
    return named(vault.query(sql, [digest]))


def _check_tombstone_fields(digest: str, policy: str, reason: str, authorizer: str) -> None:
    """A tombstone's fields are shown wherever the text would stand: each must print as
    itself on one line (a newline in a reason could print a fake result line)."""
    if not is_sha256_hex(digest):
        raise InputError(
            "purge", "$.digest", f"{digest!r:.80} is not a SHA-256 digest (64 lowercase hex digits)"
        )
    for name, value in (("policy", policy), ("reason", reason), ("authorizer", authorizer)):
        if not value.strip():
            raise InputError("purge", f"$.{name}", "must be a non-empty string")
        problem = id_problem(value)
        if problem is not None:
            raise InputError("purge", f"$.{name}", f"{problem}: a tombstone field is one printable line")


def record_access(
    vault: Vault,
    investigator: Identity,
    action: str,
    target: str,
    now: str,
    forensic: bool = False,
    case_id: str | None = None,
) -> int:
    """An access entry signed by the investigator, checkpointed under their key; with
    `case_id`, made while that case was selected (`store.casefile`)."""
    stmt: AccessStatement = {"action": action, "target": target, "at": now}
    if forensic:
        stmt["forensic"] = True
    if case_id is not None:
        stmt["case_id"] = case_id
    with vault.batch(investigator) as b:
        return b.append(Statement(EntryKind.ACCESS, stmt, investigator))


def record_finding(
    vault: Vault,
    investigator: Identity,
    answer_id: str,
    target: str,
    note: str,
    now: str,
    case_id: str | None = None,
) -> int:
    stmt: FindingStatement = {"answer_id": answer_id, "target": target, "note": note, "at": now}
    if case_id is not None:
        stmt["case_id"] = case_id
    with vault.batch(investigator) as b:
        return b.append(Statement(EntryKind.FINDING, stmt, investigator))
