"""Derived tables are a cache: every checkpoint commits to their rows, and nothing decides
from a table before it was checked against that commitment.

The `v_*` tables are derived by one function (`store.views.derive`) from the log, but
they live outside the Merkle tree: someone who can write the file could delete the row
of a later revision (a stale answer then reads as verified) or rename the answer a hold
names (the hold then covers nothing).  So every checkpoint carries a second C2SP
extension line beside `tracer-guarded`:

    tracer-views <hex SHA-256 over "table:group:digest\\n" of every table and group>

where a *group* is the rows of `GROUP` consecutive entries of one table, and its digest
is SHA-256 over the sorted SHA-256 of each row written as unambiguous text (the multiset
digest verify's receipts already keep).  The line is a pure function of the log prefix.

* A **writer** (`Vault.batch`) first checks the cached group digests (`view_groups`)
  against the line of the checkpoint it extends and the rows of the group it appends to
  against their digest, then signs the digests of the groups it touched: it never signs
  over rows it has not checked, and an edit elsewhere keeps its old, honest digest.
* A **reader** calls `ViewGuard.require(table, ...)` before a decision reads a table: the
  table's rows are hashed per group and compared with the signed digests.  A group that
  disagrees is derived again from its entries (each checked against its stored leaf)
  and, when the derived rows hash as signed, the table is mended from them (in place
  when the vault is writable, in a session-local shadow table when it is read-only) and
  a warning says so; otherwise the vault is refused as damaged.
* A vault whose head checkpoint predates the line has no commitment to check: the
  required tables are derived from the log entries that produce them (selected by kind
  column or by their own bytes) and compared, at the cost of one pass over those entries.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import duckdb

from store.entries import ANSWER_KINDS, EntryKind, LogEntry
from store.errors import VaultDamagedError
from store.guarded import extension_value
from store.rowtables import insert_rows
from store.schema import VIEW_COLUMNS, view_ddl
from store.views import Rows, derive

if TYPE_CHECKING:
    from store.vault import Vault

__all__ = [
    "DDL",
    "EAGER_VIEWS",
    "EXTENSION",
    "GROUP",
    "ON_FIRST_USE",
    "SOURCES",
    "Digests",
    "Mend",
    "RecordedMend",
    "RowDiff",
    "ViewGuard",
    "commitment",
    "extension_line",
    "recorded_mends",
    "signed_commitment",
    "table_digests",
]

EXTENSION = "tracer-views"
#: entries per group; the same grouping verify's receipts keep
GROUP = 4096
#: the digest cache and the mend record; every writable open creates them (`Vault.open`,
#: `Vault.create`), so a writer never needs to
DDL = (
    "CREATE TABLE IF NOT EXISTS view_groups (tbl VARCHAR NOT NULL, grp BIGINT NOT NULL, "
    "digest VARCHAR NOT NULL, PRIMARY KEY (tbl, grp));"
    # the record of every in-place mend, so a verify in a later process still reports the
    # edit that was undone (insert only; someone who can write the file can delete it,
    # which hides an edit that no longer changes anything)
    "CREATE TABLE IF NOT EXISTS view_mends (log_size BIGINT NOT NULL, tbl VARCHAR NOT NULL, "
    "problem VARCHAR NOT NULL, seq BIGINT NOT NULL, row_json VARCHAR NOT NULL)"
)

#: the entry kinds (as their own bytes say) whose derivation writes rows of each table
_K = EntryKind
SOURCES: dict[str, frozenset[EntryKind]] = {
    "v_keys": frozenset({_K.KEY_ADD, _K.KEY_REVOKE}),
    "v_investigators": frozenset({_K.INVESTIGATOR_GRANT, _K.INVESTIGATOR_REVOKE}),
    "v_answers": frozenset({_K.MANIFEST, _K.IMPORTED_TRACE}),
    "v_passages": frozenset({_K.MANIFEST, _K.IMPORTED_TRACE}),
    "v_citations": frozenset({_K.MANIFEST, _K.IMPORTED_TRACE}),
    "v_revisions": frozenset({_K.REVISION}),
    "v_deletions": frozenset({_K.DOCUMENT_DELETION}),
    "v_tombstones": frozenset({_K.TOMBSTONE}),
    "v_access": frozenset({_K.ACCESS}),
    "v_findings": frozenset({_K.FINDING}),
    "v_digests": frozenset({_K.MANIFEST, _K.IMPORTED_TRACE, _K.REVISION}),
    "v_cases": frozenset({_K.CASE_OPEN}),
    "v_case_items": frozenset(
        {_K.CASE_OPEN, _K.CASE_CONCLUSION, _K.TAG, _K.NOTE, _K.HOLD, _K.HOLD_RELEASE, _K.ACCESS, _K.FINDING}
    ),
    "v_tags": frozenset({_K.TAG}),
    "v_notes": frozenset({_K.NOTE, _K.CASE_CONCLUSION}),
    "v_holds": frozenset({_K.HOLD, _K.HOLD_RELEASE}),
}

#: tables with a row per statement, not per answer: small, checked at every unlock
EAGER_VIEWS = tuple(t for t in SOURCES if not SOURCES[t] & ANSWER_KINDS)
#: the per-answer tables, checked on first use (or ahead of it, `ViewGuard.check_aside`)
ON_FIRST_USE = tuple(t for t in SOURCES if t not in EAGER_VIEWS)

#: table -> group -> digest of that table's rows of the group's entries
Digests = dict[str, dict[int, str]]


def _row_text(table: str) -> str:
    """SQL for one row of `table` as unambiguous text: each column as its length, ':'
    and its text, or '-' for NULL, joined by ','."""
    parts = [
        f"coalesce(CAST(length(CAST({c} AS VARCHAR)) AS VARCHAR) || ':' || CAST({c} AS VARCHAR), '-')"
        for c, _t in VIEW_COLUMNS[table]
    ]
    return "concat_ws(',', " + ", ".join(parts) + ")"


def table_digests(
    con: duckdb.DuckDBPyConnection, table: str, lo: int = 0, hi: int | None = None
) -> dict[int, str]:
    """SHA-256 per group over `table`'s rows of entries `lo`..`hi-1`, as a multiset.

    One query per group that has rows: sorting all of a large view's row hashes at once
    ran out of verify's buffer pool at a million passages; a group's rows are a few tens
    of thousands."""
    upper = (1 << 62) if hi is None else int(hi)
    groups = con.execute(
        f"SELECT DISTINCT seq // {GROUP} FROM {table} WHERE seq >= ? AND seq < ? ORDER BY 1",  # noqa: S608
        [int(lo), upper],
    ).fetchall()
    sql = (
        "SELECT sha256(string_agg(rh, '' ORDER BY rh)) FROM ("  # noqa: S608 - fixed names
        f"SELECT sha256({_row_text(table)}) AS rh FROM {table} WHERE seq >= ? AND seq < ?)"
    )
    out: dict[int, str] = {}
    for (g,) in groups:
        g = int(g)
        start, end = max(g * GROUP, int(lo)), min((g + 1) * GROUP, upper)
        rows = con.execute(sql, [start, end]).fetchall()  # fetchone leaves the result open
        if rows and rows[0][0] is not None:
            out[g] = str(rows[0][0])
    return out


def _rows_digests(table: str, rows: Iterable[tuple[Any, ...]]) -> dict[int, str]:
    """`table_digests` of rows held in Python (derived from the log), computed by DuckDB
    on the same text so both sides hash alike."""
    con = duckdb.connect()
    try:
        con.execute(f"CREATE TABLE {table} ({', '.join(f'{c} {t}' for c, t in VIEW_COLUMNS[table])})")
        items = list(rows)
        if items:
            marks = ", ".join("?" for _ in VIEW_COLUMNS[table])
            con.executemany(f"INSERT INTO {table} VALUES ({marks})", [list(r) for r in items])  # noqa: S608
        return table_digests(con, table)
    finally:
        con.close()


def commitment(digests: Mapping[str, Mapping[int, str]]) -> str:
    """SHA-256 over `table:group:digest\\n` for every table (schema order) and group."""
    h = hashlib.sha256()
    for table in VIEW_COLUMNS:
        groups = digests.get(table, {})
        for g in sorted(groups):
            h.update(f"{table}:{g}:{groups[g]}\n".encode("ascii"))
    return h.hexdigest()


def extension_line(digests: Mapping[str, Mapping[int, str]]) -> str:
    return f"{EXTENSION} {commitment(digests)}"


def signed_commitment(extensions: Iterable[str]) -> str | None:
    """The views commitment a checkpoint's extension lines carry, if any."""
    return extension_value(extensions, EXTENSION)


