"""The LlamaIndex adapter against the real library and its own mocks, ingested and traced."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core import VectorStoreIndex
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.instrumentation import get_dispatcher  # type: ignore[attr-defined]
from llama_index.core.llms import MockLLM
from llama_index.core.schema import TextNode

from tests.cli.conftest import PASSPHRASE, World
from tests.producer.conftest import Ticks
from tests.producer.pipelines import AUTH, REVISIONS, chunk_rows, resolve
from tracer.cli.outbox_cmds import pending
from tracer.producer import LocateError, Producer, Recorder, Runtime, Signer
from tracer.producer.llamaindex import TracerEventHandler


def _index(rows: list[tuple[str, dict[str, object]]] | None = None) -> VectorStoreIndex:
    nodes = [TextNode(text=t, metadata=m) for t, m in (rows or chunk_rows())]
    return VectorStoreIndex(nodes, embed_model=MockEmbedding(embed_dim=8))


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
    added: list[TracerEventHandler] = []
    yield added
    root = get_dispatcher()
    root.event_handlers = [h for h in root.event_handlers if h not in added]


def test_a_llamaindex_query_engine_writes_manifests_that_ingest_and_verify(
    vault_world: World, attach: list[TracerEventHandler]
) -> None:
    w = vault_world
    outbox = w.root / "outbox"
    engine = _index().as_query_engine(llm=MockLLM(max_tokens=12), similarity_top_k=2)
    # The three lines a pipeline adds:
    recorder = _recorder(w, outbox)
    tracer = TracerEventHandler.create(recorder, resolve, authorization=AUTH, collection="support")
    get_dispatcher().add_event_handler(tracer)
    attach.append(tracer)

    responses = [str(engine.query(q)) for q in ("Refund window?", "Restart payments?")]
    tracer.check()
    assert [x.answer for x in tracer.written] == responses
    for rev in REVISIONS.values():
        recorder.write_revision(rev)
    report = w.ok("ingest-outbox", w.vault, outbox, *w.cust(), "--json").json()
    assert report["ok"] and report["ingest"]["faults"] == [], report
    w.env["TRACER_KEY"] = str(w.key("ines"))
    for written in tracer.written:
        t = w.spawn("trace", w.vault, written.answer_id, "--json")
        assert t.code == 0, t.err
        doc = t.json()
        assert (doc["integrity"], doc["currency"]) == ("intact", "verified")
        assert len(doc["passages"]) == 2 and doc["citations"][0]["currency"] == "verified"


def test_the_model_input_carries_llamaindex_s_metadata_header(
    vault_world: World, attach: list[TracerEventHandler]
) -> None:
    w = vault_world
    engine = _index().as_query_engine(llm=MockLLM(), similarity_top_k=1)
    tracer = TracerEventHandler.create(
        _recorder(w, w.root / "outbox"), resolve, authorization=AUTH, collection="support"
    )
    get_dispatcher().add_event_handler(tracer)
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
    w = vault_world
    rows = [("Refunds within ninety days.", {"document_id": "returns", "revision": "r1", "chunk": 0})]
    engine = _index(rows).as_query_engine(llm=MockLLM(max_tokens=4), similarity_top_k=1)
    tracer = TracerEventHandler.create(
        _recorder(w, w.root / "outbox"), resolve, authorization=AUTH, collection="support"
    )
    get_dispatcher().add_event_handler(tracer)
    attach.append(tracer)
    engine.query("Refund window?")  # LlamaIndex swallows the handler's error ...
    assert tracer.written == [] and pending(w.root / "outbox") == []
    with pytest.raises(LocateError, match="does not occur in the revision"):
        tracer.check()  # ... so it is kept for the pipeline to raise
    tracer.check()  # and raised once
