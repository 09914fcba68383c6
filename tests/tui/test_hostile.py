"""Hostile text is shown as data: markup literal, escapes and invisibles visibly marked."""

from __future__ import annotations

from textual.pilot import Pilot

from tests.tui.conftest import SIZE, Built, screen_text, settle
from tests.tui.fixture_vault import HOSTILE_REVISION, HOSTILE_RUN
from tracer.tui.screens.answer import AnswerScreen
from tracer.tui.screens.evidence import EvidenceScreen

MARKERS = ("⟨ESC⟩", "⟨BEL⟩", "⟨CSI⟩", "⟨U+202E⟩", "⟨U+2066⟩", "⟨U+2069⟩", "⟨U+200B⟩")
LITERAL = ("[bold]loud[/bold]", "[@click=app.quit]quit[/]", "[link=https://evil.test]x[/link]", "[a[0]]")


def _no_live_links(pilot: Pilot[None]) -> None:
    """Nothing from the vault became a clickable action or a terminal hyperlink."""
    for strip in pilot.app.screen._compositor.render_strips():
        for seg in strip:
            style = seg.style
            if style is None:
                continue
            assert not style.link, style.link
            assert "app.quit" not in str(style.meta.get("@click", "")), style.meta


async def test_hostile_answer_and_evidence_render_inert(built: Built) -> None:
    app = built.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.push_screen(AnswerScreen("ans-hostile"))
        await settle(pilot)
        text = screen_text(pilot)
        assert f"run {HOSTILE_RUN}" in text
        for marker in (*MARKERS, "⟨CR⟩"):
            assert marker in text, marker
        for literal in LITERAL:
            assert literal in text, literal
        assert "contains control, bidi or zero-width characters" in text
        assert "\x1b" not in text and "\x9b" not in text and "\u202e" not in text
        _no_live_links(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, EvidenceScreen)
        text = screen_text(pilot)
        assert f"revision {HOSTILE_REVISION}" in text
        assert "Hostile [bold]loud[/bold] [@click=app.quit]quit[/]" in text
        for marker in MARKERS:
            assert marker in text, marker
        _no_live_links(pilot)
        await pilot.press("escape", "escape")
        await settle(pilot)
        assert app.is_running and app.return_code is None
