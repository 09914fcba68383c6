"""`exact_array` builds, from buffers, the very array `pa.array` gives for the same
values, and declines (None) whenever it could differ, so the callers' `pa.array`
decides as before."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

import pyarrow as pa
import pytest

from store.rowtables import exact_array, rows_table, string_array


class _Word(StrEnum):
    A = "alpha"


BUILT: list[tuple[list[Any], pa.DataType]] = [
    (["a", None, "é", "", "日本"], pa.string()),
    ([_Word.A, None, "x"], pa.string()),
    ([None, None], pa.string()),
    ([], pa.string()),
    ([1, None, -3, 2**63 - 1, -(2**63)], pa.int64()),
    ([1, -5, None, 2**31 - 1, -(2**31)], pa.int32()),
    ([1.5, None, -0.0, float("inf")], pa.float64()),
    ([True, None, False, True, True, False, False, True, True, False], pa.bool_()),
    ([None] * 17, pa.bool_()),
]

DECLINED: list[tuple[list[Any], pa.DataType]] = [
    ([2**31], pa.int32()),
    ([2**63], pa.int64()),
    (["\ud800"], pa.string()),
    ([b"bytes"], pa.string()),
    ([True], pa.int64()),
    ([1, 2.0], pa.float64()),
    ([1], pa.string()),
    (["x"], pa.binary()),
]


@pytest.mark.parametrize(("values", "want"), BUILT)
def test_built_from_buffers_equals_pa_array(values: list[Any], want: pa.DataType) -> None:
    built = exact_array(values, want)
    assert built is not None
    built.validate(full=True)
    assert built.equals(pa.array(values, want))
    assert built.null_count == sum(v is None for v in values)


@pytest.mark.parametrize(("values", "want"), DECLINED)
def test_declined_where_it_could_differ(values: list[Any], want: pa.DataType) -> None:
    assert exact_array(values, want) is None


def test_string_array_falls_back_to_pa_array() -> None:
    assert string_array(["a", None]).equals(pa.array(["a", None], pa.string()))
    assert string_array([b"raw"]).equals(pa.array([b"raw"], pa.string()))


def test_rows_table_is_typed_as_before() -> None:
    rows = [(i, f"run{i}", None, "kind", *([None] * 7), i, 0, None, None) for i in range(20)]
    table = rows_table("v_answers", rows)
    assert table.typed
    assert table.table.column("n_passages").type == pa.int32()
    assert table.table.column("seq").to_pylist() == list(range(20))
