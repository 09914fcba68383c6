"""Cut a trace down to what the exporting investigator may pass on.

`trace_json` is written for the viewer's own screen; a pack travels further, so
anything outside the exporter's scope is reduced to its id and the word
`unavailable`: no run id, producer, answer length (citation ranges), lineage below it,
or reason code that would tell "outside your scope" apart from "deleted".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tracer.engine.vocabulary import CurrencyReason, Integrity

__all__ = ["UNAVAILABLE", "hidden_answer", "redact_trace"]

#: the word for anything outside the exporter's scope, on every axis (a plain str: packs
#: are signed, and the canonical encoder's fast path takes only those)
UNAVAILABLE = Integrity.UNAVAILABLE.value
_UNDISCLOSED_REASONS = frozenset({CurrencyReason.OUT_OF_SCOPE})


def hidden_answer(answer_id: str) -> dict[str, Any]:
    """The whole entry for an answer the exporter may not read."""
    return {
        "answer_id": answer_id,
        "visible": False,
        "integrity": UNAVAILABLE,
        "currency": UNAVAILABLE,
    }


def _passage(p: dict[str, Any]) -> dict[str, Any]:
    if p.get("visible"):
        cur = p["currency"]
        if cur.get("reason") in _UNDISCLOSED_REASONS:
            p = {**p, "currency": {"state": UNAVAILABLE, "reason": UNAVAILABLE}}
        at = p.get("answer_time") or {}
        if at.get("reason") in _UNDISCLOSED_REASONS:
            p = {**p, "answer_time": {"state": "unknown", "reason": UNAVAILABLE}}
        return p
    return {
        "index": p["index"],
        "passage_id": p["passage_id"],
        "visible": False,
        "integrity": UNAVAILABLE,
        "currency": {"state": UNAVAILABLE, "reason": UNAVAILABLE},
        "effective": {"integrity": UNAVAILABLE, "currency": UNAVAILABLE},
    }


def _lineage(nodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for n in nodes:
        if n.get("visible"):
            out.append({**n, "children": _lineage(n.get("children", []))})
        else:
            out.append(
                {
                    "answer_id": n["answer_id"],
                    "kind": UNAVAILABLE,
                    "integrity": UNAVAILABLE,
                    "currency": UNAVAILABLE,
                    "visible": False,
                    "cycle": False,
                    "children": [],
                }
            )
    return out


def redact_trace(trace: Mapping[str, Any]) -> dict[str, Any]:
    """A visible answer's trace with its out-of-scope parts reduced to `unavailable`."""
    out = dict(trace)
    out["passages"] = [_passage(p) for p in trace["passages"]]
    out["lineage"] = _lineage(trace["lineage"])
    return out
