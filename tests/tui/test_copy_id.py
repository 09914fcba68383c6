"""One key (`y`) copies the whole id of the highlighted row, on every screen showing ids.

The clipboard is Textual's (`App.copy_to_clipboard`, OSC 52 to the terminal); the toast
says what was copied, inert.  Each screen is reached by its keys, as an investigator
would, and the value copied is compared with the one the engine holds, whole.
"""

from __future__ import annotations

from textual.pilot import Pilot

from store import queries
from tests.tui.conftest import Built, settle, until
from tracer.tui.app import TracerApp
from tracer.tui.commands import screen_actions
from tracer.tui.screens.access_log import AccessLogScreen
from tracer.tui.screens.answer import AnswerScreen
from tracer.tui.screens.answers import AnswersScreen
from tracer.tui.screens.evidence import EvidenceScreen
from tracer.tui.screens.impact import ImpactScreen
from tracer.tui.screens.timeline import TimelineScreen
from tracer.tui.screens.verify import VerifyScreen


def _said(app: TracerApp) -> str:
    return " | ".join(str(n.message) for n in app._notifications)


async def _copy(pilot: Pilot[None], app: TracerApp) -> str:
    app.clear_notifications()
    assert "tracer.copy_id" in {a.binding.id for a in screen_actions(app.screen)}  # palette, ?
    await pilot.press("y")
    await until(pilot, lambda: "copied" in _said(app) or "nothing" in _said(app))
    return app.clipboard


async def test_y_copies_the_whole_id_on_every_screen_showing_ids(built: Built) -> None:
    """The answers list, an answer, its evidence, the cited document's timeline, the
    access log and the impact, in one app: each copy is compared with the engine's value."""
    app = built.app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        answers = app.screen
        assert isinstance(answers, AnswersScreen)
        await until(pilot, lambda: answers.table.row_count > 1)
        await pilot.press("down")
        first = str(answers.table.ordered_rows[1].key.value)
        assert await _copy(pilot, app) == first
        assert f"copied answer id {first}" in _said(app)

        app.push_screen(AnswerScreen("ans-stale"))
        await until(pilot, lambda: isinstance(app.screen, AnswerScreen) and app.screen.trace is not None)
        screen = app.screen
        assert isinstance(screen, AnswerScreen) and screen.trace is not None
        wanted = ", ".join(screen.trace.citations[0].passage_ids)
        assert await _copy(pilot, app) == wanted
        assert f"copied passage id {wanted}" in _said(app)

        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, EvidenceScreen))
        evidence = app.screen
        assert isinstance(evidence, EvidenceScreen)
        assert await _copy(pilot, app) == evidence.passages[0].passage_id

        # on: the timeline, the access log and the impact, each reached by its key
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is screen)
        await pilot.press("T")
        await until(pilot, lambda: isinstance(app.screen, TimelineScreen) and app.screen.timeline is not None)
        timeline = app.screen
        assert isinstance(timeline, TimelineScreen) and timeline.timeline is not None
        answer_row = next(i for i, e in enumerate(timeline.timeline.events) if e.kind == "answer")
        timeline.query_one("#timeline").move_cursor(row=answer_row)  # type: ignore[attr-defined]
        await settle(pilot)
        assert await _copy(pilot, app) == timeline.timeline.events[answer_row].answer_id

        await pilot.press("a")
        await until(pilot, lambda: isinstance(app.screen, AccessLogScreen) and bool(app.screen.targets))
        log = app.screen
        assert isinstance(log, AccessLogScreen)
        with app.engine.use() as s:
            newest = queries.access_rows(s.vault, 1)[0]
        copied = await _copy(pilot, app)
        assert copied == log.targets[str(newest.seq)] == newest.target  # whole: never cut at 80

        await pilot.press("i")
        await until(pilot, lambda: isinstance(app.screen, ImpactScreen) and bool(app.screen.targets))
        impact = app.screen
        assert isinstance(impact, ImpactScreen)
        t = impact.targets[0]
        assert await _copy(pilot, app) == (t.document if t.kind == "document" else t.digest)


async def test_y_on_the_verify_pane_copies_the_findings_answer_id(built: Built) -> None:
    app = built.app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("v")
        await until(pilot, lambda: isinstance(app.screen, VerifyScreen) and app.screen.report is not None)
        screen = app.screen
        assert isinstance(screen, VerifyScreen) and screen.report is not None
        if not screen.report.findings:
            assert await _copy(pilot, app) == ""
            assert "nothing highlighted to copy" in _said(app)
            return
        f = screen.report.findings[0]
        wanted = f.record.get("answer_id") or f.record.get("passage_id") or f.record.get("digest")
        assert await _copy(pilot, app) == str(wanted)


async def test_the_toast_shows_what_was_copied_inert_and_the_clipboard_holds_it_whole(built: Built) -> None:
    app = built.app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, AnswersScreen)
        hostile = "ans-\x1b[2J\u202eevil"
        screen.copy_target = lambda: ("answer id", hostile)  # type: ignore[method-assign]
        assert await _copy(pilot, app) == hostile
        said = _said(app)
        assert "\x1b" not in said and "\u202e" not in said and "evil" in said
