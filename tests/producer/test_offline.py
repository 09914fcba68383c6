"""The adapters' pipelines run with sockets disabled: nothing reaches for the network."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.conftest import World, draft
from tests.cli.test_no_network import GUARD, Guarded

ROOT = Path(__file__).resolve().parents[2]

PIPELINES = r"""
import sys, tempfile
from pathlib import Path
from store.crypto import Identity
from tests.producer.pipelines import AUTH, resolve, chunk_rows
from tracer.producer import Producer, Recorder, Runtime, Signer

out = Path(tempfile.mkdtemp())
recorder = Recorder(Signer(Identity.from_seed("p", b"p")), out, Producer("s", "1"), Runtime("m", "t", "p"))

from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.language_models import FakeListChatModel
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnablePassthrough
from langchain_core.vectorstores import InMemoryVectorStore
from tracer.producer.langchain import ScoringRetriever, TracerCallbackHandler

store = InMemoryVectorStore(DeterministicFakeEmbedding(size=8))
store.add_documents([Document(page_content=t, metadata=m) for t, m in chunk_rows()])
retriever = ScoringRetriever(vectorstore=store, search_kwargs={"k": 2})
context = retriever | (lambda d: "\n".join(x.page_content for x in d))
chain = (
    {"context": context, "question": RunnablePassthrough()}
    | ChatPromptTemplate.from_messages([("human", "{context}\n{question}")])
    | FakeListChatModel(responses=["ok"])
    | StrOutputParser()
)
lc = TracerCallbackHandler(recorder, resolve, authorization=AUTH, collection="support")
chain.invoke("Refund window?", config={"callbacks": [lc]})

from llama_index.core import VectorStoreIndex
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.llms import MockLLM
from llama_index.core.schema import TextNode
from tracer.producer.llamaindex import TracerEventHandler

li = TracerEventHandler.create(recorder, resolve, authorization=AUTH, collection="support")
get_dispatcher().add_event_handler(li)
nodes = [TextNode(text=t, metadata=m) for t, m in chunk_rows()]
index = VectorStoreIndex(nodes, embed_model=MockEmbedding(embed_dim=8))
index.as_query_engine(llm=MockLLM(max_tokens=5), similarity_top_k=2).query("Refund window?")
li.check()
print(len(lc.written), len(li.written), len(list(out.glob("answer-*.json"))))
"""


def test_both_pipelines_record_with_the_network_disabled(tmp_path: Path) -> None:
    pytest.importorskip("langchain_core")
    pytest.importorskip("llama_index.core")
    (tmp_path / "sitecustomize.py").write_text(GUARD, encoding="utf-8")
    p = subprocess.run(
        [sys.executable, "-c", PIPELINES],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": f"{tmp_path}:{ROOT}", "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
        timeout=300,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    assert p.stdout.split() == ["1", "1", "2"]


def test_chunk_pack_and_ingest_outbox_work_without_network(vault_world: World, tmp_path: Path) -> None:
    w = vault_world
    guard = tmp_path / "guard"
    guard.mkdir()
    (guard / "sitecustomize.py").write_text(GUARD, encoding="utf-8")
    env = {"PYTHONPATH": str(guard)}
    doc = w.write("doc.md", "unused")
    doc.write_text("# T\n\nText.\n", encoding="utf-8")
    r = w.spawn("chunk", doc, "--json", env=env)  # the console script itself, under the guard
    assert r.code == 0 and r.json()["blocks"][1]["text"] == "Text.", r.err
    outbox = w.root / "outbox"
    drafts = [w.write(f"d{n}.json", draft(f"ans-net-{n}")) for n in range(2)]
    guarded = Guarded(w, env)  # the rest in turn in one guarded child, as in test_no_network
    try:
        r = guarded.run("pack", *drafts, "--key", w.key("producer"), "--out-dir", outbox)
        assert r.code == 0, r.err
        r = guarded.run("ingest-outbox", w.vault, outbox, *w.cust())
        assert r.code == 0 and "appended 2 file(s)" in r.out, (r.out, r.err)
        assert "network disabled" not in r.err
    finally:
        err = guarded.close()
    assert "network disabled" not in err and "Traceback" not in err, err
