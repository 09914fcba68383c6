"""Ingest: manifests, source revisions and document deletions, all or nothing.

Malformed input is refused with the file, JSON path and expectation named.  A correctly
signed manifest that is internally wrong is evidence of a faulty producer: it is kept
exactly as signed and each wrong element is recorded as a fault, never repaired.

A manifest's checks need no vault (`store.ingestprep`); a call of many files shares them
with worker processes (`store.ingestpool`) and takes the results back in file order.
Everything that reads or writes the vault stays here: revisions and deletions (checked
against the stored revisions), the duplicate-answer check, encryption and the append.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from store.batch import Batch
from store.canonical import parse_strict
from store.crypto import Identity, sha256_hex
from store.entries import EntryKind, Statement
from store.errors import InputError, StoreError
from store.gcpause import no_cycle_collection
from store.ingestpool import POOL_MIN_FILES, IngestPool, prepare_files, shared_pool
from store.ingestprep import (
    MAX_INPUT_BYTES,
    Fault,
    ManifestContext,
    check_ids,
    load_input,
    prepare_manifest,
    read_input_file,
)
from store.ingestprep import Prepared as _Prepared
from store.ingestprep import instant_at as _instant
from store.keyring import DataKeys
from store.schemacheck import load_schema, validate
from store.vault import Vault

if TYPE_CHECKING:
    from store.statements import DocumentDeletionStatement, RevisionStatement

__all__ = [
    "MAX_INPUT_BYTES",
    "Fault",
    "IngestPool",
    "IngestReport",
    "Rejected",
    "ingest",
    "load_schema",
    "read_input_file",
    "read_tombstone_request",
    "recipients_for",
]


@dataclass(frozen=True)
class Rejected:
    file: str
    path: str
    message: str


@dataclass
class Accepted:
    file: str
    kind: EntryKind
    ident: str
    seq: int = -1


@dataclass
class IngestReport:
    accepted: list[Accepted] = field(default_factory=list)
    rejected: list[Rejected] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    appended: bool = False
    checkpoint_size: int | None = None

    @property
    def ok(self) -> bool:
        return not self.rejected

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "appended": self.appended,
            "checkpoint_size": self.checkpoint_size,
            "accepted": [a.__dict__ for a in self.accepted],
            "rejected": [r.__dict__ for r in self.rejected],
            "faults": [f.__dict__ for f in self.faults],
        }


def read_tombstone_request(path: Path) -> dict[str, str]:
    """A purge request file (schema tracer.tombstone_request/v1), strictly parsed and validated."""
    file = str(path)
    doc = parse_strict(read_input_file(path), file)
    validate(doc, "tombstone-request-v1", file)
    _instant(doc["effective_at"], file, "$.effective_at")
    return {k: str(v) for k, v in doc.items() if k != "schema"}


def recipients_for(vault: Vault, collection: str) -> dict[str, bytes]:
    """Key ids and X25519 keys of current investigators allowed to read `collection`."""
    return vault.roster().recipients(collection)


class _Ingest:
    def __init__(self, vault: Vault, custodian: Identity, now: str):
        self.vault = vault
        self.custodian = custodian
        self.now = now
        self.roster = vault.roster()
        self.seen_answers: set[str] = set()
        self.seen_revisions: set[tuple[str, str]] = set()
        self._seen_revision_digests: dict[tuple[str, str], str] = {}
        self.known_docs: set[str] = set()
        #: digest -> seq of its tombstone: a purge is final, so these texts are never stored again
        self.tombstoned: dict[str, int] = {d: row.seq for d, row in vault.index.tombstone_index().items()}
        self._stored_revisions: set[tuple[str, str]] | None = None
        self._stored_documents: set[str] | None = None
        self.context = ManifestContext(dict(self.roster.producers), dict(self.tombstoned), now)

    def prepare(self, path: Path) -> _Prepared:
        file, doc = load_input(path)
        if "envelope" in doc:
            return prepare_manifest(self.context, file, doc)
        schema = doc.get("schema")
        if schema == "tracer.source_revision/v1":
            return self.prepare_revision(file, doc)
        if schema == "tracer.document_deletion/v1":
            return self.prepare_deletion(file, doc)
        raise InputError(
            file,
            "$.schema",
            "expected a manifest input ({envelope, contents}) or schema "
            "tracer.source_revision/v1 or tracer.document_deletion/v1",
        )

    def stored_revisions(self) -> set[tuple[str, str]]:
        """(document_id, revision) of every revision in the vault, read once per call
        (one query instead of one per source file; nothing is appended meanwhile)."""
        if self._stored_revisions is None:
            self.vault.views.require("v_revisions")
            rows = self.vault.query("SELECT DISTINCT document_id, revision FROM v_revisions")
            self._stored_revisions = {(str(d), str(r)) for d, r in rows}
        return self._stored_revisions

    def stored_documents(self) -> set[str]:
        if self._stored_documents is None:
            self._stored_documents = {k[0] for k in self.stored_revisions()}
        return self._stored_documents

    def check_answers(self, items: list[_Prepared | InputError]) -> None:
        """Refuse (in place, in file order) manifests whose answer id is already taken."""
        ids = [it.ident for it in items if isinstance(it, _Prepared) and it.kind == EntryKind.MANIFEST]
        if not ids:
            return
        self.vault.views.require("v_answers")
        prior = dict(
            self.vault.query(
                "SELECT answer_id, min(seq) FROM v_answers "
                "WHERE answer_id IN (SELECT unnest(?::VARCHAR[])) GROUP BY answer_id",
                [sorted(set(ids))],
            )
        )
        for i, it in enumerate(items):
            if not (isinstance(it, _Prepared) and it.kind == EntryKind.MANIFEST):
                continue
            answer_id = it.ident
            seq = prior.get(answer_id)
            if seq is not None or answer_id in self.seen_answers:
                where = f"log entry {int(seq)}" if seq is not None else "this ingest run"
                items[i] = InputError(
                    it.file, "$.envelope.payload.answer_id", f"{answer_id!r} already ingested ({where})"
                )
                continue
            self.seen_answers.add(answer_id)

    def prepare_revision(self, file: str, doc: dict[str, Any]) -> _Prepared:
        validate(doc, "source-revision-v1", file)
        _instant(doc["committed_at"], file, "$.committed_at")
        revision_ids = (
            ("document_id",),
            ("revision",),
            ("collection",),
            ("source_system",),
            ("source_revision",),
        )
        check_ids(file, "$", doc, (*revision_ids, ("backend",)))
        key = (doc["document_id"], doc["revision"])
        data = doc["content"].encode("utf-8")
        if key in self.stored_revisions() or key in self.seen_revisions:
            raise InputError(file, "$.revision", self._reused_revision(key, sha256_hex(data)))
        self.seen_revisions.add(key)
        self._seen_revision_digests[key] = sha256_hex(data)
        stmt = {k: v for k, v in doc.items() if k not in ("content", "schema")}
        stmt["content_sha256"] = sha256_hex(data)
        tomb = self.tombstoned.get(stmt["content_sha256"])
        if tomb is not None:
            raise InputError(
                file,
                "$.content",
                f"this text ({stmt['content_sha256']}) was purged under a retention policy (tombstone at "
                f"log entry {tomb}); a purge is final and the text is not stored again",
            )
        # the schema fixed every member; the statement is the document less its text
        entry = Statement(EntryKind.REVISION, cast("RevisionStatement", stmt), self.custodian)
        return _Prepared(
            file, EntryKind.REVISION, f"{key[0]}@{key[1]}", entry, [(doc["collection"], data)], []
        )

    def _reused_revision(self, key: tuple[str, str], digest: str) -> str:
        """Why a revision id seen before is refused: the same text again is a repeat; other
        text under the same id says what the SDK's writer says, bump the revision."""
        before = self._seen_revision_digests.get(key)
        if before is None:
            self.vault.views.require("v_revisions")
            rows = self.vault.query(
                "SELECT content_sha256 FROM v_revisions WHERE document_id = ? AND revision = ?", list(key)
            )
            before = str(rows[0][0]) if rows else None
        what = f"revision {key[1]!r} of {key[0]!r}"
        if before is None or before == digest:
            return f"{what} already ingested"
        return (
            f"{what} already ingested with other content (sha256 {before[:16]}…); a revision id names "
            "one text: bump the revision (a new revision id) for the changed document"
        )

    def prepare_deletion(self, file: str, doc: dict[str, Any]) -> _Prepared:
        validate(doc, "document-deletion-v1", file)
        _instant(doc["deleted_at"], file, "$.deleted_at")
        check_ids(file, "$", doc, (("document_id",),))
        did = doc["document_id"]
        if did not in self.stored_documents() and not any(k[0] == did for k in self.seen_revisions):
            raise InputError(file, "$.document_id", f"no revision of {did!r} was ever ingested")
        stmt = {k: v for k, v in doc.items() if k != "schema"}
        return _Prepared(
            file,
            EntryKind.DOCUMENT_DELETION,
            did,
            Statement(EntryKind.DOCUMENT_DELETION, cast("DocumentDeletionStatement", stmt), self.custodian),
            [],
            [],
        )


