"""What the LangChain and LlamaIndex adapters share; imports neither framework.

No framework knows which source revision a chunk was cut from, so every adapter takes a
`resolve` hook: given a retrieved document's metadata it returns a `Resolution` (the
`SourceRevision`, and the chunk id and chunker when the pipeline has its own). The
adapter records every document's text as retrieved (none is ever left out), and as
model input the span of the prompt that carried it, found by `find_model_input` (the
framework's metadata-header form or the bare text verbatim, else re-wrapped, else cut
down) and accepted by `AnswerRecord.model_input`'s own rule.

A recording that fails (a document not in its revision, a passage never sent, a
`resolve` that raises) writes nothing for that answer. What happens next is the
adapter's `on_error` policy: `"raise"` (the default) brings the error to the pipeline
(the LangChain chain call raises; LlamaIndex, which swallows handler errors, keeps it
for `check()`); `"skip"` never does, and the answer goes through unrecorded. Every
failure is logged at ERROR on the `tracer.producer` logger (except one the chain call
raised) and kept in the handler's bounded `failures` list, so none is silent.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal

from store.words import ModelInput
from tracer.producer.errors import ModelInputError, RecordError
from tracer.producer.model import Chunker, SourceRevision
from tracer.producer.recorder import AnswerRecord, Passage, Written, find_model_input

__all__ = [
    "KEEP",
    "Failures",
    "OnError",
    "Resolution",
    "Resolver",
    "Retrieved",
    "Run",
    "UnsentPolicy",
    "cite_all_sent",
    "log",
    "unsent_policy",
]

#: how a pipeline spells its policy (`unsent="not_sent"`); held as an `UnsentPolicy`
Unsent = Literal["error", "not_sent", "rewritten"]


class UnsentPolicy(StrEnum):
    """What a run does with a retrieved passage found in no prompt: refuse to write the
    answer, or sign the passage with the model-input state of the same name."""

    ERROR = "error"
    NOT_SENT = ModelInput.NOT_SENT.value
    REWRITTEN = ModelInput.REWRITTEN.value


OnError = Literal["raise", "skip"]
#: how many written answers and failures a handler keeps (a server runs for months)
KEEP = 1000
#: where the adapters report every answer they failed to record
log = logging.getLogger("tracer.producer")


def on_error_policy(value: object) -> OnError:
    if value == "raise":
        return "raise"
    if value == "skip":
        return "skip"
    raise RecordError(f"on_error: expected 'raise' or 'skip', got {value!r}")


class Failures:
    """The failures of one handler: logged, kept (the latest `KEEP`), raised by `check`.

    `pending` are the ones the pipeline has not been told of yet: `check()` raises them
    (the one failure itself, or an `ExceptionGroup` of all when several runs failed
    since the last check) and forgets them.
    """

    def __init__(self, keep: int = KEEP) -> None:
        self.keep = keep
        self.all: list[BaseException] = []
        self._pending: list[Exception] = []
        self._lock = threading.Lock()

    def add(self, exc: Exception, answer_id: str | None, *, pending: bool, logged: bool = True) -> None:
        if logged:
            log.error(
                "tracer: answer %s was not recorded: %s: %s",
                answer_id or "(not started)",
                type(exc).__name__,
                exc,
                exc_info=exc,
            )
        with self._lock:
            self.all.append(exc)
            del self.all[: -self.keep]
            if pending:
                self._pending.append(exc)
                del self._pending[: -self.keep]

    def check(self) -> None:
        with self._lock:
            pending, self._pending = self._pending, []
        if len(pending) == 1:
            raise pending[0]
        if pending:
            raise ExceptionGroup(f"{len(pending)} answers were not recorded", pending)


def keep_written(written: list[Written], new: Written, lock: threading.Lock, keep: int = KEEP) -> None:
    with lock:
        written.append(new)
        del written[:-keep]


@dataclass(frozen=True, slots=True)
class Resolution:
    """What the pipeline knows about a retrieved document that the framework does not.

    `revision` is the imported revision the chunk was cut from (required). The rest is
    optional: `chunk_id` (default: the framework's own id of the chunk, a LlamaIndex
    node id or a LangChain document id; without one, the reference chunk's
    `<document_id>#<n>`); `chunker`, the splitter that cut it (default: the reference
    chunker when the text is that chunk, else `unspecified`); `score`, when the
    retriever gave none; `occurrence`, which occurrence of a repeated text it is (else
    the splitter's start offset decides, else it must occur once); `collection`, when
    the passage's access collection is not the revision's.
    """

    revision: SourceRevision
    chunk_id: str | None = None
    chunker: Chunker | None = None
    score: float | int | None = None
    occurrence: int | None = None
    collection: str | None = None


Resolver = Callable[[Mapping[str, Any]], Resolution]
Citer = Callable[[AnswerRecord], None]


@dataclass(frozen=True, slots=True)
class Retrieved:
    """One document as a framework's retriever returned it."""

    text: str
    metadata: Mapping[str, Any]
    score: float | int | None
    #: the forms in which the framework may have put it into a prompt, preferred first
    sent_forms: tuple[str, ...]
    #: where the chunk starts in the raw revision text, if the splitter said
    near: int | None = None
    #: the framework's own id of the chunk (a LlamaIndex node id, a LangChain document
    #: id): the chunk id recorded when `resolve` gives none
    chunk_id: str | None = None


def cite_all_sent(record: AnswerRecord) -> None:
    """The default citation: the whole answer rests on every passage the model was sent
    (never on one marked `not_sent`).

    A framework does not say which sentence came from which passage; a pipeline that
    knows (citation markers, an attribution step) passes its own `cite` hook.
    """
    answer = record.answer_text
    sent = record.sent_passages
    if answer and sent:
        record.cite(0, len(answer), *sent)


class Run:
    """One answer being recorded from framework callbacks.

    Every retrieved passage is recorded; none is ever left out. A passage's model input
    is the text of a prompt that carried it, found by `find_model_input` (verbatim, in a
    framework's own form, re-wrapped, or cut down) by `derivable`'s rule, the one
    `AnswerRecord.model_input` and `sent` apply. A passage found in no prompt is an error
    (`unsent="error"`, the default); with `unsent="not_sent"` it is signed as retrieved
    and not sent (a reranker or a context budget left it out); with `unsent="rewritten"`
    (a pipeline that transforms passages before sending them) it is signed as
    `rewritten`, its model input the prompt message that shares most of its words.
    """

    def __init__(self, record: AnswerRecord, resolve: Resolver, unsent: Unsent | UnsentPolicy) -> None:
        self.record = record
        self.resolve = resolve
        self.unsent = unsent_policy(unsent)
        self.answer_candidate: str | None = None
        self._forms: dict[str, tuple[str, ...]] = {}
        self._prompts: list[tuple[str, ...]] = []

    def retrieved(self, docs: Sequence[Retrieved], query: str) -> None:
        for rank, doc in enumerate(docs, start=1):
            res = self.resolve(doc.metadata)
            if not isinstance(res, Resolution):
                raise RecordError(f"resolve() returned {type(res).__name__}, expected a Resolution")
            score = res.score if res.score is not None else doc.score
            if score is None:
                raise RecordError(
                    f"document {rank} of the retrieval has no score: return one from resolve() "
                    "(Resolution.score) or put it in the document's metadata"
                )
            passage = self.record.retrieved(
                doc.text,
                res.revision,
                rank=rank,
                score=score,
                query=query,
                chunk_id=res.chunk_id or doc.chunk_id,
                chunker=res.chunker,
                collection=res.collection,
                occurrence=res.occurrence,
                near=None if res.occurrence is not None else doc.near,
            )
            self._forms[passage.passage_id] = doc.sent_forms

    def prompt(self, parts: Sequence[str]) -> None:
        """A prompt went to the model: each passage found in it gets its model input."""
        parts = tuple(parts)
        self._prompts.append(parts)
        for p in self.record.passages:
            if self.record.has_model_input(p):
                continue
            sent = find_model_input(parts, p.text, self._forms.get(p.passage_id, ()))
            if sent is not None:
                self.record.model_input(p, sent, prompt=parts)

    def finish(self, answer: str, cite: Citer) -> Written:
        unsent = [p for p in self.record.passages if not self.record.has_model_input(p)]
        if unsent and (
            self.unsent == UnsentPolicy.ERROR or (self.unsent == UnsentPolicy.REWRITTEN and not self._prompts)
        ):
            raise _unsent_error(unsent)
        self._record_unsent(unsent)
        self.record.answer(answer)
        cite(self.record)
        return self.record.close()

    def _record_unsent(self, unsent: list[Passage]) -> None:
        """Passages found in no prompt, by the policy: signed as not sent (under every
        prompt), or as rewritten into the prompt message closest to them."""
        everything = tuple(part for parts in self._prompts for part in parts)
        for p in unsent:
            if self.unsent == UnsentPolicy.NOT_SENT:
                self.record.not_sent(p, prompt=everything)
                continue
            part = _closest_part(self._prompts, p.text)
            self.record.model_input(p, part, prompt=(part,), rewritten=True)


def _unsent_error(unsent: list[Passage]) -> ModelInputError:
    return ModelInputError(
        f"passage(s) {', '.join(p.passage_id for p in unsent)} were retrieved but occur in no "
        "prompt sent to the model, not even re-wrapped or cut down to half; nothing was "
        "written. If the pipeline leaves retrieved passages out of the prompt (a reranker, "
        "a context budget), pass unsent='not_sent': they are signed as retrieved and not "
        "sent. If it transforms passages before sending them (escaping, compression, "
        "translation), pass unsent='rewritten'"
    )


def unsent_policy(value: object) -> UnsentPolicy:
    for policy in UnsentPolicy:  # compared as the words were, in the same order
        if value == policy.value:
            return policy
    if value == "omit":
        raise RecordError(
            "unsent='omit' was removed: it signed answers without the passages they retrieved. "
            "Every retrieved passage is recorded; use unsent='not_sent' to sign the ones the model "
            "was not given as not sent, 'error' (the default) or 'rewritten'"
        )
    raise RecordError(f"unsent: expected 'error', 'not_sent' or 'rewritten', got {value!r}")


def _closest_part(prompts: Sequence[Sequence[str]], text: str) -> str:
    """The non-empty prompt message sharing the most distinct words with `text` (the first
    of equals): what a transformed passage's model input is recorded as."""
    words = set(text.split())
    parts = [part for parts in prompts for part in parts if part]
    if not parts:
        raise ModelInputError("no prompt with any text was sent to the model")
    return max(parts, key=lambda part: len(words & set(part.split())))
