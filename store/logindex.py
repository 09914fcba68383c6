"""Which log entries are of a kind, decided by their own bytes, remembered as the log grows.

The log's `kind` column is outside the Merkle tree: selecting by it alone would miss an
entry someone relabelled, so every selection here also reads the kind that the entry's
canonical bytes end with (`..."kind":"K","seq":N}`). The log only grows, so a repeated
question reads only the entries appended since the last one. This object owns the three
caches built that way (tail kinds, guarded entries, first tombstones); `Vault` tells it
when a batch commits or fails, or when a recovery cuts the log back.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import duckdb

from store import merkle
from store.entries import ROSTER_KINDS, EntryKind, LogEntry
from store.errors import InputError
from store.guarded import GUARDED_KINDS, guarded_kind
from store.rows import EntryRow, TombstoneRow

__all__ = ["LogIndex"]

#: the tail of canonical entry bytes, `"kind":"K","seq":N}`, as DuckDB writes a BLOB cast to
#: VARCHAR (every byte outside printable ASCII, and `"` and `\`, as `\xNN`). Read from the
#: last 96 bytes only: decoding whole entries costs several times more, and an entry that
#: is not UTF-8 would escape the check
_KIND_TAIL = r"\\x22kind\\x22:\\x22([a-z_]+)\\x22,\\x22seq\\x22:[0-9]+\}$"
_TAIL_KINDS = (
    f"SELECT seq, regexp_extract(CAST(entry[-96:] AS VARCHAR), '{_KIND_TAIL}', 1) FROM log "  # noqa: S608 - constants
    "WHERE seq >= ? ORDER BY seq"
)


class LogIndex:
    """Entries selected by kind, by column or by bytes, with what each selection remembers."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self._con = con
        #: the kind each entry's bytes end with, by seq
        self._tails: list[str] = []
        self._guarded: list[tuple[int, bytes]] | None = None
        self._tombstones: dict[str, TombstoneRow] | None = None

    def reset(self) -> None:
        """Forget everything: a batch failed or the log was cut back."""
        self._tails = []
        self._guarded = None
        self._tombstones = None

    def appended(self, guarded: list[tuple[int, bytes]], added_guarded: bool) -> None:
        """A batch committed: `guarded` is the whole guarded list now (the writer built it
        from the rows it checked and the entries it wrote)."""
        self._guarded = guarded
        if added_guarded:
            self._tombstones = None

    def rows_claiming(self, kinds: Iterable[EntryKind], since: int = 0) -> list[EntryRow]:
        """Every row from entry `since` on whose kind column or whose own bytes name one
        of `kinds`, in seq order; callers decide by the bytes.

        The bytes' tail is read in SQL (one pass, no entry bytes leave DuckDB but those
        selected)."""
        wanted = {k.value for k in kinds}  # plain words: DuckDB binds str, not its subclasses
        tails = self._tail_kinds()
        start = max(since, 0)
        chosen = {seq for seq in range(start, len(tails)) if tails[seq] in wanted}
        by_column = self._con.execute(
            "SELECT seq FROM log WHERE seq >= ? AND kind IN (SELECT unnest(?::VARCHAR[]))",
            [start, sorted(wanted)],
        )
        chosen.update(int(r[0]) for r in by_column.fetchall())
        if not chosen:
            return []  # joining an empty list costs DuckDB a scan of the whole log
        # two queries: with an OR of both conditions DuckDB reads every entry's bytes
        rows = self._con.execute(
            "SELECT l.seq, l.kind, l.entry, l.leaf_hash FROM (SELECT unnest(?::BIGINT[]) AS seq) AS s "
            "JOIN log AS l ON l.seq = s.seq ORDER BY l.seq",
            [sorted(chosen)],
        ).fetchall()
        return [EntryRow(int(a), str(b), bytes(c), bytes(d)) for a, b, c, d in rows]

    def _tail_kinds(self) -> list[str]:
        """The kind each entry's own bytes end with (`""` when none), by seq; only entries
        appended since the last call are read."""
        tails = self._tails
        row = self._con.execute("SELECT count(*) FROM log").fetchall()
        size = int(row[0][0]) if row else 0
        if len(tails) > size:  # the log shrank under us: nothing remembered holds
            tails = self._tails = []
        if len(tails) < size:
            rows = self._con.execute(_TAIL_KINDS, [len(tails)]).fetchall()
            for seq, kind in rows:
                if int(seq) != len(tails):  # a gap or a duplicate seq: read it all again
                    tails = self._tails = [
                        str(k or "") for _s, k in self._con.execute(_TAIL_KINDS, [0]).fetchall()
                    ]
                    break
                tails.append(str(kind or ""))
        return tails

    def roster_rows(self) -> list[EntryRow]:
        """The entries that change the roster, selected by column or by bytes: a relabelled
        one is a problem `store.roster` reports."""
        return self.rows_claiming(ROSTER_KINDS)

    def guarded_rows(self) -> list[EntryRow]:
        """Every row whose kind column or bytes say a guarded kind (`store.guarded`)."""
        return self.rows_claiming(GUARDED_KINDS)

    def guarded_pairs(self) -> list[tuple[int, bytes]]:
        """(seq, stored leaf) of every entry whose bytes say a guarded kind: what each
        checkpoint's `tracer-guarded` line commits to.

        The tombstones are taken from the same read (an unlock makes it), so the first
        trace of a session finds them ready instead of reading those entries again."""
        if self._guarded is None:
            rows = self.guarded_rows()
            self._guarded = [(seq, leaf) for seq, _k, data, leaf in rows if guarded_kind(data) is not None]
            self._tombstones = _first_tombstones(rows)
        return self._guarded

    def tombstone_index(self) -> dict[str, TombstoneRow]:
        """digest -> its first tombstone, read from the log's entry bytes, never from the
        editable `v_tombstones`.

        Which entries are tombstones is decided by their bytes, and the set is what the
        covering checkpoint commits to (unlock and appends refuse a mismatch); an entry
        whose bytes no longer hash to its leaf is left to `verify`.
        """
        if self._tombstones is None:
            self._tombstones = _first_tombstones(self.guarded_rows())
        return self._tombstones

    def tombstone_rows_many(self, digests: Sequence[str]) -> dict[str, TombstoneRow]:
        """`tombstone_index` rows of the digests that have one."""
        index = self.tombstone_index()
        return {d: index[d] for d in set(digests) if d in index}


def _first_tombstones(rows: Sequence[EntryRow]) -> dict[str, TombstoneRow]:
    """digest -> the first of `rows` whose bytes say tombstone and hash to its leaf."""
    found: dict[str, TombstoneRow] = {}
    for seq, _kind, data, leaf in rows:
        if guarded_kind(data) != "tombstone" or merkle.leaf_hash(data) != leaf:
            continue
        try:
            stmt = LogEntry.from_bytes(data).payload_json()
        except (ValueError, InputError, AttributeError, TypeError):
            continue
        if isinstance(stmt, dict) and isinstance(stmt.get("digest"), str):
            found.setdefault(stmt["digest"], _tombstone(seq, stmt))
    return found


def _tombstone(seq: int, stmt: dict[str, object]) -> TombstoneRow:
    def text(key: str) -> str:
        return str(stmt.get(key, ""))

    return TombstoneRow(
        seq, str(stmt["digest"]), text("policy"), text("reason"), text("authorizer"), text("effective_at")
    )
