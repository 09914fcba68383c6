"""An evidence pack of imported answers: every passage marked, located or not."""

from __future__ import annotations

import json
import re
from pathlib import Path

from store.attest import IMPORTED_MARK
from tests.helpers import Case
from tests.imports.conftest import dump, run_import, spans, with_sources, write
from tests.imports.test_pitfalls import _rag, retrace
from tracer.cli.main import main
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


def _export(case: Case, answer_ids: list[str]) -> Path:
    s = case.session("ines")
    try:
        return export_pack(s, answer_ids, case.path.parent / "pack", {"md", "html", "json"})
    finally:
        s.close()
        case.reopen()


def test_a_pack_of_redacted_and_truncated_imports_verifies(sourced: Case) -> None:
    redacted = _rag()
    spans(redacted)[0]["attributes"][2]["value"] = {"stringValue": "__REDACTED__"}  # the answer
    cut = retrace(_rag(), "9" * 32)  # its passage and prompt run past the exporter's limit
    plan = run_import(sourced, write(sourced, "cut.jsonl", dump([redacted, cut])), value_length_limit=40)
    ids = [str(it.statement["answer_id"]) for it in plan.items]
    out = _export(sourced, ids)
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    traces = [a["trace"] for a in report["answers"]]
    states = {t["answer"]["state"] for t in traces} | {
        p["retrieved"]["state"] for t in traces for p in t["passages"]
    }
    assert "not_captured" in states and {t["answer"]["digest"] for t in traces} >= {""}
    assert main(["verify-pack", str(out)]) == 0


def test_the_answer_level_facts_of_an_imported_pack_carry_the_mark(case: Case, lc_export: bytes) -> None:
    with_sources(case)
    plan = run_import(case, write(case, "langchain.jsonl", lc_export))
    out = _export(case, [str(plan.items[0].statement["answer_id"])])
    md = (out / "report.md").read_text(encoding="utf-8")
    html = (out / "report.html").read_text(encoding="utf-8")
    mark = IMPORTED_MARK  # Markdown and HTML escaping leave these words as they are

    def md_line(prefix: str) -> str:
        found = [line for line in md.splitlines() if line.startswith(prefix)]
        assert len(found) == 1, (prefix, found)
        return found[0]

    fields = plan.items[0].statement["fields"]

    def tag(path: str) -> str:  # each fact's own state, from the signed attestation map
        return f"{mark}: {fields[path]['state'] if path else 'absent'}"

    for prefix, paths in (
        ("- Run ", []),
        ("- Generated ", ["$.generated_at"]),
        ("- Producer ", ["$.producer.system", "$.producer.version"]),
        ("- Model ", ["$.runtime.model", "$.runtime.session_id"]),
    ):
        line = md_line(prefix)
        assert mark in line, line
        for path in paths:
            assert tag(path) in line, (path, line)
    assert fields["$.runtime.model"]["state"] == "absent"  # the fake chat model names none
    assert tag("") in md_line("- Authorization at run time")
    for label, path in (("**Question ", "$.question_sha256"), ("**Answer ", "$.answer_sha256")):
        line = md_line(label)
        assert tag(path) in line and "the importer signed" in line, line
    assert tag("$.citations[0]") in md_line("| 1 \\[")  # the citation row (not the summary's)
    assert "Producer signature" not in md and "manifest log entry" not in md
    assert "Importer signature **valid**" in md and "imported statement log entry" in md

    def dd(term: str) -> str:
        found = re.findall(rf"<dt>{re.escape(term)}</dt><dd>(.*?)</dd>", html)
        assert len(found) == 1, (term, found)
        return str(found[0])

    for term, path in (
        ("Generated at", "$.generated_at"),
        ("Producer", "$.producer.system"),
        ("Producer version", "$.producer.version"),
        ("Model", "$.runtime.model"),
    ):
        assert tag(path) in dd(term), (term, dd(term))
    assert f"{mark}: importer-computed" in dd("Run")
    assert tag("") in dd("Authorization at run time")
    assert "Producer signature" not in html and "Manifest log entry" not in html
    assert "valid" in dd("Importer signature") and dd("Imported statement log entry")
    for label in ("Question", "Answer"):
        heads = re.findall(rf'<div class="label">{label} (.*?)</div>', html)
        assert heads and tag(f"$.{label.lower()}_sha256") in heads[0], heads
    cited = html.split("<h3>Citations</h3>", 1)[1].split("</table>", 1)[0]
    row = re.findall(r"<tr><td class='num'>1(.*?)</td>", cited)
    assert row and tag("$.citations[0]") in row[0], row


def test_an_empty_digest_stands_only_for_a_signed_null_of_an_import() -> None:
    from tracer.report.bindings import _same_digest

    kept = {"digest": "", "state": "not_captured", "text": None}
    assert _same_digest(kept, None, imported=True)
    assert not _same_digest(kept, "ab" * 32, imported=True)  # the importer kept a text: not "nothing"
    assert not _same_digest(kept, None, imported=False)  # a producer's manifest: exact digests only
    assert not _same_digest({**kept, "state": "intact"}, None, imported=True)
