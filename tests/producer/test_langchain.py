"""The LangChain adapter against the real library and its own fakes, ingested and traced.

Each test imports LangChain through tests.producer.lc_kit, so collecting this file does not."""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.cli.conftest import PASSPHRASE, World
from tests.producer.conftest import Ticks
from tests.producer.pipelines import AUTH, REVISIONS, resolve
from tracer.cli.outbox_cmds import pending
from tracer.producer import LocateError, ModelInputError, Producer, Recorder, RecordError, Runtime, Signer

if TYPE_CHECKING:
    from langchain_core.documents import Document
    from langchain_core.runnables import Runnable, RunnableConfig


def _recorder(w: World, outbox: Path) -> Recorder:
    return Recorder(
        Signer.from_key_file(w.key("producer"), PASSPHRASE),
        outbox,
        Producer("northstar-support-assistant", "3.0.0"),
        Runtime("fake-list-chat", "support-v4", "langchain-rag/1", {"temperature": 0}),
        clock=Ticks(),
    )


def test_a_langchain_pipeline_writes_manifests_that_ingest_and_verify(vault_world: World) -> None:
    from tests.producer import lc_kit as lc

    w = vault_world
    outbox = w.root / "outbox"
    retriever = lc.ScoringRetriever(vectorstore=lc.store(), search_kwargs={"k": 2})
    chain = lc.chain(retriever, [lc.ANSWER, "Ten days."])
    # The three lines a pipeline adds:
    recorder = _recorder(w, outbox)
    tracer = lc.TracerCallbackHandler(recorder, resolve, authorization=AUTH, collection="support")
    answers = [chain.invoke(q, config={"callbacks": [tracer]}) for q in ("Refund window?", "Lost parcel?")]

    assert answers == [lc.ANSWER, "Ten days."]
    assert [x.answer for x in tracer.written] == answers
    for rev in REVISIONS.values():
        recorder.write_revision(rev)
    assert len(pending(outbox)) == 5
    report = w.ok("ingest-outbox", w.vault, outbox, *w.cust(), "--json").json()
    assert report["ok"] and report["ingest"]["faults"] == [], report
    ines = {"TRACER_KEY": str(w.key("ines"))}
    for written, question in zip(tracer.written, ("Refund window?", "Lost parcel?"), strict=True):
        t = w.run("trace", w.vault, written.answer_id, "--json", env=ines)
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
    from tests.producer import lc_kit as lc

    w = vault_world
    outbox = w.root / "outbox"
    retriever = lc.ScoringRetriever(vectorstore=lc.store(), search_kwargs={"k": 1})
    # A completion model and a template that puts a label before each passage.
    prompt = lc.PromptTemplate.from_template("Context:\n{context}\n\nQ: {question}\nA:")
    labelled = {
        "context": retriever
        | (lambda docs: "\n".join(f"[{i}] {d.page_content}" for i, d in enumerate(docs))),
        "question": lc.RunnablePassthrough(),
    }
    chain = labelled | prompt | lc.FakeListLLM(responses=[lc.ANSWER]) | lc.StrOutputParser()
    tracer = lc.TracerCallbackHandler(_recorder(w, outbox), resolve, authorization=AUTH, collection="support")
    chain.invoke("Refund window?", config={"callbacks": [tracer]})
    (written,) = tracer.written
    raw = json.loads(written.path.read_text())
    texts = set(raw["contents"].values())
    assert "Refund window?" in texts and lc.ANSWER in texts


def test_a_passage_the_model_never_saw_stops_the_chain(vault_world: World) -> None:
    from tests.producer import lc_kit as lc

    w = vault_world
    outbox = w.root / "outbox"
    retriever = lc.ScoringRetriever(vectorstore=lc.store(), search_kwargs={"k": 2})
    prompt = lc.ChatPromptTemplate.from_messages([("human", "{question}")])
    dropping = lc.RunnableParallel(docs=retriever, question=lc.RunnablePassthrough()) | lc.RunnableLambda(
        lambda d: {"question": d["question"]}
    )
    chain = dropping | prompt | lc.FakeListChatModel(responses=[lc.ANSWER, lc.ANSWER]) | lc.StrOutputParser()
    strict = lc.TracerCallbackHandler(_recorder(w, outbox), resolve, authorization=AUTH, collection="support")
    with pytest.raises(ModelInputError, match=r"occur in no prompt sent to the model.*unsent='not_sent'"):
        chain.invoke("Refund window?", config={"callbacks": [strict]})
    assert pending(outbox) == []


