"""The local access journal: where looks at evidence go when the vault cannot take them.

On read-only media, or in forensic mode, access entries are signed exactly as they
would be in the log and appended to TRACER_HOME/journal/<origin>.jsonl instead.  Reading
them back checks each signature against the vault's roster, so a journal line nobody
could have signed is shown as such rather than trusted.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TypedDict

from store.dsse import Envelope, verify_envelope
from store.errors import InputError, SignatureError
from store.roster import investigators
from store.vault import Vault
from store.words import SignatureState
from tracer.engine.trust import TrustStore

__all__ = ["JournalEntry", "read_journal"]


class JournalEntryJSON(TypedDict):
    """A journal line as `tracer access --json` lists it beside the log's access entries."""

    seq: None
    source: str
    journal_line: int
    investigator: str
    key_id: str
    action: str
    target: str
    at: str
    forensic: bool
    signature: SignatureState


@dataclass(frozen=True)
class JournalEntry:
    line: int
    key_id: str
    investigator: str
    action: str
    target: str
    at: str
    forensic: bool
    signature: SignatureState

    def to_json(self) -> JournalEntryJSON:
        return {
            "seq": None,
            "source": "journal",
            "journal_line": self.line,
            "investigator": self.investigator,
            "key_id": self.key_id,
            "action": self.action,
            "target": self.target,
            "at": self.at,
            "forensic": self.forensic,
            "signature": self.signature,
        }


def read_journal(vault: Vault, trust: TrustStore | None = None) -> list[JournalEntry]:
    path = (trust or TrustStore()).journal(vault.origin)
    if not path.exists():
        return []
    roster = investigators(vault)
    keys = {k: i.ed25519 for k, i in roster.items()}
    keys[vault.custodian.key_id] = vault.custodian.ed25519
    names = {k: i.name for k, i in roster.items()} | {vault.custodian.key_id: vault.custodian.name}
    out: list[JournalEntry] = []
    for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        try:
            record = json.loads(raw)
            env = Envelope.from_json(record["entry"]["envelope"], str(path), f"line {n}")
            key_id = verify_envelope(env, keys)
            signature = SignatureState.VALID
            stmt = json.loads(env.payload)["statement"]
        except (ValueError, KeyError, TypeError, InputError) as exc:
            out.append(
                JournalEntry(n, "", "?", "unreadable", str(exc)[:80], "", False, SignatureState.UNREADABLE)
            )
            continue
        except SignatureError:
            key_id = env.signatures[0].keyid if env.signatures else ""
            signature = SignatureState.SIGNATURE_INVALID
            stmt = _unverified_statement(env)
        out.append(
            JournalEntry(
                n,
                key_id,
                names.get(key_id, key_id[:16]),
                str(stmt.get("action", "")),
                str(stmt.get("target", "")),
                str(stmt.get("at", "")),
                bool(stmt.get("forensic", False)),
                signature,
            )
        )
    return out


def _unverified_statement(env: Envelope) -> dict[str, object]:
    """What an entry whose signature fails says it is (shown as such, never trusted)."""
    try:
        body = json.loads(env.payload)
        stmt = body.get("statement", {}) if isinstance(body, dict) else {}
    except ValueError:
        return {}
    return stmt if isinstance(stmt, dict) else {}
