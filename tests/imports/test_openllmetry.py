"""OpenLLMetry (Traceloop) exports (issue 25 item 1): the same LangChain RAG chain traced
by opentelemetry-instrumentation-langchain imports with the same answers, passages and
marks as its OpenInference export — retrieval documents from the `vector_db_retrieve`
span's `traceloop.entity.output`, the question from the root's `traceloop.entity.input`,
the session from `traceloop.association.properties.session_id`, the context from
`gen_ai.system_instructions`; the placeholder model name "unknown" is not captured."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from store.crypto import sha256_hex
from tests.helpers import Case
from tests.imports.conftest import FIXTURES, run_import, write
from tests.imports.exports import ANSWERS, QUESTIONS, SESSIONS


@pytest.fixture(scope="session")
def oll_export() -> bytes:
    pytest.importorskip("opentelemetry.instrumentation.langchain")
    from tests.imports.exports import openllmetry_export

    logging.disable(logging.WARNING)
    try:
        return openllmetry_export()
    finally:
        logging.disable(logging.NOTSET)


def _by_question(plan: Any) -> dict[str, dict[str, Any]]:
    return {it.statement["question_sha256"]: it.statement for it in plan.items}


def _h(text: str) -> str:
    return sha256_hex(text.encode())


def test_an_openllmetry_export_imports_every_answer_and_passage(sourced: Case, oll_export: bytes) -> None:
    plan = run_import(sourced, write(sourced, "openllmetry.jsonl", oll_export))
    by_q = _by_question(plan)
    assert sorted(by_q) == sorted(_h(q) for q in QUESTIONS)
    for q, answer, session in zip(QUESTIONS, ANSWERS, SESSIONS, strict=True):
        st = by_q[_h(q)]
        f = st["fields"]
        assert st["answer_sha256"] == _h(answer)
        assert (
            st["runtime"]["session_id"] == session
            and f["$.runtime.session_id"]["state"] == "importer-computed"
        )
        assert st["runtime"]["model"] is None and f["$.runtime.model"]["state"] == "absent"
        assert "placeholder 'unknown'" in f["$.runtime.model"]["detail"]
        assert len(st["passages"]) == 2
        for i, p in enumerate(st["passages"]):
            assert p["rank"] == i + 1 and p["chain"] is not None, p
            assert p["model_input_sha256"] == p["retrieved_sha256"] is not None
            assert f[f"$.passages[{i}].retrieved_sha256"]["state"] == "importer-computed"
            assert f[f"$.passages[{i}].score"]["state"] == "absent"
        assert st["citations"] and f["$.citations[0]"]["state"] == "importer-computed"


def test_openllmetry_and_openinference_exports_of_one_pipeline_agree(
    sourced: Case, oll_export: bytes, lc_export: bytes
) -> None:
    oll = _by_question(run_import(sourced, write(sourced, "oll.jsonl", oll_export), dry_run=True))
    oi = _by_question(run_import(sourced, write(sourced, "oi.jsonl", lc_export), dry_run=True))
    assert sorted(oll) == sorted(oi)

    def passages(st: dict[str, Any]) -> list[tuple[Any, ...]]:
        return [
            (p["rank"], p["retrieved_sha256"], p["model_input_sha256"], p["document_id"], p["revision"],
             p["metadata"], p["chain"]["locator"] if p["chain"] else None)
            for p in st["passages"]
        ]  # fmt: skip

    for q in oi:
        a, b = oll[q], oi[q]
        assert a["answer_sha256"] == b["answer_sha256"]
        assert passages(a) == passages(b)
        marks = [k for k in b["fields"] if k.endswith(("retrieved_sha256", "model_input_sha256", "chain"))]
        assert {k: a["fields"][k]["state"] for k in marks} == {k: b["fields"][k]["state"] for k in marks}
        assert len(a["citations"]) == len(b["citations"])


def test_the_committed_openllmetry_fixture_imports(sourced: Case) -> None:
    plan = run_import(sourced, FIXTURES / "langchain-openllmetry-0.62.4.jsonl")
    assert len(plan.seqs) == 2 and plan.skipped == []
    assert all(len(it.statement["passages"]) == 2 for it in plan.items)
