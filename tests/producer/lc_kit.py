"""LangChain for test_langchain.py: the library's classes, a vector store over the
pipelines' chunks and the retrieval chains the tests run.

LangChain is imported on first use (each test imports this module), so xdist workers
that never run these tests do not pay for it at collection."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("langchain_core")

from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.language_models import FakeListChatModel, FakeListLLM
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate, PromptTemplate
from langchain_core.runnables import (
    Runnable,
    RunnableLambda,
    RunnableParallel,
    RunnablePassthrough,
)
from langchain_core.vectorstores import InMemoryVectorStore

from tests.producer.pipelines import chunk_rows
from tracer.producer.langchain import ScoringRetriever, TracerCallbackHandler

__all__ = [
    "ANSWER",
    "ChatPromptTemplate",
    "DeterministicFakeEmbedding",
    "Document",
    "FakeListChatModel",
    "FakeListLLM",
    "InMemoryVectorStore",
    "PromptTemplate",
    "RunnableLambda",
    "RunnableParallel",
    "RunnablePassthrough",
    "ScoringRetriever",
    "StrOutputParser",
    "TracerCallbackHandler",
    "chain",
    "context_chain",
    "store",
]

ANSWER = "Refunds are accepted within thirty days of delivery."


def store() -> InMemoryVectorStore:
    s = InMemoryVectorStore(DeterministicFakeEmbedding(size=16))
    s.add_documents([Document(page_content=t, metadata=m) for t, m in chunk_rows()])
    return s


def _format(docs: list[Document]) -> str:
    return "\n\n".join(d.page_content for d in docs)


def chain(retriever: Runnable[str, list[Document]], answers: list[str]) -> Runnable[str, str]:
    prompt = ChatPromptTemplate.from_messages(
        [("system", "Answer only from this context:\n\n{context}"), ("human", "{question}")]
    )
    model = FakeListChatModel(responses=answers)
    return (
        {"context": retriever | _format, "question": RunnablePassthrough()}
        | prompt
        | model
        | StrOutputParser()
    )


def context_chain(retriever: Runnable[str, list[Document]], render: Any) -> Runnable[str, str]:
    prompt = ChatPromptTemplate.from_messages(
        [("system", "Answer only from this context:\n\n{context}"), ("human", "{question}")]
    )
    return (
        {"context": retriever | RunnableLambda(render), "question": RunnablePassthrough()}
        | prompt
        | FakeListChatModel(responses=[ANSWER])
        | StrOutputParser()
    )
