"""The evidence screen shows a `not_sent` passage's model-input state as a word, where
the model input would stand, and never a text."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from tests.helpers import PASSPHRASE, manifest, new_case, passage, revision, signed
from tests.tui.conftest import SIZE, screen_text, settle
from tracer.engine.trace import Tracer
from tracer.tui.app import TracerApp
from tracer.tui.context import LaunchOptions
from tracer.tui.screens.evidence import EvidenceScreen

DOC = (
    "# Returns policy\n\n## Refund window\n\nRefunds within thirty days.\n\n"
    "## Gift cards\n\nNever refunded.\n"
)


async def test_the_evidence_screen_says_not_sent(tmp_path: Path) -> None:
    case = new_case(tmp_path / "vault")
    try:
        rev = revision("returns", "r1", DOC, "2026-01-05T00:00:00Z")
        sent = passage(rev, "thirty days", "p1", model_input="sent")
        unsent = passage(rev, "Never refunded", "p2", rank=2, model_input="not_sent")
        m = manifest("ans-ns", "Thirty days.", [sent, unsent], citations=[(0, 6, ["p1"])])
        assert case.ingest(rev, signed(case, m)).ok
        s = case.session("ines")
        t = Tracer(s).trace("ans-ns", record=False)
        s.close()
    finally:
        case.close()
    keys = tmp_path / "keys"
    case.investigators["ines"].save(keys, PASSPHRASE)
    app = TracerApp(LaunchOptions(tmp_path / "vault", keys / "ines.key", PASSPHRASE))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.push_screen(EvidenceScreen(t, "retrieved, not cited", [t.passages[1]]))
        await settle(pilot)
        line = str(app.screen.query_one(".model-input-state", Static).render())
        assert line.startswith("model input not_sent: retrieved, but in no prompt"), line
        assert "Model input as recorded" not in screen_text(pilot)
