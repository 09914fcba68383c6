"""LangChain adapter: a callback handler that records each top-level run as one answer.

    handler = TracerCallbackHandler(recorder, resolve, authorization=auth, collection="support")
    answer = chain.invoke(question, config={"callbacks": [handler]})

`on_chain_start` of the root run opens the record (the question is the chain's input),
`on_retriever_end` receives the real `Document`s, `on_chat_model_start` (or
`on_llm_start`) the exact prompt, and `on_chain_end` of the root run carries the answer;
the record is then signed and written to the outbox. `invoke`, `ainvoke`, `batch`,
`abatch`, `stream` and `astream` are all recorded: a streamed run's input reaches the
callbacks only with its end (its start carries LangChain's placeholder
`{"input": ""}`), so its record is opened without a question and given the input when
the run ends. `raise_error` is set: with `on_error="raise"` (the default) a mistake (a
document that is not in its revision, a passage never sent) stops the chain with the
SDK's error; with `on_error="skip"` the answer goes through unrecorded and the error is
logged at ERROR on the `tracer.producer` logger and kept in `failures`. Needs
`tracer-evidence-sdk[langchain]`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from uuid import UUID

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    BaseCallbackHandler,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.messages import BaseMessage
from langchain_core.outputs import LLMResult
from langchain_core.vectorstores import VectorStoreRetriever

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

__all__ = ["ScoringRetriever", "TracerCallbackHandler", "message_text"]

#: keys under which a chain's input dict usually carries the user's question
QUESTION_KEYS = ("question", "input", "query")
#: what `on_chain_start` receives for a streamed run, whose input arrives with its end
STREAMED_INPUT = {"input": ""}


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

    def _unscored(self) -> RecordError:
        return RecordError(
            f"ScoringRetriever: search_type {self.search_type!r} returns no scores; use 'similarity' "
            "or 'similarity_score_threshold', or return a score from resolve() (Resolution.score)"
        )

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        kw = self.search_kwargs | kwargs
        if self.search_type == "similarity":
            return _scored(self.vectorstore.similarity_search_with_score(query, **kw))
        if self.search_type == "similarity_score_threshold":
            return _scored(self.vectorstore.similarity_search_with_relevance_scores(query, **kw))
        raise self._unscored()

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        kw = self.search_kwargs | kwargs
        if self.search_type == "similarity":
            return _scored(await self.vectorstore.asimilarity_search_with_score(query, **kw))
        if self.search_type == "similarity_score_threshold":
            return _scored(await self.vectorstore.asimilarity_search_with_relevance_scores(query, **kw))
        raise self._unscored()


def _scored(found: Sequence[tuple[Document, float]]) -> list[Document]:
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
        on_error: OnError = "raise",
    ) -> None:
        """`authorization` is fixed, or computed from the run's metadata
        (`config={"metadata": {...}}`); `answer_id` maps the root run id to the answer
        id (default `ans-<run id>`); `on_error` is `"raise"` (stop the chain) or
        `"skip"` (log, keep in `failures`, let the answer through unrecorded)."""
        self.recorder = recorder
        self.resolve = resolve
        self.authorization = authorization
        self.collection = collection
        self.cite = cite
        self.unsent: UnsentPolicy = unsent_policy(unsent)
        self.on_error: OnError = on_error_policy(on_error)
        self.answer_id = answer_id or (lambda run_id: f"ans-{run_id}")
        #: what each finished root run wrote, in order (the latest `adapters.KEEP`)
        self.written: list[Written] = []
        self._failures = Failures()
        self._runs: dict[UUID, Run] = {}
        self._root: dict[UUID, UUID] = {}
        self._queries: dict[UUID, str] = {}
        self._lock = threading.Lock()

    @property
    def failures(self) -> list[BaseException]:
        """Every recording failure (the latest `adapters.KEEP`), oldest first."""
        return self._failures.all

    def check(self) -> None:
        """For symmetry with the LlamaIndex handler; never raises here: with
        `on_error="raise"` the chain call itself raised each failure, with `"skip"` it
        was only logged and kept in `failures`."""
        self._failures.check()

    # -- which answer a callback belongs to ----------------------------------------------

    def _root_of(self, run_id: UUID, parent_run_id: UUID | None) -> UUID:
        with self._lock:
            if parent_run_id is not None:
                self._root[run_id] = self._root.get(parent_run_id, parent_run_id)
            return self._root.get(run_id, run_id)

    def _auth(self, metadata: Mapping[str, Any] | None) -> Authorization:
        auth = self.authorization
        return auth if isinstance(auth, Authorization) else auth(metadata or {})

    def _guard(self, root: UUID, action: Callable[[Run], None]) -> None:
        """Run `action` on the root's run; a failure discards the run (see `on_error`)."""
        with self._lock:
            run = self._runs.get(root)
        if run is None:
            return
        try:
            action(run)
        except Exception as exc:
            self._fail(root, exc)

    def _fail(self, root: UUID, exc: Exception) -> None:
        with self._lock:
            run = self._runs.pop(root, None)
        if run is not None:
            run.record.discard()  # a failed recording writes nothing
        answer_id = run.record.answer_id if run is not None else None
        if self.on_error == "raise":
            self._failures.add(exc, answer_id, pending=False, logged=False)
            raise exc
        self._failures.add(exc, answer_id, pending=False)

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
            self._root_of(run_id, parent_run_id)
            return
        try:
            answer_id = self.answer_id(run_id)
            auth = self._auth(metadata)
            if inputs == STREAMED_INPUT:  # a streamed run: the input comes with on_chain_end
                record = self.recorder.start_without_question(auth, self.collection, answer_id=answer_id)
            else:
                record = self.recorder.start(_question(inputs), auth, self.collection, answer_id=answer_id)
        except Exception as exc:
            self._fail(run_id, exc)
            return
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
        self._root_of(run_id, parent_run_id)
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
        root = self._root_of(run_id, parent_run_id)
        with self._lock:
            query = self._queries.pop(run_id, None)
        if query is None:
            return  # a retriever called outside a chain: no answer to attach it to
        docs = [
            Retrieved(
                text=d.page_content,
                metadata=d.metadata,
                score=d.metadata.get("score"),
                sent_forms=(),
                near=d.metadata.get("start_index"),
                chunk_id=d.id or None,
            )
            for d in documents
        ]
        self._guard(root, lambda run: run.retrieved(docs, query))

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
        root = self._root_of(run_id, parent_run_id)
        parts = [message_text(m) for batch in messages for m in batch]
        self._guard(root, lambda run: run.prompt(parts))

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
        root = self._root_of(run_id, parent_run_id)
        self._guard(root, lambda run: run.prompt(list(prompts)))

    def on_llm_end(
        self,
        response: LLMResult,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        root = self._root_of(run_id, parent_run_id)
        with self._lock:
            run = self._runs.get(root)
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
        inputs = kwargs.get("inputs")

        def finish(run: Run) -> None:
            if run.record.question is None:  # a streamed run: its input has arrived
                run.record.set_question(_question(inputs))
            written = run.finish(_answer(outputs, run.answer_candidate), self.cite)
            keep_written(self.written, written, self._lock)

        try:
            self._guard(run_id, finish)
        finally:
            with self._lock:
                self._runs.pop(run_id, None)
                self._forget(run_id)

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
