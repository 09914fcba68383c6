"""The reader's edges: empty texts, bad counts and scores, GenAI data sources, the mapping
and redaction options, rerankers, `llm.prompts` arrays, and details that say the real cause."""

from __future__ import annotations

import json
from typing import Any

import pytest

from store.attest import REDACTION_MARKERS
from store.errors import InputError
from tests.cli.conftest import World
from tests.helpers import Case
from tests.imports.conftest import NOW, attr, dump, run_import, spans, trace, write
from tests.imports.test_pitfalls import PASSAGE, _line, _rag, _span
from tracer.engine.serialize import trace_json
from tracer.importers.build import DocumentMapping
from tracer.importers.mapping import ReadOptions
from tracer.importers.run import ExportFormat, import_files


def _statement(case: Case, doc: dict[str, Any], name: str = "x.jsonl", **opts: Any) -> dict[str, Any]:
    plan = run_import(case, write(case, name, dump([doc])), dry_run=True, **opts)
    return dict(plan.items[0].statement)


def test_an_empty_retrieved_text_is_absent_never_found_in_a_prompt(sourced: Case) -> None:
    st = _statement(sourced, _rag(content="", prompt="Context: whatever"))
    p, fields = st["passages"][0], st["fields"]
    assert p["retrieved_sha256"] is None and p["model_input_sha256"] is None
    assert fields["$.passages[0].retrieved_sha256"]["state"] == "absent"
    assert "empty" in fields["$.passages[0].retrieved_sha256"]["detail"]
    assert fields["$.passages[0].model_input_sha256"]["state"] == "absent"
    assert "found exactly" not in json.dumps(fields)
    assert st["citations"] == []  # nothing was found in a prompt, so the answer rests on nothing


@pytest.mark.parametrize(("count", "state"), [("5", "truncated"), (5, "truncated"), ("0", "absent")])
def test_dropped_attributes_count_as_a_string_or_a_number(sourced: Case, count: Any, state: str) -> None:
    doc = _rag()
    retriever = spans(doc)[1]
    retriever["attributes"] = [a for a in retriever["attributes"] if not a["key"].endswith(".content")]
    retriever["droppedAttributesCount"] = count
    st = _statement(sourced, doc)
    assert st["fields"]["$.passages[0].retrieved_sha256"]["state"] == state


def test_a_negative_dropped_attributes_count_refuses_the_file(sourced: Case) -> None:
    doc = _rag()
    spans(doc)[1]["droppedAttributesCount"] = -1
    with pytest.raises(InputError) as err:
        run_import(sourced, write(sourced, "neg.jsonl", dump([doc])), dry_run=True)
    assert err.value.file.endswith("neg.jsonl:1")
    assert err.value.path == "$.resourceSpans[0].scopeSpans[0].spans[1].droppedAttributesCount"
    assert "negative" in err.value.message


def test_a_score_that_is_not_a_number_is_described_not_kept(sourced: Case) -> None:
    doc = _rag()
    attr(spans(doc)[1], "retrieval.documents.0.document.score")["value"] = {"stringValue": "high"}  # type: ignore[index]
    st = _statement(sourced, doc)
    fact = st["fields"]["$.passages[0].score"]
    assert st["passages"][0]["score"] is None
    assert fact["state"] == "absent" and "not a number" in fact["detail"] and "'high'" in fact["detail"]
    assert fact["source"].endswith("attributes[4].value")  # where in the export it was


def test_metadata_that_is_not_json_refuses_the_file(sourced: Case) -> None:
    doc = _rag()
    attr(spans(doc)[1], "retrieval.documents.0.document.metadata")["value"] = {"stringValue": "{doc: 1"}  # type: ignore[index]
    with pytest.raises(InputError) as err:
        run_import(sourced, write(sourced, "nj.jsonl", dump([doc])), dry_run=True)
    assert err.value.file.endswith("nj.jsonl:1") and "not strict JSON" in err.value.message
    assert err.value.path == "$.resourceSpans[0].scopeSpans[0].spans[1].attributes[5].value.stringValue"


