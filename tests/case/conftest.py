from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.case.world import World, build_world

CLOCK = "2026-07-01T12:00:00Z"


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    monkeypatch.setenv("TRACER_CLOCK", CLOCK)
    monkeypatch.setenv("TRACER_HOME", str(tmp_path / "home"))
    w = build_world(tmp_path)
    yield w
    w.case.close()
