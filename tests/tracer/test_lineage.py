"""Lineage: the order of strictness, chains, cycles, shared sources, scope, and cost.

A derived text is never more authoritative nor more widely visible than its weakest
source; the walk is memoized per run, and every loop is reported once and stopped.
"""

from __future__ import annotations

from typing import Any

import pytest

from store import queries
from tests.helpers import Case, manifest, new_case, passage, revision, signed
from tracer.engine.catalog import impact, revalidate
from tracer.engine.serialize import lineage_json, trace_json
from tracer.engine.states import strictest_currency, strictest_integrity
from tracer.engine.trace import LineageNode, Tracer
from tracer.engine.verify import verify
from tracer.engine.vocabulary import CURRENCY_MEANING, INTEGRITY_MEANING, Currency, Integrity

SENTENCE = "Customers may request a refund within thirty days of delivery."
DOC = f"# Returns policy\n\n## Refund window\n\n{SENTENCE}\n"
CHANGED = DOC.replace("thirty", "fourteen")


def rev(
    name: str = "A", content: str = DOC, at: str = "2026-01-05T00:00:00Z", collection: str = "support"
) -> dict[str, Any]:
    return revision("refund", name, content, at, collection=collection)


def derived(
    source_id: str, text: str, passage_id: str = "p-derived", collection: str = "support"
) -> dict[str, Any]:
    pseudo = revision(f"mem-{source_id}", source_id, text, "2026-01-10T00:00:00Z", collection=collection)
    return passage(pseudo, text[:10], passage_id, derived_from=source_id)


def note(
    note_id: str, text: str, passages: list[dict[str, Any]], lineage: list[str], collection: str = "support"
) -> dict[str, Any]:
    return manifest(note_id, text, passages, kind="note", lineage=lineage, collection=collection)


def names(nodes: list[LineageNode], depth: int = 0) -> list[tuple[int, str, bool, bool]]:
    out: list[tuple[int, str, bool, bool]] = []
    for n in nodes:
        out.append((depth, n.answer_id, n.cycle, n.shared))
        out += names(n.children, depth + 1)
    return out


def test_orders_of_strictness_are_total_and_documented() -> None:
    assert tuple(Integrity) == (
        "intact",
        "purged",
        "not_captured",
        "not_sent",
        "unavailable",
        "checksum_mismatch",
        "signature_invalid",
        "missing",
    )
    assert tuple(Currency) == ("verified", "moved", "unchecked", "ambiguous", "stale", "unavailable")
    assert set(INTEGRITY_MEANING) == set(Integrity) and set(CURRENCY_MEANING) == set(Currency)
    integrity, currency = tuple(Integrity), tuple(Currency)
    for i, a in enumerate(integrity):
        for j, b in enumerate(integrity):
            assert strictest_integrity([a, b]) is integrity[max(i, j)]
    for i, c in enumerate(currency):
        for j, d in enumerate(currency):
            assert strictest_currency([c, d]) is currency[max(i, j)]
    assert strictest_integrity([]) is Integrity.INTACT
    assert strictest_currency([]) is Currency.UNCHECKED


def test_chain_of_notes_takes_the_strictest_state(case: Case) -> None:
    ra = rev()
    n1 = note("note-1", "N1 " + SENTENCE, [passage(ra, "thirty")], [])
    n2 = note("note-2", "N2 " + SENTENCE, [derived("note-1", "N1 " + SENTENCE)], ["note-1"])
    ans = manifest("ans", "Thirty days.", [derived("note-2", "N2 " + SENTENCE)], lineage=["note-2"])
    assert case.ingest(
        ra, rev("C", CHANGED, "2026-03-01T00:00:00Z"), *(signed(case, x) for x in (n1, n2, ans))
    ).ok
    s = case.session()
    tr = Tracer(s)
    t = tr.trace("ans")
    s.close()
    assert t.currency == "stale" and t.integrity == "intact"
    assert t.passages[0].effective_currency == "stale"
    assert names(t.lineage) == [(0, "note-2", False, False), (1, "note-1", False, False)]
    assert [n.currency for n in (t.lineage[0], t.lineage[0].children[0])] == ["stale", "stale"]
    assert lineage_json(t.lineage)[0]["children"][0]["answer_id"] == "note-1"


