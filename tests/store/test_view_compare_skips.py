"""Verify skips comparing a view in a seq range where neither side holds a row, and reads
in full only the views whose rows differ (`store.audit._Ranges.compare`): each case
here tampers a stored view so that only a skipped comparison would see it.

Every case runs with the default compare range and with ranges of one seq, so the
tampered row sits in a range the log has entries in but the rebuilt view is empty."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from store import audit
from tests.helpers import Case, manifest, passage, revision, signed
from tracer.engine.verify import Sizes, verify

DOC = "# Returns policy\n\n## Refund window\n\nCustomers may request a refund within thirty days.\n"


@pytest.fixture
def answered(case: Case) -> Iterator[Case]:
    """A vault with a revision and two answers: their views hold rows, the case views none."""
    rev = revision("refund", "A", DOC, "2026-01-05T00:00:00Z")
    a1 = manifest("ans-1", "Thirty days.", [passage(rev, "thirty days", "p1")])
    a2 = manifest("ans-2", "A refund.", [passage(rev, "a refund", "p2")])
    assert case.ingest(rev, signed(case, a1), signed(case, a2)).ok
    case.reopen()
    yield case


def _views(case: Case) -> list[tuple[str, int | None, str]]:
    """(kind, seq, table) of every view finding of a structural verification."""
    report = verify(case.reopen(), None, sizes=Sizes(workers=0))
    views = [f for f in report.findings if "view_row" in str(f.kind)]
    return [(str(f.kind), f.seq, str(f.record["table"])) for f in views]


def _both_ranges(case: Case, monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int | None, str]]:
    """The view findings with the default ranges, which must equal those with ranges of
    one seq, counted in one query and compared view by view (as a large range is)."""
    whole = _views(case)
    monkeypatch.setattr(audit, "_COMPARE", 1)
    assert _views(case) == whole
    monkeypatch.setattr(audit, "_COUNT_ALL_ROWS", 0)
    assert _views(case) == whole
    return whole


def _seq_of(case: Case, table: str) -> int:
    rows: list[tuple[Any, ...]] = case.vault.con.execute(f"SELECT min(seq) FROM {table}").fetchall()  # noqa: S608
    return int(rows[0][0])


def test_a_stored_row_where_the_log_derives_none_is_reported(
    answered: Case, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The log derives no row of these tables anywhere: the rebuilt side is empty in
    every range, and only the stored side says each view must be compared there."""
    seq = _seq_of(answered, "v_answers")
    tables = ["v_tombstones", "v_findings", "v_tags", "v_holds"]  # in schema order
    for table in tables:
        answered.vault.con.execute(f"INSERT INTO {table} (seq) VALUES (?)", [seq])  # noqa: S608
    assert _both_ranges(answered, monkeypatch) == [("view_row_altered_or_extra", seq, t) for t in tables]


def test_a_stored_row_in_a_range_of_entries_without_rows_of_its_view_is_reported(
    answered: Case, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A passage row at the revision's seq: v_passages has rows in the log's other
    ranges, but with ranges of one seq none is rebuilt in this one."""
    seq = _seq_of(answered, "v_revisions")
    answered.vault.con.execute(
        "INSERT INTO v_passages SELECT * REPLACE (? AS seq) FROM v_passages ORDER BY seq LIMIT 1", [seq]
    )
    assert _both_ranges(answered, monkeypatch) == [("view_row_altered_or_extra", seq, "v_passages")]


def test_stored_rows_with_a_seq_no_entry_has_are_reported(
    answered: Case, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Negative and past-the-log seqs: ranges the log pass never compares.  (A NULL seq
    is compared too, but `ViewDiff.seq` cannot hold it: verify fails with a TypeError
    there, before and after the skips.)"""
    for seq in (-3, 10**6):
        answered.vault.con.execute("INSERT INTO v_notes (seq, case_id) VALUES (?, 'forged')", [seq])
        answered.vault.con.execute("INSERT INTO v_answers (seq, answer_id) VALUES (?, 'forged')", [seq])
    assert _both_ranges(answered, monkeypatch) == [
        ("view_row_altered_or_extra", seq, table) for table in ("v_answers", "v_notes") for seq in (-3, 10**6)
    ]


def test_a_view_emptied_in_the_store_is_reported_missing(
    answered: Case, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows rebuilt where the stored view holds none: the rebuilt side alone decides."""
    rows = answered.vault.con.execute("SELECT seq FROM v_citations ORDER BY seq").fetchall()
    seqs = [int(r[0]) for r in rows]
    assert seqs
    answered.vault.con.execute("DELETE FROM v_citations")
    found = _both_ranges(answered, monkeypatch)
    assert found == [("view_row_missing_or_altered", s, "v_citations") for s in seqs]


def test_every_view_that_differs_in_a_range_is_read(answered: Case, monkeypatch: pytest.MonkeyPatch) -> None:
    """Several views differ in one range, one of them only in how often a row is held:
    the count that picks the views to read finds each."""
    con = answered.vault.con
    a2 = _seq_of(answered, "v_answers") + 1
    con.execute("UPDATE v_passages SET doc_revision = 'Z' WHERE answer_id = 'ans-1'")
    con.execute("INSERT INTO v_digests SELECT * FROM v_digests WHERE seq = ? ORDER BY ALL LIMIT 1", [a2])
    con.execute("DELETE FROM v_answers WHERE answer_id = 'ans-2'")
    found = _both_ranges(answered, monkeypatch)
    a1 = a2 - 1
    assert found == [  # in schema order of the views, then problem, then seq
        ("view_row_missing_or_altered", a2, "v_answers"),
        ("view_row_altered_or_extra", a1, "v_passages"),
        ("view_row_missing_or_altered", a1, "v_passages"),
        ("view_row_altered_or_extra", a2, "v_digests"),
    ]


def test_a_stored_row_with_a_null_seq_is_a_finding_not_a_crash(
    answered: Case, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Anyone who can write the vault file can store a view row with no seq: it belongs to
    no range of the log, so only `finish`'s pass over the stored ranges sees it, and it
    is reported with no seq (it crashed verify with a TypeError before)."""
    answered.vault.con.execute("INSERT INTO v_tags (seq, tag) VALUES (NULL, 'planted')")
    answered.vault.con.execute(
        "INSERT INTO v_passages SELECT * REPLACE (NULL AS seq) FROM v_passages LIMIT 1"
    )
    found = _both_ranges(answered, monkeypatch)
    assert found == [
        ("view_row_altered_or_extra", None, "v_passages"),
        ("view_row_altered_or_extra", None, "v_tags"),
    ]
    report = verify(answered.reopen(), None, sizes=Sizes(workers=0))
    shown = [f.to_json() for f in report.findings if f.seq is None]
    assert [j["kind"] for j in shown] == ["view_row_altered_or_extra"] * 2
    assert all('"seq": null' in j["detail"] for j in shown)
