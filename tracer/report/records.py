"""The log entries a pack cites, each with an RFC 6962 inclusion proof to the checkpoint.

A cited record travels as the exact bytes that were hashed into the tree (base64), so
a reader can recompute the leaf hash and walk the proof to the signed root without
trusting anything tracer says about the entry.  Entries appended after the
checkpoint (an investigator's finding written after the custodian last signed) carry
no proof; they are marked as such and checked by their own DSSE signature only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from store import merkle
from store.crypto import b64e
from store.vault import Vault
from tracer.report.model import ReportError

__all__ = ["AFTER_CHECKPOINT", "RecordSet"]

AFTER_CHECKPOINT = (
    "appended after the custodian checkpoint this pack is computed against: no inclusion "
    "proof; only the entry's own DSSE signature vouches for it"
)


@dataclass
class RecordSet:
    """Which log entries the pack cites, and for whom (answer, passage, role)."""

    _cites: dict[int, list[dict[str, str]]] = field(default_factory=dict)

    def cite(self, seq: int, role: str, answer_id: str = "", passage_id: str = "") -> None:
        ref = {"role": role}
        if answer_id:
            ref["answer_id"] = answer_id
        if passage_id:
            ref["passage_id"] = passage_id
        refs = self._cites.setdefault(seq, [])
        if ref not in refs:
            refs.append(ref)

    def seqs(self) -> list[int]:
        return sorted(self._cites)

    def build(
        self, vault: Vault, tree_size: int, leaves: list[bytes], head_size: int | None = None
    ) -> list[dict[str, Any]]:
        """One JSON object per cited entry, in log order, with its proof to `tree_size`
        (the custodian's checkpoint), or to `head_size` (the exporter's checkpoint, which
        the pack proves consistent with it) for an entry appended after the first."""
        out: list[dict[str, Any]] = []
        for seq in self.seqs():
            entry = vault.entry(seq)
            record: dict[str, Any] = {
                "seq": seq,
                "kind": entry.kind,
                "entry": b64e(entry.data),
                "leaf_hash": entry.leaf.hex(),
                "cited_by": self._cites[seq],
            }
            size = tree_size if seq < tree_size else head_size
            if size is not None and seq < size:
                if leaves[seq] != entry.leaf:
                    raise ReportError(
                        f"{vault.path}: log entry {seq}: stored leaf hash does not match the entry "
                        "bytes; run `tracer verify` before exporting"
                    )
                proof = merkle.inclusion_proof(seq, size, leaves)
                record["inclusion"] = {
                    "tree_size": size,
                    "leaf_index": seq,
                    "hashes": [h.hex() for h in proof],
                }
            else:
                record["inclusion"] = None
                record["note"] = AFTER_CHECKPOINT
            out.append(record)
        return out
