"""A full tombstone card wherever a purged text would stand, for every kind of text.

Each answer of the purged vault has exactly one kind purged: the card must stand in
that place (with policy, reason, authorizer, time and log entry), the purged words must
not appear anywhere on screen, and no other text may stand in for them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widget import Widget

from tests.helpers import PASSPHRASE
from tests.tui.conftest import SIZE, screen_text, settle
from tests.tui.purged_vault import PURGED, make_purged_vault
from tracer.tui.app import TracerApp
from tracer.tui.context import LaunchOptions
from tracer.tui.screens.answer import AnswerScreen
from tracer.tui.screens.evidence import EvidenceScreen
from tracer.tui.widgets.current import CurrentRevisionPane
from tracer.tui.widgets.tombstone import TombstoneCard

#: answer id -> the CSS selector of the place its purged text would stand
PLACE = {
    "ans-p-retrieved": ".side-by-side > .historical",
    "ans-p-model": "PassageView > .historical",
    "ans-p-cited": ".cited-content",
    "ans-p-current": ".side-by-side > .current",
}
#: words only the purged text held (a cited revision's quote lives on in the passage)
GONE = {
    "ans-p-retrieved": "Lanterns are sold in pairs only.",
    "ans-p-model": "[source: kb]",
    "ans-p-cited": "# Ropes",
    "ans-p-current": "1:40000",
}


def _card_in(place: Widget) -> TombstoneCard:
    cards = list(place.query(TombstoneCard))
    assert len(cards) == 1, place
    return cards[0]


def _check_card(card: TombstoneCard, answer_id: str) -> None:
    what, _words, policy = PURGED[answer_id]
    body = str(card.render())
    for fact in ("TOMBSTONE", policy, f"{what} expired", "dpo", "2026-01-01T00:00:00Z", "log entry"):
        assert fact in body, (answer_id, fact, body)


@pytest.fixture
def purged_app(tmp_path: Path) -> TracerApp:
    key = make_purged_vault(tmp_path)
    return TracerApp(LaunchOptions(tmp_path / "vault", key, PASSPHRASE))


@pytest.mark.parametrize("answer_id", sorted(PLACE))
async def test_a_purged_text_behind_a_passage_shows_its_card_in_its_place(
    purged_app: TracerApp, answer_id: str
) -> None:
    app = purged_app
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.push_screen(AnswerScreen(answer_id))
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        ev = app.screen
        assert isinstance(ev, EvidenceScreen)
        _check_card(_card_in(ev.query_one(PLACE[answer_id])), answer_id)
        assert GONE[answer_id] not in screen_text(pilot)
        if answer_id == "ans-p-current":
            # the current revision's text is gone: no excerpt pane claims to show it
            assert not ev.query(CurrentRevisionPane)
            title = str(ev.query_one(".side-by-side > .current .pane-title").render())
            assert title.startswith("Current revision B (")


async def test_a_purged_answer_text_shows_its_card_in_the_answers_place(purged_app: TracerApp) -> None:
    app = purged_app
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.push_screen(AnswerScreen("ans-p-answer"))
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, AnswerScreen)
        _check_card(_card_in(screen.query_one("#answer-text")), "ans-p-answer")
        assert "900 g" not in screen_text(pilot)
