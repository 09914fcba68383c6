"""The view rows of every batch reach the verdict queries whole, however Arrow typed them.

`DatasetReader.add_facts` holds each batch's rows and `end_facts` inserts them a table at
a time: batches whose columns Arrow inferred differently (a column all NULL in one batch)
must still all arrive, in order."""

from __future__ import annotations

import pyarrow as pa

from store import dataset as ds
from store.rowtables import RowsTable
from tests.dataset.conftest import Exported
from tracer.engine.dataset_check import FACT_COLUMNS


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
