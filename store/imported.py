"""Imported traces in the log: custodian-signed `imported_trace` statements and their texts.

An imported trace is not a producer manifest: nobody who ran the pipeline signed it.  The
importer (the custodian) signs a statement (schema `tracer.imported_trace/v1`, kind
`imported_trace`) naming the export file it came from by SHA-256 (the file is kept as a
blob, so anyone holding the key can re-derive the import), the span ids used, the
digests of the texts it kept, and an attestation map saying for every field whether it
is `attested`, `importer-computed`, `absent`, `redacted` or `truncated`.  The statement
is bound to its place in the log like every other, so `verify` checks its signature and
place.  Only whole texts are ever hashed and stored; a purged text is never stored again.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from store.crypto import Identity, PublicIdentity, sha256_hex
from store.dsse import Envelope, verify_envelope
from store.entries import EntryKind, LogEntry, Statement
from store.errors import InputError, SignatureError
from store.keyring import DataKeys
from store.statements import ImportedTraceStatement
from store.vault import Vault

__all__ = [
    "IMPORTED_SCHEMA",
    "ImportedItem",
    "SignedImport",
    "append_imported",
    "imported_answer_seqs",
    "signed_imports",
]

IMPORTED_SCHEMA = "tracer.imported_trace/v1"
#: `v_answers.answer_kind` of an imported answer: lists tell it apart without reading the log
IMPORTED_ANSWER_KIND = "imported"


@dataclass(frozen=True)
class ImportedItem:
    """One imported answer: its statement, the whole texts it keeps, and the export file."""

    file: str
    statement: ImportedTraceStatement
    texts: tuple[bytes, ...]
    export: bytes

    @property
    def export_sha256(self) -> str:
        """The export file's SHA-256 as the statement names it (hashed once per file, by
        the reader, never once per answer: the file may hold thousands)."""
        return str(self.statement["export"]["sha256"])

    @property
    def answer_id(self) -> str:
        return str(self.statement["answer_id"])


def imported_answer_seqs(vault: Vault, answer_ids: list[str]) -> dict[str, int]:
    """answer id -> seq of the entry that already holds it (manifest or import)."""
    if not answer_ids:
        return {}
    vault.views.require("v_answers")
    rows = vault.query(
        "SELECT answer_id, min(seq) FROM v_answers WHERE answer_id IN (SELECT unnest(?::VARCHAR[])) "
        "GROUP BY answer_id",
        [sorted(set(answer_ids))],
    )
    return {str(a): int(s) for a, s in rows}


@dataclass(frozen=True)
class SignedImport:
    """An answer id already in the vault, as its signed log entry says (never a view row).

    `trace_sha256` is the content digest the signed statement names (None for a
    statement written before it was recorded, or an entry that logs no import);
    `problem` says why the entry cannot be trusted, when it cannot.
    """

    answer_id: str
    seq: int
    trace_sha256: str | None
    problem: str | None
    #: the export format the signed statement names (digests compare only within one)
    export_format: str | None = None


def signed_imports(vault: Vault, answer_ids: list[str]) -> dict[str, SignedImport]:
    """The answer ids of `answer_ids` already in the vault, each read from its log entry.

    `v_answers` only says where to look: the entry it names must be an `imported_trace`
    statement signed by the custodian, bound to that seq of this vault, naming that very
    answer id.  Otherwise its `problem` says what is wrong, and nothing may be decided
    from it (a changed row cannot make a changed trace look the same as a signed one).
    """
    seqs = imported_answer_seqs(vault, answer_ids)
    if not seqs:
        return {}
    rows = vault.query(
        "SELECT seq, entry FROM log WHERE seq IN (SELECT unnest(?::BIGINT[]))", [sorted(set(seqs.values()))]
    )
    entries = {int(seq): bytes(data) for seq, data in rows}
    custodian = vault.roster().custodian
    out: dict[str, SignedImport] = {}
    for answer_id, seq in seqs.items():
        out[answer_id] = _signed(vault, custodian, answer_id, seq, entries.get(seq))
    return out


def _signed(
    vault: Vault, custodian: PublicIdentity | None, answer_id: str, seq: int, data: bytes | None
) -> SignedImport:
    env = _imported_envelope(seq, data)
    if isinstance(env, str):
        return SignedImport(answer_id, seq, None, env)
    if custodian is None:
        return SignedImport(
            answer_id, seq, None, "the vault names no custodian to check the entry's signature"
        )
    try:
        verify_envelope(env, {custodian.key_id: custodian.ed25519})
    except SignatureError as exc:
        return SignedImport(answer_id, seq, None, f"log entry {seq}: {exc}")
    try:
        body = json.loads(env.payload)
    except ValueError as exc:
        return SignedImport(answer_id, seq, None, f"log entry {seq}: payload is not JSON ({exc})")
    st = _placed_statement(body, seq, vault.origin, answer_id)
    if isinstance(st, str):
        return SignedImport(answer_id, seq, None, st)
    trace = st.get("trace_sha256")
    export = st.get("export")
    fmt = export.get("format") if isinstance(export, dict) else None
    return SignedImport(
        answer_id, seq, trace if isinstance(trace, str) else None, None, fmt if isinstance(fmt, str) else None
    )


def _imported_envelope(seq: int, data: bytes | None) -> Envelope | str:
    """The envelope of the imported-trace entry `data` at `seq`, or why there is none."""
    if data is None:
        return f"log entry {seq}, which the answer table names, is not in the log"
    try:
        entry = LogEntry.from_bytes(data)
        env = entry.envelope
    except (InputError, ValueError) as exc:
        return f"log entry {seq} cannot be read: {exc}"
    if entry.kind != EntryKind.IMPORTED_TRACE or env is None:
        return f"log entry {seq} is a {entry.kind!r} entry, not an imported trace"
    return env


def _placed_statement(body: object, seq: int, origin: str, answer_id: str) -> dict[str, object] | str:
    """The statement of a signed payload bound to entry `seq` of `origin` and holding
    `answer_id`, or why it is not (signed for another place, or another answer)."""
    place = body.get("log") if isinstance(body, dict) else None
    st = body.get("statement") if isinstance(body, dict) else None
    if (
        not isinstance(body, dict)
        or not isinstance(place, dict)
        or place.get("seq") != seq
        or place.get("origin") != origin
        or body.get("type") != EntryKind.IMPORTED_TRACE
        or not isinstance(st, dict)
    ):
        return f"log entry {seq} is signed for another place (a copied entry)"
    if st.get("answer_id") != answer_id:
        return f"log entry {seq} holds answer {st.get('answer_id')!r}, not {answer_id}"
    return st


def append_imported(vault: Vault, custodian: Identity, items: list[ImportedItem]) -> list[int]:
    """Append every item in one batch (all or nothing); returns their seqs.

    Refuses the whole call when an answer id is already in the vault, or when the export
    file itself was purged (a purge is final: it cannot be kept again).  A kept text whose
    digest was purged is not stored again; the statement still names it, so it reads as
    purged.
    """
    vault.require_custodian(custodian, "appending imported traces (import)")
    _refuse_known_answers(vault, items)
    _refuse_other_exports(items)
    tombstoned = set(vault.index.tombstone_index())
    for it in items:
        if it.export_sha256 in tombstoned:
            raise InputError(
                it.file, "$", "this export file was purged under a retention policy; a purge is final"
            )
    keys = DataKeys(vault, custodian)
    recipients: dict[str, dict[str, bytes]] = {}
    done: set[tuple[str, str]] = set()
    seqs: list[int] = []
    with vault.batch(custodian) as batch:
        for it in items:
            seqs.append(batch.append(Statement(EntryKind.IMPORTED_TRACE, it.statement, custodian)))
            collection = str(it.statement["collection"])
            if collection not in recipients:
                recipients[collection] = vault.roster().recipients(collection)
            if (it.export_sha256, collection) not in done:
                done.add((it.export_sha256, collection))
                keys.encrypt_into(batch, collection, it.export, recipients[collection])
            for data in it.texts:
                digest = sha256_hex(data)
                if digest in tombstoned or (digest, collection) in done:
                    continue
                done.add((digest, collection))
                keys.encrypt_into(batch, collection, data, recipients[collection])
    return seqs


def _refuse_known_answers(vault: Vault, items: list[ImportedItem]) -> None:
    """Refuse an answer id the vault already holds, or one this import holds twice."""
    taken = imported_answer_seqs(vault, [it.answer_id for it in items])
    seen: set[str] = set()
    for it in items:
        if it.answer_id in taken:
            raise InputError(
                it.file, "$", f"answer {it.answer_id} already in the vault (log entry {taken[it.answer_id]})"
            )
        if it.answer_id in seen:
            raise InputError(it.file, "$", f"answer {it.answer_id} appears twice in this import")
        seen.add(it.answer_id)


def _refuse_other_exports(items: list[ImportedItem]) -> None:
    """Refuse an item whose export bytes are not the file its statement names; each export
    is hashed once (items of one file share its bytes)."""
    hashed: dict[int, str] = {}
    for it in items:
        if id(it.export) not in hashed:
            hashed[id(it.export)] = sha256_hex(it.export)
        if hashed[id(it.export)] != it.export_sha256:
            raise InputError(it.file, "$.export.sha256", "the statement names another export file")
