"""A collector's attribute length limit (issue 25 item 2): an export cut by the real
OpenTelemetry SDK (`SpanLimits(max_attribute_length=N)`, what
OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT sets) imports without being told the limit: the file's
values that stop at one common length are `truncated`, JSON that ends early is
`truncated`, everything shorter is whole and byte-exact; JSON that goes wrong before its
end is still refused."""

from __future__ import annotations

import json
from typing import Any

import pytest

from store.errors import InputError
from tests.helpers import Case
from tests.imports.conftest import FIXTURES, attr, dump, run_import, spans, write
from tests.imports.test_pitfalls import _rag
from tracer.importers.mapping import ends_early

LIMIT = 48


@pytest.fixture(scope="session")
def cut_export() -> bytes:
    pytest.importorskip("openinference.instrumentation.langchain")
    from tests.imports.exports import langchain_export

    return langchain_export(limit=LIMIT)


def _by_trace(plan: Any) -> dict[str, dict[str, Any]]:
    return {it.statement["trace_id"]: it.statement for it in plan.items}


def test_an_sdk_cut_export_imports_with_its_cut_fields_marked(
    sourced: Case, cut_export: bytes, lc_export: bytes
) -> None:
    plan = run_import(sourced, write(sourced, "cut.jsonl", cut_export), dry_run=True)
    assert len(plan.items) == 2
    assert len(plan.notes) == 1 and f"stop at exactly {LIMIT} characters" in plan.notes[0]
    whole = run_import(sourced, write(sourced, "whole.jsonl", lc_export), dry_run=True)
    # the same pipeline, field by field: a value the SDK left shorter than the limit is whole
    # and byte-exact; a longer one is truncated, with no digest and no text kept
    by_question = {st["question_sha256"]: st for st in _by_trace(whole).values()}
    for it in plan.items:
        cut = it.statement
        fields = cut["fields"]
        for key in ("question_sha256", "answer_sha256"):
            if cut[key] is None:
                assert fields[f"$.{key}"]["state"] == "truncated", fields[f"$.{key}"]
        ref = by_question.get(cut["question_sha256"]) if cut["question_sha256"] else None
        for i, p in enumerate(cut["passages"]):
            state = fields[f"$.passages[{i}].retrieved_sha256"]["state"]
            meta = fields[f"$.passages[{i}].metadata"]
            assert state in ("importer-computed", "truncated")
            assert meta["state"] == "truncated" and p["metadata"] is None, meta
            detail = meta["detail"] or ""
            assert "inferred" in detail or "ends early" in detail, meta
            if state == "truncated":
                assert p["retrieved_sha256"] is None and p["chain"] is None
            elif ref is not None:
                assert p["retrieved_sha256"] in {q["retrieved_sha256"] for q in ref["passages"]}
    assert any(f["state"] == "truncated" for it in plan.items for f in it.statement["fields"].values())


def test_the_committed_cut_fixture_imports(sourced: Case) -> None:
    plan = run_import(sourced, FIXTURES / "langchain-openinference-0.1.80-limit48.jsonl")
    assert len(plan.seqs) == 2 and plan.notes and "48" in plan.notes[0]


def _with_metadata(text: str) -> bytes:
    doc = _rag()
    attr(spans(doc)[1], "retrieval.documents.0.document.metadata")["value"] = {"stringValue": text}  # type: ignore[index]
    return dump([doc])


@pytest.mark.parametrize(
    "text",
    [
        '{"document_id": "returns", "revis',
        '{"document_id": "returns", "revision": "r1"',
        '{"document_id": tr',
    ],
)
def test_json_that_ends_early_is_truncated_not_refused(sourced: Case, text: str) -> None:
    plan = run_import(sourced, write(sourced, "early.jsonl", _with_metadata(text)), dry_run=True)
    fact = plan.items[0].statement["fields"]["$.passages[0].metadata"]
    assert fact["state"] == "truncated" and "ends early" in (fact["detail"] or ""), fact
    assert plan.notes == []  # one value: no common length to infer a limit from


@pytest.mark.parametrize(
    "text",
    [
        '{"document_id": "returns",, "revision": "r1"}',
        '{"document_id": "returns"} trailing',
        '{"document_id": "a", "document_id": "b"}',
        "not json at all",
    ],
)
def test_really_malformed_json_is_still_refused(sourced: Case, text: str) -> None:
    with pytest.raises(InputError, match="is not strict JSON"):
        run_import(sourced, write(sourced, "bad.jsonl", _with_metadata(text)), dry_run=True)


def test_ends_early_knows_a_cut_from_a_fault() -> None:
    assert ends_early('{"a": "xy') and ends_early("[1, 2") and ends_early('{"a": 0.')
    assert ends_early('{"a": "x\\u00') and ends_early('{"a": nul')
    for text in ('{"a": 1}', '{"a" 1}', "xyz", '{"a": 1}}', "", '{"a": "x\\q"}'):
        assert ends_early(text) is None, text


def test_templated_values_of_one_length_are_no_limit(sourced: Case) -> None:
    """Values sharing the longest length without a spike (templated texts of similar
    lengths) and short ids of one format are not taken as cut."""
    docs = []
    for i, tail in enumerate(["aaaa", "bbbb", "cccc"]):
        d = _rag()
        spans(d)[0]["traceId"] = spans(d)[1]["traceId"] = spans(d)[2]["traceId"] = f"{i + 1:032x}"
        attr(spans(d)[0], "output.value")["value"] = {"stringValue": f"Thirty days, see rule {tail}."}  # type: ignore[index]
        docs.append(d)
    plan = run_import(sourced, write(sourced, "templated.jsonl", dump(docs)), dry_run=True)
    assert plan.notes == []
    assert all(it.statement["answer_sha256"] for it in plan.items)
    assert json.dumps(plan.to_json()["notes"]) == "[]"
