"""Stable JSON for traces (documented in docs/json.md); used by the CLI and reports.

Historical text appears only under `text` of a verified TextResult.  Current text of a
source appears only under `currency.current_revision.excerpt`, labelled with its
revision and date: the two never share a field.
"""

from __future__ import annotations

from store.attest import IMPORTED_MARK
from store.queries import RevisionRow
from store.records import LocatorJSON
from tracer.engine.answertime import AnswerTime, AnswerTimeReason, AnswerTimeState
from tracer.engine.currency import CurrencyResult
from tracer.engine.evidence import TextResult
from tracer.engine.imported import imported_json
from tracer.engine.jsonshapes import (
    AnswerTimeJSON,
    CitedRevisionJSON,
    ContentJSON,
    CurrencyJSON,
    ImportedPassageJSON,
    InForceJSON,
    LineageJSON,
    PassageJSON,
    RevisionJSON,
    TextJSON,
    TraceJSON,
    tombstone_json,
)
from tracer.engine.relocate import Locator
from tracer.engine.times import utc
from tracer.engine.trace import AnswerTrace, LineageNode, PassageTrace
from tracer.engine.vocabulary import Currency, Integrity

__all__ = [
    "answer_time_json",
    "content_json",
    "currency_json",
    "lineage_json",
    "passage_json",
    "text_json",
    "trace_json",
    "utc",
]


#: the currency states under which today's revision is named beside the quote
_CURRENT_SHOWN = frozenset({Currency.MOVED, Currency.STALE, Currency.AMBIGUOUS, Currency.VERIFIED})


def text_json(t: TextResult) -> TextJSON:
    out: TextJSON = {
        "digest": t.digest,
        "state": t.state,
        "recomputed": t.recomputed,
        "text": t.text if t.verified else None,
    }
    if t.detail:
        out["detail"] = t.detail
    if t.tombstone is not None:
        out["tombstone"] = tombstone_json(t.tombstone, utc(t.tombstone.effective_at))
    return out


def locator_json(loc: Locator) -> LocatorJSON:
    """A locator as plain JSON (the same shape as a manifest's `locator`)."""
    return {
        "heading_path": list(loc.heading_path),
        "paragraph": loc.paragraph,
        "char_start": loc.char_start,
        "char_end": loc.char_end,
    }


def content_json(t: TextResult) -> ContentJSON:
    """Integrity of a stored text without the text itself (a tombstone stands in when purged)."""
    out: ContentJSON = {"digest": t.digest, "state": t.state, "recomputed": t.recomputed}
    if t.detail:
        out["detail"] = t.detail
    if t.tombstone is not None:
        out["tombstone"] = tombstone_json(t.tombstone, utc(t.tombstone.effective_at))
    return out


def _revision_json(r: RevisionRow) -> RevisionJSON:
    return {
        "revision": r.revision,
        "source_revision": r.source_revision,
        "committed_at": utc(r.committed_at),
        "content_sha256": r.content_sha256,
    }


def currency_json(c: CurrencyResult, visible: bool = True) -> CurrencyJSON:
    out: CurrencyJSON = {"state": c.state, "reason": c.reason}
    if c.detail:
        out["detail"] = c.detail
    if not visible:
        return out
    out["normalizer"] = c.normalizer or None
    out["shows_current"] = c.shows_current
    if c.cited is not None:
        out["cited_revision"] = _cited_json(c.cited, c.cited_text)
    rel = c.relocation
    if rel is not None:
        out["old_excerpt"] = rel.old_excerpt
        if rel.locator is not None:
            out["new_locator"] = locator_json(rel.locator)
        out["candidates"] = [locator_json(x) for x in rel.candidates]
    if c.current is not None and c.state in _CURRENT_SHOWN:
        out["current_revision"] = {
            "label": f"current revision {c.current.revision} ({utc(c.current.committed_at)})",
            **_revision_json(c.current),
            "excerpt": c.current_excerpt,
        }
    return out


def _cited_json(r: RevisionRow, text: TextResult | None) -> CitedRevisionJSON:
    """The cited revision, with its text's verdict when it was read."""
    cited: CitedRevisionJSON = {
        "revision": r.revision,
        "source_revision": r.source_revision,
        "committed_at": utc(r.committed_at),
        "content_sha256": r.content_sha256,
    }
    if text is not None:
        cited["content"] = content_json(text)
    return cited


def answer_time_json(at: AnswerTime | None, visible: bool = True) -> AnswerTimeJSON:
    """Answer-time currency of one passage (docs/json.md); ``state`` unknown when not computed."""
    if at is None or not visible:
        why = AnswerTimeReason.OUT_OF_SCOPE if not visible else AnswerTimeReason.NOT_COMPUTED
        return {"state": AnswerTimeState.UNKNOWN, "reason": why}
    out: AnswerTimeJSON = {"state": at.state, "reason": at.reason, "generated_at": utc(at.generated_at)}
    if at.detail:
        out["detail"] = at.detail
    out["cited_revision"] = _revision_json(at.cited) if at.cited is not None else None
    if at.in_force is not None and at.state == AnswerTimeState.SUPERSEDED:
        out["in_force"] = _in_force_json(at, at.in_force)
    if at.changed_in is not None:
        out["changed_in"] = {
            **_revision_json(at.changed_in),
            "seconds_before_answer": at.seconds_before_answer,
        }
    return out


