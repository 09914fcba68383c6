"""Make the Phoenix Parquet fixture with Arize Phoenix's own code (its own venv: Phoenix is
far too large a dependency for tracer's).

    python3 -m venv /tmp/phx && /tmp/phx/bin/pip install arize-phoenix==20.26.1
    /tmp/phx/bin/python tests/imports/make_phoenix_fixture.py \\
        tests/imports/fixtures/langchain-openinference-0.1.80.jsonl \\
        tests/imports/fixtures/langchain-openinference-0.1.80.phoenix-20.26.1.parquet

The committed OpenInference OTLP export (made by the real LangChain instrumentation) is
decoded span by span with `phoenix.trace.otel.decode_otlp_span`, the way Phoenix's
collector receives spans, gathered into a `phoenix.trace.TraceDataset` and written with
`TraceDataset.save`, which is what a Phoenix user runs to export traces as Parquet.  So
the same pipeline's spans exist in both forms, and the test compares them.
"""

from __future__ import annotations

import base64
import json
import shutil
import sys
import tempfile
from pathlib import Path


def main(src: Path, out: Path) -> None:
    from google.protobuf.json_format import ParseDict
    from opentelemetry.proto.trace.v1.trace_pb2 import TracesData
    from phoenix.trace import TraceDataset  # type: ignore[import-not-found,import-untyped,unused-ignore]
    from phoenix.trace.otel import decode_otlp_span  # type: ignore[import-not-found,import-untyped,unused-ignore]

    spans = []
    for line in src.read_bytes().splitlines():
        if not line.strip():
            continue
        doc = json.loads(line)
        for rs in doc["resourceSpans"]:  # OTLP/JSON ids are hex; protobuf's mapping wants base64
            for ss in rs["scopeSpans"]:
                for sp in ss["spans"]:
                    for key in ("traceId", "spanId", "parentSpanId"):
                        if sp.get(key):
                            sp[key] = base64.b64encode(bytes.fromhex(sp[key])).decode()
        data = ParseDict(doc, TracesData())
        for rs in data.resource_spans:
            for ss in rs.scope_spans:
                spans += [decode_otlp_span(sp) for sp in ss.spans]
    # TraceDataset.from_spans itself, except that its ISO time strings are parsed first
    # (20.26.1's normalize_timestamps refuses them as strings)
    import pandas as pd  # type: ignore[import-not-found,import-untyped,unused-ignore]
    from phoenix.trace.span_json_encoder import span_to_json  # type: ignore[import-not-found,import-untyped,unused-ignore]

    frame = pd.json_normalize([json.loads(span_to_json(s)) for s in spans], max_level=1)
    for column in ("start_time", "end_time"):
        frame[column] = pd.to_datetime(frame[column], utc=True)
    ds = TraceDataset(frame)
    work = Path(tempfile.mkdtemp())
    try:
        ident = ds.save(work)
        shutil.copyfile(work / f"trace_dataset-{ident}.parquet", out)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"wrote {out}: {len(spans)} spans, columns {sorted(ds.dataframe.columns)}")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
