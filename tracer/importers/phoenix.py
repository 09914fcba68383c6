"""Read Arize Phoenix span exports (a spans dataframe saved as Parquet) into spans.

Phoenix keeps the OpenInference attributes of each span as columns named
`attributes.<key>` (`attributes.input.value`, `attributes.llm.model_name`), where a list
of objects stays one column (`attributes.retrieval.documents` holds
`[{"document.content": …, "document.id": …}, …]`, `attributes.llm.input_messages` holds
`[{"message.role": …, "message.content": …}]`).  Each row is turned back into the
OpenInference attribute names (`retrieval.documents.0.document.content`) so one mapping
(tracer.importers.mapping) reads both forms.  A metadata object stays an object.  The
span's "line" is its row (from 1); the JSON path names the row and the column.
"""

from __future__ import annotations

import io
import math
from datetime import UTC, datetime, timedelta
from typing import Any

from store.canonical import canonical
from store.crypto import sha256_hex
from tracer.importers.otlp import AttrValue, ExportFormatError, Span, unique_spans

__all__ = ["read_phoenix_parquet"]

_ATTR = "attributes."
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
#: the columns a Phoenix spans dataframe names its ids and times with
_SPAN_ID, _TRACE_ID, _PARENT = "context.span_id", "context.trace_id", "parent_id"


def _ns(value: Any, file: str, row: int, column: str) -> int:
    if value is None:
        return 0
    if isinstance(value, datetime):
        if value.tzinfo is None:
            raise ExportFormatError(file, row, f"$[{row - 1}].{column}", "a time without a time zone")
        return (value - _EPOCH) // timedelta(microseconds=1) * 1000
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise ExportFormatError(
        file, row, f"$[{row - 1}].{column}", f"expected a timestamp, got {type(value).__name__}"
    )


def _hex(value: Any, size: int, file: str, row: int, column: str, optional: bool) -> str:
    if value is None or value == "":
        if optional:
            return ""
        raise ExportFormatError(file, row, f"$[{row - 1}].{column}", "required id is missing")
    text = str(value)
    if len(text) != 2 * size or any(c not in "0123456789abcdefABCDEF" for c in text):
        raise ExportFormatError(file, row, f"$[{row - 1}].{column}", f"not a {size}-byte hex id: {text!r}")
    if set(text) == {"0"}:
        if optional:
            return ""
        raise ExportFormatError(file, row, f"$[{row - 1}].{column}", "an all-zero id is invalid")
    return text.lower()


def _plain(value: Any, file: str, row: int, path: str) -> AttrValue:
    """A cell as JSON-able attribute data: NaN is no value, a nested list stays a tuple."""
    if value is None or isinstance(value, str | bool):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return None if math.isnan(value) else value
    if isinstance(value, dict):
        return {str(k): _plain(v, file, row, f"{path}.{k}") for k, v in value.items()}
    if isinstance(value, list | tuple):
        return tuple(_plain(v, file, row, f"{path}[{i}]") for i, v in enumerate(value))
    raise ExportFormatError(file, row, path, f"unsupported value of type {type(value).__name__}")


def _flatten(
    key: str, value: AttrValue, path: str, attrs: dict[str, AttrValue], paths: dict[str, str]
) -> None:
    """`key: [{"document.content": …}]` → `key.0.document.content`; objects are flattened
    by dots, except a metadata object, which the mapping reads whole."""
    if value is None:
        return
    if isinstance(value, dict) and not key.endswith("metadata"):
        for k, v in value.items():
            _flatten(f"{key}.{k}", v, f'{path}["{k}"]', attrs, paths)
        return
    if isinstance(value, tuple) and value and all(isinstance(v, dict) for v in value):
        for i, v in enumerate(value):
            _flatten(f"{key}.{i}", v, f"{path}[{i}]", attrs, paths)
        return
    attrs[key] = value
    paths[key] = path


def _row_span(row: dict[str, Any], n: int, file: str) -> Span:
    path = f"$[{n - 1}]"
    attrs: dict[str, AttrValue] = {}
    paths: dict[str, str] = {}
    for column, cell in row.items():
        if not column.startswith(_ATTR):
            continue
        value = _plain(cell, file, n, f'{path}["{column}"]')
        _flatten(column[len(_ATTR) :], value, f'{path}["{column}"]', attrs, paths)
    kind = row.get("span_kind")
    if "openinference.span.kind" not in attrs and isinstance(kind, str) and kind:
        attrs["openinference.span.kind"] = kind
        paths["openinference.span.kind"] = f'{path}["span_kind"]'
    name = row.get("name")
    record = {
        k: (v.isoformat() if isinstance(v, datetime) else _plain(v, file, n, f'{path}["{k}"]'))
        for k, v in row.items()
    }
    return Span(
        file=file,
        line=n,
        path=path,
        trace_id=_hex(row.get(_TRACE_ID), 16, file, n, _TRACE_ID, False),
        span_id=_hex(row.get(_SPAN_ID), 8, file, n, _SPAN_ID, False),
        parent_id=_hex(row.get(_PARENT), 8, file, n, _PARENT, True),
        name=name if isinstance(name, str) else "",
        start_ns=_ns(row.get("start_time"), file, n, "start_time"),
        end_ns=_ns(row.get("end_time"), file, n, "end_time"),
        attributes=attrs,
        attribute_paths=paths,
        dropped_attributes=0,
        resource={},
        resource_paths={},
        content_sha256=sha256_hex(canonical(record)),
        context_sha256=sha256_hex(canonical({"phoenix": True})),
    )


def read_phoenix_parquet(data: bytes, file: str) -> list[Span]:
    """Every span of a Phoenix spans dataframe saved as Parquet, read a row group at a time;
    a bad row refuses the file, naming the row and the column."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(io.BytesIO(data))
    except (pa.ArrowInvalid, OSError) as exc:
        raise ExportFormatError(file, 0, "$", f"not a Parquet file: {exc}") from exc
    names = set(pf.schema_arrow.names)
    missing = sorted({_SPAN_ID, _TRACE_ID} - names)
    if missing:
        raise ExportFormatError(
            file, 0, "$", f"not a Phoenix spans dataframe: no column {', '.join(missing)}"
        )
    out: list[Span] = []
    n = 0
    for batch in pf.iter_batches(batch_size=4096):
        for row in batch.to_pylist():
            n += 1
            out.append(_row_span(row, n, file))
    if not out:
        raise ExportFormatError(file, 0, "$", "no spans: the file holds no rows")
    return unique_spans(out)
