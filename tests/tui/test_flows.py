"""The investigation flows, driven from the keyboard through the real engine."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.message import Message
from textual.widgets import DataTable, Input, ProgressBar, Static, Tree
from textual.widgets.tree import TreeNode

from tests.tui.conftest import SIZE, Built, screen_text, settle, until
from tests.tui.fixture_vault import ANSWER_IDS
from tracer.engine.vocabulary import FindingKind
from tracer.tui.app import TracerApp
from tracer.tui.commands import screen_actions
from tracer.tui.screens.access_log import AccessLogScreen
from tracer.tui.screens.answer import AnswerScreen
from tracer.tui.screens.answers import AnswersScreen
from tracer.tui.screens.evidence import EvidenceScreen
from tracer.tui.screens.help import HelpScreen
from tracer.tui.screens.impact import ImpactScreen
from tracer.tui.screens.lineage import LineageScreen
from tracer.tui.screens.notes import NotesScreen
from tracer.tui.screens.prompt import PromptScreen
from tracer.tui.screens.verify import VerifyScreen
from tracer.tui.widgets.alarm import MissingAlarm
from tracer.tui.widgets.current import CurrentRevisionPane
from tracer.tui.widgets.historical import HistoricalText
from tracer.tui.widgets.tombstone import TombstoneCard


def _row_of(answer_id: str) -> int:
    return ANSWER_IDS.index(answer_id)


async def _open_answer(pilot: object, app: TracerApp, answer_id: str) -> None:
    app.push_screen(AnswerScreen(answer_id))
    await settle(pilot)  # type: ignore[arg-type]
    assert isinstance(app.screen, AnswerScreen) and app.screen.trace is not None


async def test_list_answer_evidence_and_back_restores_the_claim(built: Built) -> None:
    app = built.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, AnswersScreen)
        table = app.screen.query_one("#answers", DataTable)
        assert table.row_count == len(ANSWER_IDS)
        summary = str(app.screen.query_one("#summary", Static).render())
        assert "9 answer(s)" in summary and "stale 3" in summary and "missing 1" in summary
        for _ in range(_row_of("ans-hostile")):
            await pilot.press("down")
        await pilot.press("enter")
        await settle(pilot)
        answer = app.screen
        assert isinstance(answer, AnswerScreen) and answer.answer_id == "ans-hostile"
        citations = answer.query_one("#citations", DataTable)
        assert app.focused is citations
        await pilot.press("down")
        assert citations.cursor_row == 1
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, EvidenceScreen) and app.screen.heading == "claim [2]"
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is answer  # the screen changed on escape
        assert app.focused is citations and citations.cursor_row == 1


async def test_opening_writes_access_entries_shown_in_the_log(built: Built) -> None:
    app = built.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await _open_answer(pilot, app, "ans-stale")
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("a")
        await settle(pilot)
        assert isinstance(app.screen, AccessLogScreen)
        text = screen_text(pilot)
        assert "open_answer" in text and "ans-stale" in text
        assert "open_passage" in text and "ans-stale/p1" in text and "unlock" in text


async def test_stale_citation_side_by_side_never_substitutes(built: Built) -> None:
    app = built.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await _open_answer(pilot, app, "ans-stale")
        await pilot.press("enter")
        await settle(pilot)
        ev = app.screen
        assert isinstance(ev, EvidenceScreen)
        pane = ev.query_one(CurrentRevisionPane)
        title = str(pane.query_one("#current-title", Static).render())
        assert title == "Current revision C (2026-05-05T00:00:00Z)"
        historical = str(ev.query_one(".historical .historical-body", Static).render())
        current = str(pane.query_one(".current-body", Static).render())
        assert "thirty" in historical and "fourteen" not in historical
        assert "fourteen" in current and "thirty" not in current
        assert "⟦thirty⟧" in historical and "⟦fourteen⟧" in current


async def test_moved_shows_current_pane_without_marks(built: Built) -> None:
    app = built.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await _open_answer(pilot, app, "ans-moved")
        await pilot.press("enter")
        await settle(pilot)
        pane = app.screen.query_one(CurrentRevisionPane)
        assert str(pane.query_one("#current-title", Static).render()).startswith("Current revision B (")
        assert "⟦" not in str(pane.query_one(".current-body", Static).render())


async def test_purged_passage_shows_tombstone_card_instead_of_text(built: Built) -> None:
    app = built.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await _open_answer(pilot, app, "ans-purged")
        await pilot.press("enter")
        await settle(pilot)
        ev = app.screen
        card = ev.query_one(TombstoneCard)
        body = str(card.render())
        for word in ("retention-90d", "travel data expired", "dpo@northstar", "2026-01-01T00:00:00Z"):
            assert word in body
        assert not ev.query(".historical-body")
        assert not ev.query(CurrentRevisionPane)
        assert "forty euros per day" not in screen_text(pilot)


async def test_missing_passage_shows_the_alarm(built: Built) -> None:
    app = built.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await _open_answer(pilot, app, "ans-missing")
        assert "PRODUCER FAULT" in screen_text(pilot)
        await pilot.press("enter")
        await settle(pilot)
        alarm = app.screen.query_one(MissingAlarm)
        assert "ALARM: MISSING" in str(alarm.render())
        assert "eight hours" not in str(app.screen.query_one(HistoricalText).query(Static).first().render())


async def test_lineage_highlights_and_explains_the_strictest(built: Built) -> None:
    app = built.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await _open_answer(pilot, app, "ans-derived")
        await pilot.press("l")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, LineageScreen)
        explain = str(screen.query_one("#lineage-explain", Static).render())
        assert "Effective currency: stale" in explain
        assert "note note-1 › passage p2" in explain
        tree = screen.query_one("#lineage-tree", Tree)
        marked = [n for n in _nodes(tree.root) if str(n.label).startswith("▶ strictest")]
        assert [n.data.ident for n in marked if n.data] == ["p2"]


def _nodes(node: TreeNode[Any]) -> list[TreeNode[Any]]:
    out = [node]
    for child in node.children:
        out += _nodes(child)
    return out


async def test_restricted_viewer_sees_unavailable_for_the_derived_claim(built: Built) -> None:
    app = built.app(key=built.keys.rita)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await _open_answer(pilot, app, "ans-derived")
        citations = app.screen.query_one("#citations", DataTable)
        assert "unavailable" in [str(c) for c in citations.get_row_at(0)]
        assert "budget" not in screen_text(pilot)


async def test_verify_reports_progress_and_jumps_to_the_answer(built: Built) -> None:
    seen: list[Message] = []
    app = built.app()
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await settle(pilot)
        await pilot.press("v")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, VerifyScreen) and screen.report is not None
        progress = [m for m in seen if isinstance(m, VerifyScreen.Progress)]
        assert {m.phase for m in progress} >= {"log", "texts"}
        bar = screen.query_one(ProgressBar)
        assert bar.progress == bar.total
        kinds = [f.kind for f in screen.report.findings]
        assert "missing" in kinds and not screen.report.ok
        table = screen.query_one("#verify-findings", DataTable)
        assert app.focused is table
        table.move_cursor(row=kinds.index(FindingKind.MISSING))
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, AnswerScreen) and app.screen.answer_id == "ans-missing"


async def test_impact_of_a_document_and_of_a_tombstone(built: Built) -> None:
    app = built.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("i")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ImpactScreen)
        kinds = [(t.kind, t.document, t.revision) for t in screen.targets]
        targets = screen.query_one("#impact-targets", DataTable)
        targets.move_cursor(row=kinds.index(("document", "returns", None)))
        await pilot.press("enter")
        await settle(pilot)
        assert screen.result is not None
        assert [a.row.answer_id for a in screen.result.answers] == ["ans-stale"]
        assert "Impact of document returns: 1 answer(s)" in screen_text(pilot)
        targets.focus()
        targets.move_cursor(row=[k for k, _d, _r in kinds].index("tombstone"))
        await pilot.press("enter")
        await settle(pilot)
        assert [a.row.answer_id for a in screen.result.answers] == ["ans-purged"]
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, AnswerScreen) and app.screen.answer_id == "ans-purged"


async def test_add_a_note_to_a_claim_and_to_a_passage(built: Built) -> None:
    app = built.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await _open_answer(pilot, app, "ans-runbook")
        answer = app.screen
        assert isinstance(answer, AnswerScreen)

        def beside() -> str:
            return str(answer.query_one("#claim-notes", Static).render())

        await pilot.press("n")
        await until(pilot, lambda: isinstance(app.screen, PromptScreen))
        app.screen.query_one(Input).value = "production exception omitted from the answer"
        await pilot.press("enter")
        # the note is appended by a worker and shown when its message lands: wait for that
        await until(pilot, lambda: app.screen is answer and "claim:1" in beside())
        assert "production exception omitted" in beside() and "signed by ines" in beside()
        assert [str(c) for c in answer.query_one("#citations", DataTable).get_row_at(0)][3] == "1"
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, EvidenceScreen))
        await pilot.press("n")
        await until(pilot, lambda: isinstance(app.screen, PromptScreen))
        app.screen.query_one(Input).value = "retrieved chunk had the exception"
        await pilot.press("enter")
        signed = "note signed and appended (2"
        await until(pilot, lambda: any(signed in n.message for n in app._notifications))
        await pilot.press("escape")
        # back on the answer, its notes are reloaded by a worker the resume starts
        await until(pilot, lambda: app.screen is answer and "passage:p1" in beside())
        await pilot.press("N")
        await until(pilot, lambda: isinstance(app.screen, NotesScreen) and len(app.screen.rows) == 2)
        screen = app.screen
        assert isinstance(screen, NotesScreen)
        assert [r.target for r in screen.rows] == ["claim:1", "passage:p1"]
        # the rows are set before the table is painted: wait for the frame that shows them
        await until(pilot, lambda: "production exception omitted" in screen_text(pilot))


async def test_filter_by_state_and_text_and_sort(built: Built) -> None:
    app = built.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, AnswersScreen)
        await pilot.press("slash")
        await settle(pilot)
        app.screen.query_one(Input).value = "state:stale"
        await pilot.press("enter")
        await settle(pilot)
        table = screen.query_one("#answers", DataTable)
        ids = [str(table.get_row_at(i)[0]) for i in range(table.row_count)]
        assert ids == ["ans-stale", "note-1 (note)", "ans-derived"]
        assert "3 answer(s)" in str(screen.query_one("#summary", Static).render())
        screen.list_filter = screen.list_filter.__class__()
        await pilot.press("slash")
        await settle(pilot)
        app.screen.query_one(Input).value = "document:returns"
        await pilot.press("enter")
        await settle(pilot)
        assert [str(table.get_row_at(i)[0]) for i in range(table.row_count)] == ["ans-stale"]
        await pilot.press("c", "s")
        await settle(pilot)
        assert str(table.get_row_at(0)[0]) == "ans-runbook"


async def test_every_action_is_in_the_palette_footer_and_help(built: Built) -> None:
    app = built.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await _open_answer(pilot, app, "ans-stale")
        ids = {a.binding.id for a in screen_actions(app.screen)}
        wanted = {"tracer.evidence", "tracer.lineage", "tracer.add_note", "tracer.verify", "tracer.back"}
        assert wanted | {"tracer.help", "tracer.quit", "tracer.contrast"} <= ids
        footer = screen_text(pilot).splitlines()[-1]
        assert "⏎ Evidence" in footer and "l Lineage" in footer
        for action in screen_actions(app.screen):
            assert action.binding.tooltip, action.binding.id
        await pilot.press("question_mark")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        text = screen_text(pilot)
        assert "Answer (here)" in text and "Lineage" in text and "Verify" in text


async def test_palette_runs_a_screen_action(built: Built) -> None:
    app = built.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await _open_answer(pilot, app, "ans-derived")
        await pilot.press("ctrl+p")
        await settle(pilot)
        await pilot.press(*"lineage")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, LineageScreen)


async def test_high_contrast_toggle(built: Built) -> None:
    app = built.app(theme="high-contrast")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.high_contrast
        await pilot.press("t")
        assert not app.high_contrast


async def test_export_the_current_answer(built: Built, tmp_path: Path) -> None:
    pytest.importorskip("tracer.report.export")
    app = built.app()
    out = tmp_path / "pack"
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await _open_answer(pilot, app, "ans-stale")
        await pilot.press("e")
        await settle(pilot)
        assert isinstance(app.screen, PromptScreen)
        app.screen.query_one(Input).value = str(out)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, AnswerScreen)
    assert out.is_dir() and any(out.rglob("*.json"))


async def test_rows_show_first_and_states_fill_in_from_the_engine(built: Built) -> None:
    """A page is shown from SQL alone; its states arrive afterwards, exactly the engine's."""
    from tracer.engine.trace import Tracer
    from tracer.tui.screens.answers import _PENDING

    app = built.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, AnswersScreen)
        table = screen.query_one("#answers", DataTable)
        # a page posted without states shows placeholders, never a guessed word
        screen.generation += 1
        table.clear()
        from store import queries
        from store.queries import AnswerFilter

        with app.engine.use() as s:
            rows = queries.answer_rows(s.vault, AnswerFilter(), 100)
        screen.post_message(AnswersScreen.Page(screen.generation, rows, {}, rows[-1].seq, True))
        await pilot.pause()
        assert table.row_count == len(ANSWER_IDS)

        def filled() -> bool:
            return all(_PENDING not in [str(c) for c in table.get_row_at(i)] for i in range(table.row_count))

        # the fill worker starts after the rows are painted and its states are drawn on a
        # timer: workers done is not states shown (it failed so under load), so wait for them
        await until(pilot, filled)
        with app.engine.use() as s:
            tracer = Tracer(s)
            want = {r.answer_id: tracer.summary(r.answer_id) for r in rows}
        for i in range(table.row_count):
            cells = [str(c) for c in table.get_row_at(i)]
            aid = rows[i].answer_id
            assert _PENDING not in cells
            assert cells[1:3] == [want[aid].integrity, want[aid].currency]


async def test_a_failed_verification_says_so_on_the_screen(
    built: Built, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not only a passing toast: the result line says it failed, and the bar stops."""
    from tracer.tui.screens import verify as verify_screen

    def broken(*_a: object, **_k: object) -> None:
        raise RuntimeError("disk \x1b[31mred\x1b[0m unreadable")

    monkeypatch.setattr(verify_screen, "verify", broken)
    app = built.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("v")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, VerifyScreen) and screen.report is None
        phase = str(screen.query_one("#verify-phase", Static).render())
        assert phase.startswith("failed: disk") and "\x1b" not in phase
        assert screen.query_one(ProgressBar).progress == 0