def test_following_the_hint_records_every_passage_as_not_sent(vault_world: World) -> None:
    """The error's own hint, `unsent="not_sent"`, keeps the retrieval: both passages are
    signed as retrieved and not sent, none is cited, and the trace says `not_sent`."""
    from tests.producer import lc_kit as lc

    w = vault_world
    outbox = w.root / "outbox"
    retriever = lc.ScoringRetriever(vectorstore=lc.store(), search_kwargs={"k": 2})
    top = lc.RunnableParallel(docs=retriever, question=lc.RunnablePassthrough()) | lc.RunnableLambda(
        lambda d: {"context": d["docs"][0].page_content, "question": d["question"]}
    )
    prompt = lc.ChatPromptTemplate.from_messages([("system", "Context: {context}"), ("human", "{question}")])
    chain = top | prompt | lc.FakeListChatModel(responses=[lc.ANSWER]) | lc.StrOutputParser()
    recorder = _recorder(w, outbox)
    tracer = lc.TracerCallbackHandler(
        recorder, resolve, authorization=AUTH, collection="support", unsent="not_sent"
    )
    chain.invoke("Refund window?", config={"callbacks": [tracer]})
    (written,) = tracer.written
    payload, _ = _payload(written.path)
    assert payload["schema"] == "tracer.manifest/v2"
    assert [p["model_input"] for p in payload["passages"]] == ["sent", "not_sent"]
    assert "model_input_sha256" not in payload["passages"][1]
    assert payload["citations"][0]["passage_ids"] == ["p1"]
    for rev in REVISIONS.values():
        recorder.write_revision(rev)
    assert w.ok("ingest-outbox", w.vault, outbox, *w.cust(), "--json").json()["ok"]
    ines = {"TRACER_KEY": str(w.key("ines"))}
    doc = w.run("trace", w.vault, written.answer_id, "--json", env=ines).json()
    assert (doc["integrity"], doc["currency"]) == ("intact", "verified")
    assert [p["model_input_state"] for p in doc["passages"]] == ["sent", "not_sent"]
    text = w.run("trace", w.vault, written.answer_id, env=ines).out
    assert "model input (not_sent): NOT_SENT" in text
    assert w.run("verify", w.vault, env=ines).code == 0


def test_omit_is_refused_it_would_sign_an_answer_without_its_retrieval(vault_world: World) -> None:
    from tests.producer import lc_kit as lc

    with pytest.raises(RecordError, match="'omit' was removed"):
        lc.TracerCallbackHandler(
            _recorder(vault_world, vault_world.root / "outbox"),
            resolve,
            authorization=AUTH,
            collection="support",
            unsent="omit",  # type: ignore[arg-type]
        )


