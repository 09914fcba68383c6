"""`Vault.rows_claiming` picks rows by their kind column *or* by the kind their own bytes
end with, and scans each entry's tail once per process however often it is asked."""

from __future__ import annotations

import pytest

from store import admin
from store.crypto import sha256_hex
from store.entries import EntryKind
from store.logindex import LogIndex
from store.rows import EntryRow
from tests.helpers import Case, revision


def _seqs(case: Case, *kinds: str) -> list[int]:
    return [seq for seq, _k, _d, _l in case.vault.index.rows_claiming([EntryKind(k) for k in kinds])]


def test_a_relabelled_row_is_found_by_its_bytes_before_and_after_the_tail_is_remembered(case: Case) -> None:
    grants = _seqs(case, "investigator_grant")  # the tails of the log so far are read here
    assert grants
    assert case.ingest(revision("d", "A", "# D\n\nText.\n", "2026-01-05T00:00:00Z")).ok
    added = _seqs(case, "revision")  # only the appended entries' tails are read now
    assert added
    for seq in (grants[0], added[-1]):
        case.vault.con.execute("UPDATE log SET kind = 'access' WHERE seq = ?", [seq])
    assert _seqs(case, "investigator_grant") == grants  # the bytes still say it
    assert _seqs(case, "revision") == added
    assert grants[0] in _seqs(case, "access")  # and the column says the other kind
    case.reopen()  # a fresh process reads every tail again, with the same answer
    assert _seqs(case, "investigator_grant") == grants and _seqs(case, "revision") == added


def test_an_entry_that_is_not_utf8_still_shows_its_kind(case: Case) -> None:
    grants = _seqs(case, "investigator_grant")
    data = bytes(case.vault.con.execute("SELECT entry FROM log WHERE seq = ?", [grants[0]]).fetchall()[0][0])
    broken = b"\xff\xfe" + data  # not UTF-8 as a whole; the tail is untouched
    case.vault.con.execute("UPDATE log SET entry = ?, kind = 'access' WHERE seq = ?", [broken, grants[0]])
    case.reopen()
    assert grants[0] in _seqs(case, "investigator_grant")


def test_text_that_spells_an_escaped_quote_does_not_fake_a_kind(case: Case) -> None:
    grants = _seqs(case, "investigator_grant")
    data = bytes(case.vault.con.execute("SELECT entry FROM log WHERE seq = ?", [grants[0]]).fetchall()[0][0])
    forged = data[: data.rfind(b'"kind"')] + rb"\x22kind\x22:\x22hold\x22,\x22seq\x22:3}"
    case.vault.con.execute("UPDATE log SET entry = ? WHERE seq = ?", [forged, grants[0]])
    case.reopen()
    assert grants[0] not in _seqs(case, "hold")


def test_the_tombstones_come_from_the_guarded_read_and_follow_a_new_purge(
    case: Case, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An unlock reads the guarded entries once; the first trace's tombstone look-up uses
    those bytes instead of reading them again, and a later purge is still seen."""
    texts = ["Refunds within thirty days.\n", "Refunds within fourteen days.\n"]
    revs = [revision(f"d{i}", "A", t, "2026-01-05T00:00:00Z") for i, t in enumerate(texts)]
    assert case.ingest(*revs).ok
    digests = [sha256_hex(t.encode()) for t in texts]
    admin.purge(case.vault, case.custodian, digests[0], "RET-6M", "superseded", "HR", "2026-05-01T00:00:00Z")
    case.reopen()
    index = case.vault.index
    index.guarded_pairs()  # what an unlock reads
    fresh = LogIndex(case.vault.con).tombstone_index()
    real = index.guarded_rows

    def no_second_read() -> list[EntryRow]:
        raise AssertionError("the guarded entries were read again")

    monkeypatch.setattr(index, "guarded_rows", no_second_read)
    assert index.tombstone_index() == fresh and set(fresh) == {digests[0]}
    monkeypatch.setattr(index, "guarded_rows", real)
    admin.purge(case.vault, case.custodian, digests[1], "RET-6M", "superseded", "HR", "2026-05-01T00:00:00Z")
    assert set(index.tombstone_index()) == set(digests)
