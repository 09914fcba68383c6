"""A transform failure is in the answer's header, at every layer, not only in the passage
details: the engine's trace, its JSON, the CLI's header and the TUI's answer header.

The case is issue 26's: revision `A` of a document was ingested, then a pipeline reused
the id `A` for edited text and signed an answer from that text; the vault's `A` does not
hold the retrieved passage, so its integrity and currency alone would read INTACT."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.helpers import Case, manifest, passage, revision, signed
from tracer.cli.render import print_trace
from tracer.engine.serialize import trace_json
from tracer.engine.session import Session
from tracer.engine.trace import AnswerTrace, Tracer
from tracer.engine.transform import TRANSFORM_FAILURES
from tracer.engine.vocabulary import FindingKind
from tracer.tui.widgets.answer_head import answer_head

A = "# Returns policy\n\n## Refund window\n\nCustomers may request a refund within thirty days of delivery.\n"
EDITED = A.replace("request a refund", "ask for their money back")


def _traces(case: Case, edited: bool) -> Iterator[tuple[AnswerTrace, Session]]:
    stored = revision("returns", "A", A, "2026-01-05T00:00:00Z")
    used = revision("returns", "A", EDITED if edited else A, "2026-01-05T00:00:00Z")
    draft = manifest("ans-1", "Refunds are accepted for thirty days.", [passage(used, "thirty days")])
    assert case.ingest(stored, signed(case, draft)).ok
    s = case.session("ines")
    try:
        yield Tracer(s).trace("ans-1", record=False), s
    finally:
        s.close()


def test_the_failures_are_the_transform_findings_verify_reports() -> None:
    kinds = {k.value for k in FindingKind if k.value.startswith("transform_")}
    assert {f"transform_{s}" for s in TRANSFORM_FAILURES} == kinds
    assert TRANSFORM_FAILURES[0] == "not_found"


def test_a_reused_revision_id_shows_in_the_header_at_every_layer(
    case: Case, capsys: pytest.CaptureFixture[str]
) -> None:
    for t, session in _traces(case, edited=True):
        assert t.integrity == "intact" and t.passages[0].transform.state == "not_found"
        assert t.transform == "not_found"
        assert [p.passage_id for p in t.transform_failures] == ["p1"]
        j = trace_json(t)
        assert j["transform"] == "not_found"
        assert j["transform_failures"][0]["passage_id"] == "p1"
        assert j["transform_failures"][0]["state"] == "not_found"
        print_trace(t, session)
        header = capsys.readouterr().out.split("\n  generated ", 1)[0]
        assert "transform: NOT_FOUND — passage p1 not_found" in header
        head = answer_head(t).plain
        assert "integrity intact" in head and "transform not_found (p1)" in head


def test_a_sound_chain_says_nothing_extra(case: Case, capsys: pytest.CaptureFixture[str]) -> None:
    for t, session in _traces(case, edited=False):
        assert t.transform is None and t.transform_failures == []
        assert trace_json(t)["transform"] is None
        print_trace(t, session)
        assert "transform:" not in capsys.readouterr().out.split("\n  generated ", 1)[0]
        assert "transform" not in answer_head(t).plain
