"""A damaged vault is exit 2 with a plain message, never a traceback; a damaged trust
store is refused, never silently overwritten; a viewer whose wrapped data keys were
deleted is told so by verify."""

from __future__ import annotations

import json
import os
from pathlib import Path

import duckdb
import pytest

from tests.cli.conftest import World
from tests.helpers import damage_a_block


def _ines(w: World) -> list[str | Path]:
    return ["--key", w.key("ines")]


def _con(w: World) -> duckdb.DuckDBPyConnection:
    return duckdb.connect(str(w.vault / "vault.duckdb"))


@pytest.mark.parametrize("table", ["log", "checkpoints", "blobs", "v_answers", "meta"])
def test_a_dropped_table_is_named(vault_world: World, table: str) -> None:
    w = vault_world
    con = _con(w)
    con.execute(f"DROP TABLE {table} CASCADE")
    con.close()
    for cmd in (["verify", w.vault, "--structural-only"], ["verify", w.vault, *_ines(w)], ["log", w.vault]):
        r = w.run(*cmd)
        assert r.code == 2, (cmd, r)
        assert "Traceback" not in r.err and ("missing" in r.err or "not a tracer vault" in r.err), r.err


@pytest.mark.parametrize("how", ["random", "truncated", "zeroed-header"])
def test_a_corrupted_file_is_exit_2(vault_world: World, how: str) -> None:
    w = vault_world
    db = w.vault / "vault.duckdb"
    data = db.read_bytes()
    if how == "random":
        db.write_bytes(os.urandom(len(data)))
    elif how == "truncated":
        db.write_bytes(data[: len(data) // 3])
    else:
        db.write_bytes(bytes(8192) + data[8192:])
    r = w.run("verify", w.vault, "--structural-only")
    assert r.code == 2, r
    assert "Traceback" not in r.err, r.err


@pytest.mark.parametrize(
    "content",
    [
        "[]",
        '"text"',
        '{"tracer.test/cli": 5}',
        '{"tracer.test/cli": {"seen": {"k": {"size": "x", "root": "y"}}}}',
        pytest.param("[" * 5000 + "]" * 5000, id="nested-5000-deep"),
        pytest.param('{"tracer.test/cli": 1, "tracer.test/cli": 2}', id="duplicate-member"),
    ],
)
def test_a_damaged_trust_store_is_refused_and_kept(vault_world: World, content: str) -> None:
    w = vault_world
    store = Path(w.env["TRACER_HOME"]) / "known_vaults.json"
    store.parent.mkdir(parents=True, exist_ok=True)
    store.write_text(content, encoding="utf-8")
    r = w.run("verify", w.vault, *_ines(w))
    assert r.code == 2 and "known_vaults.json" in r.err and "Traceback" not in r.err, r
    assert store.read_text(encoding="utf-8") == content


def test_a_bad_remembered_checkpoint_is_refused_before_anything_is_written(vault_world: World) -> None:
    """The pinned custodian matches, so the open gets as far as recording the path: the
    damaged checkpoint record elsewhere in the store must stop it before that write."""
    w = vault_world
    custodian = json.loads(w.pub("custodian").read_text(encoding="utf-8"))["key_id"]
    record = {
        "custodian": custodian,
        "custodian_name": "custodian",
        "seen": {"k": {"size": -5, "root": "0" * 64}},
    }
    store = Path(w.env["TRACER_HOME"]) / "known_vaults.json"
    store.parent.mkdir(parents=True, exist_ok=True)
    content = json.dumps({"tracer.test/cli": record})
    store.write_text(content, encoding="utf-8")
    r = w.run("verify", w.vault, *_ines(w))
    assert r.code == 2 and "remembered size -5" in r.err and "Traceback" not in r.err, r
    assert store.read_text(encoding="utf-8") == content


def test_deleted_wrapped_keys_are_a_finding_not_a_clean_verify(vault_world: World) -> None:
    w = vault_world
    ines = json.loads(w.pub("ines").read_text(encoding="utf-8"))["key_id"]
    con = _con(w)
    con.execute("DELETE FROM data_keys WHERE recipient = ?", [ines])
    con.close()
    r = w.run("verify", w.vault, *_ines(w), "--json")
    assert r.code == 1
    kinds = [f["kind"] for f in r.json()["findings"]]
    assert "data_key_missing" in kinds


@pytest.mark.parametrize("table", ["log", "blobs"])
def test_a_block_damaged_inside_a_table_is_exit_2(vault_world: World, table: str) -> None:
    """A page whose checksum fails in the middle of a query (DuckDB's base `Error`) is a
    damaged vault, like a file that does not open: exit 2, the reason, no traceback."""
    w = vault_world
    db = w.vault / "vault.duckdb"
    damage_a_block(db, table)
    before = db.read_bytes()
    cmds = [["verify", w.vault, *_ines(w)], ["trace", w.vault, "ans-1", *_ines(w)]]
    if table == "log":
        cmds += [["log", w.vault], ["verify", w.vault, "--structural-only"]]
    for cmd in cmds:
        r = w.run(*cmd)
        assert r.code == 2, (cmd, r)
        assert "Traceback" not in r.err and "could not be read" in r.err, (cmd, r.err)
    if table == "log":  # unlock reads the whole log first, so nothing was appended
        assert db.read_bytes() == before


def test_a_retyped_column_is_named(vault_world: World) -> None:
    w = vault_world
    con = _con(w)
    con.execute("CREATE OR REPLACE TABLE log AS SELECT seq::VARCHAR AS seq, kind, entry, leaf_hash FROM log")
    con.close()
    for cmd in (["verify", w.vault, "--structural-only"], ["trace", w.vault, "ans-1", *_ines(w)]):
        r = w.run(*cmd)
        assert r.code == 2, (cmd, r)
        assert "Traceback" not in r.err and "seq VARCHAR" in r.err and "the file was altered" in r.err, r.err
