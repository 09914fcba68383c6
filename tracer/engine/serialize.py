"""Stable JSON for traces (documented in docs/json.md); used by the CLI and reports.

Historical text appears only under `text` of a verified TextResult.  Current text of a
source appears only under `currency.current_revision.excerpt`, labelled with its
revision and date: the two never share a field.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from tracer.engine.currency import Currency
from tracer.engine.evidence import TextResult
from tracer.engine.relocate import Locator
from tracer.engine.trace import AnswerTrace, LineageNode, PassageTrace

__all__ = ["content_json", "currency_json", "lineage_json", "passage_json", "text_json", "trace_json"]


def text_json(t: TextResult) -> dict[str, Any]:
    out: dict[str, Any] = {
        "digest": t.digest,
        "state": t.state,
        "recomputed": t.recomputed,
        "text": t.text if t.verified else None,
    }
    if t.detail:
        out["detail"] = t.detail
    if t.tombstone is not None:
        out["tombstone"] = asdict(t.tombstone)
    return out


def locator_json(loc: Locator) -> dict[str, Any]:
    """A locator as plain JSON (the same shape as a manifest's `locator`)."""
    return {
        "heading_path": list(loc.heading_path),
        "paragraph": loc.paragraph,
        "char_start": loc.char_start,
        "char_end": loc.char_end,
    }


def content_json(t: TextResult) -> dict[str, Any]:
    """Integrity of a stored text without the text itself (a tombstone stands in when purged)."""
    out = text_json(t)
    del out["text"]
    return out


def currency_json(c: Currency, visible: bool = True) -> dict[str, Any]:
    out: dict[str, Any] = {"state": c.state, "reason": c.reason}
    if c.detail:
        out["detail"] = c.detail
    if not visible:
        return out
    if c.cited is not None:
        out["cited_revision"] = {
            "revision": c.cited.revision,
            "source_revision": c.cited.source_revision,
            "committed_at": c.cited.committed_at,
            "content_sha256": c.cited.content_sha256,
        }
        if c.cited_text is not None:
            out["cited_revision"]["content"] = content_json(c.cited_text)
    rel = c.relocation
    if rel is not None:
        out["old_excerpt"] = rel.old_excerpt
        if rel.locator is not None:
            out["new_locator"] = locator_json(rel.locator)
        out["candidates"] = [locator_json(x) for x in rel.candidates]
    if c.current is not None and c.state in ("moved", "stale", "ambiguous", "verified"):
        out["current_revision"] = {
            "label": f"current revision {c.current.revision} ({c.current.committed_at})",
            "revision": c.current.revision,
            "source_revision": c.current.source_revision,
            "committed_at": c.current.committed_at,
            "content_sha256": c.current.content_sha256,
            "excerpt": c.current_excerpt,
        }
    return out


def passage_json(p: PassageTrace) -> dict[str, Any]:
    out: dict[str, Any] = {
        "index": p.index,
        "passage_id": p.passage_id,
        "visible": p.visible,
        "integrity": p.integrity,
        "currency": currency_json(p.currency, p.visible),
        "effective": {"integrity": p.effective_integrity, "currency": p.effective_currency},
    }
    if not p.visible:
        out["integrity"] = "unavailable"
        return out
    m = p.meta
    out.update(
        {
            "collection": p.collection,
            "retrieved": text_json(p.retrieved),
            "model_input": text_json(p.model_input),
            "transform": {"state": p.transform.state, "detail": p.transform.detail},
            "chain": {
                "chunk": m["chunk"],
                "locator": m["locator"],
                "normalizer_version": m["normalizer_version"],
                "document": m["document"],
                "source": m["source"],
            },
            "retrieved_at": m["retrieved_at"],
            "rank": m["rank"],
            "score": m["score"],
            "query_sha256": m["query_sha256"],
            "derived_from": m.get("derived_from"),
        }
    )
    return out


def lineage_json(nodes: list[LineageNode]) -> list[dict[str, Any]]:
    return [
        {
            "answer_id": n.answer_id,
            "kind": n.kind,
            "integrity": n.integrity if n.visible else "unavailable",
            "currency": n.currency if n.visible else "unavailable",
            "visible": n.visible,
            "cycle": n.cycle,
            "shared": n.shared,
            "children": lineage_json(n.children),
        }
        for n in nodes
    ]


def _hidden_trace_json(t: AnswerTrace) -> dict[str, Any]:
    """An answer outside the viewer's scope: its id and `unavailable`, every key kept."""
    return {
        "answer_id": t.answer_id,
        "run_id": None,
        "kind": None,
        "seq": None,
        "generated_at": None,
        "visible": False,
        "integrity": "unavailable",
        "currency": "unavailable",
        "reasons": ["out_of_scope"],
        "signature": None,
        "producer": {},
        "runtime": {},
        "authorization_at_run_time": {},
        "question": {"state": "unavailable"},
        "answer": {"state": "unavailable"},
        "citations": [],
        "passages": [],
        "lineage": [],
        "faults": [],
        "findings": [],
        "computed_at": t.computed_at,
        "checkpoint": {"size": t.checkpoint_size, "root": t.checkpoint_root},
    }


def trace_json(t: AnswerTrace) -> dict[str, Any]:
    if not t.visible:
        return _hidden_trace_json(t)
    return {
        "answer_id": t.answer_id,
        "run_id": t.run_id,
        "kind": t.kind,
        "seq": t.seq,
        "generated_at": t.generated_at,
        "visible": t.visible,
        "integrity": t.integrity,
        "currency": t.currency,
        "reasons": list(t.reasons),
        "signature": {"state": t.signature, "keyid": t.signer},
        "producer": t.producer,
        "runtime": t.runtime,
        "authorization_at_run_time": t.authorization,
        "question": text_json(t.question),
        "answer": text_json(t.answer),
        "citations": [
            {
                "index": c.index,
                "answer_start": c.answer_start,
                "answer_end": c.answer_end,
                "span": c.span,
                "passage_ids": c.passage_ids,
                "unknown_passages": c.unknown_passages,
                "integrity": c.integrity,
                "currency": c.currency,
            }
            for c in t.citations
        ],
        "passages": [passage_json(p) for p in t.passages],
        "lineage": lineage_json(t.lineage),
        "faults": t.faults,
        "findings": [
            {"seq": f[0], "investigator": f[1], "target": f[3], "note": f[4], "at": f[5]} for f in t.findings
        ],
        "computed_at": t.computed_at,
        "checkpoint": {"size": t.checkpoint_size, "root": t.checkpoint_root},
    }
