"""The case file is folded once per open vault and extended as the log grows
(`store.casecache`): what it hands out must always be what a fold from the start says,
whatever was appended, rolled back, cut back or smuggled in between."""

from __future__ import annotations

import pytest

from store import admin, casecache, casefile, merkle
from store.casefile import case_rows, fold_casefile, load_casefile
from store.crypto import Identity
from store.entries import EntryKind, LogEntry, Statement, make_statement, place_of
from store.errors import VaultError
from store.merkle import root
from store.statements import HoldStatement
from store.vault import Vault
from store.words import FindingKind
from tests.case.world import World
from tracer.engine.case import CaseDesk


def _from_the_start(vault: Vault) -> object:
    return fold_casefile(case_rows(vault), vault.leaf_hashes(), vault.origin)


def _hold(subject: str, reason: str = "litigation") -> HoldStatement:
    return {
        "subject": {"kind": "document", "id": subject},
        "reason": reason,
        "at": "2026-07-01T00:00:00Z",
    }


def _purge(world: World) -> int:
    c = world.case
    return admin.purge(
        c.vault, c.custodian, world.passage_digest, "retention", "x", "dpo", "2026-07-01T00:00:00Z"
    )


def _insert(vault: Vault, entry: LogEntry) -> int:
    """What someone with the file and no key does: a row at the next seq, no checks."""
    seq = vault.size()
    vault.con.execute("INSERT INTO log VALUES (?, ?, ?, ?)", [seq, entry.kind, entry.data, entry.leaf])
    return seq


def test_the_remembered_file_is_the_file_folded_from_the_start(world: World) -> None:
    s = world.session("ines")
    desk = CaseDesk(s)
    assert load_casefile(s.vault) == _from_the_start(s.vault)
    desk.open_case("INC-7", "Payments restart", "Why?")
    desk.tag("INC-7", "ans-restart", "claim:1", "dropped-exception")
    assert load_casefile(s.vault) == _from_the_start(s.vault)
    seq = desk.hold("document", "runbook", "litigation")
    desk.note("INC-7", "held", "ans-restart")
    desk.refresh()
    desk.release(seq, "settled")
    folded = load_casefile(s.vault)
    assert folded == _from_the_start(s.vault)
    assert folded.holds[seq].release is not None and folded.notes[-1].text == "held"
    s.close()


