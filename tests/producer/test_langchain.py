"""The LangChain adapter against the real library and its own fakes, ingested and traced."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("langchain_core")

from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.language_models import FakeListChatModel, FakeListLLM
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate, PromptTemplate
from langchain_core.runnables import Runnable, RunnableLambda, RunnableParallel, RunnablePassthrough
from langchain_core.vectorstores import InMemoryVectorStore

from tests.cli.conftest import PASSPHRASE, World
from tests.producer.conftest import Ticks
from tests.producer.pipelines import AUTH, REVISIONS, chunk_rows, resolve
from tracer.cli.outbox_cmds import pending
from tracer.producer import LocateError, ModelInputError, Producer, Recorder, Runtime, Signer
from tracer.producer.langchain import ScoringRetriever, TracerCallbackHandler

ANSWER = "Refunds are accepted within thirty days of delivery."


def _store() -> InMemoryVectorStore:
    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=16))
    store.add_documents([Document(page_content=t, metadata=m) for t, m in chunk_rows()])
    return store


def _format(docs: list[Document]) -> str:
    return "\n\n".join(d.page_content for d in docs)


def _chain(retriever: Runnable[str, list[Document]], answers: list[str]) -> Runnable[str, str]:
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


def _recorder(w: World, outbox: Path) -> Recorder:
    return Recorder(
        Signer.from_key_file(w.key("producer"), PASSPHRASE),
        outbox,
        Producer("northstar-support-assistant", "3.0.0"),
        Runtime("fake-list-chat", "support-v4", "langchain-rag/1", {"temperature": 0}),
        clock=Ticks(),
    )


def test_a_langchain_pipeline_writes_manifests_that_ingest_and_verify(vault_world: World) -> None:
    w = vault_world
    outbox = w.root / "outbox"
    retriever = ScoringRetriever(vectorstore=_store(), search_kwargs={"k": 2})
    chain = _chain(retriever, [ANSWER, "Ten days."])
    # The three lines a pipeline adds:
    recorder = _recorder(w, outbox)
    tracer = TracerCallbackHandler(recorder, resolve, authorization=AUTH, collection="support")
    answers = [chain.invoke(q, config={"callbacks": [tracer]}) for q in ("Refund window?", "Lost parcel?")]

    assert answers == [ANSWER, "Ten days."]
    assert [x.answer for x in tracer.written] == answers
    for rev in REVISIONS.values():
        recorder.write_revision(rev)
    assert len(pending(outbox)) == 5
    report = w.ok("ingest-outbox", w.vault, outbox, *w.cust(), "--json").json()
    assert report["ok"] and report["ingest"]["faults"] == [], report
    w.env["TRACER_KEY"] = str(w.key("ines"))
    for written, question in zip(tracer.written, ("Refund window?", "Lost parcel?"), strict=True):
        t = w.spawn("trace", w.vault, written.answer_id, "--json")
        assert t.code == 0, t.err
        doc = t.json()
        assert (doc["integrity"], doc["currency"]) == ("intact", "verified"), json.dumps(doc)[:2000]
        assert doc["question"]["text"] == question
        (citation,) = doc["citations"]
        assert citation["span"] == written.answer and citation["currency"] == "verified"
        passages = doc["passages"]
        assert len(passages) == 2
        for p in passages:
            assert p["retrieved"]["state"] == "intact" and p["model_input"]["state"] == "intact"


def test_the_model_input_is_what_the_prompt_carried(vault_world: World) -> None:
    w = vault_world
    outbox = w.root / "outbox"
    retriever = ScoringRetriever(vectorstore=_store(), search_kwargs={"k": 1})
    # A completion model and a template that puts a label before each passage.
    prompt = PromptTemplate.from_template("Context:\n{context}\n\nQ: {question}\nA:")
    labelled = {
        "context": retriever
        | (lambda docs: "\n".join(f"[{i}] {d.page_content}" for i, d in enumerate(docs))),
        "question": RunnablePassthrough(),
    }
    chain = labelled | prompt | FakeListLLM(responses=[ANSWER]) | StrOutputParser()
    tracer = TracerCallbackHandler(_recorder(w, outbox), resolve, authorization=AUTH, collection="support")
    chain.invoke("Refund window?", config={"callbacks": [tracer]})
    (written,) = tracer.written
    raw = json.loads(written.path.read_text())
    texts = set(raw["contents"].values())
    assert "Refund window?" in texts and ANSWER in texts


def test_a_passage_the_model_never_saw_stops_the_chain(vault_world: World) -> None:
    w = vault_world
    outbox = w.root / "outbox"
    retriever = ScoringRetriever(vectorstore=_store(), search_kwargs={"k": 2})
    prompt = ChatPromptTemplate.from_messages([("human", "{question}")])
    dropping = RunnableParallel(docs=retriever, question=RunnablePassthrough()) | RunnableLambda(
        lambda d: {"question": d["question"]}
    )
    chain = dropping | prompt | FakeListChatModel(responses=[ANSWER, ANSWER]) | StrOutputParser()
    strict = TracerCallbackHandler(_recorder(w, outbox), resolve, authorization=AUTH, collection="support")
    with pytest.raises(ModelInputError, match="do not occur in any prompt"):
        chain.invoke("Refund window?", config={"callbacks": [strict]})
    assert pending(outbox) == []
    lenient = TracerCallbackHandler(
        _recorder(w, outbox), resolve, authorization=AUTH, collection="support", unsent="omit"
    )
    chain.invoke("Refund window?", config={"callbacks": [lenient]})
    (written,) = lenient.written
    payload = json.loads(
        __import__("base64").b64decode(json.loads(written.path.read_text())["envelope"]["payload"])
    )
    assert payload["passages"] == [] and payload["citations"] == []


def test_a_document_not_in_its_revision_stops_the_chain(vault_world: World) -> None:
    w = vault_world
    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=16))
    store.add_documents(
        [
            Document(
                page_content="Refunds within ninety days.",
                metadata={"document_id": "returns", "revision": "r1", "chunk": 0},
            )
        ]
    )
    chain = _chain(ScoringRetriever(vectorstore=store, search_kwargs={"k": 1}), [ANSWER])
    tracer = TracerCallbackHandler(
        _recorder(w, w.root / "outbox"), resolve, authorization=AUTH, collection="support"
    )
    with pytest.raises(LocateError, match="does not occur in the revision"):
        chain.invoke("Refund window?", config={"callbacks": [tracer]})
    assert tracer.written == [] and pending(w.root / "outbox") == []
