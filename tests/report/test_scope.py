"""Only what the exporter may read goes in; out-of-scope items appear as `unavailable` only."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

from tests.report.packs import HOSTILE, SECRET, TRAVEL, Built, answer, export, report_of
from tracer.report import verify_pack


def everything(pack: Path) -> str:
    """All pack text, plus every embedded log entry and signed payload, decoded."""
    parts = [p.read_text("utf-8") for p in sorted(pack.iterdir())]
    for rec in report_of(pack)["records"]:
        body = base64.b64decode(rec["entry"])
        parts.append(body.decode("utf-8"))
        parts.append(base64.b64decode(json.loads(body)["envelope"]["payload"]).decode("utf-8"))
    return "\n".join(parts)


def test_out_of_scope_answer_is_unavailable_only(pack: Path) -> None:
    r = report_of(pack)
    for aid in ("ans-secret", "ans-note-secret"):
        assert answer(r, aid) == {
            "answer_id": aid,
            "visible": False,
            "integrity": "unavailable",
            "currency": "unavailable",
        }


def test_nothing_out_of_scope_leaks_into_any_file(pack: Path) -> None:
    text = everything(pack)
    assert SECRET not in text
    assert "brightwater" not in text.lower()
    assert "legal" not in text
    assert "The amount is confidential" not in text
    assert not re.search(r"(?<!ans-)note-secret", text)


def test_hidden_answers_render_as_unavailable(pack: Path) -> None:
    html = (pack / "report.html").read_text("utf-8")
    section = html.split("id='answer-4'")[1].split("<section")[0]
    assert "unavailable" in section
    assert "confidential" not in section
    md = (pack / "report.md").read_text("utf-8")
    md_section = md.split("## 4. Answer ans-secret")[1].split("## 5.")[0]
    assert "**unavailable**" in md_section


def test_purged_text_stays_purged(pack: Path) -> None:
    r = report_of(pack)
    a = answer(r, "ans-purged")
    p = a["trace"]["passages"][0]
    assert p["retrieved"]["state"] == "purged"
    assert p["retrieved"]["text"] is None
    assert p["retrieved"]["tombstone"]["policy"] == "retention-90d"
    subjects = {(tb["subject"], tb["revision"]) for tb in a["tombstones"]}
    assert ("retrieved", None) in subjects
    assert ("cited_revision", "T1") in subjects
    chunk = "Staff receive forty euros per day when travelling abroad."
    text = everything(pack)
    assert chunk not in text
    assert TRAVEL not in text
    html = (pack / "report.html").read_text("utf-8")
    assert html.count("Tombstone: text purged by retention") >= 2
    assert "retention-90d" in (pack / "report.md").read_text("utf-8")


def test_explicit_out_of_scope_id_alone(built: Built, tmp_path: Path) -> None:
    pack = export(built, tmp_path / "only-secret", ["ans-secret"])
    r = report_of(pack)
    assert r["answers"] == [
        {"answer_id": "ans-secret", "visible": False, "integrity": "unavailable", "currency": "unavailable"}
    ]
    # entry 0 and the export's own access entry (which names only the id asked for)
    assert {rec["kind"] for rec in r["records"]} == {"vault_init", "access"}
    assert [c["role"] for rec in r["records"] for c in rec["cited_by"]] == ["vault_init", "export"]
    assert SECRET not in everything(pack)


def test_missing_text_is_an_alarm_not_a_substitute(built: Built, tmp_path: Path) -> None:
    """A blob deleted behind the store's back (no tombstone): the slot shows the alarm."""
    from store.crypto import sha256_hex

    digest = sha256_hex(HOSTILE.encode("utf-8"))
    built.session.vault.con.execute("DELETE FROM blobs WHERE digest = ?", [digest])  # test-only tampering
    pack = export(built, tmp_path / "pack", ["ans-hostile"])
    t = answer(report_of(pack), "ans-hostile")["trace"]
    assert (t["answer"]["state"], t["answer"]["text"]) == ("missing", None)
    assert answer(report_of(pack), "ans-hostile")["integrity"] == "missing"
    html = (pack / "report.html").read_text("utf-8")
    assert "<strong>Missing</strong>: Answer is absent and no tombstone explains it" in html
    assert "ALARM: MISSING" in (pack / "report.md").read_text("utf-8")
    assert "Refunds within thirty days. &lt;script" not in html.split("<h3>Citations</h3>")[0]
    assert verify_pack(pack).ok