def test_shared_source_is_expanded_once(case: Case) -> None:
    ra = rev()
    base = note("base", "B " + SENTENCE, [passage(ra, "thirty")], [])
    left = note("left", "L " + SENTENCE, [derived("base", "B " + SENTENCE)], ["base"])
    right = note("right", "R " + SENTENCE, [derived("base", "B " + SENTENCE)], ["base"])
    top = manifest(
        "top",
        "Thirty.",
        [derived("left", "L " + SENTENCE, "p1"), derived("right", "R " + SENTENCE, "p2")],
        lineage=["left", "right"],
    )
    assert case.ingest(ra, *(signed(case, x) for x in (base, left, right, top))).ok
    s = case.session()
    t = Tracer(s).trace("top")
    s.close()
    assert names(t.lineage) == [
        (0, "left", False, False),
        (1, "base", False, False),
        (0, "right", False, False),
        (1, "base", False, True),
    ]
    assert t.currency == "verified"
    assert trace_json(t)["lineage"][1]["children"][0]["shared"] is True


@pytest.mark.parametrize("size", [1, 3])
def test_cycles_of_any_length_are_reported_once(case: Case, size: int) -> None:
    ra = rev()
    ids = [f"n{i}" for i in range(size)]
    drafts = [
        note(nid, f"{nid} " + SENTENCE, [passage(ra, "thirty", f"p{nid}")], [ids[(i + 1) % size]])
        for i, nid in enumerate(ids)
    ]
    assert case.ingest(ra, *(signed(case, d) for d in drafts)).ok
    s = case.session()
    tr = Tracer(s)
    traces = [tr.trace(nid, record=False) for nid in ids]
    s.close()
    for t in traces:
        assert "lineage_cycle" in t.reasons
        assert t.currency == "unchecked" and t.integrity == "intact"
        flags = names(t.lineage)
        assert len(flags) == size and flags[-1][2] is True  # the walk ends at the loop
        assert [f[1] for f in flags][-1] == t.answer_id


def test_long_chain_does_not_exhaust_the_stack(case: Case) -> None:
    ra = rev()
    drafts = [note("n0", "n0 " + SENTENCE, [passage(ra, "thirty")], [])]
    for i in range(1, 80):
        drafts.append(
            note(
                f"n{i}",
                f"n{i} text",
                [derived(f"n{i - 1}", f"n{i - 1} " + ("text" if i > 1 else SENTENCE))],
                [f"n{i - 1}"],
            )
        )
    assert case.ingest(ra, rev("C", CHANGED, "2026-03-01T00:00:00Z"), *(signed(case, d) for d in drafts)).ok
    s = case.session()
    t = Tracer(s).trace("n79", record=False)
    s.close()
    assert t.currency == "stale"
    assert len(names(t.lineage)) == 79


def test_revalidate_reads_each_manifest_once(case: Case, monkeypatch: pytest.MonkeyPatch) -> None:
    ra = rev()
    drafts = [note("note", "N " + SENTENCE, [passage(ra, "thirty")], [])]
    drafts += [
        manifest(f"ans-{i}", "Thirty.", [derived("note", "N " + SENTENCE)], lineage=["note"])
        for i in range(40)
    ]
    assert case.ingest(ra, *(signed(case, d) for d in drafts)).ok
    s = case.session()
    reads: list[int] = []
    real_one, real_many = queries.answer_entry, queries.entries_at

    def one(vault: Any, answer_id: str) -> Any:
        found = real_one(vault, answer_id)
        reads.extend([found[0]] if found else [])
        return found

    def many(vault: Any, seqs: list[int]) -> Any:
        found = real_many(vault, seqs)
        reads.extend(found)
        return found

    monkeypatch.setattr(queries, "answer_entry", one)
    monkeypatch.setattr(queries, "entries_at", many)
    result = revalidate(s)
    s.close()
    assert len(result.answers) == 41
    assert {a.summary.currency for a in result.answers} == {"verified"}
    assert sorted(reads) == sorted({a.row.seq for a in result.answers})  # every manifest read once


