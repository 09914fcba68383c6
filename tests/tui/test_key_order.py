"""Keys that arrive together are handled in the order they were typed.

A terminal (or tmux, or a person typing fast on a loaded machine) can deliver Down,
Down, Enter in one read.  Enter must open the row the two Downs moved to: it is the
table's own binding, not a priority screen binding that overtakes the arrows still on
their way to the table.
"""

from __future__ import annotations

from textual import events
from textual.widgets import DataTable

from tests.tui.conftest import SIZE, Built, settle
from tests.tui.fixture_vault import ANSWER_IDS
from tracer.tui.app import TracerApp
from tracer.tui.screens.answer import AnswerScreen
from tracer.tui.screens.answers import AnswersScreen
from tracer.tui.screens.evidence import EvidenceScreen


def _typed_at_once(app: TracerApp, *keys: str) -> None:
    """The keys as one terminal read delivers them: all queued before any is handled."""
    for key in keys:
        app.post_message(events.Key(key, None))


async def test_down_enter_opens_the_second_claim(built: Built) -> None:
    app = built.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.push_screen(AnswerScreen("ans-hostile"))
        await settle(pilot)
        assert isinstance(app.screen, AnswerScreen) and app.screen.trace is not None
        table = app.screen.query_one("#citations", DataTable)
        assert app.focused is table and table.cursor_row == 0
        _typed_at_once(app, "down", "enter")
        await settle(pilot)
        assert table.cursor_row == 1
        assert isinstance(app.screen, EvidenceScreen) and app.screen.heading == "claim [2]"


async def test_down_down_enter_opens_the_third_answer(built: Built) -> None:
    app = built.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, AnswersScreen)
        _typed_at_once(app, "down", "down", "enter")
        await settle(pilot)
        assert isinstance(app.screen, AnswerScreen) and app.screen.answer_id == ANSWER_IDS[2]
