"""Fixtures for the TUI tests: a fresh vault per test, a frozen clock, and pilot helpers."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from textual.app import App
from textual.pilot import Pilot
from textual.worker import WorkerCancelled, WorkerState

from tests.helpers import PASSPHRASE
from tests.tui.fixture_vault import Keys, make_vault
from tracer.tui.app import TracerApp
from tracer.tui.context import LaunchOptions

CLOCK = "2026-11-29T12:00:00Z"
SIZE = (120, 40)


@dataclass(frozen=True)
class Built:
    vault: Path
    keys: Keys

    def app(self, key: Path | None = None, passphrase: bytes | None = PASSPHRASE, **kw: object) -> TracerApp:
        opts = LaunchOptions(self.vault, key or self.keys.ines, passphrase, **kw)  # type: ignore[arg-type]
        return TracerApp(opts)


@pytest.fixture(autouse=True)
def _frozen_clock(_isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("TRACER_CLOCK", CLOCK)
    yield


@pytest.fixture
def built(tmp_path: Path) -> Built:
    keys = make_vault(tmp_path)
    return Built(tmp_path / "vault", keys)


async def settle(pilot: Pilot[None], rounds: int = 40) -> None:
    """Let workers finish and their messages land; bounded, never a sleep.

    A worker still pending (created by a message handled a moment ago, its thread not yet
    started) counts as unfinished: `is_running` alone let a loaded machine return early.
    `pilot.pause()` guesses idleness from CPU time, which a starved process does not
    accumulate, so a test that needs a particular result waits for it with `until`."""
    app = pilot.app
    for _ in range(rounds):
        await pilot.pause()
        await _workers_done(app)
        await pilot.pause()
        if all(w.is_finished for w in app.workers) and _states_shown(app):
            return


def _states_shown(app: App[None]) -> bool:
    """The answers list draws its states on a timer after its workers end: a worker
    done is not a state shown (a test read a placeholder so under load)."""
    from tracer.tui.screens.answers import AnswersScreen

    screen = app.screen
    return not isinstance(screen, AnswersScreen) or screen.states_shown


async def _workers_done(app: App[None]) -> None:
    """Wait for every started worker. One cancelled meanwhile (an exclusive group's older
    worker, replaced by a newer one while we waited) is done, not a failure: Textual's
    `wait_for_complete` raised WorkerCancelled for it on a loaded machine. A worker that
    failed still raises."""
    for worker in list(app.workers):
        if worker.state is not WorkerState.PENDING:
            with contextlib.suppress(WorkerCancelled):
                await worker.wait()


async def until(pilot: Pilot[None], condition: Callable[[], bool], rounds: int = 400) -> None:
    """Wait for a state, not for a time: process messages and workers until `condition`
    holds; fail (naming nothing but the bound) if it never does."""
    for _ in range(rounds):
        if condition():
            return
        await settle(pilot, rounds=1)
    assert condition(), f"state not reached after {rounds} rounds; {_where(pilot)}"


def _where(pilot: Pilot[None]) -> str:
    """What a failed wait saw: the screen, its workers and what it showed (a flake under
    load is diagnosed from this line, not rerun)."""
    app = pilot.app
    workers = [f"{w.name}:{w.state.name}" for w in app.workers]
    return f"screen {app.screen!r}, workers {workers}, showing:\n{screen_text(pilot)}"


def screen_text(pilot: Pilot[None]) -> str:
    """What the terminal shows right now, as plain lines."""
    return "\n".join(strip.text for strip in pilot.app.screen._compositor.render_strips())
