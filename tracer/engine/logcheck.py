"""Verification's per-entry checks, free of the database so worker processes can run them.

A log is mostly manifests, and each costs a JSON decode, an Ed25519 check and a view
derivation: Python work that one core cannot spread.  `check_run` takes a run of
consecutive log entries with the keyring as it stood before the first, and returns, in
log order, everything the verifying process needs from them: findings, derived view
rows, the passages to trace, and the keyring after the run.  The verifying process
calls it in-line for small logs and for statements, and hands runs of manifests to
worker processes for large logs, so both paths are one code path and report the same
findings in the same order.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Unpack, cast

from store.crypto import b64d, key_id_of
from store.dsse import Envelope, verify_envelope
from store.entries import (
    CUSTODIAN_KINDS,
    INVESTIGATOR_KINDS,
    MANIFEST_TYPE,
    ROSTER_KINDS,
    EntryKind,
    LogEntry,
)
from store.errors import InputError, SignatureError
from store.keyring import in_scope
from store.records import MalformedRecordError, Manifest, TransformKey
from store.roster import Roster, statement_problem
from store.rowtables import RowsTable, rows_table
from store.schema import VIEW_COLUMNS
from store.views import Rows, derive
from tracer.engine.jsonshapes import FindingJSON, FindingRecord
from tracer.engine.vocabulary import FindingKind

__all__ = [
    "Finding",
    "RunInput",
    "RunResult",
    "Task",
    "check_run",
    "finding",
    "manifest_tasks",
]


class Task(NamedTuple):
    """A passage to trace to its locator; picklable, so worker processes hand it back.

    It travels as what its verdict depends on (`key`) and, for text derived from an
    answer or note, the id of that source: popular chunks repeat, and nothing else of
    the passage is read by the transform check.  A named tuple, as `TransformKey` is: a
    verification makes one per passage and the verifying process rebuilds every one of
    them from the workers' results, where a frozen dataclass is built field by field
    (`docs/benchmarks.md`, "Docstring figures").
    """

    seq: int
    pos: int
    kind: str
    answer_id: str
    passage_id: str
    key: TransformKey
    derived_from: str | None = None
    #: `key.memoizable`, decided once: a task is looked up several times
    memo: bool = False

    def with_key(self, key: TransformKey) -> Task:
        return self._replace(key=key)


@dataclass(frozen=True)
class Finding:
    kind: FindingKind
    seq: int | None
    record: FindingRecord
    detail: str

    def to_json(self) -> FindingJSON:
        return {"kind": self.kind, "seq": self.seq, "record": self.record.copy(), "detail": self.detail}


def finding(kind: FindingKind, seq: int | None, detail: str, /, **record: Unpack[FindingRecord]) -> Finding:
    """A finding; members given as None are left out of its record."""
    kept = {k: v for k, v in record.items() if v is not None}
    return Finding(kind, seq, cast("FindingRecord", kept), detail)


class LogRow(NamedTuple):
    """A log row as verification reads it: the leaf it stores beside the leaf its bytes
    hash to.  A named tuple: runs of them cross the workers' pipes, a million at a time."""

    seq: int
    kind: str
    entry: bytes
    stored_leaf: bytes
    leaf: bytes


@dataclass
class RunInput:
    """A run of consecutive log rows."""

    rows: list[LogRow]
    keyring: Roster
    #: the custodian key the vault's metadata names (entry 0 must agree), and its id
    custodian_ed25519: bytes
    custodian_key_id: str
    #: collections the viewer may read, or None when passages are not traced
    scopes: list[str] | None
    #: hand view rows back as Arrow tables (from a worker) rather than tuples
    arrow: bool = False
    #: the vault's origin, and the Merkle root of the log before each statement row
    #: (what its signed place must name)
    origin: str = ""
    roots: dict[int, bytes] = field(default_factory=dict)


@dataclass
class RunResult:
    #: per row, in order: its findings, and whether it counted as a manifest
    entries: list[tuple[int, list[Finding], bool]]
    rows: Rows
    #: the rows as Arrow tables instead, when the run asked for them
    tables: dict[str, RowsTable]
    tasks: list[Task]
    #: passages derived from an answer or note: traced once the whole log is read
    deferred: list[Task]
    keyring: Roster
    #: the keyring version the run started from
    started: int
    #: one object per distinct memo key, so pickling the result sends each once
    keys: dict[TransformKey, TransformKey] = field(default_factory=dict)
    #: per row, in order: the key id its envelope's first signature names (None when
    #: its bytes are no JSON object or name none), read from the bytes decoded here
    signers: list[str | None] = field(default_factory=list)

    def __getstate__(self) -> dict[str, object]:
        return {**self.__dict__, "keys": {}}


