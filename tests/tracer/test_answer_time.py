"""Answer-time currency, normalizer choice and the per-citation revalidation, through real vaults.

The seed case: an assistant whose index lagged kept quoting "thirty days" after the
policy said fourteen. Every verdict here is read from the engine the CLI and TUI call.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import Case, manifest, new_case, passage, revision, signed
from tracer.engine.answertime import answer_time_sentence
from tracer.engine.catalog import impact, revalidate
from tracer.engine.serialize import trace_json
from tracer.engine.textnorm2 import NORMALIZER_V2, parse_structure2
from tracer.engine.trace import AnswerTrace, Tracer

SENTENCE = "Customers may request a refund within thirty days of delivery."
FOURTEEN = SENTENCE.replace("thirty", "fourteen")
SEVEN = SENTENCE.replace("thirty", "seven")
DOC = "# Returns policy\n\n## Refund window\n\n{}\n\nRefunds are paid within five business days.\n"
INTRO = "# Returns policy\n\n## Introduction\n\nHow returns work.\n\n## Refund window\n\n{}\n"
ANSWER = "You can get a refund within thirty days of delivery."
GENERATED = "2026-02-01T10:00:00Z"


@pytest.fixture
def case(tmp_path: Path) -> Any:
    c = new_case(tmp_path / "vault")
    yield c
    c.close()


def rev(name: str, content: str, at: str) -> dict[str, Any]:
    return revision("refund-policy", name, content, at)


def build(case: Case, cited: dict[str, Any], *later: dict[str, Any], generated_at: str = GENERATED) -> None:
    draft = manifest("ans-1", ANSWER, [passage(cited, "thirty")], generated_at=generated_at)
    report = case.ingest(cited, *later, signed(case, draft))
    assert report.ok, report.to_json()


def trace(case: Case, normalizer: str = "recorded") -> AnswerTrace:
    s = case.session("ines")
    try:
        return Tracer(s, normalizer).trace("ans-1", record=False)
    finally:
        s.close()


def test_index_lag_of_days_is_superseded_with_the_lag_and_the_revision(case: Case) -> None:
    build(
        case,
        rev("r1", DOC.format(SENTENCE), "2026-01-05T00:00:00Z"),
        rev("r2", DOC.format(FOURTEEN), "2026-01-11T00:00:00Z"),
    )
    t = trace(case)
    at = t.passages[0].currency.answer_time
    assert at is not None
    assert (at.state, at.reason) == ("superseded", "changed_before_answer")
    assert at.changed_in is not None and at.changed_in.revision == "r2"
    assert at.seconds_before_answer == 21 * 86400 + 10 * 3600
    assert t.answer_time == "superseded" and t.citations[0].answer_time == "superseded"
    assert (
        "revision r2, published 21 days before this answer, already said otherwise"
        in answer_time_sentence(at)
    )
    # Today's currency is a separate fact; the revision in force then is the current one,
    # so its text is shown once, in the current-revision block, not repeated.
    pj = trace_json(t)["passages"][0]
    assert pj["currency"]["state"] == "stale"
    assert pj["currency"]["current_revision"]["excerpt"] == FOURTEEN
    aj = pj["answer_time"]
    assert aj["in_force"]["revision"] == "r2" and aj["in_force"]["is_current"] is True
    assert aj["in_force"]["excerpt"] is None
    assert aj["changed_in"]["seconds_before_answer"] == 21 * 86400 + 10 * 3600
    assert "fourteen" not in json.dumps(aj)


def test_the_revision_in_force_then_is_shown_apart_when_it_is_not_the_current_one(case: Case) -> None:
    build(
        case,
        rev("r1", DOC.format(SENTENCE), "2026-01-05T00:00:00Z"),
        rev("r2", DOC.format(FOURTEEN), "2026-01-11T00:00:00Z"),
        rev("r3", DOC.format(SEVEN), "2026-03-01T00:00:00Z"),
    )
    pj = trace_json(trace(case))["passages"][0]
    assert pj["currency"]["current_revision"]["excerpt"] == SEVEN
    in_force = pj["answer_time"]["in_force"]
    assert (in_force["revision"], in_force["is_current"], in_force["excerpt"]) == ("r2", False, FOURTEEN)
    assert in_force["label"] == "revision r2 in force when the answer was generated (2026-01-11T00:00:00Z)"
    assert pj["retrieved"]["text"] == SENTENCE


def test_lag_counts_from_the_first_revision_that_stopped_saying_it(case: Case) -> None:
    build(
        case,
        rev("r1", DOC.format(SENTENCE), "2026-01-05T00:00:00Z"),
        rev("r2", INTRO.format(SENTENCE), "2026-01-08T00:00:00Z"),
        rev("r3", INTRO.format(FOURTEEN), "2026-01-20T00:00:00Z"),
        rev("r4", INTRO.format(FOURTEEN) + "\nContact us.\n", "2026-01-25T00:00:00Z"),
    )
    at = trace(case).passages[0].currency.answer_time
    assert at is not None and at.reason == "changed_before_answer"
    assert at.changed_in is not None and at.changed_in.revision == "r3"
    assert at.in_force is not None and at.in_force.revision == "r4"


def test_superseded_but_still_saying_it(case: Case) -> None:
    build(
        case,
        rev("r1", DOC.format(SENTENCE), "2026-01-05T00:00:00Z"),
        rev("r2", INTRO.format(SENTENCE), "2026-01-08T00:00:00Z"),
    )
    t = trace(case)
    at = t.passages[0].currency.answer_time
    assert at is not None and (at.state, at.reason) == ("superseded", "unchanged_before_answer")
    assert t.passages[0].currency.state == "moved"


def test_current_at_answer_even_if_changed_since(case: Case) -> None:
    build(
        case,
        rev("r1", DOC.format(SENTENCE), "2026-01-05T00:00:00Z"),
        rev("r2", DOC.format(FOURTEEN), "2026-03-01T00:00:00Z"),
    )
    t = trace(case)
    at = t.passages[0].currency.answer_time
    assert at is not None and (at.state, at.reason) == ("current", "latest_at_answer")
    assert t.currency == "stale" and t.answer_time == "current"


def test_commit_instants_decide_not_arrival_order_and_offsets_are_echoed_in_utc(case: Case) -> None:
    # r2 arrives first in the log but was committed later; r1's offset is +02:00.
    r1 = rev("r1", DOC.format(SENTENCE), "2026-01-05T02:00:00+02:00")
    r2 = rev("r2", DOC.format(FOURTEEN), "2026-01-11T00:00:00Z")
    draft = manifest("ans-1", ANSWER, [passage(r1, "thirty")], generated_at="2026-02-01T12:00:00+02:00")
    assert case.ingest(r2, r1, signed(case, draft)).ok
    t = trace(case)
    pj = trace_json(t)
    assert pj["generated_at"] == "2026-02-01T10:00:00Z"
    cur = pj["passages"][0]["currency"]
    assert cur["cited_revision"]["committed_at"] == "2026-01-05T00:00:00Z"
    assert cur["current_revision"]["revision"] == "r2"
    assert pj["passages"][0]["answer_time"]["state"] == "superseded"


def test_cited_revision_dated_after_the_answer_is_unknown(case: Case) -> None:
    build(case, rev("r1", DOC.format(SENTENCE), "2026-03-05T00:00:00Z"))
    at = trace(case).passages[0].currency.answer_time
    assert at is not None and (at.state, at.reason) == ("unknown", "cited_after_answer")


def test_revalidate_carries_per_citation_verdicts_and_selects_superseded(case: Case) -> None:
    r1 = rev("r1", DOC.format(SENTENCE), "2026-01-05T00:00:00Z")
    r2 = rev("r2", DOC.format(FOURTEEN), "2026-01-11T00:00:00Z")
    late = manifest("ans-2", ANSWER, [passage(r1, "thirty")], generated_at="2026-01-06T00:00:00Z")
    build(case, r1, r2, signed(case, late))
    s = case.session("ines")
    try:
        everything = revalidate(s).to_json()
        only = revalidate(s, superseded_only=True).to_json()
        imp = impact(s, document="refund-policy", superseded_only=True).to_json()
    finally:
        s.close()
    assert everything["counts"]["answer_time"] == {"superseded": 1, "current": 1}
    by_id = {a["answer_id"]: a for a in everything["answers"]}
    verdicts = by_id["ans-1"]["citation_verdicts"]
    assert verdicts is not None
    v = verdicts[0]
    assert (v["currency"], v["answer_time"]) == ("stale", "superseded")
    p = v["passages"][0]
    assert p["currency"] == {"state": "stale", "reason": "quote_changed"}
    assert p["normalizer"] == p["recorded_normalizer"] == "tracer-norm/1"
    assert p["locator"] is not None and p["new_locator"] is not None
    assert p["locator"]["char_start"] == passage(r1, "thirty")["locator"]["char_start"]
    assert p["new_locator"]["heading_path"] == ["Returns policy", "Refund window"]
    assert p["answer_time"] == {"state": "superseded", "reason": "changed_before_answer"}
    assert by_id["ans-2"]["answer_time"] == "current"
    assert [a["answer_id"] for a in only["answers"]] == ["ans-1"]
    assert only["selection"] == "answered_from_superseded"
    assert [a["answer_id"] for a in imp["answers"]] == ["ans-1"]


EMPH = "# Terms\n\n## 9. Advertising\n\nYou *must not* post **adverts** in profiles.\n"


def test_v1_citations_stay_v1_unless_v2_is_asked_for(case: Case) -> None:
    r1 = revision("terms", "r1", EMPH, "2026-01-05T00:00:00Z")
    r2 = revision(
        "terms", "r2", EMPH.replace("*must not*", "_must not_").replace("9.", "10."), "2026-03-01T00:00:00Z"
    )
    draft = manifest("ans-1", "No adverts.", [passage(r1, "adverts")])
    assert case.ingest(r1, r2, signed(case, draft)).ok
    v1 = trace(case).passages[0].currency
    assert (v1.state, v1.normalizer) == ("stale", "tracer-norm/1")
    v2 = trace(case, NORMALIZER_V2)
    c = v2.passages[0].currency
    assert (c.state, c.reason, c.normalizer) == ("moved", "relocated_renumbered_section", NORMALIZER_V2)
    pj = trace_json(v2)["passages"][0]
    assert pj["currency"]["normalizer"] == NORMALIZER_V2
    assert pj["chain"] is not None and pj["chain"]["normalizer_version"] == "tracer-norm/1"
    assert pj["currency"]["current_revision"]["excerpt"] == "You must not post adverts in profiles."


def test_a_passage_recorded_under_v2_is_traced_and_checked_under_v2(case: Case) -> None:
    r1 = revision("terms", "r1", EMPH, "2026-01-05T00:00:00Z")
    r2 = revision("terms", "r2", EMPH.replace("**adverts**", "__adverts__"), "2026-03-01T00:00:00Z")
    block = next(b for b in parse_structure2(EMPH).blocks if "adverts" in b.text)
    ps = passage(r1, "adverts")
    ps.update(
        normalizer_version=NORMALIZER_V2,
        retrieved_text=block.text,
        locator={
            "heading_path": list(block.heading_path),
            "paragraph": block.index,
            "char_start": block.start,
            "char_end": block.end,
        },
    )
    assert case.ingest(r1, r2, signed(case, manifest("ans-1", "No adverts.", [ps]))).ok
    p = trace(case).passages[0]
    assert p.transform.state == "found_at_locator"
    assert (p.currency.state, p.currency.reason, p.currency.normalizer) == (
        "verified",
        "normalized_identical",
        NORMALIZER_V2,
    )


def test_an_unknown_normalizer_is_unchecked_not_compared_under_v1(case: Case) -> None:
    r1 = revision("terms", "r1", EMPH, "2026-01-05T00:00:00Z")
    ps = passage(r1, "adverts", normalizer_version="acme-norm/7")
    assert case.ingest(r1, signed(case, manifest("ans-1", "No adverts.", [ps]))).ok
    p = trace(case).passages[0]
    assert (p.currency.state, p.currency.reason) == ("unchecked", "unknown_normalizer")
    assert p.transform.state == "unknown_normalizer"
