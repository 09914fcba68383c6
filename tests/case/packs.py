"""A case worked by ines (every scope, the hold right) and exported, for the pack tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.case.world import HOSTILE, World, build_world
from tests.templates import copy_of, scratch
from tracer.engine.case import CaseDesk
from tracer.report import export_pack
from tracer.report.casepack import CaseSelection

TITLE = "Payments restart \x1b[2J<script>alert(1)</script>"
PURPOSE = "Find out why \u202eesrever\u202c payments restarted.\nSecond line [bold]markup[/bold]."


def work_case(world: World) -> None:
    s = world.session("ines")
    desk = CaseDesk(s)
    desk.open_case("INC-7", TITLE, PURPOSE)
    desk.tag("INC-7", "ans-restart", "claim:1", "dropped-exception")
    desk.tag("INC-7", "ans-other", "passage:p1", "context")
    desk.note("INC-7", f"First look.\n{HOSTILE}", "ans-restart")
    desk.finding("INC-7", "ans-restart", "passage:p1", "condition <b>dropped</b>")
    desk.hold("document", "runbook", "litigation: Northstar v. Acme", "INC-7")
    desk.conclude("INC-7", "The assistant dropped the production exception.\nSee note 1.")
    s.close()


def export_case(
    world: World, out: Path, who: str = "ines", case_id: str = "INC-7", tag: str | None = None
) -> Path:
    s = world.session(who)
    try:
        desk = CaseDesk(s)
        view = desk.view(case_id)
        ids = (
            desk.answers_tagged(tag, case_id)
            if tag
            else [a for a in view.answer_ids() if desk.answer_visible(a)]
        )
        sel = CaseSelection(case_id, f"answers of case {case_id}", "what the review relies on")
        return export_pack(s, ids, out, {"json", "md", "html"}, selection=sel.what, case=sel)
    finally:
        s.close()


def worked_pack(out: Path, clock: str) -> Path:
    """At `out`, the pack `export_case` makes of the case `work_case` works at `clock`: one
    export per process, copied.  Every test reading it gets its own files to alter."""
    copy_of(f"case-pack-{clock}", lambda d: _build_pack(d, clock), out)
    return out


def _build_pack(out: Path, clock: str) -> None:
    work = scratch()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TRACER_CLOCK", clock)
        mp.setenv("TRACER_HOME", str(work / "home"))
        world = build_world(work)
        try:
            work_case(world)
            export_case(world, out)
        finally:
            world.case.close()


def report_of(pack: Path) -> dict[str, Any]:
    value: dict[str, Any] = json.loads((pack / "report.json").read_text("ascii"))
    return value
