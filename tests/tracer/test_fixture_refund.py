"""Fixture 1 of docs/fixtures.md: the refund policy, four revisions, then deleted.

Every vault is built through `store.ingest` with producer-signed manifests, and every
verdict is read from `Tracer.trace` (the engine the CLI and TUI call), so the states,
reason codes and the split between historical and current text are the ones an
investigator sees.
"""

from __future__ import annotations

import json
import unicodedata
from typing import Any

import pytest

from tests.helpers import Case, manifest, passage, revision, signed
from tracer.engine.serialize import trace_json
from tracer.engine.trace import AnswerTrace, PassageTrace, Tracer

SENTENCE = "Customers may request a refund within thirty days of delivery."
CHANGED = "Customers may request a refund within fourteen days of delivery."

A = f"""# Returns policy

## Refund window

{SENTENCE}

Refunds are paid to the original payment method within five business days.

## Exchanges

Items may be exchanged for a different size within sixty days.
"""
INTRO = "## Introduction\n\nThis policy explains how returns, refunds and exchanges work.\n\n"
B = A.replace("## Refund window", INTRO + "## Refund window")
C = B.replace("thirty days", "fourteen days")
D_AGREES = B + f"\n## Appendix\n\n{SENTENCE}\n"
D_NO_AGREEMENT = D_AGREES.replace("## Refund window", "## Money back")
A_WHITESPACE = unicodedata.normalize(
    "NFD",
    A.replace("within thirty days", "within  thirty\n   days")
    .replace("\n", "\r\n")
    .replace("Returns policy", "Returns\u00a0policy")
    + "\r\n\r\n   \r\n",
)
ANSWER = "You can get a refund within thirty days of delivery."

DATES = {
    "A": "2026-01-05T00:00:00Z",
    "B": "2026-02-10T00:00:00Z",
    "C": "2026-03-15T00:00:00Z",
    "D": "2026-04-20T00:00:00Z",
    "W": "2026-02-01T00:00:00Z",
}


def rev(name: str, content: str) -> dict[str, Any]:
    return revision("refund-policy", name, content, DATES[name[0]], title="Refund policy")


def build(
    case: Case, cited: dict[str, Any], *later: dict[str, Any], extra: list[dict[str, Any]] | None = None
) -> None:
    draft = manifest("ans-refund", ANSWER, [passage(cited, SENTENCE)])
    report = case.ingest(cited, *later, signed(case, draft), *(extra or []))
    assert report.ok, report.to_json()


def trace_one(case: Case) -> tuple[AnswerTrace, PassageTrace]:
    s = case.session("ines")
    try:
        t = Tracer(s).trace("ans-refund")
    finally:
        s.close()
    return t, t.passages[0]


def assert_historical(p: PassageTrace) -> None:
    """The retrieved and model-input slots hold exactly the recorded passage."""
    assert p.integrity == "intact"
    assert p.retrieved.text == SENTENCE
    assert p.model_input.text == SENTENCE


def test_cited_revision_is_latest_verified(case: Case) -> None:
    build(case, rev("A", A))
    t, p = trace_one(case)
    assert (p.currency.state, p.currency.reason) == ("verified", "at_locator")
    assert p.transform.state == "found_at_locator"
    assert t.currency == "verified" and t.integrity == "intact"
    assert t.citations[0].span == ANSWER and t.citations[0].currency == "verified"
    assert_historical(p)


def test_inserted_intro_is_moved_with_old_and_new_locators(case: Case) -> None:
    ra = rev("A", A)
    build(case, ra, rev("B", B))
    t, p = trace_one(case)
    c = p.currency
    assert (c.state, c.reason) == ("moved", "relocated_same_section")
    assert c.cited is not None and c.cited.revision == "A"
    assert c.current is not None and c.current.revision == "B"
    old = passage(ra, SENTENCE)["locator"]
    new = passage(rev("B", B), SENTENCE)["locator"]
    assert old != new
    assert c.relocation is not None and c.relocation.locator is not None
    assert c.relocation.locator.char_start == new["char_start"]
    assert c.relocation.locator.paragraph == new["paragraph"]
    assert list(c.relocation.locator.heading_path) == new["heading_path"] == old["heading_path"]
    assert c.current_excerpt == SENTENCE
    assert_historical(p)
    # Both locators are reported in the JSON: the recorded one in the chain, the new one in currency.
    pj = trace_json(t)["passages"][0]
    assert pj["chain"] is not None and pj["chain"]["locator"] == old
    assert pj["currency"]["new_locator"]["char_start"] == new["char_start"]
    assert pj["currency"]["current_revision"]["revision"] == "B"
    assert t.currency == "moved"


def test_thirty_to_fourteen_is_stale_side_by_side(case: Case) -> None:
    build(case, rev("A", A), rev("B", B), rev("C", C))
    t, p = trace_one(case)
    c = p.currency
    assert (c.state, c.reason) == ("stale", "quote_changed")
    assert c.relocation is not None
    assert c.relocation.old_excerpt == SENTENCE
    assert c.current_excerpt == CHANGED
    assert_historical(p)
    pj = trace_json(t)["passages"][0]
    assert pj["currency"]["old_excerpt"] == SENTENCE
    cur = pj["currency"]["current_revision"]
    assert cur["excerpt"] == CHANGED
    assert cur["label"] == f"current revision C ({DATES['C']})"
    assert pj["retrieved"]["text"] == SENTENCE
    assert "fourteen" not in json.dumps({k: v for k, v in pj.items() if k != "currency"})
    assert t.currency == "stale" and t.citations[0].currency == "stale"


