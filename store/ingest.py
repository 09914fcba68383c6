"""Ingest: manifests, source revisions and document deletions, all or nothing.

Malformed input is refused with the file, JSON path and expectation named.  A correctly
signed manifest that is internally wrong is evidence of a faulty producer: it is kept
exactly as signed and each wrong element is recorded as a fault, never repaired.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema

from store.canonical import member_path, parse_strict
from store.crypto import Identity, sha256_hex
from store.dsse import Envelope, verify_envelope
from store.entries import MANIFEST_TYPE, LogEntry, make_entry, make_statement
from store.errors import InputError, SignatureError, StoreError
from store.keyring import DataKeys, in_scope
from store.roster import ProducerKey, investigators, producer_keys
from store.timeutil import instant
from store.vault import Batch, Vault

__all__ = [
    "Fault",
    "IngestReport",
    "Rejected",
    "ingest",
    "load_schema",
    "read_tombstone_request",
    "recipients_for",
]


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

    def to_json(self) -> dict[str, str]:
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


@cache
def load_schema(name: str) -> dict[str, Any]:
    text = resources.files("store").joinpath("schemas", f"{name}.schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def _validate(value: Any, schema: str, file: str, prefix: str = "$") -> None:
    validator = jsonschema.Draft202012Validator(load_schema(schema))
    error = jsonschema.exceptions.best_match(validator.iter_errors(value))
    if error is not None:
        path = prefix + error.json_path[1:]
        raise InputError(file, path, f"{error.message} (schema {schema})")


def _instant(value: str, file: str, path: str) -> datetime:
    """An RFC 3339 time as an aware UTC datetime; the schema's pattern alone admits 25:61."""
    try:
        return instant(value)
    except ValueError as exc:
        raise InputError(file, path, f"not a valid RFC 3339 date-time with offset: {value!r}") from exc


def _key_problem(key: ProducerKey, when: datetime) -> str | None:
    """Why `key` could not sign at `when` (compared as instants, not as strings), or None.

    A key is valid from `valid_from` (inclusive) to the earlier of `valid_until` and its
    revocation (both exclusive), so a manifest signed before a revocation stays valid
    after it.  A window bound that does not parse fails closed.
    """
    bounds: list[tuple[str, str | None]] = [
        ("valid_from", key.valid_from),
        ("valid_until", key.valid_until),
        ("revoked_at", key.revoked_at),
    ]
    for name, text in bounds:
        if text is None or text == "":
            continue
        try:
            bound = _instant(text, "keyring", name)
        except InputError:
            return f"has an unreadable {name} {text!r}"
        if name == "valid_from" and when < bound:
            return f"not valid before {text}"
        if name == "valid_until" and when >= bound:
            return f"outside its validity window (valid until {text})"
        if name == "revoked_at" and when >= bound:
            return f"revoked at {text}"
    return None