def test_genai_data_source_id_is_the_passages_data_source(sourced: Case) -> None:
    docs = json.dumps([{"id": "returns#1", "score": 0.7}, {"id": "returns#2", "score": "n/a"}])
    chat = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "gpt-x",
        "gen_ai.output.messages": json.dumps(
            [{"role": "assistant", "parts": [{"type": "text", "content": "Thirty days."}]}]
        ),
    }
    retrieval = {
        "gen_ai.operation.name": "retrieval",
        "gen_ai.data_source.id": "kb-support-prod",
        "gen_ai.retrieval.query.text": "refund window",
        "gen_ai.retrieval.documents": docs,
    }
    doc = _line(
        _span("4000000000000001", "agent", {"input.value": "Refund window?"}),
        _span("4000000000000002", "retrieval", retrieval, parent="4000000000000001"),
        _span("4000000000000003", "chat", chat, parent="4000000000000001"),
    )
    st = _statement(sourced, doc)
    assert [p["data_source"] for p in st["passages"]] == ["kb-support-prod"] * 2
    fact = st["fields"]["$.passages[0].data_source"]
    assert fact["state"] == "importer-computed" and fact["source"].startswith("line 1 $.resourceSpans")
    assert "gen_ai.data_source.id" in fact["detail"]
    assert (
        st["passages"][1]["score"] is None and "not a number" in st["fields"]["$.passages[1].score"]["detail"]
    )
    # and `trace --json` carries the value beside its attestation
    plan = run_import(sourced, write(sourced, "genai.jsonl", dump([doc])))
    passage = trace_json(trace(sourced, plan.items[0].answer_id))["passages"][0]
    assert passage["imported"]["data_source"] == "kb-support-prod"
    # OpenInference retrievers record none: absent, and said so
    plain = _statement(sourced, _rag(), "oi.jsonl")
    assert plain["passages"][0]["data_source"] is None
    assert plain["fields"]["$.passages[0].data_source"]["state"] == "absent"


def test_the_span_id_of_a_passage_has_its_own_attestation(sourced: Case) -> None:
    st = _statement(sourced, _rag())
    fact = st["fields"]["$.passages[0].span_id"]
    assert st["passages"][0]["span_id"] == "1000000000000002"
    assert fact["state"] == "importer-computed" and fact["source"].endswith("spans[1]")


def test_the_mapping_option_names_other_metadata_keys(sourced: Case) -> None:
    doc = _rag()
    attr(spans(doc)[1], "retrieval.documents.0.document.metadata")["value"] = {  # type: ignore[index]
        "stringValue": '{"doc": "returns", "ver": "r1"}'
    }
    path = write(sourced, "mapped.jsonl", dump([doc]))

    def first(mapping: DocumentMapping) -> dict[str, Any]:
        plan = import_files(
            sourced.vault, sourced.custodian, [path], ExportFormat.OTLP_JSON, "support", NOW,
            mapping, ReadOptions(), dry_run=True,
        )  # fmt: skip
        return dict(plan.items[0].statement)

    default = first(DocumentMapping())
    assert default["passages"][0]["chain"] is None
    assert default["fields"]["$.passages[0].document_id"]["detail"] == "no metadata key 'document_id'"
    mapped = first(DocumentMapping("doc", "ver"))
    p = mapped["passages"][0]
    assert (p["document_id"], p["revision"]) == ("returns", "r1")
    assert p["chain"] is not None and p["chain"]["document"]["document_id"] == "returns"
    assert mapped["fields"]["$.passages[0].document_id"]["detail"] == "metadata['doc']"
    assert mapped["fields"]["$.passages[0].chain"]["state"] == "importer-computed"


def test_a_further_redaction_marker_is_honoured(sourced: Case) -> None:
    doc = _rag(content="Customers may request a refund within *** days of delivery.")
    assert _statement(sourced, doc, "a.jsonl")["passages"][0]["retrieved_sha256"] is not None
    st = _statement(sourced, doc, "b.jsonl", redaction_markers=(*REDACTION_MARKERS, "***"))
    assert st["passages"][0]["retrieved_sha256"] is None
    assert st["fields"]["$.passages[0].retrieved_sha256"]["state"] == "redacted"


