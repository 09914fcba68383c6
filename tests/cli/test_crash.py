"""Kill -9 during ingest (a handful of bench/crash_loop.py iterations), and a WAL DuckDB
cannot replay: the vault must fail closed, leaving every file exactly as it was."""

from __future__ import annotations

import importlib
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import duckdb
import pytest

from store.errors import VaultDamagedError
from store.schema import DB_FILE
from store.vault import Vault
from tests.cli.conftest import REPO

WAL = DB_FILE + ".wal"


def _crash_loop() -> ModuleType:
    return importlib.import_module("bench.crash_loop")


def test_kill_9_during_ingest_loses_no_acknowledged_batch() -> None:
    result = _crash_loop().run(iterations=5, seed=20260601, batches=16, manifests=3, max_delay=0.45)
    assert result["ok"], result["failures"]
    assert result["iterations"] == 5


# -- a write-ahead log DuckDB cannot replay -----------------------------------------------------

#: whole processes, real terminals or kill loops: `-m 'not slow'` skips them
pytestmark = pytest.mark.slow

KILLED_AFTER_COMMIT = """
import os, signal, sys
from pathlib import Path
sys.path.insert(0, sys.argv[2])
crash_loop = __import__("importlib").import_module("bench.crash_loop")
from store.ingest import ingest
from store.vault import Vault

vault = Vault.open(Path(sys.argv[1]))
for files in crash_loop.write_inputs(Path(sys.argv[3]), 3, 2):
    assert ingest(vault, files, crash_loop.custodian(), crash_loop.NOW).ok
print("committed", flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.fixture
def vault_with_wal(tmp_path: Path) -> Path:
    """A vault whose last process was killed after committing: DuckDB left its WAL."""
    loop = _crash_loop()
    path = tmp_path / "vault"
    loop.new_vault(path)
    p = subprocess.run(
        [sys.executable, "-c", KILLED_AFTER_COMMIT, str(path), str(REPO), str(tmp_path / "inputs")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "committed" in p.stdout, p.stderr
    if not (path / WAL).is_file() or (path / WAL).stat().st_size == 0:
        pytest.skip("DuckDB checkpointed on commit and kept no write-ahead log to damage")
    return path


def test_killed_writer_wal_is_replayed(vault_with_wal: Path) -> None:
    with Vault.open(vault_with_wal) as v:
        assert v.latest_checkpoint().size == v.size()
        assert v.query("SELECT count(*) FROM v_answers") == [(6,)]


def _duckdb_refuses(db: Path) -> bool:
    try:
        duckdb.connect(str(db), read_only=True).close()
    except duckdb.Error:
        return True
    return False


def _damage(src: Path, scratch: Path) -> bytes:
    """Garbage in the middle of a copy of the WAL, placed where DuckDB refuses to replay it
    (a checksum failure; DuckDB reads a torn tail as an unfinished write and stops there)."""
    original = (src / WAL).read_bytes()
    for offset in range(len(original) // 2, len(original) - 16, 97):
        shutil.rmtree(scratch, ignore_errors=True)
        shutil.copytree(src, scratch)
        damaged = original[:offset] + b"\xde\xad\xbe\xef" * 4 + original[offset + 16 :]
        (scratch / WAL).write_bytes(damaged)
        if _duckdb_refuses(scratch / DB_FILE):
            return damaged
    pytest.skip("no garbage placement made DuckDB refuse this WAL")


@pytest.mark.parametrize("read_only", [False, True])
def test_unreplayable_wal_fails_closed(vault_with_wal: Path, tmp_path: Path, read_only: bool) -> None:
    probe = _damage(vault_with_wal, tmp_path / "probe")
    copy = tmp_path / "copy"
    shutil.copytree(tmp_path / "probe", copy)
    before = {p.name: p.read_bytes() for p in copy.iterdir()}
    assert before[WAL] == probe
    with pytest.raises(VaultDamagedError) as info:
        Vault.open(copy, read_only=read_only)
    message = str(info.value)
    assert message.startswith(f"{copy / WAL}: ")
    assert "cannot replay" in message and "nothing was deleted or rewritten" in message
    assert "copy the vault directory before any recovery attempt" in info.value.diagnostics()
    after = {p.name: p.read_bytes() for p in copy.iterdir()}
    assert after == before  # the WAL and the database file, byte for byte


def test_unreplayable_wal_through_the_cli(vault_with_wal: Path, tmp_path: Path) -> None:
    _damage(vault_with_wal, tmp_path / "copy")
    before = {p.name: p.read_bytes() for p in (tmp_path / "copy").iterdir()}
    tracer = Path(sys.executable).parent / "tracer"
    for args in (["checkpoint"], ["log", "--json"]):
        p = subprocess.run(
            [str(tracer), args[0], str(tmp_path / "copy"), *args[1:]],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert p.returncode == 2 and "Traceback" not in p.stderr
        assert f"tracer: error: {tmp_path / 'copy' / WAL}: DuckDB cannot replay" in p.stderr
    assert {p.name: p.read_bytes() for p in (tmp_path / "copy").iterdir()} == before
