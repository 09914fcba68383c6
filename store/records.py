"""The domain records of a trace: a manifest, its passages and citations, a revision.

A signed payload is parsed into these once, right after its schema (at ingest) or its
bytes (in verify and trace) were checked, and everything after reads attributes instead
of indexing nested dicts: a misspelt field is a type error, not a `KeyError` at run time
on the one manifest that has it. The records are frozen and slotted (cheap to build,
picklable for the verify workers) and keep every signed value exactly as the JSON held
it, so `to_json` gives back what was signed.

Imported traces (`tracer.importers`) use the same records with what an export does not
carry left `None`: a passage's `chain` is present only where the importer located it in
a source revision of the vault.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, NewType, NotRequired, TypedDict

from store.words import ModelInput

__all__ = [
    "MANIFEST_V1",
    "MANIFEST_V2",
    "MODEL_INPUT_STATES",
    "Chain",
    "ChainJSON",
    "ChunkJSON",
    "ChunkRef",
    "Citation",
    "Digest",
    "DocumentJSON",
    "DocumentRef",
    "KeyId",
    "Locator",
    "LocatorJSON",
    "MalformedRecordError",
    "Manifest",
    "Passage",
    "Producer",
    "ProducerJSON",
    "Revision",
    "SourceJSON",
    "SourceRef",
    "TransformKey",
    "imported_manifest",
    "located_chain",
]

#: lowercase hex SHA-256 of exact UTF-8 bytes (a passage, question, answer, revision)
Digest = NewType("Digest", str)
#: the hex id of a public key (`store.crypto.key_id`)
KeyId = NewType("KeyId", str)

JsonObject = Mapping[str, Any]

#: the payload versions a producer may sign: v2 is v1 plus each passage's `model_input`
MANIFEST_V1 = "tracer.manifest/v1"
MANIFEST_V2 = "tracer.manifest/v2"
#: what a producer's passage says the model was given (`model_input` in v2; a v1 passage
#: is always `sent`): the text of the prompt that carried it; what was sent after the
#: pipeline transformed it; nothing, it was retrieved but in no prompt (no model input
#: digest, and no citation may rest on it)
MODEL_INPUT_STATES: tuple[ModelInput, ...] = tuple(ModelInput)


# The JSON of the records below, as `--json` and packs give it (docs/json.md).


class LocatorJSON(TypedDict):
    heading_path: list[str]
    paragraph: int
    char_start: int
    char_end: int


class DocumentJSON(TypedDict):
    """`uri` and `backend` are absent for an import that named only the other two."""

    document_id: str | None
    uri: NotRequired[str | None]
    revision: str | None
    backend: NotRequired[str | None]


class SourceJSON(TypedDict):
    system: str
    path: str
    revision: str


class ChunkJSON(TypedDict):
    chunk_id: str
    pipeline_version: str
    #: the chunker's own parameters, as the producer signed them
    parameters: dict[str, Any]


class ChainJSON(TypedDict):
    chunk: ChunkJSON
    locator: LocatorJSON
    normalizer_version: str
    document: DocumentJSON
    source: SourceJSON


class ProducerJSON(TypedDict):
    system: str | None
    version: str | None


_EXACT = frozenset((str, int))
_STR = {str}


class MalformedRecordError(ValueError):
    """A payload that does not have the shape of the record it claims to be."""


@dataclass(frozen=True, slots=True)
class Locator:
    """Where a chunk sits in its revision's normalized text: heading path, paragraph, span."""

    heading_path: tuple[str, ...]
    paragraph: int
    char_start: int
    char_end: int

    def to_json(self) -> LocatorJSON:
        return {
            "heading_path": list(self.heading_path),
            "paragraph": self.paragraph,
            "char_start": self.char_start,
            "char_end": self.char_end,
        }


@dataclass(frozen=True, slots=True)
class DocumentRef:
    """The document and revision a passage names; an import may know neither."""

    document_id: str | None
    revision: str | None
    uri: str | None = None
    backend: str | None = None

    def to_json(self) -> DocumentJSON:
        if self.uri is None and self.backend is None:  # an import that named only these
            return {"document_id": self.document_id, "revision": self.revision}
        return {
            "document_id": self.document_id,
            "uri": self.uri,
            "revision": self.revision,
            "backend": self.backend,
        }


@dataclass(frozen=True, slots=True)
class SourceRef:
    system: str
    path: str
    revision: str

    def to_json(self) -> SourceJSON:
        return {"system": self.system, "path": self.path, "revision": self.revision}


@dataclass(frozen=True, slots=True)
class ChunkRef:
    chunk_id: str
    pipeline_version: str
    parameters: JsonObject

    def to_json(self) -> ChunkJSON:
        return {
            "chunk_id": self.chunk_id,
            "pipeline_version": self.pipeline_version,
            "parameters": dict(self.parameters),
        }