def _in_force_json(at: AnswerTime, in_force: RevisionRow) -> InForceJSON:
    """The revision in force when a superseded revision was cited, and its verdict."""
    rel = at.relocation
    return {
        "label": f"revision {in_force.revision} in force when the answer was generated "
        f"({utc(in_force.committed_at)})",
        **_revision_json(in_force),
        "is_current": at.in_force_is_current,
        "verdict": {"state": rel.state, "reason": rel.reason} if rel is not None else None,
        "new_locator": locator_json(rel.locator) if rel is not None and rel.locator else None,
        # what it said instead; null when it is the current revision (see current_revision)
        "excerpt": at.excerpt,
    }


def passage_json(p: PassageTrace) -> PassageJSON:
    out: PassageJSON = {
        "index": p.index,
        "passage_id": p.passage_id,
        "visible": p.visible,
        "integrity": p.integrity,
        "currency": currency_json(p.currency, p.visible),
        "answer_time": answer_time_json(p.currency.answer_time, p.visible),
        "effective": {"integrity": p.effective_integrity, "currency": p.effective_currency},
    }
    if not p.visible:
        out["integrity"] = Integrity.UNAVAILABLE
        return out
    m = p.record
    if m is None:
        raise ValueError(f"passage {p.passage_id!r} is visible but has no record")
    out["collection"] = p.collection
    out["retrieved"] = text_json(p.retrieved)
    out["model_input"] = text_json(p.model_input)
    out["model_input_state"] = p.model_input_state
    out["transform"] = {"state": p.transform.state, "detail": p.transform.detail}
    out["chain"] = m.chain_json()
    out["retrieved_at"] = utc(str(m.retrieved_at))
    out["rank"] = m.rank
    out["score"] = m.score
    out["query_sha256"] = m.query_sha256
    if p.imported:
        out["derived_from"] = None
        out["imported"] = imported_passage_json(p)
    else:
        out["derived_from"] = m.derived_from
    return out


def lineage_json(nodes: list[LineageNode]) -> list[LineageJSON]:
    return [
        {
            "answer_id": n.answer_id,
            "kind": n.kind,
            "integrity": n.integrity if n.visible else Integrity.UNAVAILABLE,
            "currency": n.currency if n.visible else Currency.UNAVAILABLE,
            "visible": n.visible,
            "cycle": n.cycle,
            "shared": n.shared,
            "children": lineage_json(n.children),
        }
        for n in nodes
    ]


def _hidden_trace_json(t: AnswerTrace) -> TraceJSON:
    """An answer outside the viewer's scope: its id and `unavailable`, every key kept."""
    return {
        "answer_id": t.answer_id,
        "run_id": None,
        "kind": None,
        "seq": None,
        "generated_at": None,
        "visible": False,
        "integrity": Integrity.UNAVAILABLE,
        "currency": Currency.UNAVAILABLE,
        "answer_time": AnswerTimeState.UNKNOWN,
        "reasons": ["out_of_scope"],
        "transform": None,
        "transform_failures": [],
        "signature": None,
        "producer": {},
        "runtime": {},
        "authorization_at_run_time": {},
        "question": {"state": Integrity.UNAVAILABLE},
        "answer": {"state": Integrity.UNAVAILABLE},
        "citations": [],
        "passages": [],
        "lineage": [],
        "faults": [],
        "findings": [],
        "computed_at": t.computed_at,
        "checkpoint": {"size": t.checkpoint_size, "root": t.checkpoint_root},
    }


def imported_passage_json(p: PassageTrace) -> ImportedPassageJSON:
    """What the importer located of an imported passage, and every field's attestation."""
    m = p.record
    if m is None:
        raise ValueError(f"passage {p.passage_id!r} is out of scope")
    imp = m.imported or {}
    return {
        "mark": IMPORTED_MARK,
        "span_id": imp.get("span_id"),
        "data_source": imp.get("data_source"),
        "document_id": imp.get("document_id"),
        "revision": imp.get("revision"),
        "chunk_ref": imp.get("chunk_ref"),
        "metadata": imp.get("metadata"),
        "model_input_span_id": imp.get("model_input_span_id"),
        "fields": {k: v.to_json() for k, v in p.attestation.items()},
    }


def trace_json(t: AnswerTrace) -> TraceJSON:
    if not t.visible:
        return _hidden_trace_json(t)
    out = _trace_json(t)
    if t.imported is not None:
        out["imported"] = imported_json(t.imported)
        out["signature"] = {"state": t.signature, "keyid": t.signer, "signed_by": "importer"}
    return out


def _trace_json(t: AnswerTrace) -> TraceJSON:
    return {
        "answer_id": t.answer_id,
        "run_id": t.run_id,
        "kind": t.kind,
        "seq": t.seq,
        "generated_at": utc(t.generated_at),
        "visible": t.visible,
        "integrity": t.integrity,
        "currency": t.currency,
        "answer_time": t.answer_time,
        "reasons": list(t.reasons),
        "transform": t.transform,
        "transform_failures": [
            {"passage_id": p.passage_id, "state": p.transform.state, "detail": p.transform.detail}
            for p in t.transform_failures
        ],
        "signature": {"state": t.signature, "keyid": t.signer},
        "producer": t.producer.to_json(),
        "runtime": dict(t.runtime),
        "authorization_at_run_time": dict(t.authorization),
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
                "answer_time": c.answer_time,
            }
            for c in t.citations
        ],
        "passages": [passage_json(p) for p in t.passages],
        "lineage": lineage_json(t.lineage),
        "faults": t.faults,
        "findings": [
            {"seq": f.seq, "investigator": f.investigator, "target": f.target, "note": f.note, "at": f.at}
            for f in t.findings
        ],
        "computed_at": t.computed_at,
        "checkpoint": {"size": t.checkpoint_size, "root": t.checkpoint_root},
    }
