"""Gather one pack's evidence from an unlocked session: traces, cited records, keys.

Everything historical comes from the engine's trace (which releases text only when its
digest verifies) and is then cut to the exporter's scope; everything the reader needs
to re-check it (log entries, proofs, keys) is read through `store` functions, never SQL.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from store import merkle, queries
from store.crypto import PublicIdentity
from store.entries import EntryKind, LogEntry
from store.errors import SignatureError
from store.note import Checkpoint, verify_checkpoint
from store.queries import RevisionRow
from store.roster import investigators, producer_keys
from store.words import CurrencyReason, SignatureState
from tracer.engine.case import CaseDesk
from tracer.engine.evidence import TextResult
from tracer.engine.normalizers import RECORDED
from tracer.engine.serialize import trace_json
from tracer.engine.session import Session
from tracer.engine.trace import LineageNode, PassageTrace, Tracer
from tracer.engine.verify import verify
from tracer.engine.vocabulary import Integrity
from tracer.report.casepack import CaseSelection, case_section, holds_of_answer, verification_section
from tracer.report.keys import keys_json, manifest_signature
from tracer.report.model import LIMITS, SCHEMA_ID, ReportError
from tracer.report.records import CitingRole, RecordSet, read_entries
from tracer.report.redact import hidden_answer, redact_trace

__all__ = ["Collected", "collect"]


@dataclass(frozen=True)
class Collected:
    """report.json's content (before file digests), keys.json, and the checkpoint note."""

    report: dict[str, Any]
    keys: dict[str, Any]
    note: str


def _custodian_checkpoint(session: Session) -> tuple[str, Checkpoint]:
    """The newest checkpoint the custodian signed, checked against the log it heads.

    Investigators' access entries are checkpointed under their own keys; a reader
    trusts the custodian's key, so proofs are made to the custodian's newest head.
    """
    vault = session.vault
    cust = vault.custodian
    rows = [r for r in vault.checkpoints() if r.signer == cust.key_id]
    if not rows:
        raise ReportError(f"{vault.path}: no checkpoint signed by the custodian {cust.name}")
    note = rows[-1].note
    try:
        cp = verify_checkpoint(note, cust.name, cust.ed25519, origin=vault.origin)
    except SignatureError as exc:
        raise ReportError(f"{vault.path}: custodian checkpoint {rows[-1].id}: {exc}") from exc
    return note, cp


def _exporter_head(session: Session, cp: Checkpoint) -> dict[str, Any] | None:
    """The checkpoint the exporter signed over its own export entry, when it extends the
    custodian's: `report.json` `head`, with the consistency proof filled in by `finish`.

    None when the custodian's checkpoint is already the head (the custodian exported) or
    when nothing was signed (a read-only or forensic export journals its access entry).
    """
    vault = session.vault
    covered = vault.tree.covered_head()
    if session.status.journal is not None or covered is None or covered[0] <= cp.size:
        return None
    size, root = covered
    notes = [r.note for r in vault.checkpoints() if r.size == size and r.signer == session.identity.key_id]
    if not notes:
        return None
    return {
        "size": size,
        "root": root.hex(),
        "signer": {"name": session.name, "key_id": session.identity.key_id},
        "note": notes[-1],
    }


