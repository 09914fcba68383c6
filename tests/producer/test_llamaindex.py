"""The LlamaIndex adapter against the real library and its own mocks, ingested and traced.

Each test imports LlamaIndex through tests.producer.li_kit, so collecting this file does not."""

from __future__ import annotations

import asyncio
import base64
import json
import logging
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.cli.conftest import PASSPHRASE, World
from tests.producer.conftest import Ticks
from tests.producer.pipelines import AUTH, REVISIONS, resolve
from tracer.cli.outbox_cmds import pending
from tracer.producer import LocateError, Producer, Recorder, RecordError, Runtime, Signer, Written
from tracer.producer.adapters import Resolution

if TYPE_CHECKING:
    from tracer.producer.llamaindex import TracerEventHandler


def _recorder(w: World, outbox: Path) -> Recorder:
    return Recorder(
        Signer.from_key_file(w.key("producer"), PASSPHRASE),
        outbox,
        Producer("northstar-support-assistant", "3.0.0"),
        Runtime("mock-llm", "text_qa/default", "llamaindex-rag/1"),
        clock=Ticks(),
    )


@pytest.fixture
def attach() -> Iterator[list[TracerEventHandler]]:
    """Handlers added to LlamaIndex's root dispatcher, removed again after the test."""
    from tests.producer import li_kit as li

    added: list[TracerEventHandler] = []
    yield added
    root = li.get_dispatcher()
    root.event_handlers = [h for h in root.event_handlers if h not in added]


def test_a_llamaindex_query_engine_writes_manifests_that_ingest_and_verify(
    vault_world: World, attach: list[TracerEventHandler]
) -> None:
    from tests.producer import li_kit as li

    w = vault_world
    outbox = w.root / "outbox"
    engine = li.index().as_query_engine(llm=li.MockLLM(max_tokens=12), similarity_top_k=2)
    # The three lines a pipeline adds:
    recorder = _recorder(w, outbox)
    tracer = li.TracerEventHandler.create(recorder, resolve, authorization=AUTH, collection="support")
    li.get_dispatcher().add_event_handler(tracer)
    attach.append(tracer)

    responses = [str(engine.query(q)) for q in ("Refund window?", "Restart payments?")]
    tracer.check()
    assert [x.answer for x in tracer.written] == responses
    for rev in REVISIONS.values():
        recorder.write_revision(rev)
    report = w.ok("ingest-outbox", w.vault, outbox, *w.cust(), "--json").json()
    assert report["ok"] and report["ingest"]["faults"] == [], report
    ines = {"TRACER_KEY": str(w.key("ines"))}
    for written in tracer.written:
        t = w.run("trace", w.vault, written.answer_id, "--json", env=ines)
        assert t.code == 0, t.err
        doc = t.json()
        assert (doc["integrity"], doc["currency"]) == ("intact", "verified")
        assert len(doc["passages"]) == 2 and doc["citations"][0]["currency"] == "verified"


def test_the_model_input_carries_llamaindex_s_metadata_header(
    vault_world: World, attach: list[TracerEventHandler]
) -> None:
    from tests.producer import li_kit as li

    w = vault_world
    engine = li.index().as_query_engine(llm=li.MockLLM(), similarity_top_k=1)
    tracer = li.TracerEventHandler.create(
        _recorder(w, w.root / "outbox"), resolve, authorization=AUTH, collection="support"
    )
    li.get_dispatcher().add_event_handler(tracer)
    attach.append(tracer)
    prompt = str(engine.query("Refund window?"))  # MockLLM answers with the prompt it got
    tracer.check()
    (written,) = tracer.written
    doc = json.loads(written.path.read_text())
    payload = json.loads(base64.b64decode(doc["envelope"]["payload"]))
    (p,) = payload["passages"]
    retrieved = doc["contents"][p["retrieved_sha256"]]
    model_input = doc["contents"][p["model_input_sha256"]]
    assert model_input != retrieved and model_input.endswith(retrieved)
    assert model_input.startswith("document_id: ") and model_input in prompt