def ingest(
    vault: Vault,
    files: list[Path],
    custodian: Identity,
    now: str,
    skip_invalid: bool = False,
    *,
    workers: int | None = None,
    pool: IngestPool | None = None,
) -> IngestReport:
    """Validate every file first; append nothing unless all pass (or `skip_invalid`).

    A call of at least `POOL_MIN_FILES` files shares the manifests' checks with the
    process's worker pool (`store.ingestpool.shared_pool`; `workers` sizes it, 0 checks
    everything here); `pool` uses that pool whatever the call's size. The outcome, down
    to the bytes and order of the entries, is the same either way."""
    if pool is None and len(files) >= POOL_MIN_FILES:
        pool = shared_pool(workers)
    with no_cycle_collection():
        return _ingest(vault, files, custodian, now, skip_invalid, pool)


def _prepare_all(work: _Ingest, files: list[Path], pool: IngestPool | None) -> list[_Prepared | InputError]:
    """Every file prepared, in file order. Without a pool each file is prepared here as it
    comes; with one, manifests are prepared wherever a worker or this process gets to them
    first, and every other file here afterwards, in file order (revisions and deletions
    read what earlier files of the call added)."""
    items: list[_Prepared | InputError] = []
    if pool is None:
        for path in files:
            items.append(_prepare_here(work, path))
        return items
    for path, item in zip(files, prepare_files(work.context, files, pool), strict=True):
        items.append(_prepare_here(work, path) if item is None else item)
    return items


