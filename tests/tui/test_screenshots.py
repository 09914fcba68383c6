"""The screenshots in docs/images/ are what the app shows now (scripts/screenshots.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_committed_screenshots_are_not_stale(sample_vault: Path) -> None:
    """Taken over a copy of the session's sample build (the same deterministic build the
    script makes for itself), not over a build of its own."""
    spec = importlib.util.spec_from_file_location("screenshots", ROOT / "scripts" / "screenshots.py")
    assert spec is not None and spec.loader is not None
    shots = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(shots)
    assert shots.main(["--check"], vault=sample_vault) == 0, "run: python scripts/screenshots.py"
