"""Replay: an attacker with write access to the vault file and no key re-appends an old
custodian-signed statement (a grant for a revoked investigator, a key_add for a revoked
producer key) with the right seq, leaf hash and view rows.  Each test first reproduces
what the attack achieved before signed statements were bound to their place, then shows
it caught: nobody opens such a vault, nothing signs over it, verify pins the entry."""

from __future__ import annotations

from pathlib import Path

import pytest

from store import admin
from store.crypto import Identity
from store.entries import EntryKind, LogEntry, Statement
from store.errors import StoreError, VaultDamagedError, VaultError
from store.vault import Vault
from tests.cli.conftest import World, draft
from tests.helpers import T0, Case, append_by_hand, manifest, passage, revision, signed
from tracer.engine.session import RevokedInvestigatorError
from tracer.engine.trust import TrustError
from tracer.engine.verify import verify

LATER = "2026-06-01T00:00:00Z"


def _entry_of(case: Case, seq: int) -> bytes:
    return bytes(case.vault.con.execute("SELECT entry FROM log WHERE seq = ?", [seq]).fetchall()[0][0])


def _grant_seq(case: Case, name: str) -> int:
    return int(case.vault.roster().investigators[case.investigators[name].key_id].granted_seq)


def _forensic_findings(case: Case, who: str = "ines") -> list[tuple[str, int | None]]:
    s = case.session(who, read_only=True, forensic=True)
    try:
        return [(f.kind, f.seq) for f in verify(s.vault, s).findings]
    finally:
        s.close()


def _checkpoints(case: Case) -> int:
    return len(case.reopen().checkpoints())


def test_grant_replayed_verbatim_after_revocation(case: Case) -> None:
    omar = case.grant("omar", ["support"])
    grant = _grant_seq(case, "omar")
    admin.revoke_investigator(case.vault, case.custodian, omar.key_id, LATER)
    cps = _checkpoints(case)
    # the attacker's copy, re-stamped with the next seq (as the store would stamp it)
    seq = append_by_hand(case, LogEntry.from_bytes(_entry_of(case, grant)))
    with pytest.raises(TrustError, match=r"past the latest signed checkpoint|statement_out_of_place"):
        case.session("omar")
    with pytest.raises(TrustError, match=r"past the latest signed checkpoint|statement_out_of_place"):
        case.session("ines")  # the next honest open refuses too: it never signs over the copy
    assert _checkpoints(case) == cps
    found = _forensic_findings(case)
    assert ("statement_out_of_place", seq) in found
    assert ("entry_not_checkpointed", seq) in found


def test_grant_replay_covered_by_a_checkpoint_still_leaves_the_revocation_final(case: Case) -> None:
    """Even a key holder (here: the custodian's own key, misused) who appends the copy and
    signs a checkpoint over it cannot undo the revocation: the copy names another place,
    so it is never folded into the roster, and unlock refuses the damaged roster."""
    omar = case.grant("omar", ["support"])
    grant = _grant_seq(case, "omar")
    admin.revoke_investigator(case.vault, case.custodian, omar.key_id, LATER)
    seq = append_by_hand(case, LogEntry.from_bytes(_entry_of(case, grant)), checkpoint_signer=case.custodian)
    with pytest.raises(TrustError, match="statement_out_of_place"):
        case.session("omar")
    assert ("statement_out_of_place", seq) in _forensic_findings(case)


def test_a_new_grant_for_a_revoked_key_is_refused_a_revocation_is_final(case: Case) -> None:
    omar = case.grant("omar", ["support"])
    admin.revoke_investigator(case.vault, case.custodian, omar.key_id, LATER)
    with pytest.raises(VaultError, match="revocation is final"):
        admin.grant_investigator(case.vault, case.custodian, omar.public, ["support"], LATER)
    # A freshly signed (correctly placed) grant written by a custodian who bypasses the API:
    stmt = Statement(
        EntryKind.INVESTIGATOR_GRANT,
        {
            "key_id": omar.key_id,
            "name": "omar",
            "scopes": ["support"],
            "ed25519": omar.public.to_json()["ed25519"],
            "x25519": omar.public.to_json()["x25519"],
            "at": LATER,
        },
        case.custodian,
    )
    seq = append_by_hand(case, stmt, checkpoint_signer=case.custodian)
    with pytest.raises(TrustError, match="revocation is final"):
        case.session("omar")
    assert ("roster_change_refused", seq) in _forensic_findings(case)


