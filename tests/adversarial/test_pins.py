"""This machine's memory of a vault protects every investigator on it, and a known path
that now holds another vault says so loudly."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from store.vault import Vault
from tests.cli.conftest import World, revision_input
from tests.helpers import Case, new_case
from tracer.engine.session import peek, unlock
from tracer.engine.trust import RollbackError, TrustStore


def test_a_rollback_caught_for_one_investigator_is_caught_for_the_next(case: Case, tmp_path: Path) -> None:
    case.grant("omar", ["support"])
    case.vault.close()
    old = tmp_path / "old-copy"
    shutil.copytree(case.path, old)
    s = case.session("ines")  # ines sees the vault grow past the copy
    s.record("answer", "x")
    s.close()
    shutil.rmtree(case.path)
    shutil.copytree(old, case.path)  # the attacker puts the older copy back
    with pytest.raises(RollbackError):
        case.session("ines")
    # omar never opened it on this machine; before, his open extended the rolled-back copy
    with pytest.raises(RollbackError):
        case.session("omar")
    with Vault.open(old) as copy:
        assert len(case.reopen().checkpoints()) == len(copy.checkpoints())  # nothing was signed


def test_a_different_vault_at_a_known_path_is_announced(tmp_path: Path) -> None:
    first = new_case(tmp_path / "v")
    s = first.session()
    s.close()
    first.close()
    shutil.rmtree(tmp_path / "v")
    second = new_case(tmp_path / "v")  # same path, new vault (new origin below)
    second.vault.close()
    # new_case pins one origin for every test vault; give this one its own
    shutil.rmtree(tmp_path / "v")
    Vault.create(tmp_path / "v", second.custodian, "2026-01-01T00:00:00Z", origin="tracer.test/other").close()
    assert peek(tmp_path / "v").origin_before == "tracer.test/vault"
    session = unlock(tmp_path / "v", second.custodian, trust=TrustStore())
    try:
        assert any(w.startswith("ORIGIN CHANGED") for w in session.status.warnings)
    finally:
        session.close()


def test_the_custodian_cannot_extend_a_copy_this_machine_caught_rolled_back(vault_world: World) -> None:
    """Before, after ines's pin caught a rollback, `tracer ingest` with the custodian key
    still appended to the older copy and signed a checkpoint over it: a machine that never
    saw the newer vault then accepted the shorter history as clean."""
    w = vault_world
    older = w.root / "older"
    shutil.copytree(w.vault, older)
    assert w.run("verify", w.vault, "--key", w.key("ines")).code == 0  # ines's pin: the newer vault
    shutil.rmtree(w.vault)
    shutil.copytree(older, w.vault)  # the attacker puts the older copy back
    before = (w.vault / "vault.duckdb").read_bytes()
    rev_b = w.root / "rev-B.json"
    rev_b.write_text(json.dumps(revision_input("B")), encoding="utf-8")
    digest = json.loads(w.run("log", w.vault, "--json").out)["entries"][0]["leaf_hash"]
    for cmd in (
        ["ingest", w.vault, rev_b, *w.cust()],
        ["keys", "add", w.vault, w.pub("ines"), "--role", "producer", *w.cust()],
        ["purge", w.vault, digest, "--policy", "P", "--reason", "R", *w.cust()],
    ):
        r = w.run(*cmd)
        assert r.code == 2 and "ROLLBACK" in r.err and "Refusing to write" in r.err, (cmd, r)
    assert (w.vault / "vault.duckdb").read_bytes() == before
