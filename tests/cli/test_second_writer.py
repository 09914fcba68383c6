"""A second process gets "vault is in use by PID n" (exit 2), never a traceback."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from store.errors import VaultInUseError
from store.vault import Vault
from tests.cli.conftest import REPO, World, revision_input

HOLDER = """
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[3])
from store.vault import Vault
vault = Vault.open(Path(sys.argv[1]), read_only=sys.argv[2] == "ro")
print("holding", flush=True)
sys.stdin.read()  # until the test closes our stdin
vault.close()
"""


@contextmanager
def held(vault: Path, mode: str) -> Iterator[subprocess.Popen[str]]:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(vault), mode, str(REPO)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.strip() == "holding", proc.stderr.read() if proc.stderr else ""
        yield proc
    finally:
        if proc.stdin:
            proc.stdin.close()
        proc.wait(timeout=30)


def test_writer_while_another_process_holds_the_vault(vault_world: World) -> None:
    w = vault_world
    rev = w.write("rev-B.json", revision_input("B"))
    with Vault.open(w.vault, read_only=True) as v:
        size = v.size()
    with held(w.vault, "rw") as holder:
        expect = f"vault is in use by PID {holder.pid}"
        for args in (
            ["ingest", w.vault, rev, *w.cust()],
            ["keys", "add", w.vault, w.pub("ines"), *w.cust()],
            ["checkpoint", w.vault],
        ):
            r = w.run(*args)
            assert r.code == 2, (args, r)
            assert expect in r.err, r.err
            assert "Traceback" not in r.err and r.out == ""
            assert "hint: wait for the other tracer process to finish" in r.err
    # once the holder is gone, the same ingest goes through
    r = w.run("ingest", w.vault, rev, *w.cust())
    assert r.code == 0, r
    with Vault.open(w.vault, read_only=True) as v:
        assert v.size() == size + 1


def test_writer_while_a_reader_holds_the_vault(vault_world: World) -> None:
    w = vault_world
    rev = w.write("rev-B.json", revision_input("B"))
    with held(w.vault, "ro") as holder:
        r = w.run("ingest", w.vault, rev, *w.cust())
        assert r.code == 2 and f"vault is in use by PID {holder.pid}" in r.err
        assert "Traceback" not in r.err


def test_vault_open_raises_vault_in_use(vault_world: World) -> None:
    with held(vault_world.vault, "rw") as holder:
        with pytest.raises(VaultInUseError) as info:
            Vault.open(vault_world.vault)
        assert str(info.value) == f"{vault_world.vault}: vault is in use by PID {holder.pid}"
