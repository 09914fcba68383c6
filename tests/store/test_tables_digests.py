"""`tables_digests` finds the groups of several tables in one query: each table's digests
must be exactly those of a query per table and group, whatever the bounds."""

from __future__ import annotations

import duckdb
import pytest

from store.rowtables import insert_rows
from store.schema import VIEW_COLUMNS, view_ddl
from store.viewcommit import GROUP, _row_text, table_digests, tables_digests

SEQS = [None, -5, 0, 3, GROUP - 1, GROUP, GROUP + 7, 3 * GROUP + 1]
TABLES = ["v_keys", "v_tags", "v_notes", "v_holds"]


def _one_by_one(con: duckdb.DuckDBPyConnection, table: str, lo: int, hi: int | None) -> dict[int, str]:
    """The digests as a query per table and group computed them."""
    upper = (1 << 62) if hi is None else hi
    groups = con.execute(
        f"SELECT DISTINCT seq // {GROUP} FROM {table} WHERE seq >= ? AND seq < ? ORDER BY 1",  # noqa: S608
        [lo, upper],
    ).fetchall()
    out: dict[int, str] = {}
    for (g,) in groups:
        start, end = max(int(g) * GROUP, lo), min((int(g) + 1) * GROUP, upper)
        rows = con.execute(
            f"SELECT sha256(string_agg(rh, '' ORDER BY rh)) FROM (SELECT sha256({_row_text(table)}) AS rh "  # noqa: S608
            f"FROM {table} WHERE seq >= ? AND seq < ?)",
            [start, end],
        ).fetchall()
        if rows and rows[0][0] is not None:
            out[int(g)] = str(rows[0][0])
    return out


@pytest.fixture
def con() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    for i, table in enumerate(TABLES):
        con.execute(view_ddl(table))
        width = len(VIEW_COLUMNS[table])
        # each table holds rows in different groups (the last none at all)
        seqs = SEQS[i::2] if i < len(TABLES) - 1 else []
        rows = [(seq, *[f"{table}-{seq}-{c}" for c in range(width - 1)]) for seq in seqs]
        if rows:
            typed = [tuple(_typed(table, r)) for r in rows]
            insert_rows(con, table, typed)
    return con


def _typed(table: str, row: tuple[object, ...]) -> list[object]:
    """Text for text columns, a number for the others."""
    out: list[object] = []
    for value, (_c, t) in zip(row, VIEW_COLUMNS[table], strict=True):
        out.append(value if t == "VARCHAR" or value is None or isinstance(value, int) else len(str(value)))
    return out


@pytest.mark.parametrize(
    ("lo", "hi"),
    [
        (0, None),
        (3, GROUP + 7),
        (GROUP, GROUP + 8),
        (GROUP - 1, 4 * GROUP),
        (5 * GROUP, None),
        (0, 4),
        (4, GROUP),
    ],
)
def test_several_tables_hash_as_one_at_a_time(
    con: duckdb.DuckDBPyConnection, lo: int, hi: int | None
) -> None:
    expected = {t: _one_by_one(con, t, lo, hi) for t in TABLES}
    assert any(expected.values()) or lo >= 5 * GROUP
    assert tables_digests(con, TABLES, lo, hi) == expected
    assert tables_digests(con, TABLES, lo, hi, held=True) == expected  # asked without finding first
    assert {t: table_digests(con, t, lo, hi) for t in TABLES} == expected
    assert tables_digests(con, [], lo, hi) == {}


def _spec_row_text(table: str) -> str:
    """The row text as `docs/security.md` and every signed `tracer-views` line define it,
    spelled out per column: each column as its length, ':' and its text, or '-' for NULL,
    joined by ','.  Written here apart from `store.viewcommit`, so a cheaper spelling of
    the query there cannot change a digest a checkpoint already signs."""
    parts = [
        f"coalesce(CAST(length(CAST({c} AS VARCHAR)) AS VARCHAR) || ':' || CAST({c} AS VARCHAR), '-')"
        for c, _t in VIEW_COLUMNS[table]
    ]
    return "concat_ws(',', " + ", ".join(parts) + ")"


#: values a row may hold: NULL, empty, separators, escapes, bidi and zero-width, astral
_HOSTILE = [None, "", ",", ":", "-", "1:a,2:b", "\x1b[31m]8;;x\x07", "\u202e\u200b", "é😀\n", "NULL"]


@pytest.mark.parametrize("table", list(VIEW_COLUMNS))
def test_the_row_text_is_the_signed_spelling_for_every_table(table: str) -> None:
    con = duckdb.connect()
    con.execute(view_ddl(table))
    columns = VIEW_COLUMNS[table]
    rows = []
    for i in range(len(_HOSTILE)):
        row: list[object] = []
        for j, (_c, t) in enumerate(columns):
            v = _HOSTILE[(i + j) % len(_HOSTILE)]
            if t == "VARCHAR":
                row.append(v)
            elif t == "BOOLEAN":
                row.append(None if v is None else (i + j) % 2 == 0)
            elif t == "DOUBLE":
                row.append(None if v is None else -0.1 * (i + j) - 1e-300)
            else:
                row.append(None if v is None and j else i - 3 if t == "BIGINT" else -(2**31) + i)
        rows.append(tuple(row))
    insert_rows(con, table, rows)
    ours = con.execute(f"SELECT {_row_text(table)} FROM {table} ORDER BY rowid").fetchall()  # noqa: S608
    spec = con.execute(f"SELECT {_spec_row_text(table)} FROM {table} ORDER BY rowid").fetchall()  # noqa: S608
    assert ours == spec and len(ours) == len(_HOSTILE)
    assert any("-" in str(r[0]).split(",") for r in spec)  # a NULL was among them