@pytest.mark.parametrize(
    ("how", "render"),
    [
        ("re-wrapped", lambda docs: "\n\n".join(textwrap.fill(d.page_content, width=22) for d in docs)),
        ("cut down", lambda docs: "\n\n".join(d.page_content[: len(d.page_content) * 2 // 3] for d in docs)),
    ],
)
def test_re_wrapped_and_cut_down_context_keeps_every_passage(
    vault_world: World, how: str, render: Any
) -> None:
    """What `model_input()` accepts, the adapter finds: each passage is recorded, its
    model input the exact span of the prompt that carried it; ingested and verified."""
    from tests.producer import lc_kit as lc

    w = vault_world
    outbox = w.root / "outbox"
    retriever = lc.ScoringRetriever(vectorstore=lc.store(), search_kwargs={"k": 2})
    recorder = _recorder(w, outbox)
    tracer = lc.TracerCallbackHandler(recorder, resolve, authorization=AUTH, collection="support")
    chain = lc.context_chain(retriever, render)
    assert chain.invoke("Refund window?", config={"callbacks": [tracer]}) == lc.ANSWER
    (written,) = tracer.written
    payload, contents = _payload(written.path)
    docs = retriever.invoke("Refund window?")
    system = "Answer only from this context:\n\n" + render(docs)
    assert len(payload["passages"]) == 2, how
    for p in payload["passages"]:
        retrieved, sent = contents[p["retrieved_sha256"]], contents[p["model_input_sha256"]]
        assert sent != retrieved and sent in system, (how, sent)
        folded = " ".join(sent.split())
        assert folded == " ".join(retrieved.split()) if how == "re-wrapped" else retrieved.startswith(folded)
    for rev in REVISIONS.values():
        recorder.write_revision(rev)
    assert w.ok("ingest-outbox", w.vault, outbox, *w.cust(), "--json").json()["ok"]
    ines = {"TRACER_KEY": str(w.key("ines"))}
    doc = w.run("trace", w.vault, written.answer_id, "--json", env=ines).json()
    assert (doc["integrity"], doc["currency"]) == ("intact", "verified")
    assert len(doc["passages"]) == 2


def test_a_transformed_context_is_recorded_as_rewritten_never_dropped(vault_world: World) -> None:
    """A pipeline that transforms passages (here: upper-cased) says so: every passage is
    kept, each with the prompt message that carried it as its model input."""
    from tests.producer import lc_kit as lc

    w = vault_world
    outbox = w.root / "outbox"
    retriever = lc.ScoringRetriever(vectorstore=lc.store(), search_kwargs={"k": 2})

    def render(docs: list[Document]) -> str:
        return "\n\n".join(d.page_content.upper() for d in docs)

    chain = lc.context_chain(retriever, render)
    strict = lc.TracerCallbackHandler(_recorder(w, outbox), resolve, authorization=AUTH, collection="support")
    with pytest.raises(ModelInputError, match="unsent='rewritten'"):
        chain.invoke("Refund window?", config={"callbacks": [strict]})
    assert pending(outbox) == []
    tracer = lc.TracerCallbackHandler(
        _recorder(w, outbox), resolve, authorization=AUTH, collection="support", unsent="rewritten"
    )
    chain.invoke("Refund window?", config={"callbacks": [tracer]})
    (written,) = tracer.written
    payload, contents = _payload(written.path)
    system = "Answer only from this context:\n\n" + render(retriever.invoke("Refund window?"))
    assert len(payload["passages"]) == 2
    assert {contents[p["model_input_sha256"]] for p in payload["passages"]} == {system}
    assert payload["citations"][0]["passage_ids"] == ["p1", "p2"]


def test_a_document_not_in_its_revision_stops_the_chain(vault_world: World) -> None:
    from tests.producer import lc_kit as lc

    w = vault_world
    store = lc.InMemoryVectorStore(lc.DeterministicFakeEmbedding(size=16))
    store.add_documents(
        [
            lc.Document(
                page_content="Refunds within ninety days.",
                metadata={"document_id": "returns", "revision": "r1", "chunk": 0},
            )
        ]
    )
    chain = lc.chain(lc.ScoringRetriever(vectorstore=store, search_kwargs={"k": 1}), [lc.ANSWER])
    tracer = lc.TracerCallbackHandler(
        _recorder(w, w.root / "outbox"), resolve, authorization=AUTH, collection="support"
    )
    with pytest.raises(LocateError, match="does not occur in the revision"):
        chain.invoke("Refund window?", config={"callbacks": [tracer]})
    assert tracer.written == [] and pending(w.root / "outbox") == []


def _payload(path: Path) -> tuple[dict[str, Any], dict[str, str]]:
    doc = json.loads(path.read_text())
    return json.loads(base64.b64decode(doc["envelope"]["payload"])), doc["contents"]


async def _astream(chain: Runnable[str, str], question: str, config: RunnableConfig) -> str:
    return "".join([chunk async for chunk in chain.astream(question, config=config)])


def test_async_batch_and_streamed_runs_are_recorded_too(vault_world: World) -> None:
    """ainvoke (ScoringRetriever's async path), batch, abatch, stream and astream: each
    root run is one answer, a streamed one given its question when its input arrives."""
    from tests.producer import lc_kit as lc

    w = vault_world
    outbox = w.root / "outbox"
    retriever = lc.ScoringRetriever(vectorstore=lc.store(), search_kwargs={"k": 2})
    answers = [f"Answer {n}." for n in range(7)]
    chain = lc.chain(retriever, answers)
    tracer = lc.TracerCallbackHandler(_recorder(w, outbox), resolve, authorization=AUTH, collection="support")
    config: RunnableConfig = {"callbacks": [tracer]}

    got = [
        asyncio.run(chain.ainvoke("q-ainvoke", config=config)),
        "".join(chain.stream("q-stream", config=config)),
        asyncio.run(_astream(chain, "q-astream", config)),
        *chain.batch(["q-batch-1", "q-batch-2"], config=config),
        *asyncio.run(chain.abatch(["q-abatch-1", "q-abatch-2"], config=config)),
    ]
    assert sorted(got) == answers and tracer.failures == []
    recorded = {}
    for written in tracer.written:
        payload, contents = _payload(written.path)
        recorded[contents[payload["question_sha256"]]] = written.answer
        assert len(payload["passages"]) == 2
        assert all(isinstance(p["score"], float) for p in payload["passages"])
    questions = ["q-ainvoke", "q-stream", "q-astream", "q-batch-1", "q-batch-2", "q-abatch-1", "q-abatch-2"]
    assert sorted(recorded) == sorted(questions) and sorted(recorded.values()) == answers
    assert (
        recorded["q-ainvoke"] == got[0] and recorded["q-stream"] == got[1] and recorded["q-astream"] == got[2]
    )
    for rev in REVISIONS.values():
        _recorder(w, outbox).write_revision(rev)
    report = w.ok("ingest-outbox", w.vault, outbox, *w.cust(), "--json").json()
    assert report["ok"] and report["ingest"]["faults"] == [], report
    ines = {"TRACER_KEY": str(w.key("ines"))}
    for written in tracer.written[:3]:  # one of each kind of run
        doc = w.run("trace", w.vault, written.answer_id, "--json", env=ines).json()
        assert (doc["integrity"], doc["currency"]) == ("intact", "verified")


def test_scoring_retriever_refuses_a_search_without_scores() -> None:
    from tests.producer import lc_kit as lc

    retriever = lc.ScoringRetriever(vectorstore=lc.store(), search_type="mmr", search_kwargs={"k": 2})
    with pytest.raises(RecordError, match="returns no scores"):
        retriever.invoke("refund")
    with pytest.raises(RecordError, match="returns no scores"):
        asyncio.run(retriever.ainvoke("refund"))


def test_on_error_skip_lets_the_answer_through_logged_and_kept(
    vault_world: World, caplog: pytest.LogCaptureFixture
) -> None:
    """A production pipeline that must never break: the answer goes out unrecorded, the
    failure is logged at ERROR on `tracer.producer` and kept, never raised."""
    from tests.producer import lc_kit as lc

    w = vault_world
    outbox = w.root / "outbox"
    store = lc.InMemoryVectorStore(lc.DeterministicFakeEmbedding(size=16))
    store.add_documents(
        [
            lc.Document(
                page_content="Refunds within ninety days.",
                metadata={"document_id": "returns", "revision": "r1", "chunk": 0},
            )
        ]
    )
    chain = lc.chain(
        lc.ScoringRetriever(vectorstore=store, search_kwargs={"k": 1}), [lc.ANSWER, lc.ANSWER, lc.ANSWER]
    )
    tracer = lc.TracerCallbackHandler(
        _recorder(w, outbox), resolve, authorization=AUTH, collection="support", on_error="skip"
    )
    with caplog.at_level(logging.ERROR, logger="tracer.producer"):
        assert chain.invoke("Refund window?", config={"callbacks": [tracer]}) == lc.ANSWER
    (line,) = [r for r in caplog.records if r.name == "tracer.producer"]
    assert line.levelno == logging.ERROR and "was not recorded: LocateError" in line.getMessage()
    assert tracer.written == [] and pending(outbox) == []
    assert [type(f) for f in tracer.failures] == [LocateError]
    assert "does not occur in the revision" in str(tracer.failures[0])
    for _ in range(2):
        assert chain.invoke("Refund window?", config={"callbacks": [tracer]}) == lc.ANSWER
    tracer.check()  # never raises with "skip"
    assert len(tracer.failures) == 3 and tracer.written == []
    with pytest.raises(RecordError, match="on_error"):
        lc.TracerCallbackHandler(
            _recorder(w, outbox),
            resolve,
            authorization=AUTH,
            collection="support",
            on_error="ignore",  # type: ignore[arg-type]
        )
