"""Vaults and packs for the report tests.

Building a vault costs most of a test's time, so tests that only read a pack share one
(`shared_pack`, built once per process and copied per module); tests that alter a pack
get their own copy.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.report.packs import Built, build, export
from tests.templates import copy_of, scratch

CLOCK = "2026-07-01T12:00:00Z"


@pytest.fixture
def built(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Built]:
    monkeypatch.setenv("TRACER_CLOCK", CLOCK)
    b = build(tmp_path)
    yield b
    b.case.close()


@pytest.fixture(scope="module")
def shared_pack(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The pack of every answer, exported once per process and copied per module."""
    root = tmp_path_factory.mktemp("shared")
    copy_of("report-shared-pack", _export_all, root / "pack")
    return root / "pack"


def _export_all(out: Path) -> None:
    work = scratch()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TRACER_HOME", str(work / "home"))
        mp.setenv("TRACER_CLOCK", CLOCK)
        b = build(work)
        try:
            export(b, out)
        finally:
            b.session.close()
            b.case.close()


@pytest.fixture
def pack(shared_pack: Path, tmp_path: Path) -> Path:
    """A private copy of the shared pack, free to alter."""
    return Path(shutil.copytree(shared_pack, tmp_path / "pack"))