def test_key_add_replayed_after_revocation_lets_no_manifest_in(case: Case) -> None:
    key_add = 1  # new_case adds the producer key right after vault_init
    admin.revoke_producer_key(case.vault, case.custodian, case.producer.key_id, "2026-03-01T00:00:00Z")
    append_by_hand(case, LogEntry.from_bytes(_entry_of(case, key_add)))
    rev = revision("refund", "A", "Refunds within thirty days.\n", "2026-01-05T00:00:00Z")
    late = manifest("ans-late", "Thirty days.", [passage(rev, "thirty")], generated_at="2026-04-01T00:00:00Z")
    with pytest.raises(VaultDamagedError):
        case.ingest(rev, signed(case, late))
    assert case.reopen().query("SELECT count(*) FROM v_answers WHERE answer_id = 'ans-late'") == [(0,)]


def test_statement_copied_from_another_vault_is_out_of_place(case: Case, tmp_path: Path) -> None:
    # the same custodian key runs a second vault: its signature verifies here too
    other = Vault.create(tmp_path / "other", case.custodian, T0, origin="tracer.test/other")
    admin.add_producer_key(other, case.custodian, case.producer.public, T0)
    mallory = Identity.from_seed("mallory", b"mallory")
    grant = admin.grant_investigator(other, case.custodian, mallory.public, ["*"], T0)
    copied = bytes(other.con.execute("SELECT entry FROM log WHERE seq = ?", [grant]).fetchall()[0][0])
    other.close()
    seq = append_by_hand(case, LogEntry.from_bytes(copied), checkpoint_signer=case.custodian)
    found = _forensic_findings(case)
    assert ("statement_out_of_place", seq) in found


def test_revoked_investigator_stays_out(case: Case) -> None:
    omar = case.grant("omar", ["support"])
    admin.revoke_investigator(case.vault, case.custodian, omar.key_id, LATER)
    with pytest.raises(RevokedInvestigatorError):
        case.session("omar")


def test_manifest_replayed_is_pinned(case: Case) -> None:
    rev = revision("refund", "A", "Refunds within thirty days.\n", "2026-01-05T00:00:00Z")
    assert case.ingest(rev, signed(case, manifest("ans-1", "Thirty days.", [passage(rev, "thirty")]))).ok
    first = int(case.vault.query("SELECT seq FROM v_answers WHERE answer_id = 'ans-1'")[0][0])
    seq = append_by_hand(case, LogEntry.from_bytes(_entry_of(case, first)), checkpoint_signer=case.custodian)
    found = _forensic_findings(case)
    assert ("answer_duplicated", seq) in found


def test_grant_refusals_name_the_rule(case: Case) -> None:
    with pytest.raises(VaultError, match="already taken"):
        admin.grant_investigator(
            case.vault, case.custodian, Identity.from_seed("ines", b"other-ines").public, ["*"], T0
        )
    with pytest.raises(VaultError, match="custodian's own key"):
        admin.grant_investigator(case.vault, case.custodian, case.custodian.public, ["*"], T0)
    with pytest.raises(VaultError, match="scope"):
        admin.grant_investigator(case.vault, case.custodian, Identity.from_seed("z", b"z").public, [""], T0)
    with pytest.raises(VaultError, match="not 1-64 characters"):
        admin.grant_investigator(
            case.vault, case.custodian, Identity.from_seed("ivan laptop", b"iv").public, ["*"], T0
        )
    with pytest.raises(StoreError):
        admin.grant_investigator(
            case.vault, case.custodian, Identity.from_seed("a+b", b"ab").public, ["*"], T0
        )


def test_a_revocation_rewritten_to_look_like_something_else_is_caught_at_unlock(case: Case) -> None:
    """Relabelling is not the only way to hide a row from readers that select by kind: the
    bytes can be rewritten too (keeping the stored leaf hash).  Every checkpoint commits to
    the guarded entries (revocations, tombstones, holds) by their bytes and leaves, so the
    honest reader's recomputation differs and unlock refuses."""
    omar = case.grant("omar", ["support"])
    revoke = admin.revoke_investigator(case.vault, case.custodian, omar.key_id, LATER)
    data = _entry_of(case, revoke).replace(b'"kind":"investigator_revoke"', b'"kind":"access"')
    case.vault.con.execute("UPDATE log SET entry = ?, kind = 'access' WHERE seq = ?", [data, revoke])
    with pytest.raises(TrustError, match=r"guarded_entries_changed|revocations, tombstones"):
        case.session("omar")
    found = _forensic_findings(case)
    assert ("leaf_hash_mismatch", revoke) in found
    assert ("checkpoint_guard_mismatch", None) in found


def _drop_last_checkpoint(w: World) -> None:
    import duckdb

    con = duckdb.connect(str(w.vault / "vault.duckdb"))
    con.execute("DELETE FROM checkpoints WHERE id = (SELECT max(id) FROM checkpoints)")
    con.close()


