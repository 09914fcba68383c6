"""A full tombstone card wherever a purged text would stand, for every kind of text.

Each answer of the purged vault has exactly one kind purged: the card must stand in
that place (with policy, reason, authorizer, time and log entry), the purged words must
not appear anywhere on screen, and no other text may stand in for them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import PASSPHRASE
from tests.tui.conftest import SIZE, screen_text, settle
from tests.tui.purged_vault import PURGED, make_purged_vault
from tracer.tui.app import TracerApp
from tracer.tui.context import LaunchOptions
from tracer.tui.screens.answer import AnswerScreen
from tracer.tui.screens.answers import AnswersScreen
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


@pytest.fixture
def purged_app(tmp_path: Path) -> TracerApp:
    key = make_purged_vault(tmp_path)
    return TracerApp(LaunchOptions(tmp_path / "vault", key, PASSPHRASE))


def _passage_cards(ev: EvidenceScreen, text: str, answer_id: str) -> list[str]:
    """What is wrong on the evidence screen of `answer_id` (nothing: an empty list)."""
    wrong: list[str] = []
    cards = list(ev.query_one(PLACE[answer_id]).query(TombstoneCard))
    if len(cards) != 1:
        return [f"{len(cards)} tombstone cards in {PLACE[answer_id]}"]
    wrong += _card_facts(cards[0], answer_id)
    if GONE[answer_id] in text:
        wrong.append(f"the purged words {GONE[answer_id]!r} are on screen")
    if answer_id == "ans-p-current":
        # the current revision's text is gone: no excerpt pane claims to show it
        if ev.query(CurrentRevisionPane):
            wrong.append("an excerpt pane claims to show the purged current revision")
        title = str(ev.query_one(".side-by-side > .current .pane-title").render())
        if not title.startswith("Current revision B ("):
            wrong.append(f"current pane title {title!r}")
    return wrong


def _card_facts(card: TombstoneCard, answer_id: str) -> list[str]:
    what, _words, policy = PURGED[answer_id]
    body = str(card.render())
    facts = ("TOMBSTONE", policy, f"{what} expired", "dpo", "2026-01-01T00:00:00Z", "log entry")
    return [f"card lacks {fact!r}: {body!r}" for fact in facts if fact not in body]


async def test_a_purged_text_shows_its_card_in_its_place_for_every_kind(purged_app: TracerApp) -> None:
    """Each kind in one app: the answer text's card on its answer screen, each passage's
    on its evidence screen.  Every kind is looked at before the test fails, naming each
    one that is wrong."""
    app = purged_app
    wrong: dict[str, list[str]] = {}
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.push_screen(AnswerScreen("ans-p-answer"))
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, AnswerScreen)
        cards = list(screen.query_one("#answer-text").query(TombstoneCard))
        wrong["ans-p-answer"] = (
            _card_facts(cards[0], "ans-p-answer") if len(cards) == 1 else [f"{len(cards)} cards"]
        )
        if "900 g" in screen_text(pilot):
            wrong["ans-p-answer"].append("the purged answer text is on screen")
        for answer_id in sorted(PLACE):
            while not isinstance(app.screen, AnswersScreen):
                await pilot.press("escape")
                await settle(pilot)
            app.push_screen(AnswerScreen(answer_id))
            await settle(pilot)
            await pilot.press("enter")
            await settle(pilot)
            ev = app.screen
            assert isinstance(ev, EvidenceScreen), (answer_id, ev)
            wrong[answer_id] = _passage_cards(ev, screen_text(pilot), answer_id)
    assert set(wrong) == set(PURGED)
    assert not any(wrong.values()), {a: w for a, w in wrong.items() if w}
