"""Every fact whole at 80×24 and 160×48: state words, the footer's keys, the unlock card."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable

from tests.tui.conftest import Built, screen_text, settle
from tests.tui.fixture_vault import ANSWER_IDS
from tracer.engine.states import CURRENCY, INTEGRITY
from tracer.engine.trace import Summary
from tracer.tui.screens.answer import AnswerScreen
from tracer.tui.screens.answers import AnswersScreen, Looked
from tracer.tui.screens.unlock import UnlockScreen

SIZES = [(80, 24), (160, 48)]


def _pairs() -> list[tuple[str, str]]:
    """Every word of both axes, paired so that each appears at least once."""
    n = max(len(INTEGRITY), len(CURRENCY))
    return [(INTEGRITY[i % len(INTEGRITY)], CURRENCY[i % len(CURRENCY)]) for i in range(n)]


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_no_state_word_is_cut_in_the_answers_list(built: Built, size: tuple[int, int]) -> None:
    app = built.app()
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, AnswersScreen)
        pairs = _pairs()
        ids = list(ANSWER_IDS[: len(pairs)])
        # the engine's words are put in by the screen's own message: what is tested is
        # the layout, for words the fixture vault does not happen to produce
        states = {a: Looked(Summary(a, i, c, True), None) for a, (i, c) in zip(ids, pairs, strict=True)}
        screen.post_message(AnswersScreen.States(screen.generation, states))
        await pilot.pause()
        await pilot.pause()
        lines = screen_text(pilot).splitlines()
        for answer_id, (integrity, currency) in zip(ids, pairs, strict=True):
            row = next(line for line in lines if answer_id in line)
            words = row.split()
            assert integrity in words and currency in words, (size, row)


async def test_claims_and_impact_state_columns_fit_the_longest_word(built: Built) -> None:
    app = built.app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.push_screen(AnswerScreen("ans-stale"))
        await settle(pilot)
        claims = app.screen.query_one("#citations", DataTable)
        widths = {str(c.key.value): c.width for c in claims.columns.values()}
        assert widths["integrity"] >= max(map(len, INTEGRITY))
        assert widths["currency"] >= max(map(len, CURRENCY))
        # the states come right after the claim number, before long ids and spans
        assert list(widths)[:3] == ["claim", "integrity", "currency"]
        await pilot.press("i")
        await settle(pilot)
        answers = app.screen.query_one("#impact-answers", DataTable)
        widths = {str(c.key.value): c.width for c in answers.columns.values()}
        assert widths["integrity"] >= max(map(len, INTEGRITY))
        assert widths["currency"] >= max(map(len, CURRENCY))


async def test_the_footer_keeps_verify_help_and_quit_at_80_columns(built: Built) -> None:
    app = built.app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        for screen in (None, "ans-stale"):
            if screen is not None:
                app.push_screen(AnswerScreen(screen))
                await settle(pilot)
            footer = screen_text(pilot).splitlines()[-1]
            for key in ("v Verify", "? Help", "q Quit"):
                assert key in footer, (screen, footer)


async def test_the_unlock_card_is_whole_at_80x24(built: Built) -> None:
    app = built.app(passphrase=None)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, UnlockScreen)
        text = screen_text(pilot)
        for label in ("Unlock a tracer vault", "Vault", "Custodian:", "Investigator key file", "Passphrase"):
            assert label in text, label
        assert "Forensic: inspect a vault that failed the rollback check" in text
        footer = text.splitlines()[-1]
        # the fields take printable keys: q is not offered here, Escape quits
        assert "q Quit" not in footer and "esc Quit" in footer


async def test_the_answer_header_stays_while_the_body_scrolls(built: Built) -> None:
    app = built.app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.push_screen(AnswerScreen("ans-hostile"))
        await settle(pilot)
        body = app.screen.query_one("#answer-body")
        body.scroll_end(animate=False)
        await pilot.pause()
        text = screen_text(pilot)
        assert "answer ans-hostile" in text and "states computed" in text
