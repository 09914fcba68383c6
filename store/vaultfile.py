"""Opening the vault's one DuckDB file: the connection, its limits, and the table check.

A dropped or altered table is named once, at open, instead of failing later in the
middle of a query; a view table added since the vault was made is created and derived
from the log (views are a cache of the log, `store.views`).
"""

from __future__ import annotations

import itertools
import os
import re
from pathlib import Path
from typing import Any

import duckdb

from store.entries import LogEntry
from store.errors import VaultDamagedError, VaultError, VaultInUseError
from store.rowtables import insert_rows
from store.schema import RAW_DDL, VIEW_COLUMNS, VIEW_INDEXES, view_ddl
from store.views import Rows, derive

__all__ = [
    "BASE_VIEWS",
    "MEMORY_LIMIT",
    "THREADS_VARIABLE",
    "add_views",
    "check_tables",
    "connect",
    "damaged",
    "join_wanted",
    "one",
    "threads_setting",
]

_PID = re.compile(r"\(PID (\d+)\)")
_LOCKED = re.compile(r"Could not set lock|Conflicting lock", re.IGNORECASE)
#: DuckDB's own limits: the buffer pool otherwise grows to 80 % of RAM on a large vault
#: DuckDB plans an IN list (or `= ANY(?)` of a list) longer than its
#: `dynamic_or_filter_threshold` (50) as a join that reads the whole column; a list this
#: long is still looked up in the index, so point look-ups go a chunk at a time
INDEX_CHUNK = 48
MEMORY_LIMIT = os.environ.get("TRACER_DUCKDB_MEMORY_LIMIT", "512MB")
#: threads per DuckDB connection; unset, DuckDB's own default (one per core).  Several
#: tracer processes sharing the cores (the test suite's workers, a batch of CLI calls)
#: set 1 rather than each hand every query's tasks between threads
THREADS_VARIABLE = "TRACER_DUCKDB_THREADS"


def threads_setting() -> int | None:
    """`TRACER_DUCKDB_THREADS` as a count (None when unset), read at each connect; anything
    but a whole number of at least 1 is refused, naming the variable."""
    raw = os.environ.get(THREADS_VARIABLE, "").strip()
    if not raw:
        return None
    if not (raw.isascii() and raw.isdigit()) or int(raw) < 1:
        raise VaultError(f"{THREADS_VARIABLE}={raw!r}: expected a whole number of threads, 1 or more")
    return int(raw)


def one(result: duckdb.DuckDBPyConnection) -> tuple[Any, ...] | None:
    """First row, reading the result to the end: DuckDB refuses `register` while a
    result is left open, which `fetchone` does."""
    rows = result.fetchall()
    return rows[0] if rows else None


def damaged(db: Path, text: str) -> VaultDamagedError:
    """Name the file DuckDB failed on; a WAL it cannot replay is left exactly as it was."""
    wal = db.with_name(db.name + ".wal")
    if wal.exists() and "WAL" in text:
        return VaultDamagedError(
            f"{wal}: DuckDB cannot replay the vault's write-ahead log, so the vault was not opened "
            f"(nothing was deleted or rewritten): {text}"
        )
    return VaultDamagedError(f"{db}: DuckDB could not open the file: {text}")


def connect(db: Path, read_only: bool) -> duckdb.DuckDBPyConnection:
    threads = threads_setting()
    try:
        con = duckdb.connect(str(db), read_only=read_only)
    except duckdb.IOException as exc:
        text = str(exc)
        if _LOCKED.search(text):
            pid = _PID.search(text)
            who = f"PID {pid.group(1)}" if pid else "another process"
            raise VaultInUseError(f"{db.parent}: vault is in use by {who}") from exc
        raise damaged(db, text) from exc
    except duckdb.Error as exc:
        raise damaged(db, str(exc)) from exc
    con.execute(f"SET memory_limit = '{MEMORY_LIMIT}'")
    if threads is not None:
        con.execute(f"SET threads = {threads}")
    return con


