"""Ingest: manifests, source revisions and document deletions, all or nothing.

Malformed input is refused with the file, JSON path and expectation named.  A correctly
signed manifest that is internally wrong is evidence of a faulty producer: it is kept
exactly as signed and each wrong element is recorded as a fault, never repaired.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from store.batch import Batch
from store.canonical import member_path, parse_strict
from store.crypto import Identity, sha256_hex
from store.dsse import Envelope, verify_envelope
from store.entries import MANIFEST_TYPE, FaultJSON, LogEntry, Statement, make_entry
from store.errors import InputError, SignatureError, StoreError
from store.gcpause import no_cycle_collection
from store.keyring import DataKeys
from store.records import MANIFEST_V2, Manifest
from store.schemacheck import load_schema, validate
from store.textrules import id_problem
from store.timeutil import instant
from store.vault import Vault

if TYPE_CHECKING:
    from store.payloads import ManifestPayloadJSON
    from store.statements import DocumentDeletionStatement, RevisionStatement

__all__ = [
    "MAX_INPUT_BYTES",
    "Fault",
    "IngestReport",
    "Rejected",
    "ingest",
    "load_schema",
    "read_input_file",
    "read_tombstone_request",
    "recipients_for",
]

#: the largest input file ingest reads (a manifest with its texts, or a revision):
#: DuckDB and the encryption hold a text whole, and a larger one is almost surely not
#: one document; refusing it names the file instead of running out of memory
MAX_INPUT_BYTES = 32 * 1024 * 1024


@dataclass(frozen=True)
class Rejected:
    file: str
    path: str
    message: str


@dataclass(frozen=True)
class Fault:
    file: str
    answer_id: str
    path: str
    code: str
    message: str

    def to_json(self) -> FaultJSON:
        return {"path": self.path, "code": self.code, "message": self.message}


@dataclass
class Accepted:
    file: str
    kind: str
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


def _instant(value: str, file: str, path: str) -> datetime:
    """An RFC 3339 time as an aware UTC datetime; the schema's pattern alone admits 25:61."""
    try:
        return instant(value)
    except ValueError as exc:
        raise InputError(file, path, f"not a valid RFC 3339 date-time with offset: {value!r}") from exc


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


