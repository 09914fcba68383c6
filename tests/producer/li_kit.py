"""LlamaIndex for test_llamaindex.py: the library's classes, an index over the pipelines'
chunks, a handler on the root dispatcher and the test's own model and postprocessors.

LlamaIndex is imported on first use (each test imports this module), so xdist workers
that never run these tests do not pay for it at collection."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core import Document, VectorStoreIndex
from llama_index.core.base.llms.types import CompletionResponse
from llama_index.core.base.response.schema import StreamingResponse
from llama_index.core.chat_engine.types import ChatMode
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.instrumentation import get_dispatcher  # type: ignore[attr-defined]
from llama_index.core.llms import MockLLM
from llama_index.core.llms.callbacks import llm_completion_callback
from llama_index.core.node_parser import SentenceSplitter
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from tests.producer.pipelines import AUTH, chunk_rows, resolve
from tracer.producer import Recorder
from tracer.producer.llamaindex import TracerEventHandler

__all__ = [
    "ChatMode",
    "CutToFit",
    "Document",
    "DownLLM",
    "KeepFirst",
    "MockEmbedding",
    "MockLLM",
    "SentenceSplitter",
    "StreamingResponse",
    "TracerEventHandler",
    "VectorStoreIndex",
    "get_dispatcher",
    "handler",
    "index",
]


def index(rows: list[tuple[str, dict[str, object]]] | None = None) -> VectorStoreIndex:
    nodes = [TextNode(text=t, metadata=m) for t, m in (rows or chunk_rows())]
    return VectorStoreIndex(nodes, embed_model=MockEmbedding(embed_dim=8))


def handler(recorder: Recorder, attach: list[TracerEventHandler], **kwargs: Any) -> TracerEventHandler:
    """A handler on the root dispatcher, listed in `attach` to be removed after the test."""
    tracer = TracerEventHandler.create(recorder, resolve, authorization=AUTH, collection="support", **kwargs)
    get_dispatcher().add_event_handler(tracer)
    attach.append(tracer)
    return tracer


class DownLLM(MockLLM):
    """A model that fails: the query raises, so there is no answer to record."""

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        raise RuntimeError("model down")


class CutToFit(BaseNodePostprocessor):
    """A postprocessor that shortens every node to fit a context window (a copy: the
    retriever's nodes, as recorded, keep their text)."""

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        out = []
        for n in nodes:
            text = n.node.get_content()
            out.append(NodeWithScore(node=TextNode(text=text[: len(text) * 3 // 4]), score=n.score))
        return out


class KeepFirst(BaseNodePostprocessor):
    """A reranker that keeps the best node: the other was retrieved, never sent."""

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        return nodes[:1]
