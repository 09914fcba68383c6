"""`ingest-outbox`'s "already in the vault?" decision rests on the log, never on a view row.

The attacker writes the vault file but holds no key. Making a fresh outbox file look
ingested would have it moved to `ingested/` and never appended: evidence lost without a
word. Each forgery below is tried through the CLI, as a custodian would run it.
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb

from store.dsse import Envelope
from store.entries import EntryKind, make_entry
from store.merkle import leaf_hash
from tests.cli.conftest import World
from tests.producer.test_cli_producer import _sdk_record
from tracer.cli import outbox_cmds


def _con(w: World) -> duckdb.DuckDBPyConnection:
    return duckdb.connect(str(w.vault / "vault.duckdb"))


def _answer_id(path: Path) -> str:
    env = Envelope.from_json(json.loads(path.read_text())["envelope"], str(path), "$.envelope")
    return str(json.loads(env.payload)["answer_id"])


def _appended(w: World, answer_id: str) -> None:
    """The answer is in the log: an entry whose bytes hash to its stored leaf logs it."""
    con = _con(w)
    rows = con.execute("SELECT entry, leaf_hash FROM log WHERE kind = 'manifest'").fetchall()
    con.close()
    found = [
        bytes(e)
        for e, leaf in rows
        if leaf_hash(bytes(e)) == bytes(leaf) and answer_id in json.dumps(_payload(bytes(e)))
    ]
    assert found, f"{answer_id} was not appended"


def _payload(entry: bytes) -> object:
    env = Envelope.from_json(json.loads(entry)["envelope"], "log", "$.envelope")
    return json.loads(env.payload)


def test_a_view_row_pointing_a_fresh_answer_at_another_entry_is_not_believed(vault_world: World) -> None:
    w = vault_world
    outbox = w.root / "outbox"
    fresh = _sdk_record(w, outbox, "ans-fresh")
    fresh_id = _answer_id(fresh)
    con = _con(w)
    con.execute("INSERT INTO v_answers SELECT * REPLACE (? AS answer_id) FROM v_answers LIMIT 1", [fresh_id])
    con.close()
    r = w.run("ingest-outbox", w.vault, outbox, *w.cust(), "--json")
    # not taken as done: the forged row is found against the signed view commitment and
    # dropped (`store.viewcommit`), and the answer is appended for real
    assert r.json()["already_in_vault"] == [], r
    _appended(w, fresh_id)
    assert fresh not in outbox_cmds.pending(outbox)


def test_a_revision_row_claiming_a_fresh_revision_is_not_believed(vault_world: World) -> None:
    w = vault_world
    outbox = w.root / "outbox"
    _sdk_record(w, outbox, "ans-sdk-1")  # also writes revision B of "returns"
    rev = next(outbox.glob("revision-*.json"))
    con = _con(w)
    con.execute("INSERT INTO v_revisions SELECT * REPLACE ('B' AS revision) FROM v_revisions LIMIT 1")
    con.close()
    r = w.run("ingest-outbox", w.vault, outbox, *w.cust(), "--json").json()
    assert r["already_in_vault"] == [] and rev not in outbox_cmds.pending(outbox), r
    con = _con(w)
    rows = con.execute("SELECT count(*) FROM log WHERE kind = 'revision'").fetchall()
    con.close()
    assert rows == [(2,)]  # revision B appended for real, beside A


def test_a_forged_log_entry_holding_the_file_s_envelope_is_damage_not_done(vault_world: World) -> None:
    """The attacker copies the envelope from the outbox file into a log row of their own,
    with the right leaf hash and seq, and a view row pointing at it: no signed checkpoint
    covers it, so the pass stops as damaged (exit 2) and the file stays in the outbox."""
    w = vault_world
    outbox = w.root / "outbox"
    fresh = _sdk_record(w, outbox, "ans-fresh")
    env = Envelope.from_json(json.loads(fresh.read_text())["envelope"], str(fresh), "$.envelope")
    con = _con(w)
    ((size,),) = con.execute("SELECT count(*) FROM log").fetchall()
    entry = make_entry(EntryKind.MANIFEST, env, ingested_at="2026-06-01T00:00:00Z", faults=[]).at(int(size))
    con.execute("INSERT INTO log VALUES (?, 'manifest', ?, ?)", [size, entry.data, leaf_hash(entry.data)])
    con.execute(
        "INSERT INTO v_answers SELECT * REPLACE (? AS answer_id, ? AS seq) FROM v_answers LIMIT 1",
        ["ans-fresh", size],
    )
    con.close()
    r = w.run("ingest-outbox", w.vault, outbox, *w.cust())
    assert r.code == 2 and "no valid signed checkpoint covers" in r.err and "Traceback" not in r.err, r
    assert fresh.exists() and fresh in outbox_cmds.pending(outbox)
    assert not (outbox / "ingested" / fresh.name).exists()


def test_an_entry_whose_bytes_do_not_hash_to_its_leaf_is_not_believed(vault_world: World) -> None:
    """The existing answer's entry rewritten in place to hold the fresh file's envelope,
    its stored leaf left alone: the bytes no longer hash to the leaf, so it proves nothing."""
    w = vault_world
    outbox = w.root / "outbox"
    fresh = _sdk_record(w, outbox, "ans-fresh")
    env = Envelope.from_json(json.loads(fresh.read_text())["envelope"], str(fresh), "$.envelope")
    con = _con(w)
    ((seq,),) = con.execute("SELECT seq FROM v_answers LIMIT 1").fetchall()
    entry = make_entry(EntryKind.MANIFEST, env, ingested_at="2026-06-01T00:00:00Z", faults=[]).at(int(seq))
    con.execute("UPDATE log SET entry = ? WHERE seq = ?", [entry.data, seq])
    con.execute("UPDATE v_answers SET answer_id = 'ans-fresh' WHERE seq = ?", [seq])
    con.close()
    r = w.run("ingest-outbox", w.vault, outbox, *w.cust(), "--json")
    # the rewritten entry derives no row, so the answers table cannot be made to hash as
    # signed: the vault is damaged, plainly, and the file stays where it is
    assert r.code == 2 and "Traceback" not in r.err, r
    assert fresh in outbox_cmds.pending(outbox)
