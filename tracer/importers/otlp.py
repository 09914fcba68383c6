"""Read OTLP trace exports into spans: JSON Lines (the OpenTelemetry file exporter) and protobuf.

OTLP/JSON (opentelemetry-proto's JSON encoding) writes one `TracesData` /
`ExportTraceServiceRequest` object per line; trace and span ids are hex, but writers that
use protobuf's generic JSON mapping write them as base64, and 64-bit integers
(timestamps, `intValue`) may be strings or numbers.  Both are accepted, nothing else is:
every line is parsed strictly (store.canonical.parse_strict) and a value of the wrong
shape refuses the whole file with its line and JSON path named.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from store.canonical import canonical, parse_strict
from store.crypto import sha256_hex
from store.errors import InputError
from tracer.engine.times import spell_utc

__all__ = [
    "AttrValue",
    "ExportFormatError",
    "Span",
    "read_otlp_json_lines",
    "read_otlp_proto",
    "span_time",
    "unique_spans",
]


class ExportFormatError(InputError):
    """An export line that cannot be read: names the file, the line and the JSON path."""

    hint = "nothing was imported from this file (nor from any other file of this call); fix or drop it"

    def __init__(self, file: str, line: int, path: str, message: str):
        super().__init__(f"{file}:{line}" if line else file, path, message)
        self.line = line


AttrValue = str | int | float | bool | tuple["AttrValue", ...] | dict[str, "AttrValue"] | None


@dataclass(frozen=True, slots=True)
class Span:
    """One span as the export holds it; `attributes` keep their JSON paths for the record."""

    file: str
    line: int
    path: str
    trace_id: str
    span_id: str
    parent_id: str
    name: str
    start_ns: int
    end_ns: int
    attributes: Mapping[str, AttrValue]
    attribute_paths: Mapping[str, str]
    dropped_attributes: int
    resource: Mapping[str, AttrValue]
    resource_paths: Mapping[str, str]
    #: SHA-256 of the span object's RFC 8785 form, and of its resource and scope: what
    #: "the same trace" means when an overlapping export is imported again
    content_sha256: str = ""
    context_sha256: str = ""

    def text(self, key: str) -> str | None:
        value = self.attributes.get(key)
        return value if isinstance(value, str) else None

    def where(self, key: str) -> str:
        """`line N $.path` of an attribute, for an attestation's `source`."""
        return f"line {self.line} {self.attribute_paths.get(key, self.path)}"


_HEX = re.compile(r"[0-9a-fA-F]*")
_DIGITS = re.compile(r"-?[0-9]+")
_INT64 = (-(2**63), 2**63 - 1)


def _id(value: Any, size: int, file: str, line: int, path: str, optional: bool) -> str:
    """A trace id (16 bytes) or span id (8 bytes) as lowercase hex, from hex or base64."""
    if value is None or value == "":
        if optional:
            return ""
        raise ExportFormatError(file, line, path, "required id is missing")
    if not isinstance(value, str):
        raise ExportFormatError(
            file, line, path, f"expected a hex or base64 string, got {type(value).__name__}"
        )
    raw = _id_bytes(value, size, file, line, path)
    if raw == bytes(size):
        if optional:
            return ""
        raise ExportFormatError(file, line, path, "an all-zero id is invalid (OTLP)")
    return raw.hex()


def _id_bytes(value: str, size: int, file: str, line: int, path: str) -> bytes:
    """The `size` bytes an id spells in hex (twice `size` digits) or base64; refused otherwise."""
    if len(value) == 2 * size and _HEX.fullmatch(value):
        return bytes.fromhex(value)
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) != size:
        raise ExportFormatError(
            file, line, path, f"not a {size}-byte id in hex ({2 * size} digits) or base64: {value!r}"
        )
    return raw


def _int64(value: Any, file: str, line: int, path: str) -> int:
    """An OTLP 64-bit integer: a JSON integer, or a string of decimal digits."""
    if isinstance(value, bool):
        raise ExportFormatError(file, line, path, "expected an integer, got a boolean")
    if isinstance(value, int):
        n = value
    elif isinstance(value, str) and _DIGITS.fullmatch(value):
        n = int(value)
    else:
        raise ExportFormatError(
            file, line, path, f"expected a 64-bit integer (number or decimal string): {value!r}"
        )
    if not _INT64[0] <= n <= _INT64[1]:
        raise ExportFormatError(file, line, path, f"{n} does not fit in 64 bits")
    return n


def _any_value(value: Any, file: str, line: int, path: str) -> AttrValue:
    """An OTLP AnyValue as a Python value (a kvlist as a dict, an array as a tuple)."""
    if not isinstance(value, dict):
        raise ExportFormatError(file, line, path, "expected an AnyValue object")
    if not value:
        return None
    if len(value) != 1:
        raise ExportFormatError(
            file, line, path, f"an AnyValue holds exactly one member, not {sorted(value)}"
        )
    ((key, inner),) = value.items()
    sub = f"{path}.{key}"
    reader = _MEMBERS.get(key)
    if reader is None:
        raise ExportFormatError(file, line, sub, f"unsupported AnyValue member {key!r}")
    return reader(inner, file, line, sub)


