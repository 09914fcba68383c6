# ruff: noqa: N999 - named as the issue asks: bench/import.py
"""Import throughput: spans per second at two sizes 10x apart, and the per-span cost ratio.

    .venv/bin/python bench/import.py                 # 1,000 and 10,000 spans
    .venv/bin/python bench/import.py --large         # 10,000 and 100,000 spans
    .venv/bin/python bench/import.py --spans 2000 --runs 3

Each run is a fresh child process: a fresh vault (bench/gen.py's `new_vault`) with 40
source revisions ingested untimed, then one OTLP JSON Lines export written (untimed) of
OpenInference RAG traces of four spans each (a chain, a retriever of two documents whose
metadata names a revision in the vault, an embedding and a model call whose prompt holds
both retrieved texts), one trace per line as the file exporter writes them.  Timed:
`tracer.importers.run.import_files` — the call `tracer import` makes, without the
process start — which reads, maps, locates every passage in its revision (tracer's
chunker), signs one statement per answer and appends them in one batch.

Floor, measured in the same child right after (same bytes): strict parsing of every
line (`store.canonical.parse_strict`, which every OTLP line goes through) and SHA-256 of
the file and of every kept text.  The goals (issue 25 item 4): at least 2,000 spans/s,
and the per-span cost at the larger size at most 1.3 times that at the smaller one
(`per_span_cost_ratio`: linear time).  Peak RSS is reported per size.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common

SPANS_PER_TRACE = 4
REVISIONS = 40
PARAGRAPHS = 30
NOW = "2026-06-02T00:00:00Z"


def _sentence(doc: int, para: int) -> str:
    return (
        f"Clause {doc}.{para}: customers of region {doc} may ask for remedy {para} within "
        f"{(doc * 31 + para) % 90 + 1} days of delivery, under rule {doc}-{para}."
    )


def _revision(doc: int) -> dict[str, Any]:
    body = "\n\n".join(_sentence(doc, p) for p in range(PARAGRAPHS))
    return {
        "schema": "tracer.source_revision/v1",
        "document_id": f"policy-{doc}",
        "revision": "r1",
        "source_system": "northwind-wiki",
        "source_revision": f"policy-{doc}-r1",
        "path": f"wiki/support/policy-{doc}.md",
        "title": f"Policy {doc}",
        "uri": f"docstore://support/policy-{doc}",
        "backend": "docstore",
        "collection": "support",
        "committed_at": "2026-01-01T00:00:00Z",
        "content": f"# Policy {doc}\n\n{body}\n",
    }


def _kv(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, float):
        return {"key": key, "value": {"doubleValue": value}}
    return {"key": key, "value": {"stringValue": value}}


def trace_record(i: int) -> dict[str, Any]:
    trace_id = hashlib.sha256(f"trace-{i}".encode()).hexdigest()[:32]
    ids = [hashlib.sha256(f"span-{i}-{k}".encode()).hexdigest()[:16] for k in range(SPANS_PER_TRACE)]
    t0 = 1_780_000_000_000_000_000 + i * 10_000_000
    docs = [(i % REVISIONS, i % PARAGRAPHS), ((i + 7) % REVISIONS, (i * 3 + 1) % PARAGRAPHS)]
    texts = [_sentence(d, p) for d, p in docs]
    question = f"Question {i}: how long for remedy {docs[0][1]}?"
    answer = f"Answer {i}: see clause {docs[0][0]}.{docs[0][1]}."
    retriever: list[dict[str, Any]] = [
        _kv("openinference.span.kind", "RETRIEVER"),
        _kv("input.value", question),
    ]
    for j, ((d, p), text) in enumerate(zip(docs, texts, strict=True)):
        base = f"retrieval.documents.{j}.document."
        retriever += [
            _kv(base + "id", f"policy-{d}#{p}"),
            _kv(base + "content", text),
            _kv(base + "score", 0.9 - j / 10),
            _kv(base + "metadata", json.dumps({"document_id": f"policy-{d}", "revision": "r1"})),
        ]
    prompt = "Answer from this context:\n\n" + "\n\n".join(texts)

    def span(k: int, name: str, attrs: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "traceId": trace_id,
            "spanId": ids[k],
            "parentSpanId": ids[0] if k else "",
            "name": name,
            "kind": 1,
            "startTimeUnixNano": str(t0 + k * 1_000_000),
            "endTimeUnixNano": str(t0 + k * 1_000_000 + 900_000),
            "attributes": attrs,
            "status": {},
        }

    spans = [
        span(0, "RAG", [_kv("openinference.span.kind", "CHAIN"), _kv("input.value", question),
                        _kv("output.value", answer), _kv("session.id", f"session-{i % 97}")]),
        span(1, "retrieve", retriever),
        span(2, "embed", [_kv("openinference.span.kind", "EMBEDDING"),
                          _kv("embedding.model_name", "fake-embedding")]),
        span(3, "llm", [
            _kv("openinference.span.kind", "LLM"), _kv("llm.model_name", "gpt-bench"),
            _kv("llm.input_messages.0.message.role", "system"),
            _kv("llm.input_messages.0.message.content", prompt),
            _kv("llm.input_messages.1.message.role", "user"),
            _kv("llm.input_messages.1.message.content", question),
            _kv("llm.output_messages.0.message.role", "assistant"),
            _kv("llm.output_messages.0.message.content", answer),
        ]),
    ]  # fmt: skip
    resource = {"attributes": [_kv("service.name", "bench-rag"), _kv("service.version", "1.0.0")]}
    return {
        "resourceSpans": [
            {"resource": resource, "scopeSpans": [{"scope": {"name": "bench"}, "spans": spans}]}
        ]
    }


def write_export(path: Path, n_spans: int) -> int:
    """An export of `n_spans` spans (rounded down to whole traces); returns the trace count."""
    traces = max(1, n_spans // SPANS_PER_TRACE)
    with path.open("w", encoding="utf-8") as f:
        for i in range(traces):
            f.write(json.dumps(trace_record(i), separators=(",", ":")) + "\n")
    return traces


def child(args: argparse.Namespace) -> dict[str, Any]:
    from bench.gen import ingest_files, new_vault
    from store.canonical import parse_strict
    from tracer.importers.build import DocumentMapping
    from tracer.importers.mapping import ReadOptions
    from tracer.importers.run import ExportFormat, import_files

    work = Path(tempfile.mkdtemp(prefix="tracer-bench-import-"))
    try:
        vault = new_vault(work / "vault")
        revs = []
        for d in range(REVISIONS):
            p = work / "revs" / f"policy-{d}.json"
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(json.dumps(_revision(d)), encoding="utf-8")
            revs.append(p)
        ingest_files(vault, revs, NOW)
        export = work / "export.jsonl"
        traces = write_export(export, args.spans)
        spans = traces * SPANS_PER_TRACE
        t0 = time.perf_counter()
        plan = import_files(
            vault,
            common.custodian(),
            [export],
            ExportFormat.OTLP_JSON,
            "support",
            NOW,
            DocumentMapping(),
            ReadOptions(),
        )
        t_import = time.perf_counter() - t0
        located = sum(1 for it in plan.items for p in it.statement["passages"] if p["chain"] is not None)
        if len(plan.seqs) != traces or located != 2 * traces:
            raise SystemExit(f"import incomplete: {len(plan.seqs)} answers, {located} located")
        texts = [t for it in plan.items for t in it.texts]
        del plan
        vault.close()
        rss = common.peak_rss_mib()
        data = export.read_bytes()
        t_parse, t_sha = common.Timer(), common.Timer()
        with t_parse:
            for line in data.splitlines():
                parse_strict(line, "export")
        with t_sha:
            hashlib.sha256(data).digest()
            for t in texts:
                hashlib.sha256(t).digest()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    floor = t_parse.total + t_sha.total
    return {
        "spans": spans,
        "answers": traces,
        "export_bytes": len(data),
        "import_s": round(t_import, 3),
        "spans_per_s": round(spans / t_import, 1),
        "floor_s": round(floor, 4),
        "ratio_to_floor": round(t_import / floor, 1),
        "peak_rss_mib": rss,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description="import throughput at two sizes 10x apart")
    ap.add_argument("--spans", type=int, default=1_000, help="the smaller size (the larger is 10x)")
    ap.add_argument("--large", action="store_true", help="10,000 and 100,000 spans")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        common.emit(child(args))
        return
    small = 10_000 if args.large else args.spans
    load_before = os.getloadavg()[0]
    by_size = {}
    for n in (small, small * 10):
        by_size[n] = common.summarize(common.run_children(__file__, ["--spans", str(n)], args.runs))
    a, b = by_size[small], by_size[small * 10]
    per_a, per_b = a["import_s"] / a["spans"], b["import_s"] / b["spans"]
    common.emit(
        {
            "bench": "import",
            "runs": args.runs,
            "stat": "median",
            **common.code_version(),
            "loadavg_1m_before_after": [round(load_before, 2), round(os.getloadavg()[0], 2)],
            "goal": "spans_per_s >= 2000 at both sizes; per_span_cost_ratio <= 1.3 (issue 25)",
            "per_span_cost_ratio": round(per_b / per_a, 2),
            "spans_per_s": {str(n): r["spans_per_s"] for n, r in by_size.items()},
            "sizes": {str(n): r for n, r in by_size.items()},
        }
    )


if __name__ == "__main__":
    main()
