"""The case sections of a pack: cover facts, the case file, holds, and the vault-wide check.

A case pack is an ordinary evidence pack whose report.json also carries `case` (the
case as the exporter may see it: who opened it, why, tags, notes, findings, holds, the
activity of the case and its conclusion, each item with the log entry it comes from)
and `verification` (the vault-wide `verify` result at export time, cut to the
exporter's scope).  Every case item's entry travels in `records` with its proof, so
`verify-pack` holds each claim against the signed statement (`check_case`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from store.casefile import digest_collections, document_collections
from store.keyring import ALL_SCOPES
from tracer.engine.case import CaseDesk, CaseView, HoldView
from tracer.engine.jsonshapes import CaseActivityJSON, CaseJSON, HoldJSON
from tracer.engine.verify import INFO_KINDS, VerifyReport
from tracer.report.records import CitingRole, RecordSet

__all__ = ["CaseSelection", "case_section", "cite_hold", "holds_of_answer", "verification_section"]

#: roles of case entries in `records[].cited_by`
ROLES = {
    "case_open": "case_open",
    "tag": "case_tag",
    "note": "case_note",
    "finding": "case_finding",
    "hold": "hold",
    "hold_release": "hold_release",
    "case_conclusion": "case_conclusion",
    "access": "case_activity",
}


@dataclass(frozen=True)
class CaseSelection:
    """Which case a pack is for, what of it was selected, and the exporter's reason."""

    case_id: str
    what: str
    why: str


def _cite_view(records: RecordSet, v: CaseView, related: list[CaseActivityJSON]) -> None:
    records.cite(v.record.seq, CitingRole.CASE_OPEN)
    for t in v.tags:
        records.cite(t.seq, CitingRole.CASE_TAG, t.answer_id)
    for n in v.notes:
        records.cite(n.seq, CitingRole.CASE_NOTE, n.answer_id or "")
    for f in v.findings:
        records.cite(f.seq, CitingRole.CASE_FINDING, f.answer_id)
    for h in v.holds:
        cite_hold(records, h)
    for a in v.activity:
        records.cite(a.seq, CitingRole.CASE_ACTIVITY)
    for item in related:
        records.cite(int(item["seq"]), CitingRole.CASE_ACTIVITY)
    if v.conclusion is not None:
        records.cite(v.conclusion.seq, CitingRole.CASE_CONCLUSION)


def case_section(desk: CaseDesk, sel: CaseSelection, answer_ids: list[str], records: RecordSet) -> CaseJSON:
    """report.json `case`: the case cut to the exporter, every item cited as a record."""
    v = desk.view(sel.case_id)
    out = v.to_json()
    related: list[CaseActivityJSON] = [
        {
            "seq": a.seq,
            "action": a.action,
            "target": a.target,
            "at": a.at,
            "by": desk.person(a.investigator).to_json(),
            "under_case": False,
        }
        for a in desk.related_activity(v, answer_ids)
    ]
    for a in out["activity"]:
        a["under_case"] = True
    out["activity"] = sorted([*out["activity"], *related], key=lambda a: int(a["seq"]))
    out["selection"] = {"what": sel.what, "why": sel.why, "answer_ids": list(answer_ids)}
    _cite_view(records, v, related)
    return out


def cite_hold(records: RecordSet, h: HoldView, answer_id: str = "") -> None:
    """Cite a hold's entries, except those whose text is withheld from the exporter: an
    entry travels whole (its signed bytes), so citing it would hand over the reason."""
    if "reason" not in h.withheld:
        records.cite(h.hold.seq, CitingRole.HOLD, answer_id)
    if h.hold.release is not None and "release.reason" not in h.withheld:
        records.cite(h.hold.release.seq, CitingRole.HOLD_RELEASE, answer_id)


def holds_of_answer(desk: CaseDesk, answer_id: str, records: RecordSet) -> list[HoldJSON]:
    """Holds in force over an answer's evidence the exporter sees, cited as records; one
    whose reason is withheld from the exporter is listed, marked, and not cited."""
    out = []
    for h in desk.holds_on_answer(answer_id):
        cite_hold(records, h, answer_id)
        out.append(h.to_json())
    return out


def _in_scope(desk: CaseDesk, record: Mapping[str, Any]) -> bool:
    answer_id = record.get("answer_id")
    if isinstance(answer_id, str) and not desk.answer_visible(answer_id):
        return False
    vault = desk.s.vault
    document_id = record.get("document_id")
    if isinstance(document_id, str) and not all(
        desk.s.can_read(c) for c in document_collections(vault, document_id)
    ):
        return False
    digest = record.get("digest")
    return not (
        isinstance(digest, str) and not all(desk.s.can_read(c) for c in digest_collections(vault, digest))
    )


def verification_section(desk: CaseDesk, report: VerifyReport) -> dict[str, Any]:
    """The vault-wide verification at export, cut to the exporter's scope.

    An exporter who reads every collection passes on every finding and count.  Anyone
    else passes on only findings pinned to records they may see and the log's size, and
    `ok` is computed over those findings: a count or a failing bit about records outside
    their scope would tell a reader something of that scope.
    """
    everything = ALL_SCOPES in desk.s.scopes
    findings = [f.to_json() for f in report.findings if everything or _in_scope(desk, f.record)]
    counts = (
        dict(report.counts)
        if everything
        else {k: n for k, n in report.counts.items() if k in ("entries", "checkpoints")}
    )
    return {
        "computed_at": report.computed_at,
        "ok": not any(f["kind"] not in INFO_KINDS for f in findings),
        "scope": "whole vault" if everything else "records in the exporter's scope",
        "log_size": report.checkpoint.get("log_size"),
        "counts": counts,
        "findings": findings,
    }