def test_a_deleted_checkpoint_row_is_signed_again_where_it_was_remembered(vault_world: World) -> None:
    """One DELETE of the newest checkpoint row left honest, signed entries uncovered and
    locked every investigator out for good. This machine remembers the checkpoint over
    exactly those bytes (size and root), so the custodian signs it again; an unlock
    before that names the way."""
    w = vault_world
    assert w.run("verify", w.vault, "--key", w.key("ines")).code == 0  # appends signed entries
    _drop_last_checkpoint(w)
    refused = w.run("verify", w.vault, "--key", w.key("ines"))
    assert refused.code == 2 and "--cover-checked-tail" in refused.err, refused
    r = w.run("checkpoint", w.vault, "--cover-checked-tail", *w.cust())
    assert r.code == 0 and "remembers a checkpoint over exactly these entries" in r.out, r
    assert w.run("verify", w.vault, "--key", w.key("ines")).code == 0


def test_a_tail_no_machine_remembers_is_quarantined_and_its_manifests_ingested_again(
    vault_world: World, tmp_path: Path
) -> None:
    """On a machine that never saw the deleted checkpoint, nothing is signed over the tail:
    it moves to a quarantine file, the log goes back to its last valid checkpoint, and the
    producer manifests come back through the normal ingest. An unrelated finding elsewhere
    in the vault does not block it."""
    import duckdb

    w = vault_world
    fresh = {"TRACER_HOME": str(tmp_path / "other-machine")}
    w.write("second-draft.json", draft("ans-second"))
    answer = w.root / "inputs" / "second.json"
    packed = w.run(
        "pack", w.root / "inputs" / "second-draft.json", "--key", w.key("producer"), "--out", answer
    )
    assert packed.code == 0, packed
    assert w.run("ingest", w.vault, answer, *w.cust()).code == 0
    db = w.vault / "vault.duckdb"
    con = duckdb.connect(str(db))
    ((before,),) = con.execute("SELECT count(*) FROM log").fetchall()
    con.execute("DELETE FROM checkpoints WHERE id = (SELECT max(id) FROM checkpoints)")
    # the attacker rewrites the uncovered manifest's unsigned wrapper: its faults vanish
    (seq, entry), *_ = con.execute(
        "SELECT seq, entry FROM log WHERE kind = 'manifest' ORDER BY seq DESC LIMIT 1"
    ).fetchall()
    con.execute(
        "UPDATE log SET entry = ? WHERE seq = ?", [bytes(entry).replace(b'"faults":[]', b'"faults":[ ]'), seq]
    )
    con.close()
    r = w.run("checkpoint", w.vault, "--cover-checked-tail", *w.cust(), env=fresh)
    assert r.code == 0, r
    assert "none was signed over them" in r.out and "ingested again: 1 of 1" in r.out, r
    quarantined = sorted((w.vault / "quarantine").glob("*.jsonl"))
    assert len(quarantined) == 1
    listed = w.run("quarantine", quarantined[0], env=fresh)
    assert listed.code == 0 and "ans-second" in listed.out, listed
    con = duckdb.connect(str(db), read_only=True)
    ((after,),) = con.execute("SELECT count(*) FROM log").fetchall()
    ((held,),) = con.execute("SELECT count(*) FROM v_answers WHERE answer_id = 'ans-second'").fetchall()
    con.close()
    assert after == before and held == 1
    assert w.run("verify", w.vault, "--key", w.key("ines"), env=fresh).code == 0


def test_a_forged_tail_is_never_covered(vault_world: World) -> None:
    """An entry copied to the end (no key) is uncovered too: the custodian's recovery
    refuses it, naming the finding, and signs nothing."""
    import duckdb

    w = vault_world
    db = w.vault / "vault.duckdb"
    con = duckdb.connect(str(db))
    (_seq, kind, entry, leaf), (size,) = (
        con.execute("SELECT * FROM log WHERE kind = 'manifest' ORDER BY seq LIMIT 1").fetchall()[0],
        con.execute("SELECT count(*) FROM log").fetchall()[0],
    )
    con.execute("INSERT INTO log VALUES (?, ?, ?, ?)", [size, kind, entry, leaf])
    con.close()
    r = w.run("checkpoint", w.vault, "--cover-checked-tail", *w.cust())
    # the copy repeats an answer the vault holds: quarantined, never re-ingested, nothing signed
    assert r.code == 0 and "none was signed over them" in r.out and "ingested again: 0 of 0" in r.out, r
    con = duckdb.connect(str(db), read_only=True)
    ((after,),) = con.execute("SELECT count(*) FROM checkpoints WHERE size > ?", [size]).fetchall()
    ((length,),) = con.execute("SELECT count(*) FROM log").fetchall()
    con.close()
    assert after == 0 and length == size
