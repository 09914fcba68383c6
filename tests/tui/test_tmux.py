"""The real `tracer open` in a real terminal (tmux): type the passphrase, navigate, read.

Uses its own tmux server socket so it never touches a user's sessions, and bounds
every wait (30 s in total) by polling the pane instead of sleeping blindly.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import PASSPHRASE
from tests.tui.conftest import CLOCK, Built

#: whole processes, real terminals or kill loops: `-m 'not slow'` skips them
pytestmark = pytest.mark.slow

BUDGET = 30.0
#: seconds one wait may poll, counted from its own start: on a starved machine every step
#: is slower, and one budget for the whole walk let the later steps fail
STEP = 60.0


class Tmux:
    def __init__(self, socket: str):
        self.base = ["tmux", "-L", socket]
        self.deadline = time.monotonic() + BUDGET

    def run(self, *args: str) -> str:
        return subprocess.run([*self.base, *args], capture_output=True, text=True, check=True).stdout

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-t", "tracer")

    def wait_for(self, *needles: str) -> str:
        text = ""
        end = max(self.deadline, time.monotonic() + STEP)
        while time.monotonic() < end:
            text = self.screen()
            if all(n in text for n in needles):
                # what waits on `deadline` after this step gets a step's time too
                self.deadline = max(self.deadline, time.monotonic() + STEP)
                return text
            time.sleep(0.1)  # polling a real terminal: there is no event to wait on
        raise AssertionError(f"timed out waiting for {needles!r}; screen was:\n{text}")

    def alive(self) -> bool:
        return (
            subprocess.run([*self.base, "has-session", "-t", "tracer"], capture_output=True).returncode == 0
        )


@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[Tmux]:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not on PATH")
    t = Tmux(f"tracer-test-{os.getpid()}-{tmp_path.name}")
    yield t
    subprocess.run([*t.base, "kill-server"], capture_output=True)


def open_command(vault: Path, key: Path, env: dict[str, str]) -> str:
    """The real `tracer open VAULT --key KEY` in a clean environment (no COLUMNS/LINES
    from this terminal) plus `env`, as one shell command for tmux."""
    tracer = Path(sys.executable).parent / "tracer"
    return " ".join(
        [
            "env",
            "-u",
            "COLUMNS",
            "-u",
            "LINES",
            *(f"{k}={shlex.quote(v)}" for k, v in {"TERM": "xterm-256color", **env}.items()),
            shlex.quote(str(tracer)),
            "open",
            shlex.quote(str(vault)),
            "--key",
            shlex.quote(str(key)),
        ]
    )


def _open_command(built: Built, tmp_path: Path, **extra: str) -> str:
    """`tracer open` on the fixture vault as ines, in a clean environment plus `extra`."""
    env = {"TRACER_HOME": str(tmp_path / "tracer-home"), "TRACER_CLOCK": CLOCK}
    return open_command(built.vault, built.keys.ines, {**env, **extra})


def test_tracer_open_in_tmux(built: Built, tmux: Tmux, tmp_path: Path) -> None:
    tmux.run("new-session", "-d", "-s", "tracer", "-x", "160", "-y", "48", _open_command(built, tmp_path))
    # the footer is painted last: once it shows, the passphrase field has focus
    tmux.wait_for("Passphrase", "Unlock a tracer vault", "Unlock ")
    tmux.run("send-keys", "-t", "tracer", "-l", PASSPHRASE.decode())
    tmux.wait_for("•" * len(PASSPHRASE))
    tmux.run("send-keys", "-t", "tracer", "Enter")
    listing = tmux.wait_for("9 answer(s)", "ans-runbook", "ines (investigator")
    assert "ans-stale" in listing and "stale" in listing
    answer = ""
    for _attempt in range(3):
        # Down is ESC [ B on the wire; on a loaded machine the bytes can arrive apart and
        # be read as Escape, "[" and "B".  Try again rather than fail on the transport.
        tmux.run("send-keys", "-t", "tracer", "Down")
        tmux.run("send-keys", "-t", "tracer", "Enter")
        # the header is written last, once the claims are on screen and focused
        answer = tmux.wait_for("Claims: Enter opens the evidence", "states computed")
        if "answer ans-stale" in answer:
            break
        tmux.run("send-keys", "-t", "tracer", "Escape")
        tmux.wait_for("9 answer(s)", "press / to filter")
    assert "Refunds are accepted for thirty days.[1]" in answer, answer
    tmux.run("send-keys", "-t", "tracer", "Enter")
    evidence = tmux.wait_for("Current revision C (2026-05-05T00:00:00Z)")
    assert "thirty" in evidence and "fourteen" in evidence
    tmux.run("send-keys", "-t", "tracer", "Escape")
    tmux.wait_for("answer ans-stale", "Claims")
    tmux.run("send-keys", "-t", "tracer", "q")
    while tmux.alive() and time.monotonic() < tmux.deadline:
        time.sleep(0.1)
    assert not tmux.alive(), "tracer did not quit on q"


def test_verify_with_worker_processes_in_a_real_terminal(built: Built, tmux: Tmux, tmp_path: Path) -> None:
    """Inside the running app stderr is Textual's capture, which has no file descriptor;
    worker processes must still start (and verify must finish) from a real terminal."""
    command = _open_command(built, tmp_path, TRACER_PASSPHRASE=PASSPHRASE.decode(), TRACER_VERIFY_WORKERS="2")
    tmux.run("new-session", "-d", "-s", "tracer", "-x", "160", "-y", "48", command)
    tmux.wait_for("9 answer(s)", "ans-runbook")
    tmux.run("send-keys", "-t", "tracer", "v")
    result = tmux.wait_for("RESULT", "done at")
    assert "finding(s)" in result and "failed:" not in result, result
    tmux.run("send-keys", "-t", "tracer", "q")


def test_a_passphrase_and_enter_in_one_terminal_read_unlock(built: Built, tmux: Tmux, tmp_path: Path) -> None:
    """What a password manager's auto-type does: the characters and the Enter in one write,
    so the app reads them in one go; the field's own submit comes after every character."""
    tmux.run("new-session", "-d", "-s", "tracer", "-x", "80", "-y", "24", _open_command(built, tmp_path))
    tmux.wait_for("Passphrase", "Unlock a tracer vault", "⏎ Unlock")
    tmux.run("send-keys", "-t", "tracer", "-l", PASSPHRASE.decode() + "\r")  # one write
    listing = tmux.wait_for("9 answer(s)", "ines (investigator")
    assert "wrong passphrase" not in listing
    footer = listing.splitlines()[-1]
    assert "? Help" in footer and "v Verify" in footer and "q Quit" in footer, footer
    tmux.run("send-keys", "-t", "tracer", "q")
    while tmux.alive() and time.monotonic() < tmux.deadline:
        time.sleep(0.1)
    assert not tmux.alive(), "tracer did not quit on q"


