"""The view rows of every batch reach the verdict queries whole, however Arrow typed them.

`DatasetReader.add_facts` holds each batch's rows and `end_facts` inserts them a table at
a time: batches whose columns Arrow inferred differently (a column all NULL in one batch)
must still all arrive, in order."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pytest

from store import dataset as ds
from store.rowtables import RowsTable
from tests.dataset.conftest import Exported
from tracer.engine.dataset_check import FACT_COLUMNS
from tracer.engine.jsonshapes import FindingJSON


def _answers(seqs: range, collection: pa.Array) -> RowsTable:
    n = len(seqs)
    return RowsTable(
        pa.table(
            {
                "seq": pa.array(list(seqs), pa.int64()),
                "answer_id": pa.array([f"ans-{s}" for s in seqs]),
                "answer_sha256": pa.array([f"{s:064x}" for s in seqs]),
                "collection": collection if len(collection) == n else pa.nulls(n),
            }
        ),
        False,
    )


def test_batches_of_two_shapes_all_reach_the_kept_facts(exported: Exported) -> None:
    with ds.DatasetReader(exported.dataset) as reader:
        reader.begin_facts({}, FACT_COLUMNS)
        reader.add_facts({"v_answers": _answers(range(0, 3), pa.array(["hr"] * 3))})
        reader.add_facts({"v_answers": _answers(range(3, 5), pa.nulls(2))})  # NULL-typed column
        reader.add_facts({"v_answers": _answers(range(5, 8), pa.array(["hr", None, "legal"]))})
        reader.add_facts({"v_answers": _answers(range(8, 8), pa.nulls(0))})  # an empty batch
        reader.end_facts(pa.table({"digest": [], "collection": [], "dk_id": []}, schema=_blobs()))
        rows = reader.con.execute(
            "SELECT seq, answer_id, collection FROM temp.r_answer_refs ORDER BY seq"
        ).fetchall()
    assert [r[0] for r in rows] == list(range(8))
    assert [r[2] for r in rows] == ["hr", "hr", "hr", None, None, "hr", None, "legal"]


def _blobs() -> pa.Schema:
    return pa.schema([("digest", pa.string()), ("collection", pa.string()), ("dk_id", pa.string())])


def test_facts_kept_between_batches_are_the_facts_kept_at_the_end(exported: Exported) -> None:
    """`keep_held` between batches, as the verifier calls it while the engine checks,
    keeps what one `end_facts` over every batch keeps: a passage's reference joins the
    passage row of its own entry, and the view tables start empty again after each keep."""
    held = [_answers(range(0, 3), pa.array(["hr"] * 3)), _answers(range(3, 6), pa.array(["legal"] * 3))]

    def kept(keep_between: bool) -> list[tuple[object, ...]]:
        with ds.DatasetReader(exported.dataset) as reader:
            reader.begin_facts({}, FACT_COLUMNS)
            for part in held:
                reader.add_facts({"v_answers": part})
                if keep_between:
                    assert reader.held_rows == part.num_rows
                    reader.keep_held()
                    assert reader.held_rows == 0
                    assert reader.con.execute("SELECT count(*) FROM temp.r_v_answers").fetchall() == [(0,)]
            reader.end_facts(pa.table({"digest": [], "collection": [], "dk_id": []}, schema=_blobs()))
            return reader.con.execute("SELECT * FROM temp.r_answer_refs ORDER BY seq").fetchall()

    assert kept(True) == kept(False)
    assert len(kept(True)) == 6


def test_a_verification_that_keeps_after_every_batch_finds_what_tracer_verify_finds(
    exported: Exported, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The whole verification with facts kept after every batch (the references, digests
    and duplicate answers all read kept facts), on the export and on one whose references
    file lost a row: the same findings as with one keep at the end."""
    from tests.dataset.test_tamper_matrix import CASES
    from tracer.engine import dataset_verify
    from tracer.engine.dataset_pool import PoolChecks

    root = tmp_path / "ds"
    shutil.copytree(exported.dataset, root)
    tamper, kind, _seq = CASES["edited reference"]
    tamper(root)

    def findings(path: Path, keep_rows: int) -> list[FindingJSON]:
        monkeypatch.setattr(dataset_verify, "_KEEP_ROWS", keep_rows)
        with PoolChecks(0, workers=0, batch_rows=16) as checks:
            return [f.to_json() for f in dataset_verify.verify_dataset(path, "duckdb", checks).findings]

    assert findings(exported.dataset, 1) == exported.verify_json["findings"]
    tampered = findings(root, 1)
    assert tampered == findings(root, 10**9)
    assert any(f["kind"] == kind for f in tampered)
