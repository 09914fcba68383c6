"""Arize Phoenix span exports (issue 25 item 5): the committed OpenInference export of the
LangChain RAG chain, written as Parquet by Phoenix 20.26.1's own `TraceDataset.save`
(tests/imports/make_phoenix_fixture.py), imports with the same answers, passages and
marks as the OTLP file it came from."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest

from store.errors import InputError
from store.statements import ImportedTraceStatement
from tests.cli.conftest import World
from tests.helpers import Case
from tests.imports.conftest import FIXTURES, run_import, write
from tracer.importers.run import ExportFormat

OTLP = FIXTURES / "langchain-openinference-0.1.80.jsonl"
PARQUET = FIXTURES / "langchain-openinference-0.1.80.phoenix-20.26.1.parquet"
PHOENIX = ExportFormat.PHOENIX_PARQUET


def _passages(st: ImportedTraceStatement) -> list[tuple[Any, ...]]:
    return [
        (p["rank"], p["retrieved_sha256"], p["model_input_sha256"], p["document_id"], p["revision"],
         p["metadata"], p["chain"]["locator"] if p["chain"] else None, p["span_id"])
        for p in st["passages"]
    ]  # fmt: skip


def test_a_phoenix_parquet_export_imports_as_its_otlp_source_does(sourced: Case) -> None:
    pq = {it.answer_id: it.statement for it in run_import(sourced, PARQUET, fmt=PHOENIX, dry_run=True).items}
    oi = {it.answer_id: it.statement for it in run_import(sourced, OTLP, dry_run=True).items}
    assert sorted(pq) == sorted(oi) and len(pq) == 2  # the same trace and root span ids
    for answer_id, b in oi.items():
        a = pq[answer_id]
        for key in ("question_sha256", "answer_sha256", "span_ids", "citations"):
            assert a[key] == b[key], key
        # Phoenix keeps microseconds, rounded from the nanoseconds: the file's time, read as is
        gap = datetime.fromisoformat(str(a["generated_at"])) - datetime.fromisoformat(str(b["generated_at"]))
        assert abs(gap) <= timedelta(microseconds=1)
        assert _passages(a) == _passages(b) and all(p["chain"] for p in a["passages"])
        for k, fact in b["fields"].items():
            if k.startswith("$.producer."):  # Phoenix keeps no resource
                assert a["fields"][k]["state"] == "absent"
            else:
                assert a["fields"][k]["state"] == fact["state"], k
        assert a["export"]["format"] == "phoenix-parquet"


def test_the_same_trace_from_another_format_is_never_imported_beside_it(sourced: Case) -> None:
    run_import(sourced, OTLP)
    plan = run_import(sourced, PARQUET, fmt=PHOENIX, dry_run=True)
    assert plan.items == [] and len(plan.conflicts) == 2
    assert "imported from a otlp-json export" in plan.conflicts[0].reason


def test_what_is_no_phoenix_export_is_refused(sourced: Case) -> None:
    with pytest.raises(InputError, match="not a Parquet file"):
        run_import(sourced, write(sourced, "x.parquet", b"PAR1 nonsense"), fmt=PHOENIX)
    import io

    import pyarrow as pa
    import pyarrow.parquet as papq

    buf = io.BytesIO()
    papq.write_table(pa.table({"name": ["a"]}), buf)
    with pytest.raises(InputError, match=r"no column context\.span_id, context\.trace_id"):
        run_import(sourced, write(sourced, "y.parquet", buf.getvalue()), fmt=PHOENIX)
    table = papq.read_table(PARQUET)
    bad = table.set_column(
        table.schema.get_field_index("context.span_id"),
        "context.span_id",
        pa.array(["zz"] * table.num_rows),
    )
    buf = io.BytesIO()
    papq.write_table(bad, buf)
    with pytest.raises(InputError, match="not a 8-byte hex id") as err:
        run_import(sourced, write(sourced, "z.parquet", buf.getvalue()), fmt=PHOENIX)
    assert err.value.file.endswith("z.parquet:1") and err.value.path == "$[0].context.span_id"


def test_the_cli_reads_phoenix_parquet(vault_world: World) -> None:
    w = vault_world
    r = w.run("import", w.vault, PARQUET, "--format", "phoenix-parquet", "--collection", "support",
              *w.cust(), "--json")  # fmt: skip
    assert r.code == 0, r
    assert [a["passages"] for a in r.json()["answers"]] == [2, 2]


def _dotted(prefix: str, value: Any, out: dict[str, Any]) -> None:
    """`get_spans_dataframe`'s form: objects flattened into dotted columns, a list of
    objects kept as one column of dotted objects."""
    if isinstance(value, dict) and not prefix.endswith("metadata"):
        for k, v in value.items():
            _dotted(f"{prefix}.{k}", v, out)
    elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        out[prefix] = [_dotted_obj(v) for v in value]
    else:
        out[prefix] = value


def _dotted_obj(obj: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in obj.items():
        _dotted(k, v, out)
    return out


def test_the_flattened_dataframe_form_reads_the_same(sourced: Case) -> None:
    import io

    import pyarrow as pa
    import pyarrow.parquet as papq

    rows = []
    for row in papq.read_table(PARQUET).to_pylist():
        flat: dict[str, Any] = {}
        for column, cell in row.items():
            if column.startswith("attributes.") and cell is not None:
                _dotted(column, cell, flat)
            elif not column.startswith("attributes."):
                flat[column] = cell
        rows.append(flat)
    columns = sorted({k for r in rows for k in r})
    table = pa.Table.from_pylist([{c: r.get(c) for c in columns} for r in rows])
    assert "attributes.retrieval.documents" in table.column_names
    buf = io.BytesIO()
    papq.write_table(table, buf)
    flat_plan = run_import(sourced, write(sourced, "flat.parquet", buf.getvalue()), fmt=PHOENIX, dry_run=True)
    nested = run_import(sourced, PARQUET, fmt=PHOENIX, dry_run=True)
    assert [_passages(it.statement) for it in flat_plan.items] == [
        _passages(it.statement) for it in nested.items
    ]
    assert [it.statement["answer_sha256"] for it in flat_plan.items] == [
        it.statement["answer_sha256"] for it in nested.items
    ]
