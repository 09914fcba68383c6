"""`rowtables.insert_values`, the one way a few rows go into DuckDB with plain
parameters: the rows a statement per row would have inserted, in order, at every chunk
boundary, with `OR IGNORE` keeping the first of two rows that collide."""

from __future__ import annotations

import duckdb
import pytest

from store.rowtables import _VALUES_CHUNK, insert_values


def _table() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute("CREATE TABLE t (k VARCHAR NOT NULL, n BIGINT, x DOUBLE, b BLOB, PRIMARY KEY (k))")
    return con


def _rows(n: int) -> list[tuple[object, ...]]:
    return [
        (f"k{i}\u202e'); --", None if i % 3 else i, i / 7 if i % 2 else i, bytes([i % 256]) * 3)
        for i in range(n)
    ]


@pytest.mark.parametrize(
    "n", [0, 1, _VALUES_CHUNK - 1, _VALUES_CHUNK, _VALUES_CHUNK + 1, 3 * _VALUES_CHUNK + 5]
)
def test_the_rows_one_statement_per_row_would_insert(n: int) -> None:
    ours, each = _table(), _table()
    rows = _rows(n)
    insert_values(ours, "INSERT INTO t (k, n, x, b)", "(?, ?, CAST(? AS DOUBLE), ?)", rows)
    for r in rows:
        each.execute("INSERT INTO t (k, n, x, b) VALUES (?, ?, CAST(? AS DOUBLE), ?)", list(r))
    got = ours.execute("SELECT * FROM t ORDER BY rowid").fetchall()
    assert got == each.execute("SELECT * FROM t ORDER BY rowid").fetchall()
    assert len(got) == n


def test_or_ignore_keeps_the_first_of_two_colliding_rows_in_one_statement() -> None:
    con = _table()
    insert_values(con, "INSERT OR IGNORE INTO t", "(?, ?, ?, ?)", [("a", 1, 1.0, b"1"), ("a", 2, 2.0, b"2")])
    assert con.execute("SELECT k, n FROM t").fetchall() == [("a", 1)]


def test_a_collision_without_or_ignore_inserts_nothing_of_the_statement() -> None:
    con = _table()
    with pytest.raises(duckdb.ConstraintException):
        insert_values(con, "INSERT INTO t", "(?, ?, ?, ?)", [("a", 1, 1.0, b"1"), ("a", 2, 2.0, b"2")])
    assert con.execute("SELECT count(*) FROM t").fetchall() == [(0,)]
