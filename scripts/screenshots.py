"""Regenerate the TUI screenshots in docs/images/ from the sample vault.

    python scripts/screenshots.py           # write docs/images/*.svg
    python scripts/screenshots.py --check   # exit 1 if a committed screenshot is stale

Each picture is Textual's own SVG export (`App.export_screenshot`) of the real app driven
by the keyboard (Pilot) over a freshly built sample vault, unlocked as ines, with a
frozen clock and a scratch TRACER_HOME: nothing is drawn by hand, and the same build
gives the same pictures, so `--check` (and `tests/tui/test_screenshots.py`) catches a
screenshot that no longer shows what the app shows.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from textual.pilot import Pilot

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "images"
SIZE = (120, 36)
CLOCK = "2026-12-01T09:00:00Z"
#: the sample vault's own examples (sample_vault/README.md)
STALE = "ans-0f914800ec7a"  # UK returns: thirty days then, fourteen now
PURGED = "ans-929c791b08af"  # travel allowance r1: its revision text purged by retention

Step = Callable[["Pilot[None]"], Awaitable[None]]


async def _settle(pilot: Pilot[None]) -> None:
    app = pilot.app
    for _ in range(80):
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        if not any(w.is_running for w in app.workers):
            return


async def _shoot(vault: Path, name: str, steps: Step) -> str:
    from tracer.tui.app import TracerApp
    from tracer.tui.context import LaunchOptions

    opts = LaunchOptions(vault, vault / "keys" / "ines.key", b"ines-demo")
    app = TracerApp(opts)
    async with app.run_test(size=SIZE) as pilot:
        await _settle(pilot)
        await steps(pilot)
        await _settle(pilot)
        return app.export_screenshot(title=f"tracer — {name}")


async def _answers(pilot: Pilot[None]) -> None:
    return None


def _open_evidence(answer_id: str) -> Step:
    async def steps(pilot: Pilot[None]) -> None:
        from tracer.tui.screens.answer import AnswerScreen

        pilot.app.push_screen(AnswerScreen(answer_id))
        await _settle(pilot)
        await pilot.press("enter")  # the first claim's evidence
        await _settle(pilot)

    return steps


async def _verify(pilot: Pilot[None]) -> None:
    await pilot.press("v")
    await _settle(pilot)


SHOTS: dict[str, tuple[str, Step]] = {
    "answers.svg": ("the answers list", _answers),
    "stale-evidence.svg": ("a stale answer: historical and current panes", _open_evidence(STALE)),
    "tombstone.svg": ("a purged revision: the tombstone in its place", _open_evidence(PURGED)),
    "verify.svg": ("verification and its one finding", _verify),
}


async def _all(vault: Path) -> dict[str, str]:
    return {f: await _shoot(vault, title, steps) for f, (title, steps) in SHOTS.items()}


def render(vault: Path | None = None) -> dict[str, str]:
    """Build the sample vault in a scratch directory (or take `vault`, a fresh build nothing
    has opened yet, e.g. a copy of one) and take every screenshot."""
    saved = {k: os.environ.get(k) for k in ("TRACER_HOME", "TRACER_CLOCK")}
    with tempfile.TemporaryDirectory(prefix="tracer-shots-") as tmp:
        os.environ["TRACER_HOME"] = str(Path(tmp) / "home")
        os.environ["TRACER_CLOCK"] = CLOCK
        try:
            if vault is None:
                from sample_vault.build import build

                vault = build(Path(tmp) / "vault").vault_dir
            return asyncio.run(_all(vault))
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v


def _committed(path: Path) -> str | None:
    return path.read_text(encoding="utf-8") if path.is_file() else None


def main(argv: list[str] | None = None, vault: Path | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with docs/images; write nothing")
    parser.add_argument("--out", type=Path, default=OUT, help="where the SVGs go (default docs/images)")
    args = parser.parse_args(argv)
    shots = render(vault)
    if args.check:
        stale = [
            f
            for f, svg in shots.items()
            if not (args.out / f).is_file() or (args.out / f).read_text(encoding="utf-8") != svg
        ]
        for f in stale:
            print(f"stale screenshot: {args.out / f} (run python scripts/screenshots.py)", file=sys.stderr)
        return 1 if stale else 0
    args.out.mkdir(parents=True, exist_ok=True)
    for f, svg in shots.items():
        (args.out / f).write_text(svg, encoding="utf-8")
        print(args.out / f)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    raise SystemExit(main())