def _span(groups: Iterable[int]) -> str:
    gs = sorted(groups)
    return ", ".join(f"{g * GROUP}..{(g + 1) * GROUP - 1}" for g in gs[:3]) + (" …" if len(gs) > 3 else "")


@dataclass(frozen=True)
class RowDiff:
    """One stored row the log does not derive (`view_row_altered_or_extra`), or one it
    derives that was not stored (`view_row_missing_or_altered`)."""

    problem: str
    seq: int
    values: dict[str, Any]


@dataclass(frozen=True)
class Mend:
    """Rows of `table` for the groups of entries starting at `starts`, found edited and
    derived again from the log in place, with what differed."""

    table: str
    starts: tuple[int, ...]
    diffs: tuple[RowDiff, ...]


@dataclass(frozen=True)
class RecordedMend:
    """One row an earlier in-place mend replaced, as `view_mends` recorded it."""

    log_size: int
    table: str
    diff: RowDiff


def recorded_mends(con: duckdb.DuckDBPyConnection) -> list[RecordedMend]:
    """Every mend recorded in this vault file, oldest first (none in a vault made before
    the record was kept)."""
    try:
        rows = con.execute(
            "SELECT log_size, tbl, problem, seq, row_json FROM view_mends ORDER BY rowid"
        ).fetchall()
    except duckdb.CatalogException:
        return []
    out: list[RecordedMend] = []
    for size, tbl, problem, seq, row_json in rows:
        try:
            values = json.loads(str(row_json))
        except ValueError:
            values = {"row_json": str(row_json)}
        if not isinstance(values, dict):
            values = {"row_json": str(row_json)}
        out.append(RecordedMend(int(size), str(tbl), RowDiff(str(problem), int(seq), values)))
    return out


