"""An evidence pack of imported answers: every passage marked, located or not."""

from __future__ import annotations

from tests.helpers import Case
from tests.imports.conftest import run_import, with_sources, write
from tracer.cli.main import main
from tracer.importers.attest import IMPORTED_MARK
from tracer.importers.otlp import span_time
from tracer.report.export import export_pack


def _pack(case: Case, lc_export: bytes, sourced: bool) -> tuple[str, str]:
    if sourced:
        with_sources(case)
    plan = run_import(case, write(case, "langchain.jsonl", lc_export))
    answer_id = str(plan.items[0].statement["answer_id"])
    s = case.session("ines")
    try:
        out = export_pack(s, [answer_id], case.path.parent / "pack", {"md", "html", "json"})
    finally:
        s.close()
        case.reopen()
    return (out / "report.md").read_text(encoding="utf-8"), (out / "report.html").read_text(encoding="utf-8")


def test_a_pack_of_imported_passages_never_located_is_written_and_marked(
    case: Case, lc_export: bytes
) -> None:
    md, html = _pack(case, lc_export, sourced=False)
    assert IMPORTED_MARK in md and IMPORTED_MARK in html
    assert "not located" in md and "importer-computed" in md


def test_a_pack_of_located_imported_passages_keeps_the_mark_beside_the_chain(
    case: Case, lc_export: bytes
) -> None:
    md, html = _pack(case, lc_export, sourced=True)
    assert IMPORTED_MARK in md and IMPORTED_MARK in html and "Locator" in md
    assert main(["verify-pack", str(case.path.parent / "pack")]) == 0


def test_span_times_are_spelled_as_reports_echo_them() -> None:
    assert span_time(1_700_000_000_123_450_000) == "2023-11-14T22:13:20.12345Z"
    assert span_time(1_700_000_000_000_000_999) == "2023-11-14T22:13:20Z"