class _Collector:
    def __init__(self, session: Session, desk: CaseDesk, normalizer: str = RECORDED):
        self.s = session
        self.vault = session.vault
        self.normalizer = normalizer
        self.tracer = Tracer(session, normalizer)
        self.desk = desk
        self.records = RecordSet()
        self.pkeys = producer_keys(self.vault)
        self.authors: set[str] = set()

    def answer(self, answer_id: str) -> dict[str, Any]:
        t = self.tracer.trace(answer_id, record=False)
        if not t.visible:
            return hidden_answer(answer_id)
        self.records.cite(t.seq, CitingRole.MANIFEST, answer_id)
        tombs: list[dict[str, Any]] = []
        self._text_tomb(t.question, "question", answer_id, "", tombs)
        self._text_tomb(t.answer, "answer", answer_id, "", tombs)
        for p in t.passages:
            if p.visible:
                self._passage(answer_id, p, tombs)
        for f in t.findings:
            self.records.cite(f.seq, CitingRole.FINDING, answer_id)
            self.authors.add(f.investigator)
        self._lineage(answer_id, t.lineage)
        docs = sorted({p.document_id for p in t.passages if p.visible and p.document_id})
        holds = holds_of_answer(self.desk, answer_id, self.records)
        self.authors.update(h["signer"]["key_id"] for h in holds)
        return {
            "answer_id": answer_id,
            "visible": True,
            "integrity": t.integrity,
            "currency": t.currency,
            "trace": redact_trace(trace_json(t)),
            "tombstones": tombs,
            "documents": [self._history(d) for d in docs],
            "holds": holds,
        }

    def _history(self, document_id: str) -> dict[str, Any]:
        """The in-scope revision history of a cited document (for wasRevisionOf)."""
        revs = [r for r in queries.revisions_of(self.vault, document_id) if self.s.can_read(r.collection)]
        deleted = queries.deletion_of(self.vault, document_id)
        return {
            "document_id": document_id,
            "deletion": (
                {"seq": deleted[0], "deleted_at": deleted[1], "reason": deleted[2]} if deleted else None
            ),
            "revisions": [
                {
                    "revision": r.revision,
                    "source_revision": r.source_revision,
                    "committed_at": r.committed_at,
                    "content_sha256": r.content_sha256,
                    "seq": r.seq,
                }
                for r in revs
            ],
        }

    def _text_tomb(
        self,
        text: TextResult,
        subject: str,
        answer_id: str,
        passage_id: str,
        out: list[dict[str, Any]],
        revision: str | None = None,
    ) -> None:
        tomb = text.tombstone
        if tomb is None:
            return
        self.records.cite(tomb.seq, CitingRole.TOMBSTONE, answer_id, passage_id)
        item: dict[str, Any] = {
            "subject": subject,
            "revision": revision,
            "passage_id": passage_id or None,
            "state": text.state,
            "seq": tomb.seq,
            "digest": tomb.digest,
            "policy": tomb.policy,
            "reason": tomb.reason,
            "authorizer": tomb.authorizer,
            "effective_at": tomb.effective_at,
        }
        if item not in out:
            out.append(item)

    def _revision(
        self, rev: RevisionRow, role: CitingRole, answer_id: str, passage_id: str, out: list[dict[str, Any]]
    ) -> None:
        if not self.s.can_read(rev.collection):
            return
        self.records.cite(rev.seq, role, answer_id, passage_id)
        tomb = queries.tombstone_of(self.vault, rev.content_sha256)
        if tomb is not None:
            text = TextResult(rev.content_sha256, Integrity.PURGED, tombstone=tomb)
            self._text_tomb(text, role.value, answer_id, passage_id, out, rev.revision)

    def _passage(self, answer_id: str, p: PassageTrace, tombs: list[dict[str, Any]]) -> None:
        pid, cur = p.passage_id, p.currency
        self._text_tomb(p.retrieved, "retrieved", answer_id, pid, tombs)
        self._text_tomb(p.model_input, "model_input", answer_id, pid, tombs)
        if cur.cited is not None:
            self._revision(cur.cited, CitingRole.CITED_REVISION, answer_id, pid, tombs)
        if cur.current is not None:
            self._revision(cur.current, CitingRole.CURRENT_REVISION, answer_id, pid, tombs)
        if cur.reason == CurrencyReason.SOURCE_DELETED:
            deleted = queries.deletion_of(self.vault, str(p.document_id))
            if deleted is not None:
                self.records.cite(deleted[0], CitingRole.DOCUMENT_DELETION, answer_id, pid)

    def _lineage(self, answer_id: str, nodes: list[LineageNode]) -> None:
        for n in nodes:
            if not n.visible or n.cycle:
                continue
            found = queries.answer_entry(self.vault, n.answer_id)
            if found is not None:
                self.records.cite(found[0], CitingRole.LINEAGE_MANIFEST, answer_id)
            self._lineage(answer_id, n.children)

    def _proven_leaves(self, cp: Checkpoint, head: dict[str, Any] | None, size: int) -> list[bytes]:
        """The log's leaves up to `size`, refused unless they reproduce the custodian's
        checkpoint (and the exporter's, which `head` then gains a consistency proof to)."""
        vault = self.vault
        leaves = vault.leaf_hashes(size)
        if len(leaves) != size or merkle.root(leaves[: cp.size]) != cp.root:
            raise ReportError(
                f"{vault.path}: the log does not reproduce the custodian checkpoint of size "
                f"{cp.size}; run `tracer verify` to pin the damage"
            )
        if head is not None:
            if merkle.root(leaves).hex() != head["root"]:
                raise ReportError(f"{vault.path}: the log does not reproduce the exporter's checkpoint")
            head["consistency"] = {
                "from_size": cp.size,
                "to_size": size,
                "hashes": [h.hex() for h in merkle.consistency_proof(cp.size, size, leaves)],
            }
        return leaves

    def finish(
        self,
        answers: list[dict[str, Any]],
        selection: str,
        computed_at: str,
        extra: dict[str, Any] | None = None,
        export_seq: int | None = None,
    ) -> Collected:
        s, vault = self.s, self.vault
        note, cp = _custodian_checkpoint(s)
        head = _exporter_head(s, cp)
        size = head["size"] if head is not None else cp.size
        leaves = self._proven_leaves(cp, head, size)
        records, used = self._records(cp.size, leaves, size if head is not None else None, export_seq)
        cust = vault.custodian
        roster = investigators(vault)
        report: dict[str, Any] = {
            "schema": SCHEMA_ID,
            "computed_at": computed_at,
            "limits": LIMITS,
            "selection": selection,
            "exported_by": {
                "name": s.name,
                "key_id": s.identity.key_id,
                "role": s.role,
                "scopes": list(s.scopes),
            },
            "vault": {"origin": vault.origin, "custodian": {"name": cust.name, "key_id": cust.key_id}},
            "checkpoint": {
                "size": cp.size,
                "root": cp.root.hex(),
                "signer": {"name": cust.name, "key_id": cust.key_id},
                "note": note,
            },
            "computed_against": {
                "size": s.status.checkpoint_size,
                "root": s.status.checkpoint_root,
                "forensic": s.status.forensic,
                "forensic_reason": s.status.forensic_reason,
            },
            "normalizer": self.normalizer,
            "summary": _summary(answers),
            "answers": answers,
            "records": records,
        }
        if head is not None:
            report["head"] = head
        report.update(extra or {})
        for item in _signed_items(report.get("case")):
            self.authors.add(item)
        exporter = PublicIdentity(s.name, s.identity.public.ed25519, s.identity.public.x25519)
        keys = keys_json(
            cust,
            exporter,
            [self.pkeys[k] for k in used],
            [roster[a] for a in sorted(self.authors) if a in roster],
        )
        # names beside key ids, for people reading report.md and report.html
        report["people"] = {
            k["key_id"]: k["name"] for k in [keys["custodian"], keys["exporter"], *keys["investigators"]]
        }
        return Collected(report, keys, note)

    def _records(
        self, cp_size: int, leaves: list[bytes], head_size: int | None, export_seq: int | None
    ) -> tuple[list[dict[str, Any]], set[str]]:
        """Every cited log entry with its proof (the vault's first entry, the export's own,
        the producer keys that signed the manifests), and the producer keys used."""
        self.records.cite(0, CitingRole.VAULT_INIT)
        if export_seq is not None:
            self.records.cite(export_seq, CitingRole.EXPORT)
        entries = read_entries(self.vault, self.records.seqs())
        signers = self._manifest_signers(entries)
        used = {key for _state, key in signers.values() if key in self.pkeys}
        for key in sorted(used):
            self.records.cite(self.pkeys[key].added_seq, CitingRole.PRODUCER_KEY)
        records = self.records.build(self.vault, cp_size, leaves, head_size, entries)
        for rec in records:
            if rec["kind"] == EntryKind.MANIFEST:
                state, signer = signers[rec["seq"]]
                # the plain word, as the pack has always held it (and in the same key order)
                rec["signature"], rec["signer"] = state.value, signer
        return records, used

    def _manifest_signers(self, entries: dict[int, LogEntry]) -> dict[int, tuple[SignatureState, str]]:
        out: dict[int, tuple[SignatureState, str]] = {}
        for seq, entry in sorted(entries.items()):
            if entry.kind == EntryKind.MANIFEST:
                out[seq] = manifest_signature(entry, self.pkeys)
        return out


