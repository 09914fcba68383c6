"""Attacks on the case file, played as tests/adversarial plays them: an attacker with
write access to the vault file (and, where said, an insider's own key) appends rows by
hand.  Each forged, replayed or smuggled entry must change nothing the case file says,
must never lift a hold, and must be pinned by verify."""

from __future__ import annotations

import pytest

from store import admin
from store.casefile import load_casefile
from store.crypto import Identity
from store.entries import EntryKind, LogEntry, Statement
from store.errors import VaultError
from store.statements import CaseOpenStatement, HoldStatement, ReleaseStatement, TagStatement
from tests.case.world import World
from tests.helpers import append_by_hand
from tracer.engine.case import CaseDesk
from tracer.engine.trust import TrustError
from tracer.engine.verify import verify

NOW = "2026-07-01T12:00:00Z"


def _findings(world: World, who: str = "ines", forensic: bool = False) -> list[tuple[str, int | None]]:
    s = world.case.session(who, read_only=forensic or None, forensic=forensic)
    try:
        return [(f.kind, f.seq) for f in verify(s.vault, s).findings]
    finally:
        s.close()


def _purge_refused(world: World, digest: str) -> None:
    c = world.case
    c.reopen()
    # refused: by the hold in force, or because a hold entry does not hold (never lifted by it)
    with pytest.raises(VaultError, match=r"under legal hold|legal hold entry at log entry \d+ does not hold"):
        admin.purge(c.vault, c.custodian, digest, "retention", "expired", "dpo", NOW)


def _entry_bytes(world: World, seq: int) -> bytes:
    rows = world.case.vault.con.execute("SELECT entry FROM log WHERE seq = ?", [seq]).fetchall()
    return bytes(rows[0][0])


def _hold(world: World) -> int:
    s = world.session("ines")
    seq = CaseDesk(s).hold("document", "runbook", "litigation")
    s.close()
    world.case.reopen()
    return seq


def test_a_tag_forged_without_a_key_is_refused_and_never_counts(world: World) -> None:
    s = world.session("ines")
    CaseDesk(s).open_case("INC-7", "t", "p")
    s.close()
    world.case.reopen()
    mallory = Identity.from_seed("mallory", b"mallory")
    body: TagStatement = {
        "case_id": "INC-7",
        "op": "add",
        "tag": "exonerated",
        "answer_id": "ans-restart",
        "target": "answer",
        "at": NOW,
    }
    seq = append_by_hand(world.case, Statement(EntryKind.TAG, body, mallory))
    with pytest.raises(TrustError, match="past the latest signed checkpoint"):
        world.session("ines")  # nobody signs over it
    world.case.reopen()
    assert not load_casefile(world.case.vault).tags
    assert [p.code for p in load_casefile(world.case.vault).problems] == ["signature_invalid"]
    found = _findings(world, forensic=True)
    assert ("signature_invalid", seq) in found
    assert ("entry_not_checkpointed", seq) in found


def test_a_hold_release_by_an_investigator_without_the_right_never_lifts_the_hold(world: World) -> None:
    hold = _hold(world)
    pat = world.case.investigators["pat"]  # an insider: a real key, a real checkpoint, no hold right
    body: ReleaseStatement = {"hold_seq": hold, "reason": "done", "at": NOW}
    seq = append_by_hand(world.case, Statement(EntryKind.HOLD_RELEASE, body, pat), checkpoint_signer=pat)
    cf = load_casefile(world.case.vault)
    assert cf.holds[hold].in_force
    assert [(p.seq, p.code) for p in cf.problems] == [(seq, "signature_invalid")]
    _purge_refused(world, world.runbook_digest)
    assert ("signature_invalid", seq) in _findings(world)


def test_a_replayed_hold_release_is_out_of_place_and_releases_nothing(world: World) -> None:
    first = _hold(world)
    s = world.session("ines")
    desk = CaseDesk(s)
    release = desk.release(first, "settled")
    second = desk.hold("document", "runbook", "new claim filed")
    s.close()
    world.case.reopen()
    copy = LogEntry.from_bytes(_entry_bytes(world, release))
    pat = world.case.investigators["pat"]
    seq = append_by_hand(world.case, copy, checkpoint_signer=pat)  # restamped with the next seq
    cf = load_casefile(world.case.vault)
    assert cf.holds[second].in_force and not cf.holds[first].in_force
    assert [(p.seq, p.code) for p in cf.problems] == [(seq, "statement_out_of_place")]
    _purge_refused(world, world.runbook_digest)
    assert ("statement_out_of_place", seq) in _findings(world)


def test_a_hold_smuggled_under_another_kind_is_caught(world: World) -> None:
    """A hold statement signed by pat (who may sign findings) stored as a finding row."""
    pat = world.case.investigators["pat"]
    body: HoldStatement = {"subject": {"kind": "document", "id": "runbook"}, "reason": "x", "at": NOW}
    entry = Statement(EntryKind.HOLD, body, pat)
    seq = append_by_hand(world.case, entry, checkpoint_signer=pat)
    world.case.vault.con.execute("UPDATE log SET kind = 'finding' WHERE seq = ?", [seq])
    assert not load_casefile(world.case.vault).holds
    kinds = {k for k, q in _findings(world, "ines", forensic=True) if q == seq}
    assert kinds & {"entry_kind_mismatch", "signature_invalid"}


def test_deleting_the_hold_view_row_does_not_lift_the_hold(world: World) -> None:
    hold = _hold(world)
    world.case.vault.con.execute("DELETE FROM v_holds WHERE seq = ?", [hold])
    _purge_refused(world, world.runbook_digest)
    found = {k for k, _q in _findings(world)}
    assert any(k.startswith("view_") for k in found), found


def test_a_forged_case_note_in_the_view_table_never_shows(world: World) -> None:
    s = world.session("ines")
    desk = CaseDesk(s)
    desk.open_case("INC-7", "t", "p")
    s.close()
    world.case.reopen()
    world.case.vault.con.execute(
        "INSERT INTO v_notes VALUES (999, 'note', 'x', 'INC-7', NULL, 'planted', ?)", [NOW]
    )
    s = world.session("ines")
    assert CaseDesk(s).view("INC-7").notes == ()
    s.close()


def test_a_case_opened_twice_by_hand_is_pinned_by_verify(world: World) -> None:
    """A key holder who bypasses the API (valid signature, place and checkpoint) still
    cannot open a second case under a taken id: the case file leaves it out and verify
    names it."""
    s = world.session("ines")
    CaseDesk(s).open_case("INC-1", "First", "why")
    s.close()
    world.case.reopen()
    ines = world.case.investigators["ines"]
    body: CaseOpenStatement = {"case_id": "INC-1", "title": "Impostor", "purpose": "overwrite", "at": NOW}
    seq = append_by_hand(world.case, Statement(EntryKind.CASE_OPEN, body, ines), checkpoint_signer=ines)
    cf = load_casefile(world.case.vault)
    assert cf.cases["INC-1"].title == "First"
    assert ("case_statement_refused", seq) in _findings(world)
