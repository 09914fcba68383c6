"""The log entries a pack cites, each with an RFC 6962 inclusion proof to the checkpoint.

A cited record travels as the exact bytes that were hashed into the tree (base64), so
a reader can recompute the leaf hash and walk the proof to the signed root without
trusting anything tracer says about the entry.  Entries appended after the
checkpoint (an investigator's finding written after the custodian last signed) carry
no proof; they are marked as such and checked by their own DSSE signature only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from store import merkle, queries
from store.crypto import b64e
from store.entries import LogEntry
from store.vault import Vault
from tracer.report.model import ReportError

__all__ = ["AFTER_CHECKPOINT", "CitingRole", "RecordSet", "read_entries"]

#: seqs per query when a pack's cited entries are read
_READ_CHUNK = 500

AFTER_CHECKPOINT = (
    "appended after the custodian checkpoint this pack is computed against: no inclusion "
    "proof; only the entry's own DSSE signature vouches for it"
)


class CitingRole(StrEnum):
    """Why the pack cites a log entry (`records[].cited_by[].role`).  Not `EntryKind`: an
    entry of one kind is cited in several roles (a revision as the cited or the current
    one, a manifest as the answer's own or as lineage, a note or a tag in a case)."""

    MANIFEST = "manifest"
    LINEAGE_MANIFEST = "lineage_manifest"
    FINDING = "finding"
    TOMBSTONE = "tombstone"
    CITED_REVISION = "cited_revision"
    CURRENT_REVISION = "current_revision"
    DOCUMENT_DELETION = "document_deletion"
    VAULT_INIT = "vault_init"
    EXPORT = "export"
    PRODUCER_KEY = "producer_key"
    CASE_OPEN = "case_open"
    CASE_TAG = "case_tag"
    CASE_NOTE = "case_note"
    CASE_FINDING = "case_finding"
    CASE_ACTIVITY = "case_activity"
    CASE_CONCLUSION = "case_conclusion"
    HOLD = "hold"
    HOLD_RELEASE = "hold_release"


@dataclass
class RecordSet:
    """Which log entries the pack cites, and for whom (answer, passage, role)."""

    _cites: dict[int, list[dict[str, str]]] = field(default_factory=dict)

    def cite(self, seq: int, role: CitingRole, answer_id: str = "", passage_id: str = "") -> None:
        ref = {"role": role.value}  # the plain word: the pack's JSON is built of plain values
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
        self,
        vault: Vault,
        tree_size: int,
        leaves: list[bytes],
        head_size: int | None = None,
        entries: Mapping[int, LogEntry] | None = None,
    ) -> list[dict[str, Any]]:
        """One JSON object per cited entry, in log order, with its proof to `tree_size`
        (the custodian's checkpoint), or to `head_size` (the exporter's checkpoint, which
        the pack proves consistent with it) for an entry appended after the first.

        `entries`: the cited entries already read (`read_entries`); any other is read
        here. Proofs share one `merkle.ProofTree` per tree size, so a pack citing a share
        of the log hashes the tree once, not once per record."""
        seqs = self.seqs()
        known = dict(entries or {})
        known.update(read_entries(vault, [s for s in seqs if s not in known]))
        trees: dict[int, merkle.ProofTree] = {}
        out: list[dict[str, Any]] = []
        for seq in seqs:
            entry = known[seq]
            record: dict[str, Any] = {
                "seq": seq,
                "kind": entry.kind,
                "entry": b64e(entry.data),
                "leaf_hash": entry.leaf.hex(),
                "cited_by": self._cites[seq],
            }
            size = tree_size if seq < tree_size else head_size
            if size is not None and seq < size:
                record["inclusion"] = _inclusion(vault, trees, leaves, size, seq, entry)
            else:
                record["inclusion"] = None
                record["note"] = AFTER_CHECKPOINT
            out.append(record)
        return out


def _inclusion(
    vault: Vault,
    trees: dict[int, merkle.ProofTree],
    leaves: list[bytes],
    size: int,
    seq: int,
    entry: LogEntry,
) -> dict[str, Any]:
    """Entry `seq`'s inclusion proof in the tree of `size` (one ProofTree per size, kept in
    `trees`); refused when the stored leaf is not the entry's bytes' hash."""
    if leaves[seq] != entry.leaf:
        raise ReportError(
            f"{vault.path}: log entry {seq}: stored leaf hash does not match the entry "
            "bytes; run `tracer verify` before exporting"
        )
    tree = trees.get(size)
    if tree is None:
        tree = trees[size] = merkle.ProofTree(leaves, size)
    proof = tree.inclusion_proof(seq)
    return {"tree_size": size, "leaf_index": seq, "hashes": [h.hex() for h in proof]}


def read_entries(vault: Vault, seqs: list[int]) -> dict[int, LogEntry]:
    """The log entries at `seqs`, a few hundred per query; a seq the log lacks is refused
    as `Vault.entry` refuses it."""
    out: dict[int, LogEntry] = {}
    wanted = sorted(set(seqs))
    for i in range(0, len(wanted), _READ_CHUNK):
        out.update(queries.entries_at(vault, wanted[i : i + _READ_CHUNK]))
    for seq in wanted:
        if seq not in out:
            out[seq] = vault.entry(seq)  # raises: no such entry
    return out