def _string(inner: Any, file: str, line: int, sub: str) -> AttrValue:
    if not isinstance(inner, str):
        raise ExportFormatError(file, line, sub, "expected a string")
    return inner


def _bool(inner: Any, file: str, line: int, sub: str) -> AttrValue:
    if not isinstance(inner, bool):
        raise ExportFormatError(file, line, sub, "expected a boolean")
    return inner


def _double(inner: Any, file: str, line: int, sub: str) -> AttrValue:
    if isinstance(inner, bool) or not isinstance(inner, int | float | str):
        raise ExportFormatError(file, line, sub, "expected a number")
    if not isinstance(inner, str):
        return float(inner)
    # protobuf's JSON mapping may write doubles as strings; non-finite ones are refused
    try:
        number = float(inner)
    except ValueError as exc:
        raise ExportFormatError(file, line, sub, f"not a number: {inner!r}") from exc
    if number != number or number in (float("inf"), float("-inf")):
        raise ExportFormatError(file, line, sub, f"not a finite number: {inner!r}")
    return number


def _values(inner: Any, file: str, line: int, sub: str) -> Any:
    if not isinstance(inner, dict) or not set(inner) <= {"values"}:
        raise ExportFormatError(file, line, sub, 'expected {"values": [...]}')
    return inner.get("values", [])


def _array(inner: Any, file: str, line: int, sub: str) -> AttrValue:
    items = _values(inner, file, line, sub)
    if not isinstance(items, list):
        raise ExportFormatError(file, line, f"{sub}.values", "expected an array")
    return tuple(_any_value(v, file, line, f"{sub}.values[{i}]") for i, v in enumerate(items))


def _kvlist(inner: Any, file: str, line: int, sub: str) -> AttrValue:
    pairs, _paths = _attributes(_values(inner, file, line, sub), file, line, f"{sub}.values")
    return pairs


def _bytes(inner: Any, file: str, line: int, sub: str) -> AttrValue:
    if not isinstance(inner, str):
        raise ExportFormatError(file, line, sub, "expected base64 text")
    return inner


#: each AnyValue member's reader: (member value, file, line, JSON path) -> Python value
_MEMBERS: dict[str, Callable[[Any, str, int, str], AttrValue]] = {
    "stringValue": _string,
    "boolValue": _bool,
    "intValue": _int64,
    "doubleValue": _double,
    "arrayValue": _array,
    "kvlistValue": _kvlist,
    "bytesValue": _bytes,
}


def _attributes(items: Any, file: str, line: int, path: str) -> tuple[dict[str, AttrValue], dict[str, str]]:
    if items is None:
        return {}, {}
    if not isinstance(items, list):
        raise ExportFormatError(file, line, path, "expected an array of {key, value}")
    values: dict[str, AttrValue] = {}
    paths: dict[str, str] = {}
    for i, kv in enumerate(items):
        where = f"{path}[{i}]"
        if not isinstance(kv, dict) or not isinstance(kv.get("key"), str):
            raise ExportFormatError(file, line, where, 'expected {"key": string, "value": AnyValue}')
        key = kv["key"]
        if key in values:
            raise ExportFormatError(file, line, f"{where}.key", f"attribute {key!r} appears twice")
        values[key] = _any_value(kv.get("value", {}), file, line, f"{where}.value")
        paths[key] = f"{where}.value"
    return values, paths


def _list(doc: Any, key: str, file: str, line: int, path: str) -> list[Any]:
    value = doc.get(key, []) if isinstance(doc, dict) else None
    if not isinstance(value, list):
        raise ExportFormatError(file, line, f"{path}.{key}", "expected an array")
    return value


def spans_of(doc: Any, file: str, line: int) -> Iterator[Span]:
    """The spans of one TracesData / ExportTraceServiceRequest object."""
    if not isinstance(doc, dict):
        raise ExportFormatError(file, line, "$", 'expected a TracesData object ({"resourceSpans": [...]})')
    if "resourceSpans" not in doc:
        raise ExportFormatError(file, line, "$.resourceSpans", "missing: not an OTLP trace export line")
    for r, rs in enumerate(_list(doc, "resourceSpans", file, line, "$")):
        rpath = f"$.resourceSpans[{r}]"
        resource = rs.get("resource", {}) if isinstance(rs, dict) else None
        if not isinstance(resource, dict):
            raise ExportFormatError(file, line, f"{rpath}.resource", "expected an object")
        res_attrs, res_paths = _attributes(
            resource.get("attributes"), file, line, f"{rpath}.resource.attributes"
        )
        for s, ss in enumerate(_list(rs, "scopeSpans", file, line, rpath)):
            spath = f"{rpath}.scopeSpans[{s}]"
            scope = ss.get("scope") if isinstance(ss, dict) else None
            context = sha256_hex(canonical({"resource": resource, "scope": scope}))
            for k, sp in enumerate(_list(ss, "spans", file, line, spath)):
                yield _span(sp, file, line, f"{spath}.spans[{k}]", res_attrs, res_paths, context)