def test_an_error_discards_the_run_and_check_raises_it(
    vault_world: World, attach: list[TracerEventHandler]
) -> None:
    from tests.producer import li_kit as li

    w = vault_world
    rows = [("Refunds within ninety days.", {"document_id": "returns", "revision": "r1", "chunk": 0})]
    engine = li.index(rows).as_query_engine(llm=li.MockLLM(max_tokens=4), similarity_top_k=1)
    tracer = li.TracerEventHandler.create(
        _recorder(w, w.root / "outbox"), resolve, authorization=AUTH, collection="support"
    )
    li.get_dispatcher().add_event_handler(tracer)
    attach.append(tracer)
    engine.query("Refund window?")  # LlamaIndex swallows the handler's error ...
    assert tracer.written == [] and pending(w.root / "outbox") == []
    with pytest.raises(LocateError, match="does not occur in the revision"):
        tracer.check()  # ... so it is kept for the pipeline to raise
    tracer.check()  # and raised once


def _handler(w: World, attach: list[TracerEventHandler], **kwargs: Any) -> TracerEventHandler:
    from tests.producer import li_kit as li

    return li.handler(_recorder(w, w.root / "outbox"), attach, **kwargs)


def _question_of(written: Written) -> str:
    doc = json.loads(written.path.read_text())
    payload = json.loads(base64.b64decode(doc["envelope"]["payload"]))
    return str(doc["contents"][payload["question_sha256"]])


def _ingest_and_trace(w: World, written: list[Written]) -> None:
    recorder = _recorder(w, w.root / "outbox")
    for rev in REVISIONS.values():
        recorder.write_revision(rev)
    report = w.ok("ingest-outbox", w.vault, w.root / "outbox", *w.cust(), "--json").json()
    assert report["ok"] and report["ingest"]["faults"] == [], report
    ines = {"TRACER_KEY": str(w.key("ines"))}
    for x in written:
        doc = w.run("trace", w.vault, x.answer_id, "--json", env=ines).json()
        assert (doc["integrity"], doc["currency"]) == ("intact", "verified"), doc


def test_a_streamed_response_is_recorded_once_it_has_been_read(
    vault_world: World, attach: list[TracerEventHandler]
) -> None:
    from tests.producer import li_kit as li

    w = vault_world
    engine = li.index().as_query_engine(llm=li.MockLLM(max_tokens=6), similarity_top_k=2, streaming=True)
    tracer = _handler(w, attach)
    response = engine.query("Refund window?")
    assert isinstance(response, li.StreamingResponse)
    assert tracer.written == []  # QueryEndEvent came, the answer did not exist yet
    shown = "".join(response.response_gen)
    tracer.check()
    (written,) = tracer.written
    assert written.answer == shown and _question_of(written) == "Refund window?"

    async def astream() -> str:
        r = await engine.aquery("Restart payments?")
        return "".join([t async for t in r.async_response_gen()])  # type: ignore[union-attr]

    assert asyncio.run(astream()) == tracer.written[-1].answer
    tracer.check()
    assert len(tracer.written) == 2
    unread = engine.query("Lost parcel?")  # never read ...
    assert isinstance(unread, li.StreamingResponse)
    str(
        li.index().as_query_engine(llm=li.MockLLM(max_tokens=2)).query("Refund window?")
    )  # ... before the next query
    with pytest.raises(RecordError, match="not read to the end"):
        tracer.check()
    assert len(tracer.written) == 3  # the next query itself was recorded
    engine.query("Lost parcel?")  # unread again, and then a chat engine's turn
    chat = li.index().as_chat_engine(llm=li.MockLLM(max_tokens=2), chat_mode=li.ChatMode.CONTEXT)
    chat.chat("Refund window?")
    with pytest.raises(RecordError, match="not read to the end"):
        tracer.check()
    assert len(tracer.written) == 4 and _question_of(tracer.written[-1]) == "Refund window?"
    _ingest_and_trace(w, tracer.written[:2])


