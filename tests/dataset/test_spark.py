"""The Spark engine (local[2]) reports what DuckDB and `tracer verify` report, tampered
exports included.  Skipped, saying why, when the optional `spark` extra is absent."""

from __future__ import annotations

import importlib.util
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.dataset import test_tamper_matrix
from tests.dataset.conftest import Exported
from tests.dataset.test_tamper_matrix import CASES, _edit_text, _first_tombstone_seq
from tracer.engine.dataset_verify import verify_dataset

pytestmark = [
    pytest.mark.slow,  # a JVM and local[2] executors: minutes under load
    pytest.mark.skipif(
        importlib.util.find_spec("pyspark") is None or shutil.which("java") is None,
        reason="the Spark engine needs the `spark` extra (pyspark) and a Java runtime: not installed here",
    ),
]


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    from tracer.engine.dataset_spark import spark_manifests

    run = spark_manifests("local[2]", stop=False)
    yield run
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        active.stop()


def test_spark_findings_equal_tracer_verify(exported: Exported, spark: Any) -> None:
    report = verify_dataset(exported.dataset, "spark", spark)
    assert report.engine == "spark"
    assert [f.to_json() for f in report.findings] == exported.verify_json["findings"]
    assert report.counts["manifests"] == exported.verify_json["counts"]["manifests"]


@pytest.mark.parametrize("name", sorted(CASES))
def test_both_engines_agree_on_a_tampered_export(
    exported: Exported, tmp_path: Path, spark: Any, name: str
) -> None:
    tamper, kind, seq = CASES[name]
    root = tmp_path / "ds"
    shutil.copytree(exported.dataset, root)
    if seq == -1:
        seq = _first_tombstone_seq(root)
    tamper(root)
    duck = [f.to_json() for f in verify_dataset(root).findings]
    sparked = [f.to_json() for f in verify_dataset(root, "spark", spark).findings]
    assert sparked == duck
    assert any(f["kind"] == kind and f["seq"] == seq for f in sparked)


def test_both_engines_find_a_flipped_plaintext(exported: Exported, tmp_path: Path, spark: Any) -> None:
    """A plaintext that no longer matches its digest: the same `checksum_mismatch`
    records from both engines, pinned to the entries citing it."""
    import pyarrow.parquet as pq

    root = tmp_path / "ds"
    shutil.copytree(exported.dataset, root)
    refs = pq.read_table(root / "references.parquet").to_pylist()
    digest = str(next(r for r in refs if r["seq"] == 100 and r["role"] == "retrieved")["digest"])
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(test_tamper_matrix, "TEXT_DIGEST", digest)
        _edit_text(root)
    duck = [f.to_json() for f in verify_dataset(root).findings]
    sparked = [f.to_json() for f in verify_dataset(root, "spark", spark).findings]
    assert sparked == duck
    hits = [f for f in duck if f["kind"] == "checksum_mismatch" and f["record"].get("digest") == digest]
    assert 100 in {f["seq"] for f in hits}
