"""Every look is on the record, and every screen shows the one checkpoint that results."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable, Input, Static

from tests.tui.conftest import SIZE, Built, settle
from tracer.tui.screens.access_log import AccessLogScreen
from tracer.tui.screens.answer import AnswerScreen
from tracer.tui.screens.answers import AnswersScreen
from tracer.tui.screens.impact import ImpactScreen
from tracer.tui.screens.prompt import PromptScreen
from tracer.tui.screens.verify import VerifyScreen
from tracer.tui.widgets.status_bar import StatusBar


def _actions(app: object) -> list[tuple[str, str]]:
    screen = app.screen  # type: ignore[attr-defined]
    assert isinstance(screen, AccessLogScreen)
    table = screen.query_one("#access", DataTable)
    return [(str(table.get_row_at(i)[3]), str(table.get_row_at(i)[4])) for i in range(table.row_count)]


async def test_a_verification_from_the_tui_is_an_access_entry(built: Built) -> None:
    app = built.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("v")
        await settle(pilot)
        assert isinstance(app.screen, VerifyScreen) and app.screen.report is not None
        await pilot.press("a")
        await settle(pilot)
        assert ("verify", "") in _actions(app)


async def test_an_export_from_the_tui_is_an_access_entry(built: Built, tmp_path: Path) -> None:
    pytest.importorskip("tracer.report.export")
    app = built.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.push_screen(AnswerScreen("ans-stale"))
        await settle(pilot)
        await pilot.press("e")
        await settle(pilot)
        assert isinstance(app.screen, PromptScreen)
        app.screen.query_one(Input).value = str(tmp_path / "pack")
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("a")
        await settle(pilot)
        assert ("export", "ans-stale") in _actions(app)
    assert (tmp_path / "pack" / "report.json").is_file()


async def test_an_export_from_the_list_exports_the_highlighted_answer(built: Built, tmp_path: Path) -> None:
    pytest.importorskip("tracer.report.export")
    app = built.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, AnswersScreen)
        await pilot.press("down", "e")
        await settle(pilot)
        assert isinstance(app.screen, PromptScreen)
        app.screen.query_one(Input).value = str(tmp_path / "pack")
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("a")
        await settle(pilot)
        assert ("export", "ans-stale") in _actions(app)


async def test_an_impact_from_the_tui_is_an_access_entry(built: Built) -> None:
    app = built.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("i")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ImpactScreen)
        row = [(t.kind, t.document) for t in screen.targets].index(("document", "returns"))
        screen.query_one("#impact-targets", DataTable).move_cursor(row=row)
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("a")
        await settle(pilot)
        assert ("impact", "document:returns@*") in _actions(app)


def _bar_size(screen: object) -> str:
    bar = str(screen.query_one(StatusBar).render())  # type: ignore[attr-defined]
    return bar.split("checkpoint size ")[1].split()[0]


async def test_one_checkpoint_on_every_screen_after_every_append(built: Built) -> None:
    app = built.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        listing = app.screen
        app.push_screen(AnswerScreen("ans-runbook"))
        await settle(pilot)
        answer = app.screen
        assert isinstance(answer, AnswerScreen) and answer.trace is not None
        size = str(app.engine.session.status.checkpoint_size)
        head = str(answer.query_one("#answer-head", Static).render())
        # the look was recorded before the states were computed: header and bar agree
        assert f"against checkpoint {size} " in head and _bar_size(answer) == size
        await pilot.press("enter")  # the evidence screen appends open_passage entries
        await settle(pilot)
        await pilot.press("escape")
        await settle(pilot)
        now = str(app.engine.session.status.checkpoint_size)
        assert now != size and _bar_size(answer) == now
        head = str(answer.query_one("#answer-head", Static).render())
        assert f"checkpoint now {now}" in head
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is listing and _bar_size(listing) == now