def _summary(answers: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "answers": len(answers),
        "integrity": dict(Counter(a["integrity"] for a in answers)),
        "currency": dict(Counter(a["currency"] for a in answers)),
    }


def _ensure_known(session: Session, answer_ids: list[str]) -> None:
    for aid in answer_ids:
        if queries.answer_entry(session.vault, aid) is None:
            raise ReportError(f"{session.vault.path}: no answer {aid!r} in this vault")


def _signed_items(case: Any) -> list[str]:
    """Key ids of everyone who signed an item of a case section."""
    if not isinstance(case, dict):
        return []
    out = [case["opened"]["by"]["key_id"]]
    for name in ("tags", "notes", "findings", "activity"):
        out += [item["by"]["key_id"] for item in case[name]]
    for h in case["holds"]:
        out.append(h["signer"]["key_id"])
        if h["release"] is not None:
            out.append(h["release"]["signer"]["key_id"])
    if case["conclusion"] is not None:
        out.append(case["conclusion"]["by"]["key_id"])
    return out


def _record_export(session: Session, desk: CaseDesk, target: str, case: CaseSelection | None) -> int | None:
    """The export's own access entry (under the case, when there is one), appended and
    checkpointed by the exporter before anything is read; its seq, when it is in the log."""
    if case is not None:
        return desk.record(case.case_id, "export", target)
    before = session.vault.size()
    session.record("export", target)
    return before if session.vault.size() == before + 1 else None


