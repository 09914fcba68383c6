"""LlamaIndex adapter: an instrumentation event handler that records each query as an answer.

    handler = TracerEventHandler.create(recorder, resolve, authorization=auth, collection="support")
    get_dispatcher().add_event_handler(handler)
    response = query_engine.query(question)

`QueryStartEvent` opens the record (the question is the query string),
`RetrievalEndEvent` carries the real `NodeWithScore`s, `LLMChatStartEvent` or
`LLMCompletionStartEvent` the exact prompt, and the outermost `QueryEndEvent` the
response, after which the record is signed and written. The model-input text of a node
is the form LlamaIndex put in the prompt (`get_content(MetadataMode.LLM)`, its metadata
header included) or else its bare text, whichever occurs exactly in the prompt.

LlamaIndex's dispatcher swallows every exception a handler raises, so an SDK error
cannot stop the query the way it stops a LangChain chain: the run is discarded (nothing
is written) and the error is kept in `failures`; `check()` raises the first one. Needs
`tracer[llamaindex]`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.events import BaseEvent
from llama_index.core.instrumentation.events.llm import LLMChatStartEvent, LLMCompletionStartEvent
from llama_index.core.instrumentation.events.query import QueryEndEvent, QueryStartEvent
from llama_index.core.instrumentation.events.retrieval import RetrievalEndEvent
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle
from pydantic import PrivateAttr

from tracer.producer.adapters import Citer, Resolver, Retrieved, Run, Unsent, cite_all_sent
from tracer.producer.model import Authorization
from tracer.producer.recorder import Recorder, Written

__all__ = ["TracerEventHandler"]


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
    )


class _Active:
    """The query being recorded in this context, and how deeply queries are nested in it."""

    def __init__(self, run: Run) -> None:
        self.run = run
        self.depth = 1
        self.failed: BaseException | None = None


class TracerEventHandler(BaseEventHandler):
    """Records every outermost query it sees as one signed manifest in the recorder's outbox."""

    _recorder: Recorder = PrivateAttr()
    _resolve: Resolver = PrivateAttr()
    _authorization: Authorization | Callable[[], Authorization] = PrivateAttr()
    _collection: str = PrivateAttr()
    _cite: Citer = PrivateAttr()
    _unsent: Unsent = PrivateAttr()
    _active: ContextVar[_Active | None] = PrivateAttr()
    _lock: Any = PrivateAttr()
    #: what each finished query wrote, in order
    written: list[Written] = []  # noqa: RUF012 - pydantic copies field defaults per instance
    #: errors raised while recording (LlamaIndex would otherwise swallow them)
    failures: list[BaseException] = []  # noqa: RUF012

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
    ) -> TracerEventHandler:
        """`authorization` is fixed, or a function called at the start of each query."""
        handler = cls()
        handler._recorder = recorder
        handler._resolve = resolve
        handler._authorization = authorization
        handler._collection = collection
        handler._cite = cite
        handler._unsent = unsent
        handler._active = ContextVar(f"tracer-llamaindex-{id(handler)}", default=None)
        handler._lock = threading.Lock()
        return handler

    def check(self) -> None:
        """Raise the first error met while recording, if any (and forget it)."""
        with self._lock:
            if self.failures:
                raise self.failures.pop(0)

    def _auth(self) -> Authorization:
        auth = self._authorization
        return auth if isinstance(auth, Authorization) else auth()

    def handle(self, event: BaseEvent, **kwargs: Any) -> None:
        active = self._active.get()
        try:
            if isinstance(event, QueryStartEvent):
                self._start(event, active)
            elif active is None or active.failed is not None:
                if isinstance(event, QueryEndEvent) and active is not None:
                    self._end(event, active)
            elif isinstance(event, RetrievalEndEvent):
                active.run.retrieved(
                    [_retrieved(n) for n in event.nodes], _query_text(event.str_or_query_bundle)
                )
            elif isinstance(event, LLMChatStartEvent):
                active.run.prompt([m.content for m in event.messages if isinstance(m.content, str)])
            elif isinstance(event, LLMCompletionStartEvent):
                active.run.prompt([event.prompt])
            elif isinstance(event, QueryEndEvent):
                self._end(event, active)
        except Exception as exc:  # LlamaIndex would swallow it: keep it for check()
            if active is not None and active.failed is None:
                active.failed = exc
                active.run.record.discard()
            with self._lock:
                self.failures.append(exc)

    def _start(self, event: QueryStartEvent, active: _Active | None) -> None:
        if active is not None:
            active.depth += 1  # a sub-query of the answer being recorded
            return
        record = self._recorder.start(_query_text(event.query), self._auth(), self._collection)
        self._active.set(_Active(Run(record, self._resolve, self._unsent)))

    def _end(self, event: QueryEndEvent, active: _Active) -> None:
        active.depth -= 1
        if active.depth:
            return
        self._active.set(None)
        if active.failed is not None:
            return
        response: Any = event.response
        answer = getattr(response, "response", None)
        if not isinstance(answer, str):
            answer = str(response)
        written = active.run.finish(answer, self._cite)
        with self._lock:
            self.written.append(written)