@dataclass(frozen=True, slots=True)
class Chain:
    """What ties a passage to a source revision: the revision, the chunk, its place and
    the normalizer. A passage with a chain always names its document and revision."""

    document_id: str
    revision: str
    source: SourceRef
    chunk: ChunkRef
    locator: Locator
    normalizer_version: str


class TransformKey(NamedTuple):
    """Everything the transform check of a passage depends on, all content-addressed or
    signed: its verdict is computed once per distinct key in a run, never per reference.

    A named tuple rather than a dataclass: it is the memo key of millions of lookups and
    crosses the verify workers' pipes, where a tuple hashes and pickles faster
    (`docs/benchmarks.md`, "Docstring figures").
    """

    retrieved_sha256: str
    collection: str
    normalizer_version: str
    document_id: str
    revision: str
    char_start: int
    char_end: int

    @property
    def memoizable(self) -> bool:
        """Only exact str and int values share a verdict, so 1, 1.0, "1" and True never
        collide (a payload edited in the vault may hold any JSON value)."""
        return set(map(type, self)) <= _EXACT


@dataclass(frozen=True, slots=True)
class Passage:
    passage_id: str
    collection: str
    document: DocumentRef
    retrieved_sha256: Digest | None
    model_input_sha256: Digest | None
    retrieved_at: str | None
    rank: int | None
    score: int | float | None
    query_sha256: Digest | None
    chain: Chain | None
    derived_from: str | None = None
    #: an imported passage's statement as the importer wrote it (None for a producer's)
    imported: JsonObject | None = None
    #: a producer's passage: one of `MODEL_INPUT_STATES` (None for an imported passage,
    #: whose fields carry their own attestation instead)
    model_input_state: ModelInput | None = None

    @property
    def not_sent(self) -> bool:
        return self.model_input_state is ModelInput.NOT_SENT

    def located(self) -> Chain:
        """The chain; only a passage that has one is traced to a revision."""
        if self.chain is None:
            raise MalformedRecordError(f"passage {self.passage_id!r} names no chunk, locator or source")
        return self.chain

    @property
    def locator(self) -> Locator | None:
        return None if self.chain is None else self.chain.locator

    def transform_key(self) -> TransformKey | None:
        """What its transform verdict depends on; None for derived or unlocated text."""
        return None if self.derived_from else self.chain_key()

    def chain_key(self) -> TransformKey | None:
        """Its text's digest and place in the revision it names, derived or not."""
        c, digest = self.chain, self.retrieved_sha256
        if c is None or digest is None:
            return None
        loc = c.locator
        return TransformKey(
            digest,
            self.collection,
            c.normalizer_version,
            c.document_id,
            c.revision,
            loc.char_start,
            loc.char_end,
        )

    def chain_json(self) -> ChainJSON | None:
        """The chain members of the signed passage, as signed (`--json`'s `chain`)."""
        c = self.chain
        if c is None:
            return None
        return {
            "chunk": c.chunk.to_json(),
            "locator": c.locator.to_json(),
            "normalizer_version": c.normalizer_version,
            "document": self.document.to_json(),
            "source": c.source.to_json(),
        }


@dataclass(frozen=True, slots=True)
class Citation:
    answer_start: int
    answer_end: int
    passage_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Producer:
    system: str | None
    version: str | None

    def to_json(self) -> ProducerJSON:
        return {"system": self.system, "version": self.version}


@dataclass(frozen=True, slots=True)
class Manifest:
    """A signed `tracer.manifest/v1` payload (or an imported trace in its shape)."""

    run_id: str
    answer_id: str
    kind: str
    generated_at: str
    producer: Producer
    runtime: JsonObject
    authorization: JsonObject
    collection: str
    question_sha256: Digest | None
    answer_sha256: Digest | None
    passages: tuple[Passage, ...]
    citations: tuple[Citation, ...]
    lineage: tuple[str, ...]

    @property
    def unsent_citations(self) -> list[tuple[int, int, str]]:
        """(citation, position, passage id) of every citation naming a passage its
        producer signed as `not_sent`: the answer cannot rest on text the model never saw."""
        unsent = {p.passage_id for p in self.passages if p.not_sent}
        return [
            (i, j, pid)
            for i, c in enumerate(self.citations)
            for j, pid in enumerate(c.passage_ids)
            if pid in unsent
        ]

    @property
    def sources(self) -> list[str]:
        """Every answer id this one was built from: its lineage and its passages' sources."""
        ids = set(self.lineage)
        ids |= {p.derived_from for p in self.passages if p.derived_from}
        return sorted(ids)

    @classmethod
    def from_json(cls, p: Any) -> Manifest:
        """The record of a manifest payload; `MalformedRecordError` names what is wrong."""
        try:
            v2 = p.get("schema") == MANIFEST_V2
            return cls(
                p["run_id"],
                p["answer_id"],
                p.get("kind", "answer"),
                p["generated_at"],
                Producer(p["producer"]["system"], p["producer"]["version"]),
                p["runtime"],
                p["authorization"],
                p["collection"],
                p["question_sha256"],
                p["answer_sha256"],
                tuple(_signed_passage(ps, v2) for ps in p["passages"]),
                tuple(map(_citation, p["citations"])),
                _strings(p.get("lineage", [])),
            )
        except (KeyError, TypeError, AttributeError) as exc:
            raise MalformedRecordError(f"not a manifest: {type(exc).__name__} {exc}") from exc


