"""The keyrings come from the roster statements alone, before the other statements are
checked: what their bytes say decides which is which, never the row's `kind` column."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.dataset.conftest import Exported
from tracer.engine import dataset_verify
from tracer.engine.dataset_verify import verify_dataset


def _relabel(root: Path, kind: str, to: str) -> int:
    """Write the first mid-log row of `kind` (after entry 10) as a `to` row; its seq."""
    path = root / "log.parquet"
    table = pq.read_table(path)
    rows = table.to_pylist()
    row = next(r for r in rows if r["kind"] == kind and int(r["seq"]) > 10)
    row["kind"] = to
    pq.write_table(
        pa.Table.from_pylist(rows, schema=table.schema), path, row_group_size=64, compression="zstd"
    )
    return int(row["seq"])


def test_a_roster_row_relabelled_still_folds_its_key(exported: Exported, tmp_path: Path) -> None:
    """A key_add whose row says `revision` is a kind mismatch, and still adds its key: the
    manifests it signs after are no signature findings (the keyring the workers got)."""
    root = tmp_path / "ds"
    shutil.copytree(exported.dataset, root)
    seq = _relabel(root, "key_add", "revision")
    found = [f.to_json() for f in verify_dataset(root).findings]
    assert ("entry_kind_mismatch", seq) in {(f["kind"], f["seq"]) for f in found}
    before = {(f["kind"], f["seq"]) for f in exported.verify_json["findings"]}
    new = {(f["kind"], f["seq"]) for f in found} - before
    assert {(k, s) for k, s in new if not k.startswith("dataset_")} == {("entry_kind_mismatch", seq)}
    assert not any(f["kind"] == "signature_invalid" for f in found)


def test_a_statement_row_relabelled_as_a_roster_kind_changes_nothing(
    exported: Exported, tmp_path: Path
) -> None:
    """A revision whose row says `key_add` is checked with the other statements (its bytes
    say revision) against the keyring in force there."""
    root = tmp_path / "ds"
    shutil.copytree(exported.dataset, root)
    seq = _relabel(root, "revision", "key_add")
    found = {(f.kind, f.seq) for f in verify_dataset(root).findings}
    assert ("entry_kind_mismatch", seq) in found
    assert not any(k == "signature_invalid" for k, _s in found)


def test_a_statement_that_changed_the_keyring_late_stops_verification(
    exported: Exported, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Were a statement left for after the workers started to change the keyring, the
    keyrings they were given would be wrong: verification stops rather than report."""
    monkeypatch.setattr(dataset_verify, "_entry_kind", lambda data: "")
    with pytest.raises(RuntimeError, match="changed the keyring"):
        verify_dataset(exported.dataset)


def test_answer_refs_read_at_once_are_those_read_one_by_one(exported: Exported) -> None:
    """A derived passage's source answer, from the one query after the facts are kept,
    is what the per-answer query gives (first manifest by seq; unknown ids none)."""
    from store.dataset import DatasetReader

    seen: list[DatasetReader] = []
    original = DatasetReader.end_facts

    def keep(self: DatasetReader, stored: pa.Table) -> None:
        original(self, stored)
        seen.append(self)
        ids = [
            str(r[0])
            for r in self.con.execute("SELECT DISTINCT answer_id FROM temp.r_answer_refs").fetchall()
        ]
        assert ids
        self._facts_kept = False
        one_by_one = {a: self.answer_text_ref(a) for a in [*ids, "no-such-answer"]}
        self._facts_kept = True
        assert {a: self.answer_text_ref(a) for a in one_by_one} == one_by_one

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(DatasetReader, "end_facts", keep)
        found = [f.to_json() for f in verify_dataset(exported.dataset).findings]
    assert seen and found == exported.verify_json["findings"]