def test_reranker_output_documents_are_passages(sourced: Case) -> None:
    doc = _rag()
    rerank = _span(
        "1000000000000004",
        "rerank",
        {
            "openinference.span.kind": "RERANKER",
            "reranker.query": "Refund window?",
            "reranker.output_documents.0.document.id": "returns#1",
            "reranker.output_documents.0.document.content": PASSAGE,
            "reranker.output_documents.0.document.score": 0.93,
            "reranker.output_documents.0.document.metadata": '{"document_id": "returns", "revision": "r1"}',
        },
        parent="1000000000000001",
    )
    doc["resourceSpans"][0]["scopeSpans"][0]["spans"].append(rerank)
    st = _statement(sourced, doc)
    reranked = [p for p in st["passages"] if p["span_id"] == "1000000000000004"]
    assert len(st["passages"]) == 2 and len(reranked) == 1
    p = reranked[0]
    assert p["score"] == 0.93 and p["model_input_sha256"] is not None and p["chain"] is not None
    assert p["query_sha256"] is not None


def test_llm_prompts_arrays_are_searched_for_the_model_input(sourced: Case) -> None:
    doc = _rag(prompt="Answer briefly.")  # the passage is not in the chat messages
    llm = spans(doc)[2]
    llm["attributes"].append(
        {
            "key": "llm.prompts",
            "value": {"arrayValue": {"values": [{"stringValue": f"Context:\n{PASSAGE}\nQ: Refund window?"}]}},
        }
    )
    st = _statement(sourced, doc)
    p = st["passages"][0]
    assert p["model_input_sha256"] == p["retrieved_sha256"] and p["model_input_span_id"] == "1000000000000003"
    assert "llm.prompts" not in st["fields"]["$.passages[0].model_input_sha256"]["detail"]
    assert st["fields"]["$.passages[0].model_input_sha256"]["source"].endswith("arrayValue.values[0]")


def test_details_name_the_real_cause(sourced: Case) -> None:
    doc = _rag()
    retriever = spans(doc)[1]
    retriever["attributes"] = [a for a in retriever["attributes"] if not a["key"].endswith(".id")]
    # a value longer than the limit given: still taken as cut, and the detail says so
    st = _statement(sourced, doc, value_length_limit=40)
    f = st["fields"]
    assert "over the value length limit 40" in f["$.passages[0].retrieved_sha256"]["detail"]
    # metadata cut at the limit: its keys are not "absent", they could not be read
    assert f["$.passages[0].metadata"]["state"] == "truncated"
    assert f["$.passages[0].document_id"]["state"] == "truncated"
    assert "metadata is truncated" in f["$.passages[0].chain"]["detail"]
    # no document.id attribute: the detail names the attribute, not "no document id"
    assert "retrieval.documents.0.document.id" in f["$.passages[0].chunk_ref"]["detail"]


def test_a_binary_file_read_as_json_lines_names_no_line(sourced: Case) -> None:
    path = write(sourced, "lc.pb", b"\n\xe1j\n\x00\x01binary")
    with pytest.raises(InputError) as err:
        run_import(sourced, path, dry_run=True)
    assert err.value.file.endswith("lc.pb") and "otlp-proto" in err.value.message


def test_the_mapping_and_marker_options_through_the_cli(world: World) -> None:
    w = world
    w.ok("init", w.vault, *w.cust(), "--origin", "tracer.test/import")
    doc = _rag(content="Refunds within *** days.")
    attr(spans(doc)[1], "retrieval.documents.0.document.metadata")["value"] = {  # type: ignore[index]
        "stringValue": '{"doc": "returns", "ver": "r1"}'
    }
    path = w.root / "opts.jsonl"
    path.write_bytes(dump([doc]))
    r = w.run(
        "import", w.vault, path, "--format", "otlp-json", "--collection", "support", *w.cust(),
        "--document-key", "doc", "--revision-key", "ver", "--redaction-marker", "***", "--dry-run", "--json",
    )  # fmt: skip
    assert r.code == 0, r
    unattested = r.json()["answers"][0]["unattested"]
    assert unattested["$.passages[0].retrieved_sha256"]["state"] == "redacted"
    assert unattested["$.passages[0].document_id"]["detail"] == "metadata['doc']"


def test_the_statement_names_the_export_file_it_was_read_from(sourced: Case) -> None:
    # the file name was once overwritten by a field name reusing its variable
    st = _statement(sourced, _rag(), name="support-traces.jsonl")
    assert st["export"]["file"] == "support-traces.jsonl"