def check_run(run: RunInput) -> RunResult:
    keyring = run.keyring.copy()
    started = keyring.version
    out = RunResult([], {t: [] for t in VIEW_COLUMNS}, {}, [], [], keyring, started)
    for seq, kind, data, stored_leaf, leaf in run.rows:
        found: list[Finding] = []
        manifest, signer = _check_entry(run, keyring, out, found, _Row(seq, kind, data, stored_leaf, leaf))
        out.entries.append((seq, found, manifest))
        out.signers.append(signer)
    if run.arrow:
        out.tables = {t: rows_table(t, items) for t, items in out.rows.items() if items}
        out.rows = {}
    return out


class _Row(NamedTuple):
    seq: int
    kind: str
    data: bytes
    stored_leaf: bytes
    leaf: bytes


def _check_entry(
    run: RunInput, keyring: Roster, out: RunResult, found: list[Finding], row: _Row
) -> tuple[bool, str | None]:
    """One entry's checks: (whether it counted as a manifest, the signer it names)."""
    seq, kind = row.seq, row.kind
    body = _body(found, row)
    if body is None:
        return False, None
    entry, env, raw, env_error = _decoded(LogEntry(row.data, body, row.leaf))
    rec = _entry_record(run, entry, kind, env_error)
    _place_findings(found, seq, kind, entry, rec, row.stored_leaf, row.leaf)
    manifest = _signature(run, keyring, found, seq, entry, rec, env, raw, env_error)
    if kind == EntryKind.MANIFEST and run.scopes is not None and entry.manifest is not None:
        _tasks(run.scopes, out, seq, kind, entry.manifest)
    _derive(found, out, seq, entry)
    return manifest, entry.signer


def _body(found: list[Finding], row: _Row) -> dict[str, Any] | None:
    """The entry's JSON object, or None with its findings when its bytes are none."""
    try:
        body = json.loads(row.data)
        if not isinstance(body, dict):
            raise ValueError("log entry is not a JSON object")
    except ValueError as exc:
        found.append(
            finding(
                FindingKind.ENTRY_MALFORMED,
                row.seq,
                f"entry bytes are not a JSON object: {exc}",
                kind=row.kind,
            )
        )
        if row.leaf != row.stored_leaf:
            found.append(_leaf_mismatch(row.seq, row.stored_leaf, row.leaf, {"kind": row.kind}))
        return None
    return body


def _entry_record(run: RunInput, entry: LogEntry, kind: str, env_error: Exception | None) -> FindingRecord:
    """What pins the entry's findings to it: its kind, and its ids unless it is outside
    the viewer's scope (a manifest outside it is pinned by its log entry only: its answer
    and run ids are facts about evidence the viewer may not see)."""
    rec: FindingRecord = {"kind": entry.kind or kind}
    try:
        payload = entry.payload_json() if env_error is None else None
    except (InputError, ValueError, AttributeError, TypeError):
        payload = None
    if isinstance(payload, dict) and not _outside_scope(run, entry.kind, payload):
        rec.update(_record(entry.kind, payload))
    return rec


def _derive(found: list[Finding], out: RunResult, seq: int, entry: LogEntry) -> None:
    """The entry's view rows into `out`, all or none (a finding when it derives none)."""
    scratch: Rows = {t: [] for t in VIEW_COLUMNS}
    try:
        derive(seq, entry, scratch)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        found.append(
            finding(FindingKind.ENTRY_MALFORMED, seq, f"cannot derive views: {exc!r}", kind=entry.kind)
        )
        return
    for table, items in scratch.items():
        if items:
            out.rows[table].extend(items)


def _decoded(entry: LogEntry) -> tuple[LogEntry, Envelope | None, Any, Exception | None]:
    """The envelope and its payload, decoded once: the signature check, the view
    derivation and the transform check reuse them (an error is kept for the signature
    check to report)."""
    env: Envelope | None = None
    raw: Any = None
    try:
        env = entry.envelope
        if env is not None:
            raw = json.loads(env.payload)
            entry = entry.with_payload(raw, _manifest(entry.kind, raw))
    except (InputError, ValueError, AttributeError, TypeError) as exc:
        return entry, env, raw, exc
    return entry, env, raw, None


