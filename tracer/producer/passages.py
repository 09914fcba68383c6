"""A record's passages: the two ways one is built (cut from a source revision, or from
a note already written) and the list that owns them, their ids and their limit.

Both ways share what the retriever said about the passage (`Retrieval`: rank, score,
query, time, the id asked for); each checks it in one place, so a passage of either
kind carries the same facts checked by the same rules.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime

from store.records import DocumentRef, SourceRef
from tracer.producer import model as m
from tracer.producer.chunkclaim import chunk_claim, reference_chunk
from tracer.producer.errors import CitationError, RecordError
from tracer.producer.locate import DEFAULT_NORMALIZER, Locator, locate
from tracer.producer.model import Chunker, SourceRevision

__all__ = ["MAX_PASSAGES", "NOTE_CHUNKER", "Note", "Passage", "Passages", "Retrieval"]

#: the manifest schema's limit on passages per manifest
MAX_PASSAGES = 10_000
NOTE_CHUNKER = "tracer-note/1"


@dataclass(frozen=True, slots=True)
class Note:
    """A note (or answer) already written, as a later answer retrieves it.

    Its passage points at a pseudo-document `memory-note/<answer_id>` revision `1` in the
    memory store `system`, with `derived_from` naming the note: the vault then follows
    the note's own lineage to the source passages it was built from.
    """

    answer_id: str
    text: str
    collection: str
    system: str
    backend: str = "assistant-memory"

    def __post_init__(self) -> None:
        m.name(self.answer_id, "note.answer_id")
        m.text(self.text, "note.text")
        m.name(self.collection, "note.collection")
        m.name(self.system, "note.system")
        m.name(self.backend, "note.backend")


@dataclass(frozen=True, slots=True)
class Passage:
    """One retrieved passage of a record, with every fact the manifest states about it."""

    passage_id: str
    text: str
    collection: str
    source: SourceRef
    document: DocumentRef
    chunk_id: str
    chunker: Chunker
    locator: Locator
    rank: int
    score: float | int
    retrieved_at: str
    query: str = field(repr=False)
    derived_from: str | None
    owner: int = field(repr=False, compare=False)
    #: the normalizer whose coordinates `locator` is in (`normalizer_version`)
    normalizer_version: str = DEFAULT_NORMALIZER
    sha256: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "sha256", m.text_sha256(self.text))


@dataclass(frozen=True, slots=True)
class Retrieval:
    """What the retriever said of one passage, as the pipeline passed it (unchecked):
    its rank, score and query, when (None: now), and the passage id asked for (None:
    the next `p<n>`)."""

    rank: int
    score: float | int
    query: str
    retrieved_at: datetime | str | None = None
    passage_id: str | None = None


class Passages:
    """The passages of one record, in the order retrieved.  `owner` is the record's
    identity (a passage of another record is refused where one is named); `now` is the
    recorder's clock, for a retrieval without a time."""

    def __init__(self, owner: int, normalizer_version: Callable[[], str], now: Callable[[], str]) -> None:
        self._owner = owner
        self._version = normalizer_version
        self._now = now
        self._all: list[Passage] = []

    def __iter__(self) -> Iterator[Passage]:
        return iter(self._all)

    def __len__(self) -> int:
        return len(self._all)

    def own(self, passage: object, answer_id: str) -> Passage:
        """`passage` if it is one of these, else a `CitationError`."""
        if not isinstance(passage, Passage) or passage.owner != self._owner or passage not in self._all:
            raise CitationError(f"{passage!r} is not a passage of record {answer_id!r}")
        return passage

    def _check_id(self, hit: Retrieval) -> str:
        pid = m.name(hit.passage_id or f"p{len(self._all) + 1}", "passage_id")
        if any(p.passage_id == pid for p in self._all):
            raise RecordError(f"passage_id {pid!r} is already used in this record")
        if len(self._all) >= MAX_PASSAGES:
            raise RecordError(f"a manifest holds at most {MAX_PASSAGES} passages")
        return pid

    def _add(
        self,
        pid: str,
        hit: Retrieval,
        *,
        text: str,
        collection: str,
        source: SourceRef,
        document: DocumentRef,
        chunk_id: str,
        chunker: Chunker,
        locator: Locator,
        derived_from: str | None,
    ) -> Passage:
        """The passage, `hit` checked (in the order the manifest lists its fields), kept."""
        at, loc_version = hit.retrieved_at, self._version()
        passage = Passage(
            passage_id=pid,
            text=text,
            collection=collection,
            source=source,
            document=document,
            chunk_id=chunk_id,
            chunker=chunker,
            locator=locator,
            rank=m.non_negative(hit.rank, "rank"),
            score=m.score(hit.score, "score"),
            retrieved_at=self._now() if at is None else m.timestamp(at, "retrieved_at"),
            query=m.text(hit.query, "query"),
            derived_from=derived_from,
            owner=self._owner,
            normalizer_version=loc_version,
        )
        self._all.append(passage)
        return passage

    def from_revision(
        self,
        text: str,
        revision: SourceRevision | None,
        hit: Retrieval,
        *,
        chunk_id: str | None,
        chunker: Chunker | None,
        collection: str | None,
        occurrence: int | None,
        near: int | None,
    ) -> Passage:
        """A passage cut from `revision` (`AnswerRecord.retrieved` says the rules)."""
        m.text(text, "retrieved text")
        if revision is None:
            raise RecordError(
                "a passage needs the source revision it was cut from (revision=None): without "
                "it no locator can be computed and the vault cannot check the passage"
            )
        if not isinstance(revision, SourceRevision):
            raise RecordError(f"revision: expected a SourceRevision, got {type(revision).__name__}")
        pid = self._check_id(hit)
        what = f"passage {pid} ({revision.document_id} revision {revision.revision})"
        version = self._version()
        loc = locate(
            revision.content, text, occurrence=occurrence, near=near, what=what, normalizer_version=version
        )
        index = reference_chunk(revision.content, text, loc, version)
        chunk_id, chunker = chunk_claim(revision, index, chunk_id, chunker, what)
        return self._add(
            pid,
            hit,
            text=text,
            collection=m.name(collection or revision.collection, "passage collection"),
            source=SourceRef(revision.source_system, revision.path, revision.source_revision),
            document=DocumentRef(revision.document_id, revision.revision, revision.uri, revision.backend),
            chunk_id=chunk_id,
            chunker=chunker,
            locator=loc,
            derived_from=None,
        )

    def from_note(self, note: Note, hit: Retrieval, text: str | None) -> Passage:
        """A passage whose text is `note`'s text (or part of it)."""
        if not isinstance(note, Note):
            raise RecordError(f"note: expected a Note, got {type(note).__name__}")
        body = note.text if text is None else m.text(text, "note passage text")
        pid = self._check_id(hit)
        what = f"passage {pid} (note {note.answer_id})"
        loc = locate(note.text, body, what=what, normalizer_version=self._version())
        return self._add(
            pid,
            hit,
            text=body,
            collection=note.collection,
            source=SourceRef(note.system, f"notes/{note.answer_id}", "1"),
            document=DocumentRef(
                f"memory-note/{note.answer_id}",
                "1",
                uri=f"{note.backend}://{note.system}/notes/{note.answer_id}",
                backend=note.backend,
            ),
            chunk_id=f"{note.answer_id}:0",
            chunker=Chunker(NOTE_CHUNKER),
            locator=loc,
            derived_from=note.answer_id,
        )
