"""Shared fixtures: every test gets its own TRACER_HOME and a pinned clock."""

from __future__ import annotations

import asyncio
import inspect
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.helpers import Case, new_case

if TYPE_CHECKING:
    from sample_vault.build import BuildInfo


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """Run `async def` tests (the Pilot tests) on a fresh event loop: no asyncio plugin
    is installed."""
    if not inspect.iscoroutinefunction(pyfuncitem.obj):
        return None
    names = pyfuncitem._fixtureinfo.argnames
    asyncio.run(pyfuncitem.obj(**{n: pyfuncitem.funcargs[n] for n in names}))
    return True


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


@pytest.fixture(scope="session")
def sample_build(tmp_path_factory: pytest.TempPathFactory) -> BuildInfo:
    """The sample vault, built once per test session through the real ingest path."""
    from sample_vault.build import build

    return build(tmp_path_factory.mktemp("sample") / "sample_vault")


@pytest.fixture
def sample_vault(sample_build: BuildInfo, tmp_path: Path) -> Path:
    """A private copy of the sample vault (opening it appends access entries)."""
    dest = tmp_path / "sample_vault"
    shutil.copytree(sample_build.out_dir, dest)
    return dest
