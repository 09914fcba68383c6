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
* A **reader** calls `ViewGuard.require(table, ...)` (`store.viewguard`) before a decision reads a table: the
  table's rows are hashed per group and compared with the signed digests.  A group that
  disagrees is derived again from its entries (each checked against its stored leaf)
  and, when the derived rows hash as signed, the table is mended from them (in place
  when the vault is writable, in a session-local shadow table when it is read-only) and
  a warning says so (`store.viewmend`); otherwise the vault is refused as damaged.
* A vault whose head checkpoint predates the line has no commitment to check: the
  required tables are derived from the log entries that produce them (selected by kind
  column or by their own bytes) and compared, at the cost of one pass over those entries.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import duckdb

from store.entries import ANSWER_KINDS, EntryKind
from store.guarded import extension_value
from store.rowtables import insert_values
from store.schema import VIEW_COLUMNS
from store.vaultfile import threads_setting

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
    "commitment",
    "differing",
    "differing_derived",
    "extension_line",
    "insert_groups",
    "recorded_mends",
    "rows_digest_of",
    "signed_commitment",
    "span",
    "table_digests",
    "tables_digests",
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
    and its text, or '-' for NULL, joined by ','.

    Spelled out per column: one `list_transform` lambda over the columns gives the same
    text and binds faster, but builds a list per row, which made a large group's digest
    slower and ingest with it (docs/benchmarks.md)."""
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
    return tables_digests(con, [table], lo, hi)[table]


def tables_digests(
    con: duckdb.DuckDBPyConnection,
    tables: Iterable[str],
    lo: int = 0,
    hi: int | None = None,
    *,
    held: bool = False,
) -> Digests:
    """`table_digests` of each of `tables`, with the groups that have rows found for all
    of them in one query (a statement's fixed cost is most of what asking costs on a
    small vault); each group is then hashed by a query of its own, as there.

    When `lo`..`hi-1` lies in one group and there is one table, or the caller knows
    each table has rows there (`held`), that group is hashed without asking first: the
    hash of no rows is NULL, which leaves the group out as not finding it did, so the
    answer is the same either way and `held` only says which way asks less."""
    names = list(dict.fromkeys(tables))
    out: Digests = {t: {} for t in names}
    if not names:
        return out
    upper = (1 << 62) if hi is None else int(hi)
    if hi is not None and 0 <= int(lo) < upper and int(lo) // GROUP == (upper - 1) // GROUP:
        if held or len(names) == 1:
            for table in names:
                rows = con.execute(_group_sql(table), [int(lo), upper]).fetchall()
                if rows and rows[0][0] is not None:
                    out[table][int(lo) // GROUP] = str(rows[0][0])
            return out
    found = con.execute(
        " UNION ALL ".join(
            f"SELECT DISTINCT {i} AS v, seq // {GROUP} AS g FROM {table} "  # noqa: S608 - fixed names
            f"WHERE seq >= {int(lo)} AND seq < {upper}"
            for i, table in enumerate(names)
        )
    ).fetchall()
    for v, g in sorted((int(v), int(g)) for v, g in found):
        table = names[v]
        start, end = max(g * GROUP, int(lo)), min((g + 1) * GROUP, upper)
        rows = con.execute(_group_sql(table), [start, end]).fetchall()  # fetchone leaves the result open
        if rows and rows[0][0] is not None:
            out[table][g] = str(rows[0][0])
    return out


def _group_sql(table: str) -> str:
    return (
        "SELECT sha256(string_agg(rh, '' ORDER BY rh)) FROM ("  # noqa: S608 - fixed names
        f"SELECT sha256({_row_text(table)}) AS rh FROM {table} WHERE seq >= ? AND seq < ?)"
    )


_SCRATCH: dict[int, duckdb.DuckDBPyConnection] = {}


def _scratch() -> duckdb.DuckDBPyConnection:
    """One in-memory DuckDB per process for hashing rows held in Python: making a DuckDB
    instance costs more than hashing a group's rows, and each use takes a cursor (a
    connection of its own to it), so uses in several threads never share one.  Keyed
    by process id: a forked child makes its own rather than use its parent's threads."""
    pid = os.getpid()
    con = _SCRATCH.get(pid)
    if con is None:
        _SCRATCH.clear()
        con = _SCRATCH[pid] = duckdb.connect(":memory:")
        threads = threads_setting()
        if threads is not None:
            con.execute(f"SET threads = {threads}")
    return con


def _rows_digests(table: str, rows: Iterable[tuple[Any, ...]]) -> dict[int, str]:
    """`table_digests` of rows held in Python (derived from the log), computed by DuckDB
    on the same text so both sides hash alike."""
    con = _scratch().cursor()  # a connection of its own: its temp table is private to it
    try:
        con.execute(f"CREATE TEMP TABLE {table} ({', '.join(f'{c} {t}' for c, t in VIEW_COLUMNS[table])})")
        items = list(rows)
        if items:
            marks = ", ".join("?" for _ in VIEW_COLUMNS[table])
            insert_values(con, f"INSERT INTO {table}", f"({marks})", items)
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


def span(groups: Iterable[int]) -> str:
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


def differing(a: dict[int, str], b: dict[int, str]) -> set[int]:
    """The groups whose digests differ between `a` and `b` (present in one only included)."""
    return {g for g in set(a) | set(b) if a.get(g) != b.get(g)}


def differing_derived(
    table: str, current: dict[int, str], derived: dict[int, list[tuple[Any, ...]]]
) -> set[int]:
    """The groups whose stored digest is not the digest of the rows the log derives for them."""
    return {g for g in set(current) | set(derived) if current.get(g) != rows_digest_of(table, derived.get(g))}


def rows_digest_of(table: str, rows: list[tuple[Any, ...]] | None) -> str | None:
    if not rows:
        return None
    return next(iter(_rows_digests(table, rows).values()))


def insert_groups(con: duckdb.DuckDBPyConnection, digests: Mapping[str, Mapping[int, str]]) -> None:
    items = [[t, g, d] for t, gs in digests.items() for g, d in gs.items()]
    if items:
        insert_values(con, "INSERT INTO view_groups", "(?, ?, ?)", items)
