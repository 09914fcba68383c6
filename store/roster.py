"""Who may sign and who may read, as the log says today.

Producer keys and investigators are only ever added or revoked by custodian-signed log
entries; this module folds those entries into current state.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from store.crypto import b64d
from store.timeutil import within
from store.vault import Vault

__all__ = ["Investigator", "ProducerKey", "investigators", "producer_keys"]


@dataclass(frozen=True)
class ProducerKey:
    key_id: str
    name: str
    ed25519: bytes
    valid_from: str | None
    valid_until: str | None
    revoked_at: str | None
    added_seq: int

    def valid_at(self, when: str) -> bool:
        """Signed inside its window and before any revocation, compared as instants."""
        return within(when, self.valid_from, self.valid_until, self.revoked_at)


@dataclass(frozen=True)
class Investigator:
    key_id: str
    name: str
    scopes: tuple[str, ...]
    ed25519: bytes
    x25519: bytes
    granted_at: str
    revoked_at: str | None


def producer_keys(vault: Vault) -> dict[str, ProducerKey]:
    keys: dict[str, ProducerKey] = {}
    rows = vault.query(
        "SELECT seq, action, key_id, name, ed25519, valid_from, valid_until, at_time "
        "FROM v_keys WHERE role = 'producer' OR action = 'revoke' ORDER BY seq"
    )
    for seq, action, key_id, name, ed, vf, vu, at in rows:
        if action == "add":
            keys[key_id] = ProducerKey(key_id, name, b64d(ed), vf, vu, None, int(seq))
        elif key_id in keys:
            k = keys[key_id]
            keys[key_id] = ProducerKey(
                k.key_id, k.name, k.ed25519, k.valid_from, k.valid_until, at, k.added_seq
            )
    return keys


def investigators(vault: Vault) -> dict[str, Investigator]:
    out: dict[str, Investigator] = {}
    rows = vault.query(
        "SELECT action, key_id, name, scopes, ed25519, x25519, at_time FROM v_investigators ORDER BY seq"
    )
    for action, key_id, name, scopes, ed, xx, at in rows:
        if action == "grant":
            out[key_id] = Investigator(key_id, name, tuple(json.loads(scopes)), b64d(ed), b64d(xx), at, None)
        elif key_id in out:
            i = out[key_id]
            out[key_id] = Investigator(i.key_id, i.name, i.scopes, i.ed25519, i.x25519, i.granted_at, at)
    return out