def _expected_columns() -> dict[str, list[tuple[str, str]]]:
    """table -> (column name, type), for every raw and view table the schema defines."""
    out: dict[str, list[tuple[str, str]]] = {}
    for stmt in RAW_DDL.split(";"):
        m = re.search(r"CREATE TABLE IF NOT EXISTS (\w+) \((.*)\)", stmt, re.DOTALL)
        if m:
            defs = [c.strip().split() for c in re.split(r",(?![^(]*\))", m.group(2)) if c.strip()]
            out[m.group(1)] = [(d[0], d[1].upper()) for d in defs if d[0].upper() != "PRIMARY"]
    for table, columns in VIEW_COLUMNS.items():
        out[table] = [(c, t.upper()) for c, t in columns]
    return out


def check_tables(con: duckdb.DuckDBPyConnection, db: Path) -> list[str]:
    """Every table the vault needs, with its columns: a dropped or altered table is named
    here, once, instead of failing later in the middle of a query.

    Returns the derived view tables a vault made by an earlier version lacks (views are
    rebuilt from the log, so those can be added); a missing raw table is damage."""
    try:
        # what information_schema.columns gives (a view over the same function, which
        # costs DuckDB more to plan than the function read directly)
        rows = con.execute(
            "SELECT table_name, column_name, data_type FROM duckdb_columns() "
            "WHERE schema_name = 'main' ORDER BY table_name, column_index"
        ).fetchall()
    except duckdb.Error as exc:
        raise VaultDamagedError(f"{db}: cannot read the vault's tables ({exc})") from exc
    have: dict[str, list[tuple[str, str]]] = {}
    for table, column, data_type in rows:
        have.setdefault(str(table), []).append((str(column), str(data_type).upper()))
    added: list[str] = []
    for table, cols in _expected_columns().items():
        if table not in have and table in VIEW_COLUMNS and _views_made(have):
            added.append(table)
            continue
        if table not in have:
            raise VaultDamagedError(f"{db}: the vault's table {table!r} is missing: the file was altered")
        if have[table] != cols:
            raise VaultDamagedError(
                f"{db}: the vault's table {table!r} has columns ({_spell(have[table])}), "
                f"expected ({_spell(cols)}): the file was altered"
            )
    return added


#: view tables every tracer-vault/2 file has had; one missing is damage, not an older file
BASE_VIEWS = ("v_answers", "v_passages", "v_digests", "v_revisions", "v_keys", "v_investigators")


def _spell(columns: list[tuple[str, str]]) -> str:
    return ", ".join(f"{name} {kind}" for name, kind in columns)


def _views_made(have: dict[str, list[tuple[str, str]]]) -> bool:
    return all(t in have for t in BASE_VIEWS)


def add_views(con: duckdb.DuckDBPyConnection, tables: list[str]) -> None:
    """Create view tables added since this vault was made and derive their rows from the
    log (one pass, the same `derive` verify uses), in one transaction."""
    con.execute("BEGIN TRANSACTION")
    try:
        for table in tables:
            con.execute(view_ddl(table))
        rows = _derived_rows(con, tables)
        for table in tables:
            if rows[table]:
                insert_rows(con, table, rows[table])
        for ddl in VIEW_INDEXES:
            if any(f" ON {table}(" in ddl for table in tables):
                con.execute(ddl)
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise


def _derived_rows(con: duckdb.DuckDBPyConnection, tables: list[str]) -> Rows:
    """The rows of `tables` derived from every log entry (other tables' rows dropped as
    they come, so memory holds only what is kept)."""
    rows: Rows = {t: [] for t in VIEW_COLUMNS}
    for seq, data in con.execute("SELECT seq, entry FROM log ORDER BY seq").fetchall():
        try:
            derive(int(seq), LogEntry.from_bytes(bytes(data)), rows)
        except (KeyError, TypeError, ValueError, AttributeError):
            continue  # a damaged entry: `verify` names it
        for t in VIEW_COLUMNS:
            if t not in tables:
                rows[t].clear()
    return rows


_WANT = itertools.count()


def join_wanted(con: duckdb.DuckDBPyConnection, wanted: list[str], sql: str) -> list[tuple[Any, ...]]:
    """Run `sql` with `{want}` bound to a registered one-column (`digest`) Arrow table of
    `wanted`: DuckDB joins it instead of parsing a list of thousands of literals."""
    import pyarrow as pa  # only here: a command that looks up a few rows never loads Arrow

    name = f"_want_{next(_WANT)}"
    con.register(name, pa.table({"digest": pa.array(wanted, pa.string())}))
    try:
        return con.execute(sql.format(want=name)).fetchall()
    finally:
        con.unregister(name)