def test_a_second_load_hashes_only_the_leaves_appended_since(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = world.session("ines")
    desk = CaseDesk(s)
    load_casefile(s.vault)
    before = s.vault.size()
    desk.open_case("INC-7", "t", "p")
    appended: list[bytes] = []
    real = merkle.RootAccumulator.append

    def counting(self: merkle.RootAccumulator, leaf: bytes) -> None:
        appended.append(leaf)
        real(self, leaf)

    monkeypatch.setattr(merkle.RootAccumulator, "append", counting)
    load_casefile(s.vault)
    # a fold from the start would hash every leaf before the new row again
    assert 0 < len(appended) <= s.vault.size() - before
    s.close()


def test_a_file_handed_out_never_changes_under_its_holder(world: World) -> None:
    s = world.session("ines")
    desk = CaseDesk(s)
    mine = load_casefile(s.vault)
    held = dict(mine.holds)
    desk.hold("document", "runbook", "litigation")
    assert load_casefile(s.vault).holds.keys() - held.keys()
    assert mine.holds == held
    s.close()


def test_a_batch_that_failed_leaves_nothing_remembered(world: World) -> None:
    c = world.case
    c.reopen()
    vault = c.vault
    load_casefile(vault)
    with pytest.raises(RuntimeError), vault.batch(c.custodian) as b:
        b.append(Statement(EntryKind.HOLD, _hold("brightwater"), c.custodian))
        # a row of the transaction (as the batch's flush writes it) is seen, not remembered
        leaves = vault.leaf_hashes()
        place = place_of(vault.origin, len(leaves), root(leaves))
        _insert(vault, make_statement(EntryKind.HOLD, _hold("runbook"), c.custodian, place).at(len(leaves)))
        assert [h.subject for h in load_casefile(vault).holds.values()] == ["runbook"]
        raise RuntimeError("crash before commit")
    assert not load_casefile(vault).holds
    assert load_casefile(vault) == _from_the_start(vault)


def test_a_row_smuggled_in_after_the_fold_is_a_problem_not_a_hold(world: World) -> None:
    """The extension checks each new row as a fold from the start would: a replayed hold
    (another place) and one signed by a key without the hold right are problems."""
    c = world.case
    seq = CaseDesk(world.session("ines")).hold("document", "runbook", "litigation")
    c.reopen()
    vault = c.vault
    assert seq in load_casefile(vault).holds
    stored = vault.con.execute("SELECT entry FROM log WHERE seq = ?", [seq]).fetchall()[0][0]
    at = _insert(vault, LogEntry.from_bytes(bytes(stored)))
    omar = Identity.from_seed("omar", b"omar")
    leaves = vault.leaf_hashes()
    forged = make_statement(
        EntryKind.HOLD, _hold("brightwater"), omar, place_of(vault.origin, len(leaves), root(leaves))
    )
    at2 = _insert(vault, forged.at(len(leaves)))
    folded = load_casefile(vault)
    assert folded == _from_the_start(vault)
    assert [h.subject for h in folded.holds.values()] == ["runbook"]
    problems = {p.seq: p.code for p in folded.problems}
    assert problems[at] == FindingKind.ENTRY_OUT_OF_PLACE
    assert at2 in problems


def test_a_log_cut_back_is_folded_again(world: World) -> None:
    s = world.session("ines")
    seq = CaseDesk(s).hold("document", "runbook", "litigation")
    vault = s.vault
    assert seq in load_casefile(vault).holds
    vault.con.execute("DELETE FROM log WHERE seq >= ?", [seq])
    # shrunk under it: nothing remembered beyond the new end is kept
    assert seq not in load_casefile(vault).holds
    assert load_casefile(vault) == _from_the_start(vault)
    # a recovery that cuts back and appends again says so (`Vault.forget_tree`)
    vault.forget_tree()
    assert load_casefile(vault) == _from_the_start(vault)
    s.close()


def test_an_answers_entries_are_the_same_looked_up_a_chunk_at_a_time(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hold signs the entries its answer rests on; the revisions its passages cite are
    looked up in chunks (a long IN list is a scan), and only entries that say the cited
    document and revision count."""
    c = world.case
    c.reopen()
    whole = casefile.answer_entries(c.vault, "ans-restart")
    kinds = {
        q: LogEntry.from_bytes(bytes(e)).kind
        for q, e in c.vault.con.execute("SELECT seq, entry FROM log").fetchall()
    }
    assert any(kinds[q] == "revision" for q in whole) and any(kinds[q] == "manifest" for q in whole)
    monkeypatch.setattr(casefile, "INDEX_CHUNK", 1)
    assert casefile.answer_entries(c.vault, "ans-restart") == whole
    # a v_revisions row pointed at another revision's entry is not taken as the cited one
    cited = [q for q in whole if kinds[q] == "revision"]
    other = next(q for q, k in kinds.items() if k == "revision" and q not in cited)
    c.vault.con.execute("UPDATE v_revisions SET seq = ? WHERE seq = ?", [other, cited[0]])
    # read as it is, not mended first: the entry's own bytes must refuse it
    monkeypatch.setattr(c.vault.views, "require", lambda *_tables: None)
    assert other not in casefile.answer_entries(c.vault, "ans-restart")


def test_a_purge_reads_each_held_answers_entries_once_and_still_refuses(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A purge checks every hold in force; the digests a held answer's signed entries
    name are read once per open vault, and the refusal is the same every time."""
    s = world.session("ines")
    seq = CaseDesk(s).hold("answer", "ans-restart", "preserve")
    s.close()
    c = world.case
    c.reopen()
    read: list[set[int]] = []
    real = casefile.digests_by_entry

    def counting(vault: Vault, seqs: set[int]) -> dict[int, set[str]]:
        read.append(set(seqs))
        return real(vault, seqs)

    monkeypatch.setattr(casecache, "digests_by_entry", counting)
    for _ in range(3):
        with pytest.raises(VaultError, match=f"hold at log entry {seq} on answer"):
            admin.purge(
                c.vault, c.custodian, world.passage_digest, "retention", "x", "dpo", "2026-07-01T00:00:00Z"
            )
    assert len(read) == 1 and read[0]
    c.vault.forget_tree()  # a failed batch or a cut-back log: read again
    with pytest.raises(VaultError, match="under legal hold"):
        admin.purge(
            c.vault, c.custodian, world.passage_digest, "retention", "x", "dpo", "2026-07-01T00:00:00Z"
        )
    assert len(read) == 2
