"""Custodian and investigator statements: keyring, roster, purge, access, findings.

Each operation is one append batch: a signed statement, whatever rows it implies, and
a fresh checkpoint, committed together or not at all.
"""

from __future__ import annotations

from typing import Any

from store.crypto import Identity, PublicIdentity, b64e
from store.entries import make_statement
from store.errors import AccessDeniedError, VaultError
from store.keyring import ALL_SCOPES, DataKeys
from store.roster import investigators, producer_keys
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
    if custodian.public.ed25519 != vault.custodian.ed25519:
        raise AccessDeniedError(
            f"{vault.path}: key {custodian.key_id[:16]} is not this vault's custodian "
            f"({vault.custodian.name}, {vault.custodian.key_id[:16]})"
        )


def add_producer_key(
    vault: Vault,
    custodian: Identity,
    key: PublicIdentity,
    now: str,
    valid_from: str | None = None,
    valid_until: str | None = None,
) -> int:
    _require_custodian(vault, custodian)
    if key.key_id in producer_keys(vault):
        raise VaultError(f"{vault.path}: producer key {key.key_id[:16]} is already in the keyring")
    stmt: dict[str, Any] = {
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
    with vault.batch(custodian) as b:
        return b.append(make_statement("key_add", stmt, custodian))


def revoke_producer_key(vault: Vault, custodian: Identity, key_id: str, now: str, reason: str = "") -> int:
    _require_custodian(vault, custodian)
    keys = producer_keys(vault)
    matches = [k for k in keys if k.startswith(key_id)] if len(key_id) >= 8 else []
    if len(matches) != 1:
        raise VaultError(f"{vault.path}: no single producer key matches {key_id!r}")
    k = keys[matches[0]]
    if k.revoked_at:
        raise VaultError(f"{vault.path}: producer key {k.key_id[:16]} was already revoked at {k.revoked_at}")
    stmt = {"key_id": k.key_id, "at": now, "reason": reason}
    with vault.batch(custodian) as b:
        return b.append(make_statement("key_revoke", stmt, custodian))


def _scoped_collections(vault: Vault, scopes: list[str], keys: DataKeys) -> set[str]:
    return keys.collections if ALL_SCOPES in scopes else set(scopes) & keys.collections


def grant_investigator(
    vault: Vault, custodian: Identity, who: PublicIdentity, scopes: list[str], now: str
) -> int:
    """Add an investigator and wrap every data key of their scopes to them."""
    _require_custodian(vault, custodian)
    current = investigators(vault).get(who.key_id)
    if current is not None and current.revoked_at is None:
        raise VaultError(f"{vault.path}: {who.name} ({who.key_id[:16]}) is already granted")
    if not scopes:
        raise VaultError("an investigator needs at least one scope (a collection name, or '*')")
    keys = DataKeys(vault, custodian)
    stmt = {
        "key_id": who.key_id,
        "name": who.name,
        "scopes": sorted(set(scopes)),
        "ed25519": b64e(who.ed25519),
        "x25519": b64e(who.x25519),
        "at": now,
    }
    with vault.batch(custodian) as b:
        seq = b.append(make_statement("investigator_grant", stmt, custodian))
        for collection in sorted(_scoped_collections(vault, scopes, keys)):
            keys.share(b, collection, who.key_id, who.x25519)
    return seq


def revoke_investigator(vault: Vault, custodian: Identity, key_id: str, now: str, reason: str = "") -> int:
    """Revoke, and rotate the data keys they held so new content is sealed from them.

    Text they already read or exported cannot be recalled; the rotation only protects
    content ingested after this point.
    """
    _require_custodian(vault, custodian)
    roster = investigators(vault)
    matches = [k for k in roster if k.startswith(key_id)] if len(key_id) >= 8 else []
    if len(matches) != 1:
        raise VaultError(f"{vault.path}: no single investigator matches {key_id!r}")
    inv = roster[matches[0]]
    if inv.revoked_at:
        raise VaultError(f"{vault.path}: {inv.name} was already revoked at {inv.revoked_at}")
    keys = DataKeys(vault, custodian)
    stmt = {"key_id": inv.key_id, "name": inv.name, "at": now, "reason": reason}
    with vault.batch(custodian) as b:
        seq = b.append(make_statement("investigator_revoke", stmt, custodian))
        for collection in sorted(_scoped_collections(vault, list(inv.scopes), keys)):
            recipients = {
                i.key_id: i.x25519
                for i in roster.values()
                if i.key_id != inv.key_id
                and i.revoked_at is None
                and (ALL_SCOPES in i.scopes or collection in i.scopes)
            }
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
    """Append a tombstone, then delete the blob, in one transaction."""
    _require_custodian(vault, custodian)
    if not vault.query("SELECT 1 FROM v_digests WHERE digest = ? LIMIT 1", [digest]):
        raise VaultError(f"{vault.path}: digest {digest} is not referenced by any log entry")
    if vault.query("SELECT 1 FROM v_tombstones WHERE digest = ? LIMIT 1", [digest]):
        raise VaultError(f"{vault.path}: digest {digest} is already purged (a tombstone exists)")
    stmt = {
        "digest": digest,
        "policy": policy,
        "reason": reason,
        "authorizer": authorizer,
        "effective_at": effective_at,
    }
    with vault.batch(custodian) as b:
        seq = b.append(make_statement("tombstone", stmt, custodian))
        b.delete_blobs(digest)
    return seq


def record_access(
    vault: Vault, investigator: Identity, action: str, target: str, now: str, forensic: bool = False
) -> int:
    """An access entry signed by the investigator, checkpointed under their key."""
    stmt: dict[str, Any] = {"action": action, "target": target, "at": now}
    if forensic:
        stmt["forensic"] = True
    with vault.batch(investigator) as b:
        return b.append(make_statement("access", stmt, investigator))


def record_finding(
    vault: Vault, investigator: Identity, answer_id: str, target: str, note: str, now: str
) -> int:
    stmt = {"answer_id": answer_id, "target": target, "note": note, "at": now}
    with vault.batch(investigator) as b:
        return b.append(make_statement("finding", stmt, investigator))
