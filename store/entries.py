"""Log entries: values whose bytes and leaf hash are computed, never supplied.

Every entry is RFC 8785 canonical JSON of the form
``{"kind": K, "envelope": <DSSE envelope>, ...unsigned annotations}``.  The envelope
is either a producer's manifest (kept exactly as signed) or a statement signed by the
custodian or an investigator.  Annotations (ingest time, producer faults) are covered
by the Merkle log and the custodian's checkpoint, not by the envelope's signer.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from store.canonical import canonical
from store.crypto import Identity
from store.dsse import Envelope, sign_envelope
from store.merkle import leaf_hash

__all__ = [
    "CUSTODIAN_KINDS",
    "INVESTIGATOR_KINDS",
    "MANIFEST_TYPE",
    "STATEMENT_TYPE",
    "LogEntry",
    "make_entry",
    "make_statement",
]

MANIFEST_TYPE = "application/vnd.tracer.manifest.v1+json"
STATEMENT_TYPE = "application/vnd.tracer.statement.v1+json"

CUSTODIAN_KINDS = frozenset(
    {
        "vault_init",
        "key_add",
        "key_revoke",
        "investigator_grant",
        "investigator_revoke",
        "revision",
        "document_deletion",
        "tombstone",
    }
)
INVESTIGATOR_KINDS = frozenset({"access", "finding"})


@dataclass(frozen=True)
class LogEntry:
    """One log entry; `data` are the exact bytes that were hashed into the tree."""

    data: bytes
    body: dict[str, Any] = field(compare=False, repr=False)
    leaf: bytes = field(compare=False, repr=False)

    @classmethod
    def from_bytes(cls, data: bytes) -> LogEntry:
        body = json.loads(data)
        if not isinstance(body, dict):
            raise ValueError("log entry is not a JSON object")
        return cls(data=data, body=body, leaf=leaf_hash(data))

    def at(self, seq: int) -> LogEntry:
        return LogEntry.from_bytes(canonical({**self.body, "seq": seq}))

    @property
    def seq(self) -> int | None:
        value = self.body.get("seq")
        return value if isinstance(value, int) else None

    @property
    def kind(self) -> str:
        return str(self.body.get("kind", ""))

    @property
    def envelope(self) -> Envelope | None:
        env = self.body.get("envelope")
        return Envelope.from_json(env, "log entry", "$.envelope") if env is not None else None

    @property
    def signer(self) -> str | None:
        env = self.body.get("envelope")
        if isinstance(env, dict):
            sigs = env.get("signatures") or []
            if sigs and isinstance(sigs[0], dict):
                return str(sigs[0].get("keyid", ""))
        return None

    def payload_json(self) -> Any:
        env = self.envelope
        if env is None:
            return None
        payload = json.loads(env.payload)
        if self.kind != "manifest" and isinstance(payload, dict):
            return payload.get("statement", payload)
        return payload


def make_entry(kind: str, envelope: Envelope, **annotations: Any) -> LogEntry:
    body: dict[str, Any] = {"kind": kind, "envelope": envelope.to_json(), **annotations}
    return LogEntry.from_bytes(canonical(body))


def make_statement(kind: str, statement: dict[str, Any], signer: Identity) -> LogEntry:
    """A custodian or investigator statement, signed as a DSSE envelope over JCS bytes."""
    payload = canonical({"type": kind, "statement": statement})
    return make_entry(kind, sign_envelope(payload, STATEMENT_TYPE, signer))
