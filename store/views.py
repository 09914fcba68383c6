"""Derive query rows from log entries.

One pure function, `derive`, is used both when appending (to keep the views current)
and when verifying (to rebuild them and compare), so the two can never disagree about
what a log entry means.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from json.encoder import encode_basestring
from typing import Any

from store.entries import EntryKind, LogEntry
from store.records import Manifest, Passage, Revision, imported_manifest

__all__ = ["Rows", "derive"]

Rows = dict[str, list[tuple[Any, ...]]]


#: json.dumps with these options builds a new encoder per call; build it once
_encode = json.JSONEncoder(ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode


def _j(value: Any) -> str:
    """`_encode(value)`; a list of str (most calls) is joined from its escaped items, which
    is what the encoder writes for it, without setting up the encoder for each call (an
    item that is no str makes `encode_basestring` refuse, and the encoder writes it)."""
    if type(value) is list:
        try:
            return "[" + ",".join(map(encode_basestring, value)) + "]"
        except TypeError:
            return _encode(value)
    return _encode(value)


def _answer_rows(seq: int, entry: LogEntry, m: Manifest, out: Rows, export: str | None = None) -> None:
    """A producer's manifest, or an imported trace (`export`: its export file's digest)
    as an answer of kind "imported": what the export lacks stays NULL, and a passage's
    chain columns are filled only where the importer located it."""
    answer_id, coll = m.answer_id, m.collection
    out["v_answers"].append(
        (
            seq,
            m.run_id,
            answer_id,
            m.kind,
            m.generated_at,
            m.producer.system or "",
            m.producer.version or "",
            entry.signer or "",
            coll,
            m.question_sha256,
            m.answer_sha256,
            len(m.passages),
            len(m.citations),
            _j(list(m.lineage)),
            _j(entry.body.get("faults", [])),
        )
    )
    digests = out["v_digests"].append
    if export is not None:
        digests((seq, export, "export", coll))
    if m.question_sha256 is not None:
        digests((seq, m.question_sha256, "question", coll))
    if m.answer_sha256 is not None:
        digests((seq, m.answer_sha256, "answer", coll))
    passages = out["v_passages"].append
    for idx, ps in enumerate(m.passages):
        passages(_passage_row(seq, answer_id, idx, ps))
        if ps.retrieved_sha256 is not None:
            digests((seq, ps.retrieved_sha256, "retrieved", ps.collection))
        if ps.model_input_sha256 is not None:
            digests((seq, ps.model_input_sha256, "model_input", ps.collection))
    citations = out["v_citations"].append
    for idx, c in enumerate(m.citations):
        citations((seq, answer_id, idx, c.answer_start, c.answer_end, _j(list(c.passage_ids))))


def _passage_row(seq: int, answer_id: str, idx: int, ps: Passage) -> tuple[Any, ...]:
    """A passage's `v_passages` row; the chain columns are NULL where it has no chain."""
    doc, chain = ps.document, ps.chain
    loc = chain.locator if chain is not None else None
    return (
        seq,
        answer_id,
        idx,
        ps.passage_id,
        ps.collection,
        doc.document_id,
        doc.uri,
        doc.revision,
        doc.backend,
        chain.source.system if chain else None,
        chain.source.path if chain else None,
        chain.source.revision if chain else None,
        chain.chunk.chunk_id if chain else None,
        chain.chunk.pipeline_version if chain else None,
        _j(list(loc.heading_path)) if loc else None,
        loc.paragraph if loc else None,
        loc.char_start if loc else None,
        loc.char_end if loc else None,
        ps.retrieved_sha256,
        ps.model_input_sha256,
        chain.normalizer_version if chain else None,
        ps.retrieved_at,
        ps.rank,
        None if ps.score is None else float(ps.score),
        ps.query_sha256,
        ps.derived_from,
    )