def read_tombstone_request(path: Path) -> dict[str, str]:
    """A purge request file (schema tracer.tombstone_request/v1), strictly parsed and validated."""
    file = str(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(file, "$", f"cannot read file ({exc.strerror})") from exc
    doc = parse_strict(raw, file)
    _validate(doc, "tombstone-request-v1", file)
    _instant(doc["effective_at"], file, "$.effective_at")
    return {k: str(v) for k, v in doc.items() if k != "schema"}


def recipients_for(vault: Vault, collection: str) -> dict[str, bytes]:
    """Key ids and X25519 keys of current investigators allowed to read `collection`."""
    return {
        i.key_id: i.x25519
        for i in investigators(vault).values()
        if i.revoked_at is None and in_scope(i.scopes, collection)
    }


@dataclass
class _Prepared:
    file: str
    kind: str
    ident: str
    entry: LogEntry
    texts: list[tuple[str, bytes]]
    faults: list[Fault]


class _Ingest:
    def __init__(self, vault: Vault, custodian: Identity, now: str):
        self.vault = vault
        self.custodian = custodian
        self.now = now
        self.keys = producer_keys(vault)
        self.seen_answers: set[str] = set()
        self.seen_revisions: set[tuple[str, str]] = set()
        self.known_docs: set[str] = set()

    def existing_answer(self, answer_id: str) -> int | None:
        rows = self.vault.query("SELECT seq FROM v_answers WHERE answer_id = ?", [answer_id])
        return int(rows[0][0]) if rows else None

    def prepare(self, path: Path) -> _Prepared:
        file = str(path)
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise InputError(file, "$", f"cannot read file ({exc.strerror})") from exc
        doc = parse_strict(raw, file)
        if not isinstance(doc, dict):
            raise InputError(file, "$", "expected a JSON object")
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
        _validate(doc, "manifest-input-v1", file)
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
        _validate(payload, "manifest-v1", file, "$.envelope.payload")
        key = self.keys[key_id]
        when = payload["generated_at"]
        problem = _key_problem(key, _instant(when, file, "$.envelope.payload.generated_at"))
        if problem is not None:
            raise InputError(
                file,
                "$.envelope.signatures",
                f"producer key {key_id[:16]} ({key.name}) is {problem}; manifest generated_at {when}",
            )
        answer_id = payload["answer_id"]
        prior = self.existing_answer(answer_id)
        if prior is not None or answer_id in self.seen_answers:
            where = f"log entry {prior}" if prior is not None else "this ingest run"
            raise InputError(
                file, "$.envelope.payload.answer_id", f"{answer_id!r} already ingested ({where})"
            )
        self.seen_answers.add(answer_id)
        faults, texts = self.manifest_faults(file, payload, doc["contents"])
        entry = make_entry("manifest", env, ingested_at=self.now, faults=[f.to_json() for f in faults])
        return _Prepared(file, "manifest", answer_id, entry, texts, faults)

    def manifest_faults(
        self, file: str, p: dict[str, Any], contents: dict[str, str]
    ) -> tuple[list[Fault], list[tuple[str, bytes]]]:
        aid = p["answer_id"]
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

        want(p["question_sha256"], p["collection"], "$.question_sha256")
        want(p["answer_sha256"], p["collection"], "$.answer_sha256")
        ids: set[str] = set()
        for i, ps in enumerate(p["passages"]):
            if ps["passage_id"] in ids:
                fault(f"$.passages[{i}].passage_id", "duplicate_passage_id", ps["passage_id"])
            ids.add(ps["passage_id"])
            for fld in ("retrieved_sha256", "model_input_sha256"):
                want(ps[fld], ps["collection"], f"$.passages[{i}].{fld}")
            loc = ps["locator"]
            if loc["char_end"] < loc["char_start"]:
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
            texts.extend((collection, data) for collection in collections)
            if digest == p["answer_sha256"]:
                answer_text = text
        for digest in contents:
            if digest not in wanted:
                path = member_path("$.contents", digest)
                fault(path, "unreferenced_text", "text not named by the manifest")
        for i, c in enumerate(p["citations"]):
            for j, pid in enumerate(c["passage_ids"]):
                if pid not in ids:
                    fault(
                        f"$.citations[{i}].passage_ids[{j}]",
                        "unknown_passage",
                        f"no passage {pid!r}",
                    )
            if c["answer_end"] < c["answer_start"]:
                fault(f"$.citations[{i}]", "bad_answer_range", "answer_end before answer_start")
            elif answer_text is not None and c["answer_end"] > len(answer_text):
                fault(
                    f"$.citations[{i}].answer_end",
                    "answer_range_outside",
                    f"{c['answer_end']} > answer length {len(answer_text)}",
                )
        return faults, texts

    def prepare_revision(self, file: str, doc: dict[str, Any]) -> _Prepared:
        _validate(doc, "source-revision-v1", file)
        _instant(doc["committed_at"], file, "$.committed_at")
        key = (doc["document_id"], doc["revision"])
        known = self.vault.query(
            "SELECT seq FROM v_revisions WHERE document_id = ? AND revision = ?", list(key)
        )
        if known or key in self.seen_revisions:
            raise InputError(file, "$.revision", f"revision {key[1]!r} of {key[0]!r} already ingested")
        self.seen_revisions.add(key)
        data = doc["content"].encode("utf-8")
        stmt = {k: v for k, v in doc.items() if k not in ("content", "schema")}
        stmt["content_sha256"] = sha256_hex(data)
        entry = make_statement("revision", stmt, self.custodian)
        return _Prepared(file, "revision", f"{key[0]}@{key[1]}", entry, [(doc["collection"], data)], [])

    def prepare_deletion(self, file: str, doc: dict[str, Any]) -> _Prepared:
        _validate(doc, "document-deletion-v1", file)
        _instant(doc["deleted_at"], file, "$.deleted_at")
        did = doc["document_id"]
        if not self.vault.query("SELECT 1 FROM v_revisions WHERE document_id = ? LIMIT 1", [did]) and not any(
            k[0] == did for k in self.seen_revisions
        ):
            raise InputError(file, "$.document_id", f"no revision of {did!r} was ever ingested")
        stmt = {k: v for k, v in doc.items() if k != "schema"}
        return _Prepared(
            file,
            "document_deletion",
            did,
            make_statement("document_deletion", stmt, self.custodian),
            [],
            [],
        )


def ingest(
    vault: Vault, files: list[Path], custodian: Identity, now: str, skip_invalid: bool = False
) -> IngestReport:
    """Validate every file first; append nothing unless all pass (or `skip_invalid`)."""
    report = IngestReport()
    work = _Ingest(vault, custodian, now)
    prepared: list[_Prepared] = []
    for path in files:
        try:
            item = work.prepare(path)
        except InputError as exc:
            report.rejected.append(Rejected(exc.file, exc.path, exc.message))
            continue
        except StoreError as exc:
            report.rejected.append(Rejected(str(path), "$", str(exc)))
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
    report.checkpoint_size = vault.size()
    return report


def append_prepared(
    vault: Vault, batch: Batch, keys: DataKeys, prepared: list[_Prepared], report: IngestReport
) -> None:
    recipients: dict[str, dict[str, bytes]] = {}
    for item, acc in zip(prepared, report.accepted, strict=True):
        acc.seq = batch.append(item.entry)
        for collection, data in item.texts:
            if collection not in recipients:
                recipients[collection] = recipients_for(vault, collection)
            keys.encrypt_into(batch, collection, data, recipients[collection])