def test_a_chat_engine_turn_is_one_answer_with_the_user_s_message(
    vault_world: World, attach: list[TracerEventHandler]
) -> None:
    """condense_plus_context and context send no query events: retrieval opens the record,
    the synthesis gives the user's message and the answer; chat, achat, stream_chat and
    astream_chat alike."""
    from tests.producer import li_kit as li

    w = vault_world
    tracer = _handler(w, attach)
    index = li.index()
    for mode in (li.ChatMode.CONDENSE_PLUS_CONTEXT, li.ChatMode.CONTEXT):
        chat = index.as_chat_engine(llm=li.MockLLM(max_tokens=5), similarity_top_k=2, chat_mode=mode)
        first = chat.chat("Refund window?")
        second = chat.chat("And for lost parcels?")  # condensed with the history first
        streamed = chat.stream_chat("Restart payments?")
        shown = "".join(streamed.response_gen)
        third = asyncio.run(chat.achat("And gift cards?"))

        async def astream(message: str) -> str:
            r = await chat.astream_chat(message)  # noqa: B023 - awaited in this iteration
            return "".join([t async for t in r.async_response_gen()])

        fourth = asyncio.run(astream("Which carriers?"))
        tracer.check()
        turns = tracer.written[-5:]
        assert [_question_of(x) for x in turns] == [
            "Refund window?",
            "And for lost parcels?",
            "Restart payments?",
            "And gift cards?",
            "Which carriers?",
        ]
        assert [x.answer for x in turns] == [first.response, second.response, shown, third.response, fourth]
    assert len(tracer.written) == 10
    index.as_retriever(similarity_top_k=2).retrieve("refund")  # a retriever on its own: no answer
    str(index.as_query_engine(llm=li.MockLLM(max_tokens=3)).query("Refund window?"))
    tracer.check()
    assert len(tracer.written) == 11 and _question_of(tracer.written[-1]) == "Refund window?"
    _ingest_and_trace(w, [tracer.written[0], tracer.written[2]])


def test_nodes_of_a_splitter_are_recorded_under_their_node_ids(
    vault_world: World, attach: list[TracerEventHandler]
) -> None:
    """SentenceSplitter nodes carry no chunk id of the pipeline's: the node id is used, and
    the chunker is 'unspecified' unless resolve names it (never the reference chunker)."""
    from tests.producer import li_kit as li

    w = vault_world
    docs = [li.Document(text=rev.content, metadata={"document_id": d}) for d, rev in REVISIONS.items()]
    index = li.VectorStoreIndex.from_documents(
        docs,
        embed_model=li.MockEmbedding(embed_dim=8),
        transformations=[li.SentenceSplitter(chunk_size=40, chunk_overlap=0)],
    )

    def by_document(metadata: Mapping[str, Any]) -> Resolution:
        return Resolution(REVISIONS[metadata["document_id"]])

    tracer = li.TracerEventHandler.create(
        _recorder(w, w.root / "outbox"), by_document, authorization=AUTH, collection="support"
    )
    li.get_dispatcher().add_event_handler(tracer)
    attach.append(tracer)
    engine = index.as_query_engine(llm=li.MockLLM(max_tokens=4), similarity_top_k=2)
    engine.query("Refund window?")
    tracer.check()
    (written,) = tracer.written
    doc = json.loads(written.path.read_text())
    payload = json.loads(base64.b64decode(doc["envelope"]["payload"]))
    node_ids = set(index.docstore.docs)
    for p in payload["passages"]:
        assert p["chunk"]["chunk_id"] in node_ids
        assert p["chunk"]["pipeline_version"] in ("unspecified", "tracer-para-chunker/1")
    _ingest_and_trace(w, [written])


