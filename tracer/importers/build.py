"""Imported answers → signed-statement bodies: digests of whole texts, attestation, locators.

Locators come from the engine's chunker (`tracer.producer.locate`, the one
implementation) over the source revision the mapping names, when that revision is in
the vault; otherwise the passage has no chain and its currency is `unchecked`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from store.attest import Attestation, FieldFact
from store.crypto import sha256_hex
from store.errors import InputError
from store.imported import IMPORTED_SCHEMA, ImportedItem
from store.queries import RevisionRow
from store.statements import FieldFactJSON, ImportCitationJSON, ImportedTraceStatement
from store.textrules import id_problem
from tracer.importers.mapping import Document, ImportedAnswer, TextField, check_id
from tracer.producer.locate import CHUNKER_VERSION, NORMALIZER_VERSION, occurrences

__all__ = ["DocumentMapping", "ExportFile", "RevisionLookup", "build_item", "mapped_ids"]

A = Attestation

#: (document id, revision) -> the revision row and its text, when the vault holds it
RevisionLookup = Callable[[str, str], tuple[RevisionRow, str] | None]


@dataclass(frozen=True, slots=True)
class DocumentMapping:
    """Which metadata keys of a retrieved document name its source document and revision."""

    document_key: str = "document_id"
    revision_key: str = "revision"


@dataclass(frozen=True, slots=True)
class ExportFile:
    """An export file's bytes and their SHA-256, hashed once per file (not per answer)."""

    data: bytes
    sha256: str
    fmt: str


def mapped_ids(meta: Any, mapping: DocumentMapping) -> tuple[str | None, str | None]:
    """(document id, revision) a retrieved document's metadata names through the mapping."""
    return _scalar(meta, mapping.document_key), _scalar(meta, mapping.revision_key)


def _digest(t: TextField) -> str | None:
    return sha256_hex(t.value.encode("utf-8")) if t.value is not None else None


def _scalar(meta: Any, key: str) -> str | None:
    if isinstance(meta, dict):
        value = meta.get(key)
        if isinstance(value, str) and value:
            return value
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
    return None


def _in_prompt(text: str, prompts: list[tuple[str, TextField]]) -> tuple[TextField, str] | None:
    """`text` as found in the first whole prompt holding it, with that prompt's span id."""
    for span_id, p in prompts:
        if p.value is not None and text in p.value:
            fact = FieldFact(
                A.IMPORTER_COMPUTED, p.fact.source, f"found exactly in the prompt of span {span_id}"
            )
            return TextField(text, fact), span_id
    return None


def _model_input(doc: Document, answer: ImportedAnswer) -> tuple[TextField, str]:
    """The retrieved text as an exact substring of a recorded prompt, or why not (never guessed)."""
    if not doc.content.value:  # not whole, or empty: an empty text is in every prompt
        return TextField(
            None,
            FieldFact(
                doc.content.fact.state,
                doc.content.fact.source,
                "the retrieved text is not whole, so it cannot be found in a prompt",
            ),
        ), ""
    prompts = [(c.span_id, p) for c in answer.calls for p in c.prompts]
    found = _in_prompt(doc.content.value, prompts)
    if found is not None:
        return found
    if not prompts:
        return TextField.missing(A.ABSENT, "", "no prompt was recorded (content capture off?)"), ""
    cut = [p for _s, p in prompts if p.value is None and p.fact.state in (A.TRUNCATED, A.REDACTED)]
    if cut:
        return TextField.missing(
            cut[0].fact.state,
            cut[0].fact.source,
            "not found in the prompt messages that are whole; "
            f"{len(cut)} prompt message(s) are {cut[0].fact.state}",
        ), ""
    return TextField.missing(A.ABSENT, "", "not an exact substring of any recorded prompt message"), ""


