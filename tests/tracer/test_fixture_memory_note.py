"""Fixture 3 of docs/fixtures.md: a memory note built from one public and one restricted draft.

An answer that cites the note (a passage with `derived_from` and the manifest's
`lineage`) takes the strictest state found anywhere below it.  A viewer who may not see
the restricted draft sees `unavailable` for the whole claim, and nothing of the
restricted passage (sentence, title, path) appears anywhere in the trace.  Lineage
cycles are reported, never looped.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from store import admin
from store.crypto import sha256_hex
from tests.helpers import Case, manifest, new_case, passage, revision, signed
from tracer.engine.catalog import revalidate
from tracer.engine.serialize import trace_json
from tracer.engine.trace import LineageNode, Tracer
from tracer.engine.vocabulary import Currency

PUBLIC_SENTENCE = "Every new hire receives a laptop on their first day."
RESTRICTED_SENTENCE = "Senior engineers start at salary band E5 with a 12 percent bonus."
RESTRICTED_TITLE = "Compensation bands 2026 (restricted)"
RESTRICTED_PATH = "policies/compensation-bands.md"

PUBLIC_DOC = (
    f"# Onboarding\n\n## First day\n\n{PUBLIC_SENTENCE}\n\n## Badges\n\nBadges are issued at reception.\n"
)
RESTRICTED_DOC = f"# Compensation\n\n## Engineering\n\n{RESTRICTED_SENTENCE}\n"
RESTRICTED_DOC_2 = RESTRICTED_DOC.replace("12 percent", "8 percent")

NOTE_TEXT = f"Onboarding memory: {PUBLIC_SENTENCE} {RESTRICTED_SENTENCE}"
ANSWER_TEXT = "New engineers get a laptop on day one; ask HR about your band."


@pytest.fixture
def scoped(tmp_path: Any) -> Any:
    c = new_case(tmp_path / "vault", {"ines": ["*"], "pat": ["public", "support"]})
    yield c
    c.close()


def public_rev() -> dict[str, Any]:
    return revision("onboarding", "v1", PUBLIC_DOC, "2026-01-02T00:00:00Z", collection="public")


def restricted_rev(
    content: str = RESTRICTED_DOC, rev: str = "v1", at: str = "2026-01-03T00:00:00Z"
) -> dict[str, Any]:
    r = revision("compensation", rev, content, at, collection="restricted", title=RESTRICTED_TITLE)
    r["path"] = RESTRICTED_PATH
    return r


def note_passage(note_id: str, text: str, passage_id: str = "p-note") -> dict[str, Any]:
    """A passage whose stored text is a note's stored text (derived_from the note)."""
    pseudo = revision(f"memory-{note_id}", note_id, text, "2026-01-10T00:00:00Z", collection="public")
    pseudo["source_system"] = "assistant-memory"
    pseudo["path"] = f"memory/{note_id}"
    return passage(pseudo, text[:20], passage_id, derived_from=note_id)


def note(
    note_id: str, text: str, passages: list[dict[str, Any]], lineage: list[str] | None = None
) -> dict[str, Any]:
    return manifest(
        note_id,
        text,
        passages,
        collection="public",
        kind="note",
        lineage=lineage or [],
        generated_at="2026-01-10T00:00:00Z",
    )


def build(case: Case, later: list[dict[str, Any]] | None = None) -> None:
    pub, res = public_rev(), restricted_rev()
    n = note(
        "note-onboarding",
        NOTE_TEXT,
        [passage(pub, PUBLIC_SENTENCE, "p-public"), passage(res, RESTRICTED_SENTENCE, "p-restricted")],
    )
    a = manifest(
        "ans-onboarding",
        ANSWER_TEXT,
        [note_passage("note-onboarding", NOTE_TEXT)],
        lineage=["note-onboarding"],
        generated_at="2026-02-01T10:00:00Z",
    )
    report = case.ingest(pub, res, *(later or []), signed(case, n), signed(case, a))
    assert report.ok, report.to_json()


