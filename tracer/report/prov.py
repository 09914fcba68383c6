"""lineage.prov.json: the derivation graph in W3C PROV-JSON, for provenance tools.

PROV-DM defines revision and quotation as kinds of derivation, and PROV-JSON
(W3C Member Submission, 2013) encodes them as `wasDerivedFrom` records whose
`prov:type` is `prov:Revision` or `prov:Quotation`; that is the form written here, so
that standard parsers (e.g. the `prov` Python package) read it.  Each record also names
its PROV-N relation (`wasRevisionOf`, `wasQuotedFrom`) in `tracer:relation`.

Built from report.json alone: the graph says exactly what the signed report says, and
out-of-scope items appear only as entities in state `unavailable`.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from tracer.report.redact import UNAVAILABLE

__all__ = ["prov_json"]

_VOCAB = "https://tracer.invalid/ns/prov#"


def _qn(value: str) -> dict[str, str]:
    return {"$": value, "type": "prov:QUALIFIED_NAME"}


class _Graph:
    def __init__(self, origin: str):
        base = f"urn:tracer:{quote(origin, safe='')}:"
        self.doc: dict[str, Any] = {
            "prefix": {
                "tracer": _VOCAB,
                "answer": base + "answer:",
                "passage": base + "passage:",
                "revision": base + "revision:",
            },
            "entity": {},
            "wasDerivedFrom": {},
        }
        self._n = 0
        self._seen: set[tuple[str, str]] = set()

    def entity(self, ident: str, attrs: dict[str, Any]) -> None:
        existing = self.doc["entity"].setdefault(ident, {})
        existing.update(attrs)

    def derived(self, generated: str, used: str, relation: str, prov_type: str | None = None) -> None:
        if (generated, used) in self._seen:
            return
        self._seen.add((generated, used))
        self._n += 1
        rec: dict[str, Any] = {
            "prov:generatedEntity": generated,
            "prov:usedEntity": used,
            "tracer:relation": relation,
        }
        if prov_type:
            rec["prov:type"] = _qn(prov_type)
        self.doc["wasDerivedFrom"][f"_:d{self._n}"] = rec


def _answer_id(aid: str) -> str:
    return "answer:" + quote(aid, safe="")


def _passage_id(aid: str, pid: str) -> str:
    return "passage:" + quote(aid, safe="") + "/" + quote(pid, safe="")


def _revision_id(doc: str, rev: str) -> str:
    return "revision:" + quote(doc, safe="") + "@" + quote(rev, safe="")


def _lineage(g: _Graph, parent: str, nodes: list[dict[str, Any]]) -> None:
    for n in nodes:
        ident = _answer_id(n["answer_id"])
        if n["visible"]:
            g.entity(ident, {"prov:type": _qn(f"tracer:{n['kind']}"), "tracer:integrity": n["integrity"]})
            g.entity(ident, {"tracer:currency": n["currency"]})
        else:
            g.entity(ident, {"tracer:state": UNAVAILABLE})
        g.derived(parent, ident, "wasDerivedFrom")
        if n["visible"] and not n["cycle"]:
            _lineage(g, ident, n["children"])


def _answer(g: _Graph, a: dict[str, Any]) -> None:
    aid = _answer_id(a["answer_id"])
    if not a["visible"]:
        g.entity(aid, {"tracer:state": UNAVAILABLE})
        return
    t = a["trace"]
    g.entity(
        aid,
        {
            "prov:type": _qn(f"tracer:{t['kind']}"),
            "tracer:generated_at": t["generated_at"],
            "tracer:answer_sha256": t["answer"].get("digest"),
            "tracer:integrity": a["integrity"],
            "tracer:currency": a["currency"],
        },
    )
    for p in t["passages"]:
        pid = _passage_id(a["answer_id"], p["passage_id"])
        g.derived(aid, pid, "wasDerivedFrom")
        if not p["visible"]:
            g.entity(pid, {"tracer:state": UNAVAILABLE})
            continue
        g.entity(
            pid,
            {
                "prov:type": _qn("tracer:passage"),
                "tracer:retrieved_sha256": p["retrieved"]["digest"],
                "tracer:integrity": p["integrity"],
                "tracer:currency": p["currency"]["state"],
            },
        )
        if p.get("imported"):
            g.entity(pid, {"tracer:attestation": p["imported"]["mark"]})
        if p["chain"] is not None:  # an imported passage may have been located nowhere
            doc = p["chain"]["document"]
            rid = _revision_id(doc["document_id"], doc["revision"])
            g.entity(rid, {"prov:type": _qn("tracer:revision")})
            g.derived(pid, rid, "wasQuotedFrom", "prov:Quotation")
        if p.get("derived_from"):
            g.derived(pid, _answer_id(p["derived_from"]), "wasDerivedFrom")
    for d in a.get("documents", []):
        prev: str | None = None
        for r in d["revisions"]:
            rid = _revision_id(d["document_id"], r["revision"])
            g.entity(
                rid,
                {
                    "prov:type": _qn("tracer:revision"),
                    "tracer:committed_at": r["committed_at"],
                    "tracer:content_sha256": r["content_sha256"],
                },
            )
            if prev is not None:
                g.derived(rid, prev, "wasRevisionOf", "prov:Revision")
            prev = rid
    _lineage(g, aid, t["lineage"])


def prov_json(report: dict[str, Any]) -> dict[str, Any]:
    """The PROV-JSON document for every answer in `report`."""
    g = _Graph(report["vault"]["origin"])
    for a in report["answers"]:
        _answer(g, a)
    return g.doc
