"""Trace one answer: citations → passages → chunk → imported revision → source revision.

Reads the signed manifest from the log (never the views), releases historical text only
through `read_text`, and keeps the two axes separate for every passage.  Lineage is
walked down to original passages; a derived answer takes the strictest state found, and
if any part of its lineage is outside the viewer's scope the whole claim is unavailable.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from store import queries
from store.dsse import verify_envelope
from store.errors import SignatureError
from store.roster import producer_keys
from tracer.clock import now_iso
from tracer.engine.currency import Currency, CurrencyEngine, Transform
from tracer.engine.evidence import TextResult
from tracer.engine.session import Session
from tracer.engine.states import strictest_currency, strictest_integrity

__all__ = [
    "AnswerTrace",
    "CitationTrace",
    "LineageNode",
    "PassageTrace",
    "Summary",
    "Tracer",
    "UnknownAnswerError",
]


class UnknownAnswerError(LookupError):
    pass


@dataclass(frozen=True)
class Summary:
    """The effective states of an answer (own passages plus lineage)."""

    answer_id: str
    integrity: str
    currency: str
    visible: bool
    reasons: tuple[str, ...] = ()


@dataclass
class PassageTrace:
    index: int
    passage_id: str
    collection: str
    visible: bool
    retrieved: TextResult
    model_input: TextResult
    integrity: str
    currency: Currency
    transform: Transform
    effective_integrity: str
    effective_currency: str
    meta: dict[str, Any]

    @property
    def derived_from(self) -> str | None:
        value = self.meta.get("derived_from")
        return str(value) if value else None


@dataclass
class CitationTrace:
    index: int
    answer_start: int
    answer_end: int
    span: str | None
    passage_ids: list[str]
    passages: list[PassageTrace]
    unknown_passages: list[str]
    integrity: str
    currency: str


@dataclass
class LineageNode:
    answer_id: str
    kind: str
    integrity: str
    currency: str
    visible: bool
    cycle: bool = False
    children: list[LineageNode] = field(default_factory=list)


@dataclass
class AnswerTrace:
    seq: int
    answer_id: str
    run_id: str
    kind: str
    generated_at: str
    collection: str
    visible: bool
    signature: str
    signer: str
    producer: dict[str, Any]
    runtime: dict[str, Any]
    authorization: dict[str, Any]
    question: TextResult
    answer: TextResult
    passages: list[PassageTrace]
    citations: list[CitationTrace]
    lineage: list[LineageNode]
    faults: list[dict[str, Any]]
    findings: list[tuple[int, str, str, str, str, str]]
    integrity: str
    currency: str
    computed_at: str
    checkpoint_size: int
    checkpoint_root: str


_HIDDEN_META = {"passage_id", "collection"}


def _scrub(ps: dict[str, Any], visible: bool) -> dict[str, Any]:
    """Out-of-scope passages keep no title, path, heading or excerpt: ids only."""
    if visible:
        return dict(ps)
    return {k: ps[k] for k in _HIDDEN_META if k in ps}


def _withheld(digest: str) -> TextResult:
    return TextResult(digest, "unavailable", detail="outside your scope")


class Tracer:
    """Engine entry point for one session; caches per run, so make one per job."""

    def __init__(self, session: Session):
        self.session = session
        self.currency = CurrencyEngine(session)
        self._keys = producer_keys(session.vault)
        self._summaries: dict[str, Summary] = {}

    def _manifest(self, answer_id: str) -> tuple[int, dict[str, Any], str, str]:
        found = queries.answer_entry(self.session.vault, answer_id)
        if found is None:
            raise UnknownAnswerError(answer_id)
        seq, entry = found
        env = entry.envelope
        assert env is not None  # noqa: S101 - manifests always carry an envelope
        payload: dict[str, Any] = json.loads(env.payload)
        signature, signer = "valid", entry.signer or ""
        keys = {k: v.ed25519 for k, v in self._keys.items() if v.valid_at(payload["generated_at"])}
        try:
            signer = verify_envelope(env, keys)
        except SignatureError:
            signature = "signature_invalid"
        return seq, payload, signature, signer

    def _passage(self, ps: dict[str, Any], idx: int, stack: tuple[str, ...], allowed: bool) -> PassageTrace:
        s = self.session
        derived = ps.get("derived_from")
        visible = (
            allowed
            and s.can_read(ps["collection"])
            and (not derived or self.summary(str(derived), stack).visible)
        )
        if visible:
            retrieved = s.text(ps["retrieved_sha256"], ps["collection"])
            model_input = s.text(ps["model_input_sha256"], ps["collection"])
            currency = self.currency.currency(ps, retrieved)
        else:
            retrieved = _withheld(ps["retrieved_sha256"])
            model_input = _withheld(ps["model_input_sha256"])
            currency = Currency("unavailable", "out_of_scope")
        integrity = strictest_integrity([retrieved.state, model_input.state])
        transform = self.currency.transform(ps, retrieved) if visible else Transform("unavailable")
        eff_i, eff_c = integrity, currency.state
        if derived and visible:
            sub = self.summary(str(derived), stack)
            eff_i = strictest_integrity([eff_i, sub.integrity])
            eff_c = (
                sub.currency
                if currency.reason == "derived_text"
                else strictest_currency([eff_c, sub.currency])
            )
        return PassageTrace(
            idx,
            ps["passage_id"],
            ps["collection"],
            visible,
            retrieved,
            model_input,
            integrity,
            currency,
            transform,
            eff_i,
            eff_c,
            _scrub(ps, visible),
        )

    def summary(self, answer_id: str, stack: tuple[str, ...] = ()) -> Summary:
        """Effective states of an answer, memoized; cycles are reported, never looped."""
        if answer_id in self._summaries:
            return self._summaries[answer_id]
        if answer_id in stack:
            return Summary(answer_id, "missing", "unchecked", True, ("lineage_cycle",))
        try:
            t = self.trace(answer_id, record=False, stack=stack)
        except UnknownAnswerError:
            return Summary(answer_id, "missing", "unchecked", True, ("lineage_target_missing",))
        out = Summary(answer_id, t.integrity, t.currency, t.visible)
        self._summaries[answer_id] = out
        return out

    def _lineage(self, ids: list[str], stack: tuple[str, ...]) -> list[LineageNode]:
        nodes: list[LineageNode] = []
        for aid in ids:
            if aid in stack:
                nodes.append(LineageNode(aid, "?", "missing", "unchecked", True, cycle=True))
                continue
            sub = self.summary(aid, stack)
            kind, children = "missing", []
            found = queries.answer_entry(self.session.vault, aid)
            if found is not None:
                payload = json.loads(found[1].envelope.payload) if found[1].envelope else {}
                kind = str(payload.get("kind", "answer"))
                child_ids = list(payload.get("lineage", [])) + [
                    str(p["derived_from"]) for p in payload.get("passages", []) if p.get("derived_from")
                ]
                children = self._lineage(sorted(set(child_ids)), (*stack, aid))
            nodes.append(LineageNode(aid, kind, sub.integrity, sub.currency, sub.visible, children=children))
        return nodes

    def trace(self, answer_id: str, record: bool = True, stack: tuple[str, ...] = ()) -> AnswerTrace:
        s = self.session
        seq, p, signature, signer = self._manifest(answer_id)
        stack = (*stack, answer_id)
        derived_ids = {str(ps["derived_from"]) for ps in p["passages"] if ps.get("derived_from")}
        lineage = self._lineage(sorted(set(p.get("lineage", [])) | derived_ids), stack)
        lin_i = [n.integrity for n in lineage]
        lin_c = [n.currency for n in lineage]
        # A summary is never more widely visible than its most restricted source.
        visible = s.can_read(p["collection"]) and all(n.visible for n in lineage)
        hidden = not visible
        if visible:
            question = s.text(p["question_sha256"], p["collection"])
            answer = s.text(p["answer_sha256"], p["collection"])
        else:
            question, answer = _withheld(p["question_sha256"]), _withheld(p["answer_sha256"])
        passages = [self._passage(ps, i, stack, visible) for i, ps in enumerate(p["passages"])]
        by_id = {pt.passage_id: pt for pt in passages}
        citations: list[CitationTrace] = []
        for i, c in enumerate(p["citations"]):
            cited = [by_id[x] for x in c["passage_ids"] if x in by_id]
            unknown = [x for x in c["passage_ids"] if x not in by_id]
            ci = strictest_integrity(
                [pt.effective_integrity for pt in cited] + lin_i + (["missing"] if unknown else [])
            )
            cc = strictest_currency([pt.effective_currency for pt in cited] + lin_c)
            if hidden or any(not pt.visible for pt in cited):
                cc = "unavailable"
            span = None
            if (
                answer.verified
                and answer.text is not None
                and 0 <= c["answer_start"] <= c["answer_end"] <= len(answer.text)
            ):
                span = answer.text[c["answer_start"] : c["answer_end"]]
            citations.append(
                CitationTrace(
                    i,
                    c["answer_start"],
                    c["answer_end"],
                    span,
                    list(c["passage_ids"]),
                    cited,
                    unknown,
                    ci,
                    cc,
                )
            )
        own_i = [question.state, answer.state] + [pt.effective_integrity for pt in passages]
        if signature != "valid":
            own_i.append("signature_invalid")
        integrity = strictest_integrity(own_i + lin_i)
        currency = (
            strictest_currency([c.currency for c in citations] + lin_c)
            if citations
            else strictest_currency([pt.effective_currency for pt in passages] + lin_c)
        )
        if hidden:
            currency = "unavailable"
        entry = queries.answer_entry(s.vault, answer_id)
        faults = list(entry[1].body.get("faults", [])) if entry else []
        if record:
            s.record("open_answer", answer_id)
        return AnswerTrace(
            seq=seq,
            answer_id=answer_id,
            run_id=p["run_id"],
            kind=p.get("kind", "answer"),
            generated_at=p["generated_at"],
            collection=p["collection"],
            visible=visible,
            signature=signature,
            signer=signer,
            producer=p["producer"],
            runtime=p["runtime"] if visible else {},
            authorization=p["authorization"] if visible else {},
            question=question,
            answer=answer,
            passages=passages,
            citations=citations,
            lineage=lineage,
            faults=faults,
            findings=queries.finding_rows(s.vault, answer_id),
            integrity=integrity,
            currency=currency,
            computed_at=now_iso(),
            checkpoint_size=s.status.checkpoint_size,
            checkpoint_root=s.status.checkpoint_root,
        )
