"""A case pack made by a viewer without a scope contains nothing of that scope: no
title, path, id, tag, note, hold or count of it.  omar reads `support` only; ines reads
everything and works on the restricted `legal` answer in her own case."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.case.packs import export_case, report_of
from tests.case.world import SECRET_WORDS, World
from tracer.engine.case import CaseDesk, CaseError
from tracer.report import verify_pack


def _everything(pack: Path) -> str:
    return "\n".join(p.read_text("utf-8") for p in sorted(pack.iterdir()))


def test_a_support_only_pack_holds_nothing_of_legal(world: World, tmp_path: Path) -> None:
    s = world.session("ines")
    desk = CaseDesk(s)
    desk.open_case("INC-L", "Brightwater leak", "Did the legal draft leak?")
    desk.tag("INC-L", "ans-secret", "answer", "brightwater-leak")
    desk.hold("document", "brightwater", "Brightwater litigation")
    desk.hold("answer", "ans-restart", "ines: Brightwater related")  # on a public answer, by ines
    s.close()
    s = world.session("omar")
    desk = CaseDesk(s)
    with pytest.raises(CaseError, match="no case 'INC-L'"):
        desk.view("INC-L")
    assert [c.case_id for c in desk.cases()] == []
    desk.open_case("INC-S", "Restart", "Support side")
    desk.tag("INC-S", "ans-restart", "answer", "dropped-exception")
    desk.note("INC-S", "Looks like the runbook was ignored.")
    with pytest.raises(Exception, match="no answer 'ans-secret'"):
        desk.tag("INC-S", "ans-secret", "answer", "peek")
    s.close()
    pack = export_case(world, tmp_path / "pack", who="omar", case_id="INC-S")
    assert verify_pack(pack).ok
    text = _everything(pack)
    for word in (*SECRET_WORDS, "INC-L"):
        assert word not in text, word
    r = report_of(pack)
    assert r["verification"]["scope"] == "records in the exporter's scope"
    assert set(r["verification"]["counts"]) <= {"entries", "checkpoints"}
    assert [a["answer_id"] for a in r["answers"]] == ["ans-restart"]
    # ines's hold on a public answer: omar sees that it is in force, and who placed it, but
    # not its reason (ines could have written anything she reads into it)
    [held] = r["answers"][0]["holds"]
    assert held["subject"] == {"kind": "answer", "id": "ans-restart"} and held["in_force"]
    assert held["signer"]["name"] == "ines" and held["reason"] is None and held["withheld"] == ["reason"]
    assert held["seq"] not in {rec["seq"] for rec in r["records"]}  # its entry would carry the reason
    checked = verify_pack(pack)
    assert any("shown without its reason" in w for w in checked.warnings), checked.warnings
    md = (pack / "report.md").read_text("utf-8")
    assert "Also in force over the evidence in this pack" in md and "reason withheld" in md
    assert "No hold you may see" not in md
    # ines, who reads everything, sees omar's case and both holds
    s = world.session("ines")
    desk = CaseDesk(s)
    assert [c.case_id for c in desk.cases()] == ["INC-L", "INC-S"]
    assert [h.hold.subject for h in desk.holds_on_answer("ans-restart")] == ["ans-restart"]
    s.close()