def test_a_hold_placed_and_released_in_tmux_at_80x24(tmux: Tmux, tmp_path: Path) -> None:
    """The whole hold flow in a real 80×24 terminal, as a user types it: the banner on
    the first screen, every answer id on it whole or marked `…`."""
    import re

    from tests.case.world import build_world

    world = build_world(tmp_path / "world")
    world.case.investigators["ines"].save(tmp_path / "keys", PASSPHRASE)
    world.case.vault.close()
    env = {"TRACER_HOME": str(tmp_path / "tracer-home"), "TRACER_CLOCK": CLOCK}
    tmux.deadline = time.monotonic() + 4 * BUDGET  # five screens and two signatures
    command = open_command(world.case.path, tmp_path / "keys" / "ines.key", env)
    tmux.run("new-session", "-d", "-s", "tracer", "-x", "80", "-y", "24", command)
    tmux.wait_for("Passphrase", "Unlock a tracer vault", "Unlock ")
    tmux.run("send-keys", "-t", "tracer", "-l", PASSPHRASE.decode())
    tmux.wait_for("•" * len(PASSPHRASE))
    tmux.run("send-keys", "-t", "tracer", "Enter")
    tmux.wait_for("ans-restart", "press / to filter")
    tmux.run("send-keys", "-t", "tracer", "/")
    tmux.wait_for("Enter to accept")
    tmux.run("send-keys", "-t", "tracer", "-l", "ans-restart")
    tmux.run("send-keys", "-t", "tracer", "Enter")
    tmux.wait_for("filter: ans-restart")
    tmux.run("send-keys", "-t", "tracer", "Enter")
    tmux.wait_for("answer ans-restart", "states computed")
    tmux.run("send-keys", "-t", "tracer", "H")
    tmux.wait_for("Place a legal hold on:")
    tmux.run("send-keys", "-t", "tracer", "Enter")
    tmux.wait_for("why? (the reason is signed)")
    tmux.run("send-keys", "-t", "tracer", "-l", "litigation hold")
    tmux.run("send-keys", "-t", "tracer", "Enter")
    statement = tmux.wait_for("F2 signs and appends", '"reason": "litigation hold"')
    assert '"id": "ans-restart"' in statement
    tmux.run("send-keys", "-t", "tracer", "F2")
    first = tmux.wait_for("LEGAL HOLD in force", "legal hold signed at log entry")
    for token in re.findall(r"ans-[\w.-]+…?", first):
        assert token in ("ans-restart", "ans-restart…") or token.endswith("…"), (token, first)
    tmux.run("send-keys", "-t", "tracer", "U")
    tmux.wait_for("Release the legal hold at log entry")
    tmux.run("send-keys", "-t", "tracer", "-l", "settled")
    tmux.run("send-keys", "-t", "tracer", "Enter")
    tmux.wait_for("F2 signs and appends", '"reason": "settled"')
    tmux.run("send-keys", "-t", "tracer", "F2")
    done = tmux.wait_for("hold release signed at log entry")
    assert "LEGAL HOLD in force" not in done
    tmux.run("send-keys", "-t", "tracer", "q")
    while tmux.alive() and time.monotonic() < tmux.deadline:
        time.sleep(0.1)
    assert not tmux.alive(), "tracer did not quit on q"
