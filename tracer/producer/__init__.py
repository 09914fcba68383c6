"""The producer SDK: record what a RAG pipeline retrieved, sent and answered, signed.

Importable with only `rfc8785` and the signature library `store.crypto` wraps (no
Textual, DuckDB or pyarrow), so a pipeline can depend on it cheaply; the framework
adapters live in `tracer.producer.langchain` and `tracer.producer.llamaindex` and are
imported only by whoever uses them. `docs/producers.md` is the guide.
"""

from __future__ import annotations

from store.records import DocumentRef, SourceRef
from tracer.producer.errors import CitationError, LocateError, ModelInputError, ProducerError, RecordError
from tracer.producer.locate import (
    CHUNKER_VERSION,
    DEFAULT_NORMALIZER,
    NORMALIZER_VERSION,
    Locator,
    RevisionChunk,
    chunk_report,
    chunks,
    locate,
    occurrences,
)
from tracer.producer.model import Authorization, Chunker, Producer, Runtime, SourceRevision, text_sha256
from tracer.producer.outbox import Outbox
from tracer.producer.recorder import UNSPECIFIED_CHUNKER, AnswerRecord, Note, Passage, Recorder, Written
from tracer.producer.signer import Signer

__all__ = [
    "CHUNKER_VERSION",
    "DEFAULT_NORMALIZER",
    "NORMALIZER_VERSION",
    "UNSPECIFIED_CHUNKER",
    "AnswerRecord",
    "Authorization",
    "Chunker",
    "CitationError",
    "DocumentRef",
    "LocateError",
    "Locator",
    "ModelInputError",
    "Note",
    "Outbox",
    "Passage",
    "Producer",
    "ProducerError",
    "RecordError",
    "Recorder",
    "RevisionChunk",
    "Runtime",
    "Signer",
    "SourceRef",
    "SourceRevision",
    "Written",
    "chunk_report",
    "chunks",
    "locate",
    "occurrences",
    "text_sha256",
]