def test_every_failure_is_logged_kept_bounded_and_raised_by_check(
    vault_world: World, attach: list[TracerEventHandler], caplog: pytest.LogCaptureFixture
) -> None:
    from tests.producer import li_kit as li

    w = vault_world
    rows = [("Refunds within ninety days.", {"document_id": "returns", "revision": "r1", "chunk": 0})]
    bad = li.index(rows).as_query_engine(llm=li.MockLLM(max_tokens=4), similarity_top_k=1)
    good = li.index().as_query_engine(llm=li.MockLLM(max_tokens=4), similarity_top_k=1)
    tracer = _handler(w, attach)
    with caplog.at_level(logging.ERROR, logger="tracer.producer"):
        bad.query("Refund window?")
    (line,) = [r for r in caplog.records if r.name == "tracer.producer"]
    assert line.levelno == logging.ERROR and "was not recorded: LocateError" in line.getMessage()
    good.query("Refund window?")
    bad.query("Refund window?")
    with pytest.raises(ExceptionGroup) as group:  # every pending failure, not the oldest alone
        tracer.check()
    assert [type(e) for e in group.value.exceptions] == [LocateError, LocateError]
    tracer.check()
    assert len(tracer.written) == 1
    tracer._failures.keep = 3
    for _ in range(5):
        bad.query("Refund window?")
    assert len(tracer.failures) == 3
    with pytest.raises(ExceptionGroup):
        tracer.check()
    # A query that raises is no answer, and does not leave a run open behind it.
    down = li.index().as_query_engine(llm=li.DownLLM(max_tokens=None), similarity_top_k=1)
    with pytest.raises(RuntimeError, match="model down"):
        down.query("Refund window?")
    good.query("Lost parcel?")
    tracer.check()
    assert len(tracer.written) == 2 and _question_of(tracer.written[-1]) == "Lost parcel?"
    # on_error="skip": logged and kept, never raised
    quiet = _handler(w, attach, on_error="skip")
    bad.query("Refund window?")
    quiet.check()
    assert [type(f) for f in quiet.failures] == [LocateError]


def test_a_cut_down_context_keeps_every_passage(vault_world: World, attach: list[TracerEventHandler]) -> None:
    """The query engine sends shortened nodes: each retrieved passage is recorded, its
    model input the part of the prompt that carried it, and it traces verified."""
    from tests.producer import li_kit as li

    w = vault_world
    engine = li.index().as_query_engine(
        llm=li.MockLLM(), similarity_top_k=2, node_postprocessors=[li.CutToFit()]
    )
    tracer = _handler(w, attach)
    prompt = str(engine.query("Refund window?"))  # MockLLM answers with the prompt it got
    tracer.check()
    (written,) = tracer.written
    doc = json.loads(written.path.read_text())
    payload = json.loads(base64.b64decode(doc["envelope"]["payload"]))
    assert len(payload["passages"]) == 2
    for p in payload["passages"]:
        retrieved = doc["contents"][p["retrieved_sha256"]]
        sent = doc["contents"][p["model_input_sha256"]]
        assert sent != retrieved and sent in prompt and retrieved.startswith(" ".join(sent.split()))
    _ingest_and_trace(w, [written])


def test_a_node_a_postprocessor_left_out_is_signed_not_sent(
    vault_world: World, attach: list[TracerEventHandler]
) -> None:
    """Retrieved two, sent one: with `unsent="not_sent"` both are recorded, the second as
    `not_sent` with no model input, and the default citation rests on the first only."""
    from tests.producer import li_kit as li

    w = vault_world
    engine = li.index().as_query_engine(
        llm=li.MockLLM(), similarity_top_k=2, node_postprocessors=[li.KeepFirst()]
    )
    tracer = _handler(w, attach, unsent="not_sent")
    engine.query("Refund window?")
    tracer.check()
    (written,) = tracer.written
    doc = json.loads(written.path.read_text())
    payload = json.loads(base64.b64decode(doc["envelope"]["payload"]))
    assert payload["schema"] == "tracer.manifest/v2"
    first, second = payload["passages"]
    assert (first["model_input"], second["model_input"]) == ("sent", "not_sent")
    assert "model_input_sha256" in first and "model_input_sha256" not in second
    assert payload["citations"][0]["passage_ids"] == [first["passage_id"]]
    _ingest_and_trace(w, [written])
    t = w.run("trace", w.vault, written.answer_id, "--json", env={"TRACER_KEY": str(w.key("ines"))}).json()
    assert [p["model_input_state"] for p in t["passages"]] == ["sent", "not_sent"]
    assert t["passages"][1]["model_input"]["state"] == "not_sent"
