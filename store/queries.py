"""Every read the application makes, as named functions over the derived views.

The engine and the TUI never write SQL; they call these.  Lists are paged with keyset
pagination so a million-passage vault is never loaded whole.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from store.entries import EntryKind, LogEntry
from store.errors import VaultDamagedError
from store.filters import AnswerFilter
from store.records import MalformedRecordError, Revision
from store.rows import TombstoneRow

if TYPE_CHECKING:
    # types only: a worker that checks log rows imports this module, never a vault
    from store.vault import Vault

__all__ = [
    "AccessRow",
    "AnswerFilter",
    "AnswerRow",
    "DocumentRow",
    "FindingRow",
    "RevisionRow",
    "TombstoneRow",
    "access_rows",
    "answer_count",
    "answer_entry",
    "answer_rows",
    "answer_seqs_many",
    "answers_citing_digest",
    "answers_citing_document",
    "blob_present",
    "deletion_of",
    "deletions_of_many",
    "derivation_edges",
    "derived_from_of",
    "documents",
    "entries_at",
    "finding_rows",
    "lineage_of",
    "log_rows_many",
    "producers",
    "revision_seqs_many",
    "revisions_of",
    "revisions_of_many",
    "tombstone_map",
    "tombstone_of",
    "tombstones",
]


@dataclass(frozen=True)
class AnswerRow:
    seq: int
    run_id: str
    answer_id: str
    answer_kind: str
    generated_at: str
    producer_system: str
    collection: str
    n_passages: int
    n_citations: int


@dataclass(frozen=True, slots=True)
class RevisionRow(Revision):
    """A revision as the views list it, with the log entry that logged it."""

    seq: int


@dataclass(frozen=True, slots=True)
class DocumentRow:
    """A source document as `v_revisions` lists it: its latest title and collection."""

    document_id: str
    title: str
    collection: str
    revisions: int
    latest_committed_at: str


@dataclass(frozen=True, slots=True)
class AccessRow:
    """One access entry: who (an investigator key id) did what to which target, when."""

    seq: int
    investigator: str
    action: str
    target: str
    at: str
    forensic: bool


@dataclass(frozen=True, slots=True)
class FindingRow:
    """One investigator note (`v_findings`) on an answer, a claim or a passage."""

    seq: int
    investigator: str
    answer_id: str
    target: str
    note: str
    at: str


_ANSWER_COLS = (
    "seq, run_id, answer_id, answer_kind, generated_at, producer_system, collection, n_passages, n_citations"
)


def _where(f: AnswerFilter) -> tuple[str, list[Any]]:
    clauses: list[str] = []
    params: list[Any] = []
    if f.text:
        clauses.append(
            "(answer_id ILIKE ? OR run_id ILIKE ? OR producer_system ILIKE ? OR collection ILIKE ?)"
        )
        params += [f"%{f.text}%"] * 4
    if f.producer:
        clauses.append("producer_system ILIKE ?")
        params.append(f"%{f.producer}%")
    if f.date_from:
        clauses.append("generated_at >= ?")
        params.append(f.date_from)
    if f.date_to:
        clauses.append("generated_at < ?")
        params.append(f.date_to)
    if f.document:
        clauses.append("answer_id IN (SELECT answer_id FROM v_passages WHERE document_id ILIKE ?)")
        params.append(f"%{f.document}%")
    if f.answer_ids is not None:
        if not f.answer_ids:
            clauses.append("FALSE")
        else:
            clauses.append(f"answer_id IN ({', '.join('?' for _ in f.answer_ids)})")
            params += list(f.answer_ids)
    return (" WHERE " + " AND ".join(clauses)) if clauses else "", params


def answer_rows(
    vault: Vault, f: AnswerFilter, limit: int, after_seq: int = -1, descending: bool = False
) -> list[AnswerRow]:
    """One page of answers by log order; `after_seq` is the keyset cursor."""
    where, params = _where(f)
    op, order = ("<", "DESC") if descending else (">", "ASC")
    cursor = after_seq if not (descending and after_seq < 0) else 2**62
    glue = " AND " if where else " WHERE "
    sql = (
        f"SELECT {_ANSWER_COLS} FROM v_answers{where}{glue}seq {op} ? "  # noqa: S608
        f"ORDER BY seq {order} LIMIT ?"
    )
    rows = vault.query(sql, [*params, cursor, limit])
    return [AnswerRow(*r) for r in rows]


def answer_count(vault: Vault, f: AnswerFilter) -> int:
    where, params = _where(f)
    row = vault.query(f"SELECT count(*) FROM v_answers{where}", params)  # noqa: S608
    return int(row[0][0]) if row else 0


def answer_entry(vault: Vault, answer_id: str) -> tuple[int, LogEntry] | None:
    """The signed log entry behind an answer: the engine reads the manifest, not the view."""
    # One round trip, read with fetchall: a result left open by fetchone would refuse the
    # Arrow registrations of the batched blob reads that follow on this connection.
    found = _answer_entry(vault, answer_id)
    if found is None or found[1] is None:
        # absent, or the row names another entry: the index is proven (and mended) first,
        # so a deleted or edited row never reads as "no such answer" nor as another's record
        vault.views.require("v_answers")
        found = _answer_entry(vault, answer_id)
    if found is None:
        return None
    seq, entry = found
    if entry is None:
        raise VaultDamagedError(
            f"{vault.path}: log entry {seq}, which answer {answer_id!r} is indexed to, does not hold "
            "(its bytes do not hash to its leaf or log another answer): run `tracer verify`"
        )
    return seq, entry


def _answer_entry(vault: Vault, answer_id: str) -> tuple[int, LogEntry | None] | None:
    """(seq, the entry when it logs `answer_id`; None in its place when it logs another)."""
    # the first row is chosen here: ORDER BY ... LIMIT 1 makes DuckDB scan v_answers
    # instead of looking the id up in its index
    rows = vault.query("SELECT seq FROM v_answers WHERE answer_id = ?", [answer_id])
    if not rows:
        return None
    seq = min(int(r[0]) for r in rows)
    found = vault.rows_at([seq]).get(seq)
    return seq, _entry_of(answer_id, found[0] if found else None)


def _entry_of(answer_id: str, data: bytes | None) -> LogEntry | None:
    """The entry `v_answers` points `answer_id` to, or None when that row logs another."""
    if data is None:
        return None
    entry = LogEntry.from_bytes(bytes(data))
    if entry.kind not in (EntryKind.MANIFEST, EntryKind.IMPORTED_TRACE):
        return None
    # bytes that no longer hash to their leaf still name their answer: the trace shows
    # the broken signature or record as its finding; only another answer's entry is refused
    try:
        if entry.answer_record().answer_id != answer_id:
            return None
    except MalformedRecordError:
        return entry  # a damaged record is the trace's finding to show
    return entry


def answer_entries_many(vault: Vault, answer_ids: list[str]) -> dict[str, tuple[int, LogEntry]]:
    """`answer_entry` of many answers in one query, for each id whose first row logs it and
    reads as an entry. Every other id is left out, for `answer_entry` to prove the index
    (and mend it) or refuse on its own, exactly as if it had been asked alone."""
    if not answer_ids:
        return {}
    rows = vault.query(
        "SELECT answer_id, seq FROM v_answers WHERE answer_id = ANY(?)", [sorted(set(answer_ids))]
    )
    seqs: dict[str, int] = {}
    for aid, seq in rows:
        if aid not in seqs or int(seq) < seqs[aid]:
            seqs[str(aid)] = int(seq)
    stored = vault.rows_at(list(seqs.values()))
    first = {aid: (seq, stored[seq][0] if seq in stored else None) for aid, seq in seqs.items()}
    out: dict[str, tuple[int, LogEntry]] = {}
    for aid, (seq, data) in first.items():
        try:
            entry = _entry_of(aid, data)
        except ValueError:
            continue
        if entry is not None:
            out[aid] = (seq, entry)
    return out


def revisions_of(vault: Vault, document_id: str) -> list[RevisionRow]:
    vault.views.require("v_revisions")
    rows = vault.query(
        "SELECT document_id, revision, source_system, source_revision, path, title, uri, "
        "backend, collection, committed_at, content_sha256, seq FROM v_revisions "
        "WHERE document_id = ? ORDER BY committed_at, seq",
        [document_id],
    )
    return [RevisionRow(*r) for r in rows]


def revisions_of_many(vault: Vault, document_ids: list[str]) -> dict[str, list[RevisionRow]]:
    """`revisions_of` for many documents in one query (a page of answers cites ~a hundred)."""
    vault.views.require("v_revisions")
    if not document_ids:
        return {}
    rows = vault.query(
        "SELECT document_id, revision, source_system, source_revision, path, title, uri, "
        "backend, collection, committed_at, content_sha256, seq FROM v_revisions WHERE document_id = ANY(?)",
        [list(document_ids)],
    )
    out: dict[str, list[RevisionRow]] = {d: [] for d in document_ids}
    for row in sorted((RevisionRow(*r) for r in rows), key=lambda r: (r.document_id, r.committed_at, r.seq)):
        out[row.document_id].append(row)
    return out


def deletion_of(vault: Vault, document_id: str) -> tuple[int, str, str] | None:
    """(seq, deleted_at, reason) of the latest deletion of a document, if any."""
    vault.views.require("v_deletions")
    rows = vault.query(
        "SELECT seq, deleted_at, reason FROM v_deletions WHERE document_id = ? "
        "ORDER BY deleted_at DESC, seq DESC LIMIT 1",
        [document_id],
    )
    return (int(rows[0][0]), str(rows[0][1]), str(rows[0][2])) if rows else None


def deletions_of_many(vault: Vault, document_ids: list[str]) -> dict[str, tuple[int, str, str] | None]:
    """`deletion_of` for many documents in one query (None where a document has none)."""
    vault.views.require("v_deletions")
    out: dict[str, tuple[int, str, str] | None] = dict.fromkeys(document_ids)
    if not document_ids:
        return out
    rows = vault.query(
        "SELECT document_id, seq, deleted_at, reason FROM v_deletions WHERE document_id = ANY(?)",
        [list(document_ids)],
    )
    # the latest per document (as `deletion_of`), chosen here rather than by a window in SQL
    for doc, seq, at, reason in sorted(rows, key=lambda r: (str(r[2]), int(r[1]))):
        out[str(doc)] = (int(seq), str(at), str(reason))
    return out


def tombstone_of(vault: Vault, digest: str) -> TombstoneRow | None:
    """The first tombstone of `digest`, from the log (`Vault.tombstone_index`)."""
    return vault.index.tombstone_index().get(digest)


def tombstone_map(vault: Vault) -> dict[str, TombstoneRow]:
    """Every tombstone by digest (the first, if a digest was ever tombstoned twice)."""
    out: dict[str, TombstoneRow] = {}
    for t in tombstones(vault):
        out.setdefault(t.digest, t)
    return out


def entries_at(vault: Vault, seqs: list[int]) -> dict[int, LogEntry]:
    """Log entries by seq, in one read (used to page manifests in with their answer rows)."""
    if not seqs:
        return {}
    rows = vault.query(
        f"SELECT seq, entry FROM log WHERE seq IN ({', '.join('?' for _ in seqs)})",  # noqa: S608
        list(seqs),
    )
    return {int(seq): LogEntry.from_bytes(bytes(data)) for seq, data in rows}


def tombstones(vault: Vault) -> list[TombstoneRow]:
    """Every tombstone (the first of each digest), in log order, from the log."""
    return sorted(vault.index.tombstone_index().values(), key=lambda t: t.seq)


def tombstone_collections(vault: Vault) -> dict[str, set[str]]:
    """digest -> the collections of the records that cite the purged text (manifests'
    references and revisions' content): who may know that it was purged."""
    vault.views.require("v_tombstones", "v_digests", "v_revisions")
    rows = vault.query(
        "SELECT t.digest, r.collection FROM v_tombstones t JOIN ("
        "SELECT digest, collection FROM v_digests UNION SELECT content_sha256, collection FROM v_revisions"
        ") r ON r.digest = t.digest"
    )
    out: dict[str, set[str]] = {}
    for digest, collection in rows:
        out.setdefault(str(digest), set()).add(str(collection))
    return out


def blob_present(vault: Vault, digest: str) -> bool:
    return bool(vault.query("SELECT 1 FROM blobs WHERE digest = ? LIMIT 1", [digest]))


def documents(vault: Vault) -> list[DocumentRow]:
    """Every source document, by id."""
    vault.views.require("v_revisions")
    rows = vault.query(
        "SELECT document_id, arg_max(title, committed_at), arg_max(collection, committed_at), "
        "count(*), max(committed_at) FROM v_revisions GROUP BY document_id ORDER BY document_id"
    )
    return [DocumentRow(str(a), str(b), str(c), int(d), str(e)) for a, b, c, d, e in rows]


def producers(vault: Vault) -> list[str]:
    rows = vault.query("SELECT DISTINCT producer_system FROM v_answers ORDER BY 1")
    return [str(r[0]) for r in rows]


def answers_citing_document(vault: Vault, document_id: str, revision: str | None = None) -> list[str]:
    vault.views.require("v_passages")
    sql = "SELECT DISTINCT answer_id FROM v_passages WHERE document_id = ?"
    params: list[Any] = [document_id]
    if revision is not None:
        sql += " AND doc_revision = ?"
        params.append(revision)
    return [str(r[0]) for r in vault.query(sql + " ORDER BY 1", params)]


def answers_citing_digest(vault: Vault, digest: str) -> list[str]:
    """Answers whose evidence includes `digest`, directly or through a cited revision."""
    vault.views.require("v_answers", "v_digests", "v_passages", "v_revisions")
    rows = vault.query(
        "SELECT DISTINCT a.answer_id FROM v_answers a JOIN v_digests d ON d.seq = a.seq "
        "WHERE d.digest = ? "
        "UNION SELECT DISTINCT p.answer_id FROM v_passages p JOIN v_revisions r "
        "ON r.document_id = p.document_id AND r.revision = p.doc_revision "
        "WHERE r.content_sha256 = ? ORDER BY 1",
        [digest, digest],
    )
    return [str(r[0]) for r in rows]


def derivation_edges(vault: Vault) -> list[tuple[str, str]]:
    """(derived answer id, source answer id) for every lineage entry and derived passage."""
    vault.views.require("v_answers", "v_passages")
    edges: set[tuple[str, str]] = set()
    for aid, lineage in vault.query("SELECT answer_id, lineage FROM v_answers WHERE lineage <> '[]'"):
        value = json.loads(lineage)
        if isinstance(value, list):
            edges.update((str(aid), str(v)) for v in value)
    rows = vault.query(
        "SELECT DISTINCT answer_id, derived_from FROM v_passages WHERE derived_from IS NOT NULL"
    )
    edges.update((str(a), str(b)) for a, b in rows)
    return sorted(edges)


def lineage_of(vault: Vault, answer_id: str) -> list[str]:
    vault.views.require("v_answers")
    rows = vault.query("SELECT lineage FROM v_answers WHERE answer_id = ?", [answer_id])
    if not rows:
        return []
    value = json.loads(rows[0][0])
    return [str(v) for v in value] if isinstance(value, list) else []


def derived_from_of(vault: Vault, answer_id: str) -> list[str]:
    vault.views.require("v_passages")
    rows = vault.query(
        "SELECT DISTINCT derived_from FROM v_passages WHERE answer_id = ? "
        "AND derived_from IS NOT NULL ORDER BY 1",
        [answer_id],
    )
    return [str(r[0]) for r in rows]


def access_rows(vault: Vault, limit: int = 10_000) -> list[AccessRow]:
    """The access entries, newest first."""
    rows = vault.query(
        "SELECT seq, investigator, action, target, at_time, forensic FROM v_access ORDER BY seq DESC LIMIT ?",
        [limit],
    )
    return [AccessRow(int(a), str(b), str(c), str(d), str(e), bool(f)) for a, b, c, d, e, f in rows]


def finding_rows(vault: Vault, answer_id: str | None = None) -> list[FindingRow]:
    """Investigator notes in log order, of one answer or of all."""
    if answer_id is None:
        rows = vault.query(
            "SELECT seq, investigator, answer_id, target, note, at_time FROM v_findings ORDER BY seq"
        )
    else:
        rows = sorted(
            vault.query(
                "SELECT seq, investigator, answer_id, target, note, at_time FROM v_findings "
                "WHERE answer_id = ?",
                [answer_id],
            ),
            key=lambda r: int(r[0]),
        )
    return [FindingRow(int(a), str(b), str(c), str(d), str(e), str(f)) for a, b, c, d, e, f in rows]


def blob_data_keys(vault: Vault) -> list[tuple[str, str, int]]:
    """(collection, dk_id, texts stored under it) for every data key that encrypts a text."""
    rows = vault.query(
        "SELECT collection, dk_id, count(*) FROM blobs GROUP BY collection, dk_id ORDER BY 1, 2"
    )
    return [(str(c), str(k), int(n)) for c, k, n in rows]


def answer_seqs_many(vault: Vault, answer_ids: list[str]) -> list[tuple[str, int]]:
    """(answer id, seq) of every `v_answers` row naming one of `answer_ids`, in one
    query. A derived row: only a hint of where to look in the log."""
    if not answer_ids:
        return []
    rows = vault.query(
        "SELECT answer_id, seq FROM v_answers WHERE answer_id IN (SELECT unnest(?::VARCHAR[]))",
        [sorted(set(answer_ids))],
    )
    return [(str(a), int(s)) for a, s in rows]


def revision_seqs_many(vault: Vault, document_ids: list[str]) -> list[tuple[str, str, int]]:
    """(document id, revision, seq) of every `v_revisions` row of these documents, in
    one query. A derived row: only a hint of where to look in the log."""
    if not document_ids:
        return []
    rows = vault.query(
        "SELECT document_id, revision, seq FROM v_revisions "
        "WHERE document_id IN (SELECT unnest(?::VARCHAR[]))",
        [sorted(set(document_ids))],
    )
    return [(str(d), str(r), int(s)) for d, r, s in rows]


def log_rows_many(vault: Vault, seqs: list[int]) -> list[tuple[int, bytes, bytes]]:
    """(seq, entry bytes, stored leaf hash) of these log rows (`Vault.rows_at`); the caller
    checks the bytes against the leaf and the leaves against a signed checkpoint."""
    return [(q, d, h) for q, (d, h) in vault.rows_at(seqs).items()]