def test_full_viewer_sees_both_drafts_and_verified(scoped: Case) -> None:
    build(scoped)
    s = scoped.session("ines")
    tr = Tracer(s)
    t = tr.trace("ans-onboarding")
    n = tr.trace("note-onboarding")
    s.close()
    assert [p.currency.state for p in n.passages] == ["verified", "verified"]
    assert n.visible and n.currency == "verified" and n.integrity == "intact"
    assert t.visible and t.currency == "verified" and t.integrity == "intact"
    p = t.passages[0]
    assert p.derived_from == "note-onboarding"
    assert (p.currency.state, p.currency.reason) == ("unchecked", "derived_text")
    assert p.effective_currency == "verified"
    assert p.transform.state == "matches_source"
    assert p.retrieved.text == NOTE_TEXT
    assert [x.answer_id for x in t.lineage] == ["note-onboarding"]
    assert t.lineage[0].kind == "note" and t.lineage[0].currency == "verified"


def test_answer_inherits_the_strictest_state_of_the_note(scoped: Case) -> None:
    build(scoped, [restricted_rev(RESTRICTED_DOC_2, "v2", "2026-03-01T00:00:00Z")])
    s = scoped.session("ines")
    tr = Tracer(s)
    t = tr.trace("ans-onboarding")
    n = tr.trace("note-onboarding")
    s.close()
    assert [p.currency.state for p in n.passages] == ["verified", "stale"]
    assert n.currency == "stale"
    assert t.passages[0].effective_currency == "stale"
    assert t.citations[0].currency == "stale"
    assert t.currency == "stale"
    # The note's own stale passage keeps its old and current excerpts apart.
    c = n.passages[1].currency
    assert c.relocation is not None and c.relocation.old_excerpt == RESTRICTED_SENTENCE
    assert c.current_excerpt is not None and "8 percent" in c.current_excerpt
    assert n.passages[1].retrieved.text == RESTRICTED_SENTENCE


def test_answer_inherits_purged_integrity_from_the_note(scoped: Case) -> None:
    build(scoped)
    digest = sha256_hex(RESTRICTED_SENTENCE.encode())
    admin.purge(
        scoped.vault, scoped.custodian, digest, "hr-retention-2y", "expired", "dpo", "2026-05-01T00:00:00Z"
    )
    s = scoped.session("ines")
    t = Tracer(s).trace("ans-onboarding")
    s.close()
    assert t.passages[0].integrity == "intact"
    assert t.passages[0].effective_integrity == "purged"
    assert t.citations[0].integrity == "purged"
    assert t.integrity == "purged"
    assert t.lineage[0].integrity == "purged"


def test_out_of_scope_viewer_sees_unavailable_and_nothing_restricted(scoped: Case) -> None:
    build(scoped)
    s = scoped.session("pat")
    tr = Tracer(s)
    t = tr.trace("ans-onboarding")
    n = tr.trace("note-onboarding")
    rv = revalidate(s)
    s.close()
    assert t.currency == "unavailable"
    assert [c.currency for c in t.citations] == ["unavailable"]
    assert not t.visible and t.answer.text is None and t.citations[0].span is None
    p = t.passages[0]
    assert not p.visible and p.retrieved.text is None and p.effective_currency == "unavailable"
    assert t.lineage == [
        LineageNode("note-onboarding", "note", t.lineage[0].integrity, Currency.UNAVAILABLE, False)
    ]
    assert not n.visible and n.currency == "unavailable"
    assert all(x.retrieved.text is None for x in n.passages if x.collection == "restricted")
    by_id = {a.row.answer_id: a.summary for a in rv.answers}
    assert by_id["ans-onboarding"].currency == "unavailable"
    assert by_id["note-onboarding"].currency == "unavailable"
    for doc in (trace_json(t), trace_json(n), rv.to_json()):
        dumped = json.dumps(doc, ensure_ascii=False)
        for secret in (
            RESTRICTED_SENTENCE,
            RESTRICTED_TITLE,
            RESTRICTED_PATH,
            "compensation",
            "Compensation",
        ):
            assert secret not in dumped
        assert NOTE_TEXT not in dumped
    # The public draft passage of the note is public evidence and stays visible.
    pub = next(x for x in n.passages if x.passage_id == "p-public")
    assert pub.visible and pub.retrieved.text == PUBLIC_SENTENCE


