"""What the evidence inside a pack records, told apart from whether the pack is authentic.

`verify_pack` proves a pack is what the exporter signed, over log entries the custodian
checkpointed.  That says nothing about the evidence being sound: a pack exported over an
answer whose retrieved text fails its checksum is authentic, and its evidence carries
that finding.  This module reads the findings and the holds out of `report.json` so that
`tracer verify-pack` states both, separately; it judges nothing itself — every state
was computed by the exporter's engine and is quoted as the pack records it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tracer.engine.vocabulary import INFO_KINDS, Integrity, SignatureState

__all__ = ["EvidenceRecord", "RecordedFinding", "recorded_in"]

#: text states that are not findings: the text is there and hashes, was purged on the
#: record (a tombstone), was never captured (an import), was never sent (a model input
#: the producer signed `not_sent`), or is outside the exporter's scope
_SOUND_TEXT = frozenset(
    {Integrity.INTACT, Integrity.PURGED, Integrity.NOT_CAPTURED, Integrity.NOT_SENT, Integrity.UNAVAILABLE}
)


@dataclass(frozen=True, slots=True)
class RecordedFinding:
    """One finding the pack's evidence carries: where it is, its word, what it says."""

    answer_id: str
    where: str
    state: str
    detail: str = ""

    def line(self) -> str:
        who = f"answer {self.answer_id}, " if self.answer_id else ""
        detail = f" ({self.detail})" if self.detail else ""
        return f"{who}{self.where}: {self.state}{detail}"

    def to_json(self) -> dict[str, str]:
        return {"answer_id": self.answer_id, "where": self.where, "state": self.state, "detail": self.detail}


@dataclass(frozen=True, slots=True)
class EvidenceRecord:
    """The findings, the answers' states as counted, and the distinct legal holds."""

    findings: tuple[RecordedFinding, ...]
    integrity: dict[str, int]
    currency: dict[str, int]
    holds: int
    holds_in_force: int

    def to_json(self) -> dict[str, Any]:
        return {
            "findings": [f.to_json() for f in self.findings],
            "integrity": self.integrity,
            "currency": self.currency,
            "holds": self.holds,
            "holds_in_force": self.holds_in_force,
        }


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _text(aid: str, where: str, text: Any) -> list[RecordedFinding]:
    t = _obj(text)
    state = t.get("state")
    if not isinstance(state, str) or state in _SOUND_TEXT:
        return []
    detail = t.get("detail") if isinstance(t.get("detail"), str) else ""
    if not detail and isinstance(t.get("recomputed"), str) and isinstance(t.get("digest"), str):
        detail = f"recorded {t['digest'][:16]}…, recomputed {t['recomputed'][:16]}…"
    return [RecordedFinding(aid, where, state, str(detail))]


def _answer(a: dict[str, Any]) -> list[RecordedFinding]:
    aid = str(a.get("answer_id", ""))
    trace = _obj(a.get("trace"))
    out: list[RecordedFinding] = []
    signature = _obj(trace.get("signature")).get("state")
    if isinstance(signature, str) and signature != SignatureState.VALID:
        out.append(RecordedFinding(aid, "producer signature", signature))
    out += _text(aid, "question text", trace.get("question"))
    out += _text(aid, "answer text", trace.get("answer"))
    for p in map(_obj, _list(trace.get("passages"))):
        pid = str(p.get("passage_id", ""))
        out += _text(aid, f"passage {pid} retrieved text", p.get("retrieved"))
        out += _text(aid, f"passage {pid} model input", p.get("model_input"))
        cited = _obj(_obj(p.get("currency")).get("cited_revision"))
        out += _text(aid, f"passage {pid} cited revision {cited.get('revision', '')}", cited.get("content"))
    for f in map(_obj, _list(trace.get("faults"))):
        out.append(
            RecordedFinding(aid, f"producer fault at {f.get('path', '$')}", str(f.get("code", "")), "")
        )
    integrity = a.get("integrity")
    if not out and isinstance(integrity, str) and integrity not in _SOUND_TEXT:
        out.append(RecordedFinding(aid, "integrity", integrity))
    return out


def _verification(report: dict[str, Any]) -> list[RecordedFinding]:
    """A case pack's vault-wide verification at export: its findings, as recorded."""
    out = []
    for f in map(_obj, _list(_obj(report.get("verification")).get("findings"))):
        kind = str(f.get("kind", ""))
        if kind in INFO_KINDS:
            continue
        seq = f.get("seq")
        where = f"log entry {seq}" if isinstance(seq, int) else "the log"
        detail = f.get("detail") if isinstance(f.get("detail"), str) else ""
        out.append(RecordedFinding("", f"the vault's verification at export, {where}", kind, str(detail)))
    return out


def _holds(report: dict[str, Any]) -> tuple[int, int]:
    """Distinct holds by log entry: one hold shown beside two answers and in the case
    section is one hold."""
    seen: dict[Any, bool] = {}
    shown = [h for a in map(_obj, _list(report.get("answers"))) for h in _list(a.get("holds"))]
    shown += _list(_obj(report.get("case")).get("holds"))
    for h in map(_obj, shown):
        seq = h.get("seq")
        if isinstance(seq, int):
            seen[seq] = seen.get(seq, False) or h.get("in_force") is True
    return len(seen), sum(seen.values())


def _counts(value: Any) -> dict[str, int]:
    return {str(k): n for k, n in _obj(value).items() if isinstance(n, int)}


def recorded_in(report: Any) -> EvidenceRecord:
    """What `report` records; a malformed part records nothing (its checks say why)."""
    r = _obj(report)
    findings = [f for a in map(_obj, _list(r.get("answers"))) if a.get("visible") for f in _answer(a)]
    findings += _verification(r)
    summary = _obj(r.get("summary"))
    holds, in_force = _holds(r)
    return EvidenceRecord(
        tuple(findings), _counts(summary.get("integrity")), _counts(summary.get("currency")), holds, in_force
    )