def test_duplicate_in_appendix_with_heading_agreement(case: Case) -> None:
    build(case, rev("B", B), rev("D", D_AGREES))
    _t, p = trace_one(case)
    assert p.currency.state in ("verified", "moved")
    assert p.currency.relocation is not None
    assert len(p.currency.relocation.candidates) == 2
    loc = p.currency.relocation.locator
    assert loc is not None and loc.heading_path == ("Returns policy", "Refund window")


def test_duplicate_in_appendix_with_heading_agreement_after_move(case: Case) -> None:
    build(case, rev("A", A), rev("D", D_AGREES))
    _t, p = trace_one(case)
    assert (p.currency.state, p.currency.reason) == ("moved", "relocated_same_section")


def test_duplicate_without_heading_agreement_is_ambiguous(case: Case) -> None:
    build(case, rev("A", A), rev("D", D_NO_AGREEMENT))
    t, p = trace_one(case)
    c = p.currency
    assert (c.state, c.reason) == ("ambiguous", "multiple_matches")
    assert c.relocation is not None and len(c.relocation.candidates) == 2
    assert c.current_excerpt is None  # no single place is claimed as the current text
    assert_historical(p)
    assert t.currency == "ambiguous"


def test_whitespace_only_edit_is_not_stale(case: Case) -> None:
    build(case, rev("A", A), rev("W", A_WHITESPACE))
    _t, p = trace_one(case)
    assert p.currency.state == "verified"
    assert p.currency.reason == "normalized_identical"
    assert_historical(p)


def test_deleted_document_is_unavailable(case: Case) -> None:
    deletion = {
        "schema": "tracer.document_deletion/v1",
        "document_id": "refund-policy",
        "deleted_at": "2026-05-01T00:00:00Z",
        "reason": "policy retired",
    }
    build(case, rev("A", A), rev("B", B), rev("C", C), extra=[deletion])
    t, p = trace_one(case)
    assert (p.currency.state, p.currency.reason) == ("unavailable", "source_deleted")
    assert p.currency.current_excerpt is None
    assert_historical(p)
    assert t.currency == "unavailable"
    pj = trace_json(t)["passages"][0]
    assert "current_revision" not in pj["currency"]


def test_revision_imported_after_deletion_revives_the_document(case: Case) -> None:
    deletion = {
        "schema": "tracer.document_deletion/v1",
        "document_id": "refund-policy",
        "deleted_at": "2026-03-01T00:00:00Z",
        "reason": "policy retired",
    }
    build(case, rev("A", A), extra=[deletion])
    case.ingest(rev("D", D_AGREES))
    _t, p = trace_one(case)
    assert p.currency.state == "moved"


def test_no_revisions_imported_is_unchecked(case: Case) -> None:
    draft = manifest("ans-refund", ANSWER, [passage(rev("A", A), SENTENCE)])
    assert case.ingest(signed(case, draft)).ok
    t, p = trace_one(case)
    assert (p.currency.state, p.currency.reason) == ("unchecked", "no_revisions_imported")
    assert p.transform.state == "revision_not_imported"
    assert_historical(p)
    assert t.currency == "unchecked"


def test_cited_revision_not_imported_is_unchecked(case: Case) -> None:
    draft = manifest("ans-refund", ANSWER, [passage(rev("A", A), SENTENCE)])
    assert case.ingest(rev("B", B), rev("C", C), signed(case, draft)).ok
    _t, p = trace_one(case)
    assert (p.currency.state, p.currency.reason) == ("unchecked", "cited_revision_not_imported")
    assert p.currency.current_excerpt is None
    assert_historical(p)


@pytest.mark.parametrize(
    ("later", "state"),
    [
        (["B"], "moved"),
        (["B", "C"], "stale"),
        (["B", "C", "D"], "moved"),
    ],
)
def test_only_the_latest_revision_decides(case: Case, later: list[str], state: str) -> None:
    contents = {"B": B, "C": C, "D": D_AGREES}
    build(case, rev("A", A), *[rev(n, contents[n]) for n in later])
    _t, p = trace_one(case)
    assert p.currency.state == state
    assert p.currency.current is not None and p.currency.current.revision == later[-1]


def test_latest_revision_is_decided_by_instant_not_by_string(case: Case) -> None:
    """B is later as a string ("2026-03-01T01:00+02:00") but earlier as an instant than C."""
    rb = revision("refund-policy", "B", B, "2026-03-01T01:00:00+02:00", title="Refund policy")
    rc = revision("refund-policy", "C", C, "2026-02-28T23:30:00Z", title="Refund policy")
    build(case, rev("A", A), rb, rc)
    _t, p = trace_one(case)
    assert p.currency.current is not None and p.currency.current.revision == "C"
    assert p.currency.state == "stale"
