"""The pitfalls of real exports, each handled: nothing cut, hidden or missing is ever kept
or shown as whole evidence, and a bad line refuses the whole file with its place named."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from store.errors import InputError
from tests.helpers import Case
from tests.imports.conftest import attr, dump, lines, run_import, spans, trace, write
from tracer.engine.imported import NOT_CAPTURED

TRACE = "5b8efff798038103d269b633813fc60c"


def _span(span_id: str, name: str, attrs: dict[str, Any], parent: str = "", **extra: Any) -> dict[str, Any]:
    def value(v: Any) -> dict[str, Any]:
        if isinstance(v, bool):
            return {"boolValue": v}
        if isinstance(v, int):
            return {"intValue": str(v)}
        if isinstance(v, float):
            return {"doubleValue": v}
        return {"stringValue": v}

    return {
        "traceId": TRACE,
        "spanId": span_id,
        "parentSpanId": parent,
        "name": name,
        "startTimeUnixNano": "1780000000000000000",
        "endTimeUnixNano": "1780000001000000000",
        "attributes": [{"key": k, "value": value(v)} for k, v in attrs.items()],
        **extra,
    }


def _line(*span_list: dict[str, Any]) -> dict[str, Any]:
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "genai-svc"}}]},
                "scopeSpans": [{"scope": {"name": "test"}, "spans": list(span_list)}],
            }
        ]
    }


PASSAGE = "Customers may request a refund within thirty days of delivery."


def _rag(content: str = PASSAGE, prompt: str | None = None, **retriever_extra: Any) -> dict[str, Any]:
    """An OpenInference RAG trace by hand: a chain, a retriever, an LLM call."""
    prompt = prompt if prompt is not None else f"Context:\n{content}\n\nQuestion: Refund window?"
    return _line(
        _span(
            "1000000000000001",
            "chain",
            {
                "openinference.span.kind": "CHAIN",
                "input.value": "Refund window?",
                "output.value": "Thirty days.",
            },
        ),
        _span(
            "1000000000000002",
            "retrieve",
            {
                "openinference.span.kind": "RETRIEVER",
                "input.value": "Refund window?",
                "retrieval.documents.0.document.id": "returns#1",
                "retrieval.documents.0.document.content": content,
                "retrieval.documents.0.document.score": 0.8,
                "retrieval.documents.0.document.metadata": '{"document_id": "returns", "revision": "r1"}',
            },
            parent="1000000000000001",
            **retriever_extra,
        ),
        _span(
            "1000000000000003",
            "llm",
            {
                "openinference.span.kind": "LLM",
                "llm.model_name": "gpt-x",
                "llm.input_messages.0.message.role": "system",
                "llm.input_messages.0.message.content": prompt,
                "llm.input_messages.1.message.role": "user",
                "llm.input_messages.1.message.content": "Refund window?",
                "llm.output_messages.0.message.role": "assistant",
                "llm.output_messages.0.message.content": "Thirty days.",
            },
            parent="1000000000000001",
        ),
    )


def retrace(doc: dict[str, Any], trace_id: str) -> dict[str, Any]:
    """`doc` as another trace with the same span ids (span ids are unique only in a trace)."""
    out: dict[str, Any] = json.loads(json.dumps(doc))
    for s in spans(out):
        s["traceId"] = trace_id
    return out


def _stored(case: Case) -> set[str]:
    return {str(d) for (d,) in case.vault.query("SELECT digest FROM blobs")}


def test_content_capture_off_keeps_no_text_and_marks_every_text_absent(sourced: Case) -> None:
    pytest.importorskip("openinference.instrumentation.langchain")
    from openinference.instrumentation import TraceConfig

    from tests.imports.exports import langchain_export

    data = langchain_export(
        configure=lambda: TraceConfig(
            hide_inputs=True, hide_outputs=True, hide_input_messages=True, hide_output_messages=True
        )
    )
    plan = run_import(sourced, write(sourced, "off.jsonl", data))
    st = plan.items[0].statement
    for key in ("$.question_sha256", "$.answer_sha256"):
        assert st["fields"][key]["state"] in ("absent", "redacted"), st["fields"][key]
    assert st["question_sha256"] is None and st["answer_sha256"] is None
    for p in st["passages"]:
        assert p["model_input_sha256"] is None  # no prompt was recorded: never guessed
    t = trace(sourced, st["answer_id"])
    assert t.answer.state == NOT_CAPTURED and t.answer.text is None and t.citations == []


def test_redacted_text_is_never_hashed_or_shown(sourced: Case) -> None:
    pytest.importorskip("openinference.instrumentation.langchain")
    from openinference.instrumentation import TraceConfig

    from tests.imports.exports import langchain_export

    data = langchain_export(
        configure=lambda: TraceConfig(hide_input_text=True, hide_output_text=True, hide_outputs=True)
    )
    assert b"__REDACTED__" in data
    plan = run_import(sourced, write(sourced, "redacted.jsonl", data))
    st = plan.items[0].statement
    assert st["fields"]["$.answer_sha256"]["state"] == "redacted"
    for p in st["passages"]:
        # every prompt message was redacted: the retrieved text cannot be found in one
        assert p["model_input_sha256"] is None
        assert st["fields"][f"$.passages[{p['index']}].model_input_sha256"]["state"] == "redacted"
    assert all(b"__REDACTED__" not in t for t in plan.items[0].texts)
    t = trace(sourced, st["answer_id"])
    assert t.answer.state == NOT_CAPTURED and "redacted" in t.answer.detail


def test_other_redaction_markers_inside_a_text(sourced: Case) -> None:
    path = write(sourced, "m.jsonl", dump([_rag(content="Refunds within [REDACTED] days.")]))
    st = run_import(sourced, path).items[0].statement
    p = st["passages"][0]
    assert (
        p["retrieved_sha256"] is None
        and st["fields"]["$.passages[0].retrieved_sha256"]["state"] == "redacted"
    )
    assert p["chain"] is None


def test_dropped_attributes_mark_what_is_missing_as_truncated(sourced: Case) -> None:
    doc = _rag()
    retriever = spans(doc)[1]
    retriever["attributes"] = [a for a in retriever["attributes"] if not a["key"].endswith(".content")]
    retriever["droppedAttributesCount"] = 3  # its content was among the dropped
    st = run_import(sourced, write(sourced, "d.jsonl", dump([doc]))).items[0].statement
    fact = st["fields"]["$.passages[0].retrieved_sha256"]
    assert fact["state"] == "truncated" and "dropped 3" in (fact["detail"] or "")


def test_values_at_the_length_limit_are_truncated_never_hashed_whole(sourced: Case) -> None:
    cut = PASSAGE[:40]
    path = write(sourced, "t.jsonl", dump([_rag(content=cut)]))
    plan = run_import(sourced, path, value_length_limit=40)
    st = plan.items[0].statement
    assert st["passages"][0]["retrieved_sha256"] is None
    assert st["fields"]["$.passages[0].retrieved_sha256"]["state"] == "truncated"
    assert cut.encode() not in plan.items[0].texts
    from store.crypto import sha256_hex

    assert sha256_hex(cut.encode()) not in _stored(sourced)


def test_metadata_json_string_is_parsed_strictly(sourced: Case) -> None:
    doc = _rag()
    attr(spans(doc)[1], "retrieval.documents.0.document.metadata")["value"] = {  # type: ignore[index]
        "stringValue": '{"document_id": "returns", "document_id": "shipping"}'
    }
    path = write(sourced, "meta.jsonl", dump([retrace(_rag(), "6" * 32), doc]))
    size = len(sourced.vault.leaf_hashes())
    with pytest.raises(InputError) as err:
        run_import(sourced, path)
    assert err.value.file.endswith("meta.jsonl:2")
    assert err.value.path.startswith("$.resourceSpans[0].scopeSpans[0].spans[1].attributes[")
    assert "not strict JSON" in err.value.message
    assert len(sourced.vault.leaf_hashes()) == size


def test_ids_in_hex_or_base64_name_the_same_answers(sourced: Case, lc_export: bytes) -> None:
    hexed = lines(lc_export)
    b64 = json.loads(json.dumps(hexed))
    for doc in b64:
        for s in spans(doc):
            for k in ("traceId", "spanId", "parentSpanId"):
                if s.get(k):
                    s[k] = base64.b64encode(bytes.fromhex(s[k])).decode()
    a = run_import(sourced, write(sourced, "hex.jsonl", dump(hexed)), dry_run=True)
    b = run_import(sourced, write(sourced, "b64.jsonl", dump(b64)), dry_run=True)
    assert [i.answer_id for i in a.items] == [i.answer_id for i in b.items]
    assert [i.statement["span_ids"] for i in a.items] == [i.statement["span_ids"] for i in b.items]


def test_int64_as_strings_or_numbers(sourced: Case) -> None:
    as_strings = _rag()
    as_numbers = json.loads(json.dumps(as_strings))
    for s in spans(as_numbers):
        s["startTimeUnixNano"] = 1780000000000000  # microsecond-size, exact in a double
        s["endTimeUnixNano"] = 1780000001000000
    # nanosecond times as JSON numbers exceed 2^53: refused by the strict parser, with the path
    a = run_import(sourced, write(sourced, "s.jsonl", dump([as_strings])), dry_run=True)
    assert a.items[0].statement["generated_at"] == "2026-05-28T20:26:41Z"
    too_big = json.loads(json.dumps(as_strings))
    spans(too_big)[0]["endTimeUnixNano"] = 1780000001000000000
    with pytest.raises(InputError, match=r"9007199254740991|2\^53|integer"):
        run_import(sourced, write(sourced, "n.jsonl", dump([too_big])), dry_run=True)
    b = run_import(sourced, write(sourced, "m.jsonl", dump([as_numbers])), dry_run=True)
    assert str(b.items[0].statement["generated_at"]).startswith("1970-01-21")


def test_content_stored_externally_is_absent(sourced: Case) -> None:
    messages = json.dumps([{"role": "user", "parts": [{"type": "uri", "uri": "s3://bucket/prompt-1"}]}])
    out = json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": "Thirty days."}]}])
    doc = _line(
        _span(
            "2000000000000001",
            "chat gpt-x",
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": "gpt-x",
                "gen_ai.input.messages": messages,
                "gen_ai.output.messages": out,
            },
        )
    )
    st = run_import(sourced, write(sourced, "ext.jsonl", dump([doc]))).items[0].statement
    assert st["passages"] == [] and st["citations"] == []  # a trace with no retriever span
    assert st["fields"]["$.runtime.model"]["state"] == "importer-computed"
    assert st["answer_sha256"] is not None
    assert st["fields"]["$.question_sha256"]["state"] == "absent"


def test_several_llm_calls_and_genai_retrieval(sourced: Case) -> None:
    docs = json.dumps([{"id": "returns#1", "score": 0.7}])
    chat = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "gpt-x",
        "gen_ai.input.messages": json.dumps(
            [{"role": "user", "parts": [{"type": "text", "content": f"Use: {PASSAGE}"}]}]
        ),
        "gen_ai.output.messages": json.dumps(
            [{"role": "assistant", "parts": [{"type": "text", "content": "Draft."}]}]
        ),
    }
    second = {
        **chat,
        "gen_ai.output.messages": json.dumps(
            [{"role": "assistant", "parts": [{"type": "text", "content": "Thirty days."}]}]
        ),
    }
    doc = _line(
        _span("3000000000000001", "agent", {"input.value": "Refund window?"}),
        _span(
            "3000000000000002",
            "retrieval",
            {
                "gen_ai.operation.name": "retrieval",
                "gen_ai.retrieval.query.text": "refund window",
                "gen_ai.retrieval.documents": docs,
            },
            parent="3000000000000001",
        ),
        _span("3000000000000003", "chat 1", chat, parent="3000000000000001"),
        _span(
            "3000000000000004",
            "chat 2",
            second,
            parent="3000000000000001",
            endTimeUnixNano="1780000002000000000",
        ),
    )
    st = run_import(sourced, write(sourced, "genai.jsonl", dump([doc]))).items[0].statement
    assert st["runtime"]["llm_calls"] == ["3000000000000003", "3000000000000004"]
    p = st["passages"][0]
    assert p["chunk_ref"] == "returns#1" and p["score"] == 0.7
    # the GenAI convention records no document content: nothing to hash, nothing located
    assert p["retrieved_sha256"] is None and p["chain"] is None
    t = trace(sourced, st["answer_id"])
    assert t.answer.text == "Thirty days." and t.question.text == "Refund window?"
    assert t.passages[0].currency.reason == "imported_not_located"


def test_a_passage_not_in_any_prompt_is_marked_never_guessed(sourced: Case) -> None:
    path = write(sourced, "np.jsonl", dump([_rag(prompt="Answer briefly.")]))
    st = run_import(sourced, path).items[0].statement
    p = st["passages"][0]
    assert p["retrieved_sha256"] is not None and p["model_input_sha256"] is None
    assert "not an exact substring" in (st["fields"]["$.passages[0].model_input_sha256"]["detail"] or "")
    assert st["citations"] == []


@pytest.mark.parametrize(
    ("line", "where"),
    [
        (b"{not json", "$"),
        (
            b'{"resourceSpans": [{"scopeSpans": [{"spans": '
            b'[{"traceId": "zz", "spanId": "1000000000000001"}]}]}]}',
            "$.resourceSpans[0].scopeSpans[0].spans[0].traceId",
        ),
        (b'{"resourceSpans": [], "x": 1, "x": 2}', "$.x"),
        (b'{"other": 1}', "$.resourceSpans"),
    ],
)
def test_a_malformed_line_refuses_the_whole_file_naming_line_and_path(
    sourced: Case, line: bytes, where: str
) -> None:
    good = dump([_rag()])
    path = write(sourced, "bad.jsonl", good + line + b"\n")
    size = len(sourced.vault.leaf_hashes())
    blobs = _stored(sourced)
    with pytest.raises(InputError) as err:
        run_import(sourced, path)
    assert err.value.file.endswith("bad.jsonl:2") and err.value.path == where, err.value
    assert len(sourced.vault.leaf_hashes()) == size and _stored(sourced) == blobs