def _place_findings(
    found: list[Finding],
    seq: int,
    kind: str,
    entry: LogEntry,
    rec: FindingRecord,
    stored_leaf: bytes,
    leaf: bytes,
) -> None:
    """An entry whose bytes changed, that was moved, or whose row names another kind."""
    if leaf != stored_leaf:
        found.append(_leaf_mismatch(seq, stored_leaf, leaf, rec))
    if entry.seq != seq:
        moved: FindingRecord = {"written_as": entry.seq}  # first, as the record has always read
        moved.update(rec)
        found.append(
            finding(
                FindingKind.ENTRY_OUT_OF_PLACE,
                seq,
                f"entry stored at {seq} was written as entry {entry.seq} (moved or swapped)",
                **moved,
            )
        )
    if entry.kind != kind:
        found.append(
            finding(
                FindingKind.ENTRY_KIND_MISMATCH,
                seq,
                f"log row says {kind!r}, entry says {entry.kind!r}",
                **rec,
            )
        )


def _manifest(kind: str, payload: Any) -> Manifest | None:
    """The record of a manifest payload, parsed once for the derivation and the tasks;
    None when it is not one (the derivation then reports it as malformed)."""
    if kind != EntryKind.MANIFEST:
        return None
    try:
        return Manifest.from_json(payload)
    except MalformedRecordError:
        return None


def _leaf_mismatch(seq: int, stored: bytes, leaf: bytes, rec: FindingRecord) -> Finding:
    return finding(
        FindingKind.LEAF_HASH_MISMATCH,
        seq,
        f"stored leaf hash {stored.hex()[:16]}… != SHA-256(0x00||entry) {leaf.hex()[:16]}…: "
        "the entry's bytes were changed after it was logged",
        **rec,
    )


def _record(kind: str, payload: dict[str, Any]) -> FindingRecord:
    """The fields that pin a finding to an entry (best effort: the entry may be malformed)."""
    if kind == EntryKind.MANIFEST:
        return {"answer_id": payload.get("answer_id"), "run_id": payload.get("run_id")}
    if kind == EntryKind.REVISION:
        return {
            "document_id": payload.get("document_id"),
            "revision": payload.get("revision"),
            "digest": payload.get("content_sha256"),
        }
    if kind == EntryKind.DOCUMENT_DELETION:
        return {"document_id": payload.get("document_id")}
    if kind == EntryKind.TOMBSTONE:
        return {"digest": payload.get("digest")}
    if kind == EntryKind.FINDING:
        return {"answer_id": payload.get("answer_id")}
    return {}


def _signature(
    run: RunInput,
    keyring: Roster,
    found: list[Finding],
    seq: int,
    entry: LogEntry,
    rec: FindingRecord,
    env: Envelope | None,
    payload: Any,
    env_error: Exception | None,
) -> bool:
    """Check the entry's signature against the keyring, then fold it in; True for a manifest."""
    try:
        if env_error is not None:
            raise env_error
        if env is None:
            raise InputError("log", "$.envelope", "missing")
        body = payload if entry.kind == EntryKind.MANIFEST else payload.get("statement", {})
    except (InputError, ValueError, AttributeError) as exc:
        found.append(finding(FindingKind.ENTRY_MALFORMED, seq, f"envelope unreadable: {exc}", **rec))
        return False
    kind = entry.kind
    if kind == EntryKind.MANIFEST:
        return _manifest_signature(run, keyring, found, seq, entry, rec, env, body)
    if kind not in CUSTODIAN_KINDS and kind not in INVESTIGATOR_KINDS:
        found.append(finding(FindingKind.ENTRY_UNKNOWN_KIND, seq, f"unknown entry kind {kind!r}"))
        return False
    _statement_signature(run, keyring, found, seq, entry, rec, body)
    return False


def _manifest_signature(
    run: RunInput,
    keyring: Roster,
    found: list[Finding],
    seq: int,
    entry: LogEntry,
    rec: FindingRecord,
    env: Envelope,
    body: Any,
) -> bool:
    """A manifest signed by a producer key valid when it was generated; its faults."""
    if env.payload_type != MANIFEST_TYPE:
        found.append(
            finding(
                FindingKind.ENTRY_KIND_MISMATCH,
                seq,
                f"entry kind 'manifest' carries a signed {env.payload_type!r} payload: "
                "a signed statement reused under another kind",
                **rec,
            )
        )
        return False
    try:
        verify_envelope(env, keyring.producer_keys_at(str(body.get("generated_at", ""))))
    except SignatureError as exc:
        found.append(finding(FindingKind.SIGNATURE_INVALID, seq, str(exc), **rec))
    if not _outside_scope(run, "manifest", body):
        _faults(found, seq, entry, body)
    return True


