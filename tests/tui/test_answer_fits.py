"""At 80×24 an answer's first screen holds its header, any hold over it, and every claim.

The claims table sits right under the header, outside the scrolling body (issue 27):
before, the head, banners and panes took the screen and the claims' rows sat below it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from textual.pilot import Pilot
from textual.widgets import DataTable

from store.crypto import load_identity
from tests.tui.conftest import screen_text, settle, until
from tracer.engine.case import CaseDesk
from tracer.engine.session import unlock
from tracer.engine.trust import TrustStore
from tracer.tui.app import TracerApp
from tracer.tui.context import LaunchOptions
from tracer.tui.screens.answer import AnswerScreen

#: the dropped production exception: two claims and a passage retrieved, not cited
RUNBOOK = "ans-1b140d83c6e1"
ROWS = ("psg-cb38ebfdb6", "psg-eb569606e0", "psg-e3ae860d34")
Snap = Callable[..., bool]


def _hold(vault: Path) -> None:
    ident = load_identity(vault / "keys" / "custodian.key", b"northstar-custodian")
    with unlock(vault, ident, trust=TrustStore()) as s:
        desk = CaseDesk(s)
        desk.open_case("INC-27", "Payments restart", "the restart during settlement")
        desk.hold("answer", RUNBOOK, "preserve for the incident review", case_id="INC-27")


def _ines(vault: Path) -> TracerApp:
    return TracerApp(LaunchOptions(vault, vault / "keys" / "ines.key", b"ines-demo"))


def _open(answer_id: str) -> Callable[[Pilot[Any]], Awaitable[None]]:
    async def run_before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        pilot.app.push_screen(AnswerScreen(answer_id))
        await until(pilot, lambda: getattr(pilot.app.screen, "trace", None) is not None)
        await settle(pilot)
        pilot.app.clear_notifications()
        await until(pilot, lambda: not pilot.app.screen.query("Toast"))
        await settle(pilot)

    return run_before


async def test_at_80x24_the_hold_and_every_claim_are_on_the_first_screen(sample_vault: Path) -> None:
    _hold(sample_vault)
    app = _ines(sample_vault)
    async with app.run_test(size=(80, 24)) as pilot:
        await _open(RUNBOOK)(pilot)
        screen = app.screen
        assert isinstance(screen, AnswerScreen)
        table = screen.query_one("#citations", DataTable)
        assert table.row_count == len(ROWS)
        assert app.focused is table
        lines = screen_text(pilot).splitlines()
        head = next(i for i, line in enumerate(lines) if f"answer {RUNBOOK}" in line)
        assert any("LEGAL HOLD in force" in line for line in lines[head:])
        label = next(i for i, line in enumerate(lines) if line.strip().startswith("Claims:"))
        assert head < label
        for n, passage in enumerate(ROWS):
            # each row drawn whole, in order, under the label, above the footer
            at = next(i for i, line in enumerate(lines) if passage in line)
            assert label < at < len(lines) - 1, passage
            assert ("—" if n == 2 else f"[{n + 1}]") in lines[at]
        # the texts scroll below the claims; Tab goes there and the claims stay put
        await pilot.press("tab")
        await settle(pilot)
        body = screen.query_one("#answer-body")
        assert app.focused is body
        for scroll in (body.scroll_home, body.scroll_end):
            scroll(animate=False)
            await settle(pilot)
            after = screen_text(pilot)
            assert all(p in after for p in ROWS) and "LEGAL HOLD in force" in after


async def test_outside_your_scope_there_is_no_claims_table(sample_vault: Path) -> None:
    app = TracerApp(LaunchOptions(sample_vault, sample_vault / "keys" / "omar.key", b"omar-demo"))
    async with app.run_test(size=(80, 24)) as pilot:
        await _open("ans-f1dcccc7f652")(pilot)  # derived from a restricted legal draft
        screen = app.screen
        assert isinstance(screen, AnswerScreen) and screen.trace is not None
        assert not screen.trace.visible
        assert not screen.query_one("#citations").display
        assert "Claims:" not in screen_text(pilot)


def test_snapshot_answer_with_a_hold_at_80x24(sample_vault: Path, snap_compare: Snap) -> None:
    _hold(sample_vault)
    assert snap_compare(_ines(sample_vault), terminal_size=(80, 24), run_before=_open(RUNBOOK))
