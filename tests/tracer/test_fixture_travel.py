"""Fixture 4 of docs/fixtures.md: the travel allowance, whose source revision retention purged.

The retrieved passage is retained and still verifies against its own digest; the cited
revision's content is gone, and a tombstone (digest, policy, reason, who, when) stands
where its text would be, never a later revision's text.  When the purged revision is the
latest one, today's wording cannot be read at all: `unavailable (latest_revision_purged)`.
"""

from __future__ import annotations

import json
from typing import Any

from store import admin
from store.crypto import sha256_hex
from tests.helpers import Case, manifest, passage, revision, signed
from tracer.engine.catalog import impact
from tracer.engine.serialize import trace_json
from tracer.engine.trace import AnswerTrace, Tracer
from tracer.engine.verify import verify

SENTENCE = "Employees travelling abroad receive a daily allowance of 60 EUR."
V1 = f"# Travel policy\n\n## Allowances\n\n{SENTENCE}\n\nHotels are booked through the travel desk.\n"
V2 = V1.replace("## Allowances", "## Scope\n\nThis policy covers business travel.\n\n## Allowances")
V3 = V1.replace("60 EUR", "45 EUR")
ANSWER = "You get 60 EUR per day when travelling abroad."
POLICY, REASON, WHO, WHEN = (
    "retention-3y",
    "source revisions older than three years",
    "records-office",
    "2026-05-01T00:00:00Z",
)


def rev(name: str, content: str, at: str) -> dict[str, Any]:
    return revision("travel-allowance", name, content, at, collection="hr", title="Travel allowance")


def build(case: Case, *later: dict[str, Any]) -> dict[str, Any]:
    v1 = rev("v1", V1, "2026-01-01T00:00:00Z")
    draft = manifest("ans-travel", ANSWER, [passage(v1, SENTENCE)], collection="hr")
    report = case.ingest(v1, *later, signed(case, draft))
    assert report.ok, report.to_json()
    return v1


def purge(case: Case, digest: str) -> int:
    return admin.purge(case.vault, case.custodian, digest, POLICY, REASON, WHO, WHEN)


def trace(case: Case) -> AnswerTrace:
    s = case.session("ines")
    try:
        return Tracer(s).trace("ans-travel")
    finally:
        s.close()


def test_purged_cited_revision_shows_a_tombstone_and_the_passage_still_verifies(case: Case) -> None:
    build(case, rev("v2", V2, "2026-03-01T00:00:00Z"))
    digest = sha256_hex(V1.encode())
    seq = purge(case, digest)
    t = trace(case)
    p = t.passages[0]
    assert p.integrity == "intact"
    assert p.retrieved.text == SENTENCE and p.retrieved.recomputed == p.retrieved.digest
    ct = p.currency.cited_text
    assert ct is not None and ct.state == "purged" and ct.text is None
    assert ct.tombstone is not None
    assert (ct.tombstone.seq, ct.tombstone.digest, ct.tombstone.policy) == (seq, digest, POLICY)
    assert (ct.tombstone.reason, ct.tombstone.authorizer, ct.tombstone.effective_at) == (REASON, WHO, WHEN)
    # Currency still works from the retained passage: v2 moved the sentence down.
    assert (p.currency.state, p.currency.reason) == ("moved", "relocated_same_section")
    assert p.transform.state == "revision_unreadable"
    content = trace_json(t)["passages"][0]["currency"]["cited_revision"]["content"]
    assert content["state"] == "purged" and "text" not in content
    assert content["tombstone"] == {
        "seq": seq,
        "digest": digest,
        "policy": POLICY,
        "reason": REASON,
        "authorizer": WHO,
        "effective_at": WHEN,
    }
    assert t.integrity == "intact"


def test_purged_latest_revision_makes_currency_unavailable(case: Case) -> None:
    build(case)
    purge(case, sha256_hex(V1.encode()))
    t = trace(case)
    p = t.passages[0]
    assert (p.currency.state, p.currency.reason) == ("unavailable", "latest_revision_purged")
    assert p.currency.current_excerpt is None
    assert p.integrity == "intact" and p.retrieved.text == SENTENCE
    assert t.currency == "unavailable"
    assert "current_revision" not in trace_json(t)["passages"][0]["currency"]


def test_purged_older_revision_does_not_hide_a_later_change(case: Case) -> None:
    build(case, rev("v3", V3, "2026-03-01T00:00:00Z"))
    purge(case, sha256_hex(V1.encode()))
    p = trace(case).passages[0]
    assert (p.currency.state, p.currency.reason) == ("stale", "quote_changed")
    assert p.currency.relocation is not None and p.currency.relocation.old_excerpt == SENTENCE
    assert p.currency.current_excerpt == SENTENCE.replace("60", "45")


def test_purged_passage_text_is_a_tombstone_never_the_revision_text(case: Case) -> None:
    build(case)
    digest = sha256_hex(SENTENCE.encode())
    purge(case, digest)
    t = trace(case)
    p = t.passages[0]
    assert p.retrieved.state == "purged" and p.retrieved.text is None
    assert p.retrieved.tombstone is not None and p.retrieved.tombstone.policy == POLICY
    assert p.integrity == "purged"
    # The cited revision is retained, so currency is still checked (from the revision at its locator).
    assert p.currency.state == "verified"
    j = trace_json(t)["passages"][0]
    assert j["retrieved"]["text"] is None and j["retrieved"]["tombstone"]["digest"] == digest
    assert SENTENCE not in json.dumps({k: v for k, v in j.items() if k not in ("currency",)})


def test_verify_is_clean_after_a_legitimate_purge(case: Case) -> None:
    build(case, rev("v2", V2, "2026-03-01T00:00:00Z"))
    purge(case, sha256_hex(V1.encode()))
    s = case.session("ines")
    report = verify(s.vault, s)
    s.close()
    assert report.ok, [f.to_json() for f in report.findings]
    assert report.counts["purged"] == 1
    assert report.counts.get("missing", 0) == 0


def test_impact_of_the_tombstoned_digest_lists_the_answer(case: Case) -> None:
    build(case, rev("v2", V2, "2026-03-01T00:00:00Z"))
    digest = sha256_hex(V1.encode())
    purge(case, digest)
    s = case.session("ines")
    result = impact(s, digest=digest)
    s.close()
    assert [a.row.answer_id for a in result.answers] == ["ans-travel"]
    assert result.target == f"digest {digest}"


def test_purged_cited_revision_does_not_let_a_qualified_sentence_pass(case: Case) -> None:
    """Without the cited text, "60 EUR" must still not be found inside "60 EUR for trips in the EU"."""
    bare = "Daily allowance abroad: 60 EUR"
    v1 = rev("v1", f"# Travel policy\n\n## Allowances\n\n{bare}\n", "2026-01-01T00:00:00Z")
    v2 = rev(
        "v2",
        f"# Travel policy\n\n## Allowances\n\n{bare} for trips inside the EU only\n",
        "2026-03-01T00:00:00Z",
    )
    draft = manifest("ans-travel", ANSWER, [passage(v1, bare)], collection="hr")
    assert case.ingest(v1, v2, signed(case, draft)).ok
    purge(case, sha256_hex(v1["content"].encode()))
    p = trace(case).passages[0]
    assert p.currency.cited_text is not None and p.currency.cited_text.state == "purged"
    assert (p.currency.state, p.currency.reason) == ("stale", "quote_changed")
    assert p.currency.current_excerpt == f"{bare} for trips inside the EU only"
