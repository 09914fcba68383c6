"""A few pinned pictures (fixed keys, frozen clock; textual pinned in pyproject).

The four views an auditor reads most are pinned at 80x24 and at 160x48: the answers
list, the stale side-by-side, the tombstone card and the verification results.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from textual.pilot import Pilot

from tests.tui.conftest import SIZE, Built, settle
from tracer.tui.screens.answer import AnswerScreen

Snap = Callable[..., bool]


def _goto(answer_id: str | None, *keys: str) -> Callable[[Pilot[Any]], Awaitable[None]]:
    async def run_before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        if answer_id is not None:
            pilot.app.push_screen(AnswerScreen(answer_id))
            await settle(pilot)
        for key in keys:
            await pilot.press(key)
            await settle(pilot)
        pilot.app.clear_notifications()
        for _ in range(20):  # toasts leave on a later refresh; wait until none is mounted
            await pilot.pause()
            if not pilot.app.screen.query("Toast"):
                break
        await settle(pilot)

    return run_before


SIZES = pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=lambda s: f"{s[0]}x{s[1]}")


@SIZES
def test_answers_list(built: Built, snap_compare: Snap, size: tuple[int, int]) -> None:
    assert snap_compare(built.app(), terminal_size=size, run_before=_goto(None))


def test_answers_list_high_contrast(built: Built, snap_compare: Snap) -> None:
    assert snap_compare(built.app(theme="high-contrast"), terminal_size=SIZE, run_before=_goto(None))


@SIZES
def test_stale_evidence_side_by_side(built: Built, snap_compare: Snap, size: tuple[int, int]) -> None:
    assert snap_compare(built.app(), terminal_size=size, run_before=_goto("ans-stale", "enter"))


@SIZES
def test_purged_evidence_tombstone(built: Built, snap_compare: Snap, size: tuple[int, int]) -> None:
    assert snap_compare(built.app(), terminal_size=size, run_before=_goto("ans-purged", "enter"))


@SIZES
def test_verify_results(built: Built, snap_compare: Snap, size: tuple[int, int]) -> None:
    assert snap_compare(built.app(), terminal_size=size, run_before=_goto(None, "v"))


def test_lineage_strictest(built: Built, snap_compare: Snap) -> None:
    assert snap_compare(built.app(), terminal_size=SIZE, run_before=_goto("ans-derived", "l"))
