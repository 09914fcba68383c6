"""A span is (trace id, span id): traces that reuse span ids never mix, and a span written
twice (a retried batch, exports concatenated) is refused, in the dry run as in the real run."""

from __future__ import annotations

import pytest

from store.crypto import sha256_hex
from store.errors import InputError
from tests.helpers import Case
from tests.imports.conftest import dump, run_import, trace, write
from tests.imports.test_pitfalls import PASSAGE, _rag, retrace

TEXTS = (
    PASSAGE,
    "Gift cards are never refunded.",
    "Orders ship within two business days.",
)
TRACES = ("a" * 31 + "1", "b" * 31 + "2", "c" * 31 + "3")


def test_traces_sharing_span_ids_import_apart(sourced: Case) -> None:
    # three traces, each with the same three span ids and its own retrieved passage
    docs = [retrace(_rag(content=text), tid) for text, tid in zip(TEXTS, TRACES, strict=True)]
    plan = run_import(sourced, write(sourced, "shared-ids.jsonl", dump(docs)))
    assert len(plan.items) == 3
    by_trace = {it.statement["trace_id"]: it.statement for it in plan.items}
    assert sorted(by_trace) == sorted(TRACES)
    for text, tid in zip(TEXTS, TRACES, strict=True):
        st = by_trace[tid]
        assert len(st["span_ids"]) == 3, st["span_ids"]  # its own chain, retriever, model call
        assert [p["retrieved_sha256"] for p in st["passages"]] == [sha256_hex(text.encode())]
        t = trace(sourced, st["answer_id"])
        assert [p.retrieved.text for p in t.passages] == [text]
        assert [p.model_input.text for p in t.passages] == [text]  # from its own prompt only


def test_a_span_written_twice_is_refused_naming_its_line(sourced: Case) -> None:
    path = write(sourced, "dup.jsonl", dump([_rag(), _rag()]))
    size = len(sourced.vault.leaf_hashes())
    for dry_run in (True, False):
        with pytest.raises(InputError) as err:
            run_import(sourced, path, dry_run=dry_run)
        assert err.value.file.endswith("dup.jsonl:2"), err.value
        assert err.value.path == "$.resourceSpans[0].scopeSpans[0].spans[0].spanId"
        assert "appears twice" in err.value.message and "line 1" in err.value.message
    assert len(sourced.vault.leaf_hashes()) == size


def test_the_same_export_twice_in_one_call_is_read_once_by_the_dry_run_too(sourced: Case) -> None:
    path = write(sourced, "once.jsonl", dump([_rag()]))
    size = len(sourced.vault.leaf_hashes())
    dry = run_import(sourced, path, path, dry_run=True)
    real = run_import(sourced, path, path)
    for plan in (dry, real):
        assert len(plan.items) == 1 and plan.already == 1 and plan.conflicts == []
        assert "the same trace, with the same content, as" in plan.skipped[0].reason
    assert len(sourced.vault.leaf_hashes()) == size + 1