def _chain(
    file: str, doc: Document, meta: Any, mapping: DocumentMapping, lookup: RevisionLookup
) -> tuple[str | None, str | None, dict[str, Any] | None, dict[str, FieldFact]]:
    facts: dict[str, FieldFact] = {}
    document_id, revision = mapped_ids(meta, mapping)
    for key, value in ((mapping.document_key, document_id), (mapping.revision_key, revision)):
        if value is not None:
            check_id(file, doc.line, doc.metadata_path, f"metadata[{key!r}] of document {doc.index}", value)
    src, cut = doc.metadata.fact.source, doc.metadata.fact.state
    facts["document_id"] = (
        FieldFact(A.IMPORTER_COMPUTED, src, f"metadata[{mapping.document_key!r}]")
        if document_id
        else _missing_key(doc, mapping.document_key)
    )
    facts["revision"] = (
        FieldFact(A.IMPORTER_COMPUTED, src, f"metadata[{mapping.revision_key!r}]")
        if revision
        else _missing_key(doc, mapping.revision_key)
    )
    if not document_id or not revision:
        why = (
            f"the metadata is {cut}"
            if doc.metadata.value is None and cut != A.ABSENT
            else f"the metadata names no {mapping.document_key!r} and {mapping.revision_key!r}"
        )
        facts["chain"] = FieldFact(
            A.ABSENT, "", f"no document id and revision to match a source revision: {why}"
        )
        return document_id, revision, None, facts
    chain, facts["chain"] = _located_chain(doc, document_id, revision, lookup)
    return document_id, revision, chain, facts


def _missing_key(doc: Document, key: str) -> FieldFact:
    """Why the document's metadata gives no `key`: it is not whole, there is none, or it lacks the key."""
    cut = doc.metadata.fact.state
    if doc.metadata.value is None and cut != A.ABSENT:  # the metadata is there, but not whole
        return FieldFact(
            cut, doc.metadata.fact.source, f"metadata[{key!r}] cannot be read: the metadata is {cut}"
        )
    if doc.metadata.value is None:
        return FieldFact(A.ABSENT, "", f"no metadata key {key!r}: no metadata recorded")
    return FieldFact(A.ABSENT, "", f"no metadata key {key!r}")


def _located_chain(
    doc: Document, document_id: str, revision: str, lookup: RevisionLookup
) -> tuple[dict[str, Any] | None, FieldFact]:
    """The chain (source, document, chunk, locator) of a retrieved text found once in its
    revision, or None, and the fact that says how it was found or why not."""
    found = lookup(document_id, revision)
    if found is None:
        return None, FieldFact(A.ABSENT, "", f"revision {revision!r} of {document_id!r} is not in the vault")
    rev, text = found
    if not doc.content.value:
        return None, FieldFact(
            A.ABSENT, "", f"the retrieved text is not whole ({doc.content.fact.state}): it cannot be located"
        )
    places = occurrences(text, doc.content.value)
    if len(places) != 1:
        return None, FieldFact(
            A.ABSENT,
            "",
            f"the retrieved text occurs {len(places)} time(s) in revision {revision!r}: not located",
        )
    loc = places[0]
    chunk_id = doc.ref.value or f"{document_id}@{revision}#{loc.paragraph}"
    chain = {
        "source": {"system": rev.source_system, "path": rev.path, "revision": rev.source_revision},
        "document": {
            "document_id": document_id,
            "uri": rev.uri,
            "revision": revision,
            "backend": rev.backend,
        },
        "chunk": {"chunk_id": chunk_id, "pipeline_version": CHUNKER_VERSION, "parameters": {}},
        "locator": loc.to_json(),
        "normalizer_version": NORMALIZER_VERSION,
    }
    return chain, FieldFact(
        A.IMPORTER_COMPUTED,
        f"v_revisions seq {rev.seq}",
        f"located by {CHUNKER_VERSION} in revision {revision!r} of {document_id!r}",
    )


@dataclass
class _Kept:
    """A statement's per-field facts and the whole texts it keeps, as they are gathered."""

    fields: dict[str, FieldFactJSON] = field(default_factory=dict)
    texts: list[bytes] = field(default_factory=list)

    def keep(self, t: TextField, path: str) -> str | None:
        """Record the field's fact at `path`, keep its text when whole; its digest."""
        self.fields[path] = t.fact.to_json()
        if t.value is not None:
            self.texts.append(t.value.encode("utf-8"))
        return _digest(t)