def _prepare_here(work: _Ingest, path: Path) -> _Prepared | InputError:
    try:
        return work.prepare(path)
    except InputError as exc:
        return exc
    except StoreError as exc:
        return InputError(str(path), "$", str(exc))


def _ingest(
    vault: Vault,
    files: list[Path],
    custodian: Identity,
    now: str,
    skip_invalid: bool,
    pool: IngestPool | None,
) -> IngestReport:
    vault.require_custodian(custodian, "appending producer evidence (ingest)")
    report = IngestReport()
    work = _Ingest(vault, custodian, now)
    items = _prepare_all(work, files, pool)
    work.check_answers(items)
    prepared: list[_Prepared] = []
    for item in items:
        if isinstance(item, InputError):
            report.rejected.append(Rejected(item.file, item.path, item.message))
            continue
        prepared.append(item)
        report.faults.extend(item.faults)
        report.accepted.append(Accepted(item.file, item.kind, item.ident))
    if report.rejected and not skip_invalid:
        for a in report.accepted:
            a.seq = -1
        return report
    if not prepared:
        return report
    keys = DataKeys(vault, custodian)
    with vault.batch(custodian) as batch:
        append_prepared(vault, batch, keys, prepared, report)
    report.appended = True
    report.checkpoint_size = batch.next_seq  # the committed log's size, without a count(*)
    return report


def append_prepared(
    vault: Vault, batch: Batch, keys: DataKeys, prepared: list[_Prepared], report: IngestReport
) -> None:
    recipients: dict[str, dict[str, bytes]] = {}
    # A text cited by many manifests of this call is encrypted once per collection: the
    # flush keeps one row per (digest, collection) anyway, and any copy decrypts the same.
    done: set[tuple[str, bytes]] = set()
    for item, acc in zip(prepared, report.accepted, strict=True):
        acc.seq = batch.append(item.entry)
        for collection, data in item.texts:
            if (collection, data) in done:
                continue
            done.add((collection, data))
            if collection not in recipients:
                recipients[collection] = recipients_for(vault, collection)
            keys.encrypt_into(batch, collection, data, recipients[collection])
