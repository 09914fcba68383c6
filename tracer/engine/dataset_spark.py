"""`verify-dataset --engine spark`: the manifest rows checked by Apache Spark.

Spark reads `log.parquet` itself and distributes its row groups; `mapInArrow` runs the
same `tracer.engine.dataset_check.check_table` on each executor's Arrow batches, with
the keyrings the driver folded from the statement rows (small: they travel with the
closure).  Each batch's results come back as one pickled value, and
`tracer.engine.dataset_verify` puts the findings in log order exactly as it does for
DuckDB.  No scheduler of our own: Spark does the distribution.  A cluster run is the
same command under spark-submit (docs/scale.md).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pyarrow as pa

from store import dataset as ds
from tracer.engine.dataset_check import (
    BatchResult,
    CheckContext,
    check_batch,
    dump_results,
    load_results,
)

__all__ = ["spark_manifests"]


def _checks(ctx: CheckContext) -> Any:
    def checks(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            results = check_batch(pa.Table.from_batches([batch]), ctx)
            if not results.rows:
                continue
            first = pa.array([results.rows[0][0]], pa.int64())
            out = pa.array([dump_results(results)], pa.binary())
            yield pa.RecordBatch.from_arrays([first, out], names=["file_row_number", "out"])

    return checks


def spark_manifests(master: str | None = "local[2]", *, stop: bool = True) -> Any:
    """A `ManifestRows` for `verify_dataset` that runs the checks on Spark at `master`
    (None: whatever spark-submit configured); `stop=False` leaves the session running for
    the next call (tests reuse one JVM)."""
    try:
        from pyspark.sql import SparkSession
        from pyspark.sql.functions import col
    except ImportError as exc:
        raise ds.DatasetError(
            "--engine spark needs pyspark and a Java 17+ runtime: install the `spark` extra "
            "(pip install 'tracer[spark]')"
        ) from exc

    def run(
        reader: ds.DatasetReader, ctx: CheckContext, leaves: Sequence[bytes]
    ) -> Callable[[], list[BatchResult]]:
        # the executors recompute each row's leaf from the bytes they read (`leaves` stay here)
        builder = SparkSession.builder.appName("tracer-verify-dataset").config("spark.ui.enabled", "false")
        if master:
            builder = builder.master(master)
        if master and master.startswith("local"):
            # local executors run this interpreter (the one with tracer installed); on a
            # cluster, spark-submit's own settings say which Python the executors use
            os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
            builder = builder.config("spark.pyspark.python", os.environ["PYSPARK_PYTHON"])
        spark = builder.getOrCreate()
        try:
            frame = spark.read.parquet(str(reader.root / ds.LOG_FILE))
            # each row's position in the file, as DuckDB's file_row_number gives it
            frame = frame.select(
                col("_metadata.row_index").alias("file_row_number"),
                "seq",
                "kind",
                "entry",
                "leaf_hash",
                "signer",
            )
            rows = frame.mapInArrow(_checks(ctx), "file_row_number long, out binary").collect()
        finally:
            if stop:
                spark.stop()
        results = [load_results(bytes(r["out"])) for r in rows]
        return lambda: results

    return run
