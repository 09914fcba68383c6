"""LlamaIndex adapter: an instrumentation event handler that records each answer.

    handler = TracerEventHandler.create(recorder, resolve, authorization=auth, collection="support")
    get_dispatcher().add_event_handler(handler)
    response = query_engine.query(question)
    handler.check()

A **query engine** run is one answer: the outermost `QueryStartEvent` opens the record
(the question is the query string), the outermost `RetrievalEndEvent` carries the real
`NodeWithScore`s, `LLMChatStartEvent` or `LLMCompletionStartEvent` the exact prompt, and
the outermost `QueryEndEvent` the response. A **chat engine** that retrieves and then
synthesizes (`condense_plus_context`, `context`) sends no query events: its retrieval
opens the record, the synthesis start gives the user's message as the question and the
synthesis end the answer (`condense_question` runs a query engine, whose condensed
question is then the one recorded). A **streamed** response (`streaming=True`,
`stream_chat`) is not an answer until it has been read: the record is finished when the
LLM's stream ends, with the text it streamed. An answer is recorded in the context
(thread, task) that started it; a stream may be read in another.

The model-input text of a node is the form LlamaIndex put in the prompt
(`get_content(MetadataMode.LLM)`, its metadata header included) or else its bare text,
whichever occurs exactly in the prompt. The chunk id is `Resolution.chunk_id` or else
the node id.

LlamaIndex's dispatcher swallows every exception a handler raises, so an SDK error
cannot stop the query the way it stops a LangChain chain: the run is discarded (nothing
is written), the error is logged at ERROR on the `tracer.producer` logger and kept in
`failures`, and `check()` raises it (with `on_error="raise"`, the default). Call
`check()` after every query. Needs `tracer-evidence-sdk[llamaindex]`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any, Literal

from llama_index.core.base.response.schema import AsyncStreamingResponse, StreamingResponse
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.events import BaseEvent
from llama_index.core.instrumentation.events.llm import (
    LLMChatEndEvent,
    LLMChatInProgressEvent,
    LLMChatStartEvent,
    LLMCompletionEndEvent,
    LLMCompletionInProgressEvent,
    LLMCompletionStartEvent,
)
from llama_index.core.instrumentation.events.query import QueryEndEvent, QueryStartEvent
from llama_index.core.instrumentation.events.retrieval import RetrievalEndEvent, RetrievalStartEvent
from llama_index.core.instrumentation.events.span import SpanDropEvent  # type: ignore[attr-defined]
from llama_index.core.instrumentation.events.synthesis import SynthesizeEndEvent, SynthesizeStartEvent
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle
from pydantic import PrivateAttr

from tracer.producer.adapters import (
    Citer,
    Failures,
    OnError,
    Resolver,
    Retrieved,
    Run,
    Unsent,
    UnsentPolicy,
    cite_all_sent,
    keep_written,
    on_error_policy,
    unsent_policy,
)
from tracer.producer.errors import RecordError
from tracer.producer.model import Authorization
from tracer.producer.recorder import Recorder, Written

__all__ = ["TracerEventHandler"]

State = Literal["open", "streaming", "done"]


def _query_text(query: str | QueryBundle) -> str:
    return query if isinstance(query, str) else query.query_str


def _retrieved(n: NodeWithScore) -> Retrieved:
    node = n.node
    return Retrieved(
        text=node.get_content(metadata_mode=MetadataMode.NONE),
        metadata=dict(node.metadata),
        score=n.score,
        sent_forms=(node.get_content(metadata_mode=MetadataMode.LLM),),
        near=getattr(node, "start_char_idx", None),
        chunk_id=node.node_id or None,
    )


def _streaming(response: Any) -> bool:
    """A response whose text exists only once its stream has been read."""
    return isinstance(response, StreamingResponse | AsyncStreamingResponse) and response.response_txt is None


def _response_text(response: Any) -> str:
    text = getattr(response, "response", None)
    return text if isinstance(text, str) else str(response)


class _Active:
    """The answer being recorded in this context.

    Shared by reference with the contexts copied from this one (LlamaIndex reads a
    streamed chat response in a thread of its own), so whatever ends it, `state` says so
    everywhere.
    """

    def __init__(self, run: Run, *, implicit: bool, span_id: str | None) -> None:
        self.run = run
        #: opened by a retrieval (a chat engine), not by a query
        self.implicit = implicit
        #: the span whose failure (`SpanDropEvent`) means the run raised: no answer
        self.span_id = span_id
        #: nested queries (a query engine's) or syntheses (a chat engine's) still open
        self.depth = 0 if implicit else 1
        self.state: State = "open"
        self.failed = False
        #: a stream being read: what each LLM span streamed so far
        self.deltas: dict[str | None, list[str]] = {}

    @property
    def answer_id(self) -> str:
        return self.run.record.answer_id


class TracerEventHandler(BaseEventHandler):
    """Records every outermost query (or chat turn) it sees as one signed manifest."""

    _recorder: Recorder = PrivateAttr()
    _resolve: Resolver = PrivateAttr()
    _authorization: Authorization | Callable[[], Authorization] = PrivateAttr()
    _collection: str = PrivateAttr()
    _cite: Citer = PrivateAttr()
    _unsent: UnsentPolicy = PrivateAttr()
    _on_error: OnError = PrivateAttr()
    _active: ContextVar[_Active | None] = PrivateAttr()
    _retrieval: ContextVar[str | None] = PrivateAttr()
    _failures: Failures = PrivateAttr()
    _lock: Any = PrivateAttr()
    #: what each finished answer wrote, in order (the latest `adapters.KEEP`)
    written: list[Written] = []  # noqa: RUF012 - pydantic copies field defaults per instance

    @classmethod
    def class_name(cls) -> str:
        return "TracerEventHandler"

    @classmethod
    def create(
        cls,
        recorder: Recorder,
        resolve: Resolver,
        *,
        authorization: Authorization | Callable[[], Authorization],
        collection: str,
        cite: Citer = cite_all_sent,
        unsent: Unsent = "error",
        on_error: OnError = "raise",
    ) -> TracerEventHandler:
        """`authorization` is fixed, or a function called at the start of each answer;
        `on_error="raise"` makes `check()` raise a failed recording, `"skip"` only logs
        and keeps it."""
        handler = cls()
        handler._recorder = recorder
        handler._resolve = resolve
        handler._authorization = authorization
        handler._collection = collection
        handler._cite = cite
        handler._unsent = unsent_policy(unsent)
        handler._on_error = on_error_policy(on_error)
        handler._active = ContextVar(f"tracer-llamaindex-{id(handler)}", default=None)
        handler._retrieval = ContextVar(f"tracer-llamaindex-retrieval-{id(handler)}", default=None)
        handler._failures = Failures()
        handler._lock = threading.Lock()
        return handler

    @property
    def failures(self) -> list[BaseException]:
        """Every recording failure (the latest `adapters.KEEP`), oldest first; each was
        also logged at ERROR on the `tracer.producer` logger."""
        return self._failures.all

    def check(self) -> None:
        """Raise the recording failures not raised yet, and forget them: the one failure,
        or an `ExceptionGroup` when several answers failed since the last call.

        Call it after every query: LlamaIndex returns the response either way, and
        without `check()` (or the log) a failed recording goes unnoticed. Failures are
        shared by every thread using this handler; each names its answer id. With
        `on_error="skip"` it never raises."""
        self._failures.check()

    def _auth(self) -> Authorization:
        auth = self._authorization
        return auth if isinstance(auth, Authorization) else auth()

    def _live(self) -> _Active | None:
        active = self._active.get()
        return None if active is None or active.state == "done" else active

    # -- events ---------------------------------------------------------------------------

    def handle(self, event: BaseEvent, **kwargs: Any) -> None:
        active = self._live()
        try:
            self._dispatch(event, active)
        except Exception as exc:  # LlamaIndex would swallow it: log it, keep it for check()
            self._fail(self._live() or active, exc)

    def _fail(self, active: _Active | None, exc: Exception) -> None:
        if active is not None:
            active.failed = True
            active.run.record.discard()
            if active.state == "streaming" or active.depth <= 0:
                active.state = "done"
        self._failures.add(exc, active.answer_id if active else None, pending=self._on_error == "raise")

    def _dispatch(self, event: BaseEvent, active: _Active | None) -> None:
        if isinstance(event, QueryStartEvent):
            self._query_start(event, active)
        elif isinstance(event, SpanDropEvent):
            self._span_drop(event, active)
        elif isinstance(event, RetrievalStartEvent):
            if self._retrieval.get() is None:
                self._retrieval.set(event.span_id)
        elif isinstance(event, RetrievalEndEvent):
            if event.span_id == self._retrieval.get():  # the outermost retriever's nodes
                self._retrieval.set(None)
                self._retrieval_end(event, active)
        elif active is not None and not self._answer_event(event, active) and not active.failed:
            self._model_event(event, active)

    def _answer_event(self, event: BaseEvent, active: _Active) -> bool:
        """An answer's start or end (an explicit query's, or a chat turn's synthesis);
        False for any other event."""
        if isinstance(event, QueryEndEvent):
            if not active.implicit:
                active.depth -= 1
                if active.depth == 0:
                    self._end(active, event.response)
        elif isinstance(event, SynthesizeStartEvent):
            if active.implicit:
                self._synthesis_start(event, active)
        elif isinstance(event, SynthesizeEndEvent):
            if active.implicit and active.depth > 0:
                active.depth -= 1
                if active.depth == 0:
                    self._end(active, event.response)
        else:
            return False
        return True

    def _synthesis_start(self, event: SynthesizeStartEvent, active: _Active) -> None:
        """A chat turn's outermost synthesis starts the answer; its query is the question."""
        active.depth += 1
        if active.depth == 1 and not active.failed:
            active.span_id = event.span_id
            if active.run.record.question is None:
                active.run.record.set_question(_query_text(event.query))

    def _model_event(self, event: BaseEvent, active: _Active) -> None:
        """What the model was sent, and a streamed answer's pieces."""
        if isinstance(event, LLMChatStartEvent):
            active.run.prompt([m.content for m in event.messages if isinstance(m.content, str)])
        elif isinstance(event, LLMCompletionStartEvent):
            active.run.prompt([event.prompt])
        elif isinstance(event, LLMChatInProgressEvent | LLMCompletionInProgressEvent):
            if active.state == "streaming":
                active.deltas.setdefault(event.span_id, []).append(event.response.delta or "")
        elif isinstance(event, LLMChatEndEvent | LLMCompletionEndEvent):
            if active.state == "streaming":
                self._stream_end(event, active)

    def _query_start(self, event: QueryStartEvent, active: _Active | None) -> None:
        if active is not None and not active.implicit and active.state == "open":
            active.depth += 1  # a sub-query of the answer being recorded
            return
        if active is not None:
            self._abandon(active)
        record = self._recorder.start(_query_text(event.query), self._auth(), self._collection)
        self._active.set(
            _Active(Run(record, self._resolve, self._unsent), implicit=False, span_id=event.span_id)
        )

    def _retrieval_end(self, event: RetrievalEndEvent, active: _Active | None) -> None:
        if active is not None and (active.state == "streaming" or (active.implicit and active.depth == 0)):
            # an unread stream, or a retrieval never synthesized (a retriever used on its own)
            self._abandon(active)
            active = None
        if active is None:  # a chat engine's turn: the question comes with its synthesis
            record = self._recorder.start_without_question(self._auth(), self._collection)
            active = _Active(Run(record, self._resolve, self._unsent), implicit=True, span_id=None)
            self._active.set(active)
        if active.failed or active.state != "open":
            return
        query = _query_text(event.str_or_query_bundle)
        active.run.retrieved([_retrieved(n) for n in event.nodes], query)

    def _span_drop(self, event: SpanDropEvent, active: _Active | None) -> None:
        if event.span_id == self._retrieval.get():
            self._retrieval.set(None)
        if active is not None and event.span_id == active.span_id:
            active.run.record.discard()  # the query raised: the caller has its error, no answer
            active.state = "done"

    def _abandon(self, active: _Active) -> None:
        """A run that will never end in this context: discarded, and said so if it was an answer."""
        active.run.record.discard()
        was = active.state
        active.state = "done"
        if was == "streaming" and not active.failed:
            active.failed = True
            unread = RecordError(
                f"answer {active.answer_id}: its streamed response was not read to the end before the "
                "next query in this context; a stream is recorded once it has been read"
            )
            self._failures.add(unread, active.answer_id, pending=self._on_error == "raise")

    def _end(self, active: _Active, response: Any) -> None:
        if active.failed:
            active.state = "done"
            return
        if _streaming(response):
            active.state = "streaming"  # finished when the LLM's stream ends
            return
        active.state = "done"
        self._finish(active, _response_text(response))

    def _stream_end(self, event: LLMChatEndEvent | LLMCompletionEndEvent, active: _Active) -> None:
        deltas = active.deltas.get(event.span_id)
        if deltas is not None and any(deltas):
            text = "".join(deltas)
        elif isinstance(event, LLMChatEndEvent):
            content = event.response.message.content if event.response is not None else None
            text = content if isinstance(content, str) else ""
        else:
            text = event.response.text
        active.state = "done"
        self._finish(active, text)

    def _finish(self, active: _Active, answer: str) -> None:
        if active.run.record.question is None:
            raise RecordError(f"answer {active.answer_id}: the question never arrived (no synthesis started)")
        written = active.run.finish(answer, self._cite)
        keep_written(self.written, written, self._lock)
