"""View rows as Arrow tables, and their one way into DuckDB.

Verification derives view rows in worker processes; building the Arrow table there,
rather than pickling row tuples back, moves the per-value conversion off the process
that talks to DuckDB and sends compact columns instead of millions of small objects.
Building a table needs no database connection (workers never import DuckDB); inserting
one is a bulk Arrow insert, because per-row INSERTs are far too slow on a large vault.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from itertools import accumulate
from typing import TYPE_CHECKING, Any

from store.schema import VIEW_COLUMNS

if TYPE_CHECKING:
    import duckdb
    import pyarrow as pa

__all__ = [
    "RowsTable",
    "exact_array",
    "insert_rows",
    "insert_table",
    "insert_values",
    "rows_table",
    "string_array",
]


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
    exact = exact_array(values, want)
    if exact is not None:
        return exact
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


#: the Python type each Arrow type is built from by `exact_array`, and the `array`
#: typecode of its values buffer (strings are offsets and bytes, booleans bits)
_EXACT: dict[str, tuple[type, str]] = {
    "string": (str, ""),
    "int64": (int, "q"),
    "int32": (int, "i"),
    "double": (float, "d"),
    "bool": (bool, ""),
}


def exact_array(values: Sequence[Any], want: pa.DataType) -> pa.Array | None:
    """`values` as an Arrow array of `want` built from its buffers, when every value is
    None or exactly the Python type `want` is made from (str or a subclass, int in range,
    float, bool):
    the array `pa.array` would give for them, without `pa.array`'s question whether
    `values` is a pandas object, which imports pandas (about 0.2 CPU-s a process).  None
    when a value is of another type, out of range or not encodable: the caller's
    `pa.array` then decides, as before."""
    import pyarrow as pa

    kind = _EXACT.get(str(want))
    if kind is None:
        return None
    py, code = kind
    present = [v for v in values if v is not None]
    if not _all_of(present, py):
        return None
    nulls = len(values) - len(present)
    valid = _bits([v is not None for v in values]) if nulls else None
    try:
        buffers = _values_buffers(values, py, code)
    except (UnicodeEncodeError, OverflowError):
        return None
    return pa.Array.from_buffers(want, len(values), [valid, *buffers], null_count=nulls)


def _all_of(present: list[Any], py: type) -> bool:
    """Every value exactly of `py` (a str subclass, an enum of words, is its characters,
    as `pa.array` reads it)."""
    if py is str:
        return all(isinstance(v, str) for v in present)
    return all(type(v) is py for v in present)


def _values_buffers(values: Sequence[Any], py: type, code: str) -> list[pa.Buffer]:
    """The buffers after the validity bitmap: offsets and bytes of strings, bits of
    booleans, else the values (a null's slot holds zero)."""
    import pyarrow as pa

    if py is str:
        data = [v.encode("utf-8") if v is not None else b"" for v in values]
        offsets = array("i", [0, *accumulate(len(d) for d in data)])
        return [pa.py_buffer(offsets), pa.py_buffer(b"".join(data))]
    if py is bool:
        return [_bits([bool(v) for v in values])]
    zero = 0.0 if py is float else 0
    return [pa.py_buffer(array(code, [zero if v is None else v for v in values]))]


def string_array(values: Sequence[Any]) -> pa.Array:
    """`pa.array(values, pa.string())`, built from buffers when the values are all str
    or None (`exact_array`)."""
    import pyarrow as pa

    exact = exact_array(values, pa.string())
    return exact if exact is not None else pa.array(values, pa.string())


def _bits(flags: list[bool]) -> pa.Buffer:
    """Arrow's bit-packed layout (least significant bit first) of `flags`."""
    import pyarrow as pa

    packed = bytes(sum(1 << j for j, f in enumerate(flags[i : i + 8]) if f) for i in range(0, len(flags), 8))
    return pa.py_buffer(packed)


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
    """Insert rows built by `rows_table` (possibly in another process).

    Typed rows go in by position through the relation API, as `INSERT ... SELECT *`
    would put them: registering and unregistering a name for them costs more than the
    insert itself on the few rows of a small vault."""
    if rows.typed:
        con.from_arrow(rows.table).insert_into(target or table)
        return
    _typed_sql, cast_sql = _insert_sql(table, target or table)
    con.register("_new_rows", rows.table)
    try:
        con.execute(cast_sql)
    finally:
        con.unregister("_new_rows")


#: rows per statement of `insert_values` (its parameters stay in the low thousands)
_VALUES_CHUNK = 128


def insert_values(con: duckdb.DuckDBPyConnection, into: str, row: str, rows: Sequence[Sequence[Any]]) -> None:
    """INSERT a few rows with plain parameters: `into` is `INSERT INTO t (cols)`, `row`
    one row's `(?, ...)` (casts included), `rows` the values.

    One statement per `_VALUES_CHUNK` rows: DuckDB's `executemany` runs the statement
    once per row, which made an append's view-group digests cost several times what
    one statement does (docs/benchmarks.md).  For many rows, `insert_rows` (Arrow)."""
    for at in range(0, len(rows), _VALUES_CHUNK):
        chunk = rows[at : at + _VALUES_CHUNK]
        con.execute(f"{into} VALUES {', '.join([row] * len(chunk))}", [v for r in chunk for v in r])