def collect(
    session: Session,
    answer_ids: list[str],
    computed_at: str,
    selection: str = "",
    case: CaseSelection | None = None,
    normalizer: str = RECORDED,
) -> Collected:
    """Trace every answer and gather its records; records the export as an access entry.

    `normalizer`: check each citation under the normalizer it was recorded with
    ("recorded"), or carry `tracer-norm/1` citations over to that version, as `tracer trace
    --normalizer` does; every verdict in the pack names the version that produced it.
    With `case`, the pack also carries the case file and the vault-wide verification
    (`tracer.report.casepack`)."""
    ids = list(dict.fromkeys(answer_ids))
    if not ids:
        raise ReportError("nothing to export: no answer ids were given")
    _ensure_known(session, ids)
    desk = CaseDesk(session)
    if case is not None:
        desk.view(case.case_id)  # an unknown case is refused before anything is appended
    export_seq = _record_export(session, desk, ",".join(ids), case)
    c = _Collector(session, desk, normalizer)
    c.tracer.prime_ids(ids)
    answers = [c.answer(aid) for aid in ids]
    extra: dict[str, Any] = {}
    if case is not None:
        extra["verification"] = verification_section(desk, verify(session.vault, session))
        extra["case"] = case_section(desk, case, ids, c.records)
    return c.finish(answers, selection, computed_at, extra, export_seq)
