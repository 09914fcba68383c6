"""The statements tracer signs into the log, as TypedDicts: one name per statement kind.

A `store.entries.Statement` carries one of these, so whoever builds a statement (the
roster's admin commands, the case desk, ingest, an importer) is held by mypy to the
members the readers of the log expect.  They are plain dicts at run time: the signed
bytes are `canonical()` of exactly the members written, optional ones (`NotRequired`)
only when present.  What is read back from the log is not trusted to have this shape:
`Roster.refusal` and `CaseFile.refusal` check a `Mapping[str, object]` member by member
before anything is folded.
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

__all__ = [
    "AccessStatement",
    "CaseOpenStatement",
    "CaseStatementJSON",
    "DocumentDeletionStatement",
    "FieldFactJSON",
    "FindingStatement",
    "HoldStatement",
    "HoldSubjectJSON",
    "ImportCitationJSON",
    "ImportExportJSON",
    "ImportProducerJSON",
    "ImportRuntimeJSON",
    "ImportedTraceStatement",
    "InvestigatorGrantStatement",
    "InvestigatorRevokeStatement",
    "JournalPlaceJSON",
    "KeyAddStatement",
    "KeyRevokeStatement",
    "LogPlaceJSON",
    "NoteStatement",
    "ReleaseStatement",
    "RevisionStatement",
    "StatementJSON",
    "TagStatement",
    "TombstoneStatement",
    "VaultInitStatement",
]


class LogPlaceJSON(TypedDict):
    """Where a statement belongs (`store.entries.place_of`), signed with it."""

    origin: str
    root: str
    seq: int


class JournalPlaceJSON(TypedDict):
    """A journal line's place: the checkpoint it was made against, not a seq."""

    origin: str
    journal: bool
    size: int
    root: str


class VaultInitStatement(TypedDict):
    origin: str
    format: str
    #: `PublicIdentity.to_json()` of the custodian
    custodian: dict[str, str]
    at: str


class KeyAddStatement(TypedDict):
    key_id: str
    name: str
    role: str
    ed25519: str
    at: str
    valid_from: NotRequired[str]
    valid_until: NotRequired[str]


class KeyRevokeStatement(TypedDict):
    key_id: str
    at: str
    reason: str


class InvestigatorGrantStatement(TypedDict):
    key_id: str
    name: str
    scopes: list[str]
    ed25519: str
    x25519: str
    at: str
    rights: NotRequired[list[str]]


class InvestigatorRevokeStatement(TypedDict):
    key_id: str
    name: str
    at: str
    reason: str


class TombstoneStatement(TypedDict):
    digest: str
    policy: str
    reason: str
    authorizer: str
    effective_at: str


class RevisionStatement(TypedDict):
    """A `tracer.source_revision/v1` document without `content` and `schema`, plus the
    content's digest."""

    document_id: str
    revision: str
    source_system: str
    source_revision: str
    path: str
    title: str
    uri: str
    backend: str
    collection: str
    committed_at: str
    content_sha256: str


class DocumentDeletionStatement(TypedDict):
    """A `tracer.document_deletion/v1` document without `schema`."""

    document_id: str
    deleted_at: str
    reason: str


class AccessStatement(TypedDict):
    action: str
    target: str
    at: str
    forensic: NotRequired[bool]
    #: a journal line's statement (outside the log) says so
    journal: NotRequired[bool]
    case_id: NotRequired[str]


class FindingStatement(TypedDict):
    """An investigator's signed note on an answer, a claim or a passage."""

    answer_id: str
    target: str
    note: str
    at: str
    case_id: NotRequired[str]


class CaseOpenStatement(TypedDict):
    case_id: str
    title: str
    purpose: str
    at: str


class TagStatement(TypedDict):
    op: str
    tag: str
    answer_id: str
    target: str
    at: str
    case_id: NotRequired[str]


class NoteStatement(TypedDict):
    """A case note (`note`) or a case's conclusion (`case_conclusion`)."""

    case_id: str
    text: str
    at: str
    answer_id: NotRequired[str]


class HoldSubjectJSON(TypedDict):
    kind: str
    id: str


class HoldStatement(TypedDict):
    subject: HoldSubjectJSON
    reason: str
    at: str
    #: for a hold on an answer: the log entries its evidence rests on
    entries: NotRequired[list[int]]
    case_id: NotRequired[str]


class ReleaseStatement(TypedDict):
    hold_seq: int
    reason: str
    at: str
    case_id: NotRequired[str]


class ImportExportJSON(TypedDict):
    """The export file an imported answer was read from."""

    sha256: str
    format: str
    file: str
    bytes: int
    #: first and last line of the answer's spans in the file
    lines: list[int]


class ImportProducerJSON(TypedDict):
    system: str | None
    version: str | None


class ImportRuntimeJSON(TypedDict):
    model: str | None
    session_id: str | None
    llm_calls: list[str]


class ImportCitationJSON(TypedDict):
    answer_start: int
    answer_end: int
    passage_ids: list[str]


class FieldFactJSON(TypedDict):
    """How one field of an imported answer is known (`store.attest.FieldFact`)."""

    state: str
    source: str | None
    detail: str | None


class ImportedTraceStatement(TypedDict):
    """A `tracer.imported_trace/v1` statement (store/imported.py, docs/import.md)."""

    schema: str
    answer_id: str
    run_id: str
    collection: str
    imported_at: str
    generated_at: str | None
    export: ImportExportJSON
    trace_id: str
    trace_sha256: str
    root_span_id: str
    span_ids: list[str]
    producer: ImportProducerJSON
    runtime: ImportRuntimeJSON
    question_sha256: str | None
    answer_sha256: str | None
    #: each located passage, its members as the export gave them (metadata, chunk refs
    #: and scores are the instrumentation's JSON, unread)
    passages: list[dict[str, Any]]
    citations: list[ImportCitationJSON]
    fields: dict[str, FieldFactJSON]


#: what `store.casefile.append_case_statement` signs: a case-file, hold or access statement
CaseStatementJSON = (
    AccessStatement
    | FindingStatement
    | CaseOpenStatement
    | TagStatement
    | NoteStatement
    | HoldStatement
    | ReleaseStatement
)

StatementJSON = (
    VaultInitStatement
    | KeyAddStatement
    | KeyRevokeStatement
    | InvestigatorGrantStatement
    | InvestigatorRevokeStatement
    | TombstoneStatement
    | RevisionStatement
    | DocumentDeletionStatement
    | CaseStatementJSON
    | ImportedTraceStatement
)