def _statement_signature(
    run: RunInput,
    keyring: Roster,
    found: list[Finding],
    seq: int,
    entry: LogEntry,
    rec: FindingRecord,
    body: Any,
) -> None:
    """A statement signed by whoever may sign its kind, in its signed place; a roster
    statement is then folded into the keyring (entry 0 against the vault's custodian)."""
    kind = entry.entry_kind
    if kind is None:  # `_signature` reported it as entry_unknown_kind before calling this
        return
    signers = (
        _self_signer(body) if kind == EntryKind.VAULT_INIT and seq == 0 else keyring.statement_signers(kind)
    )
    bad = statement_problem(entry, seq, run.origin, run.roots.get(seq), signers)
    if bad is not None:
        found.append(finding(bad[0], seq, bad[1], **rec))
        return
    if kind not in ROSTER_KINDS:
        return
    refused = keyring.fold(seq, kind, body)
    if refused is not None:
        found.append(finding(refused.code, seq, refused.detail, **rec))
        return
    cust = keyring.custodian
    if kind == EntryKind.VAULT_INIT and cust is not None and cust.ed25519 != run.custodian_ed25519:
        found.append(
            finding(
                FindingKind.CUSTODIAN_MISMATCH,
                seq,
                f"entry 0 names custodian {cust.key_id[:16]}, the vault's metadata "
                f"{run.custodian_key_id[:16]}",
                **rec,
            )
        )


def _self_signer(body: Mapping[str, object]) -> dict[str, bytes]:
    """vault_init is signed by the custodian it names (checked against the metadata)."""
    cust = body.get("custodian")
    try:
        ed = b64d(str(cust["ed25519"])) if isinstance(cust, dict) else b""
    except (KeyError, ValueError):
        return {}
    return {key_id_of(ed): ed} if len(ed) == 32 else {}


def _outside_scope(run: RunInput, kind: str, payload: Any) -> bool:
    """A manifest the viewer of this verification may not read (never true without a
    viewer: a structural check reports what anyone holding the file can see)."""
    if run.scopes is None or kind != EntryKind.MANIFEST or not isinstance(payload, dict):
        return False
    return not in_scope(run.scopes, str(payload.get("collection")))


def _faults(found: list[Finding], seq: int, entry: LogEntry, body: dict[str, Any]) -> None:
    for fault in entry.body.get("faults", []):
        found.append(
            finding(
                FindingKind.PRODUCER_FAULT,
                seq,
                f"{fault.get('code')}: {fault.get('message')}",
                answer_id=body.get("answer_id"),
                run_id=body.get("run_id"),
                path=fault.get("path"),
            )
        )


def _tasks(scopes: list[str], out: RunResult, seq: int, kind: str, m: Manifest) -> None:
    """The readable passages of a manifest, to be traced to their locators."""
    for pos, ps in enumerate(m.passages):
        key = ps.chain_key()
        if key is None or not in_scope(scopes, str(ps.collection)):
            continue
        derived = ps.derived_from or None
        memo = derived is None and key.memoizable
        task = Task(seq, pos, kind, m.answer_id, ps.passage_id, key, derived, memo)
        if derived:
            out.deferred.append(task)
        else:
            if memo:
                same = out.keys.setdefault(key, key)
                if same is not key:
                    task = task.with_key(same)
            out.tasks.append(task)


def manifest_tasks(scopes: list[str], seq: int, data: bytes) -> tuple[list[Task], list[Task]]:
    """(tasks, deferred tasks) for the readable passages of the manifest entry `data`:
    what an incremental verification re-traces for a covered entry whose texts changed."""
    out = RunResult([], {}, {}, [], [], Roster(), 0)
    try:
        env = LogEntry.from_bytes(data).envelope
        body = json.loads(env.payload) if env is not None else None
    except (InputError, ValueError, AttributeError, TypeError):
        return [], []
    try:
        _tasks(scopes, out, seq, "manifest", Manifest.from_json(body))
    except MalformedRecordError:
        pass  # reported by the log pass
    return out.tasks, out.deferred