def _passage(
    kept: _Kept,
    base: str,
    i: int,
    doc: Document,
    answer: ImportedAnswer,
    collection: str,
    mapping: DocumentMapping,
    lookup: RevisionLookup,
) -> dict[str, Any]:
    """Passage `i` of the statement (at JSON path `base`), its facts recorded in `kept`."""
    fields = kept.fields
    model_input, mi_span = _model_input(doc, answer)
    document_id, revision, chain, facts = _chain(answer.file, doc, doc.metadata.value, mapping, lookup)
    fields[f"{base}.metadata"] = doc.metadata.fact.to_json()
    fields[f"{base}.chunk_ref"] = doc.ref.fact.to_json()
    fields[f"{base}.score"] = doc.score.fact.to_json()
    fields[f"{base}.rank"] = FieldFact(
        A.IMPORTER_COMPUTED, doc.source, "position in the span's documents"
    ).to_json()
    fields[f"{base}.retrieved_at"] = FieldFact(
        A.IMPORTER_COMPUTED, doc.source, "the span's end time"
    ).to_json()
    fields[f"{base}.query_sha256"] = doc.query.fact.to_json()
    fields[f"{base}.span_id"] = FieldFact(
        A.IMPORTER_COMPUTED, doc.source, "the span the passage was read from"
    ).to_json()
    fields[f"{base}.data_source"] = doc.data_source.fact.to_json()
    for name, fact in facts.items():
        fields[f"{base}.{name}"] = fact.to_json()
    return {
        "passage_id": f"p{i + 1}",
        "span_id": doc.span_id,
        "index": doc.index,
        "collection": collection,
        "document_id": document_id,
        "revision": revision,
        "chunk_ref": doc.ref.value,
        "metadata": doc.metadata.value,
        "retrieved_sha256": kept.keep(doc.content, f"{base}.retrieved_sha256"),
        "model_input_sha256": kept.keep(model_input, f"{base}.model_input_sha256"),
        "model_input_span_id": mi_span or None,
        "rank": doc.rank,
        "score": doc.score.value,
        "query_sha256": _digest(doc.query),
        "retrieved_at": doc.retrieved_at,
        "data_source": doc.data_source.value,
        "chain": chain,
    }


def build_item(
    answer: ImportedAnswer,
    export: ExportFile,
    collection: str,
    now: str,
    mapping: DocumentMapping,
    lookup: RevisionLookup,
) -> ImportedItem:
    """The statement for one imported answer, with the whole texts it keeps."""
    name = answer.file.rsplit("/", 1)[-1]
    if id_problem(name):
        raise InputError(
            answer.file, "$", f"the export's file name is shown in every output; it {id_problem(name)}"
        )
    kept = _Kept()
    passages = [
        _passage(kept, f"$.passages[{i}]", i, doc, answer, collection, mapping, lookup)
        for i, doc in enumerate(answer.documents)
    ]
    answer_digest = kept.keep(answer.answer, "$.answer_sha256")
    question_digest = kept.keep(answer.question, "$.question_sha256")
    fields = kept.fields
    sent = [p["passage_id"] for p in passages if p["model_input_sha256"] is not None]
    citations: list[ImportCitationJSON] = []
    if answer.answer.value is not None and sent:
        citations.append({"answer_start": 0, "answer_end": len(answer.answer.value), "passage_ids": sent})
        fields["$.citations[0]"] = FieldFact(
            A.IMPORTER_COMPUTED, "", "the whole answer rests on every passage found in a prompt"
        ).to_json()
    for key, v in (
        ("generated_at", answer.generated_at),
        ("producer.system", answer.service),
        ("producer.version", answer.service_version),
        ("runtime.model", answer.model),
        ("runtime.session_id", answer.session_id),
    ):
        fields[f"$.{key}"] = v.fact.to_json()
    # texts kept twice (a retrieved text that is also its model input) are stored once
    unique = list(dict.fromkeys(kept.texts))
    statement: ImportedTraceStatement = {
        "schema": IMPORTED_SCHEMA,
        "answer_id": answer.answer_id,
        "run_id": answer.trace_id,
        "collection": collection,
        "imported_at": now,
        "generated_at": answer.generated_at.value,
        "export": {
            "sha256": export.sha256,
            "format": export.fmt,
            "file": name,
            "bytes": len(export.data),
            "lines": list(answer.lines),
        },
        "trace_id": answer.trace_id,
        "trace_sha256": answer.trace_sha256,
        "root_span_id": answer.root_span_id,
        "span_ids": list(answer.span_ids),
        "producer": {"system": answer.service.value, "version": answer.service_version.value},
        "runtime": {
            "model": answer.model.value,
            "session_id": answer.session_id.value,
            "llm_calls": [c.span_id for c in answer.calls],
        },
        "question_sha256": question_digest,
        "answer_sha256": answer_digest,
        "passages": passages,
        "citations": citations,
        "fields": dict(sorted(fields.items())),
    }
    return ImportedItem(answer.file, statement, tuple(unique), export.data)