def read_input_file(path: Path, limit: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of an input file, refused at once unless it is a regular file of at most
    `limit` bytes: a FIFO or device would block (holding the vault lock) or never end."""
    file = str(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise InputError(file, "$", f"cannot read file ({exc.strerror})") from exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise InputError(
                file, "$", "not a regular file (a FIFO, device or directory); refusing to read it"
            )
        if st.st_size > limit:
            raise InputError(
                file, "$", f"file is {st.st_size} bytes; the limit for one input file is {limit} bytes"
            )
        chunks: list[bytes] = []
        total = 0
        while chunk := os.read(fd, 1 << 20):
            total += len(chunk)
            if total > limit:
                raise InputError(file, "$", f"file grew past the {limit}-byte limit while being read")
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise InputError(file, "$", f"cannot read file ({exc.strerror})") from exc
    finally:
        os.close(fd)


#: JSON paths of the manifest's identifiers: shown verbatim everywhere, so no hidden characters
_ID_FIELDS: tuple[tuple[str, ...], ...] = (
    ("run_id",),
    ("answer_id",),
    ("collection",),
    ("producer", "system"),
    ("producer", "version"),
)
_PASSAGE_ID_FIELDS: tuple[tuple[str, ...], ...] = (
    ("passage_id",),
    ("collection",),
    ("source", "system"),
    ("source", "revision"),
    ("document", "document_id"),
    ("document", "revision"),
    ("document", "backend"),
    ("chunk", "chunk_id"),
    ("chunk", "pipeline_version"),
    ("normalizer_version",),
    ("derived_from",),
)


def _check_ids(
    file: str, prefix: str, doc: Mapping[str, object], fields: tuple[tuple[str, ...], ...]
) -> None:
    for path in fields:
        value: Any = doc
        for part in path:
            value = value.get(part) if isinstance(value, dict) else None
        if isinstance(value, str):
            problem = id_problem(value)
            if problem:
                raise InputError(file, prefix + "." + ".".join(path), f"identifier {problem}")


def _check_model_inputs(file: str, payload: ManifestPayloadJSON) -> None:
    """A v2 manifest's rules beyond its schema: a `not_sent` passage has no model-input
    digest (the model was given nothing of it) and every other one has one; no citation
    rests on a `not_sent` passage. Each refuses the whole file, naming the path."""
    at = "$.envelope.payload"
    unsent = set()
    for i, ps in enumerate(payload["passages"]):
        state, digest = ps["model_input"], ps.get("model_input_sha256")
        if state == "not_sent" and digest is not None:
            raise InputError(
                file,
                f"{at}.passages[{i}].model_input_sha256",
                "a passage marked not_sent has no model input: the model was given nothing of it",
            )
        if state != "not_sent" and digest is None:
            raise InputError(file, f"{at}.passages[{i}]", f"model_input {state!r} needs model_input_sha256")
        if state == "not_sent":
            unsent.add(ps["passage_id"])
    for i, c in enumerate(payload["citations"]):
        for j, pid in enumerate(c["passage_ids"]):
            if pid in unsent:
                raise InputError(
                    file,
                    f"{at}.citations[{i}].passage_ids[{j}]",
                    f"passage {pid!r} is marked not_sent: the model never saw it, so no part of the "
                    "answer can rest on it",
                )


def _check_manifest_ids(file: str, p: ManifestPayloadJSON) -> None:
    # One C-speed test over every id of a (schema-valid) manifest; only a manifest that
    # fails it is walked field by field to name the field.
    ids = [p["run_id"], p["answer_id"], p["collection"], p["producer"]["system"], p["producer"]["version"]]
    for ps in p["passages"]:
        doc, src, chunk = ps["document"], ps["source"], ps["chunk"]
        ids += (ps["passage_id"], ps["collection"], src["system"], src["revision"], doc["document_id"])
        ids += (doc["revision"], doc["backend"], chunk["chunk_id"], chunk["pipeline_version"])
        ids += (ps["normalizer_version"], ps.get("derived_from") or "")
    for c in p["citations"]:
        ids += c["passage_ids"]
    ids += p.get("lineage", [])
    if all(type(v) is str for v in ids) and "".join(ids).isprintable():
        return
    base = "$.envelope.payload"
    _check_ids(file, base, p, _ID_FIELDS)
    for i, ps in enumerate(p["passages"]):
        _check_ids(file, f"{base}.passages[{i}]", ps, _PASSAGE_ID_FIELDS)
    for i, c in enumerate(p["citations"]):
        for j, pid in enumerate(c["passage_ids"]):
            if id_problem(pid):
                raise InputError(
                    file, f"{base}.citations[{i}].passage_ids[{j}]", f"identifier {id_problem(pid)}"
                )
    for i, lid in enumerate(p.get("lineage", [])):
        if id_problem(lid):
            raise InputError(file, f"{base}.lineage[{i}]", f"identifier {id_problem(lid)}")


@dataclass
class _Prepared:
    file: str
    kind: str
    ident: str
    entry: LogEntry | Statement
    texts: list[tuple[str, bytes]]
    faults: list[Fault]


def _load(path: Path) -> tuple[str, dict[str, Any]]:
    file = str(path)
    doc = parse_strict(read_input_file(path), file)
    if not isinstance(doc, dict):
        raise InputError(file, "$", "expected a JSON object")
    return file, doc


class _Ingest:
    def __init__(self, vault: Vault, custodian: Identity, now: str):
        self.vault = vault
        self.custodian = custodian
        self.now = now
        self.roster = vault.roster()
        self.keys = self.roster.producers
        self.seen_answers: set[str] = set()
        self.seen_revisions: set[tuple[str, str]] = set()
        self._seen_revision_digests: dict[tuple[str, str], str] = {}
        self.known_docs: set[str] = set()
        #: digest -> seq of its tombstone: a purge is final, so these texts are never stored again
        self.tombstoned: dict[str, int] = {d: row.seq for d, row in vault.index.tombstone_index().items()}
        self._stored_revisions: set[tuple[str, str]] | None = None
        self._stored_documents: set[str] | None = None

    def prepare(self, path: Path) -> _Prepared:
        file, doc = _load(path)
        if "envelope" in doc:
            return self.prepare_manifest(file, doc)
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

    def prepare_manifest(self, file: str, doc: dict[str, Any]) -> _Prepared:
        validate(doc, "manifest-input-v1", file)
        env = Envelope.from_json(doc["envelope"], file, "$.envelope")
        if env.payload_type != MANIFEST_TYPE:
            raise InputError(file, "$.envelope.payloadType", f"expected {MANIFEST_TYPE!r}")
        try:
            key_id = verify_envelope(env, {k: v.ed25519 for k, v in self.keys.items()})
        except SignatureError as exc:
            raise InputError(file, "$.envelope.signatures", f"{exc} (producer keyring)") from exc
        try:
            payload = parse_strict(env.payload, file)
        except InputError as exc:
            raise InputError(file, "$.envelope.payload" + exc.path[1:], exc.message) from exc
        v2 = isinstance(payload, dict) and payload.get("schema") == MANIFEST_V2
        validate(payload, "manifest-v2" if v2 else "manifest-v1", file, "$.envelope.payload")
        if v2:
            _check_model_inputs(file, payload)
        key = self.keys[key_id]
        when = payload["generated_at"]
        _instant(when, file, "$.envelope.payload.generated_at")
        _check_manifest_ids(file, payload)
        problem = key.problem_at(when)
        if problem is not None:
            raise InputError(
                file,
                "$.envelope.signatures",
                f"producer key {key_id[:16]} ({key.name}) is {problem}; manifest generated_at {when}",
            )
        manifest = Manifest.from_json(payload)
        faults, texts = self.manifest_faults(file, manifest, doc["contents"])
        entry = make_entry("manifest", env, ingested_at=self.now, faults=[f.to_json() for f in faults])
        # the duplicate-answer check is the last one, made by `check_answers` for the
        # whole call with one query
        return _Prepared(
            file, "manifest", manifest.answer_id, entry.with_payload(payload, manifest), texts, faults
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
        ids = [it.ident for it in items if isinstance(it, _Prepared) and it.kind == "manifest"]
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
            if not (isinstance(it, _Prepared) and it.kind == "manifest"):
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

    def manifest_faults(
        self, file: str, p: Manifest, contents: dict[str, str]
    ) -> tuple[list[Fault], list[tuple[str, bytes]]]:
        aid = p.answer_id
        faults: list[Fault] = []

        def fault(path: str, code: str, message: str) -> None:
            faults.append(Fault(file, aid, path, code, message))

        # digest -> (JSON path of its first mention, collections it is stored under);
        # the same text cited from two collections is stored once per collection so a
        # reader scoped to either one can read it.
        wanted: dict[str, tuple[str, list[str]]] = {}

        def want(digest: str, collection: str, path: str) -> None:
            _first, collections = wanted.setdefault(digest, (path, []))
            if collection not in collections:
                collections.append(collection)

        want(str(p.question_sha256), p.collection, "$.question_sha256")
        want(str(p.answer_sha256), p.collection, "$.answer_sha256")
        ids: set[str] = set()
        for i, ps in enumerate(p.passages):
            if ps.passage_id in ids:
                fault(f"$.passages[{i}].passage_id", "duplicate_passage_id", ps.passage_id)
            ids.add(ps.passage_id)
            want(str(ps.retrieved_sha256), ps.collection, f"$.passages[{i}].retrieved_sha256")
            if ps.model_input_sha256 is not None:  # a v2 `not_sent` passage has none
                want(str(ps.model_input_sha256), ps.collection, f"$.passages[{i}].model_input_sha256")
            loc = ps.located().locator
            if loc.char_end < loc.char_start:
                fault(f"$.passages[{i}].locator", "bad_locator", "char_end before char_start")
        texts: list[tuple[str, bytes]] = []
        answer_text: str | None = None
        for digest, (path, collections) in wanted.items():
            text = contents.get(digest)
            if text is None:
                fault(path, "text_not_supplied", f"no text for {digest} in $.contents")
                continue
            data = text.encode("utf-8")
            actual = sha256_hex(data)
            if actual != digest:
                fault(path, "text_digest_mismatch", f"text under {digest} hashes to {actual}")
                continue
            if digest == p.answer_sha256:
                answer_text = text
            tomb = self.tombstoned.get(digest)
            if tomb is not None:
                fault(
                    path,
                    "text_purged",
                    f"{digest} was purged under a retention policy (tombstone at log entry {tomb}); "
                    "a purge is final, so the text is not stored again and this reference reads as purged",
                )
                continue
            texts.extend((collection, data) for collection in collections)
        for digest in contents:
            if digest not in wanted:
                path = member_path("$.contents", digest)
                fault(path, "unreferenced_text", "text not named by the manifest")
        for i, c in enumerate(p.citations):
            for j, pid in enumerate(c.passage_ids):
                if pid not in ids:
                    fault(
                        f"$.citations[{i}].passage_ids[{j}]",
                        "unknown_passage",
                        f"no passage {pid!r}",
                    )
            if c.answer_end < c.answer_start:
                fault(f"$.citations[{i}]", "bad_answer_range", "answer_end before answer_start")
            elif answer_text is not None and c.answer_end > len(answer_text):
                fault(
                    f"$.citations[{i}].answer_end",
                    "answer_range_outside",
                    f"{c.answer_end} > answer length {len(answer_text)}",
                )
        return faults, texts

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
        _check_ids(file, "$", doc, (*revision_ids, ("backend",)))
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
        entry = Statement("revision", cast("RevisionStatement", stmt), self.custodian)
        return _Prepared(file, "revision", f"{key[0]}@{key[1]}", entry, [(doc["collection"], data)], [])

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
        _check_ids(file, "$", doc, (("document_id",),))
        did = doc["document_id"]
        if did not in self.stored_documents() and not any(k[0] == did for k in self.seen_revisions):
            raise InputError(file, "$.document_id", f"no revision of {did!r} was ever ingested")
        stmt = {k: v for k, v in doc.items() if k != "schema"}
        return _Prepared(
            file,
            "document_deletion",
            did,
            Statement("document_deletion", cast("DocumentDeletionStatement", stmt), self.custodian),
            [],
            [],
        )


def ingest(
    vault: Vault, files: list[Path], custodian: Identity, now: str, skip_invalid: bool = False
) -> IngestReport:
    """Validate every file first; append nothing unless all pass (or `skip_invalid`)."""
    with no_cycle_collection():
        return _ingest(vault, files, custodian, now, skip_invalid)


def _ingest(
    vault: Vault, files: list[Path], custodian: Identity, now: str, skip_invalid: bool
) -> IngestReport:
    vault.require_custodian(custodian, "appending producer evidence (ingest)")
    report = IngestReport()
    work = _Ingest(vault, custodian, now)
    items: list[_Prepared | InputError] = []
    for path in files:
        try:
            items.append(work.prepare(path))
        except InputError as exc:
            items.append(exc)
        except StoreError as exc:
            items.append(InputError(str(path), "$", str(exc)))
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