def test_in_scope_parts_of_an_ordinary_answer_stay_visible(scoped: Case) -> None:
    """Without lineage, scope is per claim: the out-of-scope citation alone is unavailable."""
    pub, res = public_rev(), restricted_rev()
    text = "Laptops come on day one. Bands are set by HR."
    a = manifest(
        "ans-mixed",
        text,
        [passage(pub, PUBLIC_SENTENCE, "p-public"), passage(res, RESTRICTED_SENTENCE, "p-restricted")],
        citations=[(0, 24, ["p-public"]), (25, len(text), ["p-restricted"])],
        collection="support",
    )
    assert scoped.ingest(pub, res, signed(scoped, a)).ok
    s = scoped.session("pat")
    t = Tracer(s).trace("ans-mixed")
    s.close()
    assert t.visible and t.answer.text == text
    assert [c.currency for c in t.citations] == ["verified", "unavailable"]
    dumped = json.dumps(trace_json(t), ensure_ascii=False)
    for secret in (RESTRICTED_SENTENCE, RESTRICTED_TITLE, RESTRICTED_PATH):
        assert secret not in dumped


def _cycle(case: Case) -> None:
    pub = public_rev()
    n1 = note("note-a", "A: " + PUBLIC_SENTENCE, [passage(pub, PUBLIC_SENTENCE, "p1")], lineage=["note-b"])
    n2 = note(
        "note-b",
        "B: " + PUBLIC_SENTENCE,
        [note_passage("note-a", "A: " + PUBLIC_SENTENCE)],
        lineage=["note-a"],
    )
    ans = manifest(
        "ans-cycle",
        "Laptop on day one.",
        [note_passage("note-b", "B: " + PUBLIC_SENTENCE)],
        lineage=["note-b"],
    )
    assert case.ingest(pub, signed(case, n1), signed(case, n2), signed(case, ans)).ok


def _cycle_flags(nodes: list[LineageNode]) -> list[tuple[str, bool]]:
    out: list[tuple[str, bool]] = []
    for n in nodes:
        out.append((n.answer_id, n.cycle))
        out += _cycle_flags(n.children)
    return out


def test_lineage_cycle_is_reported_not_looped(case: Case) -> None:
    _cycle(case)
    s = case.session("ines")
    tr = Tracer(s)
    a = tr.trace("note-a")
    b = tr.trace("note-b")
    ans = tr.trace("ans-cycle")
    s.close()
    assert "lineage_cycle" in a.reasons and "lineage_cycle" in b.reasons and "lineage_cycle" in ans.reasons
    assert ("note-a", True) in _cycle_flags(a.lineage)
    assert _cycle_flags(a.lineage) == [("note-b", False), ("note-a", True)]
    # A claim resting on circular provenance is never verified, and nothing is "missing".
    for t in (a, b, ans):
        assert t.currency == "unchecked"
        assert t.integrity == "intact"
    assert json.dumps(trace_json(ans))  # serializable, finite


def test_cycle_summaries_do_not_depend_on_the_order_they_are_asked(case: Case) -> None:
    _cycle(case)
    s = case.session("ines")
    first = Tracer(s)
    order1 = [first.summary(x) for x in ("note-a", "note-b", "ans-cycle")]
    second = Tracer(s)
    order2 = [second.summary(x) for x in ("ans-cycle", "note-b", "note-a")][::-1]
    s.close()
    assert [(x.integrity, x.currency, x.visible) for x in order1] == [
        (x.integrity, x.currency, x.visible) for x in order2
    ]
    assert all(not x.pending for x in order1 + order2)


def test_lineage_naming_an_unknown_answer_is_a_missing_alarm(case: Case) -> None:
    pub = public_rev()
    a = manifest("ans-orphan", "Laptop on day one.", [passage(pub, PUBLIC_SENTENCE)], lineage=["note-gone"])
    assert case.ingest(pub, signed(case, a)).ok
    s = case.session("ines")
    t = Tracer(s).trace("ans-orphan")
    s.close()
    assert t.integrity == "missing"
    assert "lineage_target_missing" in t.reasons
    assert t.lineage[0].kind == "missing"
