"""`tracer-norm/2` recorded natively: the SDK's default; `/1` still recorded on request
and checked as recorded."""

from __future__ import annotations

import base64
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import Case
from tests.producer.conftest import ingest_files, source_revision, trace_of
from tests.producer.test_recorder import AUTH, QUESTION
from tracer.producer import Recorder, RecordError, chunks, locate
from tracer.producer.locate import DEFAULT_NORMALIZER

DOC_A = (
    "# Returns\n\n## Refund window\n\n"
    "Customers may request a refund within thirty days of delivery.\n\n"
    "- Gift cards are never refunded.\n- Sale items are final.\n"
)
# B changes the Markdown only: emphasis, and the list written with other markers
DOC_B = (
    "# Returns\n\n## Refund window\n\n"
    "Customers may request a **refund** within *thirty days* of delivery.\n\n"
    "* Gift cards are never refunded.\n* Sale items are final.\n"
)


def _passage(path: Path) -> dict[str, Any]:
    doc = json.loads(path.read_text())
    (passage,) = json.loads(base64.b64decode(doc["envelope"]["payload"]))["passages"]
    return dict(passage)


def _record(recorder: Recorder, answer_id: str) -> Path:
    rev = source_revision("returns", DOC_A)
    para = chunks(DOC_A)[0].text
    with recorder.start(QUESTION, AUTH, "support", answer_id=answer_id) as rec:
        p = rec.retrieved(para, rev, rank=1, score=0.9, query=QUESTION)
        rec.sent(f"Context: {para}")
        rec.answer("Within thirty days of delivery.")
        rec.cite_text("thirty days", p)
    return next(recorder.outbox.directory.glob(f"answer-{answer_id}-*.json"))


def _as(recorder: Recorder, version: str) -> Recorder:
    return Recorder(
        recorder.signer,
        recorder.outbox,
        recorder.producer,
        recorder.runtime,
        clock=recorder.clock,
        normalizer_version=version,
    )


def test_norm2_is_the_default_and_a_markdown_only_edit_is_no_change(case: Case, recorder: Recorder) -> None:
    assert DEFAULT_NORMALIZER == recorder.normalizer_version == "tracer-norm/2"
    new = _record(recorder, "ans-v2")
    old = _record(_as(recorder, "tracer-norm/1"), "ans-v1")
    p2, p1 = _passage(new), _passage(old)
    assert (p2["normalizer_version"], p1["normalizer_version"]) == ("tracer-norm/2", "tracer-norm/1")
    # the reference chunk is claimed under both: it is one /1 paragraph block
    assert p2["chunk"]["pipeline_version"] == p1["chunk"]["pipeline_version"] == "tracer-para-chunker/1"
    assert p2["chunk"]["chunk_id"] == p1["chunk"]["chunk_id"] == "returns#0"
    a = source_revision("returns", DOC_A)
    b = replace(source_revision("returns", DOC_B, rev="B"), committed_at="2026-03-01T00:00:00Z")
    revs = [recorder.write_revision(a), recorder.write_revision(b)]
    report = ingest_files(case, *revs, new, old)
    assert report.ok and not report.faults, report.to_json()
    v2, v1 = trace_of(case, "ans-v2"), trace_of(case, "ans-v1")
    assert v2.integrity == v1.integrity == "intact"
    (q2,), (q1,) = v2.passages, v1.passages
    assert (q2.currency.state, q2.currency.normalizer) == ("verified", "tracer-norm/2")
    # the /1 evidence is checked as recorded: under /1 the emphasis is a change
    assert (q1.currency.state, q1.currency.normalizer) == ("stale", "tracer-norm/1")


def test_a_list_item_is_located_under_norm2_and_not_claimed_as_a_reference_chunk(
    case: Case, recorder: Recorder
) -> None:
    rev = source_revision("returns", DOC_A)
    item = "Gift cards are never refunded."
    loc = locate(DOC_A, item, normalizer_version="tracer-norm/2")
    with recorder.start(QUESTION, AUTH, "support", answer_id="ans-item") as rec:
        with pytest.raises(RecordError, match="chunk_id is required"):
            rec.retrieved(item, rev, rank=1, score=0.9, query=QUESTION)
        p = rec.retrieved(item, rev, rank=1, score=0.9, query=QUESTION, chunk_id="returns-gift")
        assert p.locator == loc and p.chunker.version == "unspecified"
        rec.sent(f"Context: {item}")
        rec.answer("Gift cards are never refunded.")
        rec.cite(0, 30, p)
    path = next(recorder.outbox.directory.glob("answer-ans-item-*.json"))
    report = ingest_files(case, recorder.write_revision(rev), path)
    assert report.ok and not report.faults, report.to_json()
    t = trace_of(case, "ans-item")
    assert (t.integrity, t.currency) == ("intact", "verified")


def test_an_unknown_normalizer_is_refused_at_the_recorder(recorder: Recorder) -> None:
    with pytest.raises(RecordError, match="normalizer_version"):
        _as(recorder, "tracer-norm/9")
