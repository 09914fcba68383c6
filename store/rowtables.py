"""View rows as Arrow tables, and their one way into DuckDB.

Verification derives view rows in worker processes; building the Arrow table there,
rather than pickling row tuples back, moves the per-value conversion off the process
that talks to DuckDB and sends compact columns instead of millions of small objects.
Building a table needs no database connection (workers never import DuckDB); inserting
one is a bulk Arrow insert, because per-row INSERTs are far too slow on a large vault.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from store.schema import VIEW_COLUMNS

if TYPE_CHECKING:
    import duckdb
    import pyarrow as pa

__all__ = ["RowsTable", "insert_rows", "insert_table", "rows_table"]


@cache
def _arrow_types() -> dict[str, pa.DataType]:
    """The view types Arrow holds exactly (imported on first use: a command that appends
    one small batch never loads Arrow, `store.batch.SMALL_BATCH`)."""
    import pyarrow as pa

    return {
        "VARCHAR": pa.string(),
        "BIGINT": pa.int64(),
        "INTEGER": pa.int32(),
        "DOUBLE": pa.float64(),
        "BOOLEAN": pa.bool_(),
    }


@dataclass(frozen=True)
class RowsTable:
    """Rows of one view; `typed` when every column already has the view's own type
    (inserted as is), otherwise Arrow inferred the types and the insert CASTs."""

    table: pa.Table
    typed: bool

    @property
    def num_rows(self) -> int:
        return int(self.table.num_rows)


def _typed_column(values: Sequence[Any], sql_type: str) -> pa.Array | None:
    """`values` as an Arrow array of exactly `sql_type`, or None when that is not the
    value DuckDB's CAST of Arrow's inferred array would give (then the CAST path runs)."""
    import pyarrow as pa

    want = _arrow_types().get(sql_type)
    if want is None:
        return None
    try:
        # inferred, not forced: a forced string type would also take bytes, which
        # DuckDB's CAST of a BLOB renders differently
        arr = pa.array(values)
        if arr.type == want:
            return arr
        if arr.type == pa.null() or (want == pa.int32() and arr.type == pa.int64()):
            # all None, or ints: exact (out of int32 range raises, as DuckDB's CAST does)
            return pa.array(values, want)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        return None
    return None


def rows_table(table: str, rows: list[tuple[Any, ...]]) -> RowsTable:
    """`rows` of view `table` as Arrow columns.

    Columns are built with the view's own types when the values allow it exactly (str,
    int, float, bool or None as the schema says), so DuckDB reads them as they are;
    otherwise Arrow infers the types and DuckDB CASTs on insert.
    """
    import pyarrow as pa

    cols = VIEW_COLUMNS[table]
    columns = list(zip(*rows, strict=True)) if rows else [() for _c in cols]
    arrays = [_typed_column(values, t) for values, (_n, t) in zip(columns, cols, strict=True)]
    if all(a is not None for a in arrays):
        return RowsTable(pa.Table.from_arrays(arrays, names=[c for c, _t in cols]), True)
    inferred = pa.table({name: list(values) for values, (name, _t) in zip(columns, cols, strict=True)})
    return RowsTable(inferred, False)


#: Arrow types that DuckDB reads as exactly the column's type, so no CAST is needed
_INSERTS: dict[tuple[str, str], tuple[str, str]] = {}


def _insert_sql(table: str, target: str) -> tuple[str, str]:
    """(typed INSERT, INSERT with CASTs) for `table`'s rows into `target`, built once."""
    sql = _INSERTS.get((table, target))
    if sql is None:
        cols = VIEW_COLUMNS[table]
        names = ", ".join(c for c, _t in cols)
        casts = ", ".join(f"CAST({c} AS {t})" for c, t in cols)
        sql = (
            f"INSERT INTO {target} ({names}) SELECT * FROM _new_rows",  # noqa: S608
            f"INSERT INTO {target} ({names}) SELECT {casts} FROM _new_rows",  # noqa: S608
        )
        if len(_INSERTS) < 256:  # targets are fixed names; bound it anyway
            _INSERTS[(table, target)] = sql
    return sql


def insert_rows(
    con: duckdb.DuckDBPyConnection,
    table: str,
    rows: list[tuple[Any, ...]],
    target: str | None = None,
) -> None:
    """Bulk insert through Arrow (`rows_table`), in the caller's transaction."""
    insert_table(con, table, rows_table(table, rows), target)


def insert_table(
    con: duckdb.DuckDBPyConnection, table: str, rows: RowsTable, target: str | None = None
) -> None:
    """Insert rows built by `rows_table` (possibly in another process)."""
    typed_sql, cast_sql = _insert_sql(table, target or table)
    con.register("_new_rows", rows.table)
    try:
        con.execute(typed_sql if rows.typed else cast_sql)
    finally:
        con.unregister("_new_rows")