def _statement_rows(seq: int, entry: LogEntry, p: Mapping[str, Any], out: Rows) -> None:
    t = entry.entry_kind
    if t is None:  # a kind nobody registered derives no rows (verify reports it)
        return
    if t in (EntryKind.KEY_ADD, EntryKind.KEY_REVOKE):
        out["v_keys"].append(
            (
                seq,
                "add" if t == EntryKind.KEY_ADD else "revoke",
                p["key_id"],
                p.get("name", ""),
                p.get("role", ""),
                p.get("ed25519", ""),
                p.get("valid_from"),
                p.get("valid_until"),
                p["at"],
            )
        )
    elif t in (EntryKind.INVESTIGATOR_GRANT, EntryKind.INVESTIGATOR_REVOKE):
        out["v_investigators"].append(
            (
                seq,
                "grant" if t == EntryKind.INVESTIGATOR_GRANT else "revoke",
                p["key_id"],
                p.get("name", ""),
                _j(p.get("scopes", [])),
                p.get("ed25519", ""),
                p.get("x25519", ""),
                p["at"],
            )
        )
    elif t == EntryKind.REVISION:
        r = Revision.from_json(p)
        out["v_revisions"].append(
            (
                seq,
                r.document_id,
                r.revision,
                r.source_system,
                r.source_revision,
                r.path,
                r.title,
                r.uri,
                r.backend,
                r.collection,
                r.committed_at,
                r.content_sha256,
            )
        )
        out["v_digests"].append((seq, r.content_sha256, EntryKind.REVISION, r.collection))
    elif t == EntryKind.DOCUMENT_DELETION:
        out["v_deletions"].append((seq, p["document_id"], p["deleted_at"], p["reason"]))
    elif t == EntryKind.TOMBSTONE:
        out["v_tombstones"].append(
            (seq, p["digest"], p["policy"], p["reason"], p["authorizer"], p["effective_at"])
        )
    elif t in _CASE_ROWS:
        _CASE_ROWS[t](seq, entry.signer or "", p, out)
    elif t == EntryKind.ACCESS:
        out["v_access"].append(
            (
                seq,
                entry.signer or "",
                p["action"],
                p.get("target", ""),
                p["at"],
                bool(p.get("forensic", False)),
            )
        )
    elif t == EntryKind.FINDING:
        out["v_findings"].append(
            (seq, entry.signer or "", p["answer_id"], p.get("target", ""), p["note"], p["at"])
        )
    if t in (EntryKind.ACCESS, EntryKind.FINDING) and p.get("case_id") is not None:
        _case_item(seq, t, entry.signer or "", p, out)


def _case_item(seq: int, kind: EntryKind, signer: str, p: Mapping[str, Any], out: Rows) -> None:
    """The index of what belongs to a case (`store.casefile` checks each entry's bytes)."""
    out["v_case_items"].append(
        (seq, kind, p["case_id"], signer, p.get("answer_id"), p.get("target", ""), p["at"])
    )


def _case_open(seq: int, signer: str, p: Mapping[str, Any], out: Rows) -> None:
    out["v_cases"].append((seq, p["case_id"], p["title"], p["purpose"], signer, p["at"]))
    _case_item(seq, EntryKind.CASE_OPEN, signer, p, out)


def _tag(seq: int, signer: str, p: Mapping[str, Any], out: Rows) -> None:
    out["v_tags"].append(
        (seq, signer, p.get("case_id"), p["op"], p["tag"], p["answer_id"], p["target"], p["at"])
    )
    if p.get("case_id") is not None:
        _case_item(seq, EntryKind.TAG, signer, p, out)


def _note(seq: int, signer: str, p: Mapping[str, Any], out: Rows, kind: EntryKind = EntryKind.NOTE) -> None:
    out["v_notes"].append((seq, kind, signer, p["case_id"], p.get("answer_id"), p["text"], p["at"]))
    _case_item(seq, kind, signer, p, out)


def _conclusion(seq: int, signer: str, p: Mapping[str, Any], out: Rows) -> None:
    _note(seq, signer, p, out, EntryKind.CASE_CONCLUSION)


def _hold(seq: int, signer: str, p: Mapping[str, Any], out: Rows) -> None:
    subject = p["subject"]
    out["v_holds"].append(
        (seq, "hold", signer, p.get("case_id"), subject["kind"], subject["id"], None, p["reason"], p["at"])
    )
    if p.get("case_id") is not None:
        _case_item(seq, EntryKind.HOLD, signer, p, out)


def _release(seq: int, signer: str, p: Mapping[str, Any], out: Rows) -> None:
    out["v_holds"].append(
        (seq, "release", signer, p.get("case_id"), None, None, p["hold_seq"], p["reason"], p["at"])
    )
    if p.get("case_id") is not None:
        _case_item(seq, EntryKind.HOLD_RELEASE, signer, p, out)


_CASE_ROWS = {
    EntryKind.CASE_OPEN: _case_open,
    EntryKind.CASE_CONCLUSION: _conclusion,
    EntryKind.TAG: _tag,
    EntryKind.NOTE: _note,
    EntryKind.HOLD: _hold,
    EntryKind.HOLD_RELEASE: _release,
}


def derive(seq: int, entry: LogEntry, out: Rows) -> None:
    """Append the view rows that log entry `seq` implies to `out` (table -> rows)."""
    payload = entry.payload_json()
    if entry.kind == EntryKind.MANIFEST:
        _answer_rows(seq, entry, entry.manifest or Manifest.from_json(payload), out)
    elif entry.kind == EntryKind.IMPORTED_TRACE and payload is not None:
        _answer_rows(seq, entry, imported_manifest(payload), out, payload["export"]["sha256"])
    elif payload is not None:
        _statement_rows(seq, entry, payload, out)
