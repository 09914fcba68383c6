"""references.parquet against the references derived from the log: the positional fast
path (an untampered file) and the exact multiset diff (any other) give the same findings."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from store import dataset as ds
from tests.dataset.conftest import Exported
from tracer.engine.dataset_verify import verify_dataset

SEQ = 100  # a manifest with several references (as in the tamper matrix)

Rows = list[dict[str, Any]]


def _at(rows: Rows) -> int:
    return next(i for i, r in enumerate(rows) if r["seq"] == SEQ)


def _drop(rows: Rows) -> Rows:
    i = _at(rows)
    return rows[:i] + rows[i + 1 :]


def _duplicate(rows: Rows) -> Rows:
    i = _at(rows)
    return rows[: i + 1] + rows[i:]


def _alter(rows: Rows) -> Rows:
    rows[_at(rows)]["passage_id"] = "not-a-passage"
    return rows


def _reorder(rows: Rows) -> Rows:
    i = _at(rows)
    rows[i], rows[i + 1] = rows[i + 1], rows[i]
    return rows


#: tamper -> the reference findings it must give, as (kind, seq)
CASES: dict[str, tuple[Callable[[Rows], Rows], list[tuple[str, int]]]] = {
    "dropped": (_drop, [("dataset_reference_missing", SEQ)]),
    "duplicated": (_duplicate, [("dataset_reference_altered", SEQ)]),
    "altered": (_alter, [("dataset_reference_altered", SEQ), ("dataset_reference_missing", SEQ)]),
    # the same multiset: no reference finding, only the file's SHA-256 (signed) differs
    "reordered": (_reorder, []),
}


def _copy(exported: Exported, tmp_path: Path) -> Path:
    root = tmp_path / "ds"
    shutil.copytree(exported.dataset, root)
    return root


def _rewrite(root: Path, change: Callable[[Rows], Rows]) -> None:
    path = root / ds.REFERENCES_FILE
    table = pq.read_table(path)
    rows = change(table.to_pylist())
    assert rows != table.to_pylist()
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), path)


def _diffs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the calls of the exact (multiset) diff."""
    calls: list[int] = []
    exact = ds.DatasetReader._reference_multiset_diff

    def counted(self: ds.DatasetReader, *args: Any) -> Any:
        calls.append(1)
        return exact(self, *args)

    monkeypatch.setattr(ds.DatasetReader, "_reference_multiset_diff", counted)
    return calls


def _findings(root: Path) -> list[dict[str, Any]]:
    return [dict(f.to_json()) for f in verify_dataset(root).findings]


def _exact_only(root: Path, monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """The findings with the positional comparison never trusted (every diff exact)."""
    with monkeypatch.context() as mp:
        mp.setattr(ds, "_same_rows", lambda _stored, _derived: False)
        return _findings(root)


def _reference_findings(found: list[dict[str, Any]]) -> list[tuple[str, int]]:
    return [(f["kind"], f["seq"]) for f in found if str(f["kind"]).startswith("dataset_reference")]


def test_an_untampered_file_takes_the_positional_path(
    exported: Exported, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _diffs(monkeypatch)
    found = _findings(exported.dataset)
    assert calls == []
    assert found == exported.verify_json["findings"]
    assert _exact_only(exported.dataset, monkeypatch) == found
    assert calls == [1]


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_tampered_file_takes_the_exact_diff(
    exported: Exported, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    change, want = CASES[name]
    root = _copy(exported, tmp_path)
    _rewrite(root, change)
    calls = _diffs(monkeypatch)
    found = _findings(root)
    assert calls == [1]
    assert sorted(_reference_findings(found)) == sorted(want)
    assert any(
        f["kind"] == "dataset_file_mismatch" and f["record"].get("file") == ds.REFERENCES_FILE for f in found
    )
    assert _exact_only(root, monkeypatch) == found
