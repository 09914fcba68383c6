"""verify-dataset runs `tracer verify`'s transform pass over a plaintext export: a
passage that is not at its locator, or not in its cited revision, or not in the answer
it says it was derived from, is the same finding from `verify`, DuckDB and Spark."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import Case, manifest, passage, revision, signed
from tracer.engine.dataset_export import export_dataset
from tracer.engine.dataset_verify import verify_dataset
from tracer.engine.verify import verify

FIRST = "Customers may request a refund within thirty days of delivery."
SECOND = "Refunds are paid to the original payment method within five business days."
DOC = f"# Returns policy\n\n## Refund window\n\n{FIRST}\n\n{SECOND}\n"

TRANSFORM_KINDS = {"transform_found_elsewhere", "transform_not_found", "transform_not_in_source"}


def _derived(source_id: str, text: str, passage_id: str) -> dict[str, Any]:
    pseudo = revision(f"mem-{source_id}", source_id, text, "2026-01-10T00:00:00Z")
    return passage(pseudo, text[:10], passage_id, derived_from=source_id)


def _tampered_transforms(case: Case) -> None:
    rev = revision("refund", "A", DOC, "2026-01-05T00:00:00Z")
    moved = passage(rev, "five business", "p2")
    moved["locator"] = {**moved["locator"], "char_start": 0, "char_end": len(SECOND)}
    answers = [
        manifest("ans-1", "Thirty days.", [passage(rev, "thirty", "p1")]),
        manifest("ans-2", "Five days.", [moved]),
        manifest("ans-3", "Free.", [passage(rev, "thirty", "p3", retrieved_text="Shipping is free.")]),
        manifest("ans-4", "Quoting ans-1.", [_derived("ans-1", "Thirty days.", "p4")]),
        manifest("ans-5", "Quoting ans-1 wrongly.", [_derived("ans-1", "Ninety days, always.", "p5")]),
    ]
    assert case.ingest(rev, *(signed(case, a) for a in answers)).ok


def _verify_and_export(case: Case, out: Path) -> tuple[list[Any], dict[str, int]]:
    session = case.session("ines", read_only=True)
    try:
        report = verify(session.vault, session, full=True)
        export_dataset(session, out, "plaintext", 2)
    finally:
        session.close()
    return [f.to_json() for f in report.findings], report.counts


def test_a_tampered_transform_is_the_same_finding_as_verify(
    case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tampered_transforms(case)
    expected, counts = _verify_and_export(case, tmp_path / "ds")
    assert TRANSFORM_KINDS <= {f["kind"] for f in expected}
    for workers in ("0", "2"):
        monkeypatch.setenv("TRACER_VERIFY_WORKERS", workers)
        report = verify_dataset(tmp_path / "ds")
        assert [f.to_json() for f in report.findings] == expected
        for key, n in counts.items():
            if key.startswith("transform_"):
                assert report.counts[key] == n


def test_a_clean_transform_trace_has_no_finding(case: Case, tmp_path: Path) -> None:
    rev = revision("refund", "A", DOC, "2026-01-05T00:00:00Z")
    assert case.ingest(rev, signed(case, manifest("ans-1", "Thirty.", [passage(rev, "thirty")]))).ok
    expected, counts = _verify_and_export(case, tmp_path / "ds")
    report = verify_dataset(tmp_path / "ds")
    assert expected == [] and report.findings == []
    assert report.counts["transform_found_at_locator"] == counts["transform_found_at_locator"] == 1


def test_a_revision_text_altered_in_the_export_fails_the_trace(case: Case, tmp_path: Path) -> None:
    """The cited revision's text edited in texts/*.parquet: it no longer verifies, so
    the passage cannot be traced (and the text is a checksum finding)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rev = revision("refund", "A", DOC, "2026-01-05T00:00:00Z")
    assert case.ingest(rev, signed(case, manifest("ans-1", "Thirty.", [passage(rev, "thirty")]))).ok
    _verify_and_export(case, tmp_path / "ds")
    clean = verify_dataset(tmp_path / "ds").counts
    for path in sorted((tmp_path / "ds" / "texts").glob("*.parquet")):
        table = pq.read_table(path)
        texts = [t.replace(b"thirty", b"ninety") if t else t for t in table.column("text").to_pylist()]
        pq.write_table(table.set_column(table.schema.get_field_index("text"), "text", pa.array(texts)), path)
    counts = verify_dataset(tmp_path / "ds").counts
    assert clean.get("transform_found_at_locator") == 1
    assert counts.get("transform_found_at_locator", 0) == 0
    assert counts.get("transform_revision_unreadable", 0) + counts.get("transform_passage_unreadable", 0) == 1


@pytest.mark.slow
@pytest.mark.skipif(
    importlib.util.find_spec("pyspark") is None or shutil.which("java") is None,
    reason="the Spark engine needs the `spark` extra (pyspark) and a Java runtime: not installed here",
)
def test_spark_finds_the_tampered_transform(case: Case, tmp_path: Path) -> None:
    from tracer.engine.dataset_spark import spark_manifests

    _tampered_transforms(case)
    expected, _counts = _verify_and_export(case, tmp_path / "ds")
    report = verify_dataset(tmp_path / "ds", "spark", spark_manifests("local[2]"))
    assert TRANSFORM_KINDS <= {f.kind for f in report.findings}
    assert [f.to_json() for f in report.findings] == expected