def _strings(items: Sequence[Any]) -> tuple[str, ...]:
    if type(items) is not list or (items and set(map(type, items)) != _STR):
        raise TypeError("expected a list of strings")
    return tuple(items)


def located_chain(ps: JsonObject) -> tuple[DocumentRef, Chain]:
    """The document and chain members (`document`, `source`, `chunk`, `locator`,
    `normalizer_version`) of a signed passage or of an importer's located chain."""
    doc, loc, chunk, src = ps["document"], ps["locator"], ps["chunk"], ps["source"]
    return DocumentRef(doc["document_id"], doc["revision"], doc["uri"], doc["backend"]), Chain(
        doc["document_id"],
        doc["revision"],
        SourceRef(src["system"], src["path"], src["revision"]),
        ChunkRef(chunk["chunk_id"], chunk["pipeline_version"], chunk["parameters"]),
        Locator(_strings(loc["heading_path"]), loc["paragraph"], loc["char_start"], loc["char_end"]),
        ps["normalizer_version"],
    )


def _passage(
    ps: JsonObject,
    document: DocumentRef,
    chain: Chain | None,
    derived_from: str | None = None,
    imported: JsonObject | None = None,
    model_input: tuple[Digest | None, ModelInput | None] | None = None,
) -> Passage:
    digest, state = (ps["model_input_sha256"], None) if model_input is None else model_input
    return Passage(
        ps["passage_id"],
        ps["collection"],
        document,
        ps["retrieved_sha256"],
        digest,
        ps["retrieved_at"],
        ps["rank"],
        ps["score"],
        ps["query_sha256"],
        chain,
        derived_from,
        imported,
        state,
    )


def _signed_passage(ps: JsonObject, v2: bool = False) -> Passage:
    return _passage(ps, *located_chain(ps), ps.get("derived_from"), None, _model_input(ps, v2))


def _model_input(ps: JsonObject, v2: bool) -> tuple[Digest | None, ModelInput]:
    """A v1 passage was sent, its digest required; a v2 passage says which, and only a
    `not_sent` one has no digest (`TypeError`, so `MalformedRecordError`, otherwise)."""
    if not v2:
        return ps["model_input_sha256"], ModelInput.SENT
    word = ps["model_input"]
    if type(word) is not str or word not in MODEL_INPUT_STATES:
        raise TypeError(f"model_input {word!r} is none of {', '.join(MODEL_INPUT_STATES)}")
    state = ModelInput(word)
    digest = ps.get("model_input_sha256")
    if (digest is None) != (state is ModelInput.NOT_SENT):
        raise TypeError(f"model_input {state!r} with{'out' if digest is None else ''} model_input_sha256")
    return digest, state


def _citation(c: JsonObject) -> Citation:
    return Citation(c["answer_start"], c["answer_end"], _strings(c["passage_ids"]))


def _imported_passage(ps: JsonObject) -> Passage:
    chain = ps.get("chain")
    if isinstance(chain, Mapping):
        return _passage(ps, *located_chain(chain), None, ps)
    return _passage(ps, DocumentRef(ps["document_id"], ps["revision"]), None, None, ps)


def imported_manifest(st: Any) -> Manifest:
    """An `imported_trace` statement (`store.imported`) as a manifest record of kind
    "imported": what the export did not hold stays None, and a passage has a chain only
    where the importer located it in a source revision of the vault."""
    try:
        return Manifest(
            st["run_id"],
            st["answer_id"],
            "imported",
            st["generated_at"],
            Producer(st["producer"]["system"], st["producer"]["version"]),
            dict(st["runtime"]),
            {},
            st["collection"],
            st["question_sha256"],
            st["answer_sha256"],
            tuple(map(_imported_passage, st["passages"])),
            tuple(map(_citation, st["citations"])),
            (),
        )
    except (KeyError, TypeError, AttributeError) as exc:
        raise MalformedRecordError(f"not an imported trace: {type(exc).__name__} {exc}") from exc


@dataclass(frozen=True, slots=True)
class Revision:
    """A source revision as logged (`tracer.source_revision/v1` with its text by digest)."""

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
    content_sha256: Digest

    @classmethod
    def from_json(cls, p: Any) -> Revision:
        try:
            return cls(
                p["document_id"],
                p["revision"],
                p["source_system"],
                p["source_revision"],
                p["path"],
                p["title"],
                p["uri"],
                p["backend"],
                p["collection"],
                p["committed_at"],
                p["content_sha256"],
            )
        except (KeyError, TypeError) as exc:
            raise MalformedRecordError(f"not a revision: {type(exc).__name__} {exc}") from exc
