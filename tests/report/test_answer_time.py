"""Evidence packs state the answer-time fact, and show what the revision in force then said apart."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import manifest, new_case, passage, revision, signed
from tracer.report import export_pack, verify_pack

DOC = "# Returns policy\n\n## Refund window\n\nCustomers may request a refund within {} days of delivery.\n"


def test_pack_names_the_superseded_revision_and_keeps_its_text_apart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRACER_CLOCK", "2026-07-01T12:00:00Z")
    case = new_case(tmp_path / "vault")
    r1 = revision("returns", "r1", DOC.format("thirty"), "2026-01-05T00:00:00Z")
    r2 = revision("returns", "r2", DOC.format("fourteen"), "2026-01-11T00:00:00Z")
    r3 = revision("returns", "r3", DOC.format("seven"), "2026-03-01T00:00:00Z")
    lag = manifest("ans-lag", "Thirty days.", [passage(r1, "thirty")], generated_at="2026-02-01T10:00:00Z")
    assert case.ingest(r1, r2, r3, signed(case, lag)).ok
    s = case.session("ines")
    try:
        pack = export_pack(s, ["ans-lag"], tmp_path / "pack", {"json", "md", "html"})
    finally:
        s.close()
        case.close()
    report = json.loads((pack / "report.json").read_text("ascii"))
    p = report["answers"][0]["trace"]["passages"][0]
    assert (p["answer_time"]["state"], p["answer_time"]["reason"]) == ("superseded", "changed_before_answer")
    assert p["answer_time"]["in_force"]["excerpt"].count("fourteen") == 1
    md = (pack / "report.md").read_text("utf-8")
    said = "revision r2, committed 2026-01-11T00:00:00Z (21 days before this answer), already said otherwise"
    assert said in md
    assert "Revision r2 in force when the answer was generated" in md
    html = (pack / "report.html").read_text("utf-8")
    assert "already said otherwise" in html and "in force when the answer was generated" in html
    assert verify_pack(pack).ok


@pytest.mark.parametrize("generated_at", ["2026-02-01T10:00:00.500000Z", "2026-02-01T12:00:00.25+02:00"])
def test_a_pack_binds_a_signed_time_however_it_was_written(tmp_path: Path, generated_at: str) -> None:
    """The report echoes times in UTC; the binding compares the instant, not the spelling."""
    case = new_case(tmp_path / "vault")
    r1 = revision("returns", "r1", DOC.format("thirty"), "2026-01-05T00:00:00Z")
    m = manifest("ans-t", "Thirty days.", [passage(r1, "thirty")], generated_at=generated_at)
    assert case.ingest(r1, signed(case, m)).ok
    s = case.session("ines")
    try:
        pack = export_pack(s, ["ans-t"], tmp_path / "pack", {"json"})
    finally:
        s.close()
        case.close()
    report = json.loads((pack / "report.json").read_text("ascii"))
    assert report["answers"][0]["trace"]["generated_at"] != generated_at
    result = verify_pack(pack)
    assert result.ok, result.failures
