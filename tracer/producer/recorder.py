"""The recorder a pipeline calls as it runs; on close it signs and writes one ingest file.

    recorder = Recorder(Signer.from_key_file("producer.key"), "outbox", producer, runtime)
    with recorder.start(question, authorization, "support") as rec:
        p = rec.retrieved(chunk_text, revision, rank=1, score=0.82, query=question)
        rec.sent(prompt)                      # each passage's text, as found in the prompt
        rec.answer(answer_text)
        rec.cite_text("within thirty days", p)
    # -> outbox/answer-<id>-<12 hex>.json, signed, ready for `tracer ingest-outbox`

The SDK never signs what it did not see: every digest in the manifest is computed here
from the text passed in (there is no parameter that takes a digest), every locator is
computed from the revision text by the engine's own chunker, the reference chunker is
claimed only for its own chunk, and a model-input text is accepted only as an exact
substring of the prompt it was sent in that also carries the retrieved text (see
`AnswerRecord.model_input`). A mistake raises at the call that made it; nothing is
written until `close`, and a record left by an exception is discarded, never written
half-done.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

from store.words import ModelInput
from tracer.producer import model as m
from tracer.producer.chunkclaim import UNSPECIFIED_CHUNKER
from tracer.producer.citations import Citation, check_range, quoted_range
from tracer.producer.draft import Draft, Kind
from tracer.producer.errors import CitationError, ModelInputError, ProducerError, RecordError
from tracer.producer.locate import DEFAULT_NORMALIZER, normalizer
from tracer.producer.model import Authorization, Chunker, Producer, Runtime, SourceRevision
from tracer.producer.modelinput import MIN_CUT_SHARE, ModelInputs, derivable, find_model_input
from tracer.producer.outbox import Outbox, file_stem
from tracer.producer.passages import Note, Passage, Passages, Retrieval
from tracer.producer.signer import Signer

__all__ = [
    "MIN_CUT_SHARE",
    "UNSPECIFIED_CHUNKER",
    "AnswerRecord",
    "Note",
    "Passage",
    "Recorder",
    "Written",
    "derivable",
    "find_model_input",
]

Clock = Callable[[], datetime]


def _utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class Written:
    """What `close` wrote: the ingest file and the facts a later note citation needs."""

    answer_id: str
    kind: Kind
    path: Path
    collection: str
    answer: str = field(repr=False)
    answer_sha256: str

    def as_note(self, system: str, backend: str = "assistant-memory") -> Note:
        return Note(self.answer_id, self.answer, self.collection, system, backend)


class Recorder:
    """Holds the signer, the outbox and the producer's fixed facts; starts records.

    One recorder serves a whole process and may be shared between threads; each record
    belongs to the one run that started it.
    """

    def __init__(
        self,
        signer: Signer,
        outbox: Outbox | str | os.PathLike[str],
        producer: Producer,
        runtime: Runtime,
        *,
        clock: Clock = _utc_now,
        normalizer_version: str = DEFAULT_NORMALIZER,
    ) -> None:
        """`normalizer_version` is the normalizer every locator is computed and signed
        under: `tracer-norm/2` (the default; Markdown-only edits of a source are no
        change) or `tracer-norm/1`."""
        if not isinstance(signer, Signer):
            raise TypeError("Recorder needs a tracer.producer.Signer")
        try:
            self.normalizer_version = normalizer(normalizer_version).version
        except ProducerError as exc:
            raise RecordError(f"normalizer_version: {exc}") from exc
        self.signer = signer
        self.outbox = outbox if isinstance(outbox, Outbox) else Outbox(outbox)
        self.producer = producer
        self.runtime = runtime
        self.clock = clock

    def __repr__(self) -> str:
        return f"Recorder({self.signer!r}, {self.outbox!r}, {self.producer.system!r})"

    def start(
        self,
        question: str,
        authorization: Authorization,
        collection: str,
        *,
        answer_id: str | None = None,
        run_id: str | None = None,
        kind: Kind = "answer",
        runtime: Runtime | None = None,
    ) -> AnswerRecord:
        """Begin the record of one answer (or, with `kind="note"`, of a derived note)."""
        return self._open(question, authorization, collection, answer_id, run_id, kind, runtime)

    def start_without_question(
        self,
        authorization: Authorization,
        collection: str,
        *,
        answer_id: str | None = None,
        run_id: str | None = None,
        kind: Kind = "answer",
        runtime: Runtime | None = None,
    ) -> AnswerRecord:
        """Begin a record whose question is not known yet; `set_question` before `close`.

        For a framework that says what was asked only after the run (a streamed
        LangChain run, whose input arrives with its end; a chat engine, whose message
        is seen after the retrieval): every other call still fails where it is made.
        """
        return self._open(None, authorization, collection, answer_id, run_id, kind, runtime)

    def _open(
        self,
        question: str | None,
        authorization: Authorization,
        collection: str,
        answer_id: str | None,
        run_id: str | None,
        kind: Kind,
        runtime: Runtime | None,
    ) -> AnswerRecord:
        return AnswerRecord(
            self,
            question=question,
            authorization=authorization,
            collection=collection,
            answer_id=answer_id,
            run_id=run_id,
            kind=kind,
            runtime=runtime or self.runtime,
        )

    def write_revision(self, revision: SourceRevision) -> Path:
        """The revision's `tracer.source_revision/v1` file in the outbox, written once.

        Calling it again for the same revision (every pipeline start) writes nothing: the
        file waiting in the outbox, or already moved to `ingested/`, is the one returned.
        The same revision id with other content (or other metadata) raises `RecordError`:
        a revision id names one text, so a changed document needs a new revision id.
        """
        stem = file_stem(revision.document_id, revision.revision)
        return self.outbox.write_once(f"revision-{stem}", revision.to_input())

    def flush(self) -> list[Path]:
        """With a batching outbox (`Outbox(dir, batch=N)`): make the answers written so
        far durable and visible to ingest now; returns their paths. A no-op otherwise."""
        return self.outbox.flush()

    def now(self) -> str:
        return m.timestamp(self.clock(), "clock")


class AnswerRecord:
    """The facts of one answer, collected as the pipeline runs (see the module docstring)."""

    def __init__(
        self,
        recorder: Recorder,
        *,
        question: str | None,
        authorization: Authorization,
        collection: str,
        answer_id: str | None,
        run_id: str | None,
        kind: Kind,
        runtime: Runtime,
    ) -> None:
        if kind not in ("answer", "note"):
            raise RecordError(f"kind: expected 'answer' or 'note', got {kind!r}")
        if not isinstance(authorization, Authorization):
            raise RecordError("authorization: expected a tracer.producer.Authorization")
        self._recorder = recorder
        self._question = None if question is None else m.text(question, "question")
        self.authorization = authorization
        self.collection = m.name(collection, "collection")
        self.answer_id = m.name(answer_id or f"ans-{uuid.uuid4().hex}", "answer_id")
        if answer_id is not None:  # a generated id is fresh; a given one may be reused
            recorder.outbox.check_answer_id(self.answer_id)
        self.run_id = m.name(run_id or f"run-{self.answer_id}", "run_id")
        self.kind: Kind = kind
        self.runtime = runtime
        self._passages = Passages(id(self), lambda: recorder.normalizer_version, recorder.now)
        self._inputs = ModelInputs()
        self._answer: str | None = None
        self._citations: list[Citation] = []
        self._lineage: list[str] = []
        self._closed = False

    # -- context manager: close on success, discard on error ----------------------------

    def __enter__(self) -> AnswerRecord:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if exc_type is None:
            if not self._closed:
                self.close()
        else:
            self.discard()

    def _open(self) -> None:
        if self._closed:
            raise RecordError(f"record {self.answer_id!r} is already closed")

    @property
    def question(self) -> str | None:
        """The question; None only for a record begun by `start_without_question`, until set."""
        return self._question

    def set_question(self, question: str) -> None:
        """The question of a record begun by `start_without_question`; once."""
        self._open()
        if self._question is not None:
            raise RecordError(f"record {self.answer_id!r}: the question is already set")
        self._question = m.text(question, "question")

    @property
    def passages(self) -> tuple[Passage, ...]:
        return tuple(self._passages)

    @property
    def answer_text(self) -> str | None:
        return self._answer

    def has_model_input(self, passage: Passage) -> bool:
        return self._inputs.given(passage.passage_id)

    def model_input_state(self, passage: Passage) -> ModelInput | None:
        """What is recorded of `passage`'s model input: `sent`, `rewritten`, `not_sent`,
        or None while nothing is (the words `tracer.manifest/v2` signs)."""
        return self._inputs.state(passage.passage_id)

    @property
    def sent_passages(self) -> tuple[Passage, ...]:
        """The passages the model was given (sent or rewritten): what a citation may name."""
        return tuple(p for p in self._passages if self._inputs.given(p.passage_id))

    # -- passages -----------------------------------------------------------------------

    def _time(self, value: datetime | str | None, what: str) -> str:
        return self._recorder.now() if value is None else m.timestamp(value, what)

    def retrieved(
        self,
        text: str,
        revision: SourceRevision | None,
        *,
        rank: int,
        score: float | int,
        query: str,
        chunk_id: str | None = None,
        chunker: Chunker | None = None,
        retrieved_at: datetime | str | None = None,
        passage_id: str | None = None,
        collection: str | None = None,
        occurrence: int | None = None,
        near: int | None = None,
    ) -> Passage:
        """A passage exactly as the retriever returned it, cut from `revision`.

        The locator is computed from `revision.content`; `occurrence`/`near` choose
        between repeated occurrences (see `locate`). `chunk_id` may be left out only for
        a chunk of the reference chunker, which is then named `<document_id>#<n>`. The
        chunker `tracer-para-chunker/1` (the default) is signed only when the text is the
        reference chunk at its locator; a pipeline's own `chunk_id` for any other text,
        with `chunker` left out, is signed with the chunker `unspecified`.
        """
        self._open()
        return self._passages.from_revision(
            text,
            revision,
            Retrieval(rank, score, query, retrieved_at, passage_id),
            chunk_id=chunk_id,
            chunker=chunker,
            collection=collection,
            occurrence=occurrence,
            near=near,
        )

    def retrieved_note(
        self,
        note: Note,
        *,
        rank: int,
        score: float | int,
        query: str,
        text: str | None = None,
        retrieved_at: datetime | str | None = None,
        passage_id: str | None = None,
    ) -> Passage:
        """A passage whose text is a recorded note's text (or part of it); adds the lineage."""
        self._open()
        passage = self._passages.from_note(
            note, Retrieval(rank, score, query, retrieved_at, passage_id), text
        )
        self.derived_from(note.answer_id)
        return passage

    def _own(self, passage: object) -> Passage:
        return self._passages.own(passage, self.answer_id)

    def drop(self, passage: Passage) -> None:
        """Removed: a retrieval that happened is evidence. Use `not_sent`."""
        raise RecordError(
            f"drop() was removed: it signed answers without passage {getattr(passage, 'passage_id', '?')} "
            "they retrieved. Mark a passage the model was not given with not_sent(passage, prompt=...)"
        )

    def not_sent(self, passage: Passage, *, prompt: str | Sequence[str]) -> None:
        """`passage` was retrieved but the model was not given it (a reranker kept others,
        the context was full): signed as `not_sent`, with no model input, never as if sent.

        `prompt` is everything the model was sent (a string, or the texts of the chat
        messages of every model call): refused when any part of it carries the passage by
        `derivable`'s rule (verbatim, re-wrapped or cut down), so the mark cannot hide
        text the model saw. A passage already given a model input, or cited, is refused.
        """
        self._open()
        cited = any(self._own(passage).passage_id in c.passage_ids for c in self._citations)
        self._inputs.not_sent(passage, prompt, cited)

    # -- what the model saw -------------------------------------------------------------

    def model_input(
        self, passage: Passage, text: str, *, prompt: str | Sequence[str], rewritten: bool = False
    ) -> None:
        """The exact text of `passage` as it went into the model, inside `prompt`.

        `prompt` is what was sent (a string, or the contents of the chat messages);
        `text` must occur in it exactly, character for character. `text` must also be
        derivable from the retrieved text: once both are in NFC with every run of
        whitespace folded to one space, it contains the retrieved text (a label or
        metadata header around it, a re-wrap) or is part of it (a passage cut to fit the
        context). A pipeline that transforms passages before sending them (escaping,
        compression, translation) says so with `rewritten=True`: the text is then still
        checked against the prompt, not against the retrieved text.
        """
        self._open()
        self._own(passage)
        m.text(text, f"model input of passage {passage.passage_id}")
        self._inputs.record(passage, text, prompt, rewritten)

    def sent(self, prompt: str | Sequence[str], passages: Iterable[Passage] | None = None) -> None:
        """Record, for each passage still without one, the span of `prompt` that carried it.

        Found by `find_model_input` and accepted by `derivable`, the rule `model_input`
        applies and the adapters use: the retrieved text verbatim, re-wrapped, or cut down
        (keeping at least `MIN_CUT_SHARE`). If a passage is in no part (the pipeline
        rewrote it, or never sent it), nothing is recorded and the error names it: use
        `model_input(..., rewritten=True)` with the text as sent, or `not_sent`.
        """
        self._open()
        todo = [
            self._own(p) for p in self._inputs.unrecorded(self._passages if passages is None else passages)
        ]
        self._inputs.sent(prompt, todo)

    # -- the answer and its citations ---------------------------------------------------

    def answer(self, text: str) -> None:
        """The answer (or note) text exactly as stored and shown to the user."""
        self._open()
        if self._answer is not None:
            raise RecordError(f"record {self.answer_id!r}: the answer is already set")
        self._answer = m.string(text, "answer")

    def cite(self, start: int, end: int, *passages: Passage) -> None:
        """Answer characters `[start, end)` (code points, as Python counts) rest on `passages`."""
        self._open()
        if self._answer is None:
            raise CitationError("cite before answer(): the citation range has nothing to refer to")
        check_range(start, end, len(self._answer))
        if not passages:
            raise CitationError("a citation needs at least one passage")
        ids = tuple(self._own(p).passage_id for p in passages)
        unsent = [pid for pid in ids if self._inputs.unsent(pid)]
        if unsent:
            raise CitationError(
                f"passage(s) {', '.join(unsent)} are marked not_sent: the model never saw them, so no "
                "part of the answer can rest on them"
            )
        self._citations.append(Citation(start, end, ids))

    def cite_text(self, quoted: str, *passages: Passage, occurrence: int | None = None) -> tuple[int, int]:
        """Cite the part of the answer that reads exactly `quoted`; returns its range."""
        self._open()
        if self._answer is None:
            raise CitationError("cite_text before answer()")
        start, end = quoted_range(self._answer, quoted, occurrence)
        self.cite(start, end, *passages)
        return start, end

    def derived_from(self, *answer_ids: str) -> None:
        """Lineage: earlier answers or notes this text was derived from."""
        self._open()
        for aid in answer_ids:
            m.name(aid, "lineage")
            if aid not in self._lineage:
                self._lineage.append(aid)

    # -- close --------------------------------------------------------------------------

    def discard(self) -> None:
        """Drop the record: nothing is written."""
        self._closed = True

    def close(self, *, generated_at: datetime | str | None = None) -> Written:
        """Compute the digests, sign the manifest and write it to the outbox, atomically."""
        self._open()
        if self._answer is None:
            raise RecordError(f"record {self.answer_id!r}: close before answer()")
        if self._question is None:
            raise RecordError(f"record {self.answer_id!r}: close before set_question()")
        missing = [p.passage_id for p in self._inputs.unrecorded(self._passages)]
        if missing:
            raise ModelInputError(
                f"passage(s) {', '.join(missing)}: no model input recorded; call sent(prompt) or "
                "model_input(...) with what the model was given, or not_sent(passage, prompt=...) "
                "for a passage it was not given"
            )
        draft = self._draft(self._time(generated_at, "generated_at"))
        signed = self._recorder.signer.sign_draft(draft, consume=True)
        path = self._recorder.outbox.write(f"{self.kind}-{file_stem(self.answer_id)}", signed)
        self._closed = True
        return Written(
            self.answer_id, self.kind, path, self.collection, self._answer, m.text_sha256(self._answer)
        )

    def _draft(self, generated_at: str) -> dict[str, Any]:
        return Draft(
            kind=self.kind,
            run_id=self.run_id,
            answer_id=self.answer_id,
            generated_at=generated_at,
            producer=self._recorder.producer,
            runtime=self.runtime,
            authorization=self.authorization,
            collection=self.collection,
            question=self._question,
            answer=self._answer if self._answer is not None else "",
            passages=tuple(self._passages),
            inputs=self._inputs,
            citations=tuple(self._citations),
            lineage=tuple(self._lineage),
        ).to_json()
