"""A producer's signed manifest payload once its JSON Schema accepted it, as TypedDicts.

`store/schemas/manifest-v1.schema.json` and `-v2` fix every member (no others are
allowed); ingest's checks beyond the schema read the payload through these types, so a
check that names a member the schema does not have is a mypy error, not a KeyError at
ingest.  Two things the schema leaves open stay open here: a chunker's `parameters` and
the runtime's (the producer's own JSON), and an `integer` may still be an integral float
(5.0) until `store.records.Manifest.from_json` reads it.  What has not been validated
yet is not one of these: ingest holds it as parsed JSON until `validate` returns.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

from store.records import ChunkJSON, LocatorJSON, SourceJSON
from store.words import ModelInput

__all__ = [
    "ManifestAuthorizationJSON",
    "ManifestCitationJSON",
    "ManifestDocumentJSON",
    "ManifestPassageJSON",
    "ManifestPayloadJSON",
    "ManifestProducerJSON",
    "ManifestRuntimeJSON",
]


class ManifestProducerJSON(TypedDict):
    system: str
    version: str


class ManifestRuntimeJSON(TypedDict):
    model: str
    prompt_template_version: str
    pipeline_version: str
    parameters: dict[str, Any]


class ManifestAuthorizationJSON(TypedDict):
    principal: str
    policy_version: str
    decision: str


class ManifestDocumentJSON(TypedDict):
    document_id: str
    uri: str
    revision: str
    backend: str


class ManifestPassageJSON(TypedDict):
    passage_id: str
    collection: str
    source: SourceJSON
    document: ManifestDocumentJSON
    chunk: ChunkJSON
    locator: LocatorJSON
    retrieved_sha256: str
    #: required in v1; in v2 absent exactly when `model_input` is `not_sent`
    model_input_sha256: NotRequired[str]
    #: v2 only (the words of `store.words.ModelInput`; the schema allows no other)
    model_input: NotRequired[ModelInput]
    normalizer_version: str
    retrieved_at: str
    rank: int
    score: float
    query_sha256: str
    derived_from: NotRequired[str]


class ManifestCitationJSON(TypedDict):
    answer_start: int
    answer_end: int
    passage_ids: list[str]


class ManifestPayloadJSON(TypedDict):
    """`tracer.manifest/v1` or `/v2` (docs/schemas/)."""

    schema: Literal["tracer.manifest/v1", "tracer.manifest/v2"]
    kind: Literal["answer", "note"]
    run_id: str
    answer_id: str
    generated_at: str
    producer: ManifestProducerJSON
    runtime: ManifestRuntimeJSON
    authorization: ManifestAuthorizationJSON
    collection: str
    question_sha256: str
    answer_sha256: str
    passages: list[ManifestPassageJSON]
    citations: list[ManifestCitationJSON]
    lineage: list[str]
