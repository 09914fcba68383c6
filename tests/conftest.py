"""Shared fixtures: every test gets its own TRACER_HOME and a pinned clock."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import Case, new_case


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = tmp_path / "tracer-home"
    monkeypatch.setenv("TRACER_HOME", str(home))
    monkeypatch.delenv("TRACER_KEY", raising=False)
    monkeypatch.delenv("TRACER_PASSPHRASE", raising=False)
    monkeypatch.delenv("TRACER_CLOCK", raising=False)
    yield home


@pytest.fixture
def case(tmp_path: Path) -> Iterator[Case]:
    c = new_case(tmp_path / "vault")
    yield c
    c.close()
