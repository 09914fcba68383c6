"""`TRACER_DUCKDB_THREADS`: DuckDB's threads per connection, which the test suite sets to
1 (tests/conftest.py).  A verification must come out the same with DuckDB's default, and
a value that is not a count is refused by name, before the vault is touched."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from store.crypto import load_identity
from store.errors import VaultError
from store.vault import Vault
from store.vaultfile import THREADS_VARIABLE
from tracer.cli.main import main
from tracer.engine.session import unlock
from tracer.engine.trust import TrustStore
from tracer.engine.verify import verify


def _threads(vault_dir: Path) -> int:
    with Vault.open(vault_dir, read_only=True) as v:
        row = v.con.execute("SELECT current_setting('threads')").fetchone()
    assert row is not None
    return int(row[0])


def test_the_variable_sets_each_connection_and_unset_leaves_duckdb_s_default(
    sample_vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(THREADS_VARIABLE, "3")
    assert _threads(sample_vault) == 3
    monkeypatch.setenv(THREADS_VARIABLE, " 1 ")
    assert _threads(sample_vault) == 1
    monkeypatch.delenv(THREADS_VARIABLE)
    assert _threads(sample_vault) == max(1, os.cpu_count() or 1)


def _findings(vault_dir: Path, home: Path) -> list[object]:
    ines = load_identity(vault_dir / "keys" / "ines.key", b"ines-demo")
    with unlock(vault_dir, ines, trust=TrustStore(home), read_only=True) as s:
        report = verify(s.vault, s, full=True)
    return [f.to_json() for f in report.findings]


def test_a_verification_finds_the_same_with_one_thread_and_with_duckdb_s_default(
    sample_vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = tmp_path / "copy"
    shutil.copytree(sample_vault, other)
    monkeypatch.setenv(THREADS_VARIABLE, "1")
    one = _findings(sample_vault, tmp_path / "home-1")
    monkeypatch.delenv(THREADS_VARIABLE)
    assert _threads(other) > 1 or (os.cpu_count() or 1) == 1
    default = _findings(other, tmp_path / "home-default")
    assert one == default and one  # the sample vault's tampered record is a finding


@pytest.mark.parametrize("value", ["0", "-2", "two", "1.5", "\u0663", "1\x1b[31m"])
def test_a_value_that_is_not_a_count_is_refused_by_name(
    sample_vault: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    before = (sample_vault / "vault.duckdb").read_bytes()
    monkeypatch.setenv(THREADS_VARIABLE, value)
    with pytest.raises(VaultError, match=THREADS_VARIABLE):
        Vault.open(sample_vault)
    capsys.readouterr()
    assert main(["log", str(sample_vault)]) == 2
    err = capsys.readouterr().err
    assert THREADS_VARIABLE in err and "\x1b" not in err and "Traceback" not in err
    assert (sample_vault / "vault.duckdb").read_bytes() == before
