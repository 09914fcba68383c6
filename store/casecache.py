"""The case file of one open vault, folded once and extended as the log grows.

Holds, releases, notes and the purge's hold check all ask for the case file, and each
fold checks every case row as the roster stood at its place, which needs the tree root
before that row: folding afresh for every command hashed the whole log each time, so a
hold cost more the bigger the vault. Only this process can append while it holds the
file (DuckDB's lock), so what it folded stays true until one of its own batches fails or
a recovery cuts the log back, which `Vault.forget_tree` tells this object; a log that
shrank under it is folded again from the start. Rows written by a batch still in
progress are never remembered: inside a batch the file is folded afresh.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from store.casefile import CaseFile, CaseFold, case_rows, digests_by_entry

if TYPE_CHECKING:
    from store.vault import Vault

__all__ = ["CaseCache"]


class CaseCache:
    """`load_casefile` of one open vault: the fold so far and the log size it covers."""

    def __init__(self, vault: Vault) -> None:
        self._vault = vault
        self._fold: CaseFold | None = None
        #: entries of the log the fold has seen (rows before this are folded)
        self._size = 0
        #: the text digests each held answer's entries name, read once (`named_digests`)
        self._named: dict[int, frozenset[str]] = {}

    def reset(self) -> None:
        self._fold = None
        self._size = 0
        self._named = {}

    def named_digests(self, seqs: Iterable[int]) -> dict[int, frozenset[str]]:
        """`casefile.digests_by_entry` of `seqs`, each entry read once per open vault: a
        purge asks for the entries of every hold in force, so without this each purge
        cost more the more holds there were. An entry whose bytes do not hash to its
        leaf names nothing, then as later."""
        wanted = {int(q) for q in seqs}
        missing = wanted - self._named.keys()
        found = digests_by_entry(self._vault, missing) if missing else {}
        read = {q: frozenset(found.get(q, ())) for q in missing}
        if not self._vault.in_batch:  # rows of a batch in progress may yet roll back
            self._named.update(read)
        return {q: read[q] if q in read else self._named[q] for q in wanted}

    def current(self) -> CaseFile:
        """A copy of the case file as the whole log says now."""
        vault = self._vault
        size = vault.size()
        if vault.in_batch:
            fresh = CaseFold(vault.origin)
            _extend(vault, fresh, 0, size)
            return fresh.case
        if self._fold is None or size < self._size:
            self._fold, self._size = CaseFold(vault.origin), 0
        if size > self._size:
            _extend(vault, self._fold, self._size, size)
            self._size = size
        return self._fold.case.copy()


def _extend(vault: Vault, fold: CaseFold, since: int, size: int) -> None:
    """Fold the case rows of entries `since`..`size`, reading only the leaves the tree
    still needs (up to the last such row)."""
    rows = [r for r in case_rows(vault, since) if r.seq < size]
    if not rows:
        return
    base = fold.acc.size
    found = vault.con.execute(
        "SELECT leaf_hash FROM log WHERE seq >= ? AND seq < ? ORDER BY seq", [base, rows[-1].seq]
    ).fetchall()
    leaves = [bytes(r[0]) for r in found]
    if len(leaves) == rows[-1].seq - base:
        fold.extend(rows, leaves, base)
        return
    # entries are missing: take the leaves by position, as a fold from the start does, so
    # every row after the hole fails its place check however the fold was reached
    fold.extend(rows, vault.leaf_hashes()[base:], base)
