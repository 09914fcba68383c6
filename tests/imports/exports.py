"""Real OpenInference exports, made offline: the unmodified instrumentations over the
frameworks' own fakes, spans caught in memory and written as OTLP JSON Lines with the
OpenTelemetry proto encoder (ids in hex, as the OTLP JSON encoding and the file
exporter write them; `ids="base64"` writes protobuf's generic JSON mapping instead)."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.producer.pipelines import chunk_rows

__all__ = ["langchain_export", "llamaindex_export", "openllmetry_export", "otlp_lines"]

QUESTIONS = ("Refund window?", "Restart payments?")


def _hex_ids(value: Any) -> Any:
    """protobuf's JSON mapping writes bytes as base64; OTLP/JSON wants ids in hex."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if k in ("traceId", "spanId", "parentSpanId") and isinstance(v, str):
                out[k] = base64.b64decode(v).hex()
            else:
                out[k] = _hex_ids(v)
        return out
    if isinstance(value, list):
        return [_hex_ids(v) for v in value]
    return value


def otlp_lines(spans: list[ReadableSpan], ids: str = "hex") -> bytes:
    """One ExportTraceServiceRequest per trace, one per line; `ids="proto"`: one binary
    ExportTraceServiceRequest holding every span (an OTLP/HTTP body)."""
    if ids == "proto":
        return bytes(encode_spans(spans).SerializeToString())
    by_trace: dict[int, list[ReadableSpan]] = {}
    for s in spans:
        assert s.context is not None
        by_trace.setdefault(s.context.trace_id, []).append(s)
    lines = []
    for group in by_trace.values():
        doc = MessageToDict(encode_spans(group))
        if ids == "hex":
            doc = _hex_ids(doc)
        lines.append(json.dumps(doc, ensure_ascii=False, separators=(",", ":")))
    return ("\n".join(lines) + "\n").encode("utf-8")


@contextmanager
def _provider(
    service: str, limit: int | None = None
) -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    """An SDK provider; `limit` is the SDK's own attribute value length limit (what
    OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT sets), so a cut export is cut by the real SDK."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(
        resource=Resource.create({"service.name": service, "service.version": "3.0.0"}),
        span_limits=SpanLimits(max_attribute_length=limit),
    )
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider, exporter
    provider.shutdown()


def _rag_chain() -> Any:
    """The LangChain RAG chain both instrumentations trace: a fake chat model over an
    in-memory vector store of the pipelines' chunks, two documents per question."""
    from langchain_core.documents import Document
    from langchain_core.embeddings import DeterministicFakeEmbedding
    from langchain_core.language_models import FakeListChatModel
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.prompts import ChatPromptTemplate
    from langchain_core.runnables import RunnableLambda, RunnablePassthrough
    from langchain_core.vectorstores import InMemoryVectorStore

    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=16))
    store.add_documents([Document(page_content=t, metadata=m) for t, m in chunk_rows()])
    retriever = store.as_retriever(search_kwargs={"k": 2})
    prompt = ChatPromptTemplate.from_messages(
        [("system", "Answer only from this context:\n\n{context}"), ("human", "{question}")]
    )

    def join(docs: list[Document]) -> str:
        return "\n\n".join(d.page_content for d in docs)

    model = FakeListChatModel(responses=list(ANSWERS))
    return (
        {"context": retriever | RunnableLambda(join), "question": RunnablePassthrough()}
        | prompt
        | model
        | StrOutputParser()
    )


ANSWERS = ("Refunds are accepted within thirty days.", "Not in production.")
SESSIONS = ("sess-refund", "sess-restart")


def openllmetry_export(limit: int | None = None) -> bytes:
    """The same LangChain RAG chain traced by OpenLLMetry (Traceloop's
    opentelemetry-instrumentation-langchain), each question in a session given the way
    LangChain passes it (run metadata `session_id`, which OpenLLMetry records as
    `traceloop.association.properties.session_id`)."""
    from opentelemetry.instrumentation.langchain import LangchainInstrumentor

    with _provider("northstar-support-langchain", limit) as (provider, exporter):
        instrumentor = LangchainInstrumentor()
        instrumentor.instrument(tracer_provider=provider)
        try:
            chain = _rag_chain()
            for q, session in zip(QUESTIONS, SESSIONS, strict=True):
                chain.invoke(q, config={"metadata": {"session_id": session}})
        finally:
            instrumentor.uninstrument()
        return otlp_lines(list(exporter.get_finished_spans()))


def langchain_export(
    ids: str = "hex", configure: Callable[[], Any] | None = None, limit: int | None = None
) -> bytes:
    """A LangChain RAG chain (FakeListChatModel, DeterministicFakeEmbedding) traced by
    openinference-instrumentation-langchain, as OTLP JSON Lines."""
    from openinference.instrumentation.langchain import LangChainInstrumentor

    with _provider("northstar-support-langchain", limit) as (provider, exporter):
        instrumentor = LangChainInstrumentor()
        kwargs: dict[str, Any] = {"tracer_provider": provider}
        if configure is not None:
            kwargs["config"] = configure()
        instrumentor.instrument(**kwargs)
        try:
            chain = _rag_chain()
            for q in QUESTIONS:
                chain.invoke(q)
        finally:
            instrumentor.uninstrument()
        return otlp_lines(list(exporter.get_finished_spans()), ids)


def llamaindex_export(ids: str = "hex") -> bytes:
    """A LlamaIndex query engine (MockLLM, MockEmbedding) traced by
    openinference-instrumentation-llama-index, as OTLP JSON Lines."""
    from llama_index.core import VectorStoreIndex
    from llama_index.core.embeddings import MockEmbedding
    from llama_index.core.llms import MockLLM
    from llama_index.core.schema import TextNode
    from openinference.instrumentation.llama_index import LlamaIndexInstrumentor

    with _provider("northstar-support-llamaindex") as (provider, exporter):
        instrumentor = LlamaIndexInstrumentor()
        instrumentor.instrument(tracer_provider=provider)
        try:
            nodes = [TextNode(text=t, metadata=m) for t, m in chunk_rows()]
            index = VectorStoreIndex(nodes, embed_model=MockEmbedding(embed_dim=8))
            engine = index.as_query_engine(llm=MockLLM(max_tokens=12), similarity_top_k=2)
            for q in QUESTIONS:
                engine.query(q)
        finally:
            instrumentor.uninstrument()
        return otlp_lines(list(exporter.get_finished_spans()), ids)
