"""LangChain adapter: a callback handler that records each top-level run as one answer.

    handler = TracerCallbackHandler(recorder, resolve, authorization=auth, collection="support")
    answer = chain.invoke(question, config={"callbacks": [handler]})

`on_chain_start` of the root run opens the record (the question is the chain's input),
`on_retriever_end` receives the real `Document`s, `on_chat_model_start` (or
`on_llm_start`) the exact prompt, and `on_chain_end` of the root run carries the answer;
the record is then signed and written to the outbox. `raise_error` is set, so a
mistake (a document that is not in its revision, a passage never sent) stops the chain
with the SDK's error instead of being logged and lost. Needs `tracer[langchain]`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler, CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.messages import BaseMessage
from langchain_core.outputs import LLMResult
from langchain_core.vectorstores import VectorStoreRetriever

from tracer.producer.adapters import Citer, Resolver, Retrieved, Run, Unsent, cite_all_sent
from tracer.producer.errors import RecordError
from tracer.producer.model import Authorization
from tracer.producer.recorder import Recorder, Written

__all__ = ["ScoringRetriever", "TracerCallbackHandler", "message_text"]

#: keys under which a chain's input dict usually carries the user's question
QUESTION_KEYS = ("question", "input", "query")


def message_text(message: BaseMessage) -> str:
    """The text a chat message carried: its string content, or its text blocks joined."""
    content = message.content
    if isinstance(content, str):
        return content
    parts = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block.get("text"), str):
            parts.append(str(block["text"]))
    return "".join(parts)


def _question(inputs: Any) -> str:
    if isinstance(inputs, str):
        return inputs
    if isinstance(inputs, Mapping):
        for key in QUESTION_KEYS:
            if isinstance(inputs.get(key), str):
                return str(inputs[key])
    raise RecordError(
        f"cannot tell the question from the chain's input ({type(inputs).__name__}); "
        f"pass a string, or a dict with one of {QUESTION_KEYS}"
    )


def _answer(outputs: Any, candidate: str | None) -> str:
    if isinstance(outputs, str):
        return outputs
    if isinstance(outputs, BaseMessage):
        return message_text(outputs)
    if isinstance(outputs, Mapping):
        for key in ("answer", "output", "text"):
            if isinstance(outputs.get(key), str):
                return str(outputs[key])
    if candidate is not None:
        return candidate
    raise RecordError(f"cannot tell the answer from the chain's output ({type(outputs).__name__})")


class ScoringRetriever(VectorStoreRetriever):
    """`vectorstore.as_retriever()` that keeps each document's similarity score.

    LangChain's own vector-store retriever drops the scores; a manifest states one per
    passage, so this retriever puts it in a copy of each document's metadata (`score`),
    where `TracerCallbackHandler` finds it. Use it as `ScoringRetriever(vectorstore=vs,
    search_kwargs={"k": 4})`.
    """

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        found = self.vectorstore.similarity_search_with_score(query, **(self.search_kwargs | kwargs))
        return [
            Document(page_content=d.page_content, metadata={**d.metadata, "score": float(s)}, id=d.id)
            for d, s in found
        ]


class TracerCallbackHandler(BaseCallbackHandler):
    """Records every root run it sees as one signed manifest in the recorder's outbox."""

    raise_error = True

    def __init__(
        self,
        recorder: Recorder,
        resolve: Resolver,
        *,
        authorization: Authorization | Callable[[Mapping[str, Any]], Authorization],
        collection: str,
        cite: Citer = cite_all_sent,
        unsent: Unsent = "error",
        answer_id: Callable[[UUID], str] | None = None,
    ) -> None:
        """`authorization` is fixed, or computed from the run's metadata
        (`config={"metadata": {...}}`); `answer_id` maps the root run id to the answer
        id (default `ans-<run id>`)."""
        self.recorder = recorder
        self.resolve = resolve
        self.authorization = authorization
        self.collection = collection
        self.cite = cite
        self.unsent: Unsent = unsent
        self.answer_id = answer_id or (lambda run_id: f"ans-{run_id}")
        #: what each finished root run wrote, in order
        self.written: list[Written] = []
        self._runs: dict[UUID, Run] = {}
        self._root: dict[UUID, UUID] = {}
        self._queries: dict[UUID, str] = {}
        self._lock = threading.Lock()

    # -- which answer a callback belongs to ----------------------------------------------

    def _run_for(self, run_id: UUID, parent_run_id: UUID | None) -> Run | None:
        with self._lock:
            if parent_run_id is not None:
                self._root[run_id] = self._root.get(parent_run_id, parent_run_id)
            root = self._root.get(run_id, run_id)
            return self._runs.get(root)

    def _auth(self, metadata: Mapping[str, Any] | None) -> Authorization:
        auth = self.authorization
        return auth if isinstance(auth, Authorization) else auth(metadata or {})

    # -- callbacks ------------------------------------------------------------------------

    def on_chain_start(
        self,
        serialized: dict[str, Any],
        inputs: dict[str, Any],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        if parent_run_id is not None:
            self._run_for(run_id, parent_run_id)
            return
        record = self.recorder.start(
            _question(inputs), self._auth(metadata), self.collection, answer_id=self.answer_id(run_id)
        )
        with self._lock:
            self._runs[run_id] = Run(record, self.resolve, self.unsent)

    def on_retriever_start(
        self,
        serialized: dict[str, Any],
        query: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        self._run_for(run_id, parent_run_id)
        with self._lock:
            self._queries[run_id] = query

    def on_retriever_end(
        self,
        documents: Sequence[Document],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        run = self._run_for(run_id, parent_run_id)
        with self._lock:
            query = self._queries.pop(run_id, None)
        if run is None or query is None:
            return  # a retriever called outside a chain: no answer to attach it to
        docs = [
            Retrieved(
                text=d.page_content,
                metadata=d.metadata,
                score=d.metadata.get("score"),
                sent_forms=(),
                near=d.metadata.get("start_index"),
            )
            for d in documents
        ]
        run.retrieved(docs, query)

    def on_chat_model_start(
        self,
        serialized: dict[str, Any],
        messages: list[list[BaseMessage]],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        run = self._run_for(run_id, parent_run_id)
        if run is not None:
            run.prompt([message_text(m) for batch in messages for m in batch])

    def on_llm_start(
        self,
        serialized: dict[str, Any],
        prompts: list[str],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        run = self._run_for(run_id, parent_run_id)
        if run is not None:
            run.prompt(list(prompts))

    def on_llm_end(
        self,
        response: LLMResult,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        run = self._run_for(run_id, parent_run_id)
        if run is not None and response.generations and response.generations[0]:
            run.answer_candidate = response.generations[0][0].text

    def on_chain_end(
        self,
        outputs: dict[str, Any],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        if parent_run_id is not None:
            return
        with self._lock:
            run = self._runs.pop(run_id, None)
            self._forget(run_id)
        if run is None:
            return
        try:
            written = run.finish(_answer(outputs, run.answer_candidate), self.cite)
        except BaseException:
            run.record.discard()
            raise
        self.written.append(written)

    def on_chain_error(
        self,
        error: BaseException,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        if parent_run_id is not None:
            return
        with self._lock:
            run = self._runs.pop(run_id, None)
            self._forget(run_id)
        if run is not None:
            run.record.discard()  # a failed run is not an answer: nothing is written

    def _forget(self, root: UUID) -> None:
        for child in [c for c, r in self._root.items() if r == root]:
            del self._root[child]
            self._queries.pop(child, None)