def _span(
    sp: Any,
    file: str,
    line: int,
    path: str,
    res_attrs: dict[str, AttrValue],
    res_paths: dict[str, str],
    context: str,
) -> Span:
    """One span object at `path`, under a resource and a scope whose digest is `context`."""
    if not isinstance(sp, dict):
        raise ExportFormatError(file, line, path, "expected a span object")
    attrs, paths = _attributes(sp.get("attributes"), file, line, f"{path}.attributes")
    name = sp.get("name", "")
    if not isinstance(name, str):
        raise ExportFormatError(file, line, f"{path}.name", "expected a string")
    return Span(
        file=file,
        line=line,
        path=path,
        trace_id=_id(sp.get("traceId"), 16, file, line, f"{path}.traceId", False),
        span_id=_id(sp.get("spanId"), 8, file, line, f"{path}.spanId", False),
        parent_id=_id(sp.get("parentSpanId"), 8, file, line, f"{path}.parentSpanId", True),
        name=name,
        start_ns=_int64(sp.get("startTimeUnixNano", 0), file, line, f"{path}.startTimeUnixNano"),
        end_ns=_int64(sp.get("endTimeUnixNano", 0), file, line, f"{path}.endTimeUnixNano"),
        attributes=attrs,
        attribute_paths=paths,
        dropped_attributes=_count(
            sp.get("droppedAttributesCount", 0), file, line, f"{path}.droppedAttributesCount"
        ),
        resource=res_attrs,
        resource_paths=res_paths,
        content_sha256=sha256_hex(canonical(sp)),
        context_sha256=context,
    )


def _count(value: Any, file: str, line: int, path: str) -> int:
    """A count (`droppedAttributesCount`): a 64-bit integer that is never negative."""
    n = _int64(value, file, line, path)
    if n < 0:
        raise ExportFormatError(file, line, path, f"a count cannot be negative: {n}")
    return n


def unique_spans(spans: list[Span]) -> list[Span]:
    """Refuse a span written twice (a retried batch, exports concatenated): a span is one
    (trace id, span id), and one written twice would be read into its answer twice."""
    seen: dict[tuple[str, str], Span] = {}
    for s in spans:
        first = seen.setdefault((s.trace_id, s.span_id), s)
        if first is not s:
            raise ExportFormatError(
                s.file,
                s.line,
                f"{s.path}.spanId",
                f"span {s.span_id} of trace {s.trace_id} appears twice (first at line {first.line} "
                f"{first.path}): a line written twice, or exports concatenated? Drop the copy",
            )
    return spans


def read_otlp_json_lines(data: bytes, file: str) -> list[Span]:
    """Every span of an OTLP JSON Lines file; the first bad line refuses the whole file, and
    so does a span written twice (the same trace id and span id)."""
    if b"\x00" in data:  # never in JSON text: a binary file has no lines to name
        raise ExportFormatError(
            file,
            0,
            "$",
            "a binary file, not OTLP JSON Lines text (it holds NUL bytes); "
            "a binary ExportTraceServiceRequest is read with --format otlp-proto",
        )
    out: list[Span] = []
    for n, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            doc = parse_strict(raw, file)
        except InputError as exc:
            raise ExportFormatError(file, n, exc.path, exc.message) from exc
        out.extend(spans_of(doc, file, n))
    if not out:
        raise ExportFormatError(file, 0, "$", "no spans: the file holds no OTLP trace data")
    return unique_spans(out)


def read_otlp_proto(data: bytes, file: str) -> list[Span]:
    """The spans of one binary `ExportTraceServiceRequest` (the body OTLP/HTTP posts).

    Needs `opentelemetry-proto` (`pip install 'tracer-evidence[otel]'`); the message is turned into
    protobuf's JSON mapping (ids base64, int64 as strings) and read like a JSON line.
    """
    try:
        from google.protobuf.json_format import MessageToDict
        from google.protobuf.message import DecodeError
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    except ImportError as exc:
        raise InputError(
            file, "$", "reading OTLP protobuf needs opentelemetry-proto: pip install 'tracer-evidence[otel]'"
        ) from exc
    msg = ExportTraceServiceRequest()
    try:
        msg.ParseFromString(data)
    except DecodeError as exc:
        raise ExportFormatError(file, 0, "$", f"not an OTLP ExportTraceServiceRequest: {exc}") from exc
    doc = MessageToDict(msg, preserving_proto_field_name=False)
    spans = list(spans_of(doc, file, 1))
    if not spans:
        raise ExportFormatError(file, 0, "$", "no spans: the file holds no OTLP trace data")
    return unique_spans(spans)


def span_time(ns: int) -> str:
    """Unix nanoseconds as the RFC 3339 UTC time tracer writes (`spell_utc`), so a report matches it."""
    moment = datetime.fromtimestamp(ns // 1_000_000_000, UTC).replace(microsecond=(ns // 1000) % 1_000_000)
    return spell_utc(moment)