class ViewGuard:
    """The one owner of the derived tables' check for an open vault: which tables were
    found to hash as the signed checkpoint says, the cached group digests, and the mend.

    Checked tables stay checked while this process holds the file (DuckDB's lock keeps
    other writers out); an append moves the commitment on and keeps them checked, since
    the writer derived the rows it added."""

    def __init__(self, vault: Vault) -> None:
        self._vault = vault
        self._checked: set[str] = set()
        self._trusted: Digests | None = None
        self._at: tuple[int, bytes] | None = None
        #: what a reader should be told: tables mended from the log
        self.warnings: list[str] = []
        #: the mends themselves, which `verify` reports as findings
        self.mended: list[Mend] = []
        #: tables a session-local copy shadows (read-only vaults)
        self._shadowed: set[str] = set()
        #: set by `verify`, which rebuilds every table from the log and reports each edit
        self.verifying = False

    @contextmanager
    def unchecked(self) -> Iterator[None]:
        """For `verify` alone, which derives every table from the log itself and reports
        each edited row as a finding: nothing is mended before it has looked."""
        before, self.verifying = self.verifying, True
        for table in self._shadowed:
            # verify compares the tables as the file holds them, not the session's mend
            self._vault.con.execute(f"DROP TABLE IF EXISTS temp.main.{table}")
        self._shadowed.clear()
        self._checked.clear()
        try:
            yield
        finally:
            self.verifying = before

    def recorded(self) -> list[RecordedMend]:
        """Every in-place mend this vault file records (`recorded_mends`)."""
        return recorded_mends(self._vault.con)

    def reset(self) -> None:
        """Forget what was checked: a batch rolled back."""
        self._checked, self._trusted, self._at = set(), None, None

    # -- the signed side ---------------------------------------------------------------

    def _tree(self) -> tuple[int, bytes]:
        acc = self._vault.tree.accumulator()
        return acc.size, acc.root()

    def _signed(self, size: int, root: bytes) -> str | None:
        try:
            cp = self._vault.tree.covering_checkpoint(size, root)
        except VaultDamagedError:
            return None  # a roster that does not hold signs nothing: derive from the log (forensic)
        if cp is None:
            return None
        return signed_commitment(cp.extensions)

    def _stored(self) -> Digests:
        out: Digests = {t: {} for t in VIEW_COLUMNS}
        try:
            rows = self._vault.con.execute("SELECT tbl, grp, digest FROM view_groups").fetchall()
        except duckdb.CatalogException:
            return out
        for tbl, grp, digest in rows:
            if str(tbl) in out:
                out[str(tbl)][int(grp)] = str(digest)
        return out

    def _current(self, tables: Iterable[str]) -> Digests:
        return {t: table_digests(self._vault.con, t) for t in tables}

    def trusted(self) -> Digests | None:
        """Group digests proven to be what the covering checkpoint signed (None for a vault
        whose head checkpoint predates the commitment, or with no covering checkpoint)."""
        here = self._tree()
        if self._at != here:
            self._at, self._trusted, self._checked = here, None, set()
        if self._trusted is not None:
            return self._trusted
        signed = self._signed(*here)
        if signed is None:
            return None
        stored = self._stored()
        if commitment(stored) == signed:
            self._trusted = stored
            return stored
        # the cache itself was edited (or rows and cache alike): hash the tables, then
        # derive from the log whatever still disagrees
        current = self._current(VIEW_COLUMNS)
        if commitment(current) != signed:
            self._rederive(current, stored)
            if commitment(current) != signed:
                raise VaultDamagedError(
                    f"{self._vault.path}: view_commitment_mismatch: the derived tables, derived again "
                    "from the log, do not hash as the latest checkpoint signs (run `tracer verify`)"
                )
        self._trusted = current
        self._save_cache(current)
        return current

    def _rederive(self, current: Digests, stored: Digests) -> None:
        """Replace in `current` each group whose table digest and cached digest disagree by
        the digest of that group's rows derived from the log (no rows: no group)."""
        for table in VIEW_COLUMNS:
            bad = _differing(current[table], stored[table])
            if not bad:
                continue
            derived = self._derive(table, bad)
            for g in bad:
                digest = _rows_digest_of(table, derived.get(g))
                if digest is not None:
                    current[table][g] = digest
                else:
                    current[table].pop(g, None)

    # -- the reader's check ------------------------------------------------------------

    def require(self, *tables: str) -> None:
        """Before a decision reads `tables`: prove each hashes as signed, mending it from the
        log when it does not; raise VaultDamagedError when that fails too."""
        if self.verifying:
            return
        wanted = self._unchecked(tables)
        if not wanted:
            return
        trusted = self.trusted()
        for table in wanted:
            current = table_digests(self._vault.con, table)
            expected = None if trusted is None else trusted[table]
            # no commitment (None): derive the whole table from the log
            bad = None if expected is None else _differing(current, expected)
            if bad is None or bad:
                self._mend(table, bad, expected, current)
            self._checked.add(table)

    def _unchecked(self, tables: Iterable[str]) -> list[str]:
        """Those of `tables` not proven since the log last grew (all of them once it grew)."""
        return [t for t in tables if t not in self._checked or self._at != self._tree()]

    def check_aside(
        self,
        tables: Iterable[str],
        hold: Callable[[], AbstractContextManager[object]],
        between: Callable[[], bool] = lambda: True,
    ) -> list[str]:
        """`require` for an interactive reader, with the hashing done outside `hold` (the
        lock that serialises use of the vault's connection), on a cursor of its own, one
        group per query, calling `between()` before each (False: stop, nothing checked).

        Under `hold` again, a table is marked checked only if the digests seen equal the
        trusted ones at that moment: only this process writes the file, and each of its
        batches re-derives the trusted digests of the groups it writes, so rows changed
        after they were hashed make the digests differ, and the table is left for
        `require` to check the usual way.  Returns the tables marked checked."""
        with hold():
            trusted = None if self.verifying else self.trusted()
            wanted = [t for t in tables if t not in self._checked]
            if trusted is None or not wanted:
                return []
            cursor = self._vault.con.cursor()
        try:
            seen = _hash_aside(cursor, wanted, trusted, between)
        finally:
            cursor.close()
        if seen is None:
            return []
        with hold():
            return self._mark_unchanged(seen)

    def _mark_unchanged(self, seen: Digests) -> list[str]:
        """Mark checked the tables whose digests seen are still the trusted ones (under the lock)."""
        now = None if self.verifying else self.trusted()
        if now is None:
            return []
        done = [t for t, groups in seen.items() if groups == now[t]]
        self._checked.update(done)
        return done

    def _mend(
        self, table: str, bad: set[int] | None, expected: dict[int, str] | None, current: dict[int, str]
    ) -> None:
        derived = self._derive(table, bad)
        if bad is None:
            bad = _differing_derived(table, current, derived)
            if not bad:
                return
        if expected is not None:
            self._refuse_unsigned(table, bad, derived, expected)
        rows = [r for g in sorted(bad) for r in derived.get(g, [])]
        diffs = self._diffs(table, bad, rows) if not self._vault.read_only else ()
        self._replace(table, bad, rows, diffs)
        if diffs:
            # in place, the edit is gone from the file: verify reports each row from here
            self.mended.append(Mend(table, tuple(g * GROUP for g in sorted(bad)), diffs))
        self.warnings.append(
            f"derived table {table}: rows of entries {_span(bad)} disagreed with the log's signed "
            "commitment and were derived again from the log entries (someone edited the file; "
            "`tracer verify` reports it)"
        )

    def _refuse_unsigned(
        self, table: str, bad: set[int], derived: dict[int, list[tuple[Any, ...]]], expected: dict[int, str]
    ) -> None:
        """Raise VaultDamagedError unless every group of `bad`, derived from the log, hashes
        as the signed commitment says."""
        for g in bad:
            if _rows_digest_of(table, derived.get(g)) != expected.get(g):
                raise VaultDamagedError(
                    f"{self._vault.path}: view_commitment_mismatch: {table} rows of entries "
                    f"{_span([g])}, derived again from the log, do not hash as "
                    "the signed checkpoint says (run `tracer verify`)"
                )

    def _derive(self, table: str, groups: set[int] | None) -> dict[int, list[tuple[Any, ...]]]:
        """`table`'s rows, by group, derived from the entries that produce them, each entry
        checked against its stored leaf (which the signed tree covers)."""
        out: dict[int, list[tuple[Any, ...]]] = {}
        for seq, _kind, data, stored in self._vault.index.rows_claiming(SOURCES[table]):
            g = seq // GROUP
            if groups is not None and g not in groups:
                continue
            rows: Rows = {t: [] for t in VIEW_COLUMNS}
            try:
                entry = LogEntry.from_bytes(data)
                if entry.leaf != stored:
                    continue  # rewritten bytes vouch for nothing; verify names them
                derive(seq, entry, rows)
            except (KeyError, TypeError, ValueError, AttributeError):
                continue  # a damaged entry derives nothing; verify names it
            if rows[table]:
                out.setdefault(g, []).extend(rows[table])
        return out

    def _diffs(self, table: str, groups: set[int], rows: list[tuple[Any, ...]]) -> tuple[RowDiff, ...]:
        """The stored rows of `groups` that the log does not derive, and the reverse, each
        as verify's view comparison reports it (`store.audit`): same problem words."""
        con = self._vault.con
        names = [c for c, _t in VIEW_COLUMNS[table]]
        listed = ", ".join(names)
        where = " OR ".join(f"(seq >= {g * GROUP} AND seq < {(g + 1) * GROUP})" for g in sorted(groups))
        scratch = f"m_{table}"
        con.execute(f"DROP TABLE IF EXISTS temp.{scratch}")
        con.execute(view_ddl(table, scratch, temporary=True))
        try:
            if rows:
                insert_rows(con, table, rows, target=f"temp.{scratch}")
            found = con.execute(
                f"SELECT {listed}, sum(side) FROM (SELECT {listed}, 1 AS side FROM {table} WHERE {where} "  # noqa: S608
                f"UNION ALL SELECT {listed}, -1 AS side FROM temp.{scratch}) "
                f"GROUP BY {listed} HAVING sum(side) <> 0 ORDER BY {listed}"
            ).fetchall()
        finally:
            con.execute(f"DROP TABLE IF EXISTS temp.{scratch}")
        out: list[RowDiff] = []
        for r in found:
            problem = "view_row_altered_or_extra" if r[-1] > 0 else "view_row_missing_or_altered"
            values = dict(zip(names, r[:-1], strict=True))
            out += [RowDiff(problem, int(r[0]), values)] * min(abs(int(r[-1])), 100)
        # as verify lists them: stored rows the log does not derive first, then the missing
        return tuple(sorted(out, key=lambda d: d.problem != "view_row_altered_or_extra"))

    def _shadow(self, table: str, where: str, rows: list[tuple[Any, ...]]) -> None:
        """A session-local copy shadows the stored table; the file stays as it was found."""
        con = self._vault.con
        self._shadowed.add(table)
        con.execute(f"CREATE OR REPLACE TEMP TABLE {table} AS SELECT * FROM main.{table}")  # noqa: S608
        con.execute(f"DELETE FROM temp.main.{table} WHERE {where}")  # noqa: S608
        if rows:
            insert_rows(con, table, rows, target=f"temp.main.{table}")

    def _replace(
        self, table: str, groups: set[int], rows: list[tuple[Any, ...]], diffs: tuple[RowDiff, ...] = ()
    ) -> None:
        con = self._vault.con
        where = " OR ".join(f"(seq >= {g * GROUP} AND seq < {(g + 1) * GROUP})" for g in sorted(groups))
        if self._vault.read_only:
            self._shadow(table, where, rows)
            return
        own = not self._vault.in_batch  # inside a batch, its transaction holds the mend
        if own:
            con.execute("BEGIN TRANSACTION")
        try:
            con.execute(f"DELETE FROM {table} WHERE {where}")  # noqa: S608
            if rows:
                insert_rows(con, table, rows)
            if diffs:
                size = self._vault.size()
                con.executemany(
                    "INSERT INTO view_mends VALUES (?, ?, ?, ?, ?)",
                    [
                        [size, table, d.problem, d.seq, json.dumps(d.values, default=str, sort_keys=True)]
                        for d in diffs
                    ],
                )
            if own:
                con.execute("COMMIT")
        except BaseException:
            if own:
                con.execute("ROLLBACK")
            raise

    def _save_cache(self, digests: Digests) -> None:
        if self._vault.read_only or self._vault.in_batch:
            return
        con = self._vault.con
        con.execute("BEGIN TRANSACTION")
        try:
            con.execute("DELETE FROM view_groups")
            _insert_groups(con, digests)
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise

    # -- the writer's side -------------------------------------------------------------

    def before_append(self, start: int, tables: Iterable[str] | None = None) -> Digests:
        """The digests a batch starting at `start` may sign over: the trusted ones, with the
        rows of the group it appends to checked (and mended) first in `tables` (None: all).
        A vault whose head predates the commitment has every table derived from the log once.

        `Vault.batch` asks first with no tables, then again, just before its rows are
        inserted, with the tables it writes: only their current group is hashed again
        after the append (`after_append`); every other table's signed digests are carried
        over as they were checked, so an edit there is never signed over."""
        trusted = self.trusted()
        if trusted is None:
            trusted = {}
            for table in VIEW_COLUMNS:
                current = table_digests(self._vault.con, table)
                self._mend(table, None, None, current)
                trusted[table] = table_digests(self._vault.con, table)
            self._trusted = trusted
            self._checked = set(VIEW_COLUMNS)
            return trusted
        g = start // GROUP
        for table in VIEW_COLUMNS if tables is None else sorted(set(tables)):
            now = table_digests(self._vault.con, table, g * GROUP, start).get(g)
            if now != trusted[table].get(g):
                self._mend(table, {g}, trusted[table], {g: now} if now else {})
        return trusted

    def after_append(
        self, trusted: Digests, start: int, size: int, tables: Iterable[str] | None = None
    ) -> Digests:
        """`trusted` with the groups entries `start`..`size-1` touched hashed again (inside
        the batch's transaction), written to the cache; what the new checkpoint signs.

        `tables`: the tables the batch added rows to (None: all). Any other table's rows
        are those `before_append` checked, so its trusted digests stand: a hold or a purge
        no longer re-hashes the current group of the passage and digest tables."""
        con = self._vault.con
        lo = (start // GROUP) * GROUP
        out: Digests = {t: dict(gs) for t, gs in trusted.items()}
        touched = range(start // GROUP, (size - 1) // GROUP + 1)
        rehash = set(VIEW_COLUMNS) if tables is None else set(tables)
        for table in VIEW_COLUMNS:
            if table not in rehash:
                out.setdefault(table, {})
                continue
            groups = out.setdefault(table, {})
            for g in touched:
                groups.pop(g, None)
            groups.update(table_digests(con, table, lo, size))
        con.execute(f"DELETE FROM view_groups WHERE grp >= {start // GROUP}")  # noqa: S608
        _insert_groups(
            con, {t: {g: d for g, d in gs.items() if g >= start // GROUP} for t, gs in out.items()}
        )
        return out

    def committed(self, digests: Digests, size: int, root: bytes) -> None:
        """After the batch committed: what it signed is what is trusted now."""
        self._at, self._trusted = (size, root), digests


def _hash_aside(
    cursor: duckdb.DuckDBPyConnection, wanted: list[str], trusted: Digests, between: Callable[[], bool]
) -> Digests | None:
    """The group digests of each of `wanted` up to its last trusted group, one group per
    query with `between()` asked before each (None: it said stop); a table with rows past
    that group is left out, since it differs from the trusted digests already."""
    seen: Digests = {}
    for table in wanted:
        groups: dict[int, str] = {}
        last = max(trusted[table], default=-1)
        for g in range(last + 1):
            if not between():
                return None
            groups.update(table_digests(cursor, table, g * GROUP, (g + 1) * GROUP))
        # rows past the last trusted group make the table differ
        if not table_digests(cursor, table, (last + 1) * GROUP):
            seen[table] = groups
    return seen


def _differing(a: dict[int, str], b: dict[int, str]) -> set[int]:
    """The groups whose digests differ between `a` and `b` (present in one only included)."""
    return {g for g in set(a) | set(b) if a.get(g) != b.get(g)}


def _differing_derived(
    table: str, current: dict[int, str], derived: dict[int, list[tuple[Any, ...]]]
) -> set[int]:
    """The groups whose stored digest is not the digest of the rows the log derives for them."""
    return {
        g for g in set(current) | set(derived) if current.get(g) != _rows_digest_of(table, derived.get(g))
    }


def _rows_digest_of(table: str, rows: list[tuple[Any, ...]] | None) -> str | None:
    if not rows:
        return None
    return next(iter(_rows_digests(table, rows).values()))


def _insert_groups(con: duckdb.DuckDBPyConnection, digests: Mapping[str, Mapping[int, str]]) -> None:
    items = [[t, g, d] for t, gs in digests.items() for g, d in gs.items()]
    if items:
        con.executemany("INSERT INTO view_groups VALUES (?, ?, ?)", items)