def test_a_trace_reads_its_lineage_sources_in_one_query(case: Case, monkeypatch: pytest.MonkeyPatch) -> None:
    """One trace of an answer built on three notes: its own entry alone, the three notes'
    entries in one batch, and the same states as with every source read on its own."""
    ra = rev()
    notes = [note(f"n{i}", f"N{i} " + SENTENCE, [passage(ra, "thirty", f"p{i}")], []) for i in range(3)]
    top = manifest(
        "top",
        "Thirty.",
        [derived(f"n{i}", f"N{i} " + SENTENCE, f"d{i}") for i in range(3)],
        lineage=[f"n{i}" for i in range(3)],
    )
    assert case.ingest(ra, *(signed(case, d) for d in (*notes, top))).ok
    s = case.session()
    real_one, real_many = queries.answer_entry, queries.answer_entries_many
    monkeypatch.setattr(queries, "answer_entries_many", lambda _v, _ids: {})  # every source alone
    alone = Tracer(s).trace("top", record=False)
    singles: list[str] = []
    batches: list[list[str]] = []

    def one(vault: Any, answer_id: str) -> Any:
        singles.append(answer_id)
        return real_one(vault, answer_id)

    def many(vault: Any, answer_ids: list[str]) -> Any:
        batches.append(sorted(answer_ids))
        return real_many(vault, answer_ids)

    monkeypatch.setattr(queries, "answer_entry", one)
    monkeypatch.setattr(queries, "answer_entries_many", many)
    t = Tracer(s).trace("top", record=False)
    s.close()
    assert singles == ["top"] and batches == [["n0", "n1", "n2"]]
    assert [n.answer_id for n in t.lineage] == ["n0", "n1", "n2"]
    assert (t.integrity, t.currency) == (alone.integrity, alone.currency) == ("intact", "verified")
    assert [p.effective_currency for p in t.passages] == [p.effective_currency for p in alone.passages]


def test_derived_passage_that_is_not_in_its_source_is_a_finding(case: Case) -> None:
    ra = rev()
    n = note("note", "N " + SENTENCE, [passage(ra, "thirty")], [])
    ans = manifest(
        "ans", "Ninety.", [derived("note", "Refunds within ninety days, says the note.")], lineage=["note"]
    )
    assert case.ingest(ra, signed(case, n), signed(case, ans)).ok
    s = case.session()
    t = Tracer(s).trace("ans")
    report = verify(s.vault, s)
    s.close()
    assert t.passages[0].transform.state == "not_in_source"
    (f,) = [f for f in report.findings if f.kind == "transform_not_in_source"]
    assert f.seq == t.seq and f.record["answer_id"] == "ans" and f.record["passage_id"] == "p-derived"


def test_note_in_a_restricted_collection_hides_the_whole_claim(tmp_path: Any) -> None:
    c = new_case(tmp_path / "vault", {"ines": ["*"], "pat": ["support"]})
    try:
        ra = rev()
        n = note("secret-note", "Secret " + SENTENCE, [passage(ra, "thirty")], [], collection="legal")
        ans = manifest(
            "ans", "Thirty.", [derived("secret-note", "Secret " + SENTENCE)], lineage=["secret-note"]
        )
        assert c.ingest(ra, signed(c, n), signed(c, ans)).ok
        s = c.session("pat")
        t = Tracer(s).trace("ans")
        s.close()
    finally:
        c.close()
    assert not t.visible and t.currency == "unavailable"
    assert t.lineage == [
        LineageNode("secret-note", "note", t.lineage[0].integrity, Currency.UNAVAILABLE, False)
    ]
    assert "Secret" not in str(trace_json(t))


def test_impact_follows_lineage(case: Case) -> None:
    ra = rev()
    n1 = note("note-1", "N1 " + SENTENCE, [passage(ra, "thirty")], [])
    n2 = note("note-2", "N2 " + SENTENCE, [derived("note-1", "N1 " + SENTENCE)], ["note-1"])
    ans = manifest("ans", "Thirty days.", [derived("note-2", "N2 " + SENTENCE)], lineage=["note-2"])
    rx = revision("exchanges", "1", "# Exchanges\n\nSwap within sixty days.\n", "2026-01-05T00:00:00Z")
    other = manifest("unrelated", "Sixty.", [passage(rx, "sixty")])
    assert case.ingest(ra, rx, *(signed(case, x) for x in (n1, n2, ans, other))).ok
    s = case.session()
    result = impact(s, document="refund")
    s.close()
    rows = {a["answer_id"]: a["dependency"] for a in result.to_json()["answers"]}
    assert rows == {"note-1": "direct", "note-2": "lineage", "ans": "lineage"}
