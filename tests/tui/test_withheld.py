"""A text withheld for its checksum: its digests once, under the pane's title, never twice."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from tests.tui.conftest import settle, until
from tracer.tui.app import TracerApp
from tracer.tui.context import LaunchOptions
from tracer.tui.screens.answer import AnswerScreen
from tracer.tui.screens.evidence import EvidenceScreen
from tracer.tui.widgets.alarm import WithheldNotice
from tracer.tui.widgets.historical import HistoricalText

#: the sample vault's tampered passage (sample_vault/README.md)
TAMPERED = "ans-f5f07070554a"


async def test_a_checksum_mismatch_says_its_digests_once(sample_vault: Path) -> None:
    app = TracerApp(LaunchOptions(sample_vault, sample_vault / "keys" / "ines.key", b"ines-demo"))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.push_screen(AnswerScreen(TAMPERED))
        await until(pilot, lambda: getattr(app.screen, "trace", None) is not None)
        await pilot.press("enter")
        await until(
            pilot, lambda: isinstance(app.screen, EvidenceScreen) and bool(app.screen.query(WithheldNotice))
        )
        await settle(pilot)
        pane = next(h for h in app.screen.query(HistoricalText) if h.query(WithheldNotice))
        text = "\n".join(str(s.render()) for s in pane.query(Static))
        recorded, recomputed = pane.result.digest[:16], (pane.result.recomputed or "")[:16]
        assert recorded and recomputed and recorded != recomputed
        assert text.count(recorded) == 1 and text.count(recomputed) == 1
        notice = str(pane.query_one(WithheldNotice).render())
        assert "CHECKSUM_MISMATCH" in notice and "not shown" in notice
