"""`tracer open` turns flags and environment into the unlock screen's pre-fill."""

from __future__ import annotations

from pathlib import Path

import pytest

from tracer.cli.main import main
from tracer.tui.app import TracerApp
from tracer.tui.context import LaunchOptions


@pytest.fixture
def launched(monkeypatch: pytest.MonkeyPatch) -> list[LaunchOptions]:
    seen: list[LaunchOptions] = []
    monkeypatch.setattr(TracerApp, "run", lambda self, *a, **k: seen.append(self.options))
    return seen


def test_flags_prefill_and_passphrase_file_unlocks_at_once(
    tmp_path: Path, launched: list[LaunchOptions]
) -> None:
    pw = tmp_path / "pw"
    pw.write_text("secret\n", encoding="utf-8")
    argv = [
        "open",
        "v",
        "--key",
        "k.key",
        "--passphrase-file",
        str(pw),
        "--forensic",
        "--theme",
        "high-contrast",
    ]
    assert main(argv) == 0
    assert launched == [LaunchOptions(Path("v"), Path("k.key"), b"secret", True, "high-contrast")]


def test_environment_key_and_typed_passphrase(
    launched: list[LaunchOptions], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRACER_KEY", "env.key")
    assert main(["open", "v"]) == 0
    assert launched == [LaunchOptions(Path("v"), Path("env.key"), None, False, "default")]
