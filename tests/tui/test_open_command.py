"""`tracer open` turns flags and environment into the unlock screen's pre-fill."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tui.conftest import Built
from tracer.cli.main import main
from tracer.tui.app import TracerApp
from tracer.tui.context import LaunchOptions


@pytest.fixture
def launched(monkeypatch: pytest.MonkeyPatch) -> list[LaunchOptions]:
    seen: list[LaunchOptions] = []
    monkeypatch.setattr(TracerApp, "run", lambda self, *a, **k: seen.append(self.options))
    return seen


def test_flags_prefill_and_passphrase_file_unlocks_at_once(
    tmp_path: Path, launched: list[LaunchOptions], built: Built
) -> None:
    pw = tmp_path / "pw"
    pw.write_text("secret\n", encoding="utf-8")
    argv = [
        "open",
        str(built.vault),
        "--key",
        "k.key",
        "--passphrase-file",
        str(pw),
        "--forensic",
        "--theme",
        "high-contrast",
    ]
    assert main(argv) == 0
    assert launched == [LaunchOptions(built.vault, Path("k.key"), b"secret", True, "high-contrast")]


def test_environment_key_and_typed_passphrase(
    launched: list[LaunchOptions], monkeypatch: pytest.MonkeyPatch, built: Built
) -> None:
    monkeypatch.setenv("TRACER_KEY", "env.key")
    assert main(["open", str(built.vault)]) == 0
    assert launched == [LaunchOptions(built.vault, Path("env.key"), None, False, "default")]


@pytest.mark.parametrize("what", ["missing", "junk"])
def test_a_missing_or_junk_vault_is_refused_before_any_passphrase(
    tmp_path: Path,
    launched: list[LaunchOptions],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    what: str,
) -> None:
    vault = tmp_path / "v"
    if what == "junk":
        vault.mkdir()
        (vault / "vault.duckdb").write_bytes(b"not a database\n" * 64)
    monkeypatch.setenv("TRACER_PASSPHRASE", "never read")
    assert main(["open", str(vault), "--key", "k.key"]) == 2
    err = capsys.readouterr().err
    assert launched == [] and str(vault) in err and "Traceback" not in err
    assert "passphrase" not in err


def test_open_starts_the_resource_tracker_while_stderr_is_real(tmp_path: Path) -> None:
    """Verify's worker processes need multiprocessing's resource tracker, which can only
    be started while stderr has a file descriptor: before the app replaces it."""
    import subprocess
    import sys

    probe = (
        "import sys\n"
        "from pathlib import Path\n"
        "from multiprocessing import resource_tracker\n"
        "from tracer.tui.context import LaunchOptions\n"
        "from tracer.tui.opening import build_app\n"
        "assert resource_tracker._resource_tracker._fd is None\n"
        f"build_app(LaunchOptions(Path({str(tmp_path)!r})))\n"
        "class Captured:\n"
        "    def write(self, s): return len(s)\n"
        "    def flush(self): pass\n"
        "    def fileno(self): return -1\n"
        "sys.stderr = Captured()\n"
        "from concurrent.futures import ProcessPoolExecutor\n"
        "from multiprocessing import get_context\n"
        "with ProcessPoolExecutor(1, mp_context=get_context('spawn')) as pool:\n"
        "    assert pool.submit(abs, -3).result(timeout=60) == 3\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
