"""Exports of unmodified OpenInference instrumentations (LangChain, LlamaIndex) import offline,
trace beside manifests with every unattested fact marked, and verify clean."""

from __future__ import annotations

import json
from collections.abc import Mapping

import pytest

from store.attest import IMPORTED_MARK
from store.entries import EntryKind
from store.errors import InputError
from tests.helpers import Case
from tests.imports.conftest import FIXTURES, run_import, trace, write
from tracer.engine.serialize import trace_json
from tracer.engine.verify import verify


def _check_imported_json(doc: Mapping[str, object]) -> None:
    """Nothing in an imported trace's JSON claims a producer's attestation."""
    text = json.dumps(doc)
    assert '"attested"' not in text
    assert doc["kind"] == "imported"
    imp = doc["imported"]
    assert isinstance(imp, dict) and imp["mark"] == IMPORTED_MARK and imp["attested_by_producer"] is False
    for p in doc["passages"]:  # type: ignore[attr-defined]
        assert p["imported"]["mark"] == IMPORTED_MARK
        assert p["imported"]["fields"], p


def test_langchain_export_imports_traces_and_verifies(sourced: Case, lc_export: bytes) -> None:
    plan = run_import(sourced, write(sourced, "langchain.jsonl", lc_export))
    assert len(plan.items) == 2 and len(plan.seqs) == 2
    kinds = sourced.vault.query("SELECT kind FROM log WHERE seq IN (SELECT unnest(?::BIGINT[]))", [plan.seqs])
    assert {k for (k,) in kinds} == {EntryKind.IMPORTED_TRACE}
    first = plan.items[0].statement
    assert first["export"]["sha256"] and first["span_ids"]
    t = trace(sourced, first["answer_id"])
    assert t.imported is not None and t.signature == "valid"
    assert t.answer.verified and t.answer.text == "Refunds are accepted within thirty days."
    assert t.question.text == "Refund window?"
    assert len(t.passages) == 2
    for p in t.passages:
        assert p.imported and p.retrieved.verified
        assert p.model_input.digest == p.retrieved.digest  # found exactly in the system prompt
        assert p.currency.state == "verified", p.currency
        assert p.attestation["score"].state == "absent"  # LangChain's retriever records none
    doc = trace_json(t)
    _check_imported_json(doc)
    signature = doc["signature"]
    assert signature is not None and signature.get("signed_by") == "importer"
    report = verify(sourced.vault, None)  # structural: signatures, places, views, presence
    assert report.ok, report.findings


def test_llamaindex_export_imports_with_two_model_calls_per_trace(sourced: Case, li_export: bytes) -> None:
    plan = run_import(sourced, write(sourced, "llamaindex.jsonl", li_export))
    # the index build is a trace of its own with no model call: skipped, and said so
    assert any("no model call" in s.reason for s in plan.skipped)
    assert len(plan.items) == 2
    st = plan.items[0].statement
    assert len(st["runtime"]["llm_calls"]) == 2  # MockLLM.predict wraps MockLLM.complete
    # MockLLM's model name is the placeholder "unknown": not captured, never a name
    model = st["fields"]["$.runtime.model"]
    assert st["runtime"]["model"] is None and model["state"] == "absent"
    assert "placeholder 'unknown'" in (model["detail"] or "")
    t = trace(sourced, st["answer_id"])
    assert t.answer.verified and t.question.text in ("Refund window?", "Restart payments?")
    for p in t.passages:
        assert p.retrieved.verified and p.attestation["score"].state == "importer-computed"
        # LlamaIndex puts a metadata header before each node: the bare text is still found exactly
        assert p.model_input.digest == p.retrieved.digest
        assert p.currency.state == "verified"
    _check_imported_json(trace_json(t))
    s = sourced.session("ines")
    assert verify(s.vault, s).ok


def test_the_frozen_captured_export_still_reads(sourced: Case) -> None:
    """A LangChain export captured once and committed: the reader against a frozen real shape."""
    path = FIXTURES / "langchain-openinference-0.1.80.jsonl"
    plan = run_import(sourced, path)
    ids = [it.statement["answer_id"] for it in plan.items]
    assert ids == ["imp-d2c6350bee759526", "imp-c5c7eae6bff1ff57"]  # stable: trace and root span ids
    assert all(p["chain"] is not None for it in plan.items for p in it.statement["passages"])
    t = trace(sourced, ids[0])
    assert t.answer.text == "Refunds are accepted within thirty days."
    assert [p.currency.state for p in t.passages] == ["verified", "verified"]


def test_imported_answers_are_listed_and_skipped_a_second_time(sourced: Case, lc_export: bytes) -> None:
    path = write(sourced, "langchain.jsonl", lc_export)
    run_import(sourced, path)
    rows = sourced.vault.query("SELECT answer_kind, count(*) FROM v_answers GROUP BY 1")
    assert dict(rows) == {"imported": 2}
    size = len(sourced.vault.leaf_hashes())
    again = run_import(sourced, path)
    assert again.items == [] and again.seqs == [] and again.already == 2
    assert all("already in the vault with the same content" in s.reason for s in again.skipped[-2:])
    assert len(sourced.vault.leaf_hashes()) == size


def test_otlp_protobuf_reads_as_the_json_lines_do(sourced: Case) -> None:
    pytest.importorskip("opentelemetry.proto")
    from tests.imports.exports import langchain_export
    from tracer.importers.run import ExportFormat

    proto = run_import(sourced, write(sourced, "lc.pb", langchain_export("proto")), dry_run=True,
                       fmt=ExportFormat.OTLP_PROTO)  # fmt: skip
    assert len(proto.items) == 2
    for it in proto.items:
        assert all(p["chain"] is not None and p["model_input_sha256"] for p in it.statement["passages"])
    with pytest.raises(InputError, match="not an OTLP ExportTraceServiceRequest"):
        run_import(sourced, write(sourced, "junk.pb", b"\xff\xff\xff"), fmt=ExportFormat.OTLP_PROTO)
